"""Building a plan (symnb/backends/plan.py) from a graph: slots, steps chosen by op class.

``PlanBuilder`` numbers the slots and makes the records; the one ``PlanTable`` (``PLANS``)
maps op classes to functions ``(builder, node) -> step`` per target capability
(``@PLANS.register(DimShuffle)``, beside the step's code). ``builder.launch(...)`` is the
one way a kernel becomes a step, so a new kind of kernel needs no change in any executor. The
layout ops below become ``View`` steps that runner.c computes without calling Python.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from symnb.backends.plan import (
    KernelRef,
    Launch,
    Library,
    OwnResults,
    Plan,
    View,
    basic_index,
    promised_shape,
)
from symnb.core.variable import Constant
from symnb.ops.broadcast import BroadcastLike, SumToLike
from symnb.ops.checks import SameShape
from symnb.ops.index import Subtensor
from symnb.ops.shape import DimShuffle, ReducedSize, Reshape, ReshapeLike, Shape


class PlanTable:
    """How each op class is planned, per target capability: ``op class -> [(needs, plan)]``.

    A plan is ``plan(builder, node) -> step``; ``needs`` names what a target must be able to
    do for it (``"blas"``: call a host BLAS; ``"loops"``: run a loop's plan in its executor;
    ``"offset_views"``: views that start past their array's first element; ``"branches"``: run
    only the side of an ifelse taken; ``"window_kernels"``: a device's pad and max-pool
    gradient kernels, symnb/backends/device/windows.py). A linker declares its capabilities,
    and ``find`` gives the first entry it can use, walking the op's classes from the most
    specific; an op with none runs its NumPy reference. There is one table (``PLANS``):
    targets register their own entries beside their code
    (``@PLANS.register(Matmul, needs={"blas"})``).
    """

    def __init__(self):
        self._entries: dict[type, list[tuple[frozenset, object]]] = {}

    def register(self, *classes, needs=()):
        needs = frozenset(needs)

        def add(plan):
            for cls in classes:
                entries = self._entries.setdefault(cls, [])
                entries.append((needs, plan))
                entries.sort(key=lambda e: -len(e[0]))  # the most demanding entry first
            return plan

        return add

    def find(self, op, capabilities):
        """The plan for ``op`` on a target with ``capabilities``, or None."""
        for cls in type(op).__mro__:
            for needs, plan in self._entries.get(cls, ()):
                if needs <= capabilities:
                    return plan
        return None

    def rows(self) -> list[tuple[str, str, str]]:
        """``(op class, needs, plan)`` for every entry, for docs and tests."""
        return sorted(
            (cls.__name__, ", ".join(sorted(needs)) or "-", plan.__qualname__)
            for cls, entries in self._entries.items()
            for needs, plan in entries
        )


#: the one table of every target's planners (see ``PlanTable``)
PLANS = PlanTable()


class PlanBuilder:
    """Slots and steps of one plan: ``leaves`` (arguments, then constants) take the first
    slots; ``slot[id(var)]`` is a variable's slot once a step computes it.

    An id is unique only among live objects, and the temporaries an op is planned as
    (``Steps.temp``: im2col's columns, window gradients) live no longer than their node's
    planning: the builder keeps every variable it numbered (``numbered``), so that a later
    temporary, made where a dead one was, cannot take its slot and overwrite the dead one's
    value while a later step still reads it (or, on a device backend, have the dead value's
    copy on the other side read in its place)."""

    def __init__(self, graph, leaves: list):
        self.graph = graph
        self.slot = {id(v): i for i, v in enumerate(leaves)}
        self.leaves = leaves
        self.numbered: list = []  # every variable given a slot here, kept alive (see above)
        self.n_leaves = len(leaves)
        self.nslots = len(leaves)
        self.kernel_refs: list[KernelRef] = []
        #: constants the graph does not hold (a kernel's scalar operand, ``Builder.scalar``):
        #: their signature -> (slot, array), one slot per value however many kernels read it
        self.operand_constants: dict = {}

    def _new_slot(self, var) -> int:
        self.numbered.append(var)
        self.slot[id(var)] = self.nslots
        self.nslots += 1
        return self.slot[id(var)]

    def slots_of(self, variables) -> tuple[int, ...]:
        return tuple(self.slot[id(v)] for v in variables)

    def operand_slot(self, var) -> int:
        """A kernel operand's slot; a Constant that is no leaf of the graph (a scalar operand
        the kernel builder made) gets a constant slot holding its array, made now, once."""
        slot = self.slot.get(id(var))
        if slot is not None or not isinstance(var, Constant):
            return self.slot[id(var)]
        key = var.signature()
        if key in self.operand_constants:
            self.numbered.append(var)
            self.slot[id(var)] = self.operand_constants[key][0]
        else:
            self.operand_constants[key] = (self._new_slot(var), var.value)
        return self.slot[id(var)]

    def out_slots(self, node) -> tuple[int, ...]:
        """Slots for the node's outputs (made once: a fallback and its step share them)."""
        return tuple(self._slot_or_new(v) for v in node.outputs)

    def _slot_or_new(self, var) -> int:
        slot = self.slot.get(id(var))
        return self._new_slot(var) if slot is None else slot

    def library(self, node, fn=None, kind: str = "library", inputs=None) -> Library:
        """The node's NumPy reference (or ``fn`` of ``inputs``) as a step."""
        dtypes = tuple(v.type.dtype for v in node.outputs)
        shapes = tuple(promised_shape(v) for v in node.outputs)
        fn = node.op.perform if fn is None else fn
        ins = self.slots_of(node.inputs if inputs is None else inputs)
        return Library(fn, ins, self.out_slots(node), dtypes, node, kind, shapes)

    def kernel(self, name: str, source: str, description=None) -> KernelRef:
        """A kernel the linker compiles with the others of the plan, then fills in;
        ``description`` is its kernel description (device linkers build programs from it)."""
        ref = KernelRef(name, source, description)
        self.kernel_refs.append(ref)
        return ref

    def launch(
        self,
        node,
        source: str,
        ins,
        outs,
        inplace=None,
        empty="skip",
        fallback=None,
        description=None,
        into=None,
    ):
        """The step calling the kernel in ``source`` (see ``Launch``): ``ins`` = [(variable,
        absent axes)], ``outs`` = [(variable, dtype, absent axes, keepdims)], ``inplace`` =
        the input whose buffer output 0 may take, ``into`` the variable output 0 is written
        into; ``fallback`` defaults to the node's reference."""
        ndim = launch_rank(ins, outs)
        fallback = self.owning(fallback or self.library(node))
        in_slots = tuple((self.operand_slot(v), tuple(a)) for v, a in ins)
        out_slots = tuple(
            (self._slot_or_new(v), np.dtype(d), tuple(a), bool(keep)) for v, d, a, keep in outs
        )
        ref = self.kernel(str(node.op), source, description)
        into_slot = None if into is None else self.slot[id(into)]
        return Launch(ref, in_slots, out_slots, ndim, inplace, empty, node, fallback, into_slot)

    @staticmethod
    def owning(fallback: Library) -> Library:
        """A kernel or BLAS step's fallback, its results never an argument's memory."""
        if isinstance(fallback.fn, OwnResults):
            return fallback
        return dataclasses.replace(fallback, fn=OwnResults(fallback.fn, fallback.node))

    def is_result(self, variable) -> bool:
        """Whether ``variable`` is one of the graph's outputs (the caller owns it)."""
        return any(variable is v for v in self.graph.outputs)

    def view(self, node, how: str, axes=(), target=(), like=None, bounds=()) -> View:
        fallback = self.library(node)
        like_slot = None if like is None else self.slot[id(like)]
        src = self.slot[id(node.inputs[0])]
        out = fallback.outs[0]
        axes, target, bounds = tuple(axes), tuple(target), self.slots_of(bounds)
        return View(how, src, like_slot, out, axes, target, node, fallback, bounds)

    def plan_of(self, steps, n_inputs: int) -> Plan:
        inputs = tuple((v.type.dtype, v.type.shape) for v in self.leaves[:n_inputs])
        constants = tuple((i, v.data) for i, v in enumerate(self.leaves) if isinstance(v, Constant))
        nargs = self.n_leaves - len(constants)
        constants += tuple(self.operand_constants.values())
        outputs = self.slots_of(self.graph.outputs)
        return Plan(inputs, nargs, self.nslots, constants, tuple(steps), outputs)


