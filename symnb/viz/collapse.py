"""Keep large graphs readable by merging repeated boxes, coarser at each stage.

1. *parallel repeats*: boxes of the same kind, label and type at the same depth (a layer
   applied to many independent inputs) become one box marked ``×k``;
2. *rolled loops*: ops built by the same source line (a Python loop) become one box, so a
   1,000-layer chain shows as a short cycle;
3. *by op*: what is left is grouped by op name.

Inputs and outputs are merged only at the last stage (by type): they are what a reader
looks for.
"""

from __future__ import annotations

import re
from collections import defaultdict

from symnb.viz.view import ViewEdge, ViewGraph, ViewNode

_KEEP = ("input", "output")
_LEAVES = ("shared", "constant")
MAX_SPAN = 600


def _small_enough(view: ViewGraph, depth, max_nodes: int, max_span: int) -> bool:
    """Few enough boxes and edges, and edges short enough, for a layout well under 3 s."""
    return (
        len(view.nodes) <= max_nodes
        and len(view.edges) <= 2 * max_nodes
        and span(view, depth) <= max_span
    )


def span(view: ViewGraph, depth: dict[str, int]) -> int:
    """How many ranks the edges cross in total (at least one each)."""
    return sum(max(1, abs(depth[e.dst] - depth[e.src])) for e in view.edges)


def collapse(view: ViewGraph, max_nodes: int, max_span: int = MAX_SPAN) -> ViewGraph:
    """``view`` itself when small enough, otherwise a merged copy with a note saying how.

    Size is counted twice: boxes, and *span* (the ranks all edges cross, which is what makes
    Graphviz's layout slow: a box feeding a long chain costs as much as the chain).
    """
    depth = _depths(view)
    if _small_enough(view, depth, max_nodes, max_span):
        return view
    start = len(view.nodes)
    for stage in (_parallel_key, _loop_key, _op_key):
        view = _merge(view, stage, depth)
        depth = _depths(view)
        if _small_enough(view, depth, max_nodes, max_span):
            break
    view.notes.append(
        f"{start} boxes shown as {len(view.nodes)}: repeated structure is merged (×k)"
    )
    return view


def _parallel_key(node: ViewNode, depth: int):
    if node.kind in _KEEP:
        return node.id
    return (node.kind, node.label, node.detail, node.mark, depth)


def _loop_key(node: ViewNode, depth: int):
    if node.kind in _KEEP or not node.source:
        return node.id
    if node.kind in _LEAVES:  # W0, W1, ... made by one line in a loop
        return (node.kind, node.detail, node.source)
    return (node.kind, node.label.split(" ")[0], node.mark, node.source)


def _op_key(node: ViewNode, depth: int):
    if node.kind in _KEEP or node.kind in _LEAVES:
        return (node.kind, node.detail)
    return (node.kind, node.label.split(" ")[0], node.mark)


def _depths(view: ViewGraph) -> dict[str, int]:
    """Longest distance from a source box; an edge closing a cycle is ignored.

    Iterative depth-first walk, so a 10,000-deep chain does not hit the recursion limit.
    """
    preds = defaultdict(list)
    for edge in view.edges:
        preds[edge.dst].append(edge.src)
    depth: dict[str, int] = {}
    for root in view.nodes:
        if root not in depth:
            _walk(root, preds, depth)
    return depth


def _walk(root: str, preds, depth: dict[str, int]) -> None:
    on_stack = {root}
    stack = [(root, iter(preds[root]))]
    while stack:
        node_id, todo = stack[-1]
        nxt = next((p for p in todo if p not in depth and p not in on_stack), None)
        if nxt is not None:
            on_stack.add(nxt)
            stack.append((nxt, iter(preds[nxt])))
            continue
        stack.pop()
        on_stack.discard(node_id)
        known = [depth[p] for p in preds[node_id] if p in depth]
        depth[node_id] = 1 + max(known, default=-1)


def _merge(view: ViewGraph, key_of, depth: dict[str, int]) -> ViewGraph:
    groups: dict = defaultdict(list)
    for node in view.nodes.values():
        groups[key_of(node, depth.get(node.id, 0))].append(node)
    ids = _box_ids(list(groups.values()))
    merged = ViewGraph(clusters={}, notes=list(view.notes))
    new_id: dict[str, str] = {}
    for members, box_id in zip(groups.values(), ids):
        box = _merged_box(members, box_id)
        merged.add(box)
        for node in members:
            new_id[node.id] = box.id
    merged.clusters = {c: label for c, label in view.clusters.items() if _used(c, merged)}
    merged.edges = _merged_edges(view.edges, new_id)
    return merged


def _box_ids(groups: list[list[ViewNode]]) -> list[str]:
    """One id per group, all distinct: a box left alone keeps its id (an earlier stage's
    ``mul×3`` too), and a group merged here is named ``mul×3``, then ``mul×3#1``..., among
    the names no box of the stage holds. The ids kept are set aside before any name is
    given, so a merged box never takes the id of a box it would replace."""
    taken = {members[0].id for members in groups if len(members) == 1}
    ids = []
    for members in groups:
        if len(members) == 1:
            ids.append(members[0].id)
            continue
        name = _merged_name(members)
        box_id, k = name, 1
        while box_id in taken:
            box_id, k = f"{name}#{k}", k + 1
        taken.add(box_id)
        ids.append(box_id)
    return ids


def _merged_name(members: list[ViewNode]) -> str:
    first = members[0]
    count = sum(n.count for n in members)
    return f"{re.sub(r'[0-9_]+$', '', first.label.split(' ')[0]) or first.kind}×{count}"


def _merged_box(members: list[ViewNode], box_id: str) -> ViewNode:
    first = members[0]
    if len(members) == 1:
        return first
    count = sum(n.count for n in members)
    name = _merged_name(members)
    details = {n.detail for n in members}
    clusters = {n.cluster for n in members}
    places = {n.place for n in members}
    return ViewNode(
        box_id,
        first.kind,
        f"{first.label} ×{count}" if len({n.label for n in members}) == 1 else name,
        first.detail if len(details) == 1 else "various types",
        count=count,
        cluster=first.cluster if len(clusters) == 1 else None,
        mark=first.mark,
        tooltip=f"{count} boxes merged",
        source=first.source,
        members=[m for n in members for m in n.members],
        place=first.place if len(places) == 1 else "device+host" if "" not in places else "",
    )


def _used(cluster: str, view: ViewGraph) -> bool:
    return any(n.cluster == cluster for n in view.nodes.values())


def _merged_edges(edges: list[ViewEdge], new_id: dict[str, str]) -> list[ViewEdge]:
    out: dict[tuple, ViewEdge] = {}
    for edge in edges:
        key = (new_id[edge.src], new_id[edge.dst])
        if key not in out:
            out[key] = ViewEdge(*key, edge.label, edge.count, edge.mark, edge.transfer)
            continue
        kept = out[key]
        kept.count += edge.count
        kept.transfer = kept.transfer or edge.transfer
        if kept.label != edge.label:
            kept.label = ""
    return list(out.values())
