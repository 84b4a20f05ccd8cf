"""``T.sum``, ``T.prod`` and ``T.mean`` with Theano's ``dtype`` and ``acc_dtype``.

Theano's reductions (``CAReduceDtype``) accumulate in ``acc_dtype`` and then cast to
``dtype``; an ``acc_dtype`` narrower than the input is refused, as Theano refused it. Without
``acc_dtype`` a float16 input accumulates in float32, Theano's default for it, and is cast
once; others use symnb's own accumulation: its float32 sums add their partial sums in
float64, close to Theano's default float64 accumulator.
"""

from __future__ import annotations

import numpy as np

from symnb import ops as sn
from symnb.compat.theano.configparser import theano_dtype
from symnb.core.op import _at_user_line
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import DTypeError
from symnb.ops._axes import normalize_axis
from symnb.ops.elemwise import cast as _cast

#: Theano's result dtype of a sum or product of a discrete dtype (others keep theirs)
_WIDENED = {
    **dict.fromkeys(["bool", "int8", "int16", "int32"], "int64"),
    **dict.fromkeys(["uint8", "uint16", "uint32"], "uint64"),
}


def _axis(axis):
    """Theano also spells several axes as a list, a NumPy array of ints or a constant tensor
    (``T.constant(1)``), as its ``check_and_normalize_axes`` read them; a tensor that is not
    a constant stays, for the reduction's own error."""
    if isinstance(axis, Constant):
        axis = axis.value
    if isinstance(axis, np.ndarray) and axis.dtype.kind in "iu" and axis.ndim <= 1:
        axis = axis.tolist()
    elif isinstance(axis, np.integer):
        axis = int(axis)
    return tuple(axis) if isinstance(axis, list) else axis


def _dtyped(reduce, x, dtype, **kwargs) -> Variable:
    """A reduction with Theano's ``dtype`` argument (a dtype, already read): the result in that
    dtype (the input is converted first when that widens it, so a sum of int8 in int64
    cannot overflow)."""
    if dtype is None:
        return reduce(x, **kwargs)
    widens = np.can_cast(x.type.dtype, dtype, "safe")
    return _cast(reduce(_cast(x, dtype) if widens else x, **kwargs), dtype)


def _accumulator(x: Variable, acc_dtype, call: str) -> np.dtype:
    """Theano's check of ``acc_dtype``: any float for a discrete input, else a dtype the input
    converts to without loss."""
    acc, given = theano_dtype(acc_dtype, f"{call}: acc_dtype"), x.type.dtype
    if acc.kind in "fc" and given.kind in "biu" or np.promote_types(given, acc) == acc:
        return acc
    raise _at_user_line(
        DTypeError(
            f"{call}: acc_dtype={acc.name} would lose precision of {x.describe()} (a "
            f"{given.name} accumulates in {np.promote_types(given, acc).name} at least, as in "
            f"Theano)\n  hint: leave acc_dtype out, or give dtype={acc.name!r} to cast the "
            "result only"
        )
    )


def _half_accumulator(x: Variable, dtype) -> str | None:
    """Theano's default accumulator of a float16 input (``CAReduceDtype._acc_dtype``):
    float32, where ``dtype`` does not already convert the input to float32 or wider (NumPy's
    float16 reductions round every partial sum to float16: a column [2048, 1 x7] summed to
    2048, Theano's 2056)."""
    if x.type.dtype != np.float16:
        return None
    if dtype is not None and np.can_cast(np.float32, dtype, "safe"):
        return None  # converted first to that dtype (_dtyped): accumulated in it
    return "float32"


def _reduce(reduce, call, x, axis, dtype, keepdims, acc_dtype) -> Variable:
    x = as_variable(x)
    dtype = None if dtype is None else theano_dtype(dtype, f"{call}: dtype")
    if acc_dtype is None:
        acc_dtype = _half_accumulator(x, dtype)
    if acc_dtype is None:
        return _dtyped(reduce, x, dtype, axis=_axis(axis), keepdims=keepdims)
    acc = _accumulator(x, acc_dtype, call)
    out = _WIDENED.get(x.type.dtype.name, x.type.dtype.name) if dtype is None else dtype
    return _cast(reduce(x, axis=_axis(axis), keepdims=keepdims, dtype=acc), out)


def sum(input, axis=None, dtype=None, keepdims=False, acc_dtype=None) -> Variable:  # noqa: A001
    """``T.sum``: accumulated in ``acc_dtype`` when given, the result cast to ``dtype``
    (Theano's default: int64/uint64 for discrete input, else the input's)."""
    return _reduce(sn.sum, "T.sum", input, axis, dtype, keepdims, acc_dtype)


def prod(
    input, axis=None, dtype=None, keepdims=False, acc_dtype=None, no_zeros_in_input=False
) -> Variable:
    """``T.prod``, with ``dtype``/``acc_dtype`` as in ``sum`` (``no_zeros_in_input``, which
    let Theano take a cheaper gradient, is accepted: the values are the same)."""
    return _reduce(sn.prod, "T.prod", input, axis, dtype, keepdims, acc_dtype)


def mean(input, axis=None, dtype=None, keepdims=False, acc_dtype=None) -> Variable:
    """``T.mean``: float64 for integer input (Theano's rule, which is also NumPy's). With
    ``dtype`` or ``acc_dtype``, Theano's own steps: the ``sum`` in ``dtype`` (accumulated in
    ``acc_dtype``), then true-divided by each reduced dim cast to float32 (a float16, float32
    or complex64 sum) or float64, so an integer ``dtype`` still gives a float64 mean."""
    x = as_variable(input)
    dtype = None if dtype is None else theano_dtype(dtype, "T.mean: dtype").name
    if acc_dtype is None and dtype is None:
        return sn.mean(x, axis=_axis(axis), keepdims=keepdims)
    half = x.type.dtype.name == "float16"
    total = sum(x, axis, dtype or ("float32" if half else None), keepdims, acc_dtype)
    small = total.type.dtype.name in ("float16", "float32", "complex64")
    count_dtype = "float32" if small else "float64"
    for i in normalize_axis(_axis(axis), x.type.ndim, "T.mean", x):
        total = sn.true_div(total, _cast(sn.shape(x)[i], count_dtype))
    if total.type.dtype.kind in "biu":  # no axis reduced: Theano still gave a float
        total = _cast(total, count_dtype)
    return _cast(total, "float16") if dtype == "float16" or dtype is None and half else total
