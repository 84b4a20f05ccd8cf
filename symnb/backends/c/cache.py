"""Compiled kernels cached by content, in memory and on disk.

Layers: (1) loaded functions in this process, keyed by the hash; (2) shared libraries in
``<compiledir>/c/<hash>.so`` with their source beside them (``<hash>.c``), where the hash
covers the source, the compiler's version banner, its flags and the CPU. A kernel is compiled
under a unique temporary name in the same directory and moved into place with an atomic
``os.replace``, so processes compiling the same kernel at once each succeed and the entry is
never half-written. Nothing is versioned by hand: a change in any input is a new key.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from symnb.backends.c import compiler
from symnb.config import config
from symnb.errors import SymnbError

_loaded: dict[str, object] = {}
_lock = threading.Lock()
_forbid = threading.local()


class CacheMiss(SymnbError, RuntimeError):
    """A kernel was not cached while compiling was forbidden (``forbid_compile``)."""


@dataclass
class Stats:
    memory_hits: int = 0
    disk_hits: int = 0
    compiles: int = 0


stats = Stats()


def compiledir() -> str:
    """``sn.config.compiledir``, or ``~/.cache/symnb`` (``$XDG_CACHE_HOME/symnb``)."""
    if config.compiledir:
        return config.compiledir
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "symnb")


def kernel_dir() -> str:
    return os.path.join(compiledir(), "c")


def cache_key(source: str) -> str:
    """Hash of everything the machine code depends on."""
    cc = compiler.require_compiler()
    parts = [source, compiler.compiler_identity(cc), " ".join(compiler.flags(cc))]
    parts.append(compiler.cpu_identity())
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def library_for(source: str) -> tuple[str, str]:
    """(key, path of the shared library) for ``source``, compiling it if no layer has it."""
    key = cache_key(source)
    path = os.path.join(kernel_dir(), key + ".so")
    if os.path.exists(path):
        stats.disk_hits += 1
        return key, path
    if getattr(_forbid, "on", False):
        raise CacheMiss(f"kernel {key} is not in {kernel_dir()} and compiling is forbidden")
    _compile_into(source, path)
    stats.compiles += 1
    return key, path


def _compile_into(source: str, path: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        compiler.compile_library(source, tmp)
        _write_atomically(path[: -len(".so")] + ".c", source)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _write_atomically(path: str, text: str) -> None:
    tmp = f"{path}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def load_many(sources: list[str], loader) -> list:
    """Loaded kernels for several sources; the missing ones compile in parallel (one compiler
    process per core), which is most of a cold compile."""
    missing = [s for s in dict.fromkeys(sources) if not _cached(s)]
    if len(missing) > 1 and not getattr(_forbid, "on", False):
        workers = min(len(missing), os.cpu_count() or 1)
        with ThreadPoolExecutor(workers) as pool:
            done = pool.map(library_for, missing)
            list(config.progress(done, total=len(missing), label="compiling kernels"))
    return [load(s, loader) for s in sources]


def _cached(source: str) -> bool:
    if hashlib.sha256(source.encode()).hexdigest() in _loaded:
        return True
    return os.path.exists(os.path.join(kernel_dir(), cache_key(source) + ".so"))


def load(source: str, loader):
    """The loaded kernel for ``source``; ``loader(path)`` opens a library (cffi)."""
    with _lock:
        mem_key = hashlib.sha256(source.encode()).hexdigest()
        if mem_key in _loaded:
            stats.memory_hits += 1
            return _loaded[mem_key]
        _, path = library_for(source)
        _loaded[mem_key] = loader(path)
        return _loaded[mem_key]


@contextlib.contextmanager
def forbid_compile():
    """Inside, a kernel missing from every cache layer raises CacheMiss (for tests)."""
    before = getattr(_forbid, "on", False)
    _forbid.on = True
    try:
        yield
    finally:
        _forbid.on = before


def clear_cache(memory: bool = True) -> str:
    """Delete the cached kernels on disk (and forget loaded ones); returns the directory."""
    target = kernel_dir()
    shutil.rmtree(target, ignore_errors=True)
    if memory:
        with _lock:
            _loaded.clear()
    return target
