"""Debugging modes: linkers that run the optimised graph one node at a time and check each.

``sn.function(..., mode="debug")`` runs every node of the optimised graph on the backend, alone
(a one-node function of that backend), and its NumPy reference on the same input values, and
raises :class:`DebugModeError` at the first node whose results disagree: it names the node,
shows its inputs, both results, and the line of the user's program that built it. An impure
node (``pure = False``: ``print_value``, a random draw) runs once, on the backend alone: a
second run of its reference would print a second time.
``mode="nanguard"`` raises :class:`NanGuardError` at the first node that produces NaN or an
infinity (saying whether its inputs already held some). Both are slow: they are for finding a
bug, not for training. Like check mode (``checkmode.py``), they are linkers of this layer;
the backends know nothing of them.

``mode="nanguard"`` computes what a plain call computes: an ``sn.ifelse`` runs only the side
its condition picks (the regions of symnb/core/lazy.py), so a NaN in a branch not taken
(``ifelse(x > 0, log(x), 0)`` at -1) is no error and a ``print_value`` there prints nothing.
``mode="debug"`` checks every node, both sides of each ifelse included.
"""

from __future__ import annotations

import numpy as np

from symnb.backends import get_linker as backend_linker
from symnb.backends.branches import regions
from symnb.backends.linker import Linker
from symnb.core.graph import Graph
from symnb.core.lazy import TOP, LazyChoice
from symnb.core.variable import Constant, Variable
from symnb.errors import ArgumentError, SymnbError
from symnb.ops.composite import Composite

MODES = ("debug", "nanguard")


class DebugModeError(SymnbError, AssertionError):
    """A node's backend result differs from its NumPy reference (``mode="debug"``)."""


class NanGuardError(SymnbError, FloatingPointError):
    """A node produced NaN or an infinity (``mode="nanguard"``)."""


class _NodeByNode(Linker):
    """Runs the graph's nodes one by one, each as its own one-node function of ``backend``;
    subclasses check each node's results in ``check``."""

    backend = "py"  # the backend each node runs on (``mode_linker`` binds it)
    #: whether an ifelse runs only the side its condition picks, as a plain call does; False:
    #: every node runs (debug mode checks both branches)
    lazy = False

    def __init__(self, graph: Graph, leaves: list):
        self.graph, self.leaves, backend = graph, leaves, self.backend
        self.name = f"{self.mode}({backend})"
        self.device = backend
        self.n_results = len(graph.outputs)
        order = graph.toposort()
        self.linkers = {id(node): _alone(node, backend) for node in order}
        self.members = _members(graph, order) if self.lazy else {TOP: order}

    def run(self, leaf_values: list) -> list:
        values = {id(v): x for v, x in zip(self.leaves, leaf_values)}
        for v in self.leaves[len(leaf_values) :]:
            values[id(v)] = v.data if isinstance(v, Constant) else None
        # the regions nest as deep as the ifelses do: an explicit stack, not a recursion
        stack = [(iter(self.members.get(TOP, ())), None)]
        while stack:
            nodes, choice = stack[-1]
            for node in nodes:
                if id(node.outputs[0]) in values:  # (copied into two sides taken: run once)
                    continue
                if self.lazy and isinstance(node.op, LazyChoice):
                    side = _side_taken(node, values)
                    stack.append((iter(self.members.get((id(node), side), ())), node))
                    break
                self._step(node, values)
            else:
                stack.pop()
                if choice is not None:
                    self._choose(choice, values)
        return [_value(v, values) for v in self.graph.outputs]

    def _step(self, node, values: dict) -> None:
        """``node`` run alone on the backend, checked, its results kept in ``values``."""
        args = [_value(v, values) for v in node.inputs]
        fresh = [
            np.array(a, copy=True) for v, a in zip(node.inputs, args) if not isinstance(v, Constant)
        ]
        with np.errstate(all="ignore"):  # NaN and Inf are what the checks report
            got = [np.asarray(r) for r in self.linkers[id(node)].run(fresh)]
        self.check(node, args, got)
        values.update((id(v), r) for v, r in zip(node.outputs, got))

    def _choose(self, node, values: dict) -> None:
        """A lazy node whose side has run: its results are that side's values (checked), the
        other side's inputs never computed (None among the arguments)."""
        side = _side_taken(node, values)
        op = node.op
        args = [
            _value(v, values) if op.side_of(i) in (None, side) else None
            for i, v in enumerate(node.inputs)
        ]
        got = [None] * len(node.outputs)
        for i, a in enumerate(args):
            if op.side_of(i) == side:
                got[op.output_of(i)] = np.array(a, copy=True)
        self.check(node, args, got)
        values.update((id(v), r) for v, r in zip(node.outputs, got))

    def check(self, node, args, got) -> None:
        raise NotImplementedError


def _members(graph: Graph, order: list) -> dict:
    """Region -> the nodes computed in it, in ``order`` (symnb/core/lazy.py: a node read only
    under one side of an ifelse is in that side's region)."""
    found = regions(graph, order)
    members: dict = {}
    for node in order:
        for region in found.placed(node):  # (a node copied into sides: in each)
            members.setdefault(region, []).append(node)
    return members


def _side_taken(node, values: dict) -> str:
    cond = _value(node.op.condition(node), values)
    return "then" if bool(np.asarray(cond)) else "else"


