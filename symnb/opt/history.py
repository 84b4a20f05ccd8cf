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

from symnb.core.graph import Graph


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

    def graph_after(self) -> Graph:
        """The graph as it was right after this step (rebuilt on demand)."""
        return self.history.replay(self.index + 1)

    def __str__(self):
        dropped = ", ".join(str(n.op) for n in self.removed) or "-"
        made = ", ".join(str(n.op) for n in self.added) or "-"
        return f"{self.phase}/{self.rule}: {dropped} -> {made}"


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
        lines = [f"{i:4d} {step}" for i, step in enumerate(self.steps)]
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
        for node, inputs in self.start.nodes:
            _copy_node(node, inputs, memo)
        graph = Graph(self.start.inputs, [_mapped(v, memo) for v in self.start.outputs], False)
        for step in self.steps[:n_steps]:
            for (old, new), attached in zip(step.pairs, step.edits):
                for node, inputs in attached:
                    _copy_node(node, inputs, memo)
                graph.replace(_mapped(old, memo), _mapped(new, memo))
        return graph


def _mapped(var, memo):
    return memo.get(id(var), var)


def _copy_node(node, inputs, memo) -> None:
    copy = node.clone_with([_mapped(v, memo) for v in inputs])
    for old, new in zip(node.outputs, copy.outputs):
        memo[id(old)] = new
