"""Stabilize: forms that stay finite and accurate where the naive graph over/underflows.

``log(1 + x) -> log1p(x)``, ``exp(x) - 1 -> expm1(x)``, ``log(softmax(x)) -> log_softmax(x)``
(also through the indexing a cross-entropy does between them, so ``crossentropy(softmax(x),
y)`` becomes ``-log_softmax(x)[y]``), ``1 / (1 + exp(-x)) -> sigmoid(x)``, ``log(sigmoid(x))
-> -softplus(-x)``, ``log(1 - sigmoid(x))`` and ``log1p(-sigmoid(x)) -> -softplus(x)`` (these
and the log of a softmax also through the other ops that only pick, move or copy elements:
``log(1 - sigmoid(x).reshape(s)) -> (-softplus(x)).reshape(s)``) and ``log(sum(exp(x))) ->
logsumexp(x)``; and, in the gradient ``sn.grad`` built of a
cross-entropy of a softmax, ``softmax(x) * (h / softmax(x) - ...)`` loses the division by a
probability that may underflow to 0. They fire on floating-point values only: on integers
``1 + x`` may wrap around, which log1p would not reproduce. ``log1p``, ``expm1``, the log of a
softmax and the softplus forms fire on real floats only: for complex values ``1 + x`` turns an
imaginary part of -0.0 into +0.0, which moves log across its branch cut (``log(1 + (-2-0j))``
is ``+pi*j``, ``log1p(-2-0j)`` is ``-pi*j``), ``exp(inf+0j) - 1`` is ``inf+0j`` where
``expm1`` gives ``inf+nanj``, and ``log_softmax(z)`` (``z - logsumexp(z)``) keeps the
imaginary parts that ``log`` wraps into (-pi, pi]. ``log(sum(exp(x)))`` -> ``logsumexp(x)``
holds for complex values too (logsumexp takes the principal log of the sum).
"""

from __future__ import annotations

from symnb.ops.broadcast import Alloc, SumToLike, zeros_like
from symnb.ops.elemwise import (
    Add,
    Exp,
    Log,
    Mul,
    Neg,
    Sigmoid,
    Sub,
    TrueDiv,
    logistic_formula,
    neg,
)
from symnb.ops.formulas import log_sigmoid_match, reselect, through_selections
from symnb.ops.math import Log1p, expm1, log1p
from symnb.ops.nnet import LogSoftmax, Softmax
from symnb.ops.reduce import Logsumexp, Sum
from symnb.ops.shape import DimShuffle, Shape
from symnb.ops.take import IncAlongAxis, TakeAlongAxis
from symnb.opt.pattern import Const, Pattern
from symnb.opt.registry import rule
from symnb.opt.rules._util import does_not_stretch, fits, is_filled_with, shape_source


def _float_fit(m, new):
    """``new`` for a real or complex float x (the rules for real floats only check that
    first: see the module doc)."""
    return new if m.x.type.is_float and fits(m.out, new) else None


@rule("stabilize", Pattern(Log, Pattern(Add, "x", Const("one"), commutative=True)))
def log1p_of_sum(m):
    """log(1 + x) -> log1p(x)"""
    one = is_filled_with(m.one, 1) and does_not_stretch(m.one, m.x)
    if not (one and m.x.type.is_real_float):  # (complex: see the module doc)
        return None
    return _float_fit(m, log1p(m.x))


@rule("stabilize", Pattern(Sub, Pattern(Exp, "x"), Const("one")))
def expm1_of_exp(m):
    """exp(x) - 1 -> expm1(x)"""
    one = is_filled_with(m.one, 1) and does_not_stretch(m.one, m.x)
    if not (one and m.x.type.is_real_float):  # (complex: see the module doc)
        return None
    return _float_fit(m, expm1(m.x))


@rule("stabilize", Pattern(TrueDiv, Const("one"), "d"))
def sigmoid_of_formula(m):
    """1 / (1 + exp(-x)) -> sigmoid(x): the formula written out (and its cross-entropy)
    gets sigmoid's finite forms below; its gradient was taken through sigmoid
    (symnb/grad/formulas.py)."""
    found = logistic_formula(m.out)
    return None if found is None else found[1]


