"""Specialize: the softmax cross-entropy with integer labels and its gradient as fused ops.

``crossentropy(softmax(x), labels)`` reaches this phase (after stabilize) as
``-log_softmax(x)[labels]``, and its gradient as ``h - softmax(x) * sum(h)`` with ``h`` the
one-hot scatter of the incoming gradient (``softmax`` may already read
``exp(log_softmax(x))``). The first becomes ``SoftmaxCrossEntropy`` (per-row losses and the
softmax), the second ``SoftmaxCrossEntropyGrad``, which reads that softmax: no one-hot array,
no gather, one exp per logit, one pass over the rows each way (Theano's
CrossentropySoftmaxArgmax1HotWithBias and its Dx op). The fused loss is log_softmax's also on
a row holding +inf (inf at a finite logit's label); the fused gradient is registered
``ieee=False`` (docs/rewrites.md).
"""

from __future__ import annotations

from symnb.core.graph import OUTPUT
from symnb.core.variable import Variable
from symnb.errors import DTypeError, ShapeError
from symnb.ops.broadcast import is_filled
from symnb.ops.checks import ClassLabels
from symnb.ops.elemwise import Exp, Mul, Neg, Sub, neg
from symnb.ops.nnet import LogSoftmax, Softmax, SoftmaxCrossEntropy, SoftmaxCrossEntropyGrad
from symnb.ops.reduce import Sum
from symnb.ops.shape import DimShuffle, squeeze
from symnb.ops.take import IncAlongAxis, TakeAlongAxis
from symnb.opt.pattern import Pattern
from symnb.opt.registry import rule
from symnb.opt.rules._util import fits

PICKED_LOG_SOFTMAX = Pattern(
    Neg, Pattern(DimShuffle, Pattern(TakeAlongAxis, Pattern(LogSoftmax, "x"), "index"))
)
SCATTERED_SOFTMAX_GRAD = Pattern(
    Sub, "h", Pattern(Mul, "sm", Pattern(Sum, "h", name="total"), commutative=True)
)


@rule("specialize", PICKED_LOG_SOFTMAX)
def softmax_crossentropy_fused(m):
    """-log_softmax(x)[labels] -> softmax_cross_entropy(x, labels) (integer labels)"""
    squeeze_node = m.node.inputs[0].owner
    take = squeeze_node.inputs[0].owner
    axis = take.op.axis
    if take.inputs[0].owner.op.axis != axis or not _drops_axis(squeeze_node.op, axis):
        return None
    labels = _labels(m.index, axis)
    if labels is None or m.x.type.dtype != m.out.type.dtype:
        return None
    new = _fused_outputs(m.graph, m.x, labels, axis, m.out.source)
    return new[0] if new is not None and fits(m.out, new[0]) else None


@rule("specialize", SCATTERED_SOFTMAX_GRAD, ieee=False)
def softmax_crossentropy_grad_fused(m):
    """h - softmax(x) * sum(h) with h = one_hot(labels) * g -> softmax_cross_entropy_grad
    (-g, softmax(x), labels), the softmax from softmax_cross_entropy(x, labels)

    Not IEEE-exact where ``sm`` is exp(log_softmax(x)): on a row holding +inf that is 0 at
    the finite logits, and the fused op's softmax NaN throughout (softmax's value, exact
    where ``sm`` is softmax(x)); one softmax per row cannot be both."""
    found = _softmax_of(m.sm)
    if found is None:
        return None
    x, axis = found
    total = m.total.owner.op
    scatter = m.h.owner
    if total.axis != (axis,) or not total.keepdims or not _scatters_into_zeros(scatter, axis):
        return None
    labels = _labels(scatter.inputs[1], axis)
    fused = None if labels is None else _fused_outputs(m.graph, x, labels, axis, None)
    if fused is None:
        return None
    try:
        dloss = _row_gradient(scatter.inputs[2], axis)
        new = SoftmaxCrossEntropyGrad(axis)(dloss, fused[1], labels)
    except (ShapeError, DTypeError):
        return None  # the scattered values do not have one value per row
    new.source = m.out.source
    return new if fits(m.out, new) else None


def _softmax_of(sm: Variable):
    """(x, axis) where sm is softmax(x) or exp(log_softmax(x)); None otherwise."""
    node, wanted = sm.owner, Softmax
    if node is not None and isinstance(node.op, Exp):
        node, wanted = node.inputs[0].owner, LogSoftmax
    if node is None or not isinstance(node.op, wanted):
        return None  # (log_softmax(x) itself is no softmax)
    return node.inputs[0], node.op.axis


def _scatters_into_zeros(node, axis: int) -> bool:
    """node is inc_along_axis(zeros, index, values) along ``axis``."""
    if node is None or not isinstance(node.op, IncAlongAxis) or node.op.axis != axis:
        return False
    return is_filled(node.inputs[0], 0)


def _labels(index: Variable, axis: int):
    """labels where index is ``expand_dims(labels, axis)`` with integer labels; else None.
    Labels that ``crossentropy`` checks to be class indices (``ClassLabels``) are read
    unchecked: the fused ops refuse a label outside [0, n) themselves."""
    node = index.owner
    if node is None or not isinstance(node.op, DimShuffle):
        return None
    labels = node.inputs[0]
    expand = list(range(labels.type.ndim))
    expand.insert(axis, "x")
    ok = node.op.order == tuple(expand) and labels.type.dtype.kind in "iu"
    checked = labels.owner
    if ok and checked is not None and isinstance(checked.op, ClassLabels):
        labels = checked.inputs[0]
    return labels if ok else None


def _drops_axis(op: DimShuffle, axis: int) -> bool:
    ndim = len(op.order) + 1
    return op.order == tuple(i for i in range(ndim) if i != axis)


def _row_gradient(values: Variable, axis: int) -> Variable:
    """The per-row loss gradient: minus the scattered values, without their length-1 axis."""
    node = values.owner
    if node is not None and isinstance(node.op, DimShuffle) and _expands_at(node, axis):
        values = node.inputs[0]
    else:
        values = squeeze(values, axis)
    if values.owner is not None and isinstance(values.owner.op, Neg):
        return values.owner.inputs[0]
    return neg(values)


def _expands_at(node, axis: int) -> bool:
    expand = list(range(node.inputs[0].type.ndim))
    expand.insert(axis, "x")
    return node.op.order == tuple(expand)


def _fused_outputs(graph, x: Variable, labels: Variable, axis: int, source):
    """[losses, softmax] of the fused op on (x, labels), reusing one already in the graph;
    None for logits the op does not take (integers). A new node keeps the user's line of the
    loss it replaces (``source``), which run-time errors (a bad label) quote."""
    op = SoftmaxCrossEntropy(axis)
    for client, _ in graph.clients.get(x, []):
        if client is not OUTPUT and client.op == op and client.inputs[1] is labels:
            if source is not None:
                client.outputs[0].source = client.outputs[1].source = source
            return client.outputs
    if x.type.dtype.kind != "f":
        return None
    outputs = op(x, labels)
    for var in outputs:
        var.source = source
    return outputs
