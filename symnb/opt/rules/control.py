"""Control flow: an ``ifelse`` whose choice is known when compiling becomes the branch, and
ifelses on one condition become one."""

from __future__ import annotations

from symnb.control.ifelse import IfElse
from symnb.core.graph import ancestors, substitute
from symnb.core.lazy import regions
from symnb.opt.pattern import Pattern
from symnb.opt.registry import graph_rule, rule
from symnb.opt.rules._util import constant_value, fits


@rule("canonicalize", Pattern(IfElse))
def ifelse_of_known_condition(m):
    """``ifelse(True, a, b) -> a`` and ``ifelse(False, a, b) -> b``: a constant condition."""
    node = m.node
    cond = constant_value(node.inputs[0])
    if cond is None:
        return None
    n = node.op.n
    chosen = node.inputs[1 : 1 + n] if bool(cond) else node.inputs[1 + n :]
    return _replacing(node, chosen)


@rule("canonicalize", Pattern(IfElse))
def ifelse_of_equal_branches(m):
    """``ifelse(c, a, a) -> a``: both branches give the very same values."""
    node = m.node
    n = node.op.n
    thens, elses = node.inputs[1 : 1 + n], node.inputs[1 + n :]
    if any(t is not e for t, e in zip(thens, elses)):
        return None
    return _replacing(node, thens)


def _replacing(node, values):
    pairs = list(zip(node.outputs, values))
    return pairs if all(fits(old, new) for old, new in pairs) else None


@graph_rule("canonicalize")
def ifelses_on_one_condition(graph):
    """``ifelse(c, a, b)`` and ``ifelse(c, d(y), e(y))`` with ``y`` the first's result, in the
    same region, become one ``ifelse(c, [a, d(a)], [b, e(b)])``: where ``c`` holds, ``y`` is
    ``a``. A gradient reads the forward values of a branch in a second ifelse on the branch's
    condition (symnb/grad/reverse.py); one ifelse keeps those values inside the branch, where
    two would need them computed whatever the condition (a guarded ``x[i]`` with ``i`` out of
    range would fail). Only the nodes that only the second ifelse's side reads are rebuilt
    on ``a`` (or ``b``), so nothing is computed twice; pairs still linked otherwise stay apart."""
    tried: set = set()
    while True:
        pairs = _one_merge(graph, tried)
        if pairs is None:
            return
        yield pairs


def _one_merge(graph, tried: set):
    conds = [id(node.inputs[0]) for node in graph.nodes if isinstance(node.op, IfElse)]
    if len(conds) == len(set(conds)):  # (most graphs: no two ifelses on one condition)
        return None
    order = graph.toposort()
    by_cond: dict = {}
    for node in order:
        if isinstance(node.op, IfElse):
            by_cond.setdefault(id(node.inputs[0]), []).append(node)
    groups = [nodes for nodes in by_cond.values() if len(nodes) > 1]
    found = regions(order, lambda var: graph.clients.get(var, []))
    for nodes in groups:
        for k, later in enumerate(nodes):
            for first in nodes[:k]:
                key = (id(first), id(later))
                if key in tried or found.of(first) != found.of(later):
                    continue
                tried.add(key)
                pairs = _merged(found, first, later)
                if pairs is not None:
                    return pairs
    return None


def _merged(found, first, later):
    """The pairs replacing both nodes' outputs by one ifelse's, or None where ``later`` still
    reads ``first`` through a node computed outside its branch."""
    n, m = first.op.n, later.op.n
    sides = []
    for side, values, own in (
        ("then", later.inputs[1 : 1 + m], first.inputs[1 : 1 + n]),
        ("else", later.inputs[1 + m :], first.inputs[1 + n :]),
    ):
        sides.append(_rebuilt(found, (id(later), side), values, dict(zip(first.outputs, own))))
    thens, elses = sides
    if any(node is first for node in ancestors(thens + elses)):
        return None
    n_then = first.inputs[1 : 1 + n]
    n_else = first.inputs[1 + n :]
    outputs = IfElse(n + m)(first.inputs[0], *n_then, *thens, *n_else, *elses)
    return _replacing_all(list(first.outputs) + list(later.outputs), outputs)


def _rebuilt(found, region, values: list, replace: dict) -> list:
    """``values`` with ``replace`` applied to the nodes only ``region`` reads (cloned; the
    others are left as they are)."""
    return substitute(values, replace, lambda node: region in found.chain(found.of(node)))


def _replacing_all(old: list, new: list):
    pairs = list(zip(old, new))
    return pairs if all(fits(a, b) for a, b in pairs) else None
