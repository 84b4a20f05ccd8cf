"""In-place: an op may write its result into an input's buffer when nothing else needs it.

An op says which input it overwrites with ``destroy_map = {output: [input]}`` (the py
backend reads it). The rewrite picks an input that (1) is computed in the graph by an op that
returns a fresh buffer (not a leaf: never a graph input, shared value or constant; not a view
such as a transpose), (2) is used by this node alone, once (so no later reader, and not a
graph output), and (3) has the node's dtype. Shapes are checked when it runs: where the input
cannot hold the result (it is broadcast), the op computes into a new buffer as usual.
"""

from __future__ import annotations

import numpy as np

from symnb.ops.blas import Gemm, gemm_inplace
from symnb.ops.composite import Composite
from symnb.ops.elemwise import Elemwise
from symnb.ops.linalg import Matmul
from symnb.opt.pattern import Pattern
from symnb.opt.registry import rule
from symnb.opt.rules._util import only_user


class ElemwiseInplace(Elemwise):
    """``base`` computed into the buffer of input ``destroyed`` (same values as ``base``)."""

    __props__ = ("base", "destroyed")

    def __init__(self, base, destroyed: int):
        self.base, self.destroyed = base, destroyed
        self.nin = base.nin
        self.destroy_map = {0: [destroyed]}

    def infer_types(self, *inputs):
        return self.base.infer_types(*inputs)

    def perform(self, *arrays):
        target = arrays[self.destroyed]
        if not _can_hold(target, arrays):
            return self.base.perform(*arrays)
        return self.base.impl(*arrays, out=target)

    def grad(self, inputs, outputs, output_grads):
        return self.base.grad(inputs, outputs, output_grads)

    def grad_wrt(self, needed, inputs, outputs, output_grads):
        return self.base.grad_wrt(needed, inputs, outputs, output_grads)

    def __str__(self):
        return f"{self.base}_inplace" + (f"[{self.destroyed}]" if self.destroyed else "")


class CompositeInplace(Composite):
    """A composite whose last step writes into input ``destroyed``. It stays a Composite, so
    kernel backends render its program as they render any composite."""

    __props__ = ("program", "dtype", "destroyed")

    def __init__(self, program, dtype, nin, destroyed: int):
        super().__init__(program, dtype, nin)
        self.destroyed = destroyed
        self.destroy_map = {0: [destroyed]}

    def perform(self, *arrays):
        target = arrays[self.destroyed]
        if not _can_hold(target, arrays):
            return super().perform(*arrays)
        return self.perform_into(arrays, target)

    def __str__(self):
        return f"{super().__str__()}_inplace" + (f"[{self.destroyed}]" if self.destroyed else "")


def inplace_variant(op, destroyed: int):
    """The op computing into input ``destroyed``."""
    if isinstance(op, Composite):
        return CompositeInplace(op.program, op.dtype, op.nin, destroyed)
    return ElemwiseInplace(op, destroyed)


def _can_hold(target, arrays) -> bool:
    """A writable array already of the broadcast result's shape."""
    if not isinstance(target, np.ndarray) or not target.flags.writeable:
        return False
    try:
        return target.shape == np.broadcast_shapes(*(np.shape(a) for a in arrays))
    except ValueError:  # shapes that do not broadcast: the base op reports it
        return False


def writes_with_ufunc(op) -> bool:
    """The op's (last) step is a NumPy ufunc, which can write into ``out=``."""
    if isinstance(op, Composite):
        op = op.program[-1][0]
    return isinstance(getattr(op, "impl", None), np.ufunc) and type(op).perform is Elemwise.perform


def fresh_buffer(var) -> bool:
    """var is computed by an op that returns a new array (or an in-place op owning one)."""
    owner = var.owner
    return owner is not None and isinstance(owner.op, (Elemwise, Matmul, Gemm))


def _destroyable(m, i) -> bool:
    var = m.node.inputs[i]
    return (
        fresh_buffer(var)
        and only_user(m.graph, var, m.node)
        and var.type.dtype == m.out.type.dtype
        and var.type.ndim == m.out.type.ndim
    )


@rule("inplace", Pattern(Elemwise))
def elemwise_inplace(m):
    """An elementwise op (or composite) -> its variant writing into a dead input's buffer."""
    op = m.node.op
    if getattr(op, "destroy_map", None) or not writes_with_ufunc(op):
        return None
    for i in range(len(m.node.inputs)):
        if _destroyable(m, i):
            return inplace_variant(op, i)(*m.node.inputs)
    return None


@rule("inplace", Pattern(Gemm(inplace=False)))
def gemm_to_inplace(m):
    """gemm(z, ...) -> gemm_inplace when z's buffer is dead after it"""
    if not _destroyable(m, 0) or m.node.inputs[0].type.ndim != 2:
        return None
    return gemm_inplace(*m.node.inputs)
