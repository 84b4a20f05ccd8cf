"""Merge: equal constants and identical nodes (same op, same inputs) become one."""

from __future__ import annotations

import weakref

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
    other = _twin(m.graph, node)
    return None if other is None else list(zip(node.outputs, other.outputs))


#: per graph being rewritten: (op, ids of the inputs) -> the first node seen with them. A
#: lookup is one hash, so a graph of n picks ``x[i]`` of one ``x`` merges in O(n); searching
#: the users of the least-used input (``x``'s n) was O(n^2) comparisons of ops per phase
#: (2000 picks: 31 s of compile). Entries of nodes gone from the graph are passed over.
_SEEN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _twin(graph, node):
    """A node of ``graph`` other than ``node`` with an equal op on the very same inputs."""
    try:
        key = (node.op, tuple(id(x) for x in node.inputs))
        seen = _SEEN.setdefault(graph, {})
        first = seen.get(key)
    except TypeError:  # an op whose parameters do not hash: search the users
        return _twin_among_users(graph.clients, node)
    if first is not None and first is not node and first in graph.nodes:
        if _same_node(first, node):
            return first
    if first is None or first not in graph.nodes:
        seen[key] = node
    return None


def _twin_among_users(clients, node):
    for other, _ in clients.get(_least_used(clients, node.inputs), []):
        if other is not node and other != OUTPUT and _same_node(other, node):
            return other
    return None


def _least_used(clients, inputs):
    """The input with the fewest users: the cheapest list to search for a twin node."""
    return min(inputs, key=lambda var: len(clients[var]))  # each input has a client: node


def _same_node(a, b) -> bool:
    """Same inputs (by identity) and an equal op."""
    if len(a.inputs) != len(b.inputs) or any(x is not y for x, y in zip(a.inputs, b.inputs)):
        return False
    return a.op == b.op
