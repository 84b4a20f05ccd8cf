"""The reference backend: a fixed schedule of NumPy calls over a flat list of value slots.

It defines what every graph means; other backends are tested against it. Each step checks
that its op returned the dtype its type rule promised, so a wrong rule cannot hide.
"""

from __future__ import annotations

import time

import numpy as np

from symnb.core.graph import Graph
from symnb.core.variable import Constant
from symnb.errors import SymnbError


class RuntimeFailure(SymnbError, RuntimeError):
    """An op failed while running; the message names the node and the line that built it."""


class PyLinker:
    """Compiles a Graph into ``run(values) -> outputs`` over a flat list of slots."""

    name = "py"
    device = "NumPy"  # where its steps run, for profiles

    def __init__(self, graph: Graph, leaves: list):
        self.graph = graph
        self.slot = {id(v): i for i, v in enumerate(leaves)}
        self.n_leaves = len(leaves)
        self.template: list = [v.data if isinstance(v, Constant) else None for v in leaves]
        self.steps = [self._step(node) for node in graph.toposort()]
        self.out_slots = [self.slot[id(v)] for v in graph.outputs]

    def _step(self, node):
        ins = [self.slot[id(v)] for v in node.inputs]
        outs = []
        for var in node.outputs:
            self.slot[id(var)] = len(self.template)
            self.template.append(None)
            outs.append(self.slot[id(var)])
        dtypes = [v.type.dtype for v in node.outputs]
        return node, _guard_leaves(node, ins, self.n_leaves), ins, outs, dtypes

    def run(self, leaf_values: list) -> list:
        slots = list(self.template)
        slots[: len(leaf_values)] = leaf_values
        for node, perform, ins, outs, dtypes in self.steps:
            try:
                result = perform(*[slots[i] for i in ins])
            except Exception as exc:
                raise RuntimeFailure(_failure_message(node, exc)) from exc
            results = (result,) if len(outs) == 1 else result
            for slot, value, dtype in zip(outs, results, dtypes, strict=True):
                value = np.asarray(value)
                if value.dtype != dtype:
                    raise AssertionError(f"{node.op} returned {value.dtype}, promised {dtype}")
                slots[slot] = value
        return [slots[i] for i in self.out_slots]

    def run_profiled(self, leaf_values: list) -> tuple[list, list]:
        """Like ``run``, timing each step: ``(outputs, [(node, seconds, bytes), ...])``.

        A separate path, so the normal call pays nothing for profiling (``f.profile()``).
        """
        slots = list(self.template)
        slots[: len(leaf_values)] = leaf_values
        records = []
        for node, perform, ins, outs, _ in self.steps:
            args = [slots[i] for i in ins]
            start = time.perf_counter()
            result = perform(*args)
            seconds = time.perf_counter() - start
            results = (result,) if len(outs) == 1 else result
            for slot, value in zip(outs, results, strict=True):
                slots[slot] = np.asarray(value)
            moved = sum(np.asarray(a).nbytes for a in [*args, *(slots[i] for i in outs)])
            records.append((node, seconds, moved))
        return [slots[i] for i in self.out_slots], records


def _failure_message(node, exc) -> str:
    args = ", ".join(v.describe() for v in node.inputs)
    where = node.outputs[0].source
    return f"{node.op}({args}) failed: {type(exc).__name__}: {exc}" + (
        f"\n  built at {where}" if where else ""
    )


def _guard_leaves(node, ins, n_leaves):
    """The op's perform; an op that overwrites an input (``destroy_map``) gets a copy of any
    leaf value (the caller's array, a shared value, a constant) instead of the value itself."""
    destroyed = {i for inputs in getattr(node.op, "destroy_map", {}).values() for i in inputs}
    leaf_args = sorted(i for i in destroyed if ins[i] < n_leaves)
    if not leaf_args:
        return node.op.perform

    def perform_on_copies(*arrays):
        arrays = list(arrays)
        for i in leaf_args:
            arrays[i] = np.array(arrays[i], copy=True)
        return node.op.perform(*arrays)

    return perform_on_copies
