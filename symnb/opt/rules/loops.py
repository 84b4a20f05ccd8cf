"""Loops: a scan computes only what is used, and keeps only what is read.

The gradient of a scan returns, per step, the gradient of every sequence (the backward loop
cannot know which ones ``sn.grad`` was asked for); a step output no one reads is dropped
from the loop, and then the non-sequences nothing left in the step reads. A sequence the
step no longer reads still sets the step count (the fewest rows; a given ``n_steps`` is
checked against it), so it is dropped only where a kept one surely has no more rows.

A state whose values are read only at the last step (``hs[-1]``, ``theano.reduce``), or not
at all, stops keeping them (Theano's ``scan_save_mem``): the loop holds one value of it, not
one per step. A gradient reads every value, so where one is taken the rule does not match.
"""

from __future__ import annotations

from dataclasses import replace

from symnb.control.loop import Loop
from symnb.control.scan import Scan
from symnb.core.dims import is_int, sub
from symnb.core.graph import OUTPUT, Graph, ancestors
from symnb.ops.elemwise import Add, Cast, Sub
from symnb.ops.index import FULL, SYM, Subtensor
from symnb.opt.pattern import Pattern
from symnb.opt.registry import rule
from symnb.opt.rules._util import constant_value, is_filled_with


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


@rule("canonicalize", Pattern(Scan))
def scan_unread_history(m):
    """scan(...) -> the same scan keeping only the last value of each state whose values are
    read only at the last step (``hs[-1]``, ``hs[n_steps - 1]``), or not at all"""
    node, loop = m.node, m.node.op.loop
    if loop.backwards:  # (a gradient's loop: its last value is its first row)
        return None
    reads, last_read = {}, []
    for j in range(loop.n_states):
        if not loop.history[j]:
            continue
        users = m.graph.clients.get(node.outputs[j], [])
        found = [_last_row_read(user, i, node) for user, i in users]
        if all(r is not None for r in found):
            reads[j] = found
            if found:  # (read: none of it, where the loop runs no step)
                last_read.append((j, users[0][0].outputs[0].source))
    if not reads:
        return None
    history = tuple(keep and j not in reads for j, keep in enumerate(loop.history))
    new_loop = replace(loop, history=history, last_read=loop.last_read + tuple(last_read))
    new = Scan(new_loop).make_node(*node.inputs).outputs
    pairs = [(old, v) for j, (old, v) in enumerate(zip(node.outputs, new)) if j not in reads]
    for j, found in reads.items():
        for user, (spec, index) in found:
            last = new[j] if _whole(spec) else Subtensor(spec)(new[j], *index)
            pairs.append((user.outputs[0], last))
    return pairs


def _last_row_read(user, i: int, node):
    """``(user, (the rest of its index, that index's inputs))`` where ``user`` reads input
    ``i``, a state's values, at the last step only (``hs[-1]``, ``hs[-1, :2]``), else None."""
    if user == OUTPUT or i != 0 or not isinstance(user.op, Subtensor) or not user.op.spec:
        return None
    first, rest = user.op.spec[0], user.op.spec[1:]
    index = list(user.inputs[1:])
    if first[0] != "int" or any(v is user.inputs[0] for v in index):
        return None
    at = first[1]
    if at == SYM:
        var = index.pop(0)
        value = constant_value(var)
        last = _is_last(int(value), node) if value is not None else _steps_minus_one(var, node)
    else:
        last = _is_last(at, node)
    return (user, (rest, index)) if last else None


def _is_last(at: int, node) -> bool:
    """Index ``at`` of a state's values is the last: -1, or a given step count's ``n - 1``."""
    if at == -1:
        return True
    n = constant_value(node.inputs[0])
    return _runs_all(node) and n is not None and at >= 0 and at == int(n) - 1


def _runs_all(node) -> bool:
    """The loop runs exactly its given ``n_steps`` (or fails): counted, without ``until``."""
    return node.op.loop.counted and not node.op.loop.until


def _steps_minus_one(var, node) -> bool:
    """``var`` is ``n_steps - 1`` (``n - 1`` or ``n + -1``, n the scan's step count or the
    integer that ``sn.scan`` cast to it)."""
    owner = var.owner
    if owner is None or not _runs_all(node):
        return False
    a, b = owner.inputs if len(owner.inputs) == 2 else (None, None)
    if isinstance(owner.op, Sub) and is_filled_with(b, 1):
        count = a
    elif isinstance(owner.op, Add) and is_filled_with(b, -1):
        count = a
    elif isinstance(owner.op, Add) and is_filled_with(a, -1):
        count = b
    else:
        return False
    n_steps = node.inputs[0]
    if count is n_steps:
        return True
    cast = n_steps.owner
    return (
        cast is not None
        and isinstance(cast.op, Cast)
        and cast.inputs[0] is count
        and count.type.dtype.kind in "iu"
    )


def _whole(spec) -> bool:
    """An index that takes every element (only full slices, or nothing)."""
    return all(entry == FULL for entry in spec)
