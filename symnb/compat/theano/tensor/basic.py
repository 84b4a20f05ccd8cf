"""``theano.tensor``'s functions, each mapped onto one symnb op or a short composition.

Most are symnb's own ops under Theano's names. The few that follow Theano where it differs
from NumPy (listed in docs/theano.md): ``true_div`` of two integers gives ``floatX``,
``dot`` follows ``np.dot`` for every rank, ``cast``/``TensorType`` accept ``"floatX"``,
reductions take Theano's ``dtype``/``acc_dtype`` arguments, a Python number on its own
(``T.sqrt(2.)``, ``T.switch(c, 1., 0.)``, ``T.constant(0.5)``, ``T.alloc(0., n)``) is the
constant Theano made of it (``upcasting.as_theano_tensor``: a float floatX, an int the
smallest int that holds it), and math that makes floats of integers (``exp``, ``log``,
``sigmoid``...) gives Theano's float32 for 8- and 16-bit ones.
"""

from __future__ import annotations

import builtins
import functools
import operator

import numpy as np

from symnb import ops as sn
from symnb.compat.theano.configparser import resolve_dtype
from symnb.compat.theano.configparser import theano_dtype as _theano_dtype
from symnb.compat.theano.folded import reading
from symnb.compat.theano.tensor.batched import batched_dot, batched_tensordot  # noqa: F401
from symnb.compat.theano.tensor.constants import (  # noqa: F401
    EmptyConstantError,
    NotScalarConstantError,
    get_scalar_constant_value,
)
from symnb.compat.theano.tensor.joins import join, stack, stacklists  # noqa: F401
from symnb.compat.theano.tensor.reductions import _axis, mean, prod, sum  # noqa: F401, A004
from symnb.compat.theano.tensor.selection import (  # noqa: F401
    argmax,
    argmin,
    argsort,
    argtopk,
    diagonal,
    flatnonzero,
    max_and_argmax,
    nonzero,
    nonzero_values,
    sort,
    topk,
    topk_and_argtopk,
)
from symnb.compat.theano.tensor.selection import reduced_axes as _reduced_axes
from symnb.compat.theano.tensor.subtensor import (  # noqa: F401
    advanced_inc_subtensor1,
    advanced_set_subtensor1,
    advanced_subtensor1,
    inc_subtensor,
    set_subtensor,
)
from symnb.compat.theano.upcasting import as_theano_tensor as _as_theano_tensor
from symnb.compat.theano.upcasting import is_python_number as _is_python_number
from symnb.compat.theano.upcasting import keeps_floatx as _keeps_floatx
from symnb.compat.theano.upcasting import number_dtype as _number_dtype
from symnb.compat.theano.upcasting import numbers_alone as _numbers_alone
from symnb.compat.theano.upcasting import upcast as _upcast
from symnb.config import config
from symnb.core.dims import is_int as _is_int
from symnb.core.op import _at_user_line
from symnb.core.shapes import warnings as shape_warnings
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import ArgumentError, DTypeError, ShapeError, ShapeTypeError
from symnb.ops._axes import diagonal_offset as _diagonal_offset
from symnb.ops._axes import keepdims_flag as _keepdims_flag
from symnb.ops._axes import normalize_axis as _normalize_axis
from symnb.ops._axes import one_axis as _one_axis
from symnb.ops.checks import HasShape as _HasShape
from symnb.ops.checks import at_most as _at_most
from symnb.ops.checks import in_domain as _in_domain
from symnb.ops.elemwise import cast as _cast
from symnb.ops.markers import unbroadcast as _unbroadcast
from symnb.ops.reduce import _ddof
from symnb.ops.shape import reduced_size as _reduced_size

#: Theano's ``upgrade_to_float``: the float an integer (or boolean) argument of float math
#: becomes. NumPy's rule gives float16 for 8-bit integers (``exp(10)`` is 2.203e+04 there)
_UPGRADE_TO_FLOAT = {
    **dict.fromkeys(["bool", "int8", "uint8", "int16", "uint16"], "float32"),
    **dict.fromkeys(["int32", "uint32", "int64", "uint64"], "float64"),
}


def _as_float(x) -> Variable:
    """x, converted first to Theano's float for its dtype if it is an integer or boolean; a
    Python number is Theano's constant of it first (``T.sqrt(2.)`` floatX, ``T.exp(1)``
    float32 from its int8)."""
    x = _as_theano_tensor(x)
    target = _UPGRADE_TO_FLOAT.get(x.type.dtype.name)
    return x if target is None else _cast(x, target)


def _float_math(op, name=None):
    """``op`` (a symnb function of one tensor that gives floats) under Theano's rule for
    integer arguments; float arguments go to it unchanged, and ``sn.*`` keeps NumPy's rule.
    ``name``: the name it has here (the op's by default), which pickle finds it by."""

    def theano_rule(x, *args, **kwargs):
        return op(_as_float(x), *args, **kwargs)

    name = name or getattr(op, "__name__", None) or str(op)
    theano_rule.__name__ = theano_rule.__qualname__ = name
    theano_rule.__doc__ = (
        f"``sn.{name}``; an integer x is made float32 or float64 first, as in Theano."
    )
    theano_rule.__wrapped__ = op
    return theano_rule


def _elementwise(op, name: str):
    """``op`` (a symnb elementwise function) with Python numbers given on their own made
    Theano's constants first (``numbers_alone``: ``T.sqr(2.)``, ``T.maximum(1., 2.)`` are
    floatX); beside a tensor they stay weak, as the operators' literals. ``name``: the name
    it has here, which pickle finds it by."""

    def theano_rule(*args):
        return op(*_numbers_alone(*args))

    theano_rule.__name__ = theano_rule.__qualname__ = name
    theano_rule.__doc__ = (
        f"``{op!r}``; Python numbers on their own are Theano's constants (a float floatX)."
    )
    theano_rule.__wrapped__ = op
    return theano_rule


