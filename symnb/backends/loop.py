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

from symnb.backends.plan import Repeat
from symnb.core.graph import Graph, leaves
from symnb.core.variable import SharedVariable
from symnb.opt import optimize


def _among(var, variables) -> bool:
    return any(var is v for v in variables)


def compile_body(node, linker_class):
    """The inner graph, rewritten ("fast"), compiled by a linker of ``linker_class``; the
    rewrite history is kept on the linker (``body.rewrites``) for the displays."""
    loop = node.op.loop
    graph = Graph(list(loop.graph.inputs), list(loop.graph.outputs))
    rewrites = optimize(graph, "fast")
    rest = [v for v in leaves(graph.outputs) if not _among(v, graph.inputs)]
    assert not any(isinstance(v, SharedVariable) for v in rest), "scan moved shared values out"
    body = linker_class(graph, list(graph.inputs) + rest)
    body.rewrites = rewrites
    return body


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
