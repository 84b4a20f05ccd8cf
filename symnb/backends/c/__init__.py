"""Backend "c": fused kernels in generated C, a content-keyed compile cache, a lean runtime.

Modules: ``dialect`` (how C spells the shared renderer's walk: loops, OpenMP, SIMD),
``vecmath`` (libmvec), ``stores`` (streaming stores), ``compiler`` (the system compiler),
``platforms`` (what differs between operating systems), ``cache`` (memory and disk layers),
``forks`` (a forked process runs the kernels on one thread), ``linker`` (``CLinker``: C's
additions to the planning every kernel target shares, which lives in
symnb/backends/planning/ with convolution, pools and windowed views), ``blas`` (the ?gemm
addresses), ``runner`` with ``runner.c`` and its headers (the C executor of the plan).
``python -m symnb.backends.c clear`` empties the cache.
"""

from __future__ import annotations

import importlib

#: public name -> the module defining it; imported on first use (PEP 562), so importing
#: ``symnb.backends.c.compiler`` does not bring in cffi and the code generator
_EXPORTS = {
    "CLinker": "linker",
    "CacheMiss": "cache",
    "CompileError": "compiler",
    "clear_cache": "cache",
    "compiledir": "cache",
    "find_compiler": "compiler",
    "forbid_compile": "cache",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"symnb.backends.c.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'symnb.backends.c' has no attribute {name!r}")