def launch_rank(ins, outs) -> int:
    """The rank of a launch's index space: ``ins`` = [(variable, absent axes)], ``outs`` =
    [(variable, dtype, absent axes, keepdims)]."""
    return max(
        [v.type.ndim + len(a) for v, a in ins]
        + [v.type.ndim + (0 if keep else len(a)) for v, _, a, keep in outs]
    )


# -- layout ops as views ------------------------------------------------------------------------


@PLANS.register(DimShuffle)
def _dimshuffle(builder: PlanBuilder, node) -> View:
    axes = [-1 if a == "x" else a for a in node.op.order]
    return builder.view(node, "axes", axes=axes)


@PLANS.register(BroadcastLike)
def _broadcast_like(builder: PlanBuilder, node) -> View | Library:
    if builder.is_result(node.outputs[0]):
        return builder.library(node)  # a result the caller may write into: NumPy's copy
    return builder.view(node, "broadcast", like=node.inputs[1])


@PLANS.register(Shape)
def _shape(builder: PlanBuilder, node) -> View:
    return builder.view(node, "shape")


@PLANS.register(SumToLike, SameShape)
def _same_shape(builder: PlanBuilder, node) -> View | Library:
    """``src`` itself where its shape is ``like``'s; else the reference sums (SumToLike) or
    raises (SameShape)."""
    if builder.is_result(node.outputs[0]):
        return builder.library(node)  # a result the caller may write into: NumPy's copy
    return builder.view(node, "same_shape", like=node.inputs[1])


@PLANS.register(Reshape)
def _reshape(builder: PlanBuilder, node) -> View | Library:
    if None in node.op.target:  # sizes given as int inputs: the reference reads them
        return builder.library(node)
    axes = dict(node.op.name_axes)
    target = [-(axes[d] + 2) if isinstance(d, str) else d for d in node.op.target]
    return builder.view(node, "reshape", target=target)


@PLANS.register(ReshapeLike)
def _reshape_like(builder: PlanBuilder, node) -> View:
    return builder.view(node, "reshape", like=node.inputs[1])


@PLANS.register(ReducedSize)
def _reduced_size(builder: PlanBuilder, node) -> View:
    return builder.view(node, "size", axes=node.op.axis)


@PLANS.register(Subtensor, needs={"offset_views"})
def _subtensor(builder: PlanBuilder, node) -> View | Library:
    if builder.is_result(node.outputs[0]):
        return builder.library(node)  # a result the caller may write into: NumPy's copy
    target = basic_index(node.op.spec)
    return builder.view(node, "basic", target=target, bounds=node.inputs[1:])
