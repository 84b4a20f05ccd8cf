"""Merge: equal constants and identical nodes (same op, same inputs) become one."""

from __future__ import annotations

from symnb.core.graph import OUTPUT
from symnb.core.op import Op
from symnb.core.variable import Constant
from symnb.opt.pattern import Pattern
from symnb.opt.registry import graph_rule, rule
from symnb.opt.rules._util import is_pure

#: phases that build new nodes, after which duplicates are merged again
MERGING_PHASES = ("merge", "canonicalize", "stabilize", "specialize")


@graph_rule(("merge", "fuse"))
def merge_constants(graph):
    """Constants with the same ``Constant.signature()`` (type, weakness, bytes) become one."""
    kept: dict = {}
    for var in list(graph.clients):
        if isinstance(var, Constant):
            first = kept.setdefault(var.signature(), var)
            if first is not var:
                yield [(var, first)]


@rule(MERGING_PHASES, Pattern(Op))
def merge_nodes(m):
    """Two nodes applying equal ops (``__props__``) to the very same inputs become one."""
    node = m.node
    if not node.inputs or not is_pure(node.op):
        return None
    clients = m.graph.clients
    for other, _ in clients.get(_least_used(clients, node.inputs), []):
        if other is not node and other != OUTPUT and _same_node(other, node):
            return list(zip(node.outputs, other.outputs))
    return None


def _least_used(clients, inputs):
    """The input with the fewest users: the cheapest list to search for a twin node."""
    return min(inputs, key=lambda var: len(clients[var]))  # each input has a client: node


def _same_node(a, b) -> bool:
    """Same inputs (by identity) and an equal op."""
    if len(a.inputs) != len(b.inputs) or any(x is not y for x, y in zip(a.inputs, b.inputs)):
        return False
    return a.op == b.op
