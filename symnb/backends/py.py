"""The reference backend: a plan of NumPy calls (one Library step per node) over numbered slots.

It defines what every graph means; other backends are tested against it. Each step checks
that its op returned the dtype its type rule promised, so a wrong rule cannot hide.
"""

from __future__ import annotations

import numpy as np

from symnb.backends import execute
from symnb.backends.branches import plan_steps
from symnb.backends.execute import RuntimeFailure
from symnb.backends.execute import failure_message as _failure_message
from symnb.backends.linker import Linker
from symnb.backends.loop import compile_body, host_loop
from symnb.backends.planner import PlanBuilder
from symnb.control.scan import Scan

__all__ = ["PyLinker", "RuntimeFailure", "_failure_message"]


class PyLinker(PlanBuilder, Linker):
    """Compiles a Graph into a plan of ``Library`` steps (symnb/backends/plan.py), run by the
    Python executor (symnb/backends/execute.py)."""

    name = "py"
    device = "NumPy"  # where its steps run, for profiles
    steps_timed = True

    def __init__(self, graph, leaves: list):
        super().__init__(graph, leaves)
        self.bodies: list = []  # (scan node, the linker of its inner graph), for displays
        steps = plan_steps(self, graph.toposort(), self._step)
        self.plan = self.plan_of(steps, len(graph.inputs))

    def _step(self, node):
        ins = self.slots_of(node.inputs)
        if isinstance(node.op, Scan):
            # the step rewritten with the function's rules, as backend "c" rewrites it
            body = compile_body(node, PyLinker)
            self.bodies.append((node, body))
            return self.library(node, host_loop(node, body))
        return self.library(node, _guard_leaves(node, ins, self.n_leaves))

    def run(self, leaf_values: list) -> list:
        return execute.run(self.plan, leaf_values)

    def run_profiled(self, leaf_values: list) -> tuple[list, list]:
        """Like ``run``, timing each step: ``(outputs, [(node, seconds, bytes), ...])``.

        A separate path, so the normal call pays nothing for profiling (``f.profile()``).
        """
        outputs, records = execute.run_profiled(self.plan, leaf_values)
        return outputs, [(*record[:3], None, *record[4:]) for record in records]


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