# -- elementwise: symnb's ops under Theano's names -----------------------------------------
tanh, log, exp, sqrt, sigmoid = map(_float_math, (sn.tanh, sn.log, sn.exp, sn.sqrt, sn.sigmoid))
log1p, expm1, log2, log10 = map(_float_math, (sn.log1p, sn.expm1, sn.log2, sn.log10))
sin, cos, tan, sinh, cosh = map(_float_math, (sn.sin, sn.cos, sn.tan, sn.sinh, sn.cosh))
arcsin, arccos, arctan = map(_float_math, (sn.arcsin, sn.arccos, sn.arctan))
arcsinh = _float_math(sn.arcsinh)
erf, erfc, erfcx, erfinv = map(_float_math, (sn.erf, sn.erfc, sn.erfcx, sn.erfinv))
erfcinv = _float_math(sn.erfcinv)
gamma, gammaln, psi = _float_math(sn.gamma), _float_math(sn.gammaln), _float_math(sn.psi, "psi")


def tri_gamma(a) -> Variable:
    """``T.tri_gamma``: psi'(a), the derivative of ``T.psi`` (``sn.trigamma``, SciPy's
    ``polygamma(1, a)``), an integer a made float32 or float64 first, as in Theano; the result
    keeps that float's dtype, as Theano's ``TriGamma(upgrade_to_float)`` (``sn.trigamma``
    follows SciPy's rule: float64 of a float32). Its gradient is ``polygamma(2, a)``."""
    x = _as_float(a)
    return _cast(sn.trigamma(x), x.type.dtype.name)


sqr, abs_, neg = (
    _elementwise(op, name) for op, name in ((sn.square, "sqr"), (sn.abs, "abs_"), (sn.neg, "neg"))
)


def _refuse_complex(x: Variable, name: str, why: str, hint: str) -> None:
    """A DTypeError (a TypeError, as Theano's) at the user's line where ``x`` is complex and
    Theano 1.0's ``T.<name>`` refused it when the graph was built."""
    if x.type.dtype.kind == "c":
        raise _at_user_line(
            DTypeError(
                f"T.{name}: {x.describe()} is complex, which Theano's {name} refuses ({why})"
                f"\n  hint: {hint}"
            )
        )


def sgn(x) -> Variable:
    """``T.sgn``: ``sn.sign`` (-1, 0 or 1) of a real x; a complex x is refused when the graph
    is built, as Theano 1.0's ``Sgn(same_out_nocomplex)`` refused it (NumPy 2's sign of a
    complex is z/|z|, NumPy 1's the sign of its real part: write either)."""
    (x,) = (as_variable(v) for v in _numbers_alone(x))
    _refuse_complex(
        x,
        "sgn",
        "complex numbers have no sign",
        "z / abs(z) is NumPy 2's sign of a complex z, T.sgn(T.real(z)) NumPy 1's",
    )
    return sn.sign(x)


inv = _float_math(sn.reciprocal, "inv")  # Theano's Inv(upgrade_to_float): T.inv(2) is 0.5


def arctan2(y, x) -> Variable:
    """``sn.arctan2``; integer tensors are made float32 or float64 first, as in Theano
    (``ArcTan2(upgrade_to_float)``), so int8 gives float32, not NumPy's float16."""
    return sn.arctan2(
        *(
            _as_float(a) if isinstance(a, (Variable, np.ndarray)) else a
            for a in _numbers_alone(y, x)
        )
    )


floor, ceil = _elementwise(sn.floor, "floor"), _elementwise(sn.ceil, "ceil")
trunc = _elementwise(sn.trunc, "trunc")
maximum, minimum = _elementwise(sn.maximum, "maximum"), _elementwise(sn.minimum, "minimum")
pow, sub = _elementwise(sn.pow, "pow"), _elementwise(sn.sub, "sub")  # noqa: A001
mod, floor_div = _elementwise(sn.mod, "mod"), _elementwise(sn.floor_div, "floor_div")
int_div = _elementwise(sn.floor_div, "int_div")
eq, neq, lt, gt, le, ge = (
    sn.equal,
    sn.not_equal,
    sn.less,
    sn.greater,
    sn.less_equal,
    sn.greater_equal,
)
and_, or_ = _elementwise(sn.bitwise_and, "and_"), _elementwise(sn.bitwise_or, "or_")
xor, invert = _elementwise(sn.bitwise_xor, "xor"), _elementwise(sn.invert, "invert")
bitwise_and, bitwise_or, bitwise_xor, bitwise_not = and_, or_, xor, invert  # NumPy's names
isnan, isinf = sn.isnan, sn.isinf


def switch(cond, ift, iff) -> Variable:
    """``T.switch`` (also ``T.where``): ``sn.where``, where two Python numbers are Theano's
    constants (``T.switch(c, 1., 0.)`` is floatX, as in Theano: a mask of a float32 weight
    stays float32); a number beside a tensor stays weak (``T.switch(c, x, 0.)`` is x's)."""
    return sn.where(cond, *_numbers_alone(ift, iff))


where = switch
# -- layout, indexing, joins: the same functions symnb offers ------------------------------
take = sn.take  # (set_subtensor, inc_subtensor: Theano's signatures, from .subtensor)
reshape, dimshuffle, transpose = sn.reshape, sn.dimshuffle, sn.transpose
concatenate, shape, outer, tensordot = sn.concatenate, sn.shape, sn.outer, sn.tensordot
tril, triu, trace = sn.tril, sn.triu, sn.trace


def diag(v, k=0) -> Variable:
    """Theano's ``diag(v, k=0)``: a vector gives the square matrix with it on the k-th
    diagonal (``np.diag``); a tensor of 2 dims or more gives its k-th diagonal over the first
    two axes, the last axis of the result (Theano's ``diagonal(v, offset=k)``,
    ``np.diagonal(v, k, 0, 1)``), where ``np.diag`` (``sn.diag``) takes a matrix at most."""
    v = as_variable(v)
    if v.type.ndim == 0:
        raise _at_user_line(
            ShapeError(
                f"T.diag: {v.describe()} is 0-d; give a vector (for the matrix with it on a "
                "diagonal) or a tensor of 2 dims or more (for its diagonal)"
            )
        )
    return sn.diag(v, k) if v.type.ndim == 1 else diagonal(v, k)


