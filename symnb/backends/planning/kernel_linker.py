"""What every kernel target's linker shares: the graph becomes a plan of generated kernels,
views, products and NumPy fallbacks, each op planned by the one table (``PLANS``) as the
target's capabilities allow.

Elementwise and ``Composite`` nodes become one kernel each; a reduction becomes a kernel that
also computes the elementwise node feeding it when nothing else reads that node. A target
(backend "c": ``symnb/backends/c/linker.py``; the devices: ``symnb/backends/device/linker.py``)
adds its dialect, its capabilities, how its kernels are built and loaded, its product step
and how its plan runs.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import ClassVar

import numpy as np

from symnb.backends.branches import plan_flat, plan_steps
from symnb.backends.kernels.ir import Unsupported
from symnb.backends.kernels.lowering import fusable, lower
from symnb.backends.linker import Linker
from symnb.backends.listing import KernelInfo, KernelList
from symnb.backends.loop import compile_body, host_loop, plan_loop
from symnb.backends.plan import Library, Repeat, View
from symnb.backends.planner import PLANS, PlanBuilder
from symnb.backends.planning import convolution, pools  # noqa: F401 - pools: its planners join PLANS
from symnb.backends.py import PyLinker
from symnb.backends.schedule import schedule
from symnb.control.scan import Scan
from symnb.core.op import Op
from symnb.ops.elemwise import Elemwise
from symnb.ops.reduce import Reduce

log = logging.getLogger(__name__)
VIEW_NOTE = "computed in C with NumPy's C API (a view: no copy, no Python call)"


class KernelLinker(PlanBuilder, Linker):
    """Compiles a Graph into a plan of kernels; a subclass is one target."""

    #: what the target can do beyond kernels and views (see ``PlanTable``); a linker may
    #: narrow its own before planning (a device linker on a CPU device leaves out "loops")
    capabilities: frozenset = frozenset()
    #: how the target spells kernels (a ``Dialect``)
    dialect = None
    #: what runs a loop's step (``f.kernels``' note on a scan)
    loop_runner: ClassVar[str] = "the C runner"
    #: how the target makes a view (``f.kernels``' note on a ``View`` step whose planner
    #: lists nothing: a dim_shuffle, a broadcast, ``shape``, ``alloc`` on a device)
    view_note: ClassVar[str] = VIEW_NOTE

    def __init__(self, graph, leaves: list):
        super().__init__(graph, leaves)
        self.outputs = {id(v) for v in graph.outputs}
        order = graph.toposort()
        self.producers = self._plan_fusion(order)
        self.fused = {id(p) for p in self.producers.values()}
        self.kernels = KernelList()
        self.planned: dict = {}  # intermediates several nodes share (convolution.py: im2col)
        self.bodies: list = []  # (scan node, the linker of its inner graph), for displays
        plan = plan_steps if self.can("branches") else plan_flat
        steps = plan(self, order, self._step_unless_fused)
        self.plan = self.plan_of(steps, len(graph.inputs))

    def can(self, capability: str) -> bool:
        return capability in self.capabilities

    def render(self, kernel) -> str:
        """The kernel's source: the target's schedule of it (``symnb/backends/schedule``),
        then the dialect's spelling of that schedule."""
        return self.dialect.render(kernel, schedule(kernel, self.dialect))

    @property
    def steps(self) -> tuple:
        return self.plan.steps

    # -- building the plan ------------------------------------------------------------------
    def _step_unless_fused(self, node):
        return None if id(node) in self.fused else self._step(node)

    def _step(self, node):
        listed, refs = len(self.kernels), len(self.kernel_refs)
        planner = PLANS.find(node.op, self.capabilities)
        try:
            step = planner(self, node) if planner else None
        except Unsupported as exc:
            del self.kernels[listed:], self.kernel_refs[refs:]  # a planner that gave up
            return self._library_step(node, str(exc))
        if step is None:
            return self._library_step(node, "no kernel for this op; runs its NumPy reference")
        if isinstance(step, tuple):  # several steps (windowed.py), each listed by its planner
            return step
        if len(self.kernels) == listed:  # a planner shared with other linkers lists nothing
            note = self.view_note if isinstance(step, View) else "runs its NumPy reference"
            self.kernels.append(KernelInfo(step.kind, node, None, note))
        return step

    def _library_step(self, node, reason: str, kind: str = "library") -> Library:
        for var in node.inputs:
            if var.owner is not None and id(var.owner) in self.fused:
                raise AssertionError("a fused node's output is read elsewhere")
        self.kernels.append(KernelInfo(kind, node, None, reason))
        if kind == "library" and log.isEnabledFor(logging.INFO):
            where = node.outputs[0].source
            log.info(
                "fallback: %s has no kernel here: %s%s",
                node.op,
                reason,
                f" (built at {where})" if where else "",
            )
        if isinstance(node.op, Scan):
            # a loop on the host: its step rewritten as a compiled one's would be
            body = compile_body(node, PyLinker)
            self.bodies.append((node, body))
            return self.library(node, host_loop(node, body), kind=kind)
        return self.library(node, kind=kind)

    def _plan_fusion(self, order) -> dict:
        """Reduction node id -> the elementwise node to compute inside its kernel."""
        plan = {}
        for node in order:
            producer = self._fusable_producer(node) if isinstance(node.op, Reduce) else None
            if producer is not None and fusable(node, self.dialect, producer):
                plan[id(node)] = producer
        return plan

    def _fusable_producer(self, node):
        """The elementwise node computing the reduction's input, if only it reads it."""
        var = node.inputs[0]
        producer = var.owner
        if producer is None or not isinstance(producer.op, Elemwise) or id(var) in self.outputs:
            return None
        clients = self.graph.clients.get(var, [])
        return producer if len(clients) == 1 and clients[0][0] is node else None

    def product_step(self, steps, a, b, out):
        """``out = a @ b`` inside an op planned as several steps (convolution, windowed.py):
        the target's product (a BLAS call, a device's tiled kernel)."""
        raise NotImplementedError


