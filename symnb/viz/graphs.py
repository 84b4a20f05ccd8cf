"""Pictures of graphs: what a variable, a function or a Graph looks like in a notebook.

``picture(obj)`` accepts a ``Graph``, a compiled ``Function`` (its optimised graph), a
variable, a list of variables or an Apply node (its outputs' graph), and returns a
:class:`GraphPicture` that Jupyter shows as SVG (or, with no Graphviz, as one line of
explanation and the DOT text).
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from symnb.backends.linker import Linker
from symnb.core.graph import Graph
from symnb.core.words import counted, printable
from symnb.viz.collapse import collapse
from symnb.viz.dot import to_dot
from symnb.viz.render import RenderUnavailable, render_svg
from symnb.viz.subject import as_graph
from symnb.viz.theme import STYLE
from symnb.viz.view import ViewGraph, graph_view

MAX_BOXES = 200  # above this (or 2x as many edges), repeated structure is merged
MAX_EDGE_LABELS = 80  # above this many edges, shapes on edges are dropped (they slow layout 4x)


def output_labels(obj, graph: Graph) -> list[str]:
    """Names for the output boxes: the variables' names (a compiled function's results: the
    names the user gave them, recorded when it was compiled, whatever a rewrite put in their
    place), and ``W ←`` for updates."""
    results = getattr(obj, "results", None)  # a compiled function's, or the Theano layer's
    n_out = len(graph.outputs) if results is None else len(results)
    named = getattr(obj, "result_names", None)
    if named is None:
        named = [v.name for v in graph.outputs[:n_out]]
    labels = [name or f"output {i}" for i, name in enumerate(named[:n_out])]
    for shared, _ in getattr(obj, "updates", []):
        labels.append(f"{shared.name or 'shared'} ← update")
    return labels


@dataclass
class GraphPicture:
    """A drawable graph: ``.dot()``, ``.svg()``, and rich display in Jupyter."""

    view: ViewGraph
    title: str = ""

    def dot(self) -> str:
        return to_dot(self.view, self.title, len(self.view.edges) <= MAX_EDGE_LABELS)

    def svg(self) -> str:
        """The SVG text, named for screen readers (``<title>``, ``aria-label``); raises
        RenderUnavailable when no Graphviz can be found."""
        return labelled(render_svg(self.dot()), self.summary())

    def html(self) -> str:
        """The SVG (or the DOT text with an explanation) plus notes, as an HTML fragment: a
        frame that scrolls sideways when the graph is wider than the page."""
        try:
            body = f'<div class="symnb-graph">{self.svg()}</div>'
        except RenderUnavailable as exc:
            body = unavailable_html(str(exc), self.dot())
        notes = "".join(f'<div class="symnb-note">{escape(n)}</div>' for n in self.view.notes)
        return body + notes

    def _repr_mimebundle_(self, include=None, exclude=None):
        """In the page (HTML, themed and scrolling), and as an image on its own white paper
        for frontends that show only images. Without Graphviz, the DOT text keeps the
        picture's notes and the style sheet that themes them."""
        try:
            svg = self.svg()
        except RenderUnavailable as exc:
            return {"text/html": STYLE + self.html(), "text/plain": str(exc)}
        html = STYLE + self.html()
        return {"text/html": html, "image/svg+xml": svg, "text/plain": self.summary()}

    def summary(self) -> str:
        """``<graph after: 2 inputs, 1 shared, 3 ops, 1 output>``: what it draws, counted."""
        kinds = ("input", "shared", "constant", "op", "grad", "scalar", "output")
        counts = ", ".join(
            counted(n, kind, "shared" if kind == "shared" else None)
            for kind, n in ((k, self.view.count(k)) for k in kinds)
            if n
        )
        return f"<graph {self.title}: {counts}>".replace("graph :", "graph:")

    def __repr__(self):
        return self.summary()


