"""Canonicalize shapes: chains of transposes/reshapes become one, no-ops disappear, the
shape of a tensor whose dims are all known becomes a constant, a slice of an elementwise op
of one input slices the input instead (so only the slice is computed), and an op that reads
only the shape of a value (``broadcast_like``, ``sum_to_like``, ``reshape_like``, which
gradients build) reads it off an input of that value's elementwise op that has its shape, so
the value need not be computed for its shape alone."""

from __future__ import annotations

import numpy as np

from symnb.core.dims import exact_div, is_known, product, sub
from symnb.core.graph import OUTPUT
from symnb.core.variable import Constant
from symnb.errors import ShapeError
from symnb.ops.broadcast import Alloc, BroadcastLike, SumToLike
from symnb.ops.elemwise import Elemwise
from symnb.ops.index import Subtensor
from symnb.ops.shape import (
    DimShuffle,
    ReducedSize,
    Reshape,
    ReshapeLike,
    Shape,
    _LikeOp,
    axis_size,
)
from symnb.opt.pattern import Pattern
from symnb.opt.registry import rule
from symnb.opt.rules._util import computed_shape, fits, only_user, same_static_shape, shape_source


@rule("canonicalize", Pattern(DimShuffle, Pattern(DimShuffle, "x", name="inner")))
def dimshuffle_chain(m):
    """dimshuffle(dimshuffle(x)) -> one dimshuffle (or x when the two cancel)."""
    inner = m.inner.owner.op.order
    order = tuple("x" if a == "x" else inner[a] for a in m.node.op.order)
    if order == tuple(range(m.x.type.ndim)):
        return m.x if fits(m.out, m.x) else None
    new = DimShuffle(order)(m.x)
    return new if fits(m.out, new) else None


@rule("canonicalize", Pattern(DimShuffle, "x"))
def dimshuffle_identity(m):
    """A dimshuffle that keeps every axis in place -> x"""
    return m.x if m.node.op.order == tuple(range(m.x.type.ndim)) else None


@rule("canonicalize", Pattern(Reshape, Pattern(Reshape, "x", name="inner")))
def reshape_chain(m):
    """reshape(reshape(x, a), b) -> reshape(x, b), when b's named dims are x's dims and the
    reshape dropped cannot fail for any x: a's size is x's (a -1 in a: x's size divides by
    the rest of a) whatever x's dims are, so no input that raises as written is accepted."""
    if not _never_fails(m.node.inputs[0].owner):
        return None
    names = {d: i for i, d in reversed(list(enumerate(m.x.type.shape))) if isinstance(d, str)}
    target = m.node.op.target
    if any(isinstance(d, str) and d not in names for d in target):
        return None
    new = Reshape(target, tuple((d, names[d]) for d in target if d in names))(m.x)
    return new if fits(m.out, new) else None


def _never_fails(node) -> bool:
    """The reshape ``node`` succeeds for every value of its input's dims (an unknown dim is a
    name private to its axis, ``axis_size``): its target's size is provably the input's."""
    x, *sizes = node.inputs
    target = node.op._static_target(x, sizes)
    total = product(axis_size(x, k) for k in range(x.type.ndim))
    known = product(d for d in target if d != -1)
    if total is None or known is None:
        return False
    if -1 in target:
        return exact_div(total, known) is not None
    return sub(total, known) == 0


@rule("canonicalize", Pattern(Reshape, "x"))
def reshape_noop(m):
    """reshape(x, s) -> x when x already has the known shape s"""
    return m.x if same_static_shape(m.x, m.out) else None


@rule("canonicalize", Pattern(Shape, "x"))
def shape_of_known(m):
    """shape(x) -> a constant when every dim of x is a known int"""
    dims = m.x.type.shape
    if not all(is_known(d) for d in dims):
        return None
    return Constant(np.array(dims, dtype=np.int64))


#: ops whose second input gives only its shape (the sort adjoints, also ``_LikeOp``s, read
#: its order too)
READS_ONLY_THE_SHAPE = (BroadcastLike, SumToLike, ReshapeLike)


@rule("inplace", Pattern(_LikeOp, "g", "like"))
def shape_read_off_an_input(m):
    """op(g, f(a, c...)) -> op(g, a) for an op reading only like's shape, f elementwise, a
    of f's result's shape (every other operand's dims are 1s), and like read by nothing but
    such ops: the gradient of ``sum(square(W[idx]))`` computed the square only to learn its
    shape. A like computed anyway is left: its shape costs nothing. It runs in the last
    phase, when the graph is settled (earlier, a like that a later rule makes the fused
    cross-entropy's output looked dead, and reading another value kept a forward pass
    alive)."""
    if not isinstance(m.node.op, READS_ONLY_THE_SHAPE) or not _read_for_its_shape(m.graph, m.like):
        return None  # computed anyway (an output, or read as a value): its shape is free
    like = shape_source(m.like)
    return None if like is m.like else m.node.op(m.g, like)