def eye(n, m=None, k=0, dtype=None) -> Variable:
    """Theano's ``eye(n, m=None, k=0, dtype=None)``: an n x m matrix (floatX unless ``dtype``,
    "floatX" allowed) with ones on the k-th diagonal. As Theano's ``Eye``, n, m and k may be
    integer scalars of the graph: ``sn.eye`` takes a k known now (an int, or a constant such
    as ``T.constant(1)``), and a k known only when the function runs compares the row and
    column indices, ``arange(n)[:, None] + k == arange(m)[None, :]``."""
    dtype = None if dtype is None else _theano_dtype(dtype, "T.eye: dtype")
    if not isinstance(k, Variable):
        return sn.eye(n, m, k, dtype)
    if k.type.ndim != 0 or k.type.dtype.kind not in "iu":
        raise _at_user_line(
            DTypeError(f"eye: k (the diagonal) must be an integer scalar, not {k.describe()}")
        )
    try:
        return sn.eye(n, m, int(get_scalar_constant_value(k)), dtype)
    except NotScalarConstantError:
        pass
    m = n if m is None else m
    rows, cols = (_eye_indices(size, what) for size, what in ((n, "n"), (m, "m")))
    on_diagonal = sn.equal(rows[:, None] + _cast(k, "int64"), cols[None, :])
    return _cast(on_diagonal, config.floatX if dtype is None else dtype)


def tri(N, M=None, k=0, dtype=None) -> Variable:  # noqa: N803 - Theano's names
    """Theano's ``tri(N, M=None, k=0, dtype=None)``: an N x M matrix (floatX unless
    ``dtype``, "floatX" allowed) of ones at and below the k-th diagonal, zeros above
    (``np.tri``). As Theano's ``Tri``, N, M and k may be integer scalars of the graph: the
    lower triangle of ones (``sn.tril`` takes such a k)."""
    dtype = None if dtype is None else _theano_dtype(dtype, "T.tri: dtype")
    if not isinstance(k, Variable):
        k = _diagonal_offset(k, "tri")
    elif k.type.ndim != 0 or k.type.dtype.kind not in "iu":
        raise _at_user_line(
            DTypeError(f"tri: k (the diagonal) must be an integer scalar, not {k.describe()}")
        )
    M = N if M is None else M
    return sn.tril(sn.ones((N, M), config.floatX if dtype is None else dtype), k)


def _eye_indices(size, what: str) -> Variable:
    """``arange(size)`` for ``eye``'s rows or columns, a size below 0 refused as ``np.eye``
    refuses it (when the function runs for a size of the graph)."""
    if isinstance(size, Variable):
        if size.type.ndim != 0 or size.type.dtype.kind not in "iu":
            message = f"eye: {what} (a size) must be an integer scalar, not {size.describe()}"
            raise _at_user_line(DTypeError(message))
        size = _in_domain(size, f"eye: {what}", "count")
    elif _is_int(size) and size < 0:
        raise _at_user_line(ShapeError(f"eye: {what}={size} is negative; a size is >= 0"))
    return sn.arange(size, dtype="int64")


def cumsum(x, axis=None, dtype=None) -> Variable:
    """Theano's ``cumsum(x, axis=None)``: the running sum in x's dtype (Theano's ``CumOp``
    gave its output x's type), so an int32 or int8 x gives int32 or int8, wrapping as that
    dtype does, where ``sn.cumsum`` widens small ints to int64 as NumPy does. ``dtype``:
    NumPy's, as ``sn.cumsum``'s. ``axis`` may be a constant integer tensor, as Theano's
    ``CumOp`` read one."""
    x = _as_theano_tensor(x)
    return sn.cumsum(x, _axis(axis), dtype=x.type.dtype if dtype is None else dtype)


def cumprod(x, axis=None, dtype=None) -> Variable:
    """Theano's ``cumprod(x, axis=None)``: the running product in x's dtype, ``axis`` as
    ``cumsum``'s."""
    x = _as_theano_tensor(x)
    return sn.cumprod(x, _axis(axis), dtype=x.type.dtype if dtype is None else dtype)


logsumexp, norm = sn.logsumexp, sn.norm
repeat, roll = sn.repeat, sn.roll


def any(x, axis=None, keepdims=False) -> Variable:  # noqa: A001
    """``T.any(x, axis=None, keepdims=False)``: Theano's order (``sn.any``'s third argument
    is NumPy's ``out``), ``axis`` also several axes as a list."""
    return sn.any(x, axis=_axis(axis), keepdims=keepdims)


def all(x, axis=None, keepdims=False) -> Variable:  # noqa: A001
    """``T.all(x, axis=None, keepdims=False)``, as ``any``."""
    return sn.all(x, axis=_axis(axis), keepdims=keepdims)


def squeeze(x, axis=None) -> Variable:
    """Theano's ``squeeze``: with no axis, the broadcastable (statically 1) dims, as Theano
    documents it, so without symnb's warning that ``np.squeeze`` would drop more."""
    with shape_warnings.quiet():
        return sn.squeeze(x, axis)


def add(*terms) -> Variable:
    """``T.add(a, b, ...)``: the sum of any number of terms."""
    return functools.reduce(sn.add, _numbers_alone(*terms))


def mul(*terms) -> Variable:
    """``T.mul(a, b, ...)``: the product of any number of factors."""
    return functools.reduce(sn.mul, _numbers_alone(*terms))


def largest(*args) -> Variable:
    """The elementwise maximum of any number of tensors."""
    return functools.reduce(sn.maximum, _numbers_alone(*args))


def smallest(*args) -> Variable:
    """The elementwise minimum of any number of tensors."""
    return functools.reduce(sn.minimum, _numbers_alone(*args))


def exp2(x) -> Variable:
    """2 ** x (an integer x made float first, as for ``exp``)."""
    return sn.pow(2.0, _as_float(x))


def round(a, mode=None) -> Variable:  # noqa: A001
    """``T.round``: ``mode="half_away_from_zero"`` (Theano's default: 2.5 -> 3, -0.5 -> -1)
    or ``"half_to_even"`` (NumPy's: 2.5 -> 2)."""
    return _round(a, mode, "round")


