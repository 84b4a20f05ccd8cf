"""A scan on a compiled backend: its inner graph rewritten and compiled to its own plan by
the same linker, and the loop one ``Repeat`` step of the outer plan (symnb/backends/plan.py).

runner.c runs the whole loop itself: per step it points the body's slots at the sequences'
rows, runs the body's steps (kernels, BLAS calls, views) with no Python call, checks the
states and writes the results into storage allocated once per call. The Python executor runs
the same step (without a runner, or a loop the runner hands back) with the one Python loop
runtime (``symnb/control/loop.py``), so both mean the same; so does the device executor
(``symnb/backends/device/execute.py``), whose body is a device plan run over device memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from symnb.backends import execute
from symnb.backends.plan import Repeat
from symnb.control.loop import run_loop
from symnb.core.graph import Graph, leaves
from symnb.core.variable import SharedVariable
from symnb.opt import optimize

#: what a loop's step is rewritten with: the ``optimize=`` of the function being compiled
#: (``bodies_rewritten``), "fast" for a linker built outside ``sn.function``
_BODY_OPTIMIZE: ContextVar = ContextVar("symnb_body_optimize", default="fast")


@contextmanager
def bodies_rewritten(optimize) -> Iterator[None]:
    """Within it, every loop's step a linker compiles is rewritten with ``optimize`` (a mode
    name or an include/exclude dict, as ``sn.function`` takes it), as the outer graph is."""
    token = _BODY_OPTIMIZE.set(optimize)
    try:
        yield
    finally:
        _BODY_OPTIMIZE.reset(token)


def _among(var, variables) -> bool:
    return any(var is v for v in variables)


def compile_body(node, linker_class):
    """The inner graph, rewritten with the compiled function's ``optimize=`` (the rules that
    rewrote the outer graph, ``bodies_rewritten``), compiled by a linker of ``linker_class``;
    the rewrite history is kept on the linker (``body.rewrites``) for the displays."""
    loop = node.op.loop
    graph = Graph(list(loop.graph.inputs), list(loop.graph.outputs))
    rewrites = optimize(graph, _BODY_OPTIMIZE.get())
    rest = [v for v in leaves(graph.outputs) if not _among(v, graph.inputs)]
    assert not any(isinstance(v, SharedVariable) for v in rest), "scan moved shared values out"
    body = linker_class(graph, list(graph.inputs) + rest)
    body.rewrites = rewrites
    return body


def host_loop(node, body):
    """The scan's perform with its step run by ``body`` (a Python-executed plan, as
    ``compile_body`` makes it) instead of the inner graph as written: what a ``Library`` step
    runs for a loop on the host (backend "py", a device's host loops)."""
    loop, plan = node.op.loop, body.plan

    def one_step(values: list) -> list:
        return execute.run(plan, values)

    def perform(n_steps, *arrays):
        results = run_loop(loop, one_step, int(n_steps), arrays)
        return results[0] if len(results) == 1 else tuple(results)

    return perform


def plan_loop(builder, node, body) -> Repeat:
    """The scan as one step of the outer plan, its step ``body``'s plan."""
    loop = node.op.loop
    dtypes = tuple(v.type.dtype for v in node.outputs)
    return Repeat(
        builder.slots_of(node.inputs),
        builder.out_slots(node),
        dtypes,
        loop.n_seqs,
        loop.n_states,
        tuple(loop.history),
        loop.until,
        loop.backwards,
        loop.counted,
        body.plan,
        node,
    )
