"""The device runtime interface through pycuda, for users who have it
(``sn.config.cuda_launcher = "pycuda"``, or "" where cuda-python's driver bindings are not
installed): the same CUDA C, compiled by NVRTC to machine code for the device, loaded and
launched through ``pycuda.driver`` on device ``ordinal``'s primary context.

It was written without a GPU or pycuda to run it on (pycuda does not install here): the
tests run it against a stand-in for ``pycuda.driver`` that records the calls, which checks
how arguments are packed, not that pycuda accepts them.
"""

from __future__ import annotations

import atexit
import threading
import weakref

import numpy as np

from symnb.backends.cuda import cublas, nvrtc
from symnb.backends.cuda.dialect import CUDADialect
from symnb.backends.cuda.nvrtc import INSTALL, compile_for_device
from symnb.backends.cuda.versions import driver_cuda, version_problem
from symnb.backends.device.runtime import Runtime, device_facts
from symnb.config import config
from symnb.errors import CompileError, DeviceError, DeviceOutOfMemory


def pycuda_driver():
    """``pycuda.driver``, or a DeviceError saying what is missing."""
    try:
        import pycuda.driver as drv
    except ImportError as exc:  # not installed, or installed where there is no libcuda
        raise DeviceError(
            f"sn.config.cuda_launcher is 'pycuda', which does not import "
            f"({exc}); pip install pycuda on a machine with a CUDA driver, "
            "or use cuda-python ('symnb[cuda12]' or 'symnb[cuda13]')"
        ) from None
    return drv


class PyCUDARuntime(Runtime):
    """``drv`` stands in for ``pycuda.driver`` in the tests."""

    label = "CUDA"
    dialect = CUDADialect()

    def __init__(self, ordinal: int = 0, drv=None):
        drv = self.drv = drv or pycuda_driver()
        self.errors = (drv.Error, cublas.CuBLASError)
        self.device_name = f"CUDA device {ordinal} (pycuda)"
        try:
            self.nvrtc_version = nvrtc.version()
        except (ImportError, CompileError) as exc:
            raise DeviceError(
                f"sn.config.cuda_launcher is 'pycuda': pycuda launches the "
                f"kernels, NVRTC compiles them, and NVRTC does not load ({exc})"
            ) from None
        self._local = threading.local()
        self.context = None
        try:
            drv.init()
            self._start(drv, ordinal)
        except DeviceError:
            raise
        except drv.Error as exc:
            raise DeviceError(
                f"backend 'cuda' (pycuda) could not start on {self.device_name}: "
                f"{exc}; check that nvidia-smi lists the GPU, that no other "
                "process holds it in exclusive compute mode, and the driver "
                f"version; or use cuda-python: {INSTALL}"
            ) from None
        self.modules: list = []
        self.cublas_path = cublas.find_cublas()

    def _start(self, drv, ordinal: int) -> None:
        found = drv.get_driver_version()
        driver_version = driver_cuda(found)
        problem = version_problem(driver_version, self.nvrtc_version, None)
        if problem:
            raise DeviceError(f"backend 'cuda' (pycuda) cannot use {self.device_name}: {problem}")
        self.device = drv.Device(ordinal)
        self.device_name = f"{self.device.name()} (CUDA device {ordinal}, pycuda)"
        major, minor = self.device.compute_capability()
        self.arch_number = 10 * major + minor
        self.arch = f"sm_{self.arch_number}"
        self.facts = device_facts(
            *(
                _attribute(drv, self.device, name)
                for name in ("MAX_THREADS_PER_BLOCK", "MAX_SHARED_MEMORY_PER_BLOCK")
            ),
            _attribute(drv, self.device, "MULTIPROCESSOR_COUNT"),
        )
        self.context = self.device.retain_primary_context()
        self.current()
        # pycuda aborts the process at exit when a context is still pushed: pop it first
        # (atexit runs this before pycuda's own clean-up, registered when it was imported)
        atexit.register(_pop_at_exit, weakref.ref(self), threading.get_ident())

    def current(self) -> None:
        """Push the context in the calling thread, once per thread (pycuda keeps a stack of
        contexts per thread; one made in another thread is not current in this one)."""
        if getattr(self._local, "context", None) is not self.context:
            self.context.push()
            self._local.context = self.context

    def close(self) -> None:
        """Pop the context this thread pushed (at exit for the thread that made it)."""
        if getattr(self._local, "context", None) is self.context and self.context is not None:
            self._local.context = None
            self.context.pop()

    def build(self, source: str, names: list[str]) -> list:
        self.current()
        try:
            code, _ = compile_for_device(source, self.arch_number)
            module = self.drv.module_from_buffer(code)
        except (CompileError, ImportError, self.drv.Error) as exc:
            raise DeviceError(
                f"CUDA kernels do not build for {self.device_name} ({self.arch}): {exc}"
            ) from None
        self.modules.append(module)
        return [module.get_function(name) for name in names]

    def alloc(self, nbytes: int):
        self.current()
        try:
            return self.drv.mem_alloc(nbytes)
        except (self.drv.MemoryError, MemoryError) as exc:
            device = f"CUDA device {self.device_name}"
            refused = DeviceOutOfMemory(device, nbytes, str(exc), "use smaller batches")
        raise refused  # (no pycuda error as its context: it pickles, opencl/runtime.py)

    def upload(self, array: np.ndarray):
        buffer = self.alloc(max(array.nbytes, 1))
        self.write(buffer, array)
        return buffer

    def write(self, buffer, array: np.ndarray) -> None:
        if array.nbytes:
            self.drv.memcpy_htod(buffer, array)

    def download(self, buffer, nbytes: int) -> np.ndarray:
        host = np.empty(nbytes, np.uint8)
        if nbytes:
            self.current()
            self.drv.memcpy_dtoh(host, buffer)
        return host

    def copy(self, dst, dst_offset: int, src, src_offset: int, nbytes: int) -> None:
        if nbytes:
            self.current()
            self.drv.memcpy_dtod(int(dst) + dst_offset, int(src) + src_offset, nbytes)

    def launch(self, kernel, groups: int, group_size: int, args: list) -> None:
        """Buffers go in as pycuda's DeviceAllocations (pointer parameters), on the default
        stream, like cuda-python's launches (waited for with ``sn.config.cuda_debug_sync``)."""
        self.current()
        kernel(*args, block=(group_size, 1, 1), grid=(groups, 1, 1))
        if config.cuda_debug_sync:
            self.drv.Context.synchronize()

    def synchronize(self) -> None:
        self.current()
        self.drv.Context.synchronize()

    def product_library(self) -> str | None:
        return "cuBLAS" if self.cublas_path else None

    def product(self, kernel, arrays: list, out) -> bool:
        self.current()
        return cublas.product(self, kernel, arrays, out, int)


def _pop_at_exit(ref, thread: int) -> None:
    runtime = ref()
    if runtime is not None and threading.get_ident() == thread:
        try:
            runtime.close()
        except Exception:  # the driver already gone: nothing left to pop
            pass


def _attribute(drv, device, name: str):
    """The device's attribute ``name`` through pycuda, or None where it does not give it
    (the GPU schedule then takes its default)."""
    try:
        return device.get_attribute(getattr(drv.device_attribute, name))
    except Exception:  # an old pycuda, a stand-in: the schedule's default
        return None