def _round(a, mode, name: str) -> Variable:
    """``T.round`` (``name``: the function the user called, which errors name)."""
    a = _as_theano_tensor(a)
    _refuse_complex(
        a,
        name,
        "it rounds real numbers only",
        f"T.{name}(T.real(x)) and T.{name}(T.imag(x)) round the two parts",
    )
    if mode == "half_to_even" or a.type.dtype.kind in "biu":
        return sn.round(a)
    if mode not in (None, "half_away_from_zero"):
        raise _at_user_line(
            ArgumentError(
                f"round: mode must be 'half_away_from_zero' or 'half_to_even', not {mode!r}"
            )
        )
    # Not floor(|a| + 0.5): that sum rounds (0.49999997 -> 1, 2**23 + 1 -> 2**23 + 2).
    # a - trunc(a) is exact, so comparing it with 0.5 decides each half exactly; infinities
    # are kept out of it (inf - inf would warn) and stay themselves through trunc.
    whole = sn.trunc(a)
    finite = sn.where(sn.isinf(a), sn.zeros_like(a), a)
    return sn.where(sn.abs(finite - sn.trunc(finite)) >= 0.5, whole + sn.sign(a), whole)


def iround(a, mode=None) -> Variable:
    """``round`` as int64."""
    return _cast(_round(a, mode, "iround"), "int64")


def horizontal_stack(*args) -> Variable:
    """Matrices side by side (``concatenate`` on axis 1)."""
    return sn.concatenate(list(args), axis=1)


def vertical_stack(*args) -> Variable:
    """Arrays one above the other (``concatenate`` on axis 0)."""
    return sn.concatenate(list(args), axis=0)


def patternbroadcast(x, broadcastable) -> Variable:
    """x with the whole pattern ``broadcastable`` (Theano's ``Rebroadcast`` of every entry):
    the dims it marks True checked to be 1 (a call with another length fails) and known to
    be 1 in its type, those it marks False no longer broadcastable (``unbroadcast``), so
    ``patternbroadcast(new_W, W.broadcastable)`` fits an update to its shared variable's
    type. Axes past the pattern keep theirs."""
    x = as_variable(x)
    pattern = tuple(broadcastable)
    for flag in pattern:  # (Theano's Rebroadcast: "needs bool for new broadcast pattern")
        if not isinstance(flag, (bool, np.bool_)):
            raise _at_user_line(
                ShapeTypeError(
                    f"patternbroadcast: the pattern {pattern} for {x.describe()} holds one bool "
                    f"per dim (True: known to be 1), not {flag!r}"
                )
            )
    if len(pattern) > x.type.ndim:
        raise _at_user_line(
            ShapeError(
                f"patternbroadcast: the pattern {pattern} has {len(pattern)} entries, but "
                f"{x.describe()} has {x.type.ndim} dims"
            )
        )
    loose = [i for i, b in enumerate(pattern) if not b]
    marked = [i for i, b in enumerate(pattern) if b]
    x = _unbroadcast(x, *loose) if loose else x
    return addbroadcast(x, *marked) if marked else x


def specify_shape(x, shape) -> Variable:
    """Theano's ``specify_shape``: x, once its shape is checked to be ``shape`` when the
    function runs (a ShapeError naming x and both shapes), the ints of ``shape`` other than
    1 known in its type from then on (a 1 leaves x's broadcastable pattern, as Theano's).
    ``shape`` is a list or tuple of ints and integer scalars, or an integer vector, one
    length per axis of x; fixed dims of x that differ are refused when the graph is built."""
    x = as_variable(x)
    what = f"T.specify_shape: {x.describe()}"
    if isinstance(shape, Variable) and shape.type.ndim == 1:
        if shape.type.dtype.kind not in "iu":
            raise _at_user_line(DTypeError(f"{what}: shape is of integers, not {shape.describe()}"))
        count = shape.type.shape[0]
        if isinstance(count, int) and count != x.type.ndim:
            raise _at_user_line(
                ShapeError(f"{what}: shape {shape.describe()} for {x.type.ndim} axes")
            )
        if not isinstance(count, int):
            length = sn.shape(shape)[0]
            x = _at_most(x, length, x.type.ndim, f"{what}: more lengths than its axes")
            x = _at_most(x, x.type.ndim, length, f"{what}: fewer lengths than its axes")
        shape = [shape[i] for i in range(x.type.ndim)]
    if not isinstance(shape, (list, tuple)):
        raise _at_user_line(
            ArgumentError(f"{what}: shape is a list or tuple of lengths or an integer vector")
        )
    if len(shape) != x.type.ndim:
        raise _at_user_line(
            ShapeError(f"{what}: {len(shape)} lengths {tuple(shape)} for {x.type.ndim} axes")
        )
    dims, sources, names = [], [], []
    for i, d in enumerate(shape):
        if isinstance(d, Constant) and d.type.ndim == 0 and d.type.dtype.kind in "iu":
            d = int(d.data)
        if _is_int(d):
            if isinstance(x.type.shape[i], int) and x.type.shape[i] != int(d):
                raise _at_user_line(
                    ShapeError(f"{what}: axis {i} has {x.type.shape[i]}, not {int(d)}")
                )
            dims.append(int(d))
            continue
        d = as_variable(d)
        if d.type.ndim != 0 or d.type.dtype.kind not in "iu":
            raise _at_user_line(
                DTypeError(f"{what}: the length of axis {i} is an integer, not {d.describe()}")
            )
        name = d.name if isinstance(d.name, str) and d.name.isidentifier() else f"length{i}"
        name = name if name not in dims else f"{name}{i}"
        dims.append(name)
        names.append((name, len(sources), None))
        sources.append(d)
    checked = _HasShape(what, tuple(dims), tuple(names))(x, *sources)
    # a length 1 is checked but, as Theano's SpecifyShape kept x's type, not made broadcastable
    ones = [i for i, d in enumerate(dims) if d == 1 and x.type.shape[i] != 1]
    return _unbroadcast(checked, *ones) if ones else checked


