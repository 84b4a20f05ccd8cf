"""Specialize: cheaper or library-backed forms of common expressions.

``softmax(x) -> exp(log_softmax(x))`` where the log-softmax is computed anyway (a
cross-entropy and its gradient need both: one pass over the rows fewer, and the exp fuses
into the elementwise code that reads the softmax), ``x ** 2 -> square(x)`` and
``z + alpha * (x @ y)`` (also ``z - ...``, either operand order,
with or without a scale) ``-> gemm(z, alpha, x, y, 1)``, one BLAS call. The gemm rules fire
only when the product (and its scaling) is used nowhere else, or the matrix product would be
computed twice. ``max_pool2d_grad(x, g) * (x > 0) -> max_pool2d_grad(x, g, positive=True)``
(a ReLU's gradient through a max-pool) drops the input-sized mask.
``inc(Z, u, i) + inc(Z, v, j) -> inc(inc(Z, u, i), v, j)`` for one array of zeros Z (the
gradient of many picks ``x[i]``): one array increased in turn, which the in-place rule then
updates in its own buffer, instead of n arrays of zeros summed (O(n^2) for n picks).
"""

from __future__ import annotations

import numpy as np

from symnb.core.graph import OUTPUT
from symnb.core.variable import Constant
from symnb.ops import elemwise
from symnb.ops.blas import FLOATS, gemm
from symnb.ops.broadcast import is_filled
from symnb.ops.conv import MaxPool2dGrad
from symnb.ops.elemwise import Add, Greater, Mul, Pow, Sub, cast, neg
from symnb.ops.index import IncSubtensor
from symnb.ops.linalg import Matmul
from symnb.ops.math import square
from symnb.ops.nnet import LogSoftmax, Softmax
from symnb.opt.pattern import Const, Pattern
from symnb.opt.registry import rule
from symnb.opt.rules._util import does_not_stretch, fits, is_filled_with, only_user


@rule("specialize", Pattern(Softmax, "x"), ieee=False)
def softmax_from_log_softmax(m):
    """softmax(x) -> exp(log_softmax(x)) when log_softmax(x) (same axis) is in the graph

    Not IEEE-exact: on a row holding +inf softmax is NaN throughout, while exp(log_softmax)
    is 0 at the finite logits (log_softmax shifts an infinite max by 0, as SciPy's does);
    telling such rows apart would cost the pass this rule saves."""
    for client, _ in m.graph.clients.get(m.x, []):
        if client is OUTPUT or not isinstance(client.op, LogSoftmax):
            continue
        if client.op.axis == m.node.op.axis:
            new = elemwise.exp(client.out)
            return new if fits(m.out, new) else None
    return None


@rule(
    "specialize",
    Pattern(
        Mul,
        Pattern(MaxPool2dGrad, "x", "g", name="route"),
        Pattern(Greater, "x", Const("zero")),
        commutative=True,
    ),
)
def relu_mask_through_max_pool(m):
    """max_pool2d_grad(x, g) * (x > 0) -> max_pool2d_grad(x, g, positive=True)

    The gradient goes to each window's maximum, so x > 0 where it lands exactly when the
    window's maximum is: the max-pool gradient passes on only the windows whose maximum is
    above 0, which it finds anyway, and the input-sized mask disappears (a ReLU before a
    max-pool). Only where nothing else reads the routed gradient."""
    route = m.owner("route")
    if route.op.positive or not only_user(m.graph, route.out, m.node):
        return None
    if not (is_filled_with(m.zero, 0) and does_not_stretch(m.zero, m.x)):
        return None
    op = route.op
    new = MaxPool2dGrad(op.kernel, op.stride, op.padding, positive=True)(m.x, m.g)
    return new if fits(m.out, new) and new.type.shape == m.out.type.shape else None