def _read_for_its_shape(graph, var) -> bool:
    """Nothing reads ``var`` but ops reading its shape (as their like, or ``Shape``), and it
    is no output."""
    return all(
        user != OUTPUT
        and (isinstance(user.op, READS_ONLY_THE_SHAPE) and i == 1 or isinstance(user.op, Shape))
        for user, i in graph.clients.get(var, [])
    )


@rule("inplace", Pattern(_LikeOp, "g", "like"))
def shape_computed_from_inputs(m):
    """op(g, like) for an op reading only like's shape, like computed by an op that says its
    result's shape from its inputs' (``result_shape``: a matmul, a tensordot, a reduction,
    a transpose of one) and read by nothing but such ops: the shape is computed from the
    inputs' (``ResultShape``), and like is not: ``broadcast_like(g, like)`` becomes
    ``alloc(g, shape)``, ``reshape_like`` a reshape to the shape's entries, and
    ``sum_to_like`` is g where g is a ``broadcast_like`` to like or an ``alloc`` to that
    shape (or an elementwise op of one), else reads an int8 ``alloc`` of the shape (zero
    strides on a device). The gradient of ``sum(A @ B)`` with respect to A computed
    ``A @ B`` for its shape alone. Last phase, as ``shape_read_off_an_input``, which takes
    an elementwise like first."""
    op = m.node.op
    if not isinstance(op, READS_ONLY_THE_SHAPE) or not _read_for_its_shape(m.graph, m.like):
        return None
    if shape_source(m.like) is not m.like:
        return None  # shape_read_off_an_input's
    vector = computed_shape(m.graph, m.like)
    if vector is None:
        return None
    dims = m.like.type.shape
    if isinstance(op, SumToLike) and _shaped_as(shape_source(m.g), m.like, vector):
        return m.g if fits(m.out, m.g) else None  # g has like's shape: nothing to sum
    try:
        if isinstance(op, BroadcastLike):
            new = Alloc(dims)(m.g, vector)
        elif isinstance(op, ReshapeLike):
            new = Reshape((None,) * len(dims))(m.g, *(vector[k] for k in range(len(dims))))
        else:
            new = op(m.g, Alloc(dims)(Constant(np.int8(0)), vector))
    except ShapeError:  # (g does not fit what the types say of like)
        return None
    return new if fits(m.out, new) else None


def _shaped_as(var, like, vector) -> bool:
    """var is a ``broadcast_like`` to like, or an ``alloc`` to the shape vector."""
    node = var.owner
    if node is None or not isinstance(node.op, (BroadcastLike, Alloc)):
        return False
    return node.inputs[1] is (like if isinstance(node.op, BroadcastLike) else vector)


@rule("inplace", Pattern(Shape, "x"))
def shape_of_a_shape_read_value(m):
    """shape(x) -> its value computed from the shapes of x's op's inputs (as
    ``shape_computed_from_inputs``) or read off an elementwise op's operand (as
    ``shape_read_off_an_input``), where nothing reads x but ops reading its shape."""
    if not _read_for_its_shape(m.graph, m.x):
        return None
    source = shape_source(m.x)
    if source is not m.x:
        return Shape()(source)
    return computed_shape(m.graph, m.x)


@rule("canonicalize", Pattern(ReducedSize, "x"))
def reduced_size_of_known(m):
    """The element count over axes whose dims are known -> a constant"""
    dims = [m.x.type.shape[a] for a in m.node.op.axis]
    if not all(is_known(d) for d in dims):
        return None
    return Constant(np.array(int(np.prod(dims)), dtype=np.int64))


@rule("canonicalize", Pattern(Subtensor))
def subtensor_of_elemwise(m):
    """f(x)[index] -> f(x[index]) for an elementwise f of one input that nothing else reads:
    Theano's tutorials cast a whole shared label set (``T.cast(y, "int32")``) and slice a
    minibatch of it on every call"""
    inner = m.node.inputs[0].owner
    if inner is None or not isinstance(inner.op, Elemwise) or len(inner.inputs) != 1:
        return None
    if not only_user(m.graph, m.node.inputs[0], m.node):
        return None
    sliced = Subtensor(m.node.op.spec)(inner.inputs[0], *m.node.inputs[1:])
    new = inner.op(sliced)
    sliced.source = new.source = m.out.source
    return new if fits(m.out, new) else None
