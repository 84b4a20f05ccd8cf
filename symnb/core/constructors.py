"""The functions users make leaf variables with: ``sn.tensor``, ``sn.matrix``, ``sn.shared``..."""

from __future__ import annotations

from symnb.config import config
from symnb.core.op import _at_user_line
from symnb.core.types import TensorType
from symnb.core.variable import Constant, SharedVariable, Variable
from symnb.errors import DTypeError, ShapeError


def tensor(name: str | None = None, shape=(), dtype=None) -> Variable:
    """A symbolic input. Each dim of ``shape`` is an int (fixed), a name such as ``"batch"``
    (the same size wherever the name appears) or None (unknown). ``dtype`` defaults to
    ``sn.config.floatX``."""
    return Variable(_input_type("tensor", name, dtype, shape), name=name)


def _input_type(what: str, name, dtype, shape) -> TensorType:
    """The type of a new input; a bad dim or dtype is an error naming the input and the
    shape, at the user's line (the dims and dtypes module knows neither). Only None means
    the default dtype: ``dtype=False``, ``""`` or ``0`` (a positional argument out of place)
    is refused as NumPy refuses it."""
    try:
        return TensorType(config.floatX if dtype is None else dtype, shape)
    except (ShapeError, DTypeError) as exc:
        label = f"{what} {name!r}" if name is not None else what
        where = f", shape {shape!r}" if isinstance(exc, ShapeError) else ""
        raise _at_user_line(type(exc)(f"{label}{where}: {exc.args[0]}")) from None


def _of_rank(rank: int, doc: str):
    def make(name: str | None = None, dtype=None, shape=None) -> Variable:
        dims = (None,) * rank if shape is None else shape
        type_ = _input_type(make.__name__, name, dtype, dims)
        if type_.ndim != rank:
            label = f"{make.__name__} {name!r}" if name is not None else make.__name__
            raise _at_user_line(
                ShapeError(
                    f"{label} has {rank} dim{'s' if rank != 1 else ''}; shape {shape!r} has "
                    f"{type_.ndim}"
                )
            )
        return Variable(type_, name=name)

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
    """A fixed value in the graph, its own read-only copy of ``value``.

    With ``dtype``, every value must survive the cast to it (a float rounds to a narrower
    float, as ``set_value`` rounds it, but may not become inf): a value the dtype cannot hold
    (``-1`` into uint8, ``0.5`` into int64, ``1+1j`` into float64) is a DTypeError.
    """
    return Constant(value, dtype=dtype, name=name)


def shared(value, name: str | None = None, shape=None, borrow: bool = False) -> SharedVariable:
    """A value that persists between calls, read and updated by compiled functions.

    Its type takes the value's dtype and shape; pass ``shape`` with ``None`` or names to let
    ``set_value`` change a dim. The value is copied unless ``borrow=True``.
    """
    return SharedVariable(value, name, shape, borrow)  # positional: no dict of keywords
