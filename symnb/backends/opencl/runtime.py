"""The device runtime interface (symnb/backends/device/runtime.py) through pyopencl.

Programs are built with pyopencl's binary cache in the compile directory
(``<compiledir>/opencl``), which keys a build by the source, the options and the device, so a
second process loads the built kernels instead of compiling them again; on drivers that cache
builds themselves (PoCL, in ``$POCL_CACHE_DIR``; NVIDIA's) pyopencl leaves it to them. Within a
process, ``Runtime.kernels`` builds each kernel source once.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from symnb.backends.compiledir import compiledir, private_dir
from symnb.backends.device.runtime import (
    DeviceError,
    DeviceOutOfMemory,
    Runtime,
    device_facts,
    forked,
)
from symnb.backends.opencl.device import (
    NoOpenCLDevice,
    build_problem,
    candidates,
    usable_device,
)
from symnb.backends.opencl.dialect import OpenCLDialect
from symnb.backends.opencl.launch import pyopencl
from symnb.config import config
from symnb.core import locks
from symnb.errors import numbered

#: ``-w``: no warnings. A driver's compiler (PoCL's clang) prints them to the process's
#: stderr itself ("2 warnings generated." for a user's ``x <= x`` of integers), where the
#: user cannot silence them; a build that fails still says why (DeviceError).
BUILD_OPTIONS = ["-w"]


class OpenCLRuntime(Runtime):
    label = "OpenCL"
    dialect = OpenCLDialect()
    memory_hint = "use smaller batches or another device (sn.config.opencl_device)"

    def __init__(self, device):
        cl = self.cl = pyopencl()
        self.pid = os.getpid()
        _opened_in.append(self.pid)
        self.device = device
        self.device_name = f"{device.name.strip()} ({device.platform.name.strip()})"
        self.float64 = bool(device.double_fp_config)
        self.on_cpu = bool(device.type & cl.device_type.CPU)
        self.facts = device_facts(
            device.max_work_group_size, device.local_mem_size, device.max_compute_units
        )
        self.context = cl.Context(devices=[device])
        self.queue = cl.CommandQueue(self.context)
        self.errors = (cl.Error,)
        self.launching = locks.lock()  # unlocked in a forked child (core/locks.py)

    def build(self, source: str, names: list[str]) -> list:
        cache = private_dir(os.path.join(compiledir(), "opencl"))
        try:
            program = self.cl.Program(self.context, source).build(BUILD_OPTIONS, cache_dir=cache)
        except self.cl.Error as exc:
            raise DeviceError(
                f"OpenCL kernels do not build on {self.device_name}:\n{exc}\n"
                f"source:\n{numbered(source)}"
            ) from None
        return [getattr(program, name) for name in names]

    def alloc(self, nbytes: int):
        try:
            return self.cl.Buffer(self.context, self.cl.mem_flags.READ_WRITE, nbytes)
        except self.cl.Error as exc:
            refused = self.out_of_memory(nbytes, exc)
        raise refused  # (outside the except: no pyopencl error as its context, see below)

    def upload(self, array: np.ndarray):
        flags = self.cl.mem_flags.READ_WRITE | self.cl.mem_flags.COPY_HOST_PTR
        try:
            return self.cl.Buffer(self.context, flags, hostbuf=array)
        except self.cl.Error as exc:
            refused = self.out_of_memory(array.nbytes, exc)
        raise refused

    def write(self, buffer, array: np.ndarray) -> None:
        """Queued (pyopencl keeps ``array`` alive until the copy ran)."""
        self.cl.enqueue_copy(self.queue, buffer, array, is_blocking=False)

    def download(self, buffer, nbytes: int) -> np.ndarray:
        host = np.empty(nbytes, np.uint8)
        if nbytes:
            self.cl.enqueue_copy(self.queue, host, buffer, is_blocking=True)
        return host

    def read(self, buffer, nbytes: int) -> np.ndarray:
        host = np.empty(nbytes, np.uint8)
        if nbytes:
            self.cl.enqueue_copy(self.queue, host, buffer, is_blocking=False)
        return host

    def copy(self, dst, dst_offset: int, src, src_offset: int, nbytes: int) -> None:
        if nbytes:
            self.cl.enqueue_copy(
                self.queue,
                dst,
                src,
                byte_count=nbytes,
                src_offset=src_offset,
                dst_offset=dst_offset,
            )

    def launch(self, kernel, groups: int, group_size: int, args: list) -> None:
        """One kernel object serves every function whose kernel has its source, and pyopencl
        sets its arguments and then queues it: two threads must not interleave the two."""
        with self.launching:
            kernel(self.queue, (groups * group_size,), (group_size,), *args)

    def synchronize(self) -> None:
        self.queue.finish()

    def out_of_memory(self, nbytes: int, exc) -> DeviceError:
        """The driver's refusal of a buffer of ``nbytes``: a DeviceOutOfMemory where it had
        no room (``NO_ROOM``: also a buffer past the device's limit on one allocation). Its
        text holds the driver's; it is raised with no pyopencl error chained, which pickles
        in no process where exceptions pickle their causes (tblib's, as dask installs it)."""
        device, hint = f"OpenCL device {self.device_name}", self.memory_hint
        if getattr(exc, "code", None) in NO_ROOM:
            return DeviceOutOfMemory(device, nbytes, str(exc), hint)
        return DeviceError(f"{device} could not allocate {nbytes:,} bytes ({exc}); {hint}")


#: OpenCL's codes for an allocation it has no room for: MEM_OBJECT_ALLOCATION_FAILURE,
#: OUT_OF_RESOURCES, OUT_OF_HOST_MEMORY, INVALID_BUFFER_SIZE (past max_mem_alloc_size)
NO_ROOM = (-4, -5, -6, -61)


#: the processes that opened an OpenCL context (a fork's child inherits the list)
_opened_in: list[int] = []


@functools.cache
def opencl_runtime(choice: str) -> OpenCLRuntime:
    """The runtime of the device ``choice`` names (see ``sn.config.opencl_device``), made
    once per process and choice; a DeviceError in a forked child of a process that opened
    OpenCL (a new context there hangs as the parent's does)."""
    if _opened_in and _opened_in[0] != os.getpid():
        raise DeviceError(forked("OpenCL", _opened_in[0]))
    cl = pyopencl()
    try:
        return OpenCLRuntime(chosen_device(cl, choice))
    except NoOpenCLDevice as exc:
        raise DeviceError(f"backend 'opencl': {exc}") from None


def opencl_problem(choice: str = "") -> str | None:
    """None when the device ``choice`` names (``sn.config.opencl_device``'s reading) builds
    kernels here; else why not: no pyopencl, no device, none of that name, or one that cannot
    build (the device a setting names is taken as named, not probed, so it is probed here)."""
    try:
        runtime = opencl_runtime(choice)
    except (DeviceError, ImportError) as exc:
        return str(exc)
    problem = build_problem(runtime.cl, runtime.device) if choice else None
    return None if problem is None else f"{runtime.device_name} cannot build kernels: {problem}"


def current_runtime() -> OpenCLRuntime:
    runtime = opencl_runtime(config.opencl_device)
    runtime.check_process()
    return runtime


def chosen_device(cl, choice: str):
    """``choice`` "" -> the first device that builds; "P:D" -> that platform and device;
    other text -> the device whose "platform / device" name contains it."""
    if not choice:
        return usable_device(cl)
    found = candidates(cl)
    names = [f"{d.platform.name.strip()} / {d.name.strip()}" for d in found]
    numbers = choice.split(":")
    if len(numbers) > 1 and all(part.isdigit() for part in numbers):
        p, d = (int(part) for part in numbers) if len(numbers) == 2 else (-1, -1)
        platforms = cl.get_platforms()
        if 0 <= p < len(platforms) and 0 <= d < len(platforms[p].get_devices()):
            return platforms[p].get_devices()[d]
    else:
        for device, name in zip(found, names):
            if choice.lower() in name.lower():
                return device
    listed = "\n  ".join(names) or "(none)"
    raise NoOpenCLDevice(
        f"sn.config.opencl_device = {choice!r} names no device; the devices are:\n  {listed}"
    )
