"""``gemm`` (beta * z + alpha * x @ y) as one ``?gemm`` call into the BLAS NumPy already loaded.

The product, alpha, beta and the add into the result happen inside one BLAS call: no product
temporary (a fresh 1-2 MB array page-faults on every call) and no extra passes over it. The
BLAS is NumPy's own OpenBLAS, found among the libraries this process has mapped: SciPy ships a
second OpenBLAS with its own thread pool, and alternating the two pools made the W3 training
step 3-4x slower here (two pools spinning on two cores). Where that library is not found (MKL
or Accelerate builds of NumPy, non-Linux systems) the step falls back to ``np.matmul`` with the
scale and add in place.
"""

from __future__ import annotations

import os

import cffi
import numpy as np

from symnb.backends.c.steps import LibraryStep

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112

#: symbol suffix -> the C integer type of the BLAS's dimensions (``64_``: ILP64 builds).
_SUFFIXES = {"64_": "int64_t", "": "int"}
_ffi = cffi.FFI()
_found: dict = {}


def numpy_blas():
    """``{dtype: gemm function}`` of NumPy's OpenBLAS, or ``{}`` where it is not found."""
    if "gemm" not in _found:
        _found["gemm"] = _load(_numpy_openblas_path())
    return _found["gemm"]


def _numpy_openblas_path() -> str | None:
    """The OpenBLAS mapped from NumPy's own directory tree (``numpy.libs`` in wheels)."""
    root = os.path.dirname(os.path.dirname(np.__file__))
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line}
    except OSError:
        return None
    mine = sorted(p for p in paths if p.startswith(os.path.join(root, "numpy")))
    return mine[0] if mine else None


def _load(path: str | None) -> dict:
    if path is None:
        return {}
    lib = _ffi.dlopen(path)  # already mapped by NumPy: the same library and thread pool
    for prefix in ("scipy_cblas_", "cblas_"):
        for suffix, index in _SUFFIXES.items():
            functions = _functions(lib, prefix, suffix, index)
            if functions:
                return functions
    return {}


def _functions(lib, prefix: str, suffix: str, index: str) -> dict:
    functions = {}
    for letter, ctype, dtype in (("s", "float", "float32"), ("d", "double", "float64")):
        name = f"{prefix}{letter}gemm{suffix}"
        signature = (  # matrices as void *: cffi then takes from_buffer's char[] as they are
            f"void {name}(int, int, int, {index}, {index}, {index}, {ctype}, const void *,"
            f" {index}, const void *, {index}, {ctype}, void *, {index});"
        )
        try:
            _ffi.cdef(signature)
        except cffi.CDefError:
            pass  # declared by an earlier probe
        try:
            functions[np.dtype(dtype)] = getattr(lib, name)
        except AttributeError:
            return {}
    return functions


def _operand(a: np.ndarray):
    """(transpose flag, leading dimension, array) for a row-major BLAS call, copying only a
    layout BLAS cannot read (neither axis unit-strided, negative or unaligned strides)."""
    item = a.itemsize
    rows, cols = a.shape
    s0, s1 = a.strides
    if (s1 == item or cols == 1) and s0 % item == 0 and s0 >= max(1, cols) * item:
        return NO_TRANS, s0 // item, a
    if (s0 == item or rows == 1) and s1 % item == 0 and s1 >= max(1, rows) * item:
        return TRANS, s1 // item, a
    return NO_TRANS, cols, np.ascontiguousarray(a)


class GemmStep(LibraryStep):
    """One ``?gemm`` call into z's buffer (in-place node) or a copy of z; NumPy otherwise."""

    kind = "blas"

    def run(self, z, alpha, x, y, beta):
        result = self._folded(z, alpha, x, y, beta)
        return super().run(z, alpha, x, y, beta) if result is None else result

    def _folded(self, z, alpha, x, y, beta):
        if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[0] or np.ndim(z) > 2:
            return None
        shape = (x.shape[0], y.shape[1])
        if not _broadcasts_to(np.shape(z), shape):
            return None
        gemm = numpy_blas().get(x.dtype)
        if gemm is None or 0 in x.shape or 0 in y.shape or not x.dtype == y.dtype == z.dtype:
            return self._through_matmul(z, alpha, x, y, beta, shape)
        c = self._accumulator(z, shape, x.dtype, beta, (x, y))
        self._call(gemm, float(alpha), x, y, 0.0 if beta == 0 else float(beta), c)
        return c

    @staticmethod
    def _call(gemm, alpha, x, y, beta, c):
        """c = alpha * x @ y + beta * c (c C-contiguous; x and y in any 2-d layout)."""
        ta, lda, x = _operand(x)
        tb, ldb, y = _operand(y)
        m, k = x.shape
        n = y.shape[1]
        gemm(ROW_MAJOR, ta, tb, m, n, k, alpha, _pointer(x), lda, _pointer(y), ldb, beta,
             _pointer(c), n)  # fmt: skip

    def _accumulator(self, z, shape, dtype, beta, operands=()):
        """z itself when the node is in-place and z can hold the result, else z broadcast
        into a new array (left uninitialised when beta is 0: BLAS does not read it). z is not
        overwritten while it overlaps an operand of the product (``operands``)."""
        if getattr(self.node.op, "inplace", False) and np.shape(z) == shape:
            if z.flags.writeable and z.dtype == dtype and z.flags.c_contiguous:
                if not any(np.may_share_memory(z, a) for a in operands):
                    return z
        c = np.empty(shape, dtype)
        if beta != 0:
            c[...] = z
        return c

    def _through_matmul(self, z, alpha, x, y, beta, shape):
        """The product through ``np.matmul``, then the scale and add in place."""
        product = np.matmul(x, y)
        if alpha != 1:
            product *= alpha
        if beta == 0:
            return product
        c = self._accumulator(z, shape, product.dtype, beta)
        if beta != 1:
            c *= beta
        c += product
        return c


def _pointer(a: np.ndarray):
    """The address of the array's first element (the caller keeps ``a`` alive): cffi's
    buffer of the array or of its transpose (a Fortran-ordered matrix), else its address."""
    if a.flags.c_contiguous:
        return _ffi.from_buffer(a, require_writable=False)
    if a.flags.f_contiguous:
        return _ffi.from_buffer(a.T, require_writable=False)
    return _ffi.cast("void *", a.ctypes.data)


def _broadcasts_to(small: tuple, shape: tuple) -> bool:
    """NumPy's rule, for shapes of at most ``len(shape)`` dims (cheaper than broadcast_shapes)."""
    if len(small) > len(shape):
        return False
    return all(d == 1 or d == s for d, s in zip(reversed(small), reversed(shape)))
