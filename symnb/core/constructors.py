"""The functions users make leaf variables with: ``sn.tensor``, ``sn.matrix``, ``sn.shared``..."""

from __future__ import annotations

from symnb.config import config
from symnb.core.types import TensorType
from symnb.core.variable import Constant, SharedVariable, Variable


def tensor(name: str | None = None, shape=(), dtype=None) -> Variable:
    """A symbolic input. Each dim of ``shape`` is an int (fixed), a name such as ``"batch"``
    (the same size wherever the name appears) or None (unknown). ``dtype`` defaults to
    ``sn.config.floatX``."""
    return Variable(TensorType(dtype or config.floatX, shape), name=name)


def _of_rank(rank: int, doc: str):
    def make(name: str | None = None, dtype=None, shape=None) -> Variable:
        dims = (None,) * rank if shape is None else shape
        if len(TensorType("bool", dims).shape) != rank:
            raise ValueError(f"{make.__name__} has {rank} dims; shape {shape!r} has {len(dims)}")
        return tensor(name, dims, dtype)

    make.__doc__ = f"A symbolic {doc} input (dims unknown unless ``shape`` is given)."
    return make


scalar = _of_rank(0, "0-d")
vector = _of_rank(1, "1-d")
matrix = _of_rank(2, "2-d")
tensor3 = _of_rank(3, "3-d")
tensor4 = _of_rank(4, "4-d")
for _name, _fn in dict(scalar=scalar, vector=vector, matrix=matrix).items():
    _fn.__name__ = _name
tensor3.__name__, tensor4.__name__ = "tensor3", "tensor4"


def constant(value, dtype=None, name: str | None = None) -> Constant:
    """A fixed value in the graph."""
    return Constant(value, dtype=dtype, name=name)


def shared(value, name: str | None = None, shape=None, borrow: bool = False) -> SharedVariable:
    """A value that persists between calls, read and updated by compiled functions.

    Its type takes the value's dtype and shape; pass ``shape`` with ``None`` or names to let
    ``set_value`` change a dim. The value is copied unless ``borrow=True``.
    """
    return SharedVariable(value, name, shape, borrow)  # positional: no dict of keywords
