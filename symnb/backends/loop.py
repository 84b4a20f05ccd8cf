"""A scan on a compiled backend: its inner graph rewritten and compiled to its own plan by
the same linker, and run once per step by the one loop runtime (``symnb/ops/loop.py``).

The loop itself is a ``Library`` step of the outer plan whose callable is a
:class:`CompiledLoop`; each step of the loop is one call of the inner plan (through
runner.c's schedule for backend "c" when the runner takes the inner plan, else the Python
executor). The step outputs are written into storage allocated once per call. What is not
done yet: a loop step kind inside runner.c, which would save the Python call per step.
"""

from __future__ import annotations

from symnb.backends import execute
from symnb.core.graph import Graph, leaves
from symnb.core.variable import SharedVariable
from symnb.ops.loop import run_loop
from symnb.opt import optimize


class CompiledLoop:
    """``fn(n_steps, *outer) -> outputs`` for a scan node, its step a compiled plan."""

    def __init__(self, node, linker_class):
        loop = node.op.loop
        self.loop = loop
        graph = Graph(list(loop.graph.inputs), list(loop.graph.outputs))
        self.rewrites = optimize(graph, "fast")
        rest = [v for v in leaves(graph.outputs) if not _among(v, graph.inputs)]
        assert not any(isinstance(v, SharedVariable) for v in rest), "scan moved shared values out"
        self.inner = linker_class(graph, list(graph.inputs) + rest)
        make = getattr(self.inner, "runner", None)
        self.schedule = make() if make else None
        self.steps_run = 0

    def step(self, values: list) -> list:
        """One step: the inner plan on this step's values."""
        self.steps_run += 1
        if self.schedule is not None:
            results = self.schedule(*values)
            if results is not None:
                return list(results)
        return execute.run(self.inner.plan, values)

    def __call__(self, n_steps, *arrays):
        results = run_loop(self.loop, self.step, int(n_steps), arrays)
        return results[0] if len(results) == 1 else tuple(results)


def _among(var, variables) -> bool:
    return any(var is v for v in variables)


def plan_loop(builder, node):
    """The scan as one step of the outer plan (registered for ``Scan`` by a linker)."""
    return builder.library(node, CompiledLoop(node, type(builder)), kind="loop")
