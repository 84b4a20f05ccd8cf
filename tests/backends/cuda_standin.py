"""Stand-ins for NVIDIA's driver bindings (``cuda.bindings.driver``) and for ``pycuda``, for
the tests of backend "cuda" on a machine without a GPU.

``StandInDriver`` answers the driver calls symnb makes the way the driver does (the
``(CUresult, value...)`` tuples of cuda-python), keeps device memory in NumPy arrays,
records every call with the thread that made it, and can be told to fail: a call returning
an error (``fail={"cuDevicePrimaryCtxRetain": "CUDA_ERROR_DEVICE_UNAVAILABLE"}``), a
function the driver lacks (``missing={"cuDevicePrimaryCtxRetain"}``: cuda-python raises a
RuntimeError naming it), an old driver (``version=12040``), or a kernel that faults
(``fault_at_launch=n``: the n-th launch leaves the context's sticky error, which the next
synchronising call returns). Like the driver, it refuses calls that need a context from a
thread where none is current. Kernels do not run: their outputs stay zero.

``install_pycuda(path)`` writes a stand-in ``pycuda`` package that records pushes and pops
and, like pycuda, aborts the process at exit when a context is still pushed.
"""

from __future__ import annotations

import ctypes
import enum
import itertools
import textwrap
import threading
import types

import numpy as np


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_OUT_OF_MEMORY = 2
    CUDA_ERROR_NOT_INITIALIZED = 3
    CUDA_ERROR_INSUFFICIENT_DRIVER = 35
    CUDA_ERROR_DEVICE_UNAVAILABLE = 46
    CUDA_ERROR_NO_DEVICE = 100
    CUDA_ERROR_INVALID_DEVICE = 101
    CUDA_ERROR_INVALID_IMAGE = 200
    CUDA_ERROR_INVALID_CONTEXT = 201
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222
    CUDA_ERROR_ILLEGAL_ADDRESS = 700


class CUdevice_attribute(enum.IntEnum):  # noqa: N801 - the driver's spelling
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76


class FunctionNotFoundError(RuntimeError):
    """What cuda-python raises for a function the installed driver does not have."""


NEEDS_CONTEXT = {
    "cuMemAlloc",
    "cuMemFree",
    "cuMemcpyHtoD",
    "cuMemcpyDtoH",
    "cuMemcpyDtoD",
    "cuModuleLoadData",
    "cuModuleGetFunction",
    "cuLaunchKernel",
    "cuCtxSynchronize",
}
SYNCHRONISING = {"cuMemcpyHtoD", "cuMemcpyDtoH", "cuCtxSynchronize"}
OK = CUresult.CUDA_SUCCESS


