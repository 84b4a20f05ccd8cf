"""Finding the system C compiler and turning kernels' sources into one shared library.

Flags: ``-O2 -fvect-cost-model=dynamic``: the loop vectoriser as ``-O3`` runs it (strided rows
get a vector version behind a runtime check) without -O3's other loop passes, which took a fifth
of the compile time and bought no run time on the benchmarks (docs/c_backend.md).
``-march=native``, so the CPU is part of the cache key. ``-fopenmp`` for threads and ``omp
simd`` (``-fopenmp-simd`` alone where the OpenMP runtime is missing). ``-fno-math-errno`` so
libm calls can be vectorised, ``-fwrapv`` because NumPy integers wrap on overflow, and
``-ffp-contract=off`` so ``a*b + c`` rounds twice, as in NumPy (no silent FMA). No
``-ffast-math``: NaN and infinity behave as in NumPy.

Several kernels compile as one translation unit in one compiler run: a compiler process, its
parse of the headers and its link cost about as much as compiling a small kernel, so a cold
compile of many kernels is mostly that overhead when each has its own run.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import platform
import re
import shutil
import subprocess
import tempfile
import time

from symnb.backends.compiledir import kernel_dir, read_regular, write_private
from symnb.config import config
from symnb.errors import CompileError, numbered

CANDIDATES = ("cc", "gcc", "clang")
BASE_FLAGS = (
    "-O2", "-fvect-cost-model=dynamic", "-march=native", "-shared", "-fPIC", "-fno-math-errno",
    "-fwrapv", "-ffp-contract=off",
)  # fmt: skip
THREADING = (("-fopenmp",), ("-fopenmp-simd",))  # preferred first
LIBRARIES = (("-lmvec", "-lm"), ("-lm",))
INSTALL_HINT = (
    "install a C compiler (Debian/Ubuntu: apt-get install gcc; Fedora: dnf install gcc; "
    "macOS: xcode-select --install; conda: conda install -c conda-forge c-compiler)"
)
ENTRY = "sn_kernel"  # the entry point every kernel defines (dialect.py)
PRIVATE_NAME = re.compile(r"\bsn_\w+")  # every file-scope name of a generated kernel
MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)", re.MULTILINE)

_flags: dict[str, tuple[str, ...]] = {}  # compiler path -> flags known to link (probed)
log = logging.getLogger(__name__)


def find_compiler() -> str | None:
    """The compiler to use: ``sn.config.cc`` when set, else the first of cc/gcc/clang found."""
    names = (config.cc,) if config.cc else CANDIDATES
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


def require_compiler() -> str:
    path = find_compiler()
    if path is None:
        wanted = config.cc or "/".join(CANDIDATES)
        raise CompileError(f"no C compiler found (looked for {wanted}); {INSTALL_HINT}")
    return path


@functools.cache
def compiler_identity(path: str) -> str:
    """The compiler's version banner, part of every cache key; remembered in the compile
    directory per binary (path, size, mtime), since asking costs a process start."""
    real = os.path.realpath(path)
    stat = os.stat(real)
    tag = hashlib.sha256(f"{real}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    memo = _memo_path(f"compiler-{tag.hexdigest()[:16]}.txt")
    known = read_regular(memo)
    if known and "\n" not in known.strip():
        return known
    result = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
    banner = (result.stdout.splitlines() or [path])[0]
    _remember(memo, banner)
    return banner


def _memo_path(name: str) -> str:
    return os.path.join(kernel_dir(), name)


def _remember(memo: str, text: str) -> None:
    """Write a small memo file atomically (several processes, or the compile threads of one,
    may write it at once: each through its own temporary file)."""
    write_private(memo, text)


@functools.cache
def cpu_identity() -> str:
    """What ``-march=native`` depends on: the CPU model and its feature flags."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    model = fields.get("model name") or platform.processor()
    return " ".join([platform.machine(), model, fields.get("flags", "")])


# -- flags: assumed until a compile proves or refutes them -----------------------------------
def flags(path: str) -> tuple[str, ...]:
    """Compiler flags and libraries for kernels. Whether OpenMP and libmvec link here is known
    once probed (remembered in the compile directory per compiler and CPU); before that the
    preferred set is assumed, since it links on most systems and probing costs a compile. A
    compile that succeeds with assumed flags confirms them (``confirm_flags``); one that fails
    probes them (``probe_flags``)."""
    if path not in _flags:
        memo = tuple((read_regular(_flags_memo(path)) or "").split())
        if memo not in candidate_flags():  # missing, empty, garbage or planted: not trusted
            return preferred_flags()
        _flags[path] = memo
    return _flags[path]


def candidate_flags() -> tuple[tuple[str, ...], ...]:
    """Every set of flags symnb itself may choose: a flags memo must be one of them (it is
    passed to the compiler, so a memo written by someone else could run anything)."""
    sets = [BASE_FLAGS + extra + libs for extra in THREADING for libs in LIBRARIES]
    return (*sets, BASE_FLAGS + ("-lm",))


def preferred_flags() -> tuple[str, ...]:
    return BASE_FLAGS + THREADING[0] + LIBRARIES[0]


