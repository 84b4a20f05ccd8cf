"""ViewGraph → DOT text. Styles are tables keyed by node kind and by diff mark.

Each node's DOT name is its view id (:func:`node_name`), so the SVG's ``<title>`` elements
name the boxes (``var:x``, ``matmul#0``, ``out:0``, ``var:a\\b`` for a variable named
``a\\b``), and its ``class`` lists kind and mark (``node op added``), which is what tests and
style sheets look at.
"""

from __future__ import annotations

import unicodedata
from html import escape

from symnb.core.words import printable
from symnb.viz.view import ViewGraph, ViewNode

FONT = "Helvetica,Arial,sans-serif"

KIND_STYLE = {
    "input": 'shape=ellipse style=filled fillcolor="#dbeafe" color="#2563eb"',
    "shared": 'shape=cylinder style=filled fillcolor="#fef3c7" color="#b45309"',
    "constant": 'shape=plaintext style=filled fillcolor="#f3f4f6" color="#9ca3af" margin=0.04',
    "op": 'shape=box style="rounded,filled" fillcolor="#ffffff" color="#374151"',
    "grad": 'shape=box style="rounded,filled" fillcolor="#ede9fe" color="#7c3aed"',
    "scalar": 'shape=box style="rounded,filled" fillcolor="#ecfdf5" color="#059669"',
    "output": 'shape=box style="filled" fillcolor="#f0fdf4" color="#15803d" penwidth=2',
}

MARK_STYLE = {
    "added": 'color="#16a34a" penwidth=3 fillcolor="#dcfce7"',
    "removed": 'color="#dc2626" penwidth=2 fillcolor="#fee2e2" style="dashed,filled,rounded"',
    "changed": 'color="#ea580c" penwidth=3 fillcolor="#ffedd5"',
    "touched": 'color="#db2777" penwidth=3',
}

EDGE_MARK_STYLE = {
    "added": 'color="#16a34a" penwidth=2',
    "removed": 'color="#dc2626" style=dashed',
    "changed": 'color="#ea580c"',
    "touched": 'color="#db2777" penwidth=2',
}

#: where a device backend runs a box (after the kind's style, so its fill wins)
PLACE_STYLE = {
    "device": 'fillcolor="#dbeafe" color="#1d4ed8" penwidth=2',
    "host": 'fillcolor="#f3f4f6" color="#6b7280" style="rounded,filled,dashed"',
    "device+host": 'fillcolor="#e0e7ff" color="#6b21a8" penwidth=2',
}
TRANSFER_STYLE = 'color="#dc2626" fontcolor="#dc2626" style=dashed penwidth=2'

CLUSTER_STYLE = 'style="rounded,filled" fillcolor="#f0fdf4" color="#059669" fontcolor="#065f46"'


def quote(text: str) -> str:
    """A DOT double-quoted string for a label or another attribute (a node's name is
    :func:`node_name`): a backslash is doubled, so that Graphviz shows it rather
    than expanding ``\\N`` (the node's name), ``\\G`` or ``\\L`` in a label; a newline is
    Graphviz's line break."""
    text = printable(text, keep="\n").replace("\\", "\\\\")
    return '"' + text.replace('"', '\\"').replace("\n", "\\n") + '"'


#: a node name's characters Graphviz would not write back as themselves in the ``<title>``,
#: as XML character references, which it copies there as they are (it keeps an ``&`` that
#: starts one): a backslash is kept doubled in a name (it is undone only in labels), a quote
#: ends it, ``&amp;`` would be decoded, a second space becomes a no-break space
_NAME_ESCAPES = {"&": "&amp;", "\\": "&#92;", '"': "&quot;"}