# -- steps by op class, on every kernel target ---------------------------------------------------
@PLANS.register(Op)
def _kernel(linker: KernelLinker, node):
    """Any op with a registered lowering (symnb/backends/kernels/lowering.py) is a kernel;
    the others raise Unsupported, and run their NumPy reference."""
    lowered = lower(node, linker.dialect, linker.producers.get(id(node)))
    source = linker.render(lowered.kernel)
    outs = [(v, v.type.dtype, absent, keep) for v, absent, keep in lowered.outputs]
    fallback = None
    if len(lowered.nodes) > 1:  # the producer's inputs feed the reference of both
        reference = _FusedReference(lowered.nodes, node.outputs[0].type.dtype)
        fallback = linker.library(node, reference, inputs=lowered.nodes[0].inputs)
    # a result a convolution reads padded: written into its padded planes (convolution.py)
    before, into = convolution.output_planes(linker, node, lowered)
    inplace = None if into is not None else lowered.inplace
    step = linker.launch(
        node, source, lowered.inputs, outs, inplace, lowered.empty, fallback, lowered.kernel, into
    )
    nodes = list(lowered.nodes) if len(lowered.nodes) > 1 else node
    note = lowered.note + (" (into a convolution's padded planes)" if into is not None else "")
    linker.kernels.append(KernelInfo("kernel", nodes, source, note))
    return (*before, step) if before else step


class _FusedReference:
    """The NumPy reference of a reduction and the elementwise node fused into it: for empty
    inputs (NumPy decides: 0, NaN with a warning, or an error) and layouts a kernel declines."""

    def __init__(self, nodes, dtype):
        (self.producer, self.node), self.dtype = nodes, dtype

    def __call__(self, *values):
        value = self.node.op.perform(self.producer.op.perform(*values))
        return np.asarray(value).astype(self.dtype, copy=False)


@PLANS.register(Scan, needs={"loops"})
def _scan(linker: KernelLinker, node) -> Repeat:
    """The loop's inner graph compiled by a linker of the same target (symnb/backends/loop.py);
    the target's executor runs the loop."""
    body = compile_body(node, type(linker))
    linker.bodies.append((node, body))
    note = (
        f"a loop run by {linker.loop_runner}: its step is a plan of {len(body.steps)} steps "
        f"({_kinds(body.steps)})"
    )
    linker.kernels.append(KernelInfo("loop", node, None, note))
    return plan_loop(linker, node, body)


def _kinds(steps) -> str:
    counts = Counter(step.kind for step in steps)  # in the order the kinds first come
    return ", ".join(f"{n} {kind}" for kind, n in counts.items())
