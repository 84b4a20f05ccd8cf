"""Patterns that rules declare: which op to match at a node, and what its inputs must be.

    Pattern(Log, Pattern(Add, Const("one"), "x"), commutative=True)

matches ``log(1 + x)`` and ``log(x + 1)``; a string names a variable the rule receives (the
same name twice must be the same variable, so ``Pattern(Sub, "x", "x")`` is ``x - x``),
``Const`` matches a constant, and a nested ``Pattern`` matches the node that computes that
input. Matching is structural only; what a rule checks beyond structure (values, dtypes,
shapes, other users) it checks in its own function.
"""

from __future__ import annotations

from symnb.core.variable import Constant, Variable


class Match:
    """What a pattern bound: the matched node, the graph, and each named variable."""

    def __init__(self, node, graph, bound: dict):
        self.node = node
        self.graph = graph
        self.bound = bound

    def __getattr__(self, name):
        try:
            return self.__dict__["bound"][name]
        except KeyError:
            raise AttributeError(f"the pattern bound no variable named {name!r}") from None

    @property
    def out(self) -> Variable:
        """The matched node's (only) output: what most rules replace."""
        return self.node.out

    def owner(self, name: str):
        """The node computing a bound variable (None for leaves)."""
        return self.bound[name].owner


class Const:
    """Matches a constant (and binds it under ``name``)."""

    def __init__(self, name: str):
        self.name = name

    def match(self, var: Variable, bound: dict) -> bool:
        return isinstance(var, Constant) and _bind(self.name, var, bound)

    def __repr__(self):
        return f"Const({self.name!r})"


class Pattern:
    """An op (a class, matched with isinstance, or an instance, matched with ==) and the
    patterns of its inputs; no input patterns means any inputs."""

    def __init__(self, op, *inputs, commutative: bool = False, name: str | None = None):
        self.op = op
        self.inputs = tuple(inputs)
        self.commutative = commutative
        self.name = name

    @property
    def op_class(self) -> type:
        """The class the engine indexes this pattern by."""
        return self.op if isinstance(self.op, type) else type(self.op)

    def matches_op(self, op) -> bool:
        return isinstance(op, self.op) if isinstance(self.op, type) else op == self.op

    def match_node(self, node) -> dict | None:
        """The bindings if ``node`` matches, else None."""
        bound: dict = {}
        return bound if self._match_node(node, bound) else None

    def match(self, var: Variable, bound: dict) -> bool:
        """As an input pattern: does the node computing ``var`` match?"""
        node = var.owner
        if node is None or len(node.outputs) != 1:
            return False
        return self._match_node(node, bound) and (self.name is None or _bind(self.name, var, bound))

    def _match_node(self, node, bound: dict) -> bool:
        if not self.matches_op(node.op):
            return False
        if not self.inputs:
            return True
        if len(node.inputs) != len(self.inputs):
            return False
        orders = [node.inputs]
        if self.commutative and len(node.inputs) == 2:
            orders.append(node.inputs[::-1])
        for inputs in orders:
            trial = dict(bound)
            if all(_match_input(p, v, trial) for p, v in zip(self.inputs, inputs)):
                bound.update(trial)
                return True
        return False

    def __repr__(self):
        name = self.op.op_name() if isinstance(self.op, type) else str(self.op)
        inner = ", ".join(map(_show, self.inputs))
        return f"{name}({inner})" if self.inputs else f"{name}(...)"


def _match_input(pattern, var: Variable, bound: dict) -> bool:
    if isinstance(pattern, str):
        return _bind(pattern, var, bound)
    return pattern.match(var, bound)


def _bind(name: str, var: Variable, bound: dict) -> bool:
    """Bind ``name`` to ``var``; a name already bound must be the very same variable."""
    if name in bound:
        return bound[name] is var
    bound[name] = var
    return True


def _show(pattern) -> str:
    return pattern if isinstance(pattern, str) else repr(pattern)
