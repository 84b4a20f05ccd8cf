"""Finding the system C compiler, probing its flags, and turning kernels into one library.

The compiler is ``sn.config.cc``, else ``$CC``, else the first of cc, gcc and clang on the
PATH (GCC, clang with or without OpenMP, Apple's clang; docs/install.md has the matrix).

Flags: ``-O2 -fvect-cost-model=dynamic``: the loop vectoriser as ``-O3`` runs it (strided rows
get a vector version behind a runtime check) without -O3's other loop passes, which took a fifth
of the compile time and bought no run time on the benchmarks (docs/c_backend.md).
``-march=native``, so the CPU is part of the cache key. ``-fopenmp`` for threads and ``omp
simd`` (``-fopenmp-simd`` alone where the OpenMP runtime is missing or ``sn.config.openmp`` is
off). ``-fno-math-errno`` so libm calls can be vectorised, ``-fwrapv`` because NumPy integers
wrap on overflow, and ``-ffp-contract=off`` so ``a*b + c`` rounds twice, as in NumPy (no silent
FMA). No ``-ffast-math``: NaN and infinity behave as in NumPy. The last two and ``-O2`` are
required; the others are probed one by one per compiler (``-fvect-cost-model`` is GCC's own)
and a flag the compiler rejects is dropped, never sent to a kernel's compile.

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

from symnb.backends import phases
from symnb.backends.c import platforms
from symnb.backends.compiledir import kernel_dir, read_regular, write_private
from symnb.config import config
from symnb.errors import CompileError, numbered

CANDIDATES = ("cc", "gcc", "clang")
#: flags the results depend on: every compile has them, or it fails saying why
REQUIRED = ("-O2", "-fwrapv", "-ffp-contract=off")
#: flags each probed on its own and dropped where the compiler rejects them; of a group the
#: first one accepted is kept (OpenMP threads, else OpenMP's simd pragmas alone)
OPTIONAL = (
    ("-fvect-cost-model=dynamic",),
    ("-march=native",),
    ("-fno-math-errno",),
    ("-fopenmp", "-fopenmp-simd"),
    ("-lmvec",),
)
LIBRARIES = ("-lm",)
ENTRY = "sn_kernel"  # the entry point every kernel defines (dialect.py)
PRIVATE_NAME = re.compile(r"\bsn_\w+")  # every file-scope name of a generated kernel
MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)", re.MULTILINE)
#: a kernel's static row function: its name, and the line that begins its definition
ROW_FUNCTION = re.compile(r"^static (?:int|void) (sn_\w+)\(", re.MULTILINE)
#: what ``SN_STRIDED`` means: -O1 and not inlined for GCC; nothing for clang, which has no
#: optimisation level per function (its ``cold`` attribute changed the hot entry's code)
STRIDED_PRELUDE = """#if defined(__GNUC__) && !defined(__clang__)
#define SN_STRIDED __attribute__((optimize("O1"), noinline))
#else
#define SN_STRIDED
#endif
"""
#: what comes before a kernel compiled alone: its lines keep their numbers (``#line``)
ALONE = STRIDED_PRELUDE + "#line 1\n"
#: what a probe compiles: a libm call, an OpenMP region and a simd loop
PROBE = """#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
double sn_probe(double *x, int n) {
    double s = 0;
#ifdef _OPENMP
    s += omp_get_max_threads();
#endif
    #pragma omp parallel for if(n > 1000)
    for (int i = 0; i < n; i++) x[i] = exp(x[i]);
    #pragma omp simd reduction(+:s)
    for (int i = 0; i < n; i++) s += x[i];
    return s;
}
"""

_flags: dict[tuple[str, bool], tuple[str, ...]] = {}  # (compiler, openmp) -> probed flags
log = logging.getLogger(__name__)


def find_compiler() -> str | None:
    """The compiler's absolute path: ``sn.config.cc``, else ``$CC``, else the first of
    cc/gcc/clang on the PATH; None when there is none. A setting that names no executable is
    a CompileError naming the setting (a path is taken relative to the working directory)."""
    for setting, value in (("sn.config.cc", config.cc), ("$CC", os.environ.get("CC", ""))):
        if value.strip():
            return _resolve(setting, value.strip())
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return os.path.abspath(path)
    return None


def _resolve(setting: str, value: str) -> str:
    if os.sep in value or (os.altsep and os.altsep in value):
        path = os.path.abspath(os.path.expanduser(value))
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
        raise CompileError(
            f"{setting} = {value!r} is not an executable file (looked for "
            f"{path}); name a C compiler on the PATH or its path"
        )
    path = shutil.which(value)
    if path is None:
        raise CompileError(
            f"{setting} = {value!r}: no such compiler on the PATH (it names "
            "one executable, e.g. gcc, clang or /usr/bin/gcc-12); " + install_hint()
        )
    return os.path.abspath(path)


def require_compiler() -> str:
    path = find_compiler()
    if path is None:
        raise CompileError(
            f"no C compiler found (looked for {'/'.join(CANDIDATES)}); " + install_hint()
        )
    return path


def install_hint() -> str:
    """How to get a C compiler that builds the kernels, on this platform."""
    return platforms.current().install_hint


def problem() -> str | None:
    """Why backend "c" cannot compile here, or None: no compiler, a setting that names none,
    one that does not run, or MSVC (the kernels are written for GCC and clang)."""
    try:
        path = find_compiler()
        if path is None:
            return f"no C compiler found (looked for {'/'.join(CANDIDATES)})"
        if os.path.basename(path).lower() in ("cl", "cl.exe"):
            return f"{path} is MSVC, which cannot build symnb's kernels (written for GCC/clang)"
        compiler_identity(path)
    except CompileError as exc:
        return str(exc).split("; ")[0]
    return None


@functools.cache
def compiler_identity(path: str) -> str:
    """The compiler's version banner, part of every cache key; remembered in the compile
    directory per binary (path, size, mtime), since asking costs a process start. A compiler
    that does not answer ``--version`` is a CompileError (macOS's cc without the command line
    tools, MSVC's cl)."""
    real = os.path.realpath(path)
    stat = os.stat(real)
    tag = hashlib.sha256(f"{real}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    memo = _memo_path(f"compiler-{tag.hexdigest()[:16]}.txt")
    known = read_regular(memo)
    if known and "\n" not in known.strip():
        return known
    try:
        with phases.timed("probe"):
            result = subprocess.run(
                [path, "--version"], capture_output=True, text=True, check=False, timeout=60
            )
    except (OSError, subprocess.SubprocessError) as exc:
        raise CompileError(f"the C compiler {path} does not run: {exc}") from None
    lines = (result.stdout + result.stderr).strip().splitlines() or ["no output"]
    if result.returncode != 0:
        raise CompileError(f"the C compiler {path} does not run ({path} --version: {lines[0]})")
    _remember(memo, lines[0])
    return lines[0]


def openmp_runtime(path: str) -> str:
    """The OpenMP runtime kernels built by ``path`` link, named as runner.c names its own
    (``SN_OPENMP_RUNTIME``): "" without OpenMP, "libomp" for clang (LLVM's, Apple's), else
    "libgomp". A call's team reaches the kernels only through the runtime they link. From
    the flags known, else the likely ones: the runner's load probes nothing."""
    if "-fopenmp" not in likely_flags(path):
        return ""
    return "libomp" if "clang" in compiler_identity(path).lower() else "libgomp"


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


# -- flags: probed once per compiler, remembered in the compile directory ----------------------
def flags(path: str) -> tuple[str, ...]:
    """Compiler flags and libraries for kernels: the required ones, the platform's link
    flags, and each optional flag the compiler accepted when probed. Probed once per compiler,
    CPU and ``sn.config.openmp`` (remembered in the compile directory), so a flag the compiler
    rejects is dropped before any kernel is compiled with it."""
    return known_flags(path) or probe_flags(path)


def known_flags(path: str) -> tuple[str, ...] | None:
    """The flags when they are known without a compiler run (probed in this process, or
    remembered in the compile directory); None in a cold compile directory."""
    key = (path, bool(config.openmp))
    if key not in _flags:
        memo = tuple((read_regular(_flags_memo(path)) or "").split())
        if not trusted(memo):
            return None
        _flags[key] = memo
    return _flags[key]


def likely_flags(path: str) -> tuple[str, ...]:
    """What the probe tries first (each group's preferred flag): the flags a cold compile
    directory's first compile uses before anything is probed (cache.py); GCC takes them all."""
    return known_flags(path) or first_try()


def first_try() -> tuple[str, ...]:
    """The required and link flags with each optional group's first flag."""
    return REQUIRED + platforms.current().kernel_link + preferred() + LIBRARIES


def preferred() -> tuple[str, ...]:
    """Each optional group's first flag."""
    return tuple(group[0] for group in _wanted())


def accept_flags(path: str, found: tuple[str, ...]) -> None:
    """Remember ``found`` as the flags, as a probe does: a compile with them built and linked
    every kernel and said nothing about any of them, which is all the probe asks."""
    _remember(_flags_memo(path), " ".join(found))
    _flags[(path, bool(config.openmp))] = found


def trusted(memo: tuple[str, ...]) -> bool:
    """Whether a flags memo holds only flags symnb itself may choose, the required ones among
    them (it is passed to the compiler, so a memo written by someone else could run
    anything)."""
    known = set(base_flags()) | {f for group in _wanted() for f in group}
    return bool(memo) and set(base_flags()) <= set(memo) <= known


def base_flags() -> tuple[str, ...]:
    """The flags every kernel compile has: the required ones, linking, libm."""
    return REQUIRED + platforms.current().kernel_link + LIBRARIES


def _wanted() -> tuple[tuple[str, ...], ...]:
    """The optional groups to probe: without ``sn.config.openmp``, OpenMP's simd alone."""
    if config.openmp:
        return OPTIONAL
    return tuple(tuple(f for f in g if f != "-fopenmp") for g in OPTIONAL)


def probe_flags(path: str) -> tuple[str, ...]:
    """Find the flags the compiler accepts and remember them: one compile with every flag
    when all are accepted (GCC), else one per optional flag."""
    with phases.timed("probe"):
        found = _probe(path)
    accept_flags(path, found)
    return found


def _flags_memo(path: str) -> str:
    # the candidates are part of the key: a release that changes them must not read the flags
    # an older one chose (they would stay in use, and in every kernel's cache key)
    candidates = " ".join(base_flags() + tuple(f for group in _wanted() for f in group))
    parts = [path, compiler_identity(path), cpu_identity(), candidates]
    tag = hashlib.sha256("\0".join(parts).encode())
    return _memo_path(f"flags-{tag.hexdigest()[:16]}.txt")


def _probe(path: str) -> tuple[str, ...]:
    base = REQUIRED + platforms.current().kernel_link
    if _accepts(path, first_try(), preferred())[0]:
        return first_try()
    ok, log = _accepts(path, base + LIBRARIES, ())
    if not ok:
        needs = " ".join(base_flags())
        raise CompileError(
            f"the C compiler {path} cannot build a shared library with the "
            f"flags symnb needs ({needs}):\n{log.strip()}"
        )
    chosen = base
    for group in _wanted():
        for flag in group:
            if _accepts(path, (*chosen, flag, *LIBRARIES), (flag,))[0]:
                chosen += (flag,)
                break
    return chosen + LIBRARIES


def _accepts(path: str, candidate: tuple[str, ...], tried: tuple[str, ...]) -> tuple[bool, str]:
    """Whether ``candidate`` builds the probe with no word about a flag of ``tried`` (clang
    warns about, and ignores, some flags it does not know), and the compiler's output."""
    with tempfile.TemporaryDirectory(prefix="symnb-probe-") as tmp:
        with open(os.path.join(tmp, "probe.c"), "w") as f:
            f.write(PROBE)
        cmd = [path, "probe.c", "-o", "probe" + platforms.current().library_suffix]
        done = subprocess.run(
            [*cmd, *_ordered(candidate)], capture_output=True, text=True, check=False, cwd=tmp
        )
    log = done.stderr + done.stdout
    return done.returncode == 0 and not mentions(log, tried), log


def mentions(log: str, tried: tuple[str, ...]) -> bool:
    """Whether the compiler's output says a word about a flag of ``tried``."""
    return any(flag in log for flag in tried)


def _ordered(candidate: tuple[str, ...]) -> list[str]:
    """Libraries go after the sources on the command line."""
    return [f for f in candidate if not f.startswith("-l")] + [
        f for f in candidate if f.startswith("-l")
    ]


# -- compiling ----------------------------------------------------------------------------------
def translation_unit(kernels: list[tuple[str, str]]) -> str:
    """Several kernels' sources as one C file; ``kernels`` holds (symbol, source) pairs.

    Each kernel's text is kept as it is (its strided row functions marked: ``strided``),
    between ``#define`` lines that rename its entry point to ``symbol`` and every other ``sn_``
    name (its static helpers) to one private to it, and ``#undef`` lines that drop those and
    its own macros, so no name of one kernel reaches the next. An ``sn_`` name the kernel
    defines as a macro (a helper the runner exports, spelled ``snrt_``: render/runtime.py) is
    its own macro, not renamed. A kernel that broke the naming convention fails to compile
    here, and the cache then compiles it alone."""
    renamed = (_renamed(index, *kernel) for index, kernel in enumerate(kernels))
    return STRIDED_PRELUDE + "\n".join(renamed)


def _renamed(index: int, symbol: str, source: str) -> str:
    names = sorted(set(PRIVATE_NAME.findall(source)) - {ENTRY} - set(MACRO.findall(source)))
    before = [f"#define {name} {name}__k{index}" for name in names]
    before.append(f"#define {ENTRY} {symbol}")
    undone = [*names, ENTRY, *dict.fromkeys(MACRO.findall(source))]
    return "\n".join([*before, strided(source), *[f"#undef {name}" for name in undone], ""])


def strided(source: str) -> str:
    """``source`` with ``SN_STRIDED`` before each of its strided row functions, the ones a
    kernel calls only where rows are not contiguous: ``sn_X`` beside its twin ``sn_X_flat``
    (row programs, reductions, scatters), and a map's ``sn_row`` beside ``sn_flat``. GCC
    compiles them at -O1 and not inlined (``STRIDED_PRELUDE``), which leaves the code of every
    other function as it was (checked instruction by instruction on W3's kernels) and takes
    11% off the compiler's CPU for W3 (docs/c_backend.md, "Cache"). Only that line changes,
    so compiler messages keep the kernel's line numbers."""
    names = set(ROW_FUNCTION.findall(source))
    cold = {n for n in names if n + "_flat" in names}
    if "sn_flat" in names and "sn_row" in names:
        cold.add("sn_row")
    if not cold:
        return source
    return ROW_FUNCTION.sub(lambda m: "SN_STRIDED " + m[0] if m[1] in cold else m[0], source)


def compile_kernels(
    kernels: list[tuple[str, str]], target: str, used: tuple[str, ...], unprobed: tuple = ()
) -> None:
    """Compile (symbol, source) pairs into the shared library ``target`` in one compiler run,
    with the flags ``used``. A single kernel compiles from its own text (its entry point renamed
    on the command line, the prelude's lines not counted: ``#line``), so compiler messages give
    its own line numbers. ``unprobed``: flags not probed yet; the compiler saying a word about
    one of them fails the compile, as it fails the probe (clang warns about, and ignores, some
    GCC flags)."""
    if len(kernels) == 1:
        symbol, source = kernels[0]
        _compile(ALONE + strided(source), target, [f"-D{ENTRY}={symbol}", *used], unprobed)
    else:
        _compile(translation_unit(kernels), target, list(used), unprobed)


def _compile(source: str, target: str, options: list[str], unprobed: tuple = ()) -> None:
    """Compile ``source`` into ``target`` (a failure shows it without the prelude ``ALONE``,
    as the kernel's own lines). The source is written as ``kernel.c`` in a private temporary
    directory and named relatively, so the library's bytes depend on nothing but the source
    and flags (processes that race to build it write the same file, whose size and hash the
    cache records)."""
    path = require_compiler()
    with tempfile.TemporaryDirectory(prefix="symnb-cc-") as work:
        with open(os.path.join(work, "kernel.c"), "w") as f:
            f.write(source)
        cmd = [path, "-pipe", "kernel.c", "-o", os.path.abspath(target)]
        cmd += _ordered(tuple(options))
        start = time.perf_counter()
        result = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=work)
        seconds = time.perf_counter() - start
    phases.current().ran(seconds)
    log.info(
        "%s in %.3f s: %s",
        "compiled" if result.returncode == 0 else "failed",
        seconds,
        " ".join(cmd),
    )
    output = result.stderr + result.stdout
    if result.returncode != 0 or mentions(output, unprobed):
        raise CompileError(_failure(cmd, output, source.removeprefix(ALONE)))


def _failure(cmd: list[str], log: str, source: str) -> str:
    return (
        f"the C compiler failed on a kernel\ncommand: {' '.join(cmd)}\n"
        f"compiler output:\n{log.strip()}\nsource:\n{numbered(source)}"
    )
