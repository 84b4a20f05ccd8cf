"""The graph a function compiles: its own copy of the nodes, their clients, safe replacement.

Leaves (inputs, constants, shared variables) are shared with the user's expressions; every
node is cloned, so rewrites can edit a Graph without touching what the user built.
"""

from __future__ import annotations

from symnb.core.dims import DimMismatch, unify
from symnb.core.op import Apply
from symnb.core.variable import Constant, SharedVariable, Variable
from symnb.errors import GraphError

OUTPUT = "output"  # the client that stands for "is a graph output"


def ancestors(outputs: list[Variable]) -> list[Apply]:
    """Nodes that the outputs depend on, inputs before users (iterative: deep graphs are fine)."""
    order: list[Apply] = []
    seen: set[int] = set()
    for out in outputs:
        stack = [(out.owner, False)] if out.owner else []
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((i.owner, False) for i in reversed(node.inputs) if i.owner)
    return order


def leaves(outputs: list[Variable]) -> list[Variable]:
    """Variables with no owner that the outputs depend on, in first-use order."""
    found: dict[int, Variable] = {}
    for out in outputs:
        if out.owner is None:
            found.setdefault(id(out), out)
    for node in ancestors(outputs):
        for var in node.inputs:
            if var.owner is None:
                found.setdefault(id(var), var)
    return list(found.values())


def clone_graph(outputs: list[Variable], replace: dict | None = None) -> list[Variable]:
    """Copies of the outputs with every node cloned and ``replace`` substituted."""
    memo: dict[int, Variable] = {id(k): v for k, v in (replace or {}).items()}
    for node in ancestors(outputs):
        if any(id(o) in memo for o in node.outputs):
            continue
        new = node.clone_with([memo.get(id(i), i) for i in node.inputs])
        for old, var in zip(node.outputs, new.outputs, strict=True):
            memo[id(old)] = var
    return [memo.get(id(o), o) for o in outputs]


class Graph:
    """Inputs, outputs and the nodes between them, with each variable's clients."""

    def __init__(self, inputs: list[Variable], outputs: list[Variable], clone: bool = True):
        self.inputs = list(inputs)
        self.outputs = clone_graph(outputs) if clone else list(outputs)
        self.clients: dict[Variable, list[tuple]] = {}
        self.nodes: set[Apply] = set()
        for node in ancestors(self.outputs):
            self._attach(node)
        for i, out in enumerate(self.outputs):
            self.clients.setdefault(out, []).append((OUTPUT, i))
        self._check_inputs()

    def _check_inputs(self):
        given = {id(v) for v in self.inputs}
        for var in leaves(self.outputs):
            if id(var) in given or isinstance(var, (Constant, SharedVariable)):
                continue
            raise GraphError(
                f"the outputs depend on {var.describe()}, which is not among the inputs"
                + (f" (created at {var.source})" if var.source else "")
            )

    def _attach(self, node: Apply):
        self.nodes.add(node)
        for i, var in enumerate(node.inputs):
            self.clients.setdefault(var, []).append((node, i))

    # -- queries --------------------------------------------------------------------------
    def toposort(self) -> list[Apply]:
        return ancestors(self.outputs)

    def variables(self) -> list[Variable]:
        seen = {id(v): v for v in leaves(self.outputs)}
        for node in self.toposort():
            for v in node.outputs:
                seen.setdefault(id(v), v)
        return list(seen.values())

    def __len__(self):
        return len(self.nodes)

    # -- editing --------------------------------------------------------------------------
    def replace(self, old: Variable, new: Variable) -> None:
        """Make every client of ``old`` use ``new``; types must agree (same dtype, ndim)."""
        check_replaceable(old, new)
        for node in ancestors([new]):
            if node not in self.nodes:
                self._attach(node)
        for client, i in self.clients.pop(old, []):
            if client == OUTPUT:
                self.outputs[i] = new
            else:
                client.inputs[i] = new
            self.clients.setdefault(new, []).append((client, i))
        self._prune()

    def _prune(self):
        """Forget nodes that no output depends on any more."""
        live = set(self.toposort())
        for node in self.nodes - live:
            for i, var in enumerate(node.inputs):
                users = self.clients.get(var, [])
                users[:] = [(c, j) for c, j in users if not (c is node and j == i)]
        self.nodes = live


def check_replaceable(old: Variable, new: Variable) -> None:
    """A replacement keeps the dtype, the rank and every provable dim."""
    a, b = old.type, new.type
    ok = a.dtype == b.dtype and a.ndim == b.ndim
    try:
        ok = ok and all(unify(x, y) is not None or x is None for x, y in zip(a.shape, b.shape))
    except DimMismatch:
        ok = False
    if not ok:
        raise GraphError(f"cannot replace {old.describe()} with {new.describe()}")
