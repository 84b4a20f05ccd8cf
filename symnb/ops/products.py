"""NumPy's other products, written with the ops of ``linalg``: ``kron``, ``vdot``, ``inner``
and ``np.linalg.matrix_power`` (so ``np.kron(x, y)`` and the rest build them too).

An operand that is not a variable is an array here, as NumPy makes it: a Python float is
float64, not a weak scalar (``np.kron(x32, 2.5)`` is float64, unlike ``x32 * 2.5``).
"""

from __future__ import annotations

import operator

import numpy as np

from symnb.core.dims import DimMismatch, format_dim, unify
from symnb.core.op import _at_user_line
from symnb.core.variable import Variable
from symnb.errors import ArgumentError, DTypeError, ShapeError
from symnb.ops._square import eye_like
from symnb.ops.checks import square_matrices
from symnb.ops.elemwise import mul
from symnb.ops.layout import flatten
from symnb.ops.linalg import as_array as _array
from symnb.ops.linalg import inv, matmul, tensordot
from symnb.ops.math import conj
from symnb.ops.shape import DimShuffle, reshape
from symnb.ops.shape import shape as shape_of


def kron(a, b):
    """``np.kron``: the Kronecker product, the blocks ``a[i, j] * b``; the operand of fewer
    dims gains leading axes of size 1."""
    a, b = _array(a), _array(b)
    n = max(a.type.ndim, b.type.ndim)
    if n == 0:
        return mul(a, b)
    a, b = _leading_ones(a, n), _leading_ones(b, n)
    spread_a = DimShuffle([p for k in range(n) for p in (k, "x")])(a)  # a's axes at even places
    spread_b = DimShuffle([p for k in range(n) for p in ("x", k)])(b)  # b's at odd ones
    sizes = [_size_product(a, b, k) for k in range(n)]
    return reshape(mul(spread_a, spread_b), sizes)


def _leading_ones(v, n):
    missing = n - v.type.ndim
    return DimShuffle(["x"] * missing + list(range(v.type.ndim)))(v) if missing else v


def _size_product(a, b, k):
    """The size of axis k of ``kron(a, b)``: an int where both are fixed, else symbolic."""
    da, db = a.type.shape[k], b.type.shape[k]
    if isinstance(da, int) and isinstance(db, int):
        return da * db
    return shape_of(a)[k] * shape_of(b)[k]


def vdot(a, b):
    """``np.vdot``: the sum of the products of a's and b's elements, both read flat (their
    element counts must agree), a complex a conjugated first, as NumPy's; bool is refused,
    as by ``matmul``."""
    a, b = _array(a), _array(b)
    _refuse_bool("vdot", a, b)
    if a.type.dtype.kind == "c":
        a = conj(a)
    flat_a, flat_b = (v if v.type.ndim == 1 else flatten(v) for v in (a, b))
    count_a, count_b = flat_a.type.shape[0], flat_b.type.shape[0]
    _paired(
        count_a,
        count_b,
        lambda: (
            f"vdot: {a.describe()} has {format_dim(count_a)} elements but {b.describe()} "
            f"has {format_dim(count_b)}; vdot pairs them in order"
        ),
    )
    return matmul(flat_a, flat_b)


def inner(a, b):
    """``np.inner``: the sum of products over the last axes of a and b, the result having
    a's other axes, then b's; a 0-d operand multiplies the other elementwise, as ``a * b``
    (IEEE: ``inf * 0`` and ``nan * 0`` are NaN, where NumPy's BLAS scaling by a 0-d 0 writes
    0). Bool is refused, as by ``tensordot``."""
    a, b = _array(a), _array(b)
    if a.type.ndim == 0 or b.type.ndim == 0:
        return mul(a, b)
    _refuse_bool("inner", a, b)
    last_a, last_b = a.type.shape[-1], b.type.shape[-1]
    _paired(
        last_a,
        last_b,
        lambda: (
            f"inner: the last axis of {a.describe()} has size {format_dim(last_a)} but "
            f"the last axis of {b.describe()} has size {format_dim(last_b)}"
        ),
    )
    return tensordot(a, b, ([-1], [-1]))


def _paired(dim_a, dim_b, message) -> None:
    """Two dims whose elements a product pairs must unify; else a ShapeError at the user's
    line saying ``message()``."""
    try:
        unify(dim_a, dim_b)
    except DimMismatch:
        raise _at_user_line(ShapeError(message())) from None


def matrix_power(a, n):
    """``np.linalg.matrix_power``: each square matrix of a to the integer power ``n`` by
    repeated squaring, as NumPy multiplies (so the products round alike); ``n < 0`` is the
    power of ``inv(a)``, ``n == 0`` the identity in a's dtype. A non-square a is refused for
    every n, as NumPy refuses it: when the graph is built where the dims tell, else when the
    function runs."""
    a = _array(a)
    n = _exponent(n)
    _check_square(a)
    a = square_matrices(a, f"matrix_power: {a.describe()}")  # every n, when the types cannot tell
    if n == 0:
        return eye_like(a)
    if n < 0:
        a, n = inv(a), -n
    if n <= 3:
        return {1: lambda: a, 2: lambda: matmul(a, a), 3: lambda: matmul(matmul(a, a), a)}[n]()
    z = result = None
    while n > 0:
        z = a if z is None else matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


def _exponent(n) -> int:
    if not isinstance(n, (bool, np.bool_, Variable)):
        try:
            return operator.index(n)
        except TypeError:
            pass
    given = n.describe() if isinstance(n, Variable) else repr(n)
    message = f"matrix_power: the exponent n is an int known when the graph is built, not {given}"
    raise _at_user_line(ArgumentError(message))


def _check_square(a) -> None:
    if a.type.ndim < 2:
        message = f"matrix_power: {a.describe()} has {a.type.ndim} dims; a matrix is needed"
        raise _at_user_line(ShapeError(message))
    _refuse_bool("matrix_power", a)
    rows, cols = a.type.shape[-2:]
    try:
        unify(rows, cols)
    except DimMismatch:
        message = (
            f"matrix_power: {a.describe()} is not square: its last two dims are "
            f"{format_dim(rows)} and {format_dim(cols)}"
        )
        raise _at_user_line(ShapeError(message)) from None


def _refuse_bool(name: str, *variables) -> None:
    for v in variables:
        if v.type.dtype.kind == "b":
            raise _at_user_line(DTypeError(f"{name}: {v.describe()} is boolean; cast it first"))
