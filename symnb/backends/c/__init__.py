"""Backend "c": fused kernels in generated C, a content-keyed compile cache, a lean runtime.

Modules: ``renderer`` (the dialect-neutral walk of a kernel), ``dialect`` (C loops, OpenMP,
SIMD), ``helpers`` (NumPy-semantics scalar helpers), ``vecmath`` (libmvec), ``compiler``
(the system compiler), ``cache`` (memory and disk layers), ``steps`` and ``linker`` (the
schedule), ``listing`` (``f.kernels``). ``python -m symnb.backends.c clear`` empties the cache.
"""

from symnb.backends.c.cache import CacheMiss, clear_cache, compiledir, forbid_compile
from symnb.backends.c.compiler import CompileError, find_compiler
from symnb.backends.c.linker import CLinker

__all__ = [
    "CLinker", "CacheMiss", "CompileError", "clear_cache", "compiledir", "find_compiler",
    "forbid_compile",
]  # fmt: skip
