"""NumPy's broadcast of the static shapes of an op's inputs: the shape rule of every
elementwise op, and of the batch axes of matmul and solve (``core``).

A clash is a ShapeError naming the axis and both operands, with the hints of
:mod:`~symnb.core.shapes.hints`; a legal broadcast that stretches an axis is reported to
:mod:`~symnb.core.shapes.warnings`, which decides whether it is suspicious.
"""

from __future__ import annotations

from functools import partial

from symnb.core.dims import DimMismatch, broadcast_dims, format_dim
from symnb.core.shapes import hints as shape_hints
from symnb.core.shapes import warnings as shape_warnings
from symnb.core.variable import Variable
from symnb.errors import ShapeError


def broadcast_shapes(op, inputs: list[Variable], core: int = 0) -> tuple:
    """NumPy's broadcast of the inputs' shapes; a ShapeError names the clashing axis. With
    ``core``, of their batch axes only, all but the last ``core`` axes of each input (the
    matrices of matmul and solve); errors and warnings still show the inputs' whole shapes and
    count the axis in them."""
    if core:
        return _broadcast_axes(op, inputs, core)
    # the common cases, one shape besides 0-d operands (``x * 0.9``) or a bias that is the
    # tail of the other shape (``(batch, 10) + (10,)``): only new leading axes, so nothing
    # clashes and no shape warning applies (no axis of an operand is stretched)
    if len(inputs) == 2:  # almost every node built: written out
        a, b = inputs[0].type.shape, inputs[1].type.shape
        if a == b:
            return a
        if len(a) < len(b):
            a, b = b, a
        if not b or a[len(a) - len(b) :] == b:
            return a
    else:
        longest = _longest_if_tails([v.type.shape for v in inputs])
        if longest is not None:
            return longest
    return _broadcast_axes(op, inputs)


def _broadcast_axes(op, inputs: list[Variable], core: int = 0) -> tuple:
    """``broadcast_shapes`` axis by axis, with its shape warnings (a function of its own: its
    comprehension would make a cell in the common path's frame)."""
    axes = axes_of([shape_warnings.batch_axes(v, core) for v in inputs])
    out = []
    for axis, dims in enumerate(axes):
        try:
            out.append(fold_dims(dims))
        except DimMismatch as exc:
            message = _broadcast_message(op, inputs, axis - len(axes), exc, core)
            raise ShapeError(message) from None
    shape_warnings.broadcast_hook(op, inputs, tuple(out), core)
    return tuple(out)


def broadcast_static(shapes: list) -> tuple:
    """NumPy's broadcast of static shapes, without an op's messages and warnings (a fused
    node's steps, symnb/ops/composite.py): DimMismatch where two sizes clash."""
    return tuple(fold_dims(dims) for dims in axes_of(shapes))


def axes_of(shapes: list) -> list[tuple]:
    """Each axis's dims across ``shapes``, aligned on the right as NumPy aligns them (an axis
    a shape lacks is 1)."""
    ndim = max(len(s) for s in shapes)
    return list(zip(*[(1,) * (ndim - len(s)) + tuple(s) for s in shapes]))


def fold_dims(dims) -> object:
    """One axis's broadcast, folded from the left as an op folds its operands (named dims
    meet in that order: DimMismatch where two sizes clash)."""
    dim = dims[0]
    for other in dims[1:]:
        dim = broadcast_dims(dim, other)
    return dim


def _longest_if_tails(shapes: list) -> tuple | None:
    """The longest shape when every other is its tail (``()`` and itself included), else None
    (``broadcast_shapes`` writes the two-operand case out)."""
    longest = max(shapes, key=len, default=())
    for shape in shapes:
        if shape and shape != longest and shape != longest[len(longest) - len(shape) :]:
            return None
    return longest


def _broadcast_message(op, inputs, axis, exc, core=0) -> str:
    """``axis`` counts from the end of the broadcast axes; with ``core``, batch axes that
    stand before the last ``core`` axes of each input, which the message counts in."""
    operands = " and ".join(v.describe() for v in inputs)
    what = f"the batch axes (all but the last {core}) of {operands}" if core else operands
    hint = shape_hints.names_hint if core else partial(shape_hints.broadcast_hint, inputs)
    return (
        f"{op}: cannot broadcast {what}: axis {axis - core} is {format_dim(exc.a)} in one "
        f"and {format_dim(exc.b)} in the other (sizes must be equal, or one of them 1)"
    ) + hint(exc.a, exc.b)
