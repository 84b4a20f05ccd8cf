"""Compiled kernels cached by content, in memory and on disk.

Layers: (1) loaded functions in this process, keyed by the hash of their source; (2) on disk
in ``<compiledir>/c/``, an index with one entry per kernel. A kernel's key hashes its source,
the compiler (its version banner and its file: ``compiler.compiler_file``), its flags and the
CPU; ``<key>.entry`` names the shared library that holds the kernel, under the symbol
``sn_kernel_<key>``, and ``<key>.c`` is its source.

The missing kernels of a function compile together: split into one batch per core, each batch
one translation unit and one compiler run (``lib-<hash of its keys>.so``), the batches in
parallel. Since a kernel is found through its own entry, a kernel compiled once (by any
function or process) is never compiled again. A library is compiled under a unique temporary
name and moved into place with an atomic ``os.replace``, and the entries are written (atomically)
only after it, so processes compiling at once each succeed and no entry points at a half-written
file. Nothing is versioned by hand: a change in any input is a new key.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import dataclasses
import errno
import hashlib
import logging
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from symnb.backends import phases
from symnb.backends.c import compiler, compiler_runs, forks, platforms, threads
from symnb.backends.compiledir import (  # noqa: F401 - compiledir re-exported
    STALE_SECONDS,
    CompileDirError,
    compiledir,
    configured,
    ensure_private,
    fallback_note,
    fingerprint,
    forget,
    forget_made,
    kernel_dir,
    load_checked,
    marked,
    place,
    read_regular,
    remove_named,
    requested,
    scan,
    sweep_stale,
    temporary,
    unwritable,
    verified,
    write_private,
)
from symnb.config import config
from symnb.core import locks
from symnb.core.source import warn_at_user
from symnb.errors import SymnbError

BATCH_LIMIT = 16  # kernels per translation unit at most, so progress still moves
PARALLEL_COST = 1.4  # compile time per character of a kernel with threads, against one without

#: a kernel library's name (its suffix is the platform's: .so, .dylib, .dll)
LIBRARY_NAME = re.compile(r"lib-[0-9a-f]{32}\.(?:so|dylib|dll)")
#: a kernel's source, kept beside its entry (counted against the size cap, evicted with it)
SOURCE_NAME = re.compile(r"[0-9a-f]{32}\.c")
#: every name symnb gives a file in ``c/`` (``clear_cache`` deletes these and nothing else)
CACHE_NAME = re.compile(
    r"([0-9a-f]{32}\.(entry|c)|lib-[0-9a-f]{32}\.(?:so|dylib|dll)|(compiler|flags)-[0-9a-f]{16}\.txt)"
    r"(\.[0-9]+\.[0-9a-f]{8}\.tmp)?"
)
STOP_WAIT = 5  # seconds a stopped compile waits for its workers to clean up, at most
TRIES = 3  # compiles of one kernel while other processes clear the cache, before giving up
MB = 10**6  # bytes in a megabyte of ``sn.config.cache_limit_mb`` (a whole number of them)

_loaded: dict[str, object] = {}
_verified: dict[str, str] = {}  # library -> the fingerprint this process checked it against
_libraries: dict[str, ctypes.CDLL] = {}
#: held for a whole compile; unlocked in a forked child (core/locks.py). Re-entrant: the
#: ``sn.config.progress`` hook runs in the compiling thread, and a function it builds (a hook
#: that reports through a compiled function) compiles and loads in that thread too
_lock = locks.rlock()
_forbid = threading.local()
_reporting = threading.local()  # .on: this thread is in the progress hook of a compile
log = logging.getLogger(__name__)


class CacheMiss(SymnbError, RuntimeError):
    """A kernel was not cached while compiling was forbidden (``forbid_compile``)."""


class SymbolMissing(SymnbError, LookupError):
    """An intact library named by a kernel's entry does not hold the kernel (a cache mixed up
    by hand or half copied): the entry goes and the kernel compiles again."""


class LibraryDoesNotLoad(compiler.CompileError):
    """A kernel library built here that the dynamic loader refuses (a runtime it links, such
    as the OpenMP runtime, is not on the loader's path)."""


@dataclass
class Stats:
    memory_hits: int = 0
    disk_hits: int = 0
    compiles: int = 0


stats = Stats()


def cache_key(source: str) -> str:
    """Hash of everything the machine code depends on."""
    cc = compiler.require_compiler()
    parts = [source, compiler.compiler_identity(cc), compiler.compiler_file(cc)]
    parts.append(" ".join(compiler.likely_flags(cc)))
    parts.append(compiler.STRIDED_PRELUDE)  # how the strided row functions compile
    parts.append(compiler.cpu_identity())
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def symbol(key: str) -> str:
    """The name a kernel's entry point has in every library that holds it."""
    return f"{compiler.ENTRY}_{key}"


# -- loading ------------------------------------------------------------------------------------
def load_many(sources: list[str], opener=None) -> list:
    """Loaded kernels for several sources; the missing ones compile first, together."""
    before, start = dataclasses.astuple(stats), time.perf_counter()
    with phases.timed("loading"):  # the compile and the probe inside are their own phases
        missing = [s for s in dict.fromkeys(sources) if not _cached(s)]
        if missing and not getattr(_forbid, "on", False):
            with _lock, phases.timed("compile"):
                _compile_missing(missing)
        loaded = [load(s, opener) for s in sources]
    if sources and log.isEnabledFor(logging.INFO):
        memory, disk, compiled = (a - b for a, b in zip(dataclasses.astuple(stats), before))
        log.info(
            "%d kernels in %.3f s: %d compiled, %d from the disk cache (%s), %d loaded already",
            len(sources),
            time.perf_counter() - start,
            compiled,
            disk - compiled,
            kernel_dir(),
            memory,
        )
    return loaded


def load(source: str, opener=None):
    """The loaded kernel for ``source``. ``opener(path, symbol)`` returns a library's kernel
    function (default ``open_symbol``)."""
    with _lock:
        mem_key = _memory_key(source)
        if mem_key in _loaded:
            stats.memory_hits += 1
            return _loaded[mem_key]
        for _ in range(TRIES):
            found = _load_from_disk(source, opener or open_symbol)
            if found is not None:
                _loaded[_memory_key(source)] = found  # the flags may have been probed since
                return found
        raise CompileDirError(
            f"a kernel compiled into {kernel_dir()} was deleted before it could be loaded, "
            f"{TRIES} times: is another process clearing the cache in a loop?"
        )


def _load_from_disk(source: str, opener):
    """The kernel from the disk cache, compiled first if missing; None when it was deleted
    (another process cleared the cache) or damaged before it could be loaded."""
    key = cache_key(source)
    path = _library_of(key)
    if path is None:
        if getattr(_forbid, "on", False):
            raise CacheMiss(f"kernel {key} is not in {kernel_dir()} and compiling is forbidden")
        _compile_missing([source])
        key = cache_key(source)  # the flags may have been probed and changed
        path = _library_of(key)
        if path is None:
            return None
    else:
        stats.disk_hits += 1
    try:
        return opener(path, symbol(key))
    except LibraryDoesNotLoad as exc:
        return _does_not_load(path, exc)
    except SymbolMissing:
        return _drop_entry_without_symbol(key, path)


def _drop_entry_without_symbol(key: str, path: str) -> None:
    """The entry of ``key`` names a library without its kernel: the entry is deleted (the
    library, whose other kernels may be right, stays), and None: the kernel compiles again."""
    with contextlib.suppress(OSError):
        os.unlink(_entry_path(key))
    warn_at_user(
        f"symnb: the cached kernel entry {_entry_path(key)} was damaged (it names the library "
        f"{path}, which does not hold {symbol(key)}); it was deleted and is compiled again",
        RuntimeWarning,
    )
    return None


def _does_not_load(path: str, exc: LibraryDoesNotLoad) -> None:
    """A library that does not load is deleted with its entries, never loaded again; the
    flags are probed again (the probe loads what it builds, so a runtime that no longer
    loads is dropped) and, when they changed, None: the kernel compiles again with them."""
    with contextlib.suppress(OSError):
        os.unlink(path)
    _verified.pop(path, None)
    _drop_entries({os.path.basename(path)})
    cc = compiler.require_compiler()
    before = compiler.flags(cc)
    if compiler.probe_flags(cc) != before:
        return None
    raise exc


def open_symbol(path: str, name: str):
    """The address of the kernel function ``name`` in the library at ``path`` (runner.c
    calls it there; the Python executor makes a cffi function of it when it runs one).

    ctypes opens the library and never closes it: kernels stay valid for the process, and so
    does the OpenMP runtime they load, whose worker threads must not be unmapped at exit.
    OpenMP threads sleep between parallel regions unless the user chose otherwise
    (``threads.openmp_environment``: the user's environment is left as it was), so idle
    workers do not take a core from NumPy and BLAS. A library without ``name``: SymbolMissing."""
    library = _libraries.get(path)
    if library is None:
        try:
            with threads.openmp_environment():
                library = load_checked(path, _verified.get(path, ""), ctypes.CDLL, "kernel library")
        except OSError as exc:
            raise LibraryDoesNotLoad(
                f"the kernel library {path}, built by the C compiler "
                f"{compiler.find_compiler()}, does not load: {exc} (a library it links, such "
                "as the OpenMP runtime, is not on the dynamic loader's path?); it was deleted"
            ) from None
        if library is None:
            _verified.pop(path, None)
            return None
        _libraries[path] = library
        forks.note(library)  # a forked child runs it on one thread (forks.py)
    try:
        function = getattr(library, name)
    except AttributeError:
        raise SymbolMissing(f"{path} does not hold the kernel {name}") from None
    return ctypes.cast(function, ctypes.c_void_p).value


def _memory_key(source: str) -> str:
    """Loaded kernels are remembered by what the disk cache keys them by (``cache_key``: the
    compiler, its flags, ``sn.config.openmp`` among them, and the CPU), and per compile
    directory: one loaded while another directory was set is not in this one, where a
    pickled function loaded by another process (or a later session in this one) will look
    for it."""
    return f"{kernel_dir()}\0{cache_key(source)}"


def _cached(source: str) -> bool:
    if _memory_key(source) in _loaded:
        return True
    return _library_of(cache_key(source)) is not None


def _library_of(key: str) -> str | None:
    """The library the index names for ``key``, if the entry is a regular file and the library
    still has the size and hash the entry recorded (else both are deleted: it compiles again).
    A library is hashed once per process, and touched so eviction keeps the recently used."""
    name, _, record = (read_regular(_entry_path(key)) or "").strip().partition(" ")
    if not LIBRARY_NAME.fullmatch(name):
        return None
    path = os.path.join(kernel_dir(), name)
    if path in _verified:
        return path
    if not verified(path, record or None, "kernel library"):
        with contextlib.suppress(OSError):
            os.unlink(_entry_path(key))
        return None
    _verified[path] = record
    with contextlib.suppress(OSError):
        os.utime(path)
    return path


def _entry_path(key: str) -> str:
    return os.path.join(kernel_dir(), key + ".entry")


# -- compiling ----------------------------------------------------------------------------------
def _compile_missing(sources: list[str]) -> None:
    """Compile ``sources`` and index them. A failure probes the flags again (memoised flags
    may no longer link: a runtime library removed since) and, when they changed, compiles
    again with them (new keys); with the same flags the kernel itself does not compile, and
    its error stands. Stale temporary files go first and least-recently-used libraries after."""
    cc = compiler.require_compiler()
    started = time.time() - 2  # a file system's mtimes may be as coarse as 2 s (FAT)
    sweep_stale(kernel_dir())
    sweep_stale(compiledir())
    if compiler.known_flags(cc) is None:
        if _first_try(cc, sources):
            evict(spare_since=started)
            return
        compiler.flags(cc)  # the probe, before any key is computed again
        sources = [s for s in sources if not _cached(s)]  # what the first try left
    try:
        _compile_batches(sources)
    except compiler.CompileError:
        before = compiler.flags(cc)
        if compiler.probe_flags(cc) == before:
            raise  # the flags are right: the kernel itself does not compile
        _compile_batches([s for s in sources if not _cached(s)])
    evict(spare_since=started)


def _first_try(cc: str, sources: list[str]) -> bool:
    """A cold compile directory's first compile, with the flags the probe tries first and
    no probe (67 ms of a cold start): when every compiler run succeeds and says nothing about
    an optional flag, they are the flags (remembered as a probe remembers them). Else False:
    the probe runs and its flags compile what is missing (the same flags: the libraries built
    here are found; others: new keys). No kernel-by-kernel retry here, and nothing but this
    compile uses the unprobed flags."""
    try:
        _compile_batches(sources, compiler.preferred())
    except (compiler.CompileError, OSError):  # OSError: cleared by another process meanwhile
        return False  # (a real problem with the directory is raised by the compile after)
    compiler.accept_flags(cc, compiler.first_try())
    return True


def _compile_batches(sources: list[str], unprobed: tuple[str, ...] = ()) -> None:
    """One batch per free core, compiled in parallel; progress counts kernels. ``unprobed``:
    the optional flags of a first try (``_first_try``), whose batches are not retried."""
    keyed = {cache_key(s): s for s in sources}
    if not keyed:
        return
    cores = _cores()
    batches = _batches(sorted(keyed.items()), cores)
    if len(keyed) == 1:
        _compile_batch(batches[0], unprobed)
    else:
        _compile_in_parallel(batches, min(len(batches), cores), len(keyed), unprobed)
    stats.compiles += len(keyed)


def _compile_in_parallel(batches: list, workers: int, kernels: int, unprobed: tuple) -> None:
    """The batches on ``workers`` threads. A batch's error waits for the others (they are
    cached, and a retry compiles only what is missing); an interrupt (Ctrl-C, SystemExit)
    kills every compiler run of the batches and cancels those not started, instead of
    waiting for them (up to ``compiler.COMPILE_TIMEOUT`` each); the workers then remove
    their temporary files (``_build_once``) within ``STOP_WAIT`` s, before it is raised."""
    record = phases.current()  # the compiler runs' threads report to the caller's log
    runs = compiler_runs.Runs()

    def compile_batch(batch):
        with phases.joined(record), compiler_runs.tracked(runs):
            return _compile_batch(batch, unprobed)

    pool = ThreadPoolExecutor(workers)
    futures: list[concurrent.futures.Future] = []
    try:
        futures += [pool.submit(compile_batch, batch) for batch in batches]
        done = (kernel for future in futures for kernel in future.result())
        _report(done, kernels)
    except Exception:
        pool.shutdown()
        raise
    except BaseException:
        runs.cancel()
        pool.shutdown(wait=False, cancel_futures=True)
        concurrent.futures.wait(futures, timeout=STOP_WAIT)
        raise
    pool.shutdown()


def _report(done, kernels: int) -> None:
    """Iterate ``done`` through ``sn.config.progress``; a compile that the hook started (a
    function it builds) is not reported through it again, which would report on itself
    without end: its kernels just compile."""
    if getattr(_reporting, "on", False):
        list(done)
        return
    _reporting.on = True
    try:
        list(config.progress(done, total=kernels, label="compiling kernels"))
    finally:
        _reporting.on = False


def _cores() -> int:
    """How many compiler runs may go at once: the cores this process may use, less those
    other processes keep busy (``threads.free_cores``). Runs beyond the idle cores make the
    compile no faster (one run of many kernels costs less in all than several runs of few)
    and slow the other work down."""
    return threads.free_cores(threads.allowed_cores(), os.cpu_count() or 1, busy_cores())


def busy_cores() -> float:
    """How many cores other processes keep busy now, from the load average
    (``threads.load_average``): a compile is a moment, so no ``/proc/stat`` sample is taken."""
    loadavg = threads.read_text("/proc/loadavg")
    return threads.load_average(loadavg, getattr(os, "getloadavg", None))


def _batches(items: list[tuple[str, str]], cores: int) -> list[list[tuple[str, str]]]:
    """(key, source) pairs in at least ``cores`` batches of similar estimated compile time
    (costliest first into the cheapest batch), each of at most BATCH_LIMIT kernels."""
    count = min(len(items), max(cores, -(-len(items) // BATCH_LIMIT)))
    batches: list[list] = [[] for _ in range(count)]
    sizes = [0.0] * count
    for key, source in sorted(items, key=_cost, reverse=True):
        smallest = sizes.index(min(sizes))
        batches[smallest].append((key, source))
        sizes[smallest] += _cost((key, source))
    return [sorted(batch) for batch in batches]


def _cost(item: tuple[str, str]) -> float:
    """A kernel's compile time, estimated from its source: its length, 1.4 times as much
    with an OpenMP parallel region (row programs, which also come in two copies, a strided
    and a flat one, took 1.4x the compiler time per character of maps)."""
    source = item[1]
    return len(source) * (PARALLEL_COST if "#pragma omp parallel" in source else 1.0)


def _compile_batch(batch: list[tuple[str, str]], unprobed: tuple = ()) -> list[tuple[str, str]]:
    """Compile one batch into one library; if it fails, each kernel compiles alone: the
    others are cached, and the error shows the kernel that fails (not on a first try)."""
    cc = compiler.require_compiler()
    used = compiler.likely_flags(cc) if unprobed else compiler.flags(cc)
    try:
        _build(batch, used, unprobed)
    except compiler.CompileError:
        if len(batch) == 1 or unprobed:
            raise
        _build_each(batch, used)
    return batch


def _build_each(batch: list[tuple[str, str]], used: tuple[str, ...]) -> None:
    errors = []
    for kernel in batch:
        try:
            _build([kernel], used)
        except compiler.CompileError as exc:
            errors.append(exc)
    if errors:
        raise errors[0]


def _build(batch: list[tuple[str, str]], used: tuple[str, ...], unprobed: tuple = ()) -> None:
    """``_build_once``, again when another process cleared the cache meanwhile (the
    directory is made again); a write that fails for lack of space or permission names the
    compile directory and the fix."""
    for attempt in range(TRIES):
        try:
            return _build_once(batch, used, unprobed)
        except _Cleared:
            if attempt == TRIES - 1:
                raise FileNotFoundError(
                    f"{kernel_dir()} was deleted during {TRIES} compiles"
                ) from None
        except compiler.CompileError as exc:
            if "No space left on device" in str(exc):
                raise unwritable(kernel_dir(), OSError(errno.ENOSPC, "No space left")) from exc
            raise
        except CompileDirError:
            raise
        except OSError as exc:
            raise unwritable(kernel_dir(), exc) from exc


class _Cleared(Exception):
    """The kernel directory was deleted (or made again) while a library was compiled."""


def _build_once(batch: list[tuple[str, str]], used: tuple[str, ...], unprobed: tuple) -> None:
    """Compile, move the library into place, then write the kernels' sources and entries.
    The library is compiled beside ``c/`` (in the compile directory), so clearing the kernels
    meanwhile (``symnb cache clear``) does not fail the compile; where ``c/`` is a mount
    point of another file system, it is copied in (``place``)."""
    digest = hashlib.sha256("\0".join(key for key, _ in batch).encode()).hexdigest()[:32]
    name = f"lib-{digest}{platforms.current().library_suffix}"
    directory = ensure_private(kernel_dir())
    path = os.path.join(directory, name)
    tmp = temporary(os.path.join(os.path.dirname(directory), name))
    try:
        record = _compile_library(batch, tmp, used, unprobed)
        _move(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    _verified[path] = record
    for key, source in batch:
        write_private(os.path.join(directory, key + ".c"), source)
        write_private(_entry_path(key), f"{name} {record}")


def _compile_library(batch: list[tuple[str, str]], tmp: str, used: tuple, unprobed: tuple) -> str:
    """Compile ``batch`` into ``tmp``; its fingerprint. ``_Cleared`` when the compile failed
    because the compile directory was deleted (or made again) meanwhile."""
    top = os.path.dirname(tmp)
    before = _identity(top)
    try:
        compiler.compile_kernels([(symbol(k), s) for k, s in batch], tmp, used, unprobed)
        return _checked_output(tmp)
    except (compiler.CompileError, FileNotFoundError) as exc:
        if _identity(top) != before:
            raise _Cleared() from exc
        raise


def _move(tmp: str, path: str) -> None:
    """``place`` (``os.replace``; a copy where ``c/`` is another file system), making the
    kernel directory again if another process cleared it; ``_Cleared`` when it went each
    time (or the library went with it)."""
    for attempt in range(TRIES):
        try:
            place(tmp, path)
            return
        except FileNotFoundError as exc:
            if attempt == TRIES - 1 or not os.path.exists(tmp):
                raise _Cleared() from exc
        forget_made(os.path.dirname(path))
        with contextlib.suppress(FileNotFoundError):  # removed again: the next replace says
            ensure_private(os.path.dirname(path))


def _identity(directory: str) -> tuple | None:
    try:
        info = os.stat(directory)
    except FileNotFoundError:
        return None
    return (info.st_dev, info.st_ino)


def _checked_output(tmp: str) -> str:
    """The new library's fingerprint, mode 0700; no output or an empty one (a full disk can
    end a compile with status 0) is a CompileError, never an entry."""
    if not os.path.lexists(tmp):
        raise compiler.CompileError(
            f"the C compiler {compiler.find_compiler()} exited with status 0 but wrote no "
            f"library (expected {tmp}): is it a C compiler?"
        )
    os.chmod(tmp, 0o700)
    record = fingerprint(tmp)
    if record is None or record.startswith("0 "):
        raise compiler.CompileError(
            f"the C compiler left an empty library {tmp} (is the disk holding the compile "
            f"directory {compiledir()} full?)"
        )
    return record


# -- size cap -----------------------------------------------------------------------------------
@dataclass
class CacheInfo:
    directory: str
    kernels: int
    libraries: int
    bytes: int
    limit: int
    note: str = ""  # why new kernels do not go here (a read-only directory)

    def __str__(self):
        return (
            f"{self.directory}: {self.kernels} kernels in {self.libraries} libraries, "
            f"{self.bytes / 1e6:.1f} MB of {self.limit / 1e6:.0f} MB" + self.note
        )


def _libraries_on_disk(files: list[os.DirEntry]) -> list[os.DirEntry]:
    return [e for e in files if LIBRARY_NAME.fullmatch(e.name) and e.is_file()]


def _sources_on_disk(files: list[os.DirEntry]) -> list[os.DirEntry]:
    return [e for e in files if SOURCE_NAME.fullmatch(e.name) and e.is_file()]


def info() -> CacheInfo:
    """What the kernel cache holds (``symnb cache info``): the configured directory's, even
    when it cannot be written; nothing is made for it then (the fallback is per process),
    nor where it does not exist yet (no compile has used it)."""
    limit = config.cache_limit_mb * MB
    if not os.path.lexists(requested()):
        return CacheInfo(requested(), 0, 0, 0, limit, " (not made yet: nothing compiled here)")
    top, why = configured()
    if not why:
        directory, note = kernel_dir(), ""
    else:
        directory, note = os.path.join(top, "c"), f"; cannot be written ({why}): {fallback_note()}"
        if not marked(top):  # not symnb's directory: its c/, if any, is not counted
            return CacheInfo(top, 0, 0, 0, limit, f" (no symnb cache){note}")
    files = scan(directory)
    libs = _libraries_on_disk(files)
    kernels = sum(e.name.endswith(".entry") for e in files)
    size = sum(_size(e) for e in libs + _sources_on_disk(files))
    return CacheInfo(directory, kernels, len(libs), size, limit, note)


def clear_requested() -> str:
    """``clear_cache`` for ``symnb cache clear``: the configured directory's kernels, or a
    CompileDirError when it cannot be written (never a fallback made only to be cleared)."""
    top, why = configured()
    if why:
        raise CompileDirError(
            f"cannot clear the compile directory {top} ({why}); nothing was removed. Clear it "
            f"as a user who may write it, or set sn.config.compiledir (or SYMNB_COMPILEDIR)"
        )
    return clear_cache()


def evict(spare_since: float | None = None) -> list[str]:
    """Delete least-recently-used libraries (by modification time, which loading touches)
    until the libraries and the kernels' sources are under ``sn.config.cache_limit_mb``;
    their kernels' entries and sources go with them. Libraries written since ``spare_since``
    (the compile that is about to load them) stay whatever the limit, so a limit below one
    library's size keeps just those. A source without an entry for ``STALE_SECONDS`` (left by
    an older symnb's eviction, or a killed compile) goes too. Returns the libraries deleted.
    A library this process loaded stays mapped (unlink is safe)."""
    limit = config.cache_limit_mb * MB
    files = scan(kernel_dir())
    sources = _kept_sources(files)
    libs = sorted(_libraries_on_disk(files), key=_mtime)
    total = sum(_size(e) for e in libs) + sum(sources.values())
    if total <= limit:
        return []
    kernels = _kernels_by_library(files)
    gone = []
    for lib in libs:
        if total <= limit or (spare_since is not None and _mtime(lib) >= spare_since):
            break
        total -= _size(lib) + sum(sources.get(key, 0) for key in kernels.get(lib.name, ()))
        with contextlib.suppress(OSError):
            os.unlink(lib.path)
        _verified.pop(lib.path, None)
        gone.append(lib.name)
    if gone:
        _drop_entries(set(gone))
    return gone


def _mtime(entry: os.DirEntry) -> float:
    return _stat(entry).st_mtime


def _size(entry: os.DirEntry) -> int:
    return _stat(entry).st_size


def _stat(entry: os.DirEntry) -> os.stat_result:
    """The entry's stat, zeros when another process deleted it meanwhile."""
    try:
        return entry.stat(follow_symlinks=False)
    except FileNotFoundError:
        return os.stat_result((0,) * 10)


def _kept_sources(files: list[os.DirEntry]) -> dict[str, int]:
    """The size of each kernel's source by its key, once the stale ones without an entry
    are deleted."""
    entries = {e.name.removesuffix(".entry") for e in files if e.name.endswith(".entry")}
    cutoff = time.time() - STALE_SECONDS
    kept = {}
    for e in _sources_on_disk(files):
        key = e.name.removesuffix(".c")
        if key in entries or _mtime(e) >= cutoff:
            kept[key] = _size(e)
        else:
            with contextlib.suppress(OSError):
                os.unlink(e.path)
    return kept


def _kernels_by_library(files: list[os.DirEntry]) -> dict[str, list[str]]:
    """The keys of the kernels each library holds, from their entries."""
    kernels: dict[str, list[str]] = {}
    for e in files:
        if e.name.endswith(".entry"):
            library = (read_regular(e.path) or "").split(" ")[0]
            kernels.setdefault(library, []).append(e.name.removesuffix(".entry"))
    return kernels


def _drop_entries(names: set[str]) -> None:
    """Delete the entries, and the sources, of the kernels in the libraries ``names``."""
    for library, keys in _kernels_by_library(scan(kernel_dir())).items():
        if library in names:
            for key in keys:
                for path in (_entry_path(key), os.path.join(kernel_dir(), key + ".c")):
                    with contextlib.suppress(OSError):
                        os.unlink(path)


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
    """Delete the cached kernels on disk (and forget loaded ones); returns the directory.
    Only files with symnb's names go, and only from a directory symnb made (marked)."""
    top = compiledir()
    target = os.path.join(top, "c")
    if not marked(top):
        raise CompileDirError(
            f"{top} has no symnb marker, so symnb did not make it and will not delete "
            f"anything in it; delete {target} by hand if it holds only symnb's cache"
        )
    remove_named(target, CACHE_NAME)
    _verified.clear()
    forget()
    if memory:
        with _lock:
            _loaded.clear()
    return target
