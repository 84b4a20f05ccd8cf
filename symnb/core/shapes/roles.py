"""Which axis of a variable holds the examples: the batch found by its role, not its name.

The batch is the leading axis of the *data inputs* (variables made by ``sn.tensor`` and
friends, not shared weights or constants) of rank 2 or more whose leading dim is free (named,
computed or unknown, not a fixed int; an all-unknown ``sn.matrix`` is any matrix), or a
leading named dim that two data inputs share (``x (n, 784)`` and ``y (n,)``). A named or
computed dim is recognised by value, so ``n``, ``N`` or ``samples`` are the batch where they
play its part; an unknown dim (``None``) is followed through the ops that say where their
axes come from (:meth:`Op.axis_sources`: elementwise ops, softmax, dimshuffle, matmul,
reshape).
"""

from __future__ import annotations

from symnb.core.dims import is_symbolic
from symnb.core.graph import ancestors, leaves
from symnb.core.variable import Constant, SharedVariable


def broadcast_sources(node) -> list:
    """Axis sources of an elementwise node: NumPy's right-aligned broadcasting (an input axis
    of length 1 is stretched and carries nothing)."""
    n = node.outputs[0].type.ndim
    out = []
    for k in range(n):
        found = []
        for i, v in enumerate(node.inputs):
            a = k - (n - v.type.ndim)
            if a >= 0 and v.type.shape[a] != 1:
                found.append((i, a))
        out.append(found)
    return out


def batch_origin(x, axis: int):
    """The data input whose examples lie along ``axis`` of x, when that axis and no other
    holds them; None otherwise (two such axes, as in ``(seq, seq)`` scores, are ambiguous)."""
    data = [v for v in leaves([x]) if _is_data(v)]
    by_value = _batch_dims(data)
    traced = _traced_axes(x)
    found = {}
    for k, d in enumerate(x.type.shape):
        origin = traced[k] if k in traced else _holder(d, by_value)
        if origin is not None:
            found[k] = origin
    return found[axis] if list(found) == [axis] else None


def _is_data(v) -> bool:
    return v.owner is None and not isinstance(v, (Constant, SharedVariable)) and v.type.ndim > 0


def _rows_are_examples(shape) -> bool:
    """A free leading dim (not a fixed int) in front of dims that say what a row holds: an
    all-unknown ``sn.matrix`` is any matrix, not necessarily a batch."""
    return len(shape) >= 2 and not isinstance(shape[0], int) and any(d is not None for d in shape)


def _batch_dims(data) -> list:
    """(dim, input) for each symbolic leading dim that is a batch by its role."""
    leading = [(v.type.shape[0], v) for v in data if is_symbolic(v.type.shape[0])]
    found = []
    for d, v in leading:
        shared = sum(1 for e, _ in leading if e == d) > 1
        if v.type.ndim >= 2 or shared:
            found.append((d, v))
    return found


def _holder(d, by_value):
    if not is_symbolic(d):
        return None
    return next((v for e, v in by_value if e == d), None)


def _traced_axes(x) -> dict:
    """Axis of x -> the data input (of rank 2 or more) whose axis 0 it comes from."""
    carried: dict[int, dict] = {}

    def of(v) -> dict:
        if id(v) in carried:
            return carried[id(v)]
        return {0: v} if _is_data(v) and _rows_are_examples(v.type.shape) else {}

    for node in ancestors([x]):
        sources = node.op.axis_sources(node) if len(node.outputs) == 1 else None
        axes = {}
        for k, pairs in enumerate(sources or []):
            origins = [of(node.inputs[i]).get(a) for i, a in pairs]
            origin = next((o for o in origins if o is not None), None)
            if origin is not None:
                axes[k] = origin
        carried[id(node.outputs[0])] = axes
    return of(x)