class StandInDriver:
    """See the module docstring. ``calls``: (name, thread ident) of every call, in order."""

    CUresult = CUresult
    CUdevice_attribute = CUdevice_attribute

    def __init__(
        self,
        version=13000,
        capability=(9, 0),
        name="Stand-in H200",
        devices=1,
        fail=None,
        missing=(),
        fault_at_launch=None,
    ):
        self.version, self.capability, self.name = version, capability, name
        self.devices = devices
        self.fail = {call: CUresult[error] for call, error in (fail or {}).items()}
        self.missing = set(missing)
        self.fault_at_launch = fault_at_launch
        self.calls: list[tuple[str, int]] = []
        self.memory: dict[int, np.ndarray] = {}
        self.modules: list[bytes] = []
        self.launches: list[tuple] = []
        self.sticky = None  # the error a faulted kernel left in the context
        self._addresses = itertools.count(1 << 32, 1 << 35)  # (past the largest allocation)
        self._current = threading.local()
        self._lock = threading.Lock()

    # -- the machinery ------------------------------------------------------------------------
    def _enter(self, name: str):
        """Record the call; the error it returns instead of working, or None."""
        with self._lock:
            self.calls.append((name, threading.get_ident()))
        if name in self.missing:
            raise FunctionNotFoundError(f"function {name} is not found")
        if name in self.fail:
            return self.fail[name]
        if name in NEEDS_CONTEXT and getattr(self._current, "context", None) is None:
            return CUresult.CUDA_ERROR_INVALID_CONTEXT
        if name in SYNCHRONISING and self.sticky is not None:
            return self.sticky
        return None

    def count(self, name: str) -> int:
        return sum(1 for call, _ in self.calls if call == name)

    def threads(self, name: str) -> set[int]:
        return {thread for call, thread in self.calls if call == name}

    # -- the driver API -----------------------------------------------------------------------
    def cuGetErrorName(self, error):  # noqa: N802 - the driver's names
        return OK, CUresult(error).name.encode()

    def cuInit(self, flags):  # noqa: N802
        return (self._enter("cuInit") or OK,)

    def cuDriverGetVersion(self):  # noqa: N802
        return self._enter("cuDriverGetVersion") or OK, self.version

    def cuDeviceGet(self, ordinal):  # noqa: N802
        error = self._enter("cuDeviceGet")
        if error is None and ordinal >= self.devices:
            error = CUresult.CUDA_ERROR_INVALID_DEVICE
        return error or OK, ordinal

    def cuDeviceGetName(self, length, device):  # noqa: N802
        return self._enter("cuDeviceGetName") or OK, self.name.encode().ljust(length, b"\0")

    def cuDeviceGetAttribute(self, attribute, device):  # noqa: N802
        values = {
            CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: self.capability[0],
            CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: self.capability[1],
            CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: 132,
            CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: 1024,
            CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: 49152,
        }
        return self._enter("cuDeviceGetAttribute") or OK, values[attribute]

    def cuDevicePrimaryCtxRetain(self, device):  # noqa: N802
        return self._enter("cuDevicePrimaryCtxRetain") or OK, types.SimpleNamespace(device=device)

    def cuCtxSetCurrent(self, context):  # noqa: N802
        error = self._enter("cuCtxSetCurrent")
        if error is None:
            self._current.context = context
        return (error or OK,)

    def cuCtxSynchronize(self):  # noqa: N802
        return (self._enter("cuCtxSynchronize") or OK,)

    def cuModuleLoadData(self, code):  # noqa: N802
        error = self._enter("cuModuleLoadData")
        if error is None and not (code.startswith(b"\x7fELF") or b".entry" in code):
            error = CUresult.CUDA_ERROR_INVALID_IMAGE
        if error is None:
            self.modules.append(bytes(code))
        return error or OK, len(self.modules) - 1

    def cuModuleGetFunction(self, module, name):  # noqa: N802
        return self._enter("cuModuleGetFunction") or OK, ("function", module, name.decode())

    def cuMemAlloc(self, nbytes):  # noqa: N802
        error = self._enter("cuMemAlloc")
        if error is None and nbytes > 1 << 34:
            error = CUresult.CUDA_ERROR_OUT_OF_MEMORY
        if error:
            return error, 0
        address = next(self._addresses)
        self.memory[address] = np.zeros(max(nbytes, 1), np.uint8)
        return OK, address

    def cuMemFree(self, address):  # noqa: N802
        error = self._enter("cuMemFree")
        if error is None:
            self.memory.pop(int(address), None)
        return (error or OK,)

    def cuMemcpyHtoD(self, address, host, nbytes):  # noqa: N802
        error = self._enter("cuMemcpyHtoD")
        if error is None and nbytes:
            ctypes.memmove(self.memory[int(address)].ctypes.data, host, nbytes)
        return (error or OK,)

    def cuMemcpyDtoH(self, host, address, nbytes):  # noqa: N802
        error = self._enter("cuMemcpyDtoH")
        if error is None and nbytes:
            ctypes.memmove(host, self.memory[int(address)].ctypes.data, nbytes)
        return (error or OK,)

    def cuMemcpyDtoD(self, dst, src, nbytes):  # noqa: N802
        error = self._enter("cuMemcpyDtoD")
        if error is None and nbytes:
            (target, at), (source, start) = self._at(dst), self._at(src)
            target[at : at + nbytes] = source[start : start + nbytes]
        return (error or OK,)

    def _at(self, address) -> tuple:
        """The allocation holding a device address, and the address's offset into it."""
        address = int(address)
        base = max(a for a in self.memory if a <= address)
        return self.memory[base], address - base

    def cuLaunchKernel(self, function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):  # noqa: N802
        error = self._enter("cuLaunchKernel")
        if error is None:
            self.launches.append((function, (gx, gy, gz), (bx, by, bz)))
            if self.fault_at_launch == len(self.launches):
                self.sticky = CUresult.CUDA_ERROR_ILLEGAL_ADDRESS
        return (error or OK,)


def use(monkeypatch, driver: StandInDriver, launcher: str = "cuda-python"):
    """Make backend "cuda" start on ``driver`` (a new runtime, no cuBLAS)."""
    from symnb.backends.cuda import cublas
    from symnb.backends.cuda import runtime as cuda_runtime
    from symnb.config import config

    monkeypatch.setattr(cuda_runtime, "driver", lambda: driver)
    monkeypatch.setattr(cublas, "find_cublas", lambda loader=None: None)
    monkeypatch.setattr(config, "cuda_launcher", launcher)
    cuda_runtime._runtime.cache_clear()  # the caller clears it again after the test
    return driver


PYCUDA_DRIVER = '''
"""A stand-in for pycuda.driver (symnb's tests): records pushes and pops; like pycuda, it
aborts the process at exit when a context is still pushed."""
import atexit, os, sys, types

stack = []
log = []


class Error(Exception):
    pass


class MemoryError(Error):
    pass


def init():
    log.append("init")


def get_driver_version():
    return int(os.environ.get("STANDIN_DRIVER_VERSION", "13000"))


class _Context:
    def push(self):
        stack.append(self)
        log.append("push")

    def pop(self):
        stack.remove(self)
        log.append("pop")

    @staticmethod
    def synchronize():
        log.append("sync")


Context = _Context


class Device:
    def __init__(self, ordinal):
        self.ordinal = ordinal

    def name(self):
        return "Stand-in T4"

    def compute_capability(self):
        return (7, 5)

    def retain_primary_context(self):
        return _Context()


def mem_alloc(nbytes):
    log.append("alloc")
    return bytearray(nbytes)


def memcpy_htod(buffer, array):
    buffer[: array.nbytes] = array.tobytes()


def memcpy_dtoh(host, buffer):
    host[:] = memoryview(buffer)[: host.nbytes]


def module_from_buffer(code):
    log.append("module")
    return types.SimpleNamespace(get_function=lambda name: name)


def _cleanup():
    if stack:
        sys.stderr.write("PyCUDA ERROR: The context stack was not empty upon module cleanup.\\n")
        sys.stderr.flush()
        os.abort()
    if os.environ.get("STANDIN_PYCUDA_REPORT"):
        sys.stderr.write("stand-in pycuda: clean exit after " + " ".join(log) + "\\n")


atexit.register(_cleanup)
'''


def install_pycuda(path) -> None:
    """Write the stand-in ``pycuda`` package under the directory ``path``."""
    package = path / "pycuda"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "driver.py").write_text(textwrap.dedent(PYCUDA_DRIVER))
