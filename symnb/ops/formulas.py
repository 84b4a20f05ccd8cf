"""Formulas courses write by hand, recognised as the stable op they spell out.

``log(1 + exp(x))`` is softplus, ``exp(u) / sum(exp(u), axis, keepdims=True)`` is softmax and
``log(sum(exp(x)))`` is logsumexp; written out, each overflows where the op does not (exp of
89 is inf in float32), and so does its gradient. ``log(sigmoid(x))`` is ``-softplus(-x)`` and
``log(softmax(x)[i])`` is ``log_softmax(x)[i]``: their gradients divide by a probability that
underflows to 0; the stabilize rules remove that division from a first gradient only.

A recogniser returns a ``Formula``: the variable the op reads, a function that builds the op,
and the formula's own variables (its result included). The gradient (symnb/grad/formulas.py)
differentiates the op instead of the formula, and the stabilize rules
(symnb/opt/rules/handwritten.py) compute it as the op.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from symnb.core.variable import Variable
from symnb.errors import DTypeError
from symnb.ops.broadcast import Sum
from symnb.ops.elemwise import (
    Add,
    Exp,
    Log,
    Neg,
    Sigmoid,
    Sub,
    TrueDiv,
    _all_ones,
    logistic_formula,
    neg,
    sigmoid,
)
from symnb.ops.index import AdvancedSubtensor, Subtensor
from symnb.ops.layout import Flatten, Flip, Repeat, Roll, Tile
from symnb.ops.math import Log1p, softplus
from symnb.ops.nnet import LogSoftmax, Softmax
from symnb.ops.reduce import Logsumexp
from symnb.ops.shape import DimShuffle, Reshape
from symnb.ops.take import TakeAlongAxis

#: ops that only pick, move or copy elements, so log(select(p)) == select(log(p)):
#: transposes and new or dropped axes, reshapes (``p.reshape((-1, 1))``, ``p.ravel()``),
#: indexing, flips, rolls, repeats and tiles
SELECTIONS = (DimShuffle, Reshape, Flatten, TakeAlongAxis, Subtensor, AdvancedSubtensor)
SELECTIONS += (Flip, Roll, Repeat, Tile)


class Formula(NamedTuple):
    """``build(x)`` computes the formula's value stably; ``parts`` are its own variables."""

    x: Variable
    build: Callable
    parts: tuple


def _node(var, op_class):
    node = var.owner
    return node if node is not None and isinstance(node.op, op_class) else None


def _checked(var: Variable, formula: Formula) -> Formula | None:
    """The formula if the op gives the formula's type (dtype and shape); else None, also
    where the op refuses the dtype the formula computes in (softplus of complex values)."""
    if not var.type.is_float:
        return None
    try:
        built = formula.build(formula.x)
    except DTypeError:
        return None
    return formula if built.type == var.type else None


def logistic(var: Variable) -> Formula | None:
    """``1 / (1 + exp(-x))`` is ``sigmoid(x)``; ``1 / (1 + exp(u))`` of any other u is
    ``sigmoid(-u)``, computed from u."""
    found = logistic_formula(var)
    if found is None:
        return None
    total = var.owner.inputs[1]
    e = next(v for v in total.owner.inputs if v.owner is not None)
    u = e.owner.inputs[0]
    if _node(u, Neg) is not None:  # sigmoid(x) skips the -x: one of the formula's own
        return Formula(found[0], sigmoid, (var, total, e, u))
    return Formula(u, _sigmoid_of_minus, (var, total, e))


def softplus_formula(var: Variable) -> Formula | None:
    """``log(1 + exp(x))``, ``log(exp(x) + 1)`` and ``log1p(exp(x))`` are ``softplus(x)``."""
    node = _node(var, (Log, Log1p))
    if node is None:
        return None
    inner = node.inputs[0]
    if isinstance(node.op, Log):
        total = _node(inner, Add)
        if total is None:
            return None
        a, b = total.inputs
        inner = b if _all_ones(a) else a if _all_ones(b) else None
        if inner is None:
            return None
    e = _node(inner, Exp)
    if e is None:
        return None
    parts = (var, node.inputs[0], inner)
    return _checked(var, Formula(e.inputs[0], softplus, parts))


