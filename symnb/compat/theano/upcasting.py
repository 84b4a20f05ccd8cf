"""Theano's dtype of an operation on several dtypes (``theano.scalar.upcast``).

NumPy's promotion, except that with ``floatX`` float32 a result NumPy makes float64 stays
float32 unless one of the dtypes is float64 itself (``int32`` with ``float32`` is float32
there, float64 in NumPy): Theano kept work in floatX unless asked for more.
"""

from __future__ import annotations

import numbers

import numpy as np

from symnb.compat.theano.configparser import resolve_dtype
from symnb.config import config

_INTS = ("int8", "int16", "int32", "int64")


def upcast(dtype, *dtypes) -> str:
    """The dtype every one of the dtypes converts to under Theano's rule (``"floatX"``
    allowed)."""
    names = [np.dtype(resolve_dtype(d)).name for d in (dtype, *dtypes)]
    found = np.result_type(*names).name
    if found == "float64" and config.floatX == "float32" and "float64" not in names:
        return "float32"
    return found


def number_dtype(value) -> str:
    """The dtype Theano gave a number in an expression: a Python int the smallest of int8 ...
    int64 that holds it (Theano's autocasting), a Python float floatX (the layer's rule for
    literals, docs/theano.md), a bool bool, a NumPy scalar or array its own dtype."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, numbers.Integral) and not isinstance(value, np.integer):
        return next((d for d in _INTS if np.iinfo(d).min <= value <= np.iinfo(d).max), "uint64")
    if isinstance(value, float) and not isinstance(value, np.floating):
        return config.floatX
    return np.asarray(value).dtype.name
