"""The device runtime interface (symnb/backends/device/runtime.py) through NVIDIA's
cuda-python: NVRTC compiles the CUDA C to machine code for the device's architecture, the
driver API loads, allocates, copies and launches on the primary context of device 0.

Without a driver (no GPU, or no ``libcuda``) the first function asks for it and gets a
DeviceError naming what is missing. The launch path was written without a GPU to run it on:
see the README.
"""

from __future__ import annotations

import functools

import numpy as np

from symnb.backends.cuda.dialect import CUDADialect
from symnb.backends.cuda.nvrtc import INSTALL, compile_cubin
from symnb.backends.device.runtime import DeviceError, Runtime
from symnb.errors import CompileError


def driver():
    """The driver API bindings, or a DeviceError saying what to install."""
    try:
        from cuda.bindings import driver as cu
    except ImportError:
        raise DeviceError(f"backend 'cuda' needs NVIDIA's cuda-python: {INSTALL}") from None
    return cu


class CUDAError(RuntimeError):
    """A driver call that did not return CUDA_SUCCESS (its error name in the message)."""


class CUDARuntime(Runtime):
    label = "CUDA"
    dialect = CUDADialect()
    errors = (CUDAError,)

    def __init__(self, ordinal: int = 0):
        cu = self.cu = driver()
        try:
            self.check(cu.cuInit(0))
        except (RuntimeError, CUDAError) as exc:  # no libcuda: a RuntimeError subclass
            raise DeviceError(
                f"backend 'cuda': no CUDA driver on this machine ({exc}); "
                "install NVIDIA's driver (libcuda) on a machine with a GPU"
            ) from None
        self.handle = self.check(cu.cuDeviceGet(ordinal))
        self.device_name = self.check(cu.cuDeviceGetName(256, self.handle)).split(b"\0")[0].decode()
        attr = cu.CUdevice_attribute
        major = self.check(cu.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.handle))  # fmt: skip
        minor = self.check(cu.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.handle))  # fmt: skip
        self.arch = f"sm_{major}{minor}"
        self.context = self.check(cu.cuDevicePrimaryCtxRetain(self.handle))
        self.check(cu.cuCtxSetCurrent(self.context))
        self.modules: list = []

    def check(self, returned):
        """The value of a driver call's ``(error, value...)``; CUDAError naming the error."""
        error, *values = returned if isinstance(returned, tuple) else (returned,)
        if error != self.cu.CUresult.CUDA_SUCCESS:
            _, name = self.cu.cuGetErrorName(error)
            raise CUDAError(name.decode() if isinstance(name, bytes) else str(error))
        return values[0] if len(values) == 1 else tuple(values)

    def build(self, source: str, names: list[str]) -> list:
        try:
            cubin = compile_cubin(source, self.arch)
            module = self.check(self.cu.cuModuleLoadData(cubin))
        except (CompileError, CUDAError) as exc:
            raise DeviceError(f"CUDA kernels do not build for {self.device_name} "
                              f"({self.arch}): {exc}") from None  # fmt: skip
        self.modules.append(module)
        return [self.check(self.cu.cuModuleGetFunction(module, n.encode())) for n in names]

    def alloc(self, nbytes: int):
        try:
            return _Allocation(self, self.check(self.cu.cuMemAlloc(nbytes)))
        except CUDAError as exc:
            raise DeviceError(f"CUDA device {self.device_name} could not allocate {nbytes:,} "
                              f"bytes ({exc}); use smaller batches") from None  # fmt: skip

    def upload(self, array: np.ndarray):
        buffer = self.alloc(array.nbytes)
        self.check(self.cu.cuMemcpyHtoD(buffer.pointer, array.ctypes.data, array.nbytes))
        return buffer

    def download(self, buffer, nbytes: int) -> np.ndarray:
        host = np.empty(nbytes, np.uint8)
        if nbytes:
            self.check(self.cu.cuMemcpyDtoH(host.ctypes.data, buffer.pointer, nbytes))
        return host

    def launch(self, kernel, groups: int, group_size: int, args: list) -> None:
        pointers = np.array([int(a.pointer) for a in args], np.uint64)
        params = np.array([pointers.ctypes.data + 8 * i for i in range(len(args))], np.uint64)
        self.check(self.cu.cuLaunchKernel(kernel, groups, 1, 1, group_size, 1, 1, 0, 0,
                                          params.ctypes.data, 0))  # fmt: skip

    def synchronize(self) -> None:
        self.check(self.cu.cuCtxSynchronize())


class _Allocation:
    """Device memory freed when the last array reading it goes."""

    __slots__ = ("runtime", "pointer")

    def __init__(self, runtime, pointer):
        self.runtime, self.pointer = runtime, pointer

    def __del__(self):
        try:
            self.runtime.cu.cuMemFree(self.pointer)
        except Exception:  # interpreter shutdown: the context goes with the process
            pass


@functools.cache
def cuda_runtime(ordinal: int = 0) -> CUDARuntime:
    return CUDARuntime(ordinal)


def cuda_problem(ordinal: int = 0) -> str | None:
    """None when a CUDA driver and device run kernels here; else why not (the tests' skip
    reason, and what ``python -m benchmarks.gpu`` prints)."""
    try:
        cuda_runtime(ordinal)
    except DeviceError as exc:
        return str(exc)
    return None
