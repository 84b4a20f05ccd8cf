"""The device runtime interface (symnb/backends/device/runtime.py) through NVIDIA's
cuda-python: NVRTC compiles the CUDA C to machine code for the device's architecture, the
driver API loads, allocates, copies and launches on the primary context of device 0.

Without a driver (no GPU, or no ``libcuda``) the first function asks for it and gets a
DeviceError naming what is missing. Matrix products go to cuBLAS where its wheel is installed
(``cublas.py``), else the tiled kernel. ``sn.config.cuda_launcher`` may pick pycuda instead of
cuda-python (``pycuda_runtime.py``: the same source, launched through ``pycuda.driver``).

Starting (``CUDARuntime``) compares the driver's CUDA version with NVRTC's and cuda-python's
(``version_problem``: a CUDA 13 build on a CUDA 12 driver is told to install
``symnb[cuda12]``), and every failure on the way (no device, an exclusive-mode GPU another
process holds, a context that cannot be made, a function an old driver lacks) is a
DeviceError naming the device and what to do (``HINTS``). The context is made current in
whichever thread calls (``current``). With ``sn.config.cuda_debug_sync`` each launch waits
for its kernel, so a kernel that faults is named by its own step.
The launch paths were written without a GPU to run them on: see docs/gpu_backends.md.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import threading

import numpy as np

from symnb.backends.cuda import cublas, nvrtc
from symnb.backends.cuda.dialect import CUDADialect
from symnb.backends.cuda.nvrtc import INSTALL, compile_for_device
from symnb.backends.cuda.pycuda_runtime import PyCUDARuntime
from symnb.backends.cuda.versions import bindings_version, driver_cuda, version_problem
from symnb.backends.device.runtime import Runtime, device_facts
from symnb.config import config
from symnb.errors import CompileError, DeviceError, DeviceOutOfMemory

LAUNCHERS = ("cuda-python", "pycuda")
#: what a driver error met while starting means, and what to do about it
HINTS = {
    "CUDA_ERROR_NO_DEVICE": "no CUDA GPU is visible to this process: check nvidia-smi and "
    "CUDA_VISIBLE_DEVICES",
    "CUDA_ERROR_INVALID_DEVICE": "there is no such CUDA device: check nvidia-smi and "
    "CUDA_VISIBLE_DEVICES",
    "CUDA_ERROR_DEVICE_UNAVAILABLE": "the GPU is in exclusive-process (or prohibited) compute "
    "mode and another process holds it: end that process, pick a free GPU with "
    "CUDA_VISIBLE_DEVICES, or have its compute mode set to DEFAULT (nvidia-smi -c DEFAULT)",
    "CUDA_ERROR_INSUFFICIENT_DRIVER": "the NVIDIA driver is older than the installed CUDA "
    "libraries: pip install 'symnb[cuda12]' for a CUDA 12 driver, or update the driver",
    "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE": "CUDA's forward-compatibility package does not "
    "run on this GPU: install the CUDA build of the driver's own version, pip install "
    "'symnb[cuda12]' for a CUDA 12 driver",
    "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH": "the driver's library (libcuda) and its kernel module "
    "differ in version (an update half done): reboot, or reinstall the driver",
    "CUDA_ERROR_OUT_OF_MEMORY": "the GPU's memory is full (nvidia-smi lists the processes "
    "holding it)",
    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION": "the driver is older than the NVRTC that made the "
    "PTX: update the driver, or pip install 'symnb[cuda12]' for a CUDA 12 driver",
    "CUDA_ERROR_NO_BINARY_FOR_GPU": "NVRTC built no code this GPU runs: update NVRTC "
    "(pip install -U 'symnb[cuda13]') or the driver",
}
#: errors of a kernel that faulted, reported by whichever later call meets them
FAULTS = (
    "CUDA_ERROR_ILLEGAL_ADDRESS",
    "CUDA_ERROR_LAUNCH_FAILED",
    "CUDA_ERROR_ASSERT",
    "CUDA_ERROR_ILLEGAL_INSTRUCTION",
    "CUDA_ERROR_MISALIGNED_ADDRESS",
    "CUDA_ERROR_LAUNCH_TIMEOUT",
    "CUDA_ERROR_HARDWARE_STACK_ERROR",
)


def driver():
    """The driver API bindings, or a DeviceError saying what to install."""
    try:
        from cuda.bindings import driver as cu
    except ImportError:
        raise DeviceError(f"backend 'cuda' needs NVIDIA's cuda-python: {INSTALL}") from None
    return cu


class CUDAError(RuntimeError):
    """A driver call that did not return CUDA_SUCCESS (its error name in the message)."""

    def __init__(self, message: str, name: str = ""):
        super().__init__(message)
        self.name = name


class CUDARuntime(Runtime):
    """``cu`` stands in for ``cuda.bindings.driver`` in the tests."""

    label = "CUDA"
    dialect = CUDADialect()
    errors = (CUDAError, cublas.CuBLASError)

    def __init__(self, ordinal: int = 0, cu=None):
        self.cu = cu or driver()
        self.ordinal = ordinal
        self.device_name = f"CUDA device {ordinal}"
        self.pid = os.getpid()
        self._local = threading.local()  # the context this thread last made current
        self.modules: list = []
        try:
            self._start(ordinal)
        except DeviceError:
            raise
        except CUDAError as exc:
            raise DeviceError(self.start_failure(exc.name, str(exc))) from None
        except RuntimeError as exc:  # FunctionNotFoundError: a function the driver lacks
            missing = type(exc).__name__ == "FunctionNotFoundError" or "not found" in str(exc)
            why = (
                (
                    "the driver lacks a function cuda-python calls, so it is older than "
                    "cuda-python: pip install 'symnb[cuda12]' for a CUDA 12 driver, or update "
                    "the driver"
                )
                if missing
                else "see the error"
            )
            raise DeviceError(
                f"backend 'cuda' could not start on {self.device_name}: "
                f"{type(exc).__name__}: {exc}; {why}"
            ) from None
        self.cublas_path = cublas.find_cublas()

    def _start(self, ordinal: int) -> None:
        cu = self.cu
        try:
            self.check(cu.cuInit(0), "cuInit")
        except CUDAError:
            raise  # the driver is there but does not start: start_failure says why
        except RuntimeError as exc:  # no libcuda: cuda.pathfinder's DynamicLibNotFoundError
            raise DeviceError(
                f"backend 'cuda': no CUDA driver on this machine ({exc}); "
                "install NVIDIA's driver (libcuda) on a machine with a GPU"
            ) from None
        found = self.check(cu.cuDriverGetVersion(), "cuDriverGetVersion")
        self.driver_version = driver_cuda(found)
        self.handle = self.check(cu.cuDeviceGet(ordinal), "cuDeviceGet")
        name = self.check(cu.cuDeviceGetName(256, self.handle), "cuDeviceGetName")
        name = name.split(b"\0")[0].decode(errors="replace")
        self.device_name = f"{name} (CUDA device {ordinal})"
        attr = cu.CUdevice_attribute
        major, minor = (
            self.check(
                cu.cuDeviceGetAttribute(
                    getattr(attr, f"CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_{part}"), self.handle
                ),
                "cuDeviceGetAttribute",
            )
            for part in ("MAJOR", "MINOR")
        )
        self.arch_number = 10 * major + minor
        self.facts = device_facts(
            *(
                self._attribute(name)
                for name in (
                    "MAX_THREADS_PER_BLOCK",
                    "MAX_SHARED_MEMORY_PER_BLOCK",
                    "MULTIPROCESSOR_COUNT",
                )
            )
        )
        self.arch = f"sm_{self.arch_number}"
        try:
            self.nvrtc_version = nvrtc.version()
            nvrtc.target(self.arch_number)
        except (ImportError, CompileError) as exc:
            raise DeviceError(
                f"backend 'cuda' cannot build kernels for {self.device_name} ({self.arch}): {exc}"
            ) from None
        problem = version_problem(self.driver_version, self.nvrtc_version, bindings_version())
        if problem:
            raise DeviceError(f"backend 'cuda' cannot use {self.device_name}: {problem}")
        self.context = self.check(
            cu.cuDevicePrimaryCtxRetain(self.handle), "cuDevicePrimaryCtxRetain"
        )
        self.current()

    def _attribute(self, name: str):
        """The device's ``CU_DEVICE_ATTRIBUTE_<name>``, or None where the driver or its
        bindings do not give it (the schedule then takes its default)."""
        try:
            attribute = getattr(self.cu.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}")
            return self.check(self.cu.cuDeviceGetAttribute(attribute, self.handle), name)
        except (AttributeError, RuntimeError):
            return None

    def start_failure(self, name: str, message: str) -> str:
        """A driver error met while starting, as a DeviceError's message."""
        hint = "" if name in HINTS else "; check that nvidia-smi lists the GPU and the driver"
        return f"backend 'cuda' could not start on {self.device_name}: {message}{hint}"

    def current(self) -> None:
        """Make the context current in the calling thread (once per thread): the driver
        keeps a current context per thread, and a call from a thread without one (a
        ThreadPoolExecutor's, a server's worker) would fail with CUDA_ERROR_INVALID_CONTEXT."""
        if getattr(self._local, "context", None) is not self.context:
            self.check(self.cu.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")
            self._local.context = self.context

    def check(self, returned, call: str = ""):
        """The value of a driver call's ``(error, value...)``; CUDAError naming the call and
        the error otherwise."""
        error, *values = returned if isinstance(returned, tuple) else (returned,)
        if error != self.cu.CUresult.CUDA_SUCCESS:
            _, name = self.cu.cuGetErrorName(error)
            name = name.decode() if isinstance(name, bytes) else str(error)
            message = f"{call} returned {name}" if call else name
            if name in FAULTS and not config.cuda_debug_sync:
                message += (
                    " (a kernel faulted, maybe an earlier one: set "
                    "sn.config.cuda_debug_sync = True to name its node)"
                )
            elif name in HINTS:
                message += f" ({HINTS[name]})"
            raise CUDAError(message, name)
        if not values:
            return None
        return values[0] if len(values) == 1 else tuple(values)

    def build(self, source: str, names: list[str]) -> list:
        self.current()
        kind = "CUBIN"
        try:
            code, kind = compile_for_device(source, self.arch_number)
            module = self.check(self.cu.cuModuleLoadData(code), "cuModuleLoadData")
            self.modules.append(module)
            return [
                self.check(self.cu.cuModuleGetFunction(module, n.encode()), "cuModuleGetFunction")
                for n in names
            ]
        except (CompileError, CUDAError, ImportError) as exc:
            made = "" if kind == "CUBIN" else ", as PTX for the newest architecture NVRTC knows"
            raise DeviceError(
                f"CUDA kernels do not build for {self.device_name} ({self.arch}{made}): {exc}"
            ) from None

    def alloc(self, nbytes: int):
        self.current()
        try:
            return _Allocation(self, self.check(self.cu.cuMemAlloc(nbytes), "cuMemAlloc"))
        except CUDAError as exc:
            device = f"CUDA device {self.device_name}"
            if exc.name == "CUDA_ERROR_OUT_OF_MEMORY":
                raise DeviceOutOfMemory(device, nbytes, str(exc), "use smaller batches") from None
            raise DeviceError(
                f"{device} could not allocate {nbytes:,} bytes ({exc}); use smaller batches"
            ) from None

    def upload(self, array: np.ndarray):
        buffer = self.alloc(array.nbytes)
        self.write(buffer, array)
        return buffer

    def write(self, buffer, array: np.ndarray) -> None:
        self.current()
        self.check(
            self.cu.cuMemcpyHtoD(buffer.pointer, array.ctypes.data, array.nbytes), "cuMemcpyHtoD"
        )

    def download(self, buffer, nbytes: int) -> np.ndarray:
        host = np.empty(nbytes, np.uint8)
        if nbytes:
            self.current()
            self.check(
                self.cu.cuMemcpyDtoH(host.ctypes.data, buffer.pointer, nbytes), "cuMemcpyDtoH"
            )
        return host

    def copy(self, dst, dst_offset: int, src, src_offset: int, nbytes: int) -> None:
        """On the default stream, behind the kernels queued before it (a copy between device
        addresses does not wait for the device)."""
        if nbytes:
            self.current()
            self.check(
                self.cu.cuMemcpyDtoD(
                    int(dst.pointer) + dst_offset, int(src.pointer) + src_offset, nbytes
                ),
                "cuMemcpyDtoD",
            )

    def launch(self, kernel, groups: int, group_size: int, args: list) -> None:
        """Queue the kernel; with ``sn.config.cuda_debug_sync`` wait for it, so a kernel that
        faults is reported by its own step (the executor names the node and your line)."""
        self.current()
        pointers = np.array([int(a.pointer) for a in args], np.uint64)
        params = np.array([pointers.ctypes.data + 8 * i for i in range(len(args))], np.uint64)
        self.check(
            self.cu.cuLaunchKernel(
                kernel, groups, 1, 1, group_size, 1, 1, 0, 0, params.ctypes.data, 0
            ),
            "cuLaunchKernel",
        )
        if config.cuda_debug_sync:
            self.check(self.cu.cuCtxSynchronize(), "cuCtxSynchronize after the launch")

    def synchronize(self) -> None:
        self.current()
        self.check(self.cu.cuCtxSynchronize(), "cuCtxSynchronize")

    def product_library(self) -> str | None:
        return "cuBLAS" if self.cublas_path else None

    def product(self, kernel, arrays: list, out) -> bool:
        self.current()
        done = cublas.product(self, kernel, arrays, out, lambda buffer: int(buffer.pointer))
        if done and config.cuda_debug_sync:
            self.check(self.cu.cuCtxSynchronize(), "cuCtxSynchronize after cuBLAS")
        return done


class _Allocation:
    """Device memory freed when the last array reading it goes."""

    __slots__ = ("runtime", "pointer")

    def __init__(self, runtime, pointer):
        self.runtime, self.pointer = runtime, pointer

    def __del__(self):
        try:
            self.runtime.current()  # the last reference may go in another thread
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
            raise DeviceError(
                f"sn.config.cuda_launcher = {choice!r}: use one of "
                f'{", ".join(LAUNCHERS)} or "" (the first installed)'
            )
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