def softmax_formula(var: Variable) -> Formula | None:
    """``exp(u) / sum(exp(u), axis=a, keepdims=True)`` is ``softmax(u, a)``; the sum may also
    be brought back to u's rank by a dimshuffle (``s[:, None]``, ``s.dimshuffle(0, "x")``) or a
    reshape (``s.reshape((-1, 1))``) that puts its length-1 axis at ``a``. With u = ``x -
    max(x, a)`` (the shift course code writes) it is softmax(u), which equals softmax(x)."""
    node = _node(var, TrueDiv)
    if node is None:
        return None
    e, d = node.inputs
    if _node(e, Exp) is None or e.type.ndim == 0:
        return None
    found = _restored_sum(d, e.type.ndim)
    if found is None:
        return None
    total, axis = found
    if not _same_exp(total.owner.inputs[0], e):
        return None
    parts = (var, d, total, total.owner.inputs[0], e)
    return _checked(var, Formula(e.owner.inputs[0], Softmax(axis), parts))


def logsumexp_formula(var: Variable) -> Formula | None:
    """``log(sum(exp(x), axis))`` is ``logsumexp(x, axis)`` (keepdims as the sum's)."""
    node = _node(var, Log)
    total = None if node is None else _node(node.inputs[0], Sum)
    e = None if total is None else _node(total.inputs[0], Exp)
    if e is None:
        return None
    op = Logsumexp(total.op.axis, total.op.keepdims)
    return _checked(var, Formula(e.inputs[0], op, (var, node.inputs[0], total.inputs[0])))


def log_sigmoid_formula(var: Variable) -> Formula | None:
    """``log(sigmoid(x))`` is ``-softplus(-x)``; ``log(1 - sigmoid(x))`` and
    ``log1p(-sigmoid(x))`` are ``-softplus(x)`` (a binary cross-entropy's two halves); also
    with ops that only pick or move elements (SELECTIONS) around the sigmoid or the ``1 -``:
    ``log(1 - sigmoid(x).reshape((-1, 1)))`` is ``(-softplus(x)).reshape((-1, 1))``."""
    found = log_sigmoid_match(var, lambda one, _: _all_ones(one))
    return None if found is None else _checked(var, found[1])


def log_sigmoid_match(var: Variable, is_one: Callable) -> tuple[str, Formula] | None:
    """``(kind, formula)`` where var is a log of a sigmoid, kind ``"log"`` (``log(s)``),
    ``"log1m"`` (``log(1 - s)``, ``is_one(c, picked)`` telling the 1) or ``"log1p"``
    (``log1p(-s)``), selections allowed outside and inside the ``1 -``; the formula unchecked
    (the rules check the type their own way)."""
    node = _node(var, (Log, Log1p))
    if node is None:
        return None
    outer, inner = through_selections(node.inputs[0])
    s = _node(inner, Sigmoid)
    if s is not None and isinstance(node.op, Log):
        build = _reselected(_minus_softplus_of_minus, outer)
        return "log", Formula(s.inputs[0], build, (var, *_outputs(outer), inner))
    if isinstance(node.op, Log):
        kind, minus = "log1m", _node(inner, Sub)
        if minus is None:
            return None
        ones, picked = minus.inputs
        if not is_one(ones, picked):
            return None
    else:
        kind, minus = "log1p", _node(inner, Neg)
        picked = None if minus is None else minus.inputs[0]
    if picked is None:
        return None
    chain, sig = through_selections(picked)
    s = _node(sig, Sigmoid)
    if s is None:
        return None
    build = _reselected(_reselected(_minus_softplus, chain), outer)
    parts = (var, *_outputs(outer), inner, *_outputs(chain), sig)
    return kind, Formula(s.inputs[0], build, parts)


def through_selections(var: Variable) -> tuple[list, Variable]:
    """``(chain, source)``: the SELECTIONS nodes var is made by, outermost first, and the
    variable they pick from (var itself and ``[]`` where none)."""
    chain = []
    while var.owner is not None and isinstance(var.owner.op, SELECTIONS):
        chain.append(var.owner)
        var = var.owner.inputs[0]
    return chain, var


