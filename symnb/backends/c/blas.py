"""The ``?gemm`` entry points of the BLAS NumPy already loaded, for the plan's Gemm steps.

A Gemm step (symnb/backends/plan.py) is one ``cblas_?gemm`` call with alpha, beta and the add
into z folded in: no product temporary (a fresh 1-2 MB array page-faults on every call) and
no extra passes. runner.c calls it through its address (the Python executor, without a
runner, runs the step's NumPy reference, whose matmul calls the same BLAS).
Only addresses are looked up here (ctypes: declaring each symbol to cffi parsed C at about
1 ms a declaration, 7 ms of a cold compile).
The BLAS is NumPy's own, found among the libraries this process has loaded by threadpoolctl
(which reads the loader's list on Linux, macOS and Windows): SciPy ships a second OpenBLAS with
its own thread pool, and alternating the two pools made the W3 training step 3-4x slower here
(two pools spinning on two cores). A NumPy built against Apple's Accelerate (which threadpoolctl
does not list) uses Accelerate's CBLAS. Where no BLAS of NumPy's is found (an MKL linked into
NumPy statically) the plan has no address and the step runs NumPy's reference.
"""

from __future__ import annotations

import ctypes
import os
import sys

import numpy as np
import threadpoolctl

from symnb.backends.plan import BlasRef

FLOATS = ("float32", "float64")
#: Apple's BLAS, where a NumPy built with it finds it
ACCELERATE = "/System/Library/Frameworks/Accelerate.framework/Accelerate"
#: symbol suffix -> whether the BLAS's dimensions are 64-bit (``64_``: ILP64 builds).
_SUFFIXES = {"64_": True, "": False}
_found: dict = {}


def numpy_blas() -> dict:
    """``{dtype: BlasRef}`` of NumPy's BLAS, or ``{}`` where it is not found."""
    if "gemm" not in _found:
        _found["gemm"] = _load(_numpy_blas_path())
    return _found["gemm"]


def gemm_ref(dtype) -> BlasRef | None:
    """The ``?gemm`` for ``dtype``, or None (then the step runs NumPy)."""
    return numpy_blas().get(np.dtype(dtype))


def describe(ref: BlasRef | None) -> str:
    """What ``f.kernels`` says about a Gemm step."""
    if ref is None:
        return "NumPy (numpy.matmul, scale and add): no ?gemm found in NumPy's BLAS"
    return f"one {ref.name} call (NumPy's BLAS); numpy.matmul for what it cannot take"


def _numpy_blas_path() -> str | None:
    return blas_library(_loaded_libraries(), sys.platform, _numpy_blas_name())


def blas_library(libraries: list[dict], system: str, name: str, root: str = "") -> str | None:
    """The BLAS NumPy calls, from threadpoolctl's list of loaded ``libraries``: the one inside
    NumPy's own tree (``numpy.libs`` in Linux and Windows wheels, ``numpy/.dylibs`` on
    macOS), else one outside every installed package (a system or conda BLAS NumPy links);
    Accelerate where NumPy was built with it (``name``, its build's BLAS) on macOS."""
    root = root or os.path.dirname(os.path.dirname(np.__file__))
    paths = sorted(lib["filepath"] for lib in libraries if lib.get("user_api") == "blas")
    mine = [p for p in paths if p.startswith(os.path.join(root, "numpy"))]
    system_wide = [p for p in paths if not p.startswith(root)]
    if mine or system_wide:
        return (mine or system_wide)[0]
    if system == "darwin" and name.lower() == "accelerate":
        return ACCELERATE
    return None


def _loaded_libraries() -> list[dict]:
    """threadpoolctl's record of each loaded BLAS and OpenMP library (read once)."""
    return threadpoolctl.threadpool_info()


def _numpy_blas_name() -> str:
    """The BLAS NumPy was built against, from its build configuration ("" if unknown)."""
    config = getattr(np, "__config__", None)
    found = getattr(config, "CONFIG", {}).get("Build Dependencies", {}).get("blas", {})
    return str(found.get("name", ""))


def _load(path: str | None) -> dict:
    if path is None:
        return {}
    lib = ctypes.CDLL(path)  # already mapped by NumPy: the same library and thread pool
    for prefix in ("scipy_cblas_", "cblas_"):
        for suffix, ilp64 in _SUFFIXES.items():
            functions = _functions(lib, prefix, suffix, ilp64, _thread_control(lib))
            if functions:
                return functions
    return {}


def _address(lib, name: str) -> int:
    """The address of the symbol ``name`` in ``lib``, or 0."""
    try:
        return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0
    except AttributeError:
        return 0


def _thread_control(lib) -> tuple[int, int]:
    """The addresses of OpenBLAS's ``set_num_threads(int)`` and ``get_num_threads()`` (as
    NumPy's wheels name them, or as plain OpenBLAS does), or (0, 0)."""
    for prefix, suffix in (("scipy_openblas_", "64_"), ("scipy_openblas_", ""), ("openblas_", "")):
        addresses = tuple(
            _address(lib, f"{prefix}{what}_num_threads{suffix}") for what in ("set", "get")
        )
        if all(addresses):
            return addresses
    return (0, 0)


def _functions(lib, prefix: str, suffix: str, ilp64: bool, threads: tuple[int, int]) -> dict:
    functions = {}
    for letter, dtype in (("s", "float32"), ("d", "float64")):
        name = f"{prefix}{letter}gemm{suffix}"
        address = _address(lib, name)
        if not address:
            return {}
        functions[np.dtype(dtype)] = BlasRef(name, address, ilp64, threads)
    return functions
