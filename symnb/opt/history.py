"""The rewrite history as data: one :class:`Step` per firing, in order.

Recording is cheap: a step keeps the replaced ``(old, new)`` pairs, the nodes dropped and
added, and the inputs each added node had when it was made (later rewrites edit nodes in
place). ``Step.graph_after()`` rebuilds the graph of that moment by replaying the steps on a
fresh copy of the graph the optimiser started from, so only the graphs someone looks at are
ever built.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import groupby

import numpy as np

from symnb.core.graph import Graph
from symnb.core.variable import Constant


class Start:
    """The graph the optimiser began with: each node and the inputs it had then."""

    def __init__(self, graph: Graph):
        self.inputs = list(graph.inputs)
        self.outputs = list(graph.outputs)
        self.nodes = [(node, tuple(node.inputs)) for node in graph.toposort()]


@dataclass
class Step:
    """One firing of one rule: what it replaced, what it dropped and added, how long it took."""

    rule: str
    phase: str
    seconds: float
    pairs: list = field(repr=False)
    removed: list = field(repr=False)
    added: list = field(repr=False)
    edits: list = field(repr=False)  # per pair: (node attached, its inputs then)
    history: History | None = field(default=None, repr=False, compare=False)
    index: int = 0
    #: outputs the step added to the graph, each with the nodes attached for it and their
    #: inputs then (``History.record_outputs``: the givens' shape checks kept after the rules)
    outputs: list = field(default_factory=list, repr=False)

    def graph_after(self) -> Graph:
        """The graph as it was right after this step (rebuilt on demand)."""
        return self.history.replay(self.index + 1)

    def __str__(self):
        """One line: the ops dropped -> the ops added (at most a few of each, then a count
        per op), or, for a step that only rewired values (merging equal constants), the
        values replaced."""
        if not (self.removed or self.added):
            return f"{self.phase}/{self.rule}: {_pairs(self.pairs)}"
        return f"{self.phase}/{self.rule}: {_ops(self.removed)} -> {_ops(self.added)}"


#: a step's line names at most this many nodes or pairs (then counts them) ...
SHOWN = 4
#: ... each in at most this many characters (a fused op of 1000 ops spells all of them)
SHOWN_CHARS = 60


def _short(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else f"{text[: SHOWN_CHARS - 3]}..."


def _ops(nodes) -> str:
    """``sin, add`` or, for many, ``add, sin, add, sin, ... (2000 ops: 1000 add, 1000 sin)``."""
    if not nodes:
        return "-"
    names = [_short(str(n.op)) for n in nodes]
    if len(names) <= SHOWN:
        return ", ".join(names)
    each = Counter(n.op.op_name() for n in nodes)
    counts = ", ".join(f"{k} {name}" for name, k in each.most_common())
    return f"{', '.join(names[:SHOWN])}, ... ({len(names)} ops: {counts})"


def _pairs(pairs) -> str:
    """The values a step replaced: ``1:i64[] -> 1:i64[]`` (a constant shows its value)."""
    if not pairs:
        return "-"
    shown = ", ".join(f"{_value(old)} -> {_value(new)}" for old, new in pairs[:SHOWN])
    more = f", ... ({len(pairs)} values)" if len(pairs) > SHOWN else ""
    return f"replaced {shown}{more}"


def _value(var) -> str:
    """``name:type``, or for a constant of one element ``value:type``."""
    if isinstance(var, Constant):
        value = np.asarray(var.value)
        if value.size == 1:
            return _short(f"{value.item()!r}:{var.type}")
    return _short(repr(var))


class History:
    """``f.rewrites``: the steps in order, per-rule counts and per-phase times."""

    def __init__(self, graph: Graph | None = None):
        self.start = Start(graph) if graph is not None else None
        self.steps: list[Step] = []
        self.times: dict[str, float] = {}

    def record(self, rule, phase, seconds, pairs, edits, added, removed) -> Step:
        step = Step(
            rule=rule,
            phase=phase,
            seconds=seconds,
            pairs=list(pairs),
            removed=list(removed),
            added=list(added),
            edits=edits,
            history=self,
            index=len(self.steps),
        )
        self.steps.append(step)
        return step

    def record_outputs(self, rule, phase, seconds, outputs) -> Step:
        """A step that added outputs to the graph (``outputs``: ``(variable, nodes attached
        for it)`` pairs, each as ``Graph.add_output`` attached them), not a rule's firing:
        what ``sn.function`` adds once the rules ran, so that the last step's graph is the
        optimised graph."""
        step = self.record(rule, phase, seconds, [], [], [n for _, a in outputs for n in a], [])
        step.outputs = [(v, [(n, tuple(n.inputs)) for n in attached]) for v, attached in outputs]
        return step

    def add_time(self, phase: str, seconds: float) -> None:
        self.times[phase] = self.times.get(phase, 0.0) + seconds

    # -- the sequence ---------------------------------------------------------------------
    def __len__(self):
        return len(self.steps)

    def __iter__(self):
        return iter(self.steps)

    def __getitem__(self, i):
        return self.steps[i]

    def counts(self) -> dict[str, int]:
        """Rule name -> number of firings."""
        return dict(Counter(step.rule for step in self.steps))

    def phase_times(self) -> dict[str, float]:
        """Phase -> seconds spent in it (matching included, not only firings)."""
        return dict(self.times)

    def total_time(self) -> float:
        return sum(self.times.values())

    def __str__(self):
        """One line per step, but a run of steps of one rule whose lines are a few kinds
        repeated (999 merges of equal constants) is one line: the run's steps, and each kind
        with its count."""
        lines = []
        for (phase, rule), run in groupby(enumerate(self.steps), lambda p: (p[1].phase, p[1].rule)):
            run = [(i, str(step)) for i, step in run]
            kinds = Counter(text.partition(": ")[2] for _, text in run)
            if len(run) < 3 or len(kinds) > SHOWN:
                lines += [f"{i:4d} {text}" for i, text in run]
                continue
            each = "; ".join(f"{kind} (x{n})" if n > 1 else kind for kind, n in kinds.items())
            first, last = run[0][0], run[-1][0]
            lines.append(f"{first:4d} {phase}/{rule} x{len(run)} (steps {first}-{last}): {each}")
        return "\n".join(lines) or "(no rewrites)"

    def __repr__(self):
        return f"<rewrite history: {len(self.steps)} steps, {self.counts()}>"

    # -- replay ---------------------------------------------------------------------------
    def graph_before(self) -> Graph:
        """The graph the optimiser started from (a fresh copy)."""
        return self.replay(0)

    def replay(self, n_steps: int) -> Graph:
        """A fresh graph equal to the optimised one after the first ``n_steps`` steps."""
        if self.start is None:
            raise ValueError("this history has no starting graph to replay from")
        memo: dict[int, object] = {}
        origins: dict = {}  # copy -> the node it copies
        for node, inputs in self.start.nodes:
            _copy_node(node, inputs, memo, origins)
        outputs = [_mapped(v, memo) for v in self.start.outputs]
        graph = Replayed(self.start.inputs, outputs, origins)
        for step in self.steps[:n_steps]:
            for (old, new), attached in zip(step.pairs, step.edits):
                for node, inputs in attached:
                    _copy_node(node, inputs, memo, origins)
                graph.replace(_mapped(old, memo), _mapped(new, memo))
            for var, attached in step.outputs:
                for node, inputs in attached:
                    _copy_node(node, inputs, memo, origins)
                graph.add_output(_mapped(var, memo))
        return graph


class Replayed(Graph):
    """A graph rebuilt from a history: its nodes are copies of the nodes the optimiser
    edited, ``origins`` mapping each copy to the node it copies. Two replays of one
    history (and the optimised graph itself, whose nodes are those) have the same node
    where it is the same node of the history, rewired or not: a diff of two steps need not
    guess it from the structure (``symnb.viz.diff``)."""

    def __init__(self, inputs, outputs, origins: dict):
        super().__init__(inputs, outputs, False)
        self.origins = origins

    def origin(self, node):
        """The node of the history that ``node`` copies."""
        return self.origins.get(node, node)


def _mapped(var, memo):
    return memo.get(id(var), var)


def _copy_node(node, inputs, memo, origins) -> None:
    copy = node.clone_with([_mapped(v, memo) for v in inputs])
    origins[copy] = node
    for old, new in zip(node.outputs, copy.outputs):
        memo[id(old)] = new
