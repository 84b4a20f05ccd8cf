"""Finding the system C compiler and turning one kernel's source into a shared library.

Flags: ``-O3 -march=native`` (so the CPU is part of the cache key), ``-fopenmp`` for threads and
``omp simd`` (``-fopenmp-simd`` alone where the OpenMP runtime is missing), ``-fno-math-errno``
so libm calls can be vectorised, ``-fwrapv`` because NumPy integers wrap on overflow, and
``-ffp-contract=off`` so ``a*b + c`` rounds twice, as in NumPy (no silent FMA). No
``-ffast-math``: NaN and infinity behave as in NumPy.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile

from symnb.config import config
from symnb.errors import SymnbError

CANDIDATES = ("cc", "gcc", "clang")
BASE_FLAGS = (
    "-O3", "-march=native", "-shared", "-fPIC", "-fno-math-errno", "-fwrapv", "-ffp-contract=off"
)  # fmt: skip
INSTALL_HINT = (
    "install a C compiler (Debian/Ubuntu: apt-get install gcc; Fedora: dnf install gcc; "
    "macOS: xcode-select --install; conda: conda install -c conda-forge c-compiler)"
)


class CompileError(SymnbError, RuntimeError):
    """The C compiler rejected a kernel: the message has its output and the numbered source."""


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
    from symnb.backends.c.cache import kernel_dir

    real = os.path.realpath(path)
    stat = os.stat(real)
    tag = hashlib.sha256(f"{real}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    memo = os.path.join(kernel_dir(), f"compiler-{tag.hexdigest()[:16]}.txt")
    try:
        with open(memo) as f:
            return f.read()
    except OSError:
        pass
    result = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
    banner = (result.stdout.splitlines() or [path])[0]
    _remember(memo, banner)
    return banner


def _remember(memo: str, text: str) -> None:
    """Write a small memo file atomically (several processes may write it at once)."""
    os.makedirs(os.path.dirname(memo), exist_ok=True)
    tmp = f"{memo}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, memo)


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


@functools.cache
def flags(path: str) -> tuple[str, ...]:
    """Compiler flags and libraries: whether OpenMP and libmvec link here is probed once per
    compiler and CPU and remembered in the compile directory (a probe is a compile)."""
    from symnb.backends.c.cache import kernel_dir

    tag = hashlib.sha256("\0".join([path, compiler_identity(path), cpu_identity()]).encode())
    memo = os.path.join(kernel_dir(), f"flags-{tag.hexdigest()[:16]}.txt")
    try:
        with open(memo) as f:
            return tuple(f.read().split())
    except OSError:
        pass
    found = _probe_flags(path)
    _remember(memo, " ".join(found))
    return found


def _probe_flags(path: str) -> tuple[str, ...]:
    for extra in (("-fopenmp",), ("-fopenmp-simd",)):
        for libs in (("-lmvec", "-lm"), ("-lm",)):
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


def compile_library(source: str, target: str) -> None:
    """Compile ``source`` into the shared library ``target`` (written exactly there)."""
    path = require_compiler()
    src = target + ".c"
    with open(src, "w") as f:
        f.write(source)
    cmd = [path, src, "-o", target, *_ordered(flags(path))]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    os.unlink(src)
    if result.returncode != 0:
        raise CompileError(_failure(cmd, result.stderr + result.stdout, source))


def _failure(cmd: list[str], log: str, source: str) -> str:
    numbered = "\n".join(f"{i:4d}  {line}" for i, line in enumerate(source.splitlines(), 1))
    return (
        f"the C compiler failed on a kernel\ncommand: {' '.join(cmd)}\n"
        f"compiler output:\n{log.strip()}\nsource:\n{numbered}"
    )
