"""Stabilize: formulas written by hand become the op they spell out.

``log1p(exp(x))`` (what ``log(1 + exp(x))`` becomes in ``log1p_of_sum``) -> ``softplus(x)``,
and ``exp(u) / sum(exp(u), a, keepdims=True)`` (or the sum put back at axis a by a dimshuffle
or reshape) -> ``softmax(u, a)``, which the rules of stabilize.py then take further
(``log(softmax(u)) -> log_softmax(u)``). ``log(sum(exp(x)))`` is ``logsumexp_of_exp`` there.
symnb/ops/formulas.py recognises the formulas, for these rules and for the gradient.

A rule keeps the graph as written when one of the formula's intermediate values (the exp, the
sum) is also used outside the formula: that use overflows anyway, and the op would compute the
exponentials a second time.
"""

from __future__ import annotations

from symnb.core.graph import OUTPUT
from symnb.ops.elemwise import Exp, TrueDiv
from symnb.ops.formulas import Formula, softmax_formula, softplus_formula
from symnb.ops.math import Log1p
from symnb.opt.pattern import Pattern
from symnb.opt.registry import rule
from symnb.opt.rules._util import fits


def _as_op(m, found: Formula | None):
    """The op's result for the matched formula, or None (no formula, or a part used
    elsewhere)."""
    if found is None or not _used_only_inside(m.graph, found.parts):
        return None
    new = found.build(found.x)
    return new if fits(m.out, new) else None


def _used_only_inside(graph, parts: tuple) -> bool:
    """Every intermediate of the formula (all parts but its result) is read only by parts."""
    inside = {id(v) for v in parts}
    for var in parts[1:]:
        for client, _ in graph.clients.get(var, []):
            if client is OUTPUT or not any(id(o) in inside for o in client.outputs):
                return False
    return True


@rule("stabilize", Pattern(Log1p, Pattern(Exp, "x")))
def softplus_of_formula(m):
    """log1p(exp(x)) -> softplus(x): log(1 + exp(x)) is inf once exp(x) overflows (x > 88 in
    float32), softplus(x) is x there."""
    return _as_op(m, softplus_formula(m.out))


@rule("stabilize", Pattern(TrueDiv, Pattern(Exp, "u"), "d"))
def softmax_of_formula(m):
    """exp(u) / sum(exp(u), a, keepdims=True) -> softmax(u, a): the formula is inf / inf =
    NaN once exp(u) overflows (u > 88 in float32), and 0 / 0 where every exp underflows."""
    return _as_op(m, softmax_formula(m.out))
