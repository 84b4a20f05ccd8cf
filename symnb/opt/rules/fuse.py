"""Fuse: each maximal elementwise subgraph becomes one Composite node (one kernel).

A group grows from an elementwise node (its root) into the elementwise nodes feeding it whose
every user is in the group, and through the broadcasts between them (dimshuffles that only
add leading length-1 axes, which NumPy broadcasting adds anyway): a value read twice inside
the group (``h`` in ``tanh(h * w + sin(h))``, ``s`` in ``s * (1 - s)``) is a temporary of
the kernel, computed once. A node also used outside the group stays the root of its own
group, so no value is computed twice. Weak Python scalars become ``const``
arguments of the program; every other leaf or outside value is an input. A group stops growing
at MAX_INPUTS inputs: a kernel's arguments are bounded (runner.c takes 64 operands a step and
declined a whole plan with more, which then ran every call in Python), and past a few dozen
streams a loop gains nothing from fusion.
"""

from __future__ import annotations

from symnb.core.variable import Constant
from symnb.ops.composite import Composite
from symnb.ops.elemwise import Elemwise
from symnb.ops.shape import DimShuffle
from symnb.opt.registry import graph_rule
from symnb.opt.rules._util import fits

#: inputs of one fused kernel at most (see the module's docstring)
MAX_INPUTS = 32


@graph_rule("fuse")
def fuse_elemwise(graph):
    """A maximal elementwise subgraph (with its broadcasts) -> one composite node."""
    order = graph.toposort()
    position = {node: i for i, node in enumerate(order)}
    for root, members in _groups(graph, order):
        new = _composite(root, sorted(members, key=position.get))
        if new is None or not fits(root.out, new):
            # a broadcast made the result's rank: keep the broadcasts outside this time
            members = _grow(graph, root, set(), with_broadcasts=False)
            new = _composite(root, sorted(members, key=position.get))
        if new is not None and fits(root.out, new):
            yield [(root.out, new)]


def _groups(graph, order):
    """(root, members) for each group of two or more elementwise ops, outputs first."""
    taken: set = set()
    groups = []
    for root in reversed(order):
        if root in taken or not _is_elemwise(root):
            continue
        members = _grow(graph, root, taken)
        taken |= members
        if sum(_op_count(n) for n in members) >= 2:
            groups.append((root, members))
    return reversed(groups)


def _grow(graph, root, taken, with_broadcasts=True) -> set:
    """The members of root's group: producers join once every user of their value is a
    member (one met before its other users waits for them)."""
    members, stack, inputs = {root}, [root.inputs], set(root.inputs)  # stack: values read
    waiting: dict[int, object] = {}  # values some of whose users are not members yet
    while stack:
        while stack:
            for var in stack.pop():
                owner = var.owner
                if owner is None or owner in taken or owner in members:
                    continue
                if not (_is_elemwise(owner) or (with_broadcasts and _is_broadcast(owner))):
                    continue
                if not _used_only_within(graph, var, members):
                    waiting[id(var)] = var
                    continue
                grown = (inputs - {var}) | set(owner.inputs)
                if len(grown) <= MAX_INPUTS:
                    members.add(owner)
                    stack.append(owner.inputs)
                    inputs = grown
                waiting.pop(id(var), None)
        for key, var in list(waiting.items()):  # users that have joined since
            if var.owner not in members and _used_only_within(graph, var, members):
                del waiting[key]
                stack.append((var,))
    return members


def _used_only_within(graph, var, members) -> bool:
    """Every user of ``var`` is a member (a graph output's user is none)."""
    return all(user in members for user, _ in graph.clients.get(var, []))


def _is_elemwise(node) -> bool:
    op = node.op
    return (
        isinstance(op, Elemwise) and len(node.outputs) == 1 and not getattr(op, "destroy_map", None)
    )


def _is_broadcast(node) -> bool:
    """A dimshuffle that only puts length-1 axes in front (what broadcasting does itself)."""
    if not isinstance(node.op, DimShuffle):
        return False
    order = node.op.order
    lead = len(order) - node.inputs[0].type.ndim
    return lead > 0 and order == ("x",) * lead + tuple(range(len(order) - lead))


def _op_count(node) -> int:
    if isinstance(node.op, Composite):
        return len(node.op.program)
    return 1 if _is_elemwise(node) else 0


def _composite(root, members):
    """Build the composite computing ``root.out`` from the members (in topological order)."""
    program = Program()
    for node in members:
        if _is_broadcast(node):
            program.alias(node.out, node.inputs[0])
        else:
            program.add(node)
    if not program.inputs:
        return None
    return Composite(program.steps, root.out.type.dtype, len(program.inputs))(*program.inputs)


class Program:
    """Steps in Composite's format, and the outside variables they read."""

    def __init__(self):
        self.steps: list = []
        self.inputs: list = []
        self.refs: dict[int, tuple] = {}

    def ref(self, var) -> tuple:
        if id(var) not in self.refs:
            if isinstance(var, Constant) and var.weak:
                return ("const", var.data, var.type.dtype.name)
            self.inputs.append(var)
            self.refs[id(var)] = ("in", len(self.inputs) - 1)
        return self.refs[id(var)]

    def alias(self, var, source) -> None:
        self.refs[id(var)] = self.ref(source)

    def add(self, node) -> None:
        """One step for the node (its inputs already referenced: members come in order)."""
        args = [self.ref(v) for v in node.inputs]
        if isinstance(node.op, Composite):
            self._splice(node.op.program, args)
        else:
            self.steps.append((node.op, tuple(args)))
        self.refs[id(node.out)] = ("tmp", len(self.steps) - 1)

    def _splice(self, program, args) -> None:
        """Inline another composite's steps, renumbering its temporaries."""
        offset = len(self.steps)
        for op, refs in program:
            self.steps.append((op, tuple(_renumber(r, args, offset) for r in refs)))


def _renumber(ref, args, offset):
    if ref[0] == "in":
        return args[ref[1]]
    if ref[0] == "tmp":
        return ("tmp", ref[1] + offset)
    return ref
