"""The device runtime interface through pycuda, for users who have it
(``sn.config.cuda_launcher = "pycuda"``, or "" where cuda-python's driver bindings are not
installed): the same CUDA C, compiled by NVRTC to machine code for the device, loaded and
launched through ``pycuda.driver`` on device ``ordinal``'s primary context.

It was written without a GPU or pycuda to run it on (pycuda does not install here): the
tests run it against a stand-in for ``pycuda.driver`` that records the calls, which checks
how arguments are packed, not that pycuda accepts them.
"""

from __future__ import annotations

import numpy as np

from symnb.backends.cuda import cublas
from symnb.backends.cuda.dialect import CUDADialect
from symnb.backends.cuda.nvrtc import compile_cubin
from symnb.backends.device.runtime import DeviceError, Runtime
from symnb.errors import CompileError


def pycuda_driver():
    """``pycuda.driver``, initialised, or a DeviceError saying what is missing."""
    try:
        import pycuda.driver as drv
    except ImportError as exc:  # not installed, or installed where there is no libcuda
        raise DeviceError(f"sn.config.cuda_launcher is 'pycuda', which does not import "
                          f"({exc}); pip install pycuda on a machine with a CUDA driver, "
                          "or use cuda-python ('symnb[cuda]')") from None  # fmt: skip
    drv.init()
    return drv


class PyCUDARuntime(Runtime):
    label = "CUDA"
    dialect = CUDADialect()

    def __init__(self, ordinal: int = 0, drv=None):
        drv = self.drv = drv or pycuda_driver()
        self.errors = (drv.Error,)
        self.device = drv.Device(ordinal)
        self.device_name = f"{self.device.name()} (pycuda)"
        major, minor = self.device.compute_capability()
        self.arch = f"sm_{major}{minor}"
        self.context = self.device.retain_primary_context()
        self.context.push()
        self.modules: list = []
        self.cublas_path = cublas.find_cublas()

    def build(self, source: str, names: list[str]) -> list:
        try:
            module = self.drv.module_from_buffer(compile_cubin(source, self.arch))
        except (CompileError, self.drv.Error) as exc:
            raise DeviceError(f"CUDA kernels do not build for {self.device_name} "
                              f"({self.arch}): {exc}") from None  # fmt: skip
        self.modules.append(module)
        return [module.get_function(name) for name in names]

    def alloc(self, nbytes: int):
        try:
            return self.drv.mem_alloc(nbytes)
        except (self.drv.MemoryError, MemoryError) as exc:
            raise DeviceError(f"CUDA device {self.device_name} could not allocate {nbytes:,} "
                              f"bytes ({exc}); use smaller batches") from None  # fmt: skip

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
            self.drv.memcpy_dtoh(host, buffer)
        return host

    def launch(self, kernel, groups: int, group_size: int, args: list) -> None:
        """Buffers go in as pycuda's DeviceAllocations (pointer parameters), on the default
        stream, like cuda-python's launches."""
        kernel(*args, block=(group_size, 1, 1), grid=(groups, 1, 1))

    def synchronize(self) -> None:
        self.drv.Context.synchronize()

    def product_library(self) -> str | None:
        return "cuBLAS" if self.cublas_path else None

    def product(self, kernel, arrays: list, out) -> bool:
        return cublas.product(self, kernel, arrays, out, int)