def addbroadcast(x, *axes) -> Variable:
    """x with ``axes`` known to be of length 1 (checked when the function runs); an axis x
    does not have, or one that is no int, is refused (Theano's "Trying to rebroadcast
    non-existent dimension"), as ``unbroadcast`` refuses it."""
    x = as_variable(x)
    marked = {_one_axis(a, x.type.ndim, "addbroadcast", x) for a in axes}
    shape = sn.shape(x)
    return sn.reshape(x, [1 if i in marked else shape[i] for i in range(x.type.ndim)])


class Rebroadcast:
    """Theano's ``Rebroadcast((axis, flag), ...)``: called on x, x with each ``axis`` whose
    ``flag`` is True known to be 1 (``addbroadcast``) and each whose flag is False no longer
    broadcastable (``unbroadcast``); ``Rebroadcast((0, True), (1, False))(x)``. Axes are
    ints and flags bools, as Theano required."""

    def __init__(self, *axis):
        for entry in axis:
            ok = isinstance(entry, tuple) and len(entry) == 2
            if not (ok and _is_int(entry[0]) and isinstance(entry[1], (bool, np.bool_))):
                raise _at_user_line(
                    ShapeTypeError(
                        "Rebroadcast takes pairs (axis, flag) of an int and a bool, "
                        f"Rebroadcast((0, True), (1, False)), not {entry!r}"
                    )
                )
        self.axis = dict(sorted(axis))

    def __call__(self, x) -> Variable:
        x = as_variable(x)
        loose = [a for a, flag in self.axis.items() if not flag]
        marked = [a for a, flag in self.axis.items() if flag]
        x = unbroadcast(x, *loose) if loose else x
        return addbroadcast(x, *marked) if marked else x

    def __repr__(self):
        pairs = ", ".join(f"({a}, {bool(flag)})" for a, flag in self.axis.items())
        return f"Rebroadcast({pairs})"


def unbroadcast(x, *axes) -> Variable:
    """x with ``axes`` no longer broadcastable: a dim known to be 1 there is typed unknown
    (Theano's rule), so ``T.squeeze`` keeps it; the value and its gradient are x's."""
    return _unbroadcast(x, *axes)


def true_div(x, y) -> Variable:
    """``x / y``; two integers divide to ``floatX`` (Theano's rule; NumPy's is float64)."""
    x, y = (as_variable(v) for v in _numbers_alone(x, y))
    if x.type.dtype.kind in "biu" and y.type.dtype.kind in "biu":
        return _cast(sn.true_div(x, y), config.floatX)
    return sn.true_div(x, y)


true_divide = true_div


def cast(x, dtype) -> Variable:
    """``x`` converted to ``dtype`` (``"floatX"`` is ``theano.config.floatX``)."""
    return _cast(as_variable(x), resolve_dtype(dtype))


def var(input, axis=None, ddof=0, keepdims=False, corrected=False) -> Variable:  # noqa: A001
    """``T.var``: the variance with ``ddof`` (NumPy's ``sum / (N - ddof)``, also over several
    axes, docs/theano.md). ``corrected=True`` chose Theano's "corrected two-pass" algorithm,
    the same variance with a rounding correction, not another divisor; symnb's variance is
    already computed from the centred values, so it gives the same value."""
    del corrected  # the same value: a choice of algorithm, not of divisor
    x = as_variable(input)
    if x.type.dtype.kind == "c" or x.type.dtype == np.float16:
        return _theano_var(x, axis, ddof, keepdims, "T.var")
    return sn.var(x, axis=_axis(axis), keepdims=keepdims, ddof=ddof)


def std(input, axis=None, ddof=0, keepdims=False, corrected=False) -> Variable:
    """``T.std``: the square root of ``var`` (``corrected`` as there: the same value); of a
    complex or float16 x the square root of its ``var`` as Theano 1.0 computed it (complex;
    summed in float32)."""
    del corrected
    x = as_variable(input)
    if x.type.dtype.kind == "c" or x.type.dtype == np.float16:
        return sn.sqrt(_theano_var(x, axis, ddof, keepdims, "T.std"))
    return sn.std(x, axis=_axis(axis), keepdims=keepdims, ddof=ddof)


def _theano_var(x: Variable, axis, ddof, keepdims, name: str) -> Variable:
    """Theano 1.0's variance, ``mean((x - mean(x)) ** 2)``, where it is not NumPy's
    (``sn.var``): of a complex x with the plain complex square, complex, of x's dtype (NumPy's
    is the real ``mean(|x - mean(x)|**2)``); of a float16 x with ``T.mean``'s float32 sums
    (the mean and the squares' sum accumulated in float32, rounded once to float16; NumPy
    sums float16 in float16). ``ddof`` divides the sum by ``N - ddof``, as for other x."""
    ddof = _ddof(ddof, name)
    axes = _normalize_axis(_axis(axis), x.type.ndim, name, x)
    flag = _keepdims_flag(keepdims, name, x)
    half = x.type.dtype == np.float16
    centred = x - sn.mean(x, axis=axes, keepdims=True)  # float16: summed in float32
    acc = "float32" if half else None
    total = sn.sum(centred * centred, axis=axes, keepdims=flag, dtype=acc)
    real = "float32" if x.type.dtype.name in ("complex64", "float16") else "float64"
    out = sn.true_div(total, _cast(_reduced_size(x, axes), real) - ddof)
    return _cast(out, "float16") if half else out


def max(x, axis=None, keepdims=False) -> Variable:  # noqa: A001
    """``T.max``: ``axis`` as Theano's ``max_and_argmax`` read it (``reduced_axes``: a
    repeated axis counted once, an empty list meaning every axis)."""
    x = as_variable(x)
    return sn.max(x, axis=_reduced_axes(x, axis, "max"), keepdims=keepdims)


def min(x, axis=None, keepdims=False) -> Variable:  # noqa: A001
    """``T.min``: ``axis`` as ``T.max``'s."""
    x = as_variable(x)
    return sn.min(x, axis=_reduced_axes(x, axis, "min"), keepdims=keepdims)


