"""Backends turn an optimised graph into a callable; ``py`` runs each op's NumPy reference.

Linkers are imported when a function first needs one: backend "c" brings cffi and its code
generator, which ``import symnb`` should not pay for.
"""

from __future__ import annotations

import importlib

from symnb.backends.c import compiler
from symnb.core.source import warn_at_user
from symnb.errors import ArgumentError

#: backend name -> "module:class" of its linker
LINKERS = {
    "py": "symnb.backends.py:PyLinker",
    "c": "symnb.backends.c.linker:CLinker",
    "opencl": "symnb.backends.opencl.linker:OpenCLLinker",
    "cuda": "symnb.backends.cuda.linker:CUDALinker",
}
PLANNED: tuple[str, ...] = ()
_warned_no_compiler = []


def default_backend() -> str:
    """The default backend: "c" when a C compiler that can build the kernels is present,
    else "py", with one warning a process saying why, what runs and what to install."""
    problem = compiler.problem()
    if problem is None:
        return "c"
    return fall_back(problem)


def fall_back(problem: str) -> str:
    """Backend "py" for a function whose backend the user did not choose, where the compiler
    cannot build the kernels (``problem`` says why): warned once a process, at the user's
    line. ``sn.function`` also comes here when the compiler's first probe finds that it runs
    but cannot build a library that loads (``compiler.CompilerUnusable``)."""
    if not _warned_no_compiler:
        _warned_no_compiler.append(True)
        hint = compiler.install_hint()
        warn_at_user(
            f"symnb: {problem}, so functions run on backend='py' (each op's NumPy "
            f"reference, unfused: same results, slower); to compile them, {hint}",
            RuntimeWarning,
        )
    return "py"


def get_linker(name: str):
    """The linker class for a backend name, or a clear error listing what exists."""
    if name in LINKERS:
        module, cls = LINKERS[name].split(":")
        return getattr(importlib.import_module(module), cls)
    if name in PLANNED:
        raise NotImplementedError(
            f"backend {name!r} is not available in this version of symnb; use backend='py'"
        )
    raise ArgumentError(f"unknown backend {name!r}; choose one of {sorted(LINKERS)}")


def clear_cache(memory: bool = True) -> str:
    """Delete the cached C kernels on disk (and forget loaded ones) and the kept CUDA
    binaries; returns the C kernels' directory. (Imported here, not at the top: importing
    symnb does not bring in cffi and the code generator.)"""
    from symnb.backends.c.cache import clear_cache as clear
    from symnb.backends.cuda import nvrtc

    target = clear(memory)
    nvrtc.clear_cache()
    return target
