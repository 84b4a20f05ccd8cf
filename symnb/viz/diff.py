"""Before/after views: which nodes a rewrite removed, added or changed.

Two graphs of one rewrite history (replays of it, ``Step.graph_after()``, and the graph it
rewrote) are compared node by node as the history recorded them: a replay's copy stands for
the node it copies, so what the diff shows removed and added is what the steps between them
removed and added, and a node there before and after that reads other values is changed.
Other graphs (``f.graph_before``, a clone of its own) are compared by structure: a node's
key is its op plus the keys of its inputs, leaves keyed by identity. A node of ``after``
whose key exists in ``before`` is kept; one that is new but has a removed counterpart with
the same op built by the same line, reading the same values but for those the rewrite
replaced (of several, the one with most inputs in common), is *changed* (rewired), and is
keyed as that twin was, so that its consumers, whose inputs are otherwise what they were,
are kept rather than changed in turn; the rest are added / removed. The diff picture is the
``after`` graph with removed nodes drawn as dashed ghosts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from symnb.core.variable import Constant
from symnb.viz.collapse import collapse
from symnb.viz.graphs import MAX_BOXES, GraphPicture, apply_marks, output_labels
from symnb.viz.subject import as_graph
from symnb.viz.view import ViewGraph, ViewNode, graph_view, is_grad_node


def _input_key(var, keys) -> tuple:
    if isinstance(var, Constant):
        return ("const", var.signature())  # merged or refolded constants stay "the same"
    if var.owner is None:
        return ("leaf", id(var))
    return ("out", keys[id(var.owner)], var.index)


@dataclass
class GraphDiff:
    """Nodes of ``before`` removed, nodes of ``after`` added, and (before, after) changed."""

    removed: list = field(default_factory=list)
    added: list = field(default_factory=list)
    changed: list = field(default_factory=list)
    kept: int = 0
    same: dict = field(default_factory=dict)  # id(before node) -> the equal after node

    def summary(self) -> str:
        return (
            f"{len(self.removed)} removed, {len(self.added)} added, "
            f"{len(self.changed)} changed, {self.kept} kept"
        )


def diff_graphs(before, after) -> GraphDiff:
    """Compare two graphs: as the rewrite history recorded them where both are graphs of one
    history, else by structure (see the module docstring)."""
    before, after = as_graph(before), as_graph(after)
    by_origin = _diff_by_origin(before, after)
    if by_origin is not None:
        return by_origin
    intern: dict[tuple, int] = {}
    old_keys: dict[int, int] = {}  # id(node of before) -> its key
    old: dict[int, list] = {}  # key -> the nodes of ``before`` of that key not yet matched
    for node in before.toposort():
        old.setdefault(_key(node, old_keys, intern), []).append(node)
    # a changed node's twin is a node of ``before`` that no node of ``after`` equals as
    # written, so that a node kept as it was is never taken for another's twin
    plain: dict[int, int] = {}
    written = {_key(node, plain, intern) for node in after.toposort()}
    # the values ``after`` reads as written: a node that read one of them is not a twin of
    # a node reading something else there (the rewrite did not replace that value)
    read = {_input_key(v, plain) for node in after.toposort() for v in node.inputs}
    read.update(_input_key(v, plain) for v in after.outputs)
    gone = [node for key, nodes in old.items() if key not in written for node in nodes]
    result = GraphDiff()
    keys: dict[int, int] = {}  # id(node of after) -> its key (a changed node: its twin's)
    for node in after.toposort():
        key = _key(node, keys, intern)
        if old.get(key):
            twin = old[key].pop(0)
            result.same[id(twin)] = node
            result.kept += 1
            continue
        twin = _twin(node, [n for n in gone if id(n) not in result.same], keys, old_keys, read)
        if twin is None:
            result.added.append(node)
            continue
        gone = [n for n in gone if n is not twin]
        old[old_keys[id(twin)]] = [n for n in old[old_keys[id(twin)]] if n is not twin]
        keys[id(node)] = old_keys[id(twin)]  # its consumers key it as they keyed the twin
        result.changed.append((twin, node))
    result.removed = [node for nodes in old.values() for node in nodes]
    return result


def _origins(graph) -> dict:
    """``{node of the history: node of graph}``: a replayed graph's copies by the node each
    copies (``symnb.opt.history.Replayed``), any other graph's nodes by themselves (the
    optimised graph's nodes are the history's)."""
    origin = getattr(graph, "origin", None)
    nodes = graph.toposort()
    return {origin(n) if origin else n: n for n in nodes}


def _diff_by_origin(before, after) -> GraphDiff | None:
    """The diff of two graphs of one rewrite history (a replay of it, or the graph it
    rewrote), by the node of the history each node stands for: a node there before and after
    is kept, or changed where it reads other values (a rewrite rewired it); the others are
    exactly what the rewrites between them removed and added. None for unrelated graphs."""
    old, new = _origins(before), _origins(after)
    if not old.keys() & new.keys():
        return None
    result = GraphDiff()
    old_of = {id(n): o for o, n in old.items()}
    new_of = {id(n): o for o, n in new.items()}

    def same_value(was, now) -> bool:
        if was.owner is None or now.owner is None:
            return was.owner is now.owner and _input_key(was, {}) == _input_key(now, {})
        return was.index == now.index and old_of[id(was.owner)] is new_of[id(now.owner)]

    for origin, node in new.items():
        twin = old.get(origin)
        if twin is None:
            result.added.append(node)
        elif all(same_value(a, b) for a, b in zip(twin.inputs, node.inputs, strict=True)):
            result.same[id(twin)] = node
            result.kept += 1
        else:
            result.changed.append((twin, node))
    result.removed = [node for origin, node in old.items() if origin not in new]
    return result


def _key(node, keys: dict, intern: dict) -> int:
    """The structural key of ``node`` from its inputs' keys in ``keys``, recorded there."""
    args = tuple(_input_key(v, keys) for v in node.inputs)
    keys[id(node)] = intern.setdefault((node.op, args), len(intern))
    return keys[id(node)]


