"""Loops: a scan computes only what is used.

The gradient of a scan returns, per step, the gradient of every sequence (the backward loop
cannot know which ones ``sn.grad`` was asked for); a step output no one reads is dropped
from the loop, and then the non-sequences nothing left in the step reads. A sequence the
step no longer reads still sets the step count (the fewest rows; a given ``n_steps`` is
checked against it), so it is dropped only where a kept one surely has no more rows.
"""

from __future__ import annotations

from dataclasses import replace

from symnb.control.loop import Loop
from symnb.control.scan import Scan
from symnb.core.dims import is_int, sub
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
    if loop.plain_names:  # each kept output keeps its name in messages
        names = tuple(loop.plain_names[i - first_plain] for i in kept)
        new_loop = replace(new_loop, plain_names=names)
    new = Scan(new_loop).make_node(node.inputs[0], *inputs).outputs
    pairs = list(zip(node.outputs[: loop.n_states], new[: loop.n_states]))
    pairs += [(node.outputs[i], new[loop.n_states + k]) for k, i in enumerate(kept)]
    return pairs


def _without_unread_inputs(loop: Loop, inner_outs, outer) -> tuple[Loop, list]:
    """The loop on ``inner_outs``, keeping the states, the non-sequences still read and the
    sequences that are read or may have the fewest rows."""
    read = {id(v) for n in ancestors(inner_outs) for v in n.inputs}
    read.update(id(v) for v in inner_outs)
    k, m = loop.n_seqs, loop.n_states
    seqs = _sequences_kept(outer[:k], [id(ph) in read for ph in loop.graph.inputs[:k]])
    keep = seqs + [i for i in range(k, len(outer)) if i < k + m or id(loop.graph.inputs[i]) in read]
    inputs = [loop.graph.inputs[i] for i in keep]
    graph = Graph(inputs, inner_outs, clone=False)
    names = tuple(loop.names[i] for i in keep)
    new = replace(loop, graph=graph, n_seqs=len(seqs), names=names)
    return new, [outer[i] for i in keep]


def _sequences_kept(seqs, read: list[bool]) -> list[int]:
    """The sequences read, and each unread one unless a kept one surely has no more rows: the
    loop runs as many steps as the fewest rows, and checks ``n_steps`` against them."""
    kept = [i for i, r in enumerate(read) if r]
    for i in range(len(seqs)):
        if not read[i] and not any(_no_more_rows(seqs[j], seqs[i]) for j in kept):
            kept.append(i)
    return sorted(kept)


def _no_more_rows(kept, dropped) -> bool:
    """``kept`` has at most as many rows as ``dropped``, whatever the sizes (the same
    variable, or dims whose difference is a known count >= 0: ``T`` and ``T - 1``)."""
    if kept is dropped:
        return True
    a, b = kept.type.shape[0], dropped.type.shape[0]
    if a is None or b is None:
        return False
    diff = sub(b, a)
    return is_int(diff) and diff >= 0
