"""The shape of an elementwise random draw, by NumPy's ``Generator`` rules: with a ``size``,
each parameter (``avg``, ``low``, ``p``...) must broadcast to it; without one (``size=None``)
the draw has the parameters' broadcast shape. ``Positions`` gives each element of that shape
its own Philox block, so no number is repeated across the elements a parameter broadcasts to.
"""

from __future__ import annotations

import numpy as np

from symnb.core.dims import DimMismatch, broadcast_dims, format_shape, unify
from symnb.core.op import Op
from symnb.core.types import TensorType
from symnb.core.variable import Variable
from symnb.errors import ShapeError
from symnb.ops.creation import shape_operand
from symnb.ops.reduce import prod


class Positions(Op):
    """Element positions ``0 .. n-1`` (uint64) in the shape of a draw: the offsets from the
    draw's counter that its elementwise kernel turns into Philox blocks.

    The inputs are the shapes the draw's shape comes from. With ``sized``, the first is the
    size and the others the shapes of parameters that must broadcast to it (checked here
    where the types could not tell); without, the draw has their broadcast shape. ``draw``
    and ``names`` (the draw and the parameters' names) make the run-time error clear."""

    family = "random"
    differentiable = False
    dtype_rule = "uint64"
    __props__ = ("dims", "sized", "draw", "names")

    def __init__(self, dims, sized: bool = True, draw: str = "", names: tuple = ()):
        self.dims, self.sized = tuple(dims), bool(sized)
        self.draw, self.names = str(draw), tuple(names)

    def infer_types(self, *shapes):
        return [TensorType("uint64", self.dims)]

    def perform(self, *shapes):
        shapes = [tuple(int(n) for n in s) for s in shapes]
        if self.sized:
            shape = checked_shape(shapes[0])
            for name, own in zip(self.names, shapes[1:]):
                if not broadcasts_to(own, shape):
                    raise ShapeError(
                        f"{self.draw}: {name} of shape {own} does not broadcast to the size "
                        f"{shape}{LEAVE_OUT}"
                    )
        else:
            try:
                shape = np.broadcast_shapes(*shapes)
            except ValueError:
                parts = ", ".join(f"{n} {s}" for n, s in zip(self.names, shapes))
                raise ShapeError(f"{self.draw}: {parts} do not broadcast together") from None
        return np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.uint64).reshape(shape)


LEAVE_OUT = "; leave size out (None) to draw one number per element of the parameters"


def checked_shape(shape) -> tuple:
    shape = tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    return shape


def broadcasts_to(own: tuple, shape: tuple) -> bool:
    if len(own) > len(shape):
        return False
    return all(d in (1, s) for d, s in zip(own[::-1], shape[::-1]))


def draw_positions(draw: str, size, params: dict) -> tuple[Variable, Variable]:
    """(positions, element count) of a draw of ``size`` (None: the parameters' broadcast
    shape) whose parameters are ``params`` (name -> variable). A scalar parameter fits any
    size; a ShapeError where a parameter provably does not broadcast to the size."""
    arrays = {name: v for name, v in params.items() if v.type.ndim > 0}
    if size is None:
        dims = _broadcast_shape(draw, arrays)
        if all(_fixed(v.type.shape) for v in arrays.values()):  # as if that size were given
            return draw_positions(draw, dims, {})
        # a dim known only at run time (unified with another's fixed dim in ``dims``, or
        # not): Positions checks that the parameters broadcast together when it runs
        names = tuple(arrays)
        positions = Positions(dims, False, draw, names)(*(v.shape for v in arrays.values()))
        return positions, prod(positions.shape)
    dims, shape = shape_operand(size)
    unproved = {name: v for name, v in arrays.items() if not _fits(draw, name, v, dims)}
    op = Positions(dims, True, draw, tuple(unproved)) if unproved else Positions(dims)
    return op(shape, *(v.shape for v in unproved.values())), prod(shape)


def _fixed(shape: tuple) -> bool:
    return all(isinstance(d, int) for d in shape)


def _broadcast_shape(draw: str, arrays: dict) -> tuple:
    """The static broadcast shape of the parameters (``()`` for scalars alone)."""
    out: list = []
    for var in arrays.values():
        own = list(var.type.shape)
        lead = max(len(out), len(own))
        out = [1] * (lead - len(out)) + out
        own = [1] * (lead - len(own)) + own
        try:
            out = [broadcast_dims(a, b) for a, b in zip(out, own)]
        except DimMismatch:
            described = ", ".join(f"{n} {v.describe()}" for n, v in arrays.items())
            message = f"{draw}: the parameters do not broadcast together: {described}"
            raise ShapeError(message) from None
    return tuple(out)


def _fits(draw: str, name: str, var: Variable, dims: tuple) -> bool:
    """Whether ``var`` broadcasts to ``dims`` by its type alone; False where only its values
    will tell; a ShapeError where it cannot."""
    own = var.type.shape
    proved = len(own) <= len(dims)
    for d, s in zip(own[::-1], dims[::-1]):
        if d == 1 or d is not None and d == s:
            continue
        try:
            unify(s, d)
        except DimMismatch:
            proved = None
            break
        proved = False
    if len(own) > len(dims) or proved is None:
        raise ShapeError(
            f"{draw}: {name}, {var.describe()}, does not broadcast to the size "
            f"{format_shape(dims)}{LEAVE_OUT}"
        )
    return proved
