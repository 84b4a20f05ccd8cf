"""Compiling CUDA C with NVRTC (NVIDIA's runtime compiler, from the ``cuda12`` or ``cuda13``
extra).

NVRTC needs no GPU and no driver: kernels compile to PTX for a virtual architecture on any
machine, which is how the tests check every kernel the op suite generates. Loading and
launching need the driver (``backend="cuda"``).

For a device, ``compile_for_device`` picks the target NVRTC can build (``target``): machine
code (CUBIN) for the device's own architecture where NVRTC knows it, else PTX for the highest
architecture below it that NVRTC knows (a GPU newer than the toolkit; the driver compiles the
PTX when it loads it). What it builds is kept in ``<compiledir>/cuda``, keyed by the source,
the target, NVRTC's version and the options (``cache_path``), so a second process loads it
instead of running NVRTC again. Every NVRTC result is checked (``_check``).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import warnings

from symnb.backends.compiledir import (
    compiledir,
    private_dir,
    read_private_bytes,
    remove_named,
    sweep_stale,
    write_private,
)
from symnb.backends.cuda.versions import dotted
from symnb.errors import CompileError, numbered

INSTALL = (
    "pip install 'symnb[cuda13]' (a CUDA 13 driver, 580 or newer) or 'symnb[cuda12]' "
    "(a CUDA 12 driver, 525 or newer): NVIDIA's cuda-python with NVRTC and cuBLAS"
)
#: the first NVRTC that takes ``--Ofast-compile`` (older ones reject the option)
FAST_COMPILE_SINCE = (12, 9)
#: NVRTC compile runs in this process (what the disk cache saves; the tests count them)
compiles = 0


def nvrtc():
    """The NVRTC bindings, or an ImportError saying what to install."""
    try:
        from cuda.bindings import nvrtc as bindings
    except ImportError as exc:
        raise ImportError(f"compiling CUDA kernels needs NVRTC: {INSTALL}") from exc
    try:
        bindings.nvrtcVersion()  # the bindings load libnvrtc on their first call
    except RuntimeError as exc:  # cuda.pathfinder's DynamicLibNotFoundError
        raise ImportError(
            f"compiling CUDA kernels needs NVRTC's library ({exc}): {INSTALL}"
        ) from exc
    return bindings


def _check(api, returned, what: str):
    """The values of an NVRTC call's ``(result, values...)``; CompileError naming the call
    and NVRTC's description of the result otherwise."""
    result, *values = returned if isinstance(returned, tuple) else (returned,)
    if result != api.nvrtcResult.NVRTC_SUCCESS:
        _, text = api.nvrtcGetErrorString(result)
        text = text.decode(errors="replace") if isinstance(text, bytes) else str(result)
        raise CompileError(f"NVRTC's {what} failed: {text}")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


@functools.cache
def version() -> tuple[int, int]:
    """NVRTC's (major, minor) version."""
    api = nvrtc()
    return tuple(_check(api, api.nvrtcVersion(), "nvrtcVersion"))


@functools.cache
def supported_archs() -> tuple[int, ...]:
    """The architectures this NVRTC compiles for, as numbers (75 for sm_75, 120 for sm_120)."""
    api = nvrtc()
    return tuple(sorted(_check(api, api.nvrtcGetSupportedArchs(), "nvrtcGetSupportedArchs")))


def fast_compile_options(level: str = "min", nvrtc_version=None) -> tuple[str, ...]:
    """``--Ofast-compile=level`` where this NVRTC takes it (12.9 and newer), else nothing:
    NVRTC's defaults, slower to compile, same results."""
    known = nvrtc_version or version()
    return (f"--Ofast-compile={level}",) if tuple(known) >= FAST_COMPILE_SINCE else ()


class ArchitectureTooOld(CompileError):
    """The device is older than every architecture this NVRTC builds for."""


def target(arch: int, supported=None, nvrtc_version=None) -> tuple[str, str]:
    """(architecture option, "CUBIN" or "PTX") for a device of compute capability ``arch``
    (90 for 9.0): its own machine code where NVRTC knows the architecture, else PTX for the
    highest one below it (the driver compiles it for the device when loading).
    ArchitectureTooOld where NVRTC knows none at or below it (the toolkit dropped it).
    ``supported`` and ``nvrtc_version`` stand in for this NVRTC's in the tests."""
    supported = supported_archs() if supported is None else tuple(sorted(supported))
    if arch in supported:
        return f"sm_{arch}", "CUBIN"
    below = [a for a in supported if a <= arch]
    if not below:
        major, minor = nvrtc_version or version()
        fix = (
            "install the CUDA 12 build, pip install 'symnb[cuda12]' (NVRTC 12 builds for "
            "sm_50 and newer)"
            if major > 12
            else "use backend 'c' or 'opencl'"
        )
        raise ArchitectureTooOld(
            f"NVRTC {major}.{minor} builds for sm_{supported[0]} and newer, not sm_{arch}: {fix}"
        )
    return f"compute_{below[-1]}", "PTX"


def compile_ptx(source: str, arch: str = "compute_75", options: tuple[str, ...] = ()) -> bytes:
    """PTX of ``source`` for the virtual architecture ``arch``; CompileError with NVRTC's log
    and the numbered source when it does not compile. ``options`` are more NVRTC options
    (tests/backends/test_suite_kernels.py passes ``fast_compile_options()``)."""
    return _compile(source, arch, "PTX", options)