def dot(a, b) -> Variable:
    """``np.dot`` for every rank (Theano's ``T.dot``): vectors give their inner product,
    a 0-d operand multiplies the other (``a * b``), and past two dims the last axis of a
    meets the second-to-last of b."""
    a, b = as_variable(a), as_variable(b)
    if (a.type.ndim <= 2 and b.type.ndim <= 2) or 0 in (a.type.ndim, b.type.ndim):
        return sn.dot(a, b)
    return sn.tensordot(a, b, axes=[[a.type.ndim - 1], [builtins.max(b.type.ndim - 2, 0)]])


def swapaxes(y, axis1, axis2) -> Variable:
    """Theano's ``T.swapaxes(y, axis1, axis2)``: y with the two axes exchanged (as
    ``y.swapaxes`` and ``np.swapaxes``)."""
    return sn.swapaxes(y, axis1, axis2)


def flatten(x, ndim=1, outdim=None) -> Variable:
    """``T.flatten(x, ndim=1)``; ``outdim`` is Theano's older name for ``ndim``."""
    return sn.flatten(x, ndim if outdim is None else outdim)


def tile(x, reps, ndim=None) -> Variable:
    """``T.tile``: ``np.tile`` with Theano's ``ndim``, the result's rank; ``reps`` (ints,
    integer scalars, or an integer vector, whose length may then be unknown) is padded with
    1s on the left to it."""
    if ndim is None:
        return sn.tile(x, reps)
    x = as_variable(x)
    if ndim < x.type.ndim:
        raise _at_user_line(
            ShapeError(f"tile: ndim={ndim} is less than the {x.type.ndim} dims of {x.describe()}")
        )
    if isinstance(reps, Variable) and reps.type.ndim == 1:
        if not isinstance(reps.type.shape[0], int):  # a run-time error if longer than ndim
            ones = sn.ones((ndim - sn.shape(reps)[0],), "int64")
            reps = sn.reshape(sn.concatenate([ones, _cast(reps, "int64")]), (ndim,))
        reps = [reps[i] for i in range(reps.type.shape[0])]
    elif isinstance(reps, (list, tuple, np.ndarray)):
        reps = list(reps)
    else:
        reps = [reps]
    if len(reps) > ndim:
        raise _at_user_line(ShapeError(f"tile: {len(reps)} reps for ndim={ndim}"))
    return sn.tile(x, [1] * (ndim - len(reps)) + reps)


def alloc(value, *shape) -> Variable:
    """``T.alloc(value, *shape)``: value broadcast to the shape (a Python number Theano's
    constant: ``alloc(0., n)`` floatX)."""
    return sn.alloc(_as_theano_tensor(value), *shape)


def fill(model, value) -> Variable:
    """``T.fill(model, value)``: value broadcast to model's shape (a Python number Theano's
    constant, as for ``alloc``)."""
    return sn.alloc(_as_theano_tensor(value), sn.shape(model))


def zeros(shape, dtype=None) -> Variable:
    return sn.zeros(shape, resolve_dtype(dtype))


def ones(shape, dtype=None) -> Variable:
    return sn.ones(shape, resolve_dtype(dtype))


def arange(start, stop=None, step=1, dtype=None) -> Variable:
    """``T.arange`` with Theano's dtype: the ``upcast`` of the three arguments' dtypes (a
    Python float is floatX, a Python int the smallest int that holds it), any integer made
    int64 (unsigned: uint64); so an ``fscalar`` bound gives float32, an ``iscalar`` and an
    ``fscalar`` float64. Under ``cast_policy='numpy+floatX'``, as Theano 1.0: ``np.arange``'s
    dtype for bounds of those dtypes, float32 for float64 where floatX is float32 and no bound
    is float64."""
    if stop is None:
        start, stop = 0, start
    dtype = resolve_dtype(dtype)
    if dtype is None:
        dtypes = [_dtype_in_theano(v) for v in (start, stop, step)]
        dtype = _upcast(*dtypes)
        kind = np.dtype(dtype).kind
        dtype = "uint64" if kind == "u" else "int64" if kind in "bi" else dtype
        if _keeps_floatx():
            dtype = _numpy_arange_dtype(dtypes, dtype)
    return sn.arange(start, stop, step, dtype=dtype)


def _numpy_arange_dtype(dtypes: list[str], dtype: str) -> str:
    """Theano 1.0's ``arange`` dtype under 'numpy+floatX': NumPy's ``arange`` of 0-d arrays
    of the bounds' dtypes, except float32 where that is float64, floatX float32 and no bound
    float64."""
    start, stop, step = (np.array(v, d) for v, d in zip((0, 1, 1), dtypes, strict=True))
    found = np.arange(start, stop, step).dtype.name
    if found == dtype:
        return dtype
    if found == "float64" and config.floatX == "float32" and "float64" not in dtypes:
        return "float32"
    return found


def _dtype_in_theano(value) -> str:
    return value.type.dtype.name if isinstance(value, Variable) else _number_dtype(value)


def shape_padleft(t, n_ones=1) -> Variable:
    """t with ``n_ones`` broadcastable dims in front."""
    t = as_variable(t)
    return sn.dimshuffle(t, *(["x"] * n_ones + list(range(t.type.ndim))))


def shape_padright(t, n_ones=1) -> Variable:
    """t with ``n_ones`` broadcastable dims at the end."""
    t = as_variable(t)
    return sn.dimshuffle(t, *(list(range(t.type.ndim)) + ["x"] * n_ones))


def shape_padaxis(t, axis) -> Variable:
    return sn.expand_dims(t, axis)


def clip(x, min, max) -> Variable:  # noqa: A002 - Theano's parameter names
    return sn.clip(*_numbers_alone(x, min, max))


