"""``theano.compile.ops.as_op`` (also ``theano.compile.as_op``): a NumPy function as an op.

Theano 1.0's "Extending Theano" tutorial::

    @as_op(itypes=[T.dmatrix, T.dmatrix], otypes=[T.dmatrix])
    def numpy_dot(a, b):
        return np.dot(a, b)

The decorated function becomes a symnb op whose NumPy reference is the function: it runs as
a Python step on every backend (its results checked against ``otypes`` as any op's are). It
has no gradient: ``T.grad`` through it is a NotDifferentiableError naming it.
"""

from __future__ import annotations

import pickle
import sys

import numpy as np

from symnb.compat.theano.tensor.var import TensorType as _TheanoType
from symnb.core.op import NotDifferentiable, Op
from symnb.core.types import TensorType
from symnb.core.variable import Variable
from symnb.errors import ArgumentError, DTypeError, ShapeError

__all__ = ["as_op", "load_back"]


def as_op(itypes, otypes, infer_shape=None):
    """Decorate a function of NumPy arrays as an op of inputs of ``itypes`` giving outputs of
    ``otypes`` (Theano's types: ``T.dmatrix``, ``T.TensorType(dtype, broadcastable)``).
    ``infer_shape`` is taken and not needed: the outputs' types give their dims."""
    itypes, otypes = _types(itypes, "itypes"), _types(otypes, "otypes")
    if not otypes:
        raise ArgumentError("as_op: otypes names no output type")
    if infer_shape is not None and not callable(infer_shape):
        raise ArgumentError(f"as_op: infer_shape is a function or None, got {infer_shape!r}")

    def decorator(fn):
        if not callable(fn):
            raise ArgumentError(f"as_op decorates a function, got {fn!r}")
        return _AsOp(fn, itypes, otypes)

    return decorator


def load_back(module: str, name: str):
    """The object ``module.name`` (``name`` may be dotted), importing the module: how an op
    made by as_op at a module's top level loads (Theano 1.0's ``load_back``)."""
    __import__(module)
    found = _named(module, name)
    if found is None:
        raise pickle.UnpicklingError(f"as_op: {module}.{name} is not found")
    return found


def _named(module, name: str):
    """The object at ``module.name`` in an imported module, or None."""
    found = sys.modules.get(module) if module else None
    for part in name.split(".") if found is not None else ():
        found = getattr(found, part, None)
    return found


def _types(types, argument: str) -> tuple:
    """Theano's types (or constructors such as ``T.dmatrix``) as symnb's."""
    if not isinstance(types, (list, tuple)):
        types = [types]
    found = []
    for t in types:
        if isinstance(t, _TheanoType):
            t = t.symnb_type()
        elif not isinstance(t, TensorType) and callable(t):
            made = t()  # ``T.dmatrix``: the layer's constructor; Theano's was a type
            t = made.type if isinstance(made, Variable) else made
        if not isinstance(t, TensorType):
            raise ArgumentError(
                f"as_op: {argument} is a list of Theano types (T.dmatrix, "
                f"T.TensorType(dtype, broadcastable)), got {t!r}"
            )
        found.append(t)
    return tuple(found)


class _AsOp(Op):
    """The op ``as_op`` makes of a function (its name: the function's)."""

    name = "as_op"
    __props__ = ("fn", "itypes", "otypes")

    def __init__(self, fn, itypes: tuple, otypes: tuple):
        self.fn, self.itypes, self.otypes = fn, itypes, otypes
        self.nin, self.nout = len(itypes), len(otypes)
        self.__name__ = getattr(fn, "__name__", "as_op")

    def __str__(self):
        return f"as_op({self.__name__})"

    def __reduce_ex__(self, protocol):
        """Pickled as Theano 1.0's ``FromFunctionOp.__reduce__``: an op decorated at a module's
        top level is that module's name (where the function's own name now holds the op, so
        the function does not pickle by reference); an op made of a function left at its
        name (``as_op(...)(f)``) pickles with the function by reference."""
        module, name = getattr(self.fn, "__module__", None), getattr(self.fn, "__qualname__", "")
        found = _named(module, name)
        if found is self:
            return load_back, (module, name)
        if found is not self.fn:
            raise pickle.PicklingError(
                f"cannot pickle {self}: an op made by as_op pickles by its name, and "
                f"{module}.{name} is {'not found' if found is None else 'another object'}; "
                "decorate the function at a module's top level"
            )
        return super().__reduce_ex__(protocol)

    __repr__ = __str__

    def infer_types(self, *inputs):
        for k, (x, want) in enumerate(zip(inputs, self.itypes)):
            if x.type.dtype != want.dtype:
                raise DTypeError(
                    f"{self}: input {k}, {x.describe()}, is not of its itype {want} "
                    f"(cast it: T.cast(input, {want.dtype.name!r}))"
                )
            if x.type.ndim != want.ndim or any(
                type(w) is int and type(d) is int and d != w
                for d, w in zip(x.type.shape, want.shape)
            ):
                raise ShapeError(f"{self}: input {k}, {x.describe()}, is not of its itype {want}")
        return list(self.otypes)

    def perform(self, *arrays):
        """The function on the arrays; each result as an array of its output's dtype where
        NumPy casts it so within its kind (a float64 result of a float32 output)."""
        result = self.fn(*arrays)
        results = list(result) if isinstance(result, (list, tuple)) else [result]
        if len(results) == len(self.otypes):
            for k, (value, want) in enumerate(zip(results, self.otypes)):
                value = np.asarray(value)
                if value.dtype != want.dtype and np.can_cast(value.dtype, want.dtype, "same_kind"):
                    value = value.astype(want.dtype)
                results[k] = value
        return results[0] if len(results) == 1 and self.nout == 1 else tuple(results)

    def grad(self, inputs, outputs, output_grads):
        raise NotDifferentiable(
            f"{self} has no gradient: an op made by as_op runs a NumPy function; write the "
            "expression with T functions to differentiate it"
        )
