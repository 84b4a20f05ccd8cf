"""Backend "c": the graph becomes a plan (symnb/backends/plan.py) of C kernels, BLAS calls,
views and library calls, which runner.c runs (and symnb/backends/execute.py when it cannot).

Elementwise and ``Composite`` nodes become one kernel each; a reduction becomes a kernel that
also computes the elementwise node feeding it when nothing else reads that node. 2-d matmul
and gemm are one ``?gemm`` call; layout ops are views; every other op runs its NumPy
reference, and ``f.kernels`` says so. Steps are chosen by op class (``@plan_step``).
"""

from __future__ import annotations

import logging

import numpy as np

from symnb.backends import execute
from symnb.backends.branches import plan_flat, plan_steps
from symnb.backends.c import blas, cache, convolution, runner, windowed
from symnb.backends.c.convolution import CONVOLUTION
from symnb.backends.c.dialect import CDialect
from symnb.backends.c.listing import KernelInfo, KernelList
from symnb.backends.c.pools import POOLING
from symnb.backends.kernels.ir import Unsupported
from symnb.backends.kernels.lowering import fusable, lower
from symnb.backends.loop import compile_body, plan_loop
from symnb.backends.plan import Gemm, Launch, Library, Repeat, View
from symnb.backends.planner import VIEWS, PlanBuilder, Planners
from symnb.core.op import Op
from symnb.ops.blas import Gemm as GemmOp
from symnb.ops.elemwise import Elemwise
from symnb.ops.linalg import Matmul
from symnb.ops.reduce import Reduce
from symnb.ops.scan import Scan

PLANNERS = Planners(VIEWS)
PLANNERS.update(CONVOLUTION)  # several steps each (convolution.py, pools.py)
PLANNERS.update(POOLING)
plan_step = PLANNERS.register
log = logging.getLogger(__name__)
VIEW_NOTE = "computed in C with NumPy's C API (a view: no copy, no Python call)"


class CLinker(PlanBuilder):
    """Compiles a Graph into a plan; ``run(values) -> outputs`` (see symnb/backends/py.py)."""

    name = "c"
    dialect = CDialect()
    planners = PLANNERS  # op class -> step; device linkers plan some ops differently
    lazy_branches = True  # an ifelse is a Branch step (only the side taken runs)
    offset_views = True  # a view may start past its array's first element (windowed.py)

    def __init__(self, graph, leaves: list):
        super().__init__(graph, leaves)
        self.outputs = {id(v) for v in graph.outputs}
        order = graph.toposort()
        self.producers = self._plan_fusion(order)
        self.fused = {id(p) for p in self.producers.values()}
        self.kernels = KernelList()
        self.planned: dict = {}  # intermediates several nodes share (convolution.py: im2col)
        self.bodies: list = []  # (scan node, the linker of its inner graph), for displays
        plan = plan_steps if self.lazy_branches else plan_flat
        steps = plan(self, order, self._step_unless_fused)
        self.plan = self.plan_of(steps, len(graph.inputs))
        self._load_kernels()

    @property
    def steps(self) -> tuple:
        return self.plan.steps

    # -- building the plan ------------------------------------------------------------------
    def _step_unless_fused(self, node):
        return None if id(node) in self.fused else self._step(node)

    def _step(self, node):
        listed, refs = len(self.kernels), len(self.kernel_refs)
        planner = self.planners.find(node.op)
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
            note = VIEW_NOTE if isinstance(step, View) else "runs its NumPy reference"
            self.kernels.append(KernelInfo(step.kind, node, None, note))
        return step

    def _library_step(self, node, reason: str, kind: str = "library") -> Library:
        for var in node.inputs:
            if var.owner is not None and id(var.owner) in self.fused:
                raise AssertionError("a fused node's output is read elsewhere")
        self.kernels.append(KernelInfo(kind, node, None, reason))
        if kind == "library":
            where = node.outputs[0].source
            log.info("fallback: %s has no kernel here: %s%s", node.op, reason,
                     f" (built at {where})" if where else "")  # fmt: skip
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
        """``out = a @ b`` inside an op planned as several steps (convolution, convolution.py):
        one ``?gemm``; device linkers launch their matrix product kernel instead."""
        return windowed.gemm_step(steps, a, b, out)

    def _load_kernels(self) -> None:
        """Compile every kernel of the plan at once (cache.py batches them)."""
        addresses = cache.load_many([ref.source for ref in self.kernel_refs])
        for ref, address in zip(self.kernel_refs, addresses):
            ref.load(None, address)  # the Python executor makes its cffi function

    # -- running ----------------------------------------------------------------------------
    def runner(self):
        """The plan as one C call (runner.py; the extension is built or loaded on the first
        one), or None where it does not apply."""
        return runner.schedule(self.plan)

    def run(self, leaf_values: list) -> list:
        return execute.run(self.plan, leaf_values)

    def run_profiled(self, leaf_values: list) -> tuple[list, list]:
        """Like ``run``, timing each step: ``(outputs, [(node, seconds, bytes, where), ...])``
        where ``where`` is the step's kind (kernel, blas, view, library). A separate path, so
        the normal call pays nothing for profiling (``f.profile()``)."""
        return execute.run_profiled(self.plan, leaf_values)


