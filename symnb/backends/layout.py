"""The launch ABI's layout arithmetic, once for every executor: the index space of a launch,
each operand's byte strides over it, and its outputs' shapes.

An input is broadcast (right-aligned, as in NumPy) against the index space without the axes it
lacks (``absent``); an output has the space's shape without its absent axes (kept as 1 with
``keepdims``). Strides are 0 on broadcast, length-1 and absent axes. A rank-0 space is passed
as one axis of length 1. See ``symnb/backends/render/runtime.py`` for the argument array.
"""

from __future__ import annotations

import numpy as np


def full_shape(shape: tuple, absent, nd: int) -> tuple:
    """``shape`` placed in an ``nd``-dim space: 1 on its absent axes, right-aligned elsewhere."""
    sub = (1,) * (nd - len(absent) - len(shape)) + tuple(shape)
    dims = iter(sub)
    return tuple(1 if i in absent else next(dims) for i in range(nd))


def index_space(shapes, absents) -> tuple | None:
    """The broadcast of the inputs' shapes in the space, or None when they do not broadcast."""
    nd = max((len(s) + len(a) for s, a in zip(shapes, absents)), default=0)
    try:
        return np.broadcast_shapes(*[full_shape(s, a, nd) for s, a in zip(shapes, absents)])
    except ValueError:
        return None


def strides(array: np.ndarray, absent, space: tuple) -> list[int]:
    """Byte strides of ``array`` over ``space`` (one axis of length 1 for a rank-0 space)."""
    if not space:
        return [0]
    sub = [d for i, d in enumerate(space) if i not in absent]
    pad = len(sub) - array.ndim
    own = [0 if dim == 1 else st for dim, st in zip(array.shape, array.strides)]
    dims = iter([0] * pad + own)
    return [0 if i in absent else next(dims) for i in range(len(space))]


def output_shape(space: tuple, absent, keepdims: bool = False) -> tuple:
    if keepdims:
        return tuple(1 if i in absent else d for i, d in enumerate(space))
    return tuple(d for i, d in enumerate(space) if i not in absent)


def arguments(inputs, in_absent, outputs, out_absent, space: tuple) -> list[int]:
    """The int64 argument array of a launch (outputs as allocated: without absent axes)."""
    args = [len(space) or 1, *(space or (1,))]
    for array, absent in zip(inputs, in_absent):
        args += strides(array, absent, space)
    for array, absent in zip(outputs, out_absent):
        args += strides(array, absent, space)
    return args + [int(o.size) for o in outputs]
