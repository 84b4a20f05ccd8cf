"""The ``?gemm`` entry points of the BLAS NumPy already loaded, for the plan's Gemm steps.

A Gemm step (symnb/backends/plan.py) is one ``cblas_?gemm`` call with alpha, beta and the add
into z folded in: no product temporary (a fresh 1-2 MB array page-faults on every call) and
no extra passes. runner.c calls it through its address; the Python executor through cffi.
The BLAS is NumPy's own OpenBLAS, found among the libraries this process has mapped: SciPy
ships a second OpenBLAS with its own thread pool, and alternating the two pools made the W3
training step 3-4x slower here (two pools spinning on two cores). Where that library is not
found (MKL or Accelerate builds of NumPy, non-Linux systems) the plan has no address and
the step runs NumPy's reference.
"""

from __future__ import annotations

import os

import cffi
import numpy as np

from symnb.backends.plan import BlasRef

FLOATS = ("float32", "float64")
#: symbol suffix -> the C integer type of the BLAS's dimensions (``64_``: ILP64 builds).
_SUFFIXES = {"64_": "int64_t", "": "int"}
_ffi = cffi.FFI()
_found: dict = {}


def numpy_blas() -> dict:
    """``{dtype: BlasRef}`` of NumPy's OpenBLAS, or ``{}`` where it is not found."""
    if "gemm" not in _found:
        _found["gemm"] = _load(_numpy_openblas_path())
    return _found["gemm"]


def gemm_ref(dtype) -> BlasRef | None:
    """The ``?gemm`` for ``dtype``, or None (then the step runs NumPy)."""
    return numpy_blas().get(np.dtype(dtype))


def describe(ref: BlasRef | None) -> str:
    """What ``f.kernels`` says about a Gemm step."""
    if ref is None:
        return "NumPy (numpy.matmul, scale and add): no ?gemm found in NumPy's OpenBLAS"
    return f"one {ref.name} call (NumPy's OpenBLAS); numpy.matmul for what it cannot take"


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
            functions = _functions(lib, prefix, suffix, index, _thread_control(lib))
            if functions:
                return functions
    return {}


def _thread_control(lib) -> tuple[int, int]:
    """The addresses of OpenBLAS's ``set_num_threads(int)`` and ``get_num_threads()`` (as
    NumPy's wheels name them, or as plain OpenBLAS does), or (0, 0)."""
    for prefix, suffix in (("scipy_openblas_", "64_"), ("scipy_openblas_", ""),
                           ("openblas_", "")):  # fmt: skip
        names = [f"{prefix}{what}_num_threads{suffix}" for what in ("set", "get")]
        for name, ret, arg in zip(names, ("void", "int"), ("int", "void")):
            try:
                _ffi.cdef(f"{ret} {name}({arg});")
            except cffi.CDefError:
                pass  # declared by an earlier probe
        try:
            return tuple(int(_ffi.cast("uintptr_t", _ffi.addressof(lib, n))) for n in names)
        except (AttributeError, cffi.FFIError):
            continue
    return (0, 0)


def _functions(lib, prefix: str, suffix: str, index: str, threads: tuple[int, int]) -> dict:
    functions = {}
    for letter, ctype, dtype in (("s", "float", "float32"), ("d", "double", "float64")):
        name = f"{prefix}{letter}gemm{suffix}"
        signature = (
            f"void {name}(int, int, int, {index}, {index}, {index}, {ctype}, const void *,"
            f" {index}, const void *, {index}, {ctype}, void *, {index});"
        )
        try:
            _ffi.cdef(signature)
        except cffi.CDefError:
            pass  # declared by an earlier probe
        try:
            address = int(_ffi.cast("uintptr_t", _ffi.addressof(lib, name)))
        except (AttributeError, cffi.FFIError):
            return {}
        functions[np.dtype(dtype)] = BlasRef(name, address, index == "int64_t", threads)
    return functions
