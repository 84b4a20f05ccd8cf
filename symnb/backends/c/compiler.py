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

import ctypes
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
from symnb.backends.c import compiler_runs, platforms, threads
from symnb.backends.compiledir import kernel_dir, read_regular, write_private
from symnb.config import config
from symnb.errors import CompileError, numbered

CANDIDATES = ("cc", "gcc", "clang")
#: flags the results depend on: every compile has them, or it fails saying why
REQUIRED = ("-O2", "-fwrapv", "-ffp-contract=off")
#: flags each probed on its own and dropped where the compiler rejects them; of a group the
#: first one accepted is kept (OpenMP threads, else OpenMP's simd pragmas alone)
OPTIONAL = (
    ("-pipe",),
    ("-fvect-cost-model=dynamic",),
    ("-march=native",),
    ("-fno-math-errno",),
    ("-fopenmp", "-fopenmp-simd"),
    ("-lmvec",),
)
LIBRARIES = ("-lm",)
#: seconds a compiler run may take before it is killed and the compile fails saying so: the
#: version banner and a probe are small compiles; a kernel batch (up to 16 kernels in one run)
#: on a slow or busy machine may take a minute, so its limit is ten times the slowest seen
VERSION_TIMEOUT = 60
PROBE_TIMEOUT = 120
COMPILE_TIMEOUT = 600
#: words of a compiler's diagnostic that says a flag is not taken as given (GCC's
#: "unrecognized command-line option", clang's "unknown argument", "argument unused during
#: compilation", "optimization flag ... is not supported", icc's "ignoring unknown option")
REJECTS = re.compile(
    r"unrecogni[sz]ed|unknown|unsupported|not supported|ignor|invalid|unused|not for",
    re.IGNORECASE,
)
#: a command-line option in a line of output (quoted or not), left out when a line is read
#: for REJECTS: an echoed command line's ``-Wno-unused-...`` is no diagnostic
OPTION_WORD = re.compile(r"""(?<![^\s'"`‘])-[^\s'"’]+""")
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
#: (compiler, its banner, openmp) -> why it cannot build a library: found by a probe, so that
#: the default backend does not probe again on every function (``problem``)
_unusable: dict[tuple[str, str, bool], str] = {}
log = logging.getLogger(__name__)


class CompilerUnusable(CompileError):
    """The compiler runs but cannot build (and load) a shared library with the flags symnb
    needs: the default backend falls back to "py" (one warning), ``backend="c"`` raises it.
    ``reason``: the short form the warning gives (the compiler and its first error lines)."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason

    def __reduce__(self):  # (made again with both: its args hold the message alone)
        return type(self), (*self.args, self.reason), self.__dict__


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


#: programs that run the compiler named after them (``CC="ccache gcc"``)
LAUNCHERS = ("ccache", "sccache", "distcc", "icecc")


def _resolve(setting: str, value: str) -> str:
    is_path = os.sep in value or bool(os.altsep and os.altsep in value)
    path = os.path.abspath(os.path.expanduser(value)) if is_path else shutil.which(value)
    found = path is not None and os.path.isfile(path) and os.access(path, os.X_OK)
    if not found and len(value.split()) > 1:  # (an executable whose name has a space is one)
        raise CompileError(_holds_arguments(setting, value))
    if is_path and not found:
        raise CompileError(
            f"{setting} = {value!r} is not an executable file (looked for "
            f"{path}); name a C compiler on the PATH or its path"
        )
    if path is None:
        raise CompileError(
            f"{setting} = {value!r}: no such compiler on the PATH (it names "
            "one executable, e.g. gcc, clang or /usr/bin/gcc-12); " + install_hint()
        )
    return os.path.abspath(path)


def _holds_arguments(setting: str, value: str) -> str:
    """The error for a setting that holds a command line, not one executable (whether or not
    its first word is installed: that it holds arguments is the mistake to fix)."""
    first, rest = value.split(None, 1)
    launcher = os.path.basename(first)
    if launcher in LAUNCHERS:
        compiler = os.path.basename(rest.split()[0])
        meant = (
            f"for {launcher}, name its masquerade link (e.g. /usr/lib/ccache/{compiler}) or a "
            f"wrapper script that runs {value!r}"
        )
    else:
        meant = f"set it to {first!r} (a wrapper script may add flags)"
    return (
        f"{setting} = {value!r} holds arguments ({rest!r}) after {first!r}: symnb takes one "
        f"executable, a name on the PATH or its path, and chooses the flags itself: {meant}"
    )


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
    one that does not run, MSVC (the kernels are written for GCC and clang), or one whose
    probe could not build and load a library in this process (``CompilerUnusable``: a
    compiler that runs is otherwise taken as able until its first compile, which a cold
    compile directory makes without a probe, ``cache._first_try``)."""
    try:
        path = find_compiler()
        if path is None:
            return f"no C compiler found (looked for {'/'.join(CANDIDATES)})"
        if os.path.basename(path).lower() in ("cl", "cl.exe"):
            return f"{path} is MSVC, which cannot build symnb's kernels (written for GCC/clang)"
        return _unusable.get(_usable_key(path))
    except CompileError as exc:
        return str(exc).split("; ")[0]


