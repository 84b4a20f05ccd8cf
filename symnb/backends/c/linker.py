"""Backend "c": the graph becomes a fixed schedule of C kernels, BLAS calls and library calls.

Elementwise and ``Composite`` nodes become one kernel each; a reduction becomes a kernel that
also computes the elementwise node feeding it when nothing else reads that node. Matmul goes
to BLAS through NumPy; every other op runs its NumPy reference, and ``f.kernels`` says so.
"""

from __future__ import annotations

import threading
import time

from symnb.backends.c import cache
from symnb.backends.c.blas import GemmStep
from symnb.backends.c.dialect import CDialect
from symnb.backends.c.listing import KernelInfo, KernelList
from symnb.backends.c.steps import (
    BlasStep,
    KernelStep,
    LaunchStep,
    LibraryStep,
    ReduceStep,
)
from symnb.backends.kernels.ir import Map, Reduce, Unsupported
from symnb.backends.kernels.lowering import fusable, lower
from symnb.core.graph import OUTPUT, Graph
from symnb.core.variable import Constant
from symnb.ops.blas import Gemm
from symnb.ops.elemwise import Elemwise
from symnb.ops.linalg import Matmul
from symnb.ops.reduce import Reduce as ReduceOp

BLAS_OPS = (Matmul,)


