"""Running the rules: phases in order, each to a fixed point, every firing recorded.

Within a phase, graph rules run first (each yields firings until it has nothing left), then
node rules run from a worklist: every node once, in topological order, and again whenever a
firing might have made a new match for it (the nodes a firing added and the users of what it
replaced, two levels up). A phase stops at its fixed point, or, if its rules keep undoing
each other, after a firing budget proportional to the graph, with a RewriteLoopWarning.
"""

from __future__ import annotations

import time
from collections import Counter, deque

from symnb.config import config
from symnb.core.graph import OUTPUT, Graph
from symnb.core.shapes.warnings import quiet
from symnb.core.source import warn_at_user
from symnb.errors import GraphError
from symnb.opt import replacements
from symnb.opt.history import History
from symnb.opt.pattern import Match
from symnb.opt.select import plan
from symnb.opt.verify import RewriteError, verify


class RewriteLoopWarning(RuntimeWarning):
    """A phase hit its firing budget: some rules keep undoing each other."""


def optimize(graph: Graph, optimize="fast", verify_each_phase: bool | None = None) -> History:
    """Rewrite ``graph`` in place with the selected rules; return the history of firings."""
    history = History(graph)
    check = config.verify_rewrites if verify_each_phase is None else verify_each_phase
    with quiet():  # the user saw the shape warnings of their graph; rewrites add none
        for phase, rules in plan(optimize):
            start = time.perf_counter()
            PhaseRun(graph, phase, rules, history).run()
            history.add_time(phase, time.perf_counter() - start)
            if check:
                verify(graph, f"phase {phase!r}")
    return history


class RuleIndex:
    """Node rules by the op class their pattern matches, looked up along the op's MRO."""

    def __init__(self, rules):
        self.by_class: dict[type, list] = {}
        for rule in rules:
            self.by_class.setdefault(rule.pattern.op_class, []).append(rule)
        self.cache: dict[type, list] = {}

    def rules_for(self, op) -> list:
        kind = type(op)
        if kind not in self.cache:
            found = [r for cls in kind.__mro__ for r in self.by_class.get(cls, [])]
            self.cache[kind] = found
        return self.cache[kind]


class PhaseRun:
    """One phase over one graph."""

    def __init__(self, graph: Graph, phase: str, rules, history: History):
        self.graph, self.phase, self.history = graph, phase, history
        self.graph_rules = [r for r in rules if r.graph_level]
        self.index = RuleIndex([r for r in rules if not r.graph_level])
        self.budget = 20 * len(graph) + 1000
        self.fired: Counter = Counter()

    def run(self) -> None:
        for rule in self.graph_rules:
            if not self._run_graph_rule(rule):
                return
        if self.index.by_class:
            self._run_node_rules()

    # -- graph rules ----------------------------------------------------------------------
    def _run_graph_rule(self, rule) -> bool:
        firings = replacements.firings(rule, self.graph)
        while True:
            start = time.perf_counter()
            pairs = next(firings, None)
            if pairs is None:
                return True
            self._apply(rule, pairs, start)
            if self._over_budget():
                return False

    # -- node rules -----------------------------------------------------------------------
    def _run_node_rules(self) -> None:
        work = deque(self.graph.toposort())
        queued = set(work)
        while work:
            node = work.popleft()
            queued.discard(node)
            if node not in self.graph.nodes:
                continue
            touched = self._rewrite_node(node)
            if touched is None:
                continue
            for other in touched:
                if other not in queued:
                    queued.add(other)
                    work.append(other)
            if self._over_budget():
                return

    def _rewrite_node(self, node) -> list | None:
        """Fire the first rule that rewrites ``node``; the nodes to look at again."""
        for rule in self.index.rules_for(node.op):
            start = time.perf_counter()
            bound = rule.pattern.match_node(node)
            if bound is None:
                continue
            found = replacements.call(rule, Match(node, self.graph, bound))
            pairs = replacements.as_pairs(rule, node, found)
            if pairs:
                added = self._apply(rule, pairs, start)
                again = [node] if node in self.graph.nodes else []
                return added + self._users_near([new for _, new in pairs]) + again
        return None

    def _users_near(self, variables) -> list:
        """The nodes using these variables, and the nodes using theirs."""
        near = []
        for var in variables:
            for user in self._users(var):
                near.append(user)
                for out in user.outputs:
                    near += self._users(out)
        return near

    def _users(self, var) -> list:
        return [c for c, _ in self.graph.clients.get(var, []) if c != OUTPUT]

    # -- both -----------------------------------------------------------------------------
    def _apply(self, rule, pairs, start) -> list:
        pairs = [(old, replacements.checked(rule, old, new, self.graph)) for old, new in pairs]
        edits, added, removed = [], [], []
        for old, new in pairs:
            try:
                attached, dropped = self.graph.replace(old, new)
            except GraphError as exc:  # (one that reads what it replaces)
                message = f"{replacements.label(rule)} returned a bad replacement: {exc}"
                raise RewriteError(message) from None
            edits.append([(n, tuple(n.inputs)) for n in attached])  # inputs at that moment
            added += attached
            removed += dropped
        added, removed = _net(added, removed)
        _inherit_sources(pairs, added)
        seconds = time.perf_counter() - start
        self.history.record(rule.name, self.phase, seconds, pairs, edits, added, removed)
        self.fired[rule.name] += 1
        return added

    def _over_budget(self) -> bool:
        fired = sum(self.fired.values())
        if fired <= self.budget:
            return False
        top = ", ".join(f"{name} ({n}x)" for name, n in self.fired.most_common(3))
        warn_at_user(  # at the user's sn.function line (inside symnb: where optimize() ran)
            f"rewrite phase {self.phase!r} stopped after {fired} firings (its budget: "
            f"{self.budget}, 20 per node plus 1000); the rules "
            f"firing most were {top}: they probably undo each other",
            RewriteLoopWarning,
            stacklevel=4,
        )
        return True


def _inherit_sources(pairs, added) -> None:
    """Nodes a rule built take the user's line of what they replace, so a run-time error in
    them quotes the user's expression (as Theano's copy_stack_trace), not the line of the
    ``sn.function`` call that ran the rewrites; a node whose ``tag["source"]`` its rule set
    keeps that line (a shape computed from a matmul's operands names the matmul's). A value a
    rule built takes the name of the one it replaces too, so ``debugprint(f)`` and the
    optimised graph's drawing still say which value is the user's ``hidden``."""
    for old, new in pairs:
        if new.name is None and old.name is not None and new.owner in added:
            new.name = old.name
    where = next((old.source for old, _ in pairs if old.source is not None), None)
    if where is None:
        return
    for node in added:  # (a rule that knows a better line puts it in the node's tag)
        for out in node.outputs:
            out.source = node.tag.get("source", where)
    for old, new in pairs:
        if old.source is not None and new.owner in added and "source" not in new.owner.tag:
            new.source = old.source


def _net(added, removed) -> tuple[list, list]:
    """A node both attached and dropped within one firing is in neither list."""
    fresh, gone = set(added), set(removed)
    return [n for n in added if n not in gone], [n for n in removed if n not in fresh]
