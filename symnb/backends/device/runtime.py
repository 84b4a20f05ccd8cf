"""The device runtime interface and the arrays that live on a device.

A runtime does five things: build a program from kernel source, allocate, copy to, from and
within the device, launch a kernel over a grid, synchronize. The executor (``execute.py``) is
written once against it; OpenCL (pyopencl) and CUDA (the driver API) each implement it in a
small class. Device arrays are immutable once written: a kernel always writes a new buffer,
so a view, an update that aliases another shared value, or an error half-way through a call
can never change a value someone else holds.
"""

from __future__ import annotations

import math
import os

import numpy as np

from symnb.backends.kernels.ir import Map, Reduce
from symnb.backends.render.source import render_program
from symnb.backends.schedule import gpu
from symnb.backends.schedule.base import DeviceFacts
from symnb.errors import DeviceError, DeviceOutOfMemory  # noqa: F401 - raised by runtimes

#: built kernels a runtime keeps for later functions (past it, it starts again empty)
MAX_BUILT = 16384
#: the most bytes an array may have: NumPy's limit (``intp``), and the launch integers'
#: (int64). A size past it is refused before any driver is asked (``Pool.take``)
MAX_BYTES = int(np.iinfo(np.intp).max)


class Runtime:
    """What a device API supplies (see the module docstring). ``label``: "OpenCL" or
    "CUDA"; ``device_name``: the device, for cards and errors; ``float64``: whether kernels
    may use double precision; ``dialect``: the renderer of its kernel source; ``facts``: what
    the GPU schedule knows of the device (work-group and local memory limits, compute units),
    read from it when the runtime starts; ``on_cpu``: whether the device is the host's CPU
    (an OpenCL CPU device such as PoCL), where a loop costs less on the host than a launch
    per step (``sn.config.device_loops``)."""

    label = "device"
    device_name = "?"
    float64 = True
    on_cpu = False
    dialect = None
    facts = DeviceFacts()
    errors: tuple = ()  # the API's exception classes, re-raised as DeviceError naming the op
    #: what a DeviceOutOfMemory of this runtime tells the user to do
    memory_hint = "use smaller batches"
    pid = 0  # the process that made the runtime (0: not recorded)
    _built: dict | None = None  # a kernel's own source -> the kernel built from it
    _pool: Pool | None = None
    _ints: dict | None = None  # int64 parameters -> their buffer (``ints_on_device``)

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
        self._built = _room(self._built)
        new: dict[str, object] = {}
        for description, source in zip(descriptions, sources):
            if source not in self._built:
                new.setdefault(source, description)
        if new:
            names = [f"sn_kernel_{i}" for i in range(len(new))]
            kernels = list(new.values())
            schedules = [gpu.schedule(kernel, self.dialect, self.facts) for kernel in kernels]
            program = render_program(self.dialect, kernels, names, schedules)
            self._built.update(zip(new, self.build(program, names)))
        return [self._built[source] for source in sources]

    def program(self, source: str, name: str):
        """Kernel ``name`` of a hand-written ``source`` (``device/windows.py``), built once
        per runtime, kept with the described kernels it built."""
        self._built = _room(self._built)
        kernel = self._built.get(source)
        if kernel is None:
            kernel = self._built[source] = self.build(source, [name])[0]
        return kernel

    def ints_on_device(self, values) -> object:
        """A buffer holding ``values`` as int64 (a hand-written kernel's parameters),
        uploaded once per distinct tuple (the buffer is never written after)."""
        key = tuple(int(v) for v in values)
        self._ints = _room(self._ints)
        buffer = self._ints.get(key)
        if buffer is None:
            buffer = self._ints[key] = self.upload(np.array(key, np.int64))
        return buffer

    def build(self, source: str, names: list[str]) -> list:
        """The kernels ``names`` of ``source``, built for the device (DeviceError if not)."""
        raise NotImplementedError

    def alloc(self, nbytes: int):
        """A new buffer of ``nbytes`` from the driver (the pool's source: ``Pool``)."""
        raise NotImplementedError

    def upload(self, array: np.ndarray):
        """A new buffer holding the bytes of the C-contiguous ``array``."""
        raise NotImplementedError

    def write(self, buffer, array: np.ndarray) -> None:
        """Copy the C-contiguous ``array`` into the start of ``buffer``, queued: the host
        array is not written before the call's synchronisation."""
        raise NotImplementedError

    def download(self, buffer, nbytes: int) -> np.ndarray:
        """The first ``nbytes`` of ``buffer`` as uint8 on the host (waits for the queue)."""
        raise NotImplementedError

    def read(self, buffer, nbytes: int) -> np.ndarray:
        """A host array that holds the first ``nbytes`` of ``buffer`` once ``synchronize``
        returned (a copy queued behind the kernels; the default waits now)."""
        return self.download(buffer, nbytes)

    def copy(self, dst, dst_offset: int, src, src_offset: int, nbytes: int) -> None:
        """Queue a copy of ``nbytes`` bytes of buffer ``src`` from byte ``src_offset`` into
        buffer ``dst`` at byte ``dst_offset``, on the device (nothing crosses the bus),
        ordered behind what was queued before it (a loop's rows: ``device/loop.py``)."""
        raise NotImplementedError

    def launch(self, kernel, groups: int, group_size: int, args: list) -> None:
        """Queue ``kernel`` on ``groups`` work-groups of ``group_size`` items over buffers."""
        raise NotImplementedError

    def synchronize(self) -> None:
        raise NotImplementedError

    def too_big(self, nbytes: int) -> DeviceOutOfMemory:
        """The refusal of ``nbytes`` past ``MAX_BYTES``, which no array can have (a shape
        whose element count or byte size an int64 does not hold): the true byte count, the
        driver never asked (pyopencl and the CUDA bindings take no such number)."""
        return past_max_bytes(nbytes, f"{self.label} device {self.device_name}", self.memory_hint)

    def product_library(self) -> str | None:
        """The BLAS this runtime runs matrix products with (shown in ``f.kernels``), if any."""
        return None

    def product(self, kernel, arrays: list, out: DeviceArray) -> bool:
        """Compute the matrix product ``kernel`` (a ``Contract``) of device ``arrays`` into
        ``out`` with the runtime's BLAS; False (nothing queued) when there is none or it does
        not take this layout, and the tiled kernel runs."""
        return False

    # -- arrays -------------------------------------------------------------------------------
    @property
    def pool(self) -> Pool:
        """This runtime's free buffers by size (made on first use)."""
        if self._pool is None:
            self._pool = Pool(self.alloc, self.too_big)
        return self._pool

    def empty(self, shape: tuple, dtype) -> DeviceArray:
        """A new array (its buffer from the pool: reused once no array reads the last one
        of its size; kernels queue in order, so a later kernel writes it only after the
        earlier ones read it)."""
        dtype = np.dtype(dtype)
        nbytes = nbytes_of(shape, dtype.itemsize)
        strides = c_strides(shape, dtype.itemsize)
        lease = self.pool.take(max(nbytes, 1))
        return DeviceArray(self, lease.buffer, shape, dtype, strides, nbytes, lease)

    def to_device(self, array) -> DeviceArray:
        """``array`` on this device: a device array of this runtime as it is, else a copy
        (into a buffer from the pool)."""
        if isinstance(array, DeviceArray):
            if array.runtime is self:
                return array
            array = array.to_host()
        host = np.require(array, requirements="C")  # (ascontiguousarray makes 0-d 1-d)
        lease = self.pool.take(max(host.nbytes, 1))
        if host.nbytes:
            self.write(lease.buffer, host)
        return DeviceArray(
            self, lease.buffer, host.shape, host.dtype, host.strides, host.nbytes, lease
        )


