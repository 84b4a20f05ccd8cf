"""``theano.scalar``: what course code calls of Theano's scalar module.

``upcast(*dtypes)`` (the HMC tutorial's ``theano.scalar.upcast(accept.dtype,
rate.dtype)``) is the dtype Theano's promotion gives, as a string (NumPy's under the default
``cast_policy`` 'custom', kept in float32 where floatX is float32 under 'numpy+floatX',
``upcasting.py``); ``float32``, ``int64``...
are scalar types whose call makes a 0-d variable (``theano.scalar.float64("x")``), and
``Scalar(dtype)`` one of any dtype. Theano's scalars were a graph of their own; here they are
0-d tensors, which broadcast against anything.
"""

from __future__ import annotations

import numpy as np

from symnb.compat.theano.configparser import theano_dtype
from symnb.compat.theano.tensor.var import TensorType
from symnb.compat.theano.upcasting import (
    as_theano_tensor,
    is_python_number,
    upcast,  # noqa: F401 - theano.scalar.upcast
)
from symnb.core.variable import Constant, Variable


class Scalar(TensorType):
    """``theano.scalar.Scalar(dtype)``: a 0-d type; ``Scalar("float32")("x")`` a variable."""

    def __init__(self, dtype):
        super().__init__(dtype, ())

    def __repr__(self):
        return f"Scalar({self.dtype})"


def constant(value, name=None, dtype=None) -> Variable:
    """A 0-d constant (``theano.scalar.constant(2.0)``): a Python number Theano's constant of
    it (``as_theano_tensor``: a float floatX, an int the smallest int that holds it)."""
    if dtype is None and is_python_number(value):
        return as_theano_tensor(value, name=name)
    dtype = None if dtype is None else theano_dtype(dtype, "theano.scalar.constant: dtype")
    return Constant(np.asarray(value, dtype=dtype), name=name)


def as_scalar(value, name=None) -> Variable:
    """A 0-d variable as it is, else a constant of the value."""
    if isinstance(value, Variable):
        if value.type.ndim != 0:
            raise TypeError(f"as_scalar: {value.describe()} is not a scalar")
        return value
    return constant(value, name=name)


#: Theano's scalar types, named by dtype
bool_ = Scalar("bool")
int8, int16, int32, int64 = (Scalar(d) for d in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (Scalar(d) for d in ("uint8", "uint16", "uint32", "uint64"))
float16, float32, float64 = (Scalar(d) for d in ("float16", "float32", "float64"))
complex64, complex128 = Scalar("complex64"), Scalar("complex128")