def reselect(new: Variable, chain: list) -> Variable:
    """``new`` picked and moved as the ``chain`` of ``through_selections`` picked its
    source (the same ops, with the same indices and sizes)."""
    for step in reversed(chain):
        new = step.op(new, *step.inputs[1:])
    return new


def _reselected(build: Callable, chain: list) -> Callable:
    return build if not chain else lambda x: reselect(build(x), chain)


def _outputs(chain: list) -> list:
    return [step.outputs[0] for step in chain]


def _sigmoid_of_minus(u: Variable) -> Variable:
    return sigmoid(neg(u))


def _minus_softplus_of_minus(x: Variable) -> Variable:
    return neg(softplus(neg(x)))


def _minus_softplus(x: Variable) -> Variable:
    return neg(softplus(x))


def log_softmax_formula(var: Variable) -> Formula | None:
    """``log(select(softmax(x)))`` is ``select(log_softmax(x))`` for ops that only pick or
    move elements (SELECTIONS): a cross-entropy of a softmax, however it picks the labels."""
    node = _node(var, Log)
    if node is None:
        return None
    chain, p = through_selections(node.inputs[0])
    soft = _node(p, Softmax)
    if soft is None:
        return None
    build = _reselected(LogSoftmax(soft.op.axis), chain)
    parts = (var, p, *_outputs(chain))
    return _checked(var, Formula(soft.inputs[0], build, parts))


#: every recogniser, tried in this order
RECOGNISERS = (
    logistic,
    softplus_formula,
    softmax_formula,
    logsumexp_formula,
    log_sigmoid_formula,
    log_softmax_formula,
)


def stable_formula(var: Variable) -> Formula | None:
    """The first formula ``var`` is the result of, or None."""
    for recognise in RECOGNISERS:
        found = recognise(var)
        if found is not None:
            return found
    return None


def _same_exp(a: Variable, b: Variable) -> bool:
    """The same variable, or two exp nodes of the same input (before merging)."""
    if a is b:
        return True
    na, nb = _node(a, Exp), _node(b, Exp)
    return na is not None and nb is not None and na.inputs[0] is nb.inputs[0]


def _restored_sum(d: Variable, ndim: int):
    """(sum variable, a) when d is a sum over the single axis a of a rank-``ndim`` tensor,
    kept as a length-1 axis at a or put back there; else None."""
    total = _node(d, Sum)
    if total is not None:
        axis = total.op.axis
        ok = total.op.keepdims and len(axis) == 1 and d.type.ndim == ndim
        return (d, axis[0]) if ok else None
    back = d.owner
    if back is None or not isinstance(back.op, PUT_BACK) or d.type.ndim != ndim:
        return None
    source = back.inputs[0]
    total = _node(source, Sum)
    if total is None or total.op.keepdims or len(total.op.axis) != 1:
        return None
    axis = total.op.axis[0]
    if isinstance(back.op, DimShuffle):
        expected = tuple(range(ndim - 1))
        ok = back.op.order == expected[:axis] + ("x",) + expected[axis:]
    elif isinstance(back.op, Subtensor):
        ok = len(back.inputs) == 1 and _new_axis_at(back.op.spec) == axis
    else:
        ok = _inserts_axis(source.type.shape, d.type.shape, axis)
    return (source, axis) if ok else None


#: the ops that put a summed axis back: ``s.dimshuffle(0, "x")``, ``s[:, None]``, a reshape
PUT_BACK = (DimShuffle, Subtensor, Reshape)
FULL_SLICE = ("slice", None, None, None)


def _new_axis_at(spec: tuple) -> int | None:
    """Where ``x[spec]`` inserts its one new axis when it only inserts one; else None."""
    if sum(1 for s in spec if s == ("new",)) != 1:
        return None
    if not all(s in (("new",), FULL_SLICE) for s in spec):
        return None
    return spec.index(("new",))


def _inserts_axis(kept: tuple, shape: tuple, axis: int) -> bool:
    """A reshape from ``kept`` to ``shape`` only inserts a length-1 axis at ``axis``: shape
    has 1 there and, without it, kept's dims, all known but at most one."""
    if shape[axis] != 1:
        return False
    rest = shape[:axis] + shape[axis + 1 :]
    unknown = sum(1 for d in rest if d is None)
    return unknown <= 1 and all(r is None or r == k for r, k in zip(rest, kept, strict=True))
