"""Formulas differentiated as the op they spell out.

Course code writes the logistic function as ``1 / (1 + exp(-z))``. Differentiated node by
node, that formula's gradient is ``exp(-z) / (1 + exp(-z))**2``, which is inf / inf = NaN once
``exp(-z)`` overflows (z < -88 in float32), and a binary cross-entropy of it divides by
``1 - p``, which is 0 once p rounds to 1 (z > 17 in float32). ``sigmoid(z)``'s own gradient
and the stabilize rewrites (``log(1 - sigmoid(z)) -> -softplus(z)``, and the gradient of a
cross-entropy without its division) are finite everywhere. So before the reverse walk the
cost is rebuilt with ``sigmoid(z)`` where the formula is, as Theano's optimiser did; the
nodes that do not depend on a formula stay the user's own, and a formula that a requested
gradient sits on or below is left as written.
"""

from __future__ import annotations

from symnb.core.graph import ancestors
from symnb.core.variable import Variable
from symnb.ops.elemwise import logistic_formula


def with_stable_ops(cost: Variable, targets: list[Variable]) -> Variable:
    """``cost`` with each logistic formula it depends on computed by ``sigmoid``."""
    order = ancestors([cost])
    kept = {id(node) for node in ancestors(targets)}  # a target below a formula needs it
    targeted = {id(var) for var in targets}
    memo: dict[int, Variable] = {}
    for node in order:
        out = node.outputs[0]
        found = None if id(node) in kept else logistic_formula(out)
        if found is not None and not _spans_a_target(out, targeted):
            memo[id(out)] = found[1]
            continue
        if any(id(v) in memo for v in node.inputs):
            new = node.clone_with([memo.get(id(v), v) for v in node.inputs])
            for old, var in zip(node.outputs, new.outputs, strict=True):
                memo[id(old)] = var
    return memo.get(id(cost), cost)


def _spans_a_target(out: Variable, targeted: set[int]) -> bool:
    """The formula's own nodes (``1 + exp(u)``, ``exp(u)``, its result) include a target."""
    total = out.owner.inputs[1]
    e = next(v for v in total.owner.inputs if v.owner is not None)
    return any(id(v) in targeted for v in (out, total, e))