def _log_sigmoid_as(m, kind: str):
    """The ``-softplus`` form of the log of a sigmoid of ``kind`` that m.out is (also
    through ops that only pick or move elements, ``symnb/ops/formulas.py``); for real
    floats only: softplus refuses complex values, for which it is computed as written."""
    found = log_sigmoid_match(m.out, _is_one)
    if found is None or found[0] != kind or not found[1].x.type.is_real_float:
        return None
    new = found[1].build(found[1].x)
    return new if fits(m.out, new) else None


def _is_one(one, picked) -> bool:
    return is_filled_with(one, 1) and does_not_stretch(one, picked)


@rule("stabilize", Pattern(Log, "p"))
def log_sigmoid(m):
    """log(sigmoid(x)) -> -softplus(-x), also through ops that only pick or move elements
    (a reshape, a transpose, indexing): log(sigmoid(x).T) -> (-softplus(-x)).T"""
    return _log_sigmoid_as(m, "log")


@rule("stabilize", Pattern(Log, "p"))
def log_one_minus_sigmoid(m):
    """log(1 - sigmoid(x)) -> -softplus(x): the second half of a binary cross-entropy, which
    is log(0) = -inf once sigmoid(x) rounds to 1 (x > 17 in float32); also through ops that
    only pick or move elements: log(1 - sigmoid(x).reshape(s)) -> (-softplus(x)).reshape(s)."""
    return _log_sigmoid_as(m, "log1m")


@rule("stabilize", Pattern(Log1p, "p"))
def log1p_of_minus_sigmoid(m):
    """log1p(-sigmoid(x)) -> -softplus(x) (also through ops that only pick or move elements)"""
    return _log_sigmoid_as(m, "log1p")


@rule("stabilize", Pattern(Log, Pattern(Sum, Pattern(Exp, "x"), name="total")))
def logsumexp_of_exp(m):
    """log(sum(exp(x), axis)) -> logsumexp(x, axis)"""
    reduce = m.total.owner.op
    return _float_fit(m, Logsumexp(reduce.axis, reduce.keepdims)(m.x))


@rule("stabilize", Pattern(Log, "p"))
def log_softmax_of_softmax(m):
    """log(softmax(x)) -> log_softmax(x), also through indexing and the other ops that only
    pick or move elements: log(softmax(x)[i]) -> log_softmax(x)[i] (the cross-entropy of a
    softmax), log(softmax(x).reshape(s)) -> log_softmax(x).reshape(s)."""
    chain, var = through_selections(m.p)
    if var.owner is None or not isinstance(var.owner.op, Softmax):
        return None
    if not m.out.type.is_real_float:  # (complex: see the module doc)
        return None
    new = reselect(LogSoftmax(var.owner.op.axis)(var.owner.inputs[0]), chain)
    return new if fits(m.out, new) else None


SIGMOID_GRAD = Pattern(
    Mul,
    Pattern(Mul, "q", Pattern(Sigmoid, "z", name="s"), commutative=True),
    Pattern(Sub, Const("one"), "s", name="u"),
    commutative=True,
)


@rule("stabilize", SIGMOID_GRAD)
def sigmoid_grad_without_division(m):
    """q * s * (1 - s) with q = h / s or h / (1 - s) (through neg, sums and sum_to_like)
    -> h * (1 - s) or h * s, where s = sigmoid(z): the gradient of log(sigmoid(z)) and of
    log(1 - sigmoid(z)) (a binary cross-entropy) stays finite where s rounds to 0 or 1."""
    if not (is_filled_with(m.one, 1) and does_not_stretch(m.one, m.s)):
        return None
    new = _times_sigmoid_grad(m.q, m.s, m.u)
    return new if new is not None and fits(m.out, new) else None


def _times_sigmoid_grad(q, s, u):
    """q * s * u with the division by s or u inside q cancelled; None when there is none."""
    node = q.owner
    if node is None:
        return None
    op, args = node.op, node.inputs
    if isinstance(op, TrueDiv) and args[1] is s:
        return args[0] * u
    if isinstance(op, TrueDiv) and _is_one_minus(args[1], s, u):
        return args[0] * s
    if isinstance(op, Neg):
        inner = _times_sigmoid_grad(args[0], s, u)
        return None if inner is None else neg(inner)
    if isinstance(op, SumToLike) and shape_source(args[1]) is shape_source(s):
        # s and u have like's shape (like is s, or what s's shape is read off): they commute
        inner = _times_sigmoid_grad(args[0], s, u)
        return None if inner is None else op(inner, s)
    if isinstance(op, (Add, Sub)):
        parts = [_times_sigmoid_grad(a, s, u) for a in args]
        if all(p is None for p in parts):
            return None
        a, b = (a * s * u if p is None else p for a, p in zip(args, parts))
        return a + b if isinstance(op, Add) else a - b
    return None


