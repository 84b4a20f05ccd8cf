"""A drawing-neutral picture of a graph: boxes, arrows and clusters, before any DOT is written.

Keeping this model apart from DOT lets the collapse step (large graphs) and the diff step
(before/after, rewrite steps) work on plain data, and lets tests check structure directly.

Node kinds: ``input``, ``shared``, ``constant``, ``op``, ``grad`` (built by ``sn.grad``),
``fused`` (a cluster of ``scalar`` steps) and ``output``. A scan is one ``op`` box, and its
inner graph (one step) a cluster beside it, the boxes named ``scan#k/...``. Marks:
``added``, ``removed``, ``changed``, ``touched``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from symnb.control.scan import Scan
from symnb.core.graph import leaves
from symnb.core.variable import Constant, SharedVariable
from symnb.viz.text import _Namer, value_text


@dataclass
class ViewNode:
    """One box. ``id`` becomes the DOT node name, hence the ``<title>`` in the SVG."""

    id: str
    kind: str
    label: str
    detail: str = ""
    count: int = 1
    cluster: str | None = None
    mark: str | None = None
    tooltip: str = ""
    source: str = ""
    members: list = field(default_factory=list)  # the Apply nodes drawn by this box
    place: str = ""  # device backends: "device", "host" or "device+host" (where it runs)


@dataclass
class ViewEdge:
    src: str
    dst: str
    label: str = ""
    count: int = 1
    mark: str | None = None
    transfer: str = ""  # device backends: "device" or "host" when the value crosses the bus


@dataclass
class ViewGraph:
    """Boxes, arrows, clusters (id -> label) and notes shown under the drawing."""

    nodes: dict[str, ViewNode] = field(default_factory=dict)
    edges: list[ViewEdge] = field(default_factory=list)
    clusters: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    producer: dict[int, str] = field(default_factory=dict)  # id(variable) -> box id

    def add(self, node: ViewNode) -> str:
        self.nodes[node.id] = node
        return node.id

    def connect(self, src: str, dst: str, label: str = "", mark: str | None = None) -> None:
        self.edges.append(ViewEdge(src, dst, label, mark=mark))

    def count(self, kind: str) -> int:
        return sum(1 for n in self.nodes.values() if n.kind == kind)


def is_grad_node(node) -> bool:
    """Nodes built by ``sn.grad`` carry ``tag["grad_of"]`` (the contract with autodiff)."""
    return "grad_of" in node.tag


def is_fused(node) -> bool:
    return hasattr(node.op, "program")


def leaf_kind(var) -> str:
    if isinstance(var, SharedVariable):
        return "shared"
    if isinstance(var, Constant):
        return "constant"
    return "input"


#: a constant of up to this many elements is written in full in a box and in ``pp``
SHORT_CONSTANT = 4
#: a longer one by its type and this many values from each end
EDGE_VALUES = 2


def constant_text(var: Constant) -> str:
    """A constant as a box and ``pp``/``to_infix`` write it, by its value as it round-trips
    in its dtype (:func:`value_text`): ``2.0``, ``[1.0,2.0,3.0]`` up to
    :data:`SHORT_CONSTANT` elements; a longer one by its name, or unnamed by its type and
    first and last values in C order, ``<f64[1000]: 0.0,1.0,...,998.0,999.0>``, or its
    one value, ``<f32[3,3]: all 0.0>``."""
    if var.weak:
        return repr(var.data)
    value = var.value
    if value.size == 1:
        return value_text(value.reshape(()))
    if value.size <= SHORT_CONSTANT:
        return value_text(value, ",")
    if var.name:
        return var.name
    flat = np.ascontiguousarray(value).reshape(-1)
    raw = flat.view(np.uint8).reshape(flat.size, -1)
    if (raw == raw[0]).all():  # (bits: a -0.0 among zeros shows, NaNs are one value)
        return f"<{var.type}: all {value_text(flat[0])}>"
    if flat.size <= 2 * EDGE_VALUES + 1:
        shown = [value_text(v) for v in flat]
    else:
        head, tail = flat[:EDGE_VALUES], flat[-EDGE_VALUES:]
        shown = [*map(value_text, head), "...", *map(value_text, tail)]
    return f"<{var.type}: {','.join(shown)}>"


class _Builder:
    """Walks a Graph once, naming leaves the way the text form does and ops ``name#k``.

    Ids are in two namespaces: a user's name only ever follows ``var:`` (inputs, shared) or
    ``const:``, which no id symnb makes starts with (``add#0``, ``out:0``, ``fused#0.1:mul``,
    diff's ``removed:add#0``), so a variable named ``add#0`` stays a box of its own."""

    def __init__(self, graph, output_labels):
        self.graph = graph
        self.view = ViewGraph()
        self.names = _Namer()
        self.producer = self.view.producer
        self.op_counts: dict[str, int] = {}
        self.output_labels = output_labels

    def build(self) -> ViewGraph:
        for var in _all_leaves(self.graph):
            self._leaf(var)
        for node in self.graph.toposort():
            self._fused(node) if is_fused(node) else self._op(node)
        for i, var in enumerate(self.graph.outputs):
            self._output(i, var)
        return self.view

    def _leaf(self, var) -> None:
        kind = leaf_kind(var)
        name = self.names(var)
        label = constant_text(var) if kind == "constant" else name
        node_id = f"{'const' if kind == 'constant' else 'var'}:{name}"
        detail = "" if kind == "constant" and var.weak else str(var.type)
        self.producer[id(var)] = self.view.add(
            ViewNode(node_id, kind, label, detail, tooltip=var.describe(), source=_where(var))
        )

    def _op_id(self, name: str) -> str:
        k = self.op_counts.get(name, 0)
        self.op_counts[name] = k + 1
        return f"{name}#{k}"

    def _op(self, node) -> None:
        name = node.op.op_name()
        node_id = self._op_id(name)
        kind = "grad" if is_grad_node(node) else "op"
        detail = " ".join([_props_text(node.op), *(str(v.type) for v in node.outputs)])
        self.view.add(
            ViewNode(node_id, kind, name, detail.strip(), tooltip=str(node.op), source=_where(node))
        )
        self.view.nodes[node_id].members.append(node)
        self._inputs(node.inputs, [node_id] * len(node.inputs))
        for var in node.outputs:
            self.producer[id(var)] = node_id
        if isinstance(node.op, Scan):
            self._loop_cluster(node, node_id)

    def _loop_cluster(self, node, node_id: str) -> None:
        """The scan's inner graph as a cluster; a scan inside it gets a cluster of its own."""
        loop = node.op.loop
        inner = _Builder(loop.graph, loop_output_labels(loop)).build()
        cluster = f"cluster_{node_id}"
        self.view.clusters[cluster] = f"{node_id}: one step of the loop"
        for sub, label in inner.clusters.items():
            self.view.clusters[f"cluster_{node_id}/{sub[8:]}"] = label
        for box in inner.nodes.values():
            box.id = f"{node_id}/{box.id}"
            box.cluster = cluster if box.cluster is None else f"cluster_{node_id}/{box.cluster[8:]}"
            self.view.add(box)
        for edge in inner.edges:
            edge.src, edge.dst = f"{node_id}/{edge.src}", f"{node_id}/{edge.dst}"
            self.view.edges.append(edge)

    def _fused(self, node) -> None:
        """A Composite becomes a cluster holding one box per scalar step of its program."""
        cluster = f"cluster_{self._op_id('fused')}"
        self.view.clusters[cluster] = f"fused kernel → {node.outputs[0].type}"
        step_ids = []
        for j, (op, args) in enumerate(node.op.program):
            step_id = f"{cluster[8:]}.{j}:{op.op_name()}"
            consts = [repr(a[1]) for a in args if a[0] == "const"]
            label = " ".join([op.op_name(), *consts])
            kind = "grad" if is_grad_node(node) else "scalar"
            self.view.add(ViewNode(step_id, kind, label, cluster=cluster, source=_where(node)))
            step_ids.append(step_id)
            self._program_edges(node, args, step_id, step_ids)
        self.view.nodes[step_ids[-1]].members.append(node)
        self.producer[id(node.outputs[0])] = step_ids[-1]

    def _program_edges(self, node, args, step_id, step_ids) -> None:
        for arg in args:
            if arg[0] == "in":
                var = node.inputs[arg[1]]
                self.view.connect(self.producer[id(var)], step_id, str(var.type))
            elif arg[0] == "tmp":
                self.view.connect(step_ids[arg[1]], step_id)

    def _inputs(self, inputs, targets) -> None:
        for var, target in zip(inputs, targets):
            weak = isinstance(var, Constant) and var.weak
            self.view.connect(self.producer[id(var)], target, "" if weak else str(var.type))

    def _output(self, i, var) -> None:
        label = self.output_labels[i] if i < len(self.output_labels) else f"output {i}"
        node_id = self.view.add(ViewNode(f"out:{i}", "output", label, str(var.type)))
        self._inputs([var], [node_id])


def _all_leaves(graph) -> list:
    found = {id(v): v for v in graph.inputs}
    for var in leaves(graph.outputs):
        found.setdefault(id(var), var)
    return list(found.values())


def _props_text(op) -> str:
    parts = []
    for prop in getattr(op, "__props__", ()):
        value = getattr(op, prop, None)
        if prop != "program" and value not in (False, None, ()):
            parts.append(f"{prop}={value}")
    return " ".join(parts)


def _where(obj) -> str:
    """The user's line that built a node or variable, used to roll up loops."""
    var = obj.outputs[0] if hasattr(obj, "outputs") else obj
    src = getattr(var, "source", None)
    return f"{src.filename}:{src.lineno}" if src else ""


def loop_output_labels(loop) -> list[str]:
    """Names for the outputs of a loop's step (a scan's inner graph): its next states, its
    step outputs, its stop condition."""
    labels = [f"next state {j}" for j in range(loop.n_states)]
    return labels + [f"step output {i}" for i in range(loop.n_plain)] + ["until"] * loop.until


def graph_view(graph, output_labels=()) -> ViewGraph:
    """The full-detail picture of ``graph``; ``output_labels`` name its outputs."""
    return _Builder(graph, list(output_labels)).build()