@rule("specialize", Pattern(Pow, "x", Const("c")))
def pow_two_to_square(m):
    """x ** 2 -> square(x)"""
    if not (is_filled_with(m.c, 2) and does_not_stretch(m.c, m.x)):
        return None
    new = square(m.x)
    return new if fits(m.out, new) else None


@rule("specialize", Pattern(Add, "a", "b"))
def add_to_gemm(m):
    """z + alpha * (x @ y) -> gemm(z, alpha, x, y, 1)"""
    first = _gemm(m, m.a, m.b, 1)
    return first if first is not None else _gemm(m, m.b, m.a, 1)


@rule("specialize", Pattern(Add, "a", "b"))
def increments_of_one_zeros(m):
    """inc(Z, v, j) + inc(...inc(Z, u, i)..., w, k) -> inc(inc(...), v, j) where Z is
    zeros: both are Z with values added at indices, so the sum is Z with all of them added,
    in one array (exactly: each element is 0 plus its values, in the same order)."""
    for chain, single in ((m.a, m.b), (m.b, m.a)):
        zero = _zeros_under_increments(chain)
        step = single.owner
        if (
            zero is not None
            and step is not None
            and _increases(step)
            and step.inputs[0] is zero
            and chain.type == single.type == m.out.type
        ):
            return step.op(chain, *step.inputs[1:])
    return None


def _increases(node) -> bool:
    """An ``inc_subtensor`` (not a set, not already in place)."""
    return type(node.op) is IncSubtensor and not node.op.set_instead


def _zeros_under_increments(var):
    """The array of zeros ``var`` is, or increments (``inc_subtensor``) of in turn; None
    for anything else."""
    while var.owner is not None and _increases(var.owner):
        var = var.owner.inputs[0]
    return var if is_filled(var, 0) else None


@rule("specialize", Pattern(Sub, "a", "b"))
def sub_to_gemm(m):
    """z - alpha * (x @ y) -> gemm(z, -alpha, x, y, 1)"""
    return _gemm(m, m.a, m.b, -1)


def _gemm(m, z, term, sign):
    dtype = m.out.type.dtype
    found = _scaled_product(m.graph, term, m.node)
    if found is None or dtype.name not in FLOATS or z.type.dtype != dtype or z.type.ndim > 2:
        return None
    alpha, x, y = found
    if x.type.dtype != dtype or y.type.dtype != dtype:
        return None
    alpha = _scalar(alpha, dtype, sign)
    if alpha is None:
        return None
    new = gemm(z, alpha, x, y, Constant(np.ones((), dtype)))
    return new if fits(m.out, new) and new.type.shape == m.out.type.shape else None


def _scaled_product(graph, var, user):
    """(alpha, x, y) if var is ``x @ y`` or ``alpha * (x @ y)`` used only by ``user``."""
    if not only_user(graph, var, user) or var.owner is None:
        return None
    node = var.owner
    if isinstance(node.op, Matmul):
        return _matrix_pair(node, Constant(1.0, weak=True))
    if not isinstance(node.op, Mul):
        return None
    for scale, other in (node.inputs, node.inputs[::-1]):
        if scale.type.ndim == 0 and other.owner is not None and isinstance(other.owner.op, Matmul):
            if only_user(graph, other, node):
                return _matrix_pair(other.owner, scale)
    return None


def _matrix_pair(node, alpha):
    x, y = node.inputs
    return (alpha, x, y) if x.type.ndim == 2 and y.type.ndim == 2 else None


def _scalar(alpha, dtype, sign):
    """alpha (times sign) as a 0-d operand of ``dtype``; None if that would lose precision.

    Cast first, then negate, as the graph does: an int8 -128 negated in int8 stays -128, a
    uint8 cannot be negated at all."""
    if isinstance(alpha, Constant):
        value = np.asarray(alpha.value, dtype=dtype)
        return Constant(-value if sign < 0 else value)
    if not np.can_cast(alpha.type.dtype, dtype, "safe"):
        return None
    alpha = cast(alpha, dtype)
    return neg(alpha) if sign < 0 else alpha