def constant(x, name=None, ndim=None, dtype=None) -> Constant:
    """``T.constant``: a Python number is Theano's constant of it (``as_theano_tensor``: a
    float floatX, an int the smallest int that holds it), unless ``dtype`` is given, which
    casts the value as Theano's ``theano._asarray(x, dtype)`` did (NumPy's cast: 0.5 into
    int32 is 0), where ``sn.constant`` refuses a dtype that changes a value."""
    dtype = resolve_dtype(dtype)
    if dtype is None and _is_python_number(x):
        value = _as_theano_tensor(x, name=name)
    else:
        value = Constant(x, dtype=dtype, name=name, casting="unsafe")
    _check_ndim(value, ndim, "constant")
    return value


def as_tensor_variable(x, name=None, ndim=None) -> Variable:
    """A symbolic variable for x (variables pass through). A list or tuple holding variables
    (``[i, j]``, ``[[i, 0], [j, 1]]``: symbolic scalars among numbers, or tensors of one
    shape) is them stacked, as Theano's ``stack(*x)``; other values are constants."""
    if isinstance(x, Variable):
        var = x
    elif _holds_variables(x):
        var = stacklists(x)
        if name is not None:
            var.name = name
    else:
        var = constant(x, name=name)
    _check_ndim(var, ndim, "as_tensor_variable")
    return var


def _holds_variables(x) -> bool:
    return isinstance(x, (list, tuple)) and builtins.any(
        isinstance(item, Variable) or _holds_variables(item) for item in x
    )


as_tensor = as_tensor_variable


def _check_ndim(var, ndim, what):
    if ndim is not None and var.type.ndim != ndim:
        raise _at_user_line(
            ShapeTypeError(f"{what}: {var.describe()} has {var.type.ndim} dims, not ndim={ndim}")
        )


# -- more of Theano's names ----------------------------------------------------------------
def _arccosh(x) -> Variable:
    """``log(x + sqrt(x - 1) * sqrt(x + 1))``, NumPy's arccosh (NaN below 1)."""
    return sn.log(x + sn.sqrt(x - 1) * sn.sqrt(x + 1))


def _arctanh(x) -> Variable:
    """``(log1p(x) - log1p(-x)) / 2``, NumPy's arctanh (+-inf at +-1, NaN beyond)."""
    return 0.5 * (sn.log1p(x) - sn.log1p(-x))


arccosh, arctanh = _float_math(_arccosh, "arccosh"), _float_math(_arctanh, "arctanh")


def deg2rad(x) -> Variable:
    """Degrees to radians (an integer x made float first)."""
    return _as_float(x) * (np.pi / 180.0)


def rad2deg(x) -> Variable:
    """Radians to degrees (an integer x made float first)."""
    return _as_float(x) * (180.0 / np.pi)


def power(x, y) -> Variable:
    """``T.power(x, y)``: ``x ** y``."""
    return sn.pow(*_numbers_alone(x, y))


def ptp(a, axis=None) -> Variable:
    """``T.ptp``: maximum minus minimum along ``axis`` (all of them by default)."""
    return max(a, axis) - min(a, axis)


def second(a, b) -> Variable:
    """``T.second(a, b)`` (Theano's ``fill``): b broadcast to a's shape."""
    return fill(a, b)


def identity_like(x) -> Variable:
    """``T.identity_like``: the identity of x's (matrix) shape and dtype."""
    x = as_variable(x)
    return sn.eye(sn.shape(x)[0], sn.shape(x)[1], dtype=x.type.dtype)


def zeros_like(model, dtype=None, opt=False) -> Variable:
    """``T.zeros_like`` (``opt`` accepted: it only changed Theano's graph). It reads
    ``model`` as Theano's ``fill(model, 0)`` did (``theano.function``'s unused-input check),
    also where its shape is known and the zeros are a constant."""
    return reading(sn.zeros_like(model, dtype=resolve_dtype(dtype)), model)


def ones_like(model, dtype=None, opt=False) -> Variable:
    """``T.ones_like`` (``opt`` accepted, as for ``zeros_like``; ``model`` read as there)."""
    return reading(sn.ones_like(model, dtype=resolve_dtype(dtype)), model)


def tensor_copy(x) -> Variable:
    """A new variable with x's value (``x.copy()``): naming it leaves x's name alone."""
    x = _as_theano_tensor(x)
    return sn.not_equal(x, False) if x.type.dtype.kind == "b" else sn.pos(x)


def conj(x) -> Variable:
    """``T.conj`` (and ``x.conj()``): the complex conjugate of a complex x (``sn.conj``); a
    real tensor's is itself (a copy)."""
    x = as_variable(x)
    return sn.conj(x) if x.type.dtype.kind == "c" else tensor_copy(x)


def real(z) -> Variable:
    """``T.real``: the real part (``sn.real``: float32 of complex64, float64 of complex128; a
    real z itself)."""
    return sn.real(as_variable(z))


def imag(z) -> Variable:
    """``T.imag``: the imaginary part (``sn.imag``; zeros of z's dtype for a real z)."""
    return sn.imag(as_variable(z))


def isclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False) -> Variable:
    """``T.isclose`` (NumPy's rule: ``|a - b| <= atol + rtol * |b|``, infinities close when
    equal, NaNs when ``equal_nan``), a bool tensor."""
    a, b = as_variable(a), as_variable(b)
    finite = sn.invert(sn.isnan(a) | sn.isnan(b) | sn.isinf(a) | sn.isinf(b))
    close = finite & sn.less_equal(sn.abs(a - b), atol + rtol * sn.abs(b))
    close = close | (sn.isinf(a) & sn.isinf(b) & sn.equal(a, b))
    if equal_nan:
        close = close | (sn.isnan(a) & sn.isnan(b))
    return close


def allclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False) -> Variable:
    """``T.allclose``: whether every element is ``isclose``, a bool scalar."""
    return sn.all(isclose(a, b, rtol, atol, equal_nan))


def inverse_permutation(perm) -> Variable:
    """``T.inverse_permutation``: the inverse of each permutation of ints (the last axis),
    ``argsort`` of it: ``out[perm[i]] = i``, in perm's dtype (Theano's was
    ``permute_row_elements(arange(n, dtype=perm.dtype), perm, inverse=True)``)."""
    perm = as_variable(perm)
    if perm.type.dtype.kind not in "iu":
        raise _at_user_line(
            DTypeError(f"inverse_permutation: perm must be integers, not {perm.describe()}")
        )
    return _cast(sn.argsort(perm, axis=-1), perm.type.dtype)