def _usable_key(path: str) -> tuple[str, str, bool]:
    return (path, compiler_identity(path), bool(config.openmp))


def unusable_reason(path: str, output: str) -> str:
    """The short reason a compiler cannot build the kernels: it, and what it said."""
    return f"the C compiler {path} cannot build symnb's kernels ({summary(output)})"


def summary(output: str, most: int = 3) -> str:
    """The lines of a compiler's output that say what went wrong, joined with " / ": the
    first few that report an error, leaving out the driver's closing "ld returned 1 exit
    status" / "linker command failed" (the linker's own line above it says why: "No space
    left on device", "cannot find -lfoo"); else the first lines there are."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    closing = ("ld returned", "linker command failed")
    said = [line for line in lines if not any(c in line for c in closing)]
    wrong = re.compile(r"error|fatal|failed|cannot|undefined|no such|no space", re.IGNORECASE)
    errors = [line for line in said if wrong.search(line)]
    return " / ".join((errors or said or lines or ["no output"])[:most])


@functools.cache
def compiler_identity(path: str) -> str:
    """The compiler's version banner, part of every cache key; remembered in the compile
    directory per binary (the path as invoked, the file it resolves to, its size and mtime),
    since asking costs a process start. The path as invoked is part of it: ccache's
    masquerade links (``/usr/lib/ccache/gcc`` and ``.../clang``) and other dispatchers by
    ``argv[0]`` are one file that runs different compilers. A compiler that does not answer
    ``--version`` is a CompileError (macOS's cc without the command line tools, MSVC's cl)."""
    tag = hashlib.sha256(compiler_file(path).encode())
    memo = _memo_path(f"compiler-{tag.hexdigest()[:16]}.txt")
    known = read_regular(memo)
    if known and "\n" not in known.strip():
        return known
    with phases.timed("probe"):
        result = run_compiler([path, "--version"], VERSION_TIMEOUT, "--version")
    lines = (result.stdout + result.stderr).strip().splitlines() or ["no output"]
    if result.returncode != 0:
        raise CompileError(f"the C compiler {path} does not run ({path} --version: {lines[0]})")
    _remember(memo, lines[0])
    return lines[0]


def compiler_file(path: str) -> str:
    """Which executable runs, for the cache keys beside its banner: the path as invoked, the
    file it resolves to, and that file's size and modification time. A wrapper prints the
    banner of the compiler it runs (one adding ``-ffast-math`` prints gcc's), so the banner
    alone would load its kernels for the compiler itself; an edited wrapper is a new key."""
    real = os.path.realpath(path)
    info = os.stat(real)
    return f"{path}\0{real}:{info.st_size}:{info.st_mtime_ns}"


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


#: the fields of /proc/cpuinfo that ``-march=native`` depends on: x86's model and flags; ARM's
#: features, implementer, architecture, variant and part (Neoverse N1 and V1 differ only there)
CPUINFO_FIELDS = (
    "model name",
    "flags",
    "Features",
    "CPU implementer",
    "CPU architecture",
    "CPU variant",
    "CPU part",
    "cpu",  # POWER's "POWER9 (raw), altivec supported"
    "isa",  # RISC-V's ISA string
)
#: what macOS's ``sysctl`` says of the CPU (it has no /proc/cpuinfo): the model, and every
#: ``hw.optional`` feature (arm64's FEAT_*, x86's avx2_0, ...)
SYSCTL_QUERIES = (("-n", "machdep.cpu.brand_string"), ("hw.optional",))


@functools.cache
def cpu_identity() -> str:
    """What ``-march=native`` depends on: the machine, the CPU model and its features (part
    of every kernel's key, so a cache shared between machines never runs one CPU's code on
    another)."""
    return describe_cpu(platform.machine(), _read("/proc/cpuinfo"), sysctl, platform.processor)


def describe_cpu(machine: str, cpuinfo: str | None, ask=None, processor=None) -> str:
    """The CPU from the text of /proc/cpuinfo (every distinct value of ``CPUINFO_FIELDS``,
    in order: a big.LITTLE machine has two parts), else from ``ask(*arguments)`` (sysctl's
    answer, or None), else ``processor()``."""
    values: dict[str, dict[str, None]] = {}
    for line in (cpuinfo or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() in CPUINFO_FIELDS and value.strip():
            values.setdefault(key.strip(), {})[value.strip()] = None
    said = [f"{k}: {' | '.join(values[k])}" for k in CPUINFO_FIELDS if k in values]
    if not said and ask is not None:
        said = [answer.strip() for q in SYSCTL_QUERIES if (answer := ask(*q))]
    if not said and processor is not None:
        said = [processor()]
    return " ".join([machine, *said])


def sysctl(*arguments: str) -> str | None:
    """``sysctl``'s answer, or None where there is none (not macOS or BSD, or no answer in
    five seconds)."""
    command = shutil.which("sysctl") or "/usr/sbin/sysctl"
    if not os.path.exists(command):
        return None
    try:
        done = subprocess.run(
            [command, *arguments], capture_output=True, text=True, check=False, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 and done.stdout.strip() else None


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


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
        reason = _unusable[_usable_key(path)] = unusable_reason(path, log)
        raise CompilerUnusable(
            f"the C compiler {path} cannot build a shared library that loads, with the "
            f"flags symnb needs ({needs}):\n{log.strip()}",
            reason,
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
    warns about, and ignores, some flags it does not know) into a library that loads, and the
    compiler's output (with the loader's, when it does not load). The load is what finds a
    runtime that links but is not on the loader's path (LLVM's libomp outside it, MinGW's
    libgomp DLL): kernels built with it would not load."""
    name = "probe" + platforms.current().library_suffix
    with tempfile.TemporaryDirectory(prefix="symnb-probe-", ignore_cleanup_errors=True) as tmp:
        with open(os.path.join(tmp, "probe.c"), "w") as f:
            f.write(PROBE)
        cmd = [path, "probe.c", "-o", name, *_ordered(candidate)]
        done = run_compiler(cmd, PROBE_TIMEOUT, "a probe", cwd=tmp)
        log = done.stderr + done.stdout
        if done.returncode != 0 or mentions(log, tried):
            return False, log
        loaded = _loads(os.path.join(tmp, name))
    return loaded is None, log + (loaded or "")