def _is_one_minus(d, s, u) -> bool:
    """d is 1 - s: u itself, or 1 + (-s) (the divisor in the gradient of log1p(-s))."""
    node = d.owner
    if d is u or node is None or not isinstance(node.op, Add):
        return d is u
    for one, other in (node.inputs, node.inputs[::-1]):
        minus = other.owner
        if minus is not None and isinstance(minus.op, Neg) and minus.inputs[0] is s:
            return is_filled_with(one, 1) and does_not_stretch(one, s)
    return False


SOFTMAX_GRAD = Pattern(
    Mul,
    "sm",
    Pattern(Sub, "g", Pattern(Sum, Pattern(Mul, "g", "sm", commutative=True), name="total")),
    commutative=True,
)


@rule("stabilize", SOFTMAX_GRAD)
def softmax_grad_without_division(m):
    """sm * (g - sum(g * sm)) with g = h / sm (h scattered or not) -> h - sm * sum(h), where
    sm = softmax(x): the gradient of a cross-entropy stays finite where sm underflows."""
    softmax, total = m.sm.owner, m.total.owner
    if softmax is None or not isinstance(softmax.op, Softmax):
        return None
    axis = softmax.op.axis
    if total.op.axis != (axis,) or not total.op.keepdims:
        return None
    h = _undivided(m.g, m.sm, axis)
    if h is not None and not _as_wide_as(h, m.sm):
        # sum(g * sm) sums h as broadcast against sm: h (n, 1) with sm (n, k) counts k times
        h = h + zeros_like(m.sm)
    if h is None:
        return None
    new = h - m.sm * Sum((axis,), True)(h)
    return new if fits(m.out, new) else None


def _as_wide_as(h, sm) -> bool:
    """Every dim of sm is provably one of h's (at the same place from the end): broadcasting
    h against sm cannot repeat it (when unsure, the rule broadcasts h first)."""
    if h.type.ndim < sm.type.ndim:
        return False
    if _scattered_into_shape_of(h, sm):
        return True
    return all(d is not None and d == e for d, e in zip(h.type.shape[::-1], sm.type.shape[::-1]))


def _scattered_into_shape_of(h, sm) -> bool:
    """h is scattered into ``alloc(value, shape(sm))`` (the gradient of a cross-entropy
    picking from sm): it has sm's run-time shape even where a dim is unknown."""
    node = h.owner
    if node is None or not isinstance(node.op, IncAlongAxis) or h.type.ndim != sm.type.ndim:
        return False
    alloc = node.inputs[0].owner
    if alloc is None or not isinstance(alloc.op, Alloc):
        return False
    shape = alloc.inputs[1].owner
    return shape is not None and isinstance(shape.op, Shape) and shape.inputs[0] is sm


def _undivided(g, sm, axis):
    """h where g is ``h / sm``, or h scattered where g scatters ``h / sm`` picked at the same
    indices (the gradient of ``log(take_along_axis(sm, i))``); None otherwise."""
    node = g.owner
    if node is None:
        return None
    if isinstance(node.op, TrueDiv) and node.inputs[1] is sm:
        return node.inputs[0]
    if not (isinstance(node.op, IncAlongAxis) and node.op.axis == axis):
        return None
    base, indices, value = node.inputs
    spread = value.owner
    if spread is None or not isinstance(spread.op, DimShuffle):
        return None
    quotient = spread.inputs[0].owner
    if quotient is None or not isinstance(quotient.op, TrueDiv):
        return None
    if not _picks(quotient.inputs[1], sm, indices, axis):
        return None
    return IncAlongAxis(axis)(base, indices, spread.op(quotient.inputs[0]))


def _picks(var, sm, indices, axis) -> bool:
    """var is ``take_along_axis(sm, indices, axis)``, possibly reshaped by a dimshuffle."""
    node = var.owner
    if node is not None and isinstance(node.op, DimShuffle):
        node = node.inputs[0].owner
    return (
        node is not None
        and isinstance(node.op, TakeAlongAxis)
        and node.op.axis == axis
        and node.inputs[0] is sm
        and node.inputs[1] is indices
    )
