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
from symnb.ops.broadcast import Alloc
from symnb.ops.composite import Composite
from symnb.ops.elemwise import Elemwise
from symnb.ops.index import IncSubtensor
from symnb.ops.inplace import IncAlongAxisInplace, IncSubtensorInplace, inplace_variant
from symnb.ops.linalg import Matmul
from symnb.ops.take import IncAlongAxis
from symnb.opt.pattern import Pattern
from symnb.opt.registry import rule
from symnb.opt.rules._util import only_user


def writes_with_ufunc(op) -> bool:
    """The op's (last) step is a NumPy ufunc (or computes as one, ``Elemwise.ufunc``), which
    can write into ``out=``."""
    if isinstance(op, Composite):
        op = op.program[-1][0]
    ufunc = isinstance(getattr(op, "impl", None), np.ufunc) or getattr(op, "ufunc", None)
    return bool(ufunc) and type(op).perform is Elemwise.perform


def fresh_buffer(var) -> bool:
    """var is computed by an op that returns a new array (or an in-place op owning one)."""
    owner = var.owner
    return owner is not None and isinstance(owner.op, (Elemwise, Matmul, Gemm, IncSubtensor))


def _destroyable(m, i, fresh=fresh_buffer) -> bool:
    var = m.node.inputs[i]
    return (
        fresh(var)
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


@rule("inplace", Pattern(IncSubtensor))
def inc_subtensor_inplace(m):
    """inc_subtensor/set_subtensor(x, ...) -> its in-place variant when x's buffer is dead
    after it (a chain of increments copies its array once)."""
    return _into_first_input(m, IncSubtensor, IncSubtensorInplace)


@rule("inplace", Pattern(IncAlongAxis))
def inc_along_axis_inplace(m):
    """inc_along_axis(x, ...) -> its in-place variant when x's buffer is dead after it (the
    gradient of take_along_axis adds into its zeros, not into a copy of them)."""
    return _into_first_input(m, IncAlongAxis, IncAlongAxisInplace)


def _into_first_input(m, base, variant):
    """The node's op, of class ``base`` itself, as ``variant`` (built from the same
    parameters) writing into input 0, where its buffer may be written."""
    op = m.node.op
    if type(op) is not base or not _destroyable(m, 0, _fresh_on_the_host):
        return None
    return variant(*(getattr(op, name) for name in op.__props__))(*m.node.inputs)


def _fresh_on_the_host(var) -> bool:
    """A fresh buffer, or an ``alloc``'s (the zeros of a gradient): new on the host, where
    increments run; a device may plan an alloc as a broadcast view, which no device kernel
    may write, so elementwise ops do not count it."""
    return fresh_buffer(var) or (var.owner is not None and isinstance(var.owner.op, Alloc))
