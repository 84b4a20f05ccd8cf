"""The device runtime interface (symnb/backends/device/runtime.py) through NVIDIA's
cuda-python: NVRTC compiles the CUDA C to machine code for the device's architecture, the
driver API loads, allocates, copies and launches on the primary context of device 0.

Without a driver (no GPU, or no ``libcuda``) the first function asks for it and gets a
DeviceError naming what is missing. Matrix products go to cuBLAS where its wheel is installed
(``cublas.py``), else the tiled kernel. ``sn.config.cuda_launcher`` may pick pycuda instead of
cuda-python (``pycuda_runtime.py``: the same source, launched through ``pycuda.driver``).
The launch paths were written without a GPU to run them on: see docs/gpu_backends.md.
"""

from __future__ import annotations

import functools
import importlib.util

import numpy as np

from symnb.backends.cuda import cublas
from symnb.backends.cuda.dialect import CUDADialect
from symnb.backends.cuda.nvrtc import INSTALL, compile_cubin
from symnb.backends.cuda.pycuda_runtime import PyCUDARuntime
from symnb.backends.device.runtime import DeviceError, Runtime
from symnb.config import config
from symnb.errors import CompileError

LAUNCHERS = ("cuda-python", "pycuda")


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
        self.cublas_path = cublas.find_cublas()

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
        self.write(buffer, array)
        return buffer

    def write(self, buffer, array: np.ndarray) -> None:
        self.check(self.cu.cuMemcpyHtoD(buffer.pointer, array.ctypes.data, array.nbytes))

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

    def product_library(self) -> str | None:
        return "cuBLAS" if self.cublas_path else None

    def product(self, kernel, arrays: list, out) -> bool:
        return cublas.product(self, kernel, arrays, out, lambda buffer: int(buffer.pointer))


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


def cuda_runtime(ordinal: int = 0):
    """The runtime of CUDA device ``ordinal`` through the launcher ``sn.config.cuda_launcher``
    chooses (made once per process, device and launcher)."""
    return _runtime(ordinal, choose_launcher(config.cuda_launcher, importable))


@functools.cache
def _runtime(ordinal: int, launcher: str):
    if launcher == "pycuda":
        return PyCUDARuntime(ordinal)
    return CUDARuntime(ordinal)


def choose_launcher(choice: str, available) -> str:
    """The launcher, "cuda-python" or "pycuda": ``choice`` itself, or for "" the first of
    LAUNCHERS whose module ``available(name)`` finds (cuda-python when neither is: its error
    says what to install). An unknown choice is an error listing the known ones."""
    if choice:
        if choice not in LAUNCHERS:
            raise DeviceError(f"sn.config.cuda_launcher = {choice!r}: use one of "
                              f"{', '.join(LAUNCHERS)} or \"\" (the first installed)")  # fmt: skip
        return choice
    return next((name for name in LAUNCHERS if available(name)), LAUNCHERS[0])


def importable(launcher: str) -> bool:
    """Whether the launcher's Python module is installed (found, not imported)."""
    module = {"cuda-python": "cuda.bindings.driver", "pycuda": "pycuda.driver"}[launcher]
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # the parent package is missing
        return False


def cuda_problem(ordinal: int = 0) -> str | None:
    """None when a CUDA driver and device run kernels here; else why not (the tests' skip
    reason, and what ``python -m benchmarks.gpu`` prints)."""
    try:
        cuda_runtime(ordinal)
    except DeviceError as exc:
        return str(exc)
    return None