def node_name(text: str) -> str:
    """A DOT node (or cluster) name that the SVG's ``<title>`` gives back as ``text``,
    whatever it holds. Control characters, which XML cannot hold, are written as their
    escapes (``\\x01``), their backslash spelled apart from a typed one (``&#x5c;``, which
    reads alike), so that such names stay two boxes."""
    out, previous = [], ""
    for c in text:
        if unicodedata.category(c) == "Cc":
            out.append(repr(c)[1:-1].replace("\\", "&#x5c;"))
        elif c == " " and previous == " ":
            out.append("&#32;")
        else:
            out.append(_NAME_ESCAPES.get(c, c))
        previous = c
    return '"' + "".join(out) + '"'


def _html(text: str) -> str:
    """Text inside an HTML-like label: Graphviz expands ``\\N`` there too."""
    return escape(printable(text)).replace("\\", "\\\\")


def _tooltip(text: str) -> str:
    """A tooltip: Graphviz expands its escapes twice, so a backslash is doubled twice."""
    return quote(printable(text, keep="\n").replace("\\", "\\\\"))


def _label(node: ViewNode) -> str:
    """An HTML-like label: the op or name in bold, the type below in small grey."""
    head = f"<b>{_html(node.label)}</b>"
    if node.detail:
        head += f'<br/><font point-size="9" color="#4b5563">{_html(node.detail)}</font>'
    return f"<{head}>"


def _node_line(node: ViewNode) -> str:
    place = f"on-{node.place.replace('+', '-')}" if node.place else ""
    classes = " ".join(
        filter(None, [node.kind, node.mark, "merged" if node.count > 1 else "", place])
    )
    attrs = [
        f"label={_label(node)}",
        KIND_STYLE[node.kind],
        PLACE_STYLE.get(node.place, ""),
        MARK_STYLE.get(node.mark, ""),
        f"class={quote(classes)}",
        f"tooltip={_tooltip(node.tooltip or node.label)}",
    ]
    if node.count > 1:
        attrs.append("peripheries=2")
    return f"  {node_name(node.id)} [{' '.join(a for a in attrs if a)}];"


def to_dot(view: ViewGraph, title: str = "", edge_labels: bool = True) -> str:
    """The DOT text of ``view``; ``edge_labels=False`` drops the shapes on edges (speed)."""
    lines = [
        "digraph symnb {",
        f'  graph [rankdir=TB fontname="{FONT}" fontsize=11 nodesep=0.25 ranksep=0.35'
        + (f" label={quote(title)} labelloc=t" if title else "")
        + "];",
        f'  node [fontname="{FONT}" fontsize=11 height=0.3 margin="0.12,0.04"];',
        f'  edge [fontname="{FONT}" fontsize=8 color="#6b7280" fontcolor="#6b7280" arrowsize=0.6];',
    ]
    lines += [_node_line(n) for n in view.nodes.values() if n.cluster is None]
    for cluster, label in view.clusters.items():
        lines += _cluster_lines(view, cluster, label)
    lines += [_edge_line(e, edge_labels) for e in view.edges]
    lines.append("}")
    return "\n".join(lines)


def _cluster_lines(view: ViewGraph, cluster: str, label: str) -> list[str]:
    members = [n for n in view.nodes.values() if n.cluster == cluster]
    lines = [f"  subgraph {node_name(cluster)} {{", f"    label={quote(label)} {CLUSTER_STYLE};"]
    lines += ["  " + _node_line(n) for n in members]
    lines.append("  }")
    return lines


def _edge_line(edge, edge_labels: bool) -> str:
    attrs = []
    text = edge.label if edge_labels else ""
    if edge.count > 1:
        text = f"{text} ×{edge.count}".strip()
    if edge.transfer:
        text = f"{text} ⇢ {edge.transfer}".strip()
    if text:
        attrs.append(f"label={quote(' ' + text)}")
    if edge.transfer and not edge.mark:
        attrs += [TRANSFER_STYLE, f"class={quote('transfer to-' + edge.transfer)}"]
    if edge.mark:
        attrs += [EDGE_MARK_STYLE[edge.mark], f"class={quote(edge.mark)}"]
    inner = f" [{' '.join(attrs)}]" if attrs else ""
    return f"  {node_name(edge.src)} -> {node_name(edge.dst)}{inner};"
