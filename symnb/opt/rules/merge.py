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
    for other, _ in m.graph.clients.get(node.inputs[0], []):
        if other is node or other == OUTPUT or other.op != node.op:
            continue
        if len(other.inputs) == len(node.inputs) and all(
            a is b for a, b in zip(other.inputs, node.inputs)
        ):
            return list(zip(node.outputs, other.outputs))
    return None