def split(x, splits_size, n_splits, axis=0) -> list[Variable] | Variable:
    """Theano's ``split(x, splits_size, n_splits, axis=0)``: x cut along ``axis`` into
    ``n_splits`` parts of the lengths ``splits_size`` (ints, an int vector computed in the
    graph, or a list of ints and integer scalars of the graph, stacked as Theano's
    ``as_tensor_variable`` stacks it), which must be >= 0 and add up to x's length there:
    checked when the graph is built where it tells, else when the function runs. A list of
    the parts (one part: the variable, as Theano's op of one output returned). ``sn.split``
    is NumPy's (sections or indices)."""
    x = as_variable(x)
    axis = _one_axis(axis, x.type.ndim, "split", x)
    if not _is_int(n_splits) or n_splits < 1:
        raise _at_user_line(
            ArgumentError(f"split of {x.describe()}: n_splits is an int >= 1, not {n_splits!r}")
        )
    n_splits = int(n_splits)
    if _holds_variables(splits_size):  # ([k, n - k]: stacked, as Theano's as_tensor_variable)
        splits_size = as_tensor_variable(splits_size)
    if isinstance(splits_size, Variable):
        sizes = _symbolic_split_sizes(x, splits_size, n_splits)
    else:
        sizes = list(np.asarray(splits_size).reshape(-1)) if np.ndim(splits_size) else None
        if sizes is None or not builtins.all(map(_is_int, sizes)):
            raise _at_user_line(
                ShapeTypeError(
                    f"split of {x.describe()}: splits_size is ints or an int vector, not "
                    f"{splits_size!r}"
                )
            )
        sizes = [int(s) for s in sizes]
        if len(sizes) != n_splits or builtins.min(sizes) < 0:
            raise _at_user_line(
                ShapeError(
                    f"split of {x.describe()}: splits_size {sizes} must be {n_splits} "
                    "(n_splits) lengths >= 0"
                )
            )
    total, length = functools.reduce(operator.add, sizes), x.type.shape[axis]
    if builtins.all(map(_is_int, sizes)) and isinstance(length, int):
        if total != length:
            raise _at_user_line(
                ShapeError(
                    f"split of {x.describe()}: the splits_size {sizes} add up to {total}, "
                    f"not the {length} of axis {axis}"
                )
            )
    else:
        where, length = f"split of {x.describe()}", sn.shape(x)[axis]
        x = _at_most(
            x, total, length, f"{where}: the sum of splits_size > the length of axis {axis}"
        )
        x = _at_most(
            x, length, total, f"{where}: the length of axis {axis} > the sum of splits_size"
        )
    if builtins.all(map(_is_int, sizes)):
        parts = sn.split(x, [int(c) for c in np.cumsum(sizes)[:-1]], axis)
    else:
        before, start, parts = (slice(None),) * axis, 0, []
        for size in sizes:
            stop = start + size
            parts.append(x[(*before, slice(start, stop))])
            start = stop
    return parts[0] if n_splits == 1 else parts


def _symbolic_split_sizes(x, splits_size: Variable, n_splits: int) -> list:
    """The entries of an int vector of split sizes, its length checked to be n_splits and
    its entries to be >= 0 when the function runs."""
    if splits_size.type.ndim != 1 or splits_size.type.dtype.kind not in "iu":
        raise _at_user_line(
            DTypeError(
                f"split of {x.describe()}: splits_size is an int vector, not "
                f"{splits_size.describe()}"
            )
        )
    if splits_size.type.shape[0] not in (None, n_splits) and isinstance(
        splits_size.type.shape[0], int
    ):
        raise _at_user_line(
            ShapeError(
                f"split of {x.describe()}: splits_size {splits_size.describe()} has "
                f"{splits_size.type.shape[0]} lengths, not n_splits={n_splits}"
            )
        )
    # a negative size would cut as a slice's negative bound (Theano's Split refused it)
    splits_size = _in_domain(splits_size, f"split of {x.describe()}: splits_size", "count")
    splits_size = sn.reshape(splits_size, (n_splits,))  # its length checked at run time
    return [splits_size[i] for i in range(n_splits)]


class _Grid:
    """Theano's ``T.mgrid``/``T.ogrid``: ``T.mgrid[0:5, 0:3]`` is a list of tensors, one per
    slice, each that slice's ``T.arange`` along its own axis (bounds may be ints or integer
    scalars), broadcast to the whole grid (``mgrid``) or kept with length 1 on the other
    axes (``ogrid``, ``sparse``). A single slice gives its one tensor, as NumPy's does."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, key):
        slices = key if isinstance(key, tuple) else (key,)
        name = "ogrid" if self.sparse else "mgrid"
        for sl in slices:
            if not isinstance(sl, slice) or sl.stop is None:
                raise _at_user_line(
                    ArgumentError(f"T.{name}: each entry is a slice start:stop:step, not {sl!r}")
                )
            if isinstance(sl.step, complex):
                raise _at_user_line(
                    NotImplementedError(
                        f"T.{name}: a complex step ({sl.step}) is not implemented, as in Theano"
                    )
                )
        ndim = len(slices)
        ranges = [
            arange(0 if sl.start is None else sl.start, sl.stop, 1 if sl.step is None else sl.step)
            for sl in slices
        ]
        ranges = [
            sn.dimshuffle(r, *(["x"] * j + [0] + ["x"] * (ndim - 1 - j)))
            for j, r in enumerate(ranges)
        ]
        if not self.sparse:  # Theano's: each range times ones along the other axes
            ones = [sn.ones_like(r) for r in ranges]
            ranges = [
                functools.reduce(sn.mul, [r if i == j else ones[j] for j in range(ndim)])
                for i, r in enumerate(ranges)
            ]
        return ranges if isinstance(key, tuple) else ranges[0]

    def __repr__(self):
        return "T.ogrid" if self.sparse else "T.mgrid"


mgrid, ogrid = _Grid(sparse=False), _Grid(sparse=True)
