"""Loops: a scan computes only what is used.

The gradient of a scan returns, per step, the gradient of every sequence (the backward loop
cannot know which ones ``sn.grad`` was asked for); a step output no one reads is dropped
from the loop, and then the sequences and non-sequences nothing left in the step reads.
"""

from __future__ import annotations

from dataclasses import replace

from symnb.control.loop import Loop
from symnb.control.scan import Scan
from symnb.core.graph import Graph, ancestors
from symnb.opt.pattern import Pattern
from symnb.opt.registry import rule


@rule("canonicalize", Pattern(Scan))
def scan_unused_outputs(m):
    """scan(...) -> the same scan without the step outputs (and inputs) nothing reads"""
    node, loop = m.node, m.node.op.loop
    first_plain = loop.n_states
    plain = range(first_plain, first_plain + loop.n_plain)
    kept = [i for i in plain if m.graph.clients.get(node.outputs[i])]
    if len(kept) == loop.n_plain:
        return None
    outs = loop.graph.outputs
    inner_outs = list(outs[: loop.n_states]) + [outs[i] for i in kept]
    inner_outs += [outs[-1]] if loop.until else []
    new_loop, inputs = _without_unread_inputs(loop, inner_outs, node.inputs[1:])
    new = Scan(new_loop).make_node(node.inputs[0], *inputs).outputs
    pairs = list(zip(node.outputs[: loop.n_states], new[: loop.n_states]))
    pairs += [(node.outputs[i], new[loop.n_states + k]) for k, i in enumerate(kept)]
    return pairs


def _without_unread_inputs(loop: Loop, inner_outs, outer) -> tuple[Loop, list]:
    """The loop on ``inner_outs``, keeping the states and the other inputs still read."""
    read = {id(v) for n in ancestors(inner_outs) for v in n.inputs}
    read.update(id(v) for v in inner_outs)
    k, m = loop.n_seqs, loop.n_states
    keep = [i for i, ph in enumerate(loop.graph.inputs) if k <= i < k + m or id(ph) in read]
    inputs = [loop.graph.inputs[i] for i in keep]
    graph = Graph(inputs, inner_outs, clone=False)
    n_seqs = sum(1 for i in keep if i < k)
    names = tuple(loop.names[i] for i in keep)
    new = replace(loop, graph=graph, n_seqs=n_seqs, names=names)
    return new, [outer[i] for i in keep]