def _loads(library: str) -> str | None:
    """None when the dynamic loader opens ``library`` (ctypes, as kernels are opened, in
    OpenMP's environment: threads.py), else what it said. The probe defines and runs
    nothing at load; the runtime it brings in is the one its kernels load."""
    if not os.path.exists(library):
        return f"the compiler exited with status 0 but wrote no {os.path.basename(library)}"
    try:
        with threads.openmp_environment():
            ctypes.CDLL(library)
    except OSError as exc:
        return f"the library it built does not load: {exc}"
    return None


def mentions(log: str, tried: tuple[str, ...]) -> bool:
    """Whether the compiler's output has a diagnostic that a flag of ``tried`` is not taken
    as given: a line naming the flag with a word of ``REJECTS`` outside its options (a
    wrapper that echoes its command line, NIX_DEBUG's or spack's, names every flag and
    rejects none)."""
    for line in log.splitlines():
        if any(flag in line for flag in tried) and REJECTS.search(OPTION_WORD.sub(" ", line)):
            return True
    return False


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
        cmd = [path, "kernel.c", "-o", os.path.abspath(target)]
        cmd += _ordered(tuple(options))
        log.debug("compiling (at most %d s): %s", COMPILE_TIMEOUT, " ".join(cmd))
        start = time.perf_counter()
        result = run_compiler(cmd, COMPILE_TIMEOUT, "a kernel", cwd=work)
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


def run_compiler(
    cmd: list[str], timeout: float, what: str, cwd: str | None = None
) -> subprocess.CompletedProcess:
    """Run a compiler command, its output captured; a CompileError naming the compiler when it
    does not start, or when it runs past ``timeout`` seconds (then it is killed with its
    process group: the driver's cc1, as and ld hold its pipes open). In a worker thread of a
    parallel compile, the process is recorded (``compiler_runs``), so that an interrupt of the
    thread waiting for the compile kills it too."""
    posix = os.name == "posix"
    try:
        process = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            start_new_session=posix,
        )
    except OSError as exc:
        raise CompileError(f"the C compiler {cmd[0]} does not run: {exc}") from None
    runs = compiler_runs.current()
    try:
        if runs is not None:
            runs.add(process)
        out, err = process.communicate(timeout=timeout)
    except BaseException as exc:
        compiler_runs.kill(process)
        process.communicate()
        if isinstance(exc, subprocess.TimeoutExpired):
            raise CompileError(
                f"the C compiler {cmd[0]} did not finish {what} in {timeout:g} s and was "
                f"stopped (is it waiting on a lock, a network file system or a licence "
                f"server?)\ncommand: {' '.join(cmd)}"
            ) from None
        raise
    finally:
        if runs is not None:
            runs.discard(process)
    if runs is not None and runs.cancelled:
        raise compiler_runs.Cancelled()  # killed by ``cancel``: its output is no answer
    return subprocess.CompletedProcess(cmd, process.returncode, out, err)


def _failure(cmd: list[str], log: str, source: str) -> str:
    return (
        f"the C compiler failed on a kernel\ncommand: {' '.join(cmd)}\n"
        f"compiler output:\n{log.strip()}\nsource:\n{numbered(source)}"
    )