# -- steps by op class ------------------------------------------------------------------------
@plan_step(Op)
def _kernel(linker: CLinker, node) -> Launch:
    """Any op with a registered lowering (symnb/backends/kernels/lowering.py) is a kernel;
    the others raise Unsupported, and run their NumPy reference."""
    lowered = lower(node, linker.dialect, linker.producers.get(id(node)))
    source = linker.dialect.render(lowered.kernel)
    outs = [(v, v.type.dtype, absent, keep) for v, absent, keep in lowered.outputs]
    fallback = None
    if len(lowered.nodes) > 1:  # the producer's inputs feed the reference of both
        reference = _FusedReference(lowered.nodes, node.outputs[0].type.dtype)
        fallback = linker.library(node, reference, inputs=lowered.nodes[0].inputs)
    # a result a convolution reads padded: written into its padded planes (convolution.py)
    before, into = convolution.output_planes(linker, node, lowered)
    inplace = None if into is not None else lowered.inplace
    step = linker.launch(node, source, lowered.inputs, outs, inplace, lowered.empty,
                         fallback, lowered.kernel, into)  # fmt: skip
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


@plan_step(Scan)
def _scan(linker: CLinker, node) -> Repeat:
    """The loop's inner graph compiled by a CLinker of its own (symnb/backends/loop.py); the
    runner runs the loop."""
    body = compile_body(node, type(linker))
    linker.bodies.append((node, body))
    note = (f"a loop run by the C runner: its step is a plan of {len(body.steps)} steps "
            f"({_kinds(body.steps)})")  # fmt: skip
    linker.kernels.append(KernelInfo("loop", node, None, note))
    return plan_loop(linker, node, body)


def _kinds(steps) -> str:
    counts: dict[str, int] = {}
    for step in steps:
        counts[step.kind] = counts.get(step.kind, 0) + 1
    return ", ".join(f"{n} {kind}" for kind, n in counts.items())


@plan_step(GemmOp)
def _gemm(linker: CLinker, node) -> Gemm:
    z, alpha, x, y, beta = (linker.slot[id(v)] for v in node.inputs)
    return _gemm_step(linker, node, (z, alpha, x, y, beta), node.op.inplace)


@plan_step(Matmul)
def _matmul(linker: CLinker, node) -> Gemm | Library:
    x, y = node.inputs
    dtype = node.outputs[0].type.dtype
    if x.type.ndim != 2 or y.type.ndim != 2 or not x.type.dtype == y.type.dtype == dtype:
        return linker._library_step(node, "BLAS through numpy.matmul", kind="blas")
    if dtype.name not in blas.FLOATS:
        return linker._library_step(node, "BLAS through numpy.matmul", kind="blas")
    slots = (None, None, linker.slot[id(x)], linker.slot[id(y)], None)
    return _gemm_step(linker, node, slots, inplace=False)


def _gemm_step(linker: CLinker, node, slots: tuple, inplace: bool) -> Gemm:
    dtype = node.outputs[0].type.dtype
    ref = blas.gemm_ref(dtype)
    fallback = linker.owning(linker.library(node, kind="blas"))
    linker.kernels.append(KernelInfo("blas", node, None, blas.describe(ref)))
    return Gemm(*slots, fallback.outs[0], dtype, inplace, ref, node, fallback)
