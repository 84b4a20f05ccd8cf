"""A consistency check of a Graph, run after each phase when ``sn.config.verify_rewrites`` is on.

It catches the mistakes a rule can make: a node whose output type no longer follows from its
inputs, client lists that disagree with the nodes' inputs, nodes left behind or missing, and
cycles. It raises :class:`RewriteError` naming the phase and what is wrong.
"""

from __future__ import annotations

from symnb.core.dims import shapes_unify
from symnb.core.graph import OUTPUT, Graph, ancestors
from symnb.errors import GraphError


class RewriteError(GraphError):
    """A rewrite left the graph inconsistent (a bug in a rule)."""


def verify(graph: Graph, after: str = "") -> None:
    """Raise RewriteError if the graph is inconsistent."""
    where = f" after {after}" if after else ""
    live = ancestors(graph.outputs)
    _check_nodes(graph, live, where)
    _check_order(live, where)
    _check_clients(graph, live, where)
    for node in live:
        _check_types(node, where)


def _check_nodes(graph, live, where):
    live_set = set(live)
    if live_set != graph.nodes:
        extra = [str(n.op) for n in graph.nodes - live_set][:5]
        missing = [str(n.op) for n in live_set - graph.nodes][:5]
        raise RewriteError(
            f"graph nodes are wrong{where}: dangling {extra or 'none'}, missing {missing or 'none'}"
        )


def _check_order(live, where):
    """Every input of a node is made by an earlier node (so there is no cycle)."""
    done: set[int] = set()
    for node in live:
        for var in node.inputs:
            if var.owner is not None and id(var.owner) not in done:
                raise RewriteError(f"cycle{where}: {node.op} uses its own result")
        done.add(id(node))


def _expected_clients(graph, live) -> dict:
    expected: dict[int, list] = {}
    for node in live:
        for i, var in enumerate(node.inputs):
            expected.setdefault(id(var), []).append((id(node), i))
    for i, var in enumerate(graph.outputs):
        expected.setdefault(id(var), []).append((OUTPUT, i))
    return expected


def _check_clients(graph, live, where):
    expected = _expected_clients(graph, live)
    actual = {
        id(var): [(c if c == OUTPUT else id(c), i) for c, i in users]
        for var, users in graph.clients.items()
        if users
    }
    for key in set(expected) | set(actual):
        if sorted(expected.get(key, []), key=str) != sorted(actual.get(key, []), key=str):
            raise RewriteError(f"client lists disagree with the nodes' inputs{where}")


def _check_types(node, where):
    """The op's type rule, run again on the current inputs, still gives the outputs' types."""
    try:
        types = node.op.infer_types(*node.inputs)
    except Exception as exc:  # noqa: BLE001 - any failure of the rule is the finding
        raise RewriteError(f"{node.op} no longer type-checks{where}: {exc}") from None
    for var, expected in zip(node.outputs, types, strict=True):
        if not _fits(var.type, expected):
            raise RewriteError(
                f"{node.op}{where}: {var.describe_as('output')} but its inputs give {expected}"
            )


def _fits(declared, expected) -> bool:
    return declared.dtype == expected.dtype and shapes_unify(declared.shape, expected.shape)
