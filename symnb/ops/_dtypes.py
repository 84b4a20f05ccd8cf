"""Output dtypes the way NumPy computes them: by asking NumPy on tiny probe arrays.

Running the op's own NumPy reference on one-element arrays of the input dtypes (and on the
Python scalar itself for weak constants) reproduces NumPy's promotion exactly, including
NEP 50's weak scalars (``float32 * 2.0`` stays float32) and ``exp(int8) -> float16``.
"""

from __future__ import annotations

import warnings

import numpy as np

from symnb.core.variable import Constant, Variable
from symnb.errors import DTypeError

_cache: dict = {}


def probe_arg(var: Variable):
    """A stand-in value with the variable's dtype (a weak constant stands for itself)."""
    if isinstance(var, Constant) and var.weak:
        return var.data
    return np.ones((1,) * var.type.ndim, dtype=var.type.dtype)


def _weak_key(var: Constant):
    return ("weak", type(var.data), var.data)


def probe_dtype(op, fn, inputs: list[Variable]) -> np.dtype:
    """The dtype NumPy gives ``fn(*inputs)``; a NumPy refusal becomes a DTypeError.

    Cached by what makes ops equal (their class and parameters) without hashing the op
    itself, which cost more than the rest of the lookup on every node built."""
    key = [type(op), op.params() if op.__props__ else ()]
    for v in inputs:  # (dtype, ndim) flat, or one tuple for a weak constant: no tuple each
        if isinstance(v, Constant) and v.weak:
            key.append(_weak_key(v))
        else:
            t = v.type
            key += t.dtype, t.ndim
    key = tuple(key)
    dtype = _cache.get(key)
    return dtype if dtype is not None else _probe(op, fn, inputs, key)


def _probe(op, fn, inputs, key) -> np.dtype:
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = fn(*[probe_arg(v) for v in inputs])
    except (TypeError, OverflowError, ValueError) as exc:
        names = ", ".join(v.describe() for v in inputs)
        raise DTypeError(f"{op}: NumPy refuses these dtypes ({names}): {exc}") from None
    dtype = _cache[key] = np.result_type(out)
    return dtype


def refuse_wrapped_ints(op, inputs: list[Variable], dtype) -> None:
    """A DTypeError where a weak Python int among ``inputs`` lies outside the integer
    ``dtype`` the op gives: casting it would wrap (``where(c, x8, 300)`` would give 44). NumPy 2
    refuses such an int in ``x8 + 300``; ops whose NumPy function wraps it instead
    (``np.where``) refuse it the same way."""
    for var in inputs:
        bounds = wrapped_int(var, dtype)
        if bounds is not None:
            others = ", ".join(v.describe() for v in inputs if v is not var)
            raise DTypeError(
                f"{op}: the Python integer {var.data} is {bounds}, the dtype it would take "
                f"beside {others}; NumPy 2 refuses it as in x + {var.data} rather than wrap it "
                "(cast the other value to a wider dtype first, e.g. .astype('int64'))"
            )


def wrapped_int(var: Variable, dtype) -> str | None:
    """Where ``var`` is a weak Python int outside the integer ``dtype`` (a cast would wrap
    it), how it misses: "out of bounds for int8 (-128..127)"; else None. The one range check
    of weak ints: ``refuse_wrapped_ints`` for an op's operands, ``compile/fit.py`` for an
    update's or a given's value."""
    dtype = np.dtype(dtype)
    value = var.data if isinstance(var, Constant) and var.weak else None
    if dtype.kind not in "iu" or type(value) is not int:
        return None
    info = np.iinfo(dtype)
    if info.min <= value <= info.max:
        return None
    return f"out of bounds for {dtype} ({info.min}..{info.max})"
