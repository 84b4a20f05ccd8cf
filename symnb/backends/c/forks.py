"""A process forked from one that loaded symnb's kernels runs them on one thread.

GNU's OpenMP runtime (libgomp) keeps its worker threads with the thread that started them; a
fork copies its record of those threads but not the threads, so the child's first parallel
region waits for them forever (the workers of ``ProcessPoolExecutor()``, whose start method is
fork on Linux, hang). So in a forked child every OpenMP runtime a kernel library or the runner
brought in is set to one thread (``omp_set_num_threads(1)``) before anything else runs: a
pool's workers share the cores anyway. LLVM's libomp starts its threads again after a fork by
itself; one thread there too keeps N workers from starting N threads each. Children started
with "spawn" or "forkserver" begin clean and use every core.
"""

from __future__ import annotations

import ctypes
import os

#: the address of each loaded OpenMP runtime's ``omp_set_num_threads`` -> a ctypes function
_runtimes: dict[int, object] = {}
_hooked: list[bool] = []


def note(library: ctypes.CDLL) -> None:
    """Remember the OpenMP runtime ``library`` was linked with, if any (found through the
    library, since kernels are opened with their dependencies private to them)."""
    try:
        setter = library.omp_set_num_threads
    except AttributeError:  # no OpenMP (a compiler without it, sn.config.openmp off)
        return
    address = ctypes.cast(setter, ctypes.c_void_p).value
    if address in _runtimes:
        return
    setter.argtypes, setter.restype = [ctypes.c_int], None
    _runtimes[address] = setter
    if not _hooked and hasattr(os, "register_at_fork"):  # not on Windows, which never forks
        _hooked.append(True)
        os.register_at_fork(after_in_child=in_child)


def in_child() -> None:
    """Run after a fork, in the child: one thread for every OpenMP runtime noted."""
    for setter in _runtimes.values():
        setter(1)
