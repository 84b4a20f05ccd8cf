"""Layout ops on the device (plan ``Layout`` steps): basic slices, concatenation and reshapes
to sizes given as inputs, made of device arrays without a trip through the host.

A device array has no offset (a kernel gets its buffer's start), so a result whose first
element sits at byte 0 of its source's buffer is a view (shape and strides over the same
buffer), and any other one a copy, within the device, of the bytes it spans into a new buffer
(``Runtime.copy``, queued behind the kernels). A concatenation is one new array and, per
piece, one copy per run of contiguous bytes it fills (one per piece along axis 0). Each
function returns None where the device cannot express the result (a negative step, an index
out of range, pieces of another dtype, sizes that do not fit): the step's NumPy reference
then runs on the host, which gives NumPy's answer or its error.
"""

from __future__ import annotations

import numpy as np

from symnb.backends.device import windows
from symnb.backends.device.runtime import DeviceArray, c_strides
from symnb.ops.index import SYM

#: at most this many copies make a concatenation (past it, one along an inner axis of many
#: rows, the reference runs on the host)
MAX_COPIES = 256


def span(shape: tuple, strides: tuple, itemsize: int) -> int:
    """Bytes from an array's first element to past its last (strides >= 0), 0 when empty."""
    if 0 in shape:
        return 0
    return sum((n - 1) * s for n, s in zip(shape, strides)) + itemsize


def at_offset(src: DeviceArray, shape, strides, offset: int) -> DeviceArray:
    """``src``'s elements read through ``shape`` and non-negative ``strides`` from byte
    ``offset``: a view of its buffer at offset 0, else a copy of the bytes they span."""
    shape, strides = tuple(int(n) for n in shape), tuple(int(s) for s in strides)
    runtime = src.runtime
    nbytes = span(shape, strides, src.dtype.itemsize)
    if not nbytes:
        return runtime.empty(shape, src.dtype)
    if offset == 0:
        return DeviceArray(runtime, src.buffer, shape, src.dtype, strides, nbytes, src.lease)
    lease = runtime.pool.take(nbytes)
    runtime.copy(lease.buffer, 0, src.buffer, offset, nbytes)
    return DeviceArray(runtime, lease.buffer, shape, src.dtype, strides, nbytes, lease)


def sliced(step, arrays: list, ints: list, dense) -> DeviceArray | None:
    """``x[index]`` for Subtensor's spec (ints, slices, new axes; symbolic parts from
    ``ints``): its shape, strides and first element's offset, as NumPy computes them."""
    (x,), feed = arrays, iter(ints)
    shape, strides, offset, axis = [], [], 0, 0
    for entry in step.params:
        kind = entry[0]
        if kind == "new":
            shape.append(1)
            strides.append(0)
            continue
        n, stride = x.shape[axis], x.strides[axis]
        if kind == "int":
            i = int(next(feed)) if entry[1] == SYM else entry[1]
            if not -n <= i < n:
                return None  # the reference's IndexError
            offset += (i % n) * stride
        elif kind == "slice":
            bounds = [int(next(feed)) if b == SYM else b for b in entry[1:]]
            if bounds[2] is not None and bounds[2] <= 0:
                return None  # a reversed (or zero) step: no negative strides on a device
            picked = range(n)[slice(*bounds)]
            if len(picked):
                offset += picked.start * stride
            shape.append(len(picked))
            strides.append(stride * picked.step)
        else:
            return None
        axis += 1
    shape += x.shape[axis:]
    strides += x.strides[axis:]
    return at_offset(x, shape, strides, offset)


def concatenated(step, arrays: list, ints: list, dense) -> DeviceArray | None:
    """The pieces joined along ``axis``, each copied (C-ordered first where it is not) into
    a new array: per piece one copy per index of the axes before ``axis``."""
    (axis,) = step.params
    dtype = np.dtype(step.node.outputs[0].type.dtype)
    first = arrays[0]
    if any(a.dtype != dtype or a.ndim != first.ndim for a in arrays):
        return None
    axis = axis % first.ndim if first.ndim else 0
    if not first.ndim or any(
        a.shape[:axis] != first.shape[:axis] or a.shape[axis + 1 :] != first.shape[axis + 1 :]
        for a in arrays
    ):
        return None  # the reference's error
    rows = int(np.prod(first.shape[:axis], dtype=np.int64))
    inner = int(np.prod(first.shape[axis + 1 :], dtype=np.int64)) * dtype.itemsize
    total = sum(a.shape[axis] for a in arrays)
    pieces = [a for a in arrays if a.size]
    if len(pieces) * rows > MAX_COPIES:
        return None
    runtime = first.runtime
    out = runtime.empty((*first.shape[:axis], total, *first.shape[axis + 1 :]), dtype)
    pitch, start = total * inner, 0
    for a in arrays:
        width = a.shape[axis] * inner
        if a.size:
            source = a if a.c_contiguous else dense(a)
            for r in range(rows):
                runtime.copy(out.buffer, r * pitch + start, source.buffer, r * width, width)
        start += width
    return out


def reshaped(step, arrays: list, ints: list, dense) -> DeviceArray | None:
    """Reshape to ``target`` (ints, -1, named dims, given sizes from ``ints``): a view of a
    C-ordered array with C strides; a strided one is made C-ordered first, on the device."""
    (x,), (target, name_axes) = arrays, step.params
    axes, given = dict(name_axes), iter(ints)
    shape = []
    for d in target:
        if d is None:
            d = int(next(given))
        shape.append(x.shape[axes[d]] if isinstance(d, str) else int(d))
    if shape.count(-1) > 1 or any(n < -1 for n in shape):
        return None
    if -1 in shape:
        known = int(np.prod([n for n in shape if n != -1], dtype=np.int64))
        if known == 0 or x.size % known:
            return None
        shape[shape.index(-1)] = x.size // known
    if int(np.prod(shape, dtype=np.int64)) != x.size:
        return None  # the reference's error
    source = x if x.c_contiguous else dense(x)
    return source.view(tuple(shape), c_strides(tuple(shape), x.dtype.itemsize))


#: ``Layout.how`` -> its device form; "pad" and "max_pool_grad" are kernels (``windows.py``)
LAYOUTS = {
    "slice": sliced,
    "concatenate": concatenated,
    "reshape": reshaped,
    **windows.KERNELS,
}