def compile_cubin(source: str, arch: str) -> bytes:
    """Machine code of ``source`` for the real architecture ``arch`` (``sm_90``): what the
    driver loads without JIT-compiling PTX, which an older driver may not read."""
    return _compile(source, arch, "CUBIN")


def compile_for_device(source: str, arch: int, options: tuple[str, ...] = ()) -> tuple[bytes, str]:
    """(the code, "CUBIN" or "PTX") of ``source`` for a device of compute capability
    ``arch`` (see ``target``), from the disk cache where an earlier process built it."""
    option, kind = target(arch)
    path = cache_path(source, option, kind, options)
    code = _read_cached(path)
    if code is None:
        code = _compile(source, option, kind, options)
        _write_cached(path, code)
    return code, kind


def cache_path(source: str, arch: str, kind: str, options: tuple[str, ...]) -> str:
    """Where the build of ``source`` for ``arch`` (``kind``, ``options``) with this NVRTC is
    kept: ``<compiledir>/cuda/<sha256 of all of them>.cubin`` (or ``.ptx``)."""
    key = "\0".join([source, arch, kind, dotted(version()), *REQUIRED, *options])
    name = hashlib.sha256(key.encode()).hexdigest()
    directory = private_dir(os.path.join(compiledir(), "cuda"))
    sweep_stale(directory)  # temporary files of writes that were killed (once per process)
    return os.path.join(directory, f"{name}.{kind.lower()}")


#: the names ``cache_path`` gives (and a write's temporary files): all ``clear_cache`` deletes
CACHE_NAME = re.compile(r"[0-9a-f]{64}\.(cubin|ptx)(\.[0-9]+\.[0-9a-f]{8}\.tmp)?")


def clear_cache() -> str:
    """Delete the kept CUDA binaries (``<compiledir>/cuda``; only symnb's names); returns
    the directory. ``sn.clear_cache()`` and ``symnb cache clear`` call it."""
    directory = os.path.join(compiledir(), "cuda")
    if os.path.isdir(directory):
        remove_named(directory, CACHE_NAME)
    return directory


def _read_cached(path: str) -> bytes | None:
    """The code kept at ``path``, or None: missing, refused (not the user's, writable by
    others: deleted with a warning by ``read_private_bytes``) or damaged (its recorded
    SHA-256 differs: deleted with a warning, built again)."""
    stored = read_private_bytes(path)
    if stored is None:
        return None
    digest, _, code = stored.partition(b"\n")
    if hashlib.sha256(code).hexdigest().encode() == digest and code:
        return code
    warnings.warn(
        f"symnb: the cached CUDA binary {path} was damaged (its hash differs from "
        "the record); it was deleted and is compiled again",
        RuntimeWarning,
        stacklevel=3,
    )
    try:
        os.unlink(path)
    except OSError:
        pass
    return None


def _write_cached(path: str, code: bytes) -> None:
    try:
        write_private(path, hashlib.sha256(code).hexdigest().encode() + b"\n" + code)
    except OSError as exc:  # a full disk: the build is used, not kept
        warnings.warn(
            f"symnb: could not keep the CUDA binary {path} ({exc})", RuntimeWarning, stacklevel=3
        )


#: options of every build: ``a*b + c`` rounds twice, as NumPy computes it and as the C
#: backend compiles it (``-ffp-contract=off``); NVRTC's default ``--fmad=true`` fuses a
#: multiply and an add into one FMA, whose single rounding makes the last bit differ
REQUIRED = ("--fmad=false",)


def _compile(source: str, arch: str, kind: str, more: tuple[str, ...] = ()) -> bytes:
    global compiles
    api = nvrtc()
    compiles += 1
    program = _check(
        api, api.nvrtcCreateProgram(source.encode(), b"symnb.cu", 0, [], []), "nvrtcCreateProgram"
    )
    try:
        options = [f"--gpu-architecture={arch}".encode(), *(o.encode() for o in REQUIRED + more)]
        (result,) = api.nvrtcCompileProgram(program, len(options), options)
        if result != api.nvrtcResult.NVRTC_SUCCESS:
            raise CompileError(
                f"NVRTC {dotted(version())} failed on a kernel for {arch} {' '.join(more)}\n"
                f"log:\n{_log(api, program)}\n"
                f"source:\n{numbered(source)}"
            )
        size = _check(api, getattr(api, f"nvrtcGet{kind}Size")(program), f"nvrtcGet{kind}Size")
        code = b" " * size
        _check(api, getattr(api, f"nvrtcGet{kind}")(program, code), f"nvrtcGet{kind}")
    except BaseException:
        api.nvrtcDestroyProgram(program)  # the first error is the one to report
        raise
    _check(api, api.nvrtcDestroyProgram(program), "nvrtcDestroyProgram")
    return code


def _log(api, program) -> str:
    size = _check(api, api.nvrtcGetProgramLogSize(program), "nvrtcGetProgramLogSize")
    log = b" " * size
    _check(api, api.nvrtcGetProgramLog(program, log), "nvrtcGetProgramLog")
    return log.decode(errors="replace").strip()
