"""A scan's loop on a device: the one loop runtime (``symnb.control.loop.run_loop``, its checks
and messages) over device arrays.

``DeviceMemory`` is where the loop's arrays live (``Memory``): each sequence's row at a step
and each state's history or plain output's row are copies between device buffers at byte
offsets (``Runtime.copy``), queued behind the kernels, into storage the loop allocates once per
call on the device. Nothing crosses the bus per step but an ``until`` condition's truth (one
scalar) and the results of a body step that runs NumPy on the host. The device executor
(``execute.py``, ``run_repeat``) runs each step's body plan on the device with it.
"""

from __future__ import annotations

import numpy as np

from symnb.backends.device.runtime import DeviceArray
from symnb.control.loop import Memory


class DeviceMemory(Memory):
    """Device arrays of ``runtime``; ``dense(array)`` is a C-ordered copy of a strided one,
    made on the device (a copy kernel: the linker's ``dense``)."""

    def __init__(self, runtime, dense):
        self.runtime, self.dense = runtime, dense

    def sequence(self, seq: DeviceArray) -> DeviceArray:
        """A sequence whose rows are dense byte ranges, or repeat one row (a time axis of
        stride 0) as it is; any other layout copied C-ordered once, on the device."""
        if seq.c_contiguous or seq.strides[0] == 0 or _dense(seq.shape[1:], seq.strides[1:], seq):
            return seq
        return self.dense(seq)

    def row(self, seq: DeviceArray, t: int) -> DeviceArray:
        """Row ``t``: the sequence's first row is a view of it; another is a copy of the
        bytes it spans into a new buffer (a device array has no offset)."""
        shape, strides = seq.shape[1:], seq.strides[1:]
        offset = t * seq.strides[0]
        if offset == 0:
            return seq.view(shape, strides)
        nbytes = _span(shape, strides, seq.dtype.itemsize)
        if not nbytes:
            return self.runtime.empty(shape, seq.dtype)
        lease = self.runtime.pool.take(nbytes)
        self.runtime.copy(lease.buffer, 0, seq.buffer, offset, nbytes)
        return DeviceArray(self.runtime, lease.buffer, shape, seq.dtype, strides, nbytes, lease)

    def value(self, value) -> DeviceArray:
        """A step's result on the device (one a NumPy step computed on the host goes up)."""
        if isinstance(value, DeviceArray) and value.runtime is self.runtime:
            return value
        return self.runtime.to_device(np.asarray(value))

    def empty(self, shape: tuple, dtype) -> DeviceArray:
        return self.runtime.empty(tuple(shape), dtype)

    def put(self, rows: DeviceArray, t: int, value: DeviceArray) -> DeviceArray:
        """``value`` copied into row ``t`` of ``rows`` (storage of this call, which no one
        else reads yet); the next step reads ``value`` itself."""
        if value.dtype != rows.dtype:
            value = self.cast(value, rows.dtype)
        source = value if value.c_contiguous else self.dense(value)
        nbytes = value.size * value.dtype.itemsize
        self.runtime.copy(rows.buffer, t * rows.strides[0], source.buffer, 0, nbytes)
        return value

    def cast(self, value: DeviceArray, dtype) -> DeviceArray:
        if value.dtype == np.dtype(dtype):
            return value
        # (a step's result has its output's dtype: this is not reached by compiled steps)
        return self.runtime.to_device(value.to_host().astype(dtype))

    def part(self, rows: DeviceArray, start: int, stop: int) -> DeviceArray:
        """Rows ``start:stop``: a view of the first ones, else a copy of theirs."""
        shape = (stop - start, *rows.shape[1:])
        if start == 0:
            return rows.view(shape, rows.strides)
        out = self.runtime.empty(shape, rows.dtype)
        nbytes = out.size * rows.dtype.itemsize
        self.runtime.copy(out.buffer, 0, rows.buffer, start * rows.strides[0], nbytes)
        return out

    def truth(self, value) -> bool:
        """The one value a step reads back to the host (an ``until`` condition)."""
        return bool(value.to_host() if isinstance(value, DeviceArray) else value)


def _span(shape: tuple, strides: tuple, itemsize: int) -> int:
    """Bytes from an array's first element to past its last (strides are never negative on
    a device: views there transpose, broadcast and window)."""
    if 0 in shape:
        return 0
    return sum((n - 1) * s for n, s in zip(shape, strides)) + itemsize


def _dense(shape: tuple, strides: tuple, like: DeviceArray) -> bool:
    """Whether ``shape`` over ``strides`` is C-ordered (a row that is one byte range)."""
    return DeviceArray(None, None, shape, like.dtype, strides, 0).c_contiguous