def flags_assumed(path: str) -> bool:
    """True while ``flags(path)`` is the untested preferred set."""
    flags(path)
    return path not in _flags


def confirm_flags(path: str, used: tuple[str, ...]) -> None:
    """A compile with ``used`` succeeded: they link, so the probe would choose them."""
    if path not in _flags and used == preferred_flags():
        _remember(_flags_memo(path), " ".join(used))
        _flags[path] = used


def probe_flags(path: str) -> tuple[str, ...]:
    """Find the flags that link here and remember them (a compile per candidate tried)."""
    found = _probe(path)
    _remember(_flags_memo(path), " ".join(found))
    _flags[path] = found
    return found


def _flags_memo(path: str) -> str:
    # the candidates are part of the key: a release that changes them must not read the flags
    # an older one chose (they would stay in use, and in every kernel's cache key)
    candidates = " ".join(preferred_flags() + tuple(f for c in THREADING + LIBRARIES for f in c))
    parts = [path, compiler_identity(path), cpu_identity(), candidates]
    tag = hashlib.sha256("\0".join(parts).encode())
    return _memo_path(f"flags-{tag.hexdigest()[:16]}.txt")


def _probe(path: str) -> tuple[str, ...]:
    for extra in THREADING:
        for libs in LIBRARIES:
            candidate = BASE_FLAGS + extra + libs
            if _links(path, candidate):
                return candidate
    return BASE_FLAGS + ("-lm",)


def _links(path: str, candidate: tuple[str, ...]) -> bool:
    with tempfile.TemporaryDirectory(prefix="symnb-probe-") as tmp:
        src = os.path.join(tmp, "probe.c")
        with open(src, "w") as f:
            f.write("#include <math.h>\ndouble sn_probe(double x) { return exp(x); }\n")
        cmd = [path, src, "-o", os.path.join(tmp, "probe.so"), *_ordered(candidate)]
        return subprocess.run(cmd, capture_output=True, check=False).returncode == 0


def _ordered(candidate: tuple[str, ...]) -> list[str]:
    """Libraries go after the sources on the command line."""
    return [f for f in candidate if not f.startswith("-l")] + [
        f for f in candidate if f.startswith("-l")
    ]


# -- compiling ----------------------------------------------------------------------------------
def translation_unit(kernels: list[tuple[str, str]]) -> str:
    """Several kernels' sources as one C file; ``kernels`` holds (symbol, source) pairs.

    Each kernel's text is kept as it is, between ``#define`` lines that rename its entry point
    to ``symbol`` and every other ``sn_`` name (its static helpers) to one private to it, and
    ``#undef`` lines that drop those and its own macros, so no name of one kernel reaches the
    next. An ``sn_`` name the kernel defines as a macro (a helper the runner exports, spelled
    ``snrt_``: render/runtime.py) is its own macro, not renamed. A kernel that broke the
    naming convention fails to compile here, and the cache then compiles it alone."""
    return "\n".join(_renamed(index, *kernel) for index, kernel in enumerate(kernels))


def _renamed(index: int, symbol: str, source: str) -> str:
    names = sorted(set(PRIVATE_NAME.findall(source)) - {ENTRY} - set(MACRO.findall(source)))
    before = [f"#define {name} {name}__k{index}" for name in names]
    before.append(f"#define {ENTRY} {symbol}")
    undone = [*names, ENTRY, *dict.fromkeys(MACRO.findall(source))]
    return "\n".join([*before, source, *[f"#undef {name}" for name in undone], ""])


def compile_kernels(kernels: list[tuple[str, str]], target: str, used: tuple[str, ...]) -> None:
    """Compile (symbol, source) pairs into the shared library ``target`` in one compiler run,
    with the flags ``used``. A single kernel compiles from its own text (its entry point renamed
    on the command line), so compiler messages give its own line numbers."""
    if len(kernels) == 1:
        symbol, source = kernels[0]
        defines = [f"-D{ENTRY}={symbol}"]
    else:
        source, defines = translation_unit(kernels), []
    _compile(source, target, [*defines, *used])


def _compile(source: str, target: str, options: list[str]) -> None:
    """Compile ``source`` into ``target``. The source is written as ``kernel.c`` in a private
    temporary directory and named relatively, so the library's bytes depend on nothing but
    the source and flags (processes that race to build it write the same file, whose size
    and hash the cache records)."""
    path = require_compiler()
    with tempfile.TemporaryDirectory(prefix="symnb-cc-") as work:
        with open(os.path.join(work, "kernel.c"), "w") as f:
            f.write(source)
        cmd = [path, "-pipe", "kernel.c", "-o", os.path.abspath(target)]
        cmd += _ordered(tuple(options))
        start = time.perf_counter()
        result = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=work)
    log.info("%s in %.3f s: %s", "compiled" if result.returncode == 0 else "failed",
             time.perf_counter() - start, " ".join(cmd))  # fmt: skip
    if result.returncode != 0:
        raise CompileError(_failure(cmd, result.stderr + result.stdout, source))


def _failure(cmd: list[str], log: str, source: str) -> str:
    return (
        f"the C compiler failed on a kernel\ncommand: {' '.join(cmd)}\n"
        f"compiler output:\n{log.strip()}\nsource:\n{numbered(source)}"
    )
