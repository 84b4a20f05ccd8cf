"""The device runtime interface and the arrays that live on a device.

A runtime does five things: build a program from kernel source, allocate, copy to and from
the device, launch a kernel over a grid, synchronize. The executor (``execute.py``) is
written once against it; OpenCL (pyopencl) and CUDA (the driver API) each implement it in a
small class. Device arrays are immutable once written: a kernel always writes a new buffer,
so a view, an update that aliases another shared value, or an error half-way through a call
can never change a value someone else holds.
"""

from __future__ import annotations

import os

import numpy as np

from symnb.backends.render.source import render_program
from symnb.backends.schedule import gpu
from symnb.errors import SymnbError

#: built kernels a runtime keeps for later functions (past it, it starts again empty)
MAX_BUILT = 16384


class DeviceError(SymnbError, RuntimeError):
    """A device could not do what a step asked (no driver, out of memory, a kernel that does
    not build); the message names the device and the op."""


class Runtime:
    """What a device API supplies (see the module docstring). ``label``: "OpenCL" or
    "CUDA"; ``device_name``: the device, for cards and errors; ``float64``: whether kernels
    may use double precision; ``dialect``: the renderer of its kernel source."""

    label = "device"
    device_name = "?"
    float64 = True
    dialect = None
    errors: tuple = ()  # the API's exception classes, re-raised as DeviceError naming the op
    pid = 0  # the process that made the runtime (0: not recorded)
    _built: dict | None = None  # a kernel's own source -> the kernel built from it

    def check_process(self) -> None:
        """A forked child cannot use its parent's device context: the driver's threads and
        handles were not copied, and PoCL's child waits for them forever. A clear error."""
        if self.pid and self.pid != os.getpid():
            raise DeviceError(forked(self.label, self.pid))

    def kernels(self, descriptions: list, sources: list[str]) -> list:
        """The built kernel of each description, ``sources`` its own source (what the
        dialect renders for it alone, the key). Those this runtime has not built yet are
        built together as one program (one device-compiler run); the others are the kernels
        built before, so functions that share a kernel, or a function compiled again, do not
        compile it again in this process. Two descriptions of one source build once."""
        if self._built is None or len(self._built) >= MAX_BUILT:
            self._built = {}
        new: dict[str, object] = {}
        for description, source in zip(descriptions, sources):
            if source not in self._built:
                new.setdefault(source, description)
        if new:
            names = [f"sn_kernel_{i}" for i in range(len(new))]
            kernels = list(new.values())
            schedules = [gpu.schedule(kernel, self.dialect) for kernel in kernels]
            program = render_program(self.dialect, kernels, names, schedules)
            self._built.update(zip(new, self.build(program, names)))
        return [self._built[source] for source in sources]

    def build(self, source: str, names: list[str]) -> list:
        """The kernels ``names`` of ``source``, built for the device (DeviceError if not)."""
        raise NotImplementedError

    def alloc(self, nbytes: int):
        raise NotImplementedError

    def upload(self, array: np.ndarray):
        """A new buffer holding the bytes of the C-contiguous ``array``."""
        raise NotImplementedError

    def download(self, buffer, nbytes: int) -> np.ndarray:
        """The first ``nbytes`` of ``buffer`` as uint8 on the host (waits for the queue)."""
        raise NotImplementedError

    def launch(self, kernel, groups: int, group_size: int, args: list) -> None:
        """Queue ``kernel`` on ``groups`` work-groups of ``group_size`` items over buffers."""
        raise NotImplementedError

    def synchronize(self) -> None:
        raise NotImplementedError

    def product_library(self) -> str | None:
        """The BLAS this runtime runs matrix products with (shown in ``f.kernels``), if any."""
        return None

    def product(self, kernel, arrays: list, out: DeviceArray) -> bool:
        """Compute the matrix product ``kernel`` (a ``Contract``) of device ``arrays`` into
        ``out`` with the runtime's BLAS; False (nothing queued) when there is none or it does
        not take this layout, and the tiled kernel runs."""
        return False

    # -- arrays -------------------------------------------------------------------------------
    def empty(self, shape: tuple, dtype) -> DeviceArray:
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        strides = c_strides(shape, dtype.itemsize)
        return DeviceArray(self, self.alloc(max(nbytes, 1)), shape, dtype, strides, nbytes)

    def to_device(self, array) -> DeviceArray:
        """``array`` on this device: a device array of this runtime as it is, else a copy."""
        if isinstance(array, DeviceArray):
            if array.runtime is self:
                return array
            array = array.to_host()
        host = np.ascontiguousarray(array)
        buffer = self.upload(host if host.nbytes else np.zeros(1, np.uint8))
        return DeviceArray(self, buffer, host.shape, host.dtype, host.strides, host.nbytes)


def forked(label: str, parent: int) -> str:
    """What a forked child is told when it reaches for a device its parent opened."""
    return (f"{label} was opened in process {parent}, and this process ({os.getpid()}) is a "
            f"fork of it: a forked child cannot use its parent's {label} driver (it would "
            "hang). Start worker processes with the 'spawn' or 'forkserver' method "
            "(ProcessPoolExecutor(mp_context=multiprocessing.get_context('spawn'))), or use "
            "backend 'c' in forked workers")  # fmt: skip


def c_strides(shape: tuple, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.insert(0, step)
        step *= max(n, 1)
    return tuple(strides)


class DeviceArray:
    """An array in device memory: a buffer of ``nbytes`` read through ``shape`` and byte
    ``strides`` from its start (views share the buffer; nothing writes it after its kernel)."""

    __slots__ = ("runtime", "buffer", "shape", "dtype", "strides", "nbytes")

    def __init__(self, runtime, buffer, shape, dtype, strides, nbytes):
        self.runtime, self.buffer, self.nbytes = runtime, buffer, nbytes
        self.shape, self.dtype, self.strides = tuple(shape), np.dtype(dtype), tuple(strides)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def c_contiguous(self) -> bool:
        return self.strides == c_strides(self.shape, self.dtype.itemsize) or self.size <= 1

    def view(self, shape, strides) -> DeviceArray:
        return DeviceArray(self.runtime, self.buffer, shape, self.dtype, strides, self.nbytes)

    def to_host(self) -> np.ndarray:
        """A new host array with the values (a broadcast or transposed view is copied into a
        C-ordered array)."""
        if self.size == 0:
            return np.empty(self.shape, self.dtype)
        raw = self.runtime.download(self.buffer, self.nbytes).view(self.dtype)
        if self.c_contiguous:
            return raw[: self.size].reshape(self.shape)
        viewed = np.lib.stride_tricks.as_strided(raw, self.shape, self.strides, writeable=False)
        return np.ascontiguousarray(viewed)

    def __repr__(self):
        where = f"{self.runtime.label} {self.runtime.device_name}"
        return f"<device array {self.dtype}{list(self.shape)} on {where}>"


def grid_of(kernel, space: tuple, out_count: int) -> tuple[int, int]:
    """(work-groups, items per group) of a launch, as the kernel's GPU schedule lays it out
    (``symnb/backends/schedule/gpu.py``)."""
    return gpu.launch(gpu.schedule(kernel, None), space, out_count)
