"""Vectorised transcendental functions from glibc's libmvec, opted into per function.

glibc declares its SIMD variants (``_ZGVdN4v_exp``...) only under ``-ffast-math``, which would
also break ``isnan``/``isinf`` and reassociate sums. Instead each kernel redeclares the libm
functions it calls with ``__attribute__((simd("notinbranch")))``; with ``-fno-math-errno``
GCC then vectorises those calls inside ``#pragma omp simd`` loops and links them to libmvec.
libmvec documents a maximum error of 4 ulp (tests/backends/c/test_accuracy.py measures it).
"""

from __future__ import annotations

import functools
import os

#: functions libmvec provides since glibc 2.22 / 2.35 (double and float versions)
LIBMVEC_OLD = frozenset(("exp", "log", "sin", "cos", "pow"))
LIBMVEC_235 = frozenset(
    "acos acosh asin asinh atan atan2 atanh cbrt cosh erf erfc exp2 expm1 hypot log10 "
    "log1p log2 sinh tan tanh".split()
)
_ARITY = {"atan2": 2, "hypot": 2, "pow": 2}


@functools.cache
def glibc_version() -> tuple[int, int]:
    """(major, minor) of the C library, (0, 0) when it is not glibc."""
    try:
        name, version = os.confstr("CS_GNU_LIBC_VERSION").split()
        major, minor = version.split(".")[:2]
        return int(major), int(minor)
    except (ValueError, OSError, AttributeError):
        return (0, 0)


def vector_functions() -> frozenset[str]:
    version = glibc_version()
    if version >= (2, 35):
        return LIBMVEC_OLD | LIBMVEC_235
    return LIBMVEC_OLD if version >= (2, 22) else frozenset()


def simd_declarations(used: list[tuple[str, str]]) -> str:
    """SIMD redeclarations of the libm functions a kernel calls (``(name, dtype)`` pairs)."""
    available = vector_functions()
    lines = []
    for name, dtype in used:
        if name not in available:
            continue
        ctype, suffix = ("float", "f") if dtype == "float32" else ("double", "")
        params = ", ".join([ctype] * _ARITY.get(name, 1))
        lines.append(f'__attribute__((simd("notinbranch"))) {ctype} {name}{suffix}({params});')
    return "\n".join(lines)