#: the smallest block the pool hands out; each power of two above it is split in QUARTERS
MIN_BLOCK = 256
QUARTERS = 4
#: bytes of free blocks a pool keeps at most (past it a freed block goes back to the driver)
MAX_HELD = 1 << 30


def bucket_of(nbytes: int) -> int:
    """The block size for ``nbytes``: at least MIN_BLOCK, rounded up to a quarter step of
    its power of two (at most 25% of a block unused)."""
    if nbytes <= MIN_BLOCK:
        return MIN_BLOCK
    step = 1 << max((nbytes - 1).bit_length() - 1 - (QUARTERS.bit_length() - 1), 0)
    return -(-nbytes // step) * step


class Pool:
    """Free device buffers of a runtime by block size (``bucket_of``): ``take`` reuses a
    free one of the size or asks the driver (``allocate``); a buffer goes back when the
    last array reading it goes (``Lease``). ``allocations``: the driver's, counted; where
    the driver has no memory left, the free blocks are handed back and the driver asked
    again; a refusal then says how many bytes were asked for (``DeviceOutOfMemory``).
    ``too_big(nbytes)``: the error for a size past ``MAX_BYTES``, refused without asking
    the driver (``Runtime.too_big``)."""

    def __init__(self, allocate, too_big=None):
        self.allocate, self.free, self.held = allocate, {}, 0
        self.too_big = too_big or past_max_bytes
        self.allocations = self.reuses = 0

    def take(self, nbytes: int) -> Lease:
        if nbytes > MAX_BYTES:
            raise self.too_big(nbytes)
        size = bucket_of(nbytes)
        try:
            buffer = self.free.get(size, []).pop()  # (atomic: threads may share a runtime)
        except IndexError:
            pass
        else:
            self.reuses += 1
            self.held -= size
            return Lease(self, size, buffer)
        try:
            buffer = self.new_block(size)
        except DeviceOutOfMemory as exc:
            raise exc.asked(nbytes) from exc.__cause__
        self.allocations += 1
        return Lease(self, size, buffer)

    def new_block(self, size: int):
        """A block from the driver; where it has no memory left, the free blocks go back to
        it and it is asked again."""
        try:
            return self.allocate(size)
        except DeviceOutOfMemory:
            if not self.held:
                raise
            self.release()
            return self.allocate(size)

    def give(self, size: int, buffer) -> None:
        if self.held + size <= MAX_HELD:
            self.free.setdefault(size, []).append(buffer)
            self.held += size

    def release(self) -> None:
        """Every free block back to the driver."""
        self.free, self.held = {}, 0


class Lease:
    """A pool's block while arrays read it: back to the pool when the last one goes."""

    __slots__ = ("pool", "size", "buffer")

    def __init__(self, pool: Pool, size: int, buffer):
        self.pool, self.size, self.buffer = pool, size, buffer

    def __del__(self):
        try:
            self.pool.give(self.size, self.buffer)
        except Exception:  # interpreter shutdown
            pass


def past_max_bytes(
    nbytes: int, device: str = "the device", hint: str = "use smaller batches"
) -> DeviceOutOfMemory:
    """The refusal of ``nbytes`` past ``MAX_BYTES`` by ``device`` (a bare pool's, without a
    runtime to name it: "the device")."""
    reason = f"past the {MAX_BYTES:,} bytes an array can have: its size is an int64"
    return DeviceOutOfMemory(device, nbytes, reason, hint)


def _room(cache: dict | None) -> dict:
    """``cache``, or a new one where there is none yet or it holds ``MAX_BUILT`` entries (a
    long session of many kernels starts again rather than grow without end)."""
    return {} if cache is None or len(cache) >= MAX_BUILT else cache


def forked(label: str, parent: int) -> str:
    """What a forked child is told when it reaches for a device its parent opened."""
    return (
        f"{label} was opened in process {parent}, and this process ({os.getpid()}) is a "
        f"fork of it: a forked child cannot use its parent's {label} driver (it would "
        "hang). Start worker processes with the 'spawn' or 'forkserver' method "
        "(ProcessPoolExecutor(mp_context=multiprocessing.get_context('spawn'))), or use "
        "backend 'c' in forked workers"
    )


def nbytes_of(shape, itemsize: int) -> int:
    """The bytes of an array of ``shape``, a Python int (NumPy's int64 product wraps past
    2**63: 2**32 x 2**32 elements made 0 bytes)."""
    return math.prod(int(n) for n in shape) * itemsize


def c_strides(shape: tuple, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.insert(0, step)
        step *= max(n, 1)
    return tuple(strides)


class DeviceArray:
    """An array in device memory: a buffer of ``nbytes`` read through ``shape`` and byte
    ``strides`` from its start (views share the buffer; nothing writes it after its kernel)."""

    __slots__ = ("runtime", "buffer", "shape", "dtype", "strides", "nbytes", "lease")

    def __init__(self, runtime, buffer, shape, dtype, strides, nbytes, lease=None):
        self.runtime, self.buffer, self.nbytes = runtime, buffer, nbytes
        self.shape, self.dtype, self.strides = tuple(shape), np.dtype(dtype), tuple(strides)
        self.lease = lease  # the pool's block (``Lease``), held while an array reads it

    def __bool__(self):
        """No truth value: its elements are on the device. An object's default truth (True)
        read as a condition took the then-side of every ifelse whose condition was on the
        device; read it on the host first (``Call.host``)."""
        raise TypeError("a device array has no truth value on the host; copy it there first")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def c_contiguous(self) -> bool:
        """Whether the elements are C-ordered from the buffer's start (as NumPy says: the
        stride of a length-1 axis does not matter)."""
        if self.size <= 1:
            return True
        dense = c_strides(self.shape, self.dtype.itemsize)
        return all(n == 1 or s == d for n, s, d in zip(self.shape, self.strides, dense))

    def view(self, shape, strides) -> DeviceArray:
        return DeviceArray(
            self.runtime, self.buffer, shape, self.dtype, strides, self.nbytes, self.lease
        )

    def to_host(self) -> np.ndarray:
        """A new host array with the values (a broadcast or transposed view is copied into a
        C-ordered array); a DeviceError in a forked child of the process that made the
        runtime (``Runtime.check_process``: a download there would hang), so that reading a
        shared variable whose value lives on the device, in any backend's call or pickle,
        says what to do instead."""
        self.runtime.check_process()
        if self.size == 0:
            return np.empty(self.shape, self.dtype)
        return self.from_bytes(self.runtime.download(self.buffer, self.nbytes))

    def read(self):
        """The values as ``to_host`` gives them, once the runtime synchronised: a copy queued
        now, finished by the returned function (several results wait for one sync)."""
        self.runtime.check_process()
        if self.size == 0:
            return lambda: np.empty(self.shape, self.dtype)
        raw = self.runtime.read(self.buffer, self.nbytes)
        return lambda: self.from_bytes(raw)

    def from_bytes(self, raw: np.ndarray) -> np.ndarray:
        """The array from a copy of its buffer's bytes."""
        raw = raw.view(self.dtype)
        if self.c_contiguous:
            return raw[: self.size].reshape(self.shape)
        viewed = np.lib.stride_tricks.as_strided(raw, self.shape, self.strides, writeable=False)
        return np.ascontiguousarray(viewed)

    def __repr__(self):
        where = f"{self.runtime.label} {self.runtime.device_name}"
        return f"<device array {self.dtype}{list(self.shape)} on {where}>"


def grid_of(kernel, space: tuple, out_count: int, facts: DeviceFacts | None = None):
    """(work-groups, items per group) of a launch, as the kernel's GPU schedule on a device
    with ``facts`` lays it out (``symnb/backends/schedule/gpu.py``)."""
    return gpu.launch(gpu.schedule(kernel, None, facts), space, out_count)


def launch_kernel(runtime, fn, kernel, space: tuple, out_count: int, args, buffers) -> None:
    """Queue built ``fn`` (``kernel``'s) over ``space`` with ``out_count`` output elements,
    ``args`` the launch integers' buffer, ``buffers`` the operands' then the status flag's,
    as the kernel's GPU schedule on this device lays it out. A reduction's kernel takes a
    scratch buffer before the status flag: its output for one pass; where its outputs are
    few and long (``gpu.parts``), a block from the pool for the partial results (8 bytes,
    then G per output in the accumulator's type) and two launches over it (``size * G``
    work-groups, then ``size``; ``ReduceWriter.two_pass``). The block goes back to the pool
    once queued: a later kernel that takes it is queued behind both."""
    schedule = gpu.schedule(kernel, None, runtime.facts)
    groups, size = gpu.launch(schedule, space, out_count)
    *operands, status = buffers
    if not isinstance(kernel.body, Reduce):
        return runtime.launch(fn, groups, size, [args, *operands, status])
    out = operands[len(kernel.inputs)]
    parts = gpu.parts(schedule, space, out_count)
    if not parts:
        return runtime.launch(fn, groups, size, [args, *operands, out, status])
    itemsize = np.dtype(kernel.body.acc_dtype).itemsize
    lease = runtime.pool.take(8 + out_count * parts * itemsize)
    runtime.launch(fn, out_count * parts, size, [args, *operands, lease.buffer, status])
    runtime.launch(fn, out_count, size, [args, *operands, lease.buffer, status])
    return None


def launch_ints(kernel, args: list[int], nops: int) -> list[int]:
    """The launch integers a kernel reads: a map's or reduction's over its collapsed axes
    (``gpu.collapse``: a contiguous call is one axis, indexed without division); a row
    program's and a product's as they are (they address rows and tiles by their axes)."""
    if isinstance(kernel.body, (Map, Reduce)):
        return gpu.collapse(list(args), nops)
    return list(args)


def device_facts(max_group, local_bytes, compute_units) -> DeviceFacts:
    """``DeviceFacts`` from what a driver reported, its defaults where it reported nothing
    usable (None or not a positive number)."""
    found, default = {}, DeviceFacts()
    for name, value in (
        ("max_group", max_group),
        ("local_bytes", local_bytes),
        ("compute_units", compute_units),
    ):
        ok = isinstance(value, (int, np.integer)) and value > 0
        found[name] = int(value) if ok else getattr(default, name)
    return DeviceFacts(**found)