def labelled(svg: str, name: str) -> str:
    """``svg`` with ``role="img"``, ``aria-label`` and a ``<title>`` naming it."""
    name = escape(printable(name))
    head, _, rest = svg.partition(">")
    return f'{head} role="img" aria-label="{name}"><title>{name}</title>{rest}'


def unavailable_html(message: str, dot: str) -> str:
    return (
        f'<div class="symnb-note">{escape(message)}; the DOT text follows.</div>'
        f"<pre>{escape(dot)}</pre>"
    )


def picture(
    obj, title: str = "", max_boxes: int = MAX_BOXES, marks=None, function=None
) -> GraphPicture:
    """The picture of ``obj``; ``marks`` maps Apply nodes (by identity) to a diff mark;
    ``function`` names the outputs of one of its graphs (``f.graph_before``)."""
    graph = as_graph(obj)
    view = graph_view(graph, output_labels(function or obj, graph))
    if marks:
        apply_marks(view, marks)
    linker = getattr(obj, "linker", None)  # a compiled function's backend
    placed = linker.placement() if isinstance(linker, Linker) else None
    if placed is not None:  # a function of a device backend: where each node runs
        apply_placement(view, placed)
    return GraphPicture(collapse(view, max_boxes), title)


def apply_marks(view: ViewGraph, marks: dict) -> None:
    """Mark boxes whose Apply nodes are in ``marks`` (``{id(node): mark}``)."""
    for box in view.nodes.values():
        for node in box.members:
            if id(node) in marks:
                box.mark = marks[id(node)]


def apply_placement(view: ViewGraph, placement) -> None:
    """Colour boxes by where they run and mark the arrows whose values cross the bus
    (``placement``: a device linker's, symnb/backends/device/transfers.py)."""
    box_of = {}
    for box in view.nodes.values():
        for node in box.members:
            box_of[id(node)] = box.id
            box.place = placement.sides.get(id(node), box.place)
            if box.place:
                where = {"device": f"{placement.device} device", "host": "host"}
                box.tooltip += f" · runs on the {where.get(box.place, 'device and host')}"
            if id(node) in placement.inner:
                box.tooltip += " · moves values across the bus inside its steps"
    crossing = set()
    for var, to, node in placement.crossings:
        src = view.producer.get(id(var))
        crossing.add((src, box_of.get(id(node)) if node is not None else "out", to))
    for edge in view.edges:
        dst = "out" if edge.dst.startswith("out:") else edge.dst
        for to in ("device", "host"):
            if (edge.src, dst, to) in crossing:
                edge.transfer = to
    view.notes.append(
        f"{placement.device} backend: blue boxes run on the device, grey dashed "
        "ones on the host (NumPy); red dashed arrows are copies across the bus "
        "(⇢ device, ⇢ host)"
    )


def graph_bundle(graph, include=None, exclude=None) -> dict:
    """``f.graph`` in Jupyter: its SVG; where no Graphviz can draw it, what ``picture()``
    shows then (a note saying why, the DOT text), and in plain text how to print its text
    form."""
    text = repr(graph)
    wanted = [m for m in ("image/svg+xml", "text/html") if _wanted(m, include, exclude)]
    if not wanted:
        return {"text/plain": text}
    pic = picture(graph)
    try:
        return {"image/svg+xml": pic.svg(), "text/plain": text}
    except RenderUnavailable as exc:
        html = STYLE + unavailable_html(str(exc), pic.dot())
        return {"text/html": html, "text/plain": f"{text}\n{exc}; print(graph) for its text form"}


def _wanted(mime: str, include, exclude) -> bool:
    return (include is None or mime in include) and not (exclude and mime in exclude)


def graph_svg(graph) -> str | None:
    """SVG of a Graph for Jupyter (``f.graph``, ``f.graph_before``); None when no renderer is
    installed, so Jupyter shows the text form instead."""
    try:
        return picture(graph).svg()
    except RenderUnavailable:
        return None
