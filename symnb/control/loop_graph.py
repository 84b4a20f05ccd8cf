"""Building a canonical :class:`Loop` from placeholders and outer values, moving out of the
loop what does not change from step to step (loop-invariant code motion).

Both ``sn.scan`` (scan_build.py) and the gradient of a scan (scan_grad.py) build their loops
here, so the backward loop of BPTT gets the same motion (``W.T`` is transposed once).
"""

from __future__ import annotations

from symnb.control.ifelse import IfElse
from symnb.control.loop import Loop
from symnb.core.graph import Graph, ancestors, clone_graph, substitute
from symnb.core.source import user_location
from symnb.core.variable import Constant, Variable


class LoopInputs:
    """The inner placeholders and outer values of a loop, by kind, then the canonical loop."""

    def __init__(self):
        self.seqs: list[tuple[Variable, Variable]] = []
        self.states: list[tuple[Variable, Variable]] = []
        self.history: list[bool] = []
        self.updated: list[int] = []
        self.nonseqs: list[tuple[Variable, Variable]] = []
        self.replace: dict = {}
        self.labels: dict[int, str] = {}  # id(ph) -> its outer value in messages

    def seq(self, ph, outer, label: str | None = None):
        """A sequence read as ``ph``; ``label`` names it in messages (a tap's slice of a
        named sequence has no name of its own)."""
        self.seqs.append((ph, outer))
        self._label(ph, label)

    def state(self, ph, outer, history: bool, replaces=None, label: str | None = None):
        """A state read as ``ph``, starting from ``outer``; ``replaces``: the (shared)
        variable the step read that ``ph`` stands for; ``label``: its name in messages."""
        self.states.append((ph, outer))
        self._label(ph, label)
        self.history.append(history)
        if replaces is not None:
            self.replace[replaces] = ph
            self.updated.append(len(self.states) - 1)

    def _label(self, ph, label: str | None) -> None:
        if label is not None:
            self.labels[id(ph)] = label

    def given(self, ph, outer):
        self.nonseqs.append((ph, outer))

    def finish(
        self,
        inner_outs,
        until: bool,
        truncate: int = -1,
        check=None,
        backwards=False,
        counted=True,
        plain_names=(),
    ):
        """The Loop and its outer inputs (sequences, initial states, non-sequences);
        ``check(nonseqs)`` sees the non-sequences found before the loop is made; ``counted``:
        the outer n_steps is a step count (False: -1, the rows of the sequences);
        ``plain_names``: the plain outputs in messages (``Loop.plain_names``)."""
        if self.replace:
            inner_outs = substitute(inner_outs, self.replace)
        nonseqs = hoist(inner_outs, [p for p, _ in self.seqs + self.states], self.nonseqs)
        if check is not None:
            check(nonseqs, {id(p) for p, _ in self.nonseqs})
        inner_outs = clone_graph(inner_outs, {var: ph for var, ph, _ in nonseqs})
        pairs = self.seqs + self.states + [(ph, outer) for _, ph, outer in nonseqs]
        names = [self._name(i, p, o) for i, (p, o) in enumerate(pairs)]
        graph = Graph([p for p, _ in pairs], inner_outs, clone=False)
        loop = Loop(
            graph,
            len(self.seqs),
            len(self.states),
            tuple(self.history),
            until,
            tuple(names),
            truncate,
            backwards,
            tuple(self.updated),
            counted,
            user_location(),
            tuple(plain_names),
        )
        return loop, [o for _, o in pairs]

    def _name(self, i: int, ph, outer) -> str:
        """The outer input ``i`` in messages: its label, its name, else its position."""
        if id(ph) in self.labels:
            return self.labels[id(ph)]
        return f"'{outer.name}'" if outer.name else f"input {i}"


def placeholder(outer: Variable, name: str | None = None) -> Variable:
    """An inner input standing for ``outer`` (named ``name``, else as ``outer`` is). An
    unnamed input or shared value is named in messages after the assignment on the line
    that made it; a placeholder made on the user's line would take the name the line
    assigns to, that of the result of the whole ``sn.function(... sn.scan(...))``. So it has
    ``outer``'s line where ``outer`` is such a value, and none otherwise."""
    source = outer.source if outer.owner is None else None
    return Variable(outer.type, name=outer.name if name is None else name, source=source)


def hoist(inner_outs, per_step: list, given: list) -> list:
    """The loop's non-sequences: ``(inner variable, placeholder, outer value)`` for each
    value the step reads that depends on no per-step placeholder: a given non-sequence, a
    value from outside, or inner work computed from those alone, which then runs once. A
    value from outside is its own outer value (an implicit non-sequence: ``sn.grad`` and
    ``givens`` reach it as they reach a listed one); only the nodes that read a given
    non-sequence's placeholder are copied over its outer value (``substitute``)."""
    varying = {id(p) for p in per_step}
    order = ancestors(inner_outs)
    for node in order:
        if any(id(i) in varying for i in node.inputs):
            varying.update(id(o) for o in node.outputs)
    for node in _only_in_branches(order, inner_outs, varying):
        varying.update(id(o) for o in node.outputs)
    boundary: dict[int, Variable] = {}
    for node in order:
        if any(id(o) in varying for o in node.outputs):
            for var in node.inputs:
                _add_invariant(var, varying, boundary)
    for var in inner_outs:
        _add_invariant(var, varying, boundary)
    outer_of = {id(ph): outer for ph, outer in given}
    replace = dict(given)
    found = []
    for var in boundary.values():
        if id(var) in outer_of:
            found.append((var, var, outer_of[id(var)]))
            continue
        (outer,) = substitute([var], replace)
        found.append((var, placeholder(var), outer))
    return found


def _only_in_branches(order, inner_outs, varying) -> list:
    """The invariant nodes the step reads only through a branch of an ``ifelse`` that stays
    in the loop (directly or through other nodes only that branch reads): they stay in it
    too, where only the branch taken computes them (moved out, they would run on every call,
    even where no step takes that branch)."""
    uses: dict[int, list] = {}
    for node in order:
        for i, var in enumerate(node.inputs):
            uses.setdefault(id(var), []).append((node, i))
    unconditional = {id(v) for v in inner_outs}
    inside: set[int] = set()
    found = []
    for node in reversed(order):
        outs = node.outputs
        if any(id(o) in unconditional for o in outs):
            continue
        reads = [use for o in outs for use in uses.get(id(o), [])]
        if reads and all(_in_branch(user, i, varying, inside) for user, i in reads):
            inside.add(id(node))
            if not any(id(o) in varying for o in outs):
                found.append(node)
    return found


def _in_branch(user, i: int, varying, inside) -> bool:
    """Input ``i`` of ``user`` is read in a branch of an ifelse in the loop (or by a node
    that is)."""
    if id(user) in inside:
        return True
    return isinstance(user.op, IfElse) and i > 0 and id(user.outputs[0]) in varying


def _add_invariant(var, varying, boundary):
    if id(var) not in varying and not isinstance(var, Constant):
        boundary.setdefault(id(var), var)