class DebugLinker(_NodeByNode):
    """``mode="debug"``: each node's backend result against its NumPy reference."""

    mode = "debug"

    def check(self, node, args, got) -> None:
        if not node.op.pure:  # (print_value: its reference would print a second time)
            return
        # a weak constant (a Python scalar in the user's expression) stays a Python scalar, as
        # the "py" backend passes it, so float32 * 2 is float32 here too (NumPy 2's rule), not
        # float64 against an int64 array; the rest are copies the op may overwrite
        refs = [
            a if getattr(v, "weak", False) else np.array(a, copy=True)
            for v, a in zip(node.inputs, args)
        ]
        with np.errstate(all="ignore"):
            want = node.op.perform(*refs)
        _check_inputs_kept(node, args, refs)
        want = [np.asarray(w) for w in (want if len(node.outputs) > 1 else [want])]
        for var, g, w in zip(node.outputs, got, want):
            if not _agree(g, w):
                raise DebugModeError(
                    f"backend {self.backend!r} disagrees with the NumPy reference at "
                    f"{_node_text(node)}\n{_inputs_text(node, args)}\n  {self.backend}: "
                    f"{_summary(g)}\n  reference: {_summary(w)}{_built_at(var)}"
                )


class NanGuardLinker(_NodeByNode):
    """``mode="nanguard"``: stop at the first node whose results hold NaN or Inf, of those a
    plain call computes (an ifelse's side not taken is not run, as Theano's lazy VM)."""

    mode = "nanguard"
    lazy = True

    def check(self, node, args, got) -> None:
        for var, g in zip(node.outputs, got):
            if g.dtype.kind in "fc" and not np.isfinite(g).all():
                bad = [v.describe() for v, a in zip(node.inputs, args) if not _finite(a)]
                before = (
                    f"its inputs already held NaN/Inf: {', '.join(bad)}"
                    if bad
                    else "its inputs were all finite"
                )
                raise NanGuardError(
                    f"{_count(g)} at {_node_text(node)} ({before}){_first_step(node, args)}\n"
                    f"{_inputs_text(node, args)}\n  result: {_summary(g)}{_built_at(var)}"
                )


def _check_inputs_kept(node, args, refs) -> None:
    """Theano's DebugMode "BadDestroyMap": a reference that wrote into an input its
    ``destroy_map`` does not name would change, in a plain call, a value other nodes still
    read (a shared variable's, a user's array)."""
    declared = {i for ins in getattr(node.op, "destroy_map", {}).values() for i in ins}
    for i, (var, before, after) in enumerate(zip(node.inputs, args, refs)):
        if i in declared or after is before or not isinstance(after, np.ndarray):
            continue
        if not np.array_equal(after, before, equal_nan=after.dtype.kind in "fc"):
            raise DebugModeError(
                f"the NumPy reference of {_node_text(node)} wrote into its input {i} "
                f"{var.describe()}, which the op does not declare it overwrites "
                f"(destroy_map): a plain call would change a value that other nodes, a "
                f"shared variable or the caller still read. Compute into a new array (or "
                f"copy the input first)\n  input {i} before: {_summary(np.asarray(before))}"
                f"\n  after: {_summary(after)}{_built_at(node.outputs[0])}"
            )


LINKERS = {"debug": DebugLinker, "nanguard": NanGuardLinker}


def mode_linker(mode: str, backend: str):
    """A linker class for ``mode`` running on ``backend`` (what ``sn.function`` calls)."""
    if mode not in LINKERS:
        raise ArgumentError(f"unknown mode {mode!r}; choose one of {sorted(LINKERS)} (or None)")
    cls = LINKERS[mode]
    return type(f"{cls.__name__}[{backend}]", (cls,), {"backend": backend})


# -- one node alone -----------------------------------------------------------------------------
def _alone(node, backend: str):
    """A linker of ``backend`` for ``node`` applied to fresh variables (constants kept)."""
    fresh = [v if isinstance(v, Constant) else Variable(v.type, name=v.name) for v in node.inputs]
    outputs = node.op.make_node(*fresh).outputs
    inputs = [v for v in fresh if not isinstance(v, Constant)]
    constants = [v for v in fresh if isinstance(v, Constant)]
    return backend_linker(backend)(Graph(inputs, outputs), inputs + constants)


def _value(var, values):
    if isinstance(var, Constant):
        return var.data
    return values[id(var)]


# -- messages -----------------------------------------------------------------------------------
def _agree(got, want) -> bool:
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype.kind not in "fc":
        return bool(np.array_equal(got, want))
    tol = 1e-4 if want.dtype.itemsize <= 4 else 1e-10
    return bool(np.allclose(got, want, rtol=tol, atol=tol, equal_nan=True))


def _finite(a) -> bool:
    if a is None:  # (an ifelse's input on the side not taken: never computed)
        return True
    a = np.asarray(a)
    return a.dtype.kind not in "fc" or bool(np.isfinite(a).all())


def _count(g) -> str:
    return f"{int(np.isnan(g).sum())} NaN and {int(np.isinf(g).sum())} Inf"


def _node_text(node) -> str:
    args = ", ".join(v.describe() for v in node.inputs)
    return f"node {node.op}({args})"


def _inputs_text(node, args) -> str:
    return "\n".join(
        f"  {v.describe_as('input')}: "
        + ("not computed (its side not taken)" if a is None else _summary(np.asarray(a)))
        for v, a in zip(node.inputs, args)
    )


def _summary(a: np.ndarray) -> str:
    text = np.array2string(a, threshold=12, edgeitems=3, precision=6)
    return f"{a.dtype.name}{list(a.shape)} {text}"


def _first_step(node, args) -> str:
    """Inside a fused node: the first step of its program whose reference gives NaN/Inf."""
    if not isinstance(node.op, Composite):
        return ""
    with np.errstate(all="ignore"):
        results = node.op._run(node.op.program, args)
    for (op, _), result in zip(node.op.program, results):
        if not _finite(result):
            return f"; inside it, {op} is the first step to give NaN/Inf"
    return ""


def _built_at(var) -> str:
    return f"\n  built at {var.source}" if var.source else ""