def _twin(node, candidates, keys: dict, old_keys: dict, read: set):
    """The removed node ``node`` was before a rewrite rewired it, if any: of the same op,
    built by the same source line, whose inputs are ``node``'s but for values the rewrite
    replaced (none that ``after`` still reads); of several, the one with most inputs equal to
    ``node``'s (every node of a gradient has the ``sn.grad`` line, ``(a - a) - a`` two subs)."""
    where = node.outputs[0].source
    if where is None:
        return None
    best, most = None, -1
    for old in candidates:
        if old.op != node.op or old.outputs[0].source != where:
            continue
        same = 0
        for was, now in zip(old.inputs, node.inputs, strict=True):
            was_key = _input_key(was, old_keys)
            if was_key == _input_key(now, keys):
                same += 1
            elif was_key in read:  # a value still there, which this node does not read
                break
        else:
            if same > most:
                best, most = old, same
    return best


def diff_picture(
    before, after, title: str = "", max_boxes: int = MAX_BOXES, function=None, labels=None
) -> GraphPicture:
    """``after`` with added (green), changed (orange) and removed (dashed red) nodes; its
    outputs named by ``labels``, else as ``function`` names its results (else ``after``)."""
    old_graph, new_graph = as_graph(before), as_graph(after)
    diff = diff_graphs(old_graph, new_graph)
    if labels is None:
        labels = output_labels(function or after, new_graph)
    view = graph_view(new_graph, labels)
    marks = {id(n): "added" for n in diff.added}
    marks.update({id(new): "changed" for _, new in diff.changed})
    apply_marks(view, marks)
    _add_ghosts(view, diff, old_graph)
    view.notes.append(f"diff: {diff.summary()}")
    return GraphPicture(collapse(view, max_boxes), title)


def _add_ghosts(view: ViewGraph, diff: GraphDiff, old_graph) -> None:
    """Removed nodes, drawn dashed, wired to whatever of their inputs is still shown."""
    box_of = {id(m): box.id for box in view.nodes.values() for m in box.members}
    now = {id(old): box_of.get(id(new)) for old, new in diff.changed}
    now.update({old_id: box_of.get(id(new)) for old_id, new in diff.same.items()})
    ghost_ids: dict[int, str] = {}
    for k, node in enumerate(n for n in old_graph.toposort() if _is_in(n, diff.removed)):
        ghost = f"removed:{node.op.op_name()}#{k}"
        kind = "grad" if is_grad_node(node) else "op"
        detail = " ".join(str(v.type) for v in node.outputs)
        view.add(ViewNode(ghost, kind, node.op.op_name(), detail, mark="removed"))
        ghost_ids[id(node)] = ghost
        for var in node.inputs:
            src = _shown(var, view, ghost_ids, now)
            if src is not None:
                view.connect(src, ghost, str(var.type), mark="removed")


def _is_in(node, nodes) -> bool:
    return any(node is n for n in nodes)


def _shown(var, view: ViewGraph, ghost_ids, now):
    """The box that stands for ``var`` in the diff picture, if any."""
    if var.owner is None:
        return view.producer.get(id(var))
    return ghost_ids.get(id(var.owner)) or now.get(id(var.owner))


def side_by_side_html(left: GraphPicture, right: GraphPicture) -> str:
    """Two pictures next to each other, with their titles."""
    cells = "".join(
        f'<div style="flex:1;min-width:0"><div class="symnb-title">{escape(p.title)}</div>'
        f"{p.html()}</div>"
        for p in (left, right)
    )
    return f'<div style="display:flex;gap:16px;align-items:flex-start">{cells}</div>'
