"""Theano's dtype of an operation on several dtypes (``theano.scalar.upcast``), and the dtype
Theano gave a Python number, under ``theano.config.cast_policy``.

Theano 1.0's ``upcast`` is NumPy's promotion of the dtypes. Under its default policy,
``'custom'``, that is all: ``upcast('int32', 'float32')`` is float64, as ``ivector * fscalar``
is. Under ``'numpy+floatX'`` a result NumPy makes float64 stays float32 where floatX is float32
(float16 where it is float16, where no float32 is given either), unless a float64 is among the
dtypes: Theano kept work in floatX unless asked for more.
"""

from __future__ import annotations

import numbers

import numpy as np

from symnb.compat.theano import configparser
from symnb.compat.theano.configparser import resolve_dtype
from symnb.config import config

_INTS = ("int8", "int16", "int32", "int64")


def keeps_floatx() -> bool:
    """Whether Theano's casting keeps float work in floatX (``cast_policy`` 'numpy+floatX')."""
    return configparser.config.cast_policy == "numpy+floatX"


def upcast(dtype, *dtypes) -> str:
    """The dtype every one of the dtypes converts to under Theano's rule (``"floatX"``
    allowed): NumPy's, kept in floatX only under ``cast_policy='numpy+floatX'``."""
    names = [np.dtype(resolve_dtype(d)).name for d in (dtype, *dtypes)]
    found = np.result_type(*names).name
    if not keeps_floatx() or "float64" in names:
        return found
    if config.floatX == "float16" and "float32" not in names and found in ("float32", "float64"):
        return "float16"
    if config.floatX == "float32" and found == "float64":
        return "float32"
    return found


def number_dtype(value) -> str:
    """The dtype Theano gave a number in an expression: a Python int the smallest of int8 ...
    int64 that holds it (Theano's autocasting; int64 under ``cast_policy='numpy+floatX'``,
    NumPy's), a Python float floatX (the layer's rule for literals, docs/theano.md), a bool
    bool, a NumPy scalar or array its own dtype."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, numbers.Integral) and not isinstance(value, np.integer):
        ints = ("int64",) if keeps_floatx() else _INTS
        return next((d for d in ints if np.iinfo(d).min <= value <= np.iinfo(d).max), "uint64")
    if isinstance(value, float) and not isinstance(value, np.floating):
        return config.floatX
    return np.asarray(value).dtype.name


def float_constant_dtype(value: float) -> str:
    """The dtype of Theano's constant of a Python float inside its own formulas
    (``autocast_float``): floatX under 'numpy+floatX' and where floatX is not float64, else
    float32 where that holds the value exactly (0.5), else float64."""
    if keeps_floatx() or config.floatX != "float64":
        return config.floatX
    return "float32" if float(np.float32(value)) == value else "float64"
