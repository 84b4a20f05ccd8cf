"""Formulas differentiated as the op they spell out.

Course code writes the logistic function as ``1 / (1 + exp(-z))``, softplus as ``log(1 +
exp(z))``, softmax as ``exp(z) / sum(exp(z), axis, keepdims=True)`` and logsumexp as
``log(sum(exp(z)))`` (symnb/ops/formulas.py recognises them). Differentiated node by node,
such a formula's gradient is inf / inf = NaN once ``exp`` overflows (z > 88 in float32): the
logistic's is ``exp(-z) / (1 + exp(-z))**2``, softplus's ``exp(z) / (1 + exp(z))``. The ops'
own gradients, and the stabilize rewrites of what is built on them (``log(softmax(z))``, a
cross-entropy without its division), are finite everywhere. So before the reverse walk the
cost is rebuilt with the op where the formula is, as Theano's optimiser did; the nodes that do
not depend on a formula stay the user's own, and a formula that a requested gradient sits on
in or below (``sn.grad(cost, p)`` of its result p, or of the ``-z`` of ``1 / (1 + exp(-z))``)
is left as written.
"""

from __future__ import annotations

from symnb.core.graph import ancestors, note_impure
from symnb.core.variable import Variable
from symnb.ops.formulas import Formula, stable_formula


def with_stable_ops(
    cost: Variable, targets: list[Variable], impure: dict | None = None
) -> Variable:
    """``cost`` with each formula it depends on computed by its op."""
    return outputs_with_stable_ops([cost], targets, impure)[0]


def outputs_with_stable_ops(
    outputs: list[Variable], targets: list[Variable], impure: dict | None = None
) -> list[Variable]:
    """``outputs`` with each formula they depend on computed by its op, in one pass (a
    subgraph they share is rebuilt once): ``sn.Rop``'s expressions, whose tangents go through
    the same rules as a cost's gradient. ``impure`` (a dict) gets the copies of the impure
    nodes above a formula (a print, a random draw: ``core.graph.note_impure``), which the
    gradient then reads as the originals (``with_own_effects``)."""
    order = ancestors(outputs)
    kept = {id(node) for node in ancestors(targets)}  # a target below a formula needs it
    targeted = {id(var) for var in targets}
    memo: dict[int, Variable] = {}
    for node in order:
        out = node.outputs[0]
        found = None if id(node) in kept else stable_formula(out)
        if found is not None and not _skips(found, targeted):
            memo[id(out)] = found.build(memo.get(id(found.x), found.x))
            continue
        if any(id(v) in memo for v in node.inputs):
            new = node.clone_with([memo.get(id(v), v) for v in node.inputs])
            note_impure(node, new, impure)
            for old, var in zip(node.outputs, new.outputs, strict=True):
                memo[id(old)] = var
            # an op made of a formula below may complete one: log(1 / (1 + exp(-z)))
            found = None if id(node) in kept else stable_formula(new.outputs[0])
            if found is not None and not _skips(found, targeted):
                memo[id(out)] = found.build(found.x)
    return [memo.get(id(out), out) for out in outputs]


def _skips(found: Formula, targeted: set[int]) -> bool:
    """Whether the op would skip a requested variable (ids ``targeted``) that the formula
    as written is made of or reads: one of its own variables (``parts``: the ``-z`` of ``1
    / (1 + exp(-z))``, which ``sigmoid(z)`` does not compute), or an input of their nodes
    other than the one the op reads (a constant 1). Rebuilt, the cost would no longer
    depend on it through the formula: its gradient would lose that path, silently where it
    also has another."""
    made = [v for v in found.parts if v.owner is not None]
    read = {id(x) for v in made for x in v.owner.inputs} - {id(found.x)}
    return any(id(v) in targeted for v in found.parts) or not read.isdisjoint(targeted)