class CLinker:
    """Compiles a Graph into ``run(values) -> outputs`` (see symnb/backends/py.py)."""

    name = "c"

    def __init__(self, graph: Graph, leaves: list):
        self.graph = graph
        self.dialect = CDialect()
        self.slot = {id(v): i for i, v in enumerate(leaves)}
        self.template: list = [v.data if isinstance(v, Constant) else None for v in leaves]
        self.n_leaves = len(leaves)
        self.outputs = {id(v) for v in graph.outputs}
        order = graph.toposort()
        self.producers = self._plan_fusion(order)
        self.fused = {id(p) for p in self.producers.values()}
        self.kernels = KernelList()
        self.pending: list = []  # (step, source) of kernels to load once all are rendered
        self.steps = [self._step(node) for node in order if id(node) not in self.fused]
        #: the Python runtime's steps keep arguments and private buffers between calls, so
        #: its calls take turns (the C runner keeps no such state and needs no lock)
        self.lock = threading.Lock()
        fns = cache.load_many([source for _, source in self.pending])
        for (step, _), fn in zip(self.pending, fns):
            step.fn = fn
        self.out_slots = [self.slot[id(v)] for v in graph.outputs]

    # -- building the schedule --------------------------------------------------------------
    def _new_slot(self, var) -> int:
        self.slot[id(var)] = len(self.template)
        self.template.append(None)
        return self.slot[id(var)]

    def _step(self, node):
        try:
            lowered = lower(node, self.dialect, self.producers.get(id(node)))
        except Unsupported as exc:
            return self._fallback(node, str(exc))
        if isinstance(lowered.kernel.body, Map):
            return self._elemwise_step(node, lowered)
        if isinstance(lowered.kernel.body, Reduce) and len(lowered.nodes) <= 2:
            return self._reduce_step(node, lowered)
        return self._row_step(node, lowered)

    def _fallback(self, node, reason: str):
        if isinstance(node.op, Gemm):
            return self._library_step(node, "numpy.matmul (BLAS), scale and add in place", GemmStep)
        if isinstance(node.op, BLAS_OPS):
            return self._library_step(node, "BLAS through numpy.matmul", BlasStep)
        return self._library_step(node, reason)

    def _library_step(self, node, reason: str, cls=LibraryStep):
        for var in node.inputs:
            if var.owner is not None and id(var.owner) in self.fused:
                raise AssertionError("a fused node's output is read elsewhere")
        ins = [self.slot[id(v)] for v in node.inputs]
        outs = [self._new_slot(v) for v in node.outputs]
        step = cls(node, ins, outs if len(outs) > 1 else outs[0], reason)
        self.kernels.append(KernelInfo(step.kind, node, None, reason))
        return step

    def _kernel_step(self, step, source: str):
        """Register ``step`` to receive its compiled function (see __init__)."""
        self.pending.append((step, source))
        return step

    def _elemwise_step(self, node, lowered):
        source = self.dialect_source(lowered.kernel)
        operands = [v for v, _ in lowered.inputs]
        ins = [self.slot[id(v)] for v in operands]
        out = self._new_slot(node.outputs[0])
        private = self._private(node.outputs[0])
        self.kernels.append(KernelInfo("kernel", node, source))
        step = KernelStep(node, None, ins, out, node.outputs[0].type.dtype, private)
        step.inplace = lowered.inplace
        step.reference_ins = [self.slot[id(v)] for v in node.inputs]
        return self._kernel_step(step, source)

    def dialect_source(self, kernel) -> str:
        return CDialect().render(kernel)

    def _plan_fusion(self, order) -> dict:
        """Reduction node id -> the elementwise node to compute inside its kernel."""
        plan = {}
        for node in order:
            producer = self._fusable_producer(node) if isinstance(node.op, ReduceOp) else None
            if producer is not None and fusable(node, self.dialect, producer):
                plan[id(node)] = producer
        return plan

    def _reduce_step(self, node, lowered):
        producer = self.producers.get(id(node))
        source = self.dialect_source(lowered.kernel)
        ins = [self.slot[id(v)] for v, _ in lowered.inputs]
        out = self._new_slot(node.outputs[0])
        nodes = [producer, node] if producer is not None else node
        self.kernels.append(KernelInfo("kernel", nodes, source))
        source_node = producer if producer is not None else node
        reference_ins = [self.slot[id(v)] for v in source_node.inputs]
        dtype = node.outputs[0].type.dtype
        step = ReduceStep(node, None, ins, out, dtype, producer, reference_ins)
        return self._kernel_step(step, source)

    def _row_step(self, node, lowered):
        """A row program (softmax, logsumexp, cross-entropy) launched with its layout."""
        source = self.dialect_source(lowered.kernel)
        producer = self.producers.get(id(node))
        ins = [self.slot[id(v)] for v, _ in lowered.inputs]
        outs = [self._new_slot(v) for v in node.outputs]
        nodes = [producer, node] if producer is not None else node
        self.kernels.append(KernelInfo("kernel", nodes, source, lowered.note))
        source_node = producer if producer is not None else node
        reference_ins = [self.slot[id(v)] for v in source_node.inputs]
        step = LaunchStep(node, ins, outs if len(outs) > 1 else outs[0], lowered, producer,
                          reference_ins)  # fmt: skip
        return self._kernel_step(step, source)

    def _fusable_producer(self, node):
        """The elementwise node computing the reduction's input, if only it reads it."""
        var = node.inputs[0]
        producer = var.owner
        if producer is None or not isinstance(producer.op, Elemwise) or id(var) in self.outputs:
            return None
        clients = self.graph.clients.get(var, [])
        return producer if len(clients) == 1 and clients[0][0] is node else None

    def _private(self, var) -> bool:
        """True when the buffer cannot escape a call: not an output, read only by kernels."""
        if id(var) in self.outputs:
            return False
        for client, i in self.graph.clients.get(var, []):
            if client == OUTPUT or not isinstance(client.op, Elemwise):
                return False
            if any(i in ins for ins in getattr(client.op, "destroy_map", {}).values()):
                return False  # the client writes its result into this buffer
        return True

    # -- running ----------------------------------------------------------------------------
    def runner(self, specs, nargs: int):
        """The schedule as one C call (runner.py), or None where it does not apply."""
        from symnb.backends.c import runner  # lazily: it may compile the extension once

        return runner.schedule(self, specs, nargs)

    def run(self, leaf_values: list) -> list:
        slots = list(self.template)
        slots[: len(leaf_values)] = leaf_values
        with self.lock:
            for step in self.steps:
                step(slots)
        return [slots[i] for i in self.out_slots]

    def run_profiled(self, leaf_values: list) -> tuple[list, list]:
        """Like ``run``, timing each step: ``(outputs, [(node, seconds, bytes, where), ...])``
        where ``where`` is the step's kind (kernel, blas, library). A separate path, so the
        normal call pays nothing for profiling (``f.profile()``)."""
        slots = list(self.template)
        slots[: len(leaf_values)] = leaf_values
        records = []
        with self.lock:
            for step in self.steps:
                start = time.perf_counter()
                step(slots)
                seconds = time.perf_counter() - start
                records.append((step.node, seconds, _bytes_touched(step, slots), step.kind))
        return [slots[i] for i in self.out_slots], records


def _bytes_touched(step, slots) -> int:
    """Bytes of the step's inputs and output, as they are after it ran."""
    outs = step.out if isinstance(step.out, list) else [step.out]
    return sum(getattr(slots[i], "nbytes", 0) for i in [*step.ins, *outs])
