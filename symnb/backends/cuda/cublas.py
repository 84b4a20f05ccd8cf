"""cuBLAS for backend "cuda"'s matrix products, where NVIDIA's cuBLAS wheel is installed.

The library is found the way NVRTC's is: ``cuda.pathfinder.load_nvidia_dynamic_lib``, which
looks in the ``nvidia-cublas`` wheel (or the CUDA toolkit wheels), then CUDA_PATH, then the
system. Calls go through ctypes to the v2 API on the default stream, the one the kernels are
queued on, so a product is ordered with the kernels around it.

cuBLAS is column-major: the row-major ``C = A @ B`` is the column-major ``C^T = B^T A^T``,
so the operands swap; a transposed view (unit stride down its columns) is a column-major
matrix and goes in with op T. ``gemm_call`` turns the operands' shapes and strides into the
call's arguments, or None where one strided-batched gemm cannot take them (then the tiled
kernel runs); it needs no GPU and is what the tests check. Nothing here has run on hardware.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass

import numpy as np

from symnb.backends.kernels.ir import Contract, Load

OP_N, OP_T = 0, 1  # cublasOperation_t
GEMMS = {
    "float32": ("cublasSgemmStridedBatched", ctypes.c_float),
    "float64": ("cublasDgemmStridedBatched", ctypes.c_double),
}


@dataclass(frozen=True)
class GemmCall:
    """The arguments of one ``cublas?gemmStridedBatched`` call, in cuBLAS's (column-major)
    terms: ``a`` is the first matrix cuBLAS multiplies (our y), ``b`` the second (our x)."""

    op_a: int
    op_b: int
    m: int
    n: int
    k: int
    lda: int
    ldb: int
    ldc: int
    stride_a: int
    stride_b: int
    stride_c: int
    batch: int


def plain_product(kernel) -> bool:
    """Whether ``kernel`` is ``x @ y`` itself (operand 0 times operand 1 in one float dtype),
    not a product of computed values, which only the kernel computes."""
    body = kernel.body
    if not isinstance(body, Contract) or len(kernel.inputs) != 2:
        return False
    left, right = kernel.values[body.left], kernel.values[body.right]
    dtypes = {left.dtype, right.dtype, body.acc_dtype, kernel.outputs[0].dtype}
    loads = isinstance(left, Load) and isinstance(right, Load)
    return (
        loads
        and (left.operand, right.operand) == (0, 1)
        and dtypes <= set(GEMMS)
        and (len(dtypes) == 1)
    )


def matrix_layout(shape, strides, itemsize: int) -> tuple[int, int] | None:
    """(op, leading dimension) of a row-major-terms (rows, cols) matrix with byte ``strides``
    as cuBLAS reads it: unit stride along a row is a column-major (cols x rows) matrix, op N;
    unit stride down a column is a column-major (rows x cols) one, op T; else None."""
    (rows, cols), (s_row, s_col) = shape, (s // itemsize for s in strides)
    if any(s % itemsize for s in strides):
        return None
    if s_col == 1 or cols == 1:
        ld = s_row if rows > 1 else max(cols, 1)
        if ld >= max(cols, 1):
            return OP_N, ld
    if s_row == 1 or rows == 1:
        ld = s_col if cols > 1 else max(rows, 1)
        if ld >= max(rows, 1):
            return OP_T, ld
    return None


def gemm_call(x, y, out) -> GemmCall | None:
    """The call computing ``out = x @ y`` for arrays with ``shape``, ``strides`` and
    ``dtype`` (device arrays or NumPy arrays): 2-d operands, or one batch axis (length 1 or
    broadcast in either operand: stride 0). ``out`` must be C-contiguous. None otherwise."""
    if out.ndim not in (2, 3) or x.ndim not in (2, out.ndim) or y.ndim not in (2, out.ndim):
        return None
    size = out.dtype.itemsize
    (m, n), k = out.shape[-2:], x.shape[-1]
    if tuple(out.strides[-2:]) != (n * size, size) and m * n > 1:
        return None
    layouts = [matrix_layout(v.shape[-2:], v.strides[-2:], size) for v in (y, x)]
    if None in layouts:
        return None
    batch = out.shape[0] if out.ndim == 3 else 1
    strides = [_batch_stride(v, batch, size) for v in (y, x, out)]
    if None in strides:
        return None
    (op_a, lda), (op_b, ldb) = layouts
    return GemmCall(op_a, op_b, n, m, k, lda, ldb, n, *strides, batch)


def _batch_stride(array, batch: int, itemsize: int) -> int | None:
    """The element stride between matrices of the batch (0: one matrix for all)."""
    if array.ndim == 2 or array.shape[0] == 1:
        return 0
    if array.shape[0] != batch or array.strides[0] % itemsize:
        return None
    return array.strides[0] // itemsize


def find_cublas(loader=None) -> str | None:
    """The path of libcublas, found as NVRTC's library is, or None where it is not installed
    (``loader`` stands in for ``cuda.pathfinder.load_nvidia_dynamic_lib`` in the tests)."""
    if loader is None:
        try:
            from cuda.pathfinder import load_nvidia_dynamic_lib as loader
        except ImportError:
            return None
    try:
        return loader("cublas").abs_path
    except Exception:  # DynamicLibNotFoundError and its kind: not installed
        return None


class CuBLAS:
    """One cuBLAS handle on the current CUDA context; ``gemm(call, dtype, a, b, c)`` queues
    a product on the default stream (``a``, ``b``, ``c``: device addresses as ints)."""

    def __init__(self, path: str):
        self.path = path
        self.lib = ctypes.CDLL(path)
        self.handle = ctypes.c_void_p()
        self.check(self.lib.cublasCreate_v2(ctypes.byref(self.handle)), "cublasCreate")

    def gemm(self, call: GemmCall, dtype: str, a: int, b: int, c: int) -> None:
        name, scalar = GEMMS[dtype]
        fn = getattr(self.lib, name)
        one, zero = scalar(1), scalar(0)
        i, big, ptr = ctypes.c_int, ctypes.c_longlong, ctypes.c_void_p
        status = fn(
            self.handle,
            i(call.op_a),
            i(call.op_b),
            i(call.m),
            i(call.n),
            i(call.k),
            ctypes.byref(one),
            ptr(a),
            i(call.lda),
            big(call.stride_a),
            ptr(b),
            i(call.ldb),
            big(call.stride_b),
            ctypes.byref(zero),
            ptr(c),
            i(call.ldc),
            big(call.stride_c),
            i(call.batch),
        )
        self.check(status, name)

    @staticmethod
    def check(status: int, name: str) -> None:
        if status != 0:
            raise CuBLASError(f"{name} returned cuBLAS status {status}")


class CuBLASError(RuntimeError):
    """A cuBLAS call that did not return CUBLAS_STATUS_SUCCESS (the runtimes list it in
    ``errors``, so the executor reports it as a DeviceError naming the node)."""


@functools.cache
def cublas_at(path: str) -> CuBLAS:
    return CuBLAS(path)


def product(runtime, kernel, arrays, out, address) -> bool:
    """``out = x @ y`` through cuBLAS when it is installed and takes the layout (see
    ``Runtime.product``); ``address(buffer)`` is the launcher's device address of a buffer."""
    path = runtime.cublas_path
    if path is None or not plain_product(kernel):
        return False
    x, y = arrays
    call = gemm_call(x, y, out)
    if call is None:
        return False
    dtype = np.dtype(out.dtype).name
    cublas_at(path).gemm(call, dtype, address(y.buffer), address(x.buffer), address(out.buffer))
    return True
