"""Theano's dtype of an operation on several dtypes (``theano.scalar.upcast``), the dtype
Theano gave a Python number, under ``theano.config.cast_policy``, and the constant the layer
makes of a Python number (``as_theano_tensor``), which every function of the layer that turns
a number into a tensor goes through.

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
from symnb.compat.theano.configparser import theano_dtype
from symnb.config import config
from symnb.core.op import _at_user_line
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import DTypeError

_INTS = ("int8", "int16", "int32", "int64")


def keeps_floatx() -> bool:
    """Whether Theano's casting keeps float work in floatX (``cast_policy`` 'numpy+floatX')."""
    return configparser.config.cast_policy == "numpy+floatX"


def upcast(dtype, *dtypes) -> str:
    """The dtype every one of the dtypes converts to under Theano's rule (``"floatX"``
    allowed): NumPy's, kept in floatX only under ``cast_policy='numpy+floatX'``."""
    names = [theano_dtype(d, "upcast").name for d in (dtype, *dtypes)]
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
    found = np.asarray(value).dtype
    if found.kind not in "biufc":  # (a str: 'str32', no dtype of a tensor)
        raise _at_user_line(
            DTypeError(f"cannot use {type(value).__name__} {value!r} in a symbolic expression")
        )
    return found.name


def is_python_number(value) -> bool:
    """Whether ``value`` is a number as Python writes it (``1``, ``0.5``, ``True``), not a
    NumPy scalar or array, whose dtype is chosen already."""
    return isinstance(value, (bool, numbers.Number)) and not isinstance(value, np.generic)


def as_theano_tensor(value, name=None) -> Variable:
    """Theano's ``as_tensor_variable`` of one value, as this layer makes it: a variable as it
    is; a Python float the floatX constant Theano made of it (``number_dtype``), so
    ``T.sqrt(2.)``, ``T.switch(c, 1., 0.)`` and ``outputs_info=0.`` are float32 under floatX
    float32; a Python int or bool a constant of NumPy's dtype for it (int64, bool: the
    layer's rule for an int on its own, where Theano's int8 wrapped, ``T.constant(100) * 2``;
    ``T.stack`` gives one beside tensors their dtype, ``number_dtype``); an array, a NumPy
    scalar or a list symnb's constant of it (its own dtype, NumPy's for a list)."""
    if isinstance(value, Variable):
        return value
    if is_python_number(value):
        dtype = number_dtype(value) if _is_python_float(value) else None
        return Constant(value, dtype=dtype, name=name)
    return as_variable(value, name)


def numbers_alone(*values) -> list:
    """The arguments of an elementwise function whose dtype they decide (both branches of
    ``T.switch``, both operands of ``T.maximum``): where none is a variable, the Python
    floats are on their own and each becomes the layer's floatX constant
    (``as_theano_tensor``: ``T.switch(c, 1., 0.)`` is floatX), Python ints staying weak, so
    beside such a float they take its dtype (``T.switch(c, 1, 0.)`` floatX, as Theano's int8
    constant gave); beside a variable every number stays as written, weak
    (``T.switch(c, x32, 0.)`` is float32 under either floatX, docs/theano.md)."""
    if any(isinstance(v, Variable) for v in values):
        return list(values)
    return [as_theano_tensor(v) if _is_python_float(v) else v for v in values]


def _is_python_float(value) -> bool:
    return isinstance(value, float) and not isinstance(value, np.floating)


def float_constant_dtype(value: float) -> str:
    """The dtype of Theano's constant of a Python float inside its own formulas
    (``autocast_float``): floatX under 'numpy+floatX' and where floatX is not float64, else
    float32 where that holds the value exactly (0.5), else float64."""
    if keeps_floatx() or config.floatX != "float64":
        return config.floatX
    return "float32" if float(np.float32(value)) == value else "float64"
