"""Process-wide settings, read when used. The environment is read once, at import:
``SYMNB_FLAGS="backend=py,optimize=stable"`` gives fields their starting values (symnb/flags.py);
``$SYMNB_COMPILEDIR`` is read when the compile directory is."""

from __future__ import annotations

import difflib
import numbers
import os
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from symnb import flags
from symnb.errors import ArgumentError


def quiet(iterable: Iterable, total: int | None = None, label: str = ""):
    """Progress that shows nothing (the default outside symnb's package import)."""
    yield from iterable


@dataclass
class Config:
    """Settings users may change at run time: ``sn.config.floatX = "float32"``. A value is
    checked when set: a bool setting takes True or False only (text is SYMNB_FLAGS's to
    parse), ``cc`` and ``compiledir`` a str or a path-like object (kept as its str)."""

    floatX: str = "float64"  # noqa: N815 - Theano's spelling, kept for course material
    #: where compiled kernels are cached; "" means $SYMNB_COMPILEDIR, else ~/.cache/symnb (or
    #: $XDG_CACHE_HOME/symnb); it must be the user's own and not writable by group or others
    compiledir: str = ""
    #: the kernel cache's size cap in MB, a whole number, 0 or more; least-recently-used
    #: libraries go beyond it (the latest compile's stay: 0 keeps only those)
    cache_limit_mb: int = 1024
    #: the C compiler for backend "c": a name on the PATH or a path (relative to the working
    #: directory); "" means $CC, else the first of cc, gcc, clang on the PATH
    cc: str = ""
    #: compile backend "c"'s kernels with OpenMP threads where the compiler and its runtime
    #: can (probed); False compiles them without (one thread a kernel, same results), as a
    #: compiler without OpenMP does (Apple's clang); read when compiling
    openmp: bool = True
    #: check the graph after every rewrite phase (types, shapes, clients); tests turn it on
    verify_rewrites: bool = False
    #: run calls of backend "c" functions through the C runner (symnb/backends/c/runner.c);
    #: False runs them in Python (same results, more overhead per call); read when compiling
    c_runner: bool = True
    #: the threads of a backend "c" call (its OpenMP kernels and BLAS products): None is the
    #: thread policy (the cores this process may use that other processes leave free, sampled
    #: every 0.05-0.15 s; docs/c_backend.md, "Threads"), a number pins it (1: one thread); never
    #: more than OMP_NUM_THREADS and the BLAS's own limit; read on every call
    threads: int | None = None
    #: deprecated (the thread policy runs a loop's products on one thread when the cores are
    #: busy): inside a loop (a scan), run each matrix product of at most 4M multiply-adds on
    #: one OpenBLAS thread whatever the machine's load; read when compiling
    loop_products_on_one_thread: bool = False
    #: the OpenCL device of backend "opencl": "" is the first device that builds a kernel
    #: (symnb/backends/opencl/device.py); else "P:D" (platform and device numbers) or text
    #: found in "platform name / device name" (``python -m symnb.backends.opencl`` lists them)
    opencl_device: str = ""
    #: where backends "opencl" and "cuda" run a scan's loop: "device" (the default) runs
    #: each step's kernels on the device (nothing crosses the bus per step), "host" runs the
    #: loop's NumPy reference on the host (its operands copied there and back once a call);
    #: "auto" is "device", except on a CPU device (PoCL, Intel's CPU runtime), where a launch
    #: per step costs more than the host's loop (docs/gpu_backends.md); read when compiling
    device_loops: str = "device"
    #: what launches backend "cuda"'s kernels: "cuda-python" (NVIDIA's driver bindings),
    #: "pycuda", or "" for the first of the two that is installed
    cuda_launcher: str = ""
    #: the CUDA device (its ordinal, 0 is the first) that backend "cuda" runs on; read when
    #: a function is compiled
    cuda_device: int = 0
    #: wait for each of backend "cuda"'s kernels after its launch, so a kernel that faults
    #: (an illegal address) is reported by its own step, naming the node and your line,
    #: instead of by a later copy; slower, for debugging (read at each launch)
    cuda_debug_sync: bool = False
    #: the backend of ``sn.function`` when none is given: "" is "c" where a C compiler is
    #: present, else "py"
    backend: str = ""
    #: the rewrites of ``sn.function`` when ``optimize`` is not given (docs/rewrites.md)
    optimize: str = "fast"
    #: wraps long loops (compiling many kernels): ``progress(iterable, total, label)``; symnb
    #: sets it to ``sn.progress`` (tqdm's bar where installed, else its own; docs/notebook.md)
    progress: Callable = quiet

    def __setattr__(self, name, value):
        if name not in self.__dataclass_fields__:
            raise AttributeError(_unknown(name), name=name, obj=self)
        choices = CHOICES.get(name)
        if choices is not None and value not in choices:
            spelled = [repr(c) if name in QUOTED else c for c in choices]
            raise ArgumentError(
                f"config.{name} must be {', '.join(spelled[:-1])} or {spelled[-1]}, not {value!r}"
            )
        if name in BOOLS:
            value = _checked_bool(name, value)
        if name in PATHS:
            value = _checked_path(name, value)
        if name == "progress" and not callable(value):
            raise ArgumentError(
                "config.progress must be callable as progress(iterable, total, label) "
                f"(sn.progress, symnb.config.quiet), not {value!r}"
            )
        if name == "threads" and not (value is None or _is_count(value)):
            raise ArgumentError(
                "config.threads must be None (the thread policy) or a number of threads of "
                f"at least 1, not {value!r}"
            )
        if name == "threads" and value is not None:
            value = int(value)  # np.int64(4) is kept as 4
        if name == "cuda_device":
            if not (_is_count(value) or (_is_size(value) and value == 0)) or value != int(value):
                raise ArgumentError(
                    f"config.cuda_device must be a device number, 0 or more, not {value!r}"
                )
            value = int(value)
        if name == "opencl_device" and not _is_device_choice(value):
            raise ArgumentError(
                'config.opencl_device must be text: "" (the first device that builds a '
                'kernel), "P:D" (platform and device numbers, such as "0:1") or part of a '
                f"device's name (python -m symnb.backends.opencl lists them), not {value!r}"
            )
        if name == "cache_limit_mb":
            if not _is_whole(value):
                raise ArgumentError(
                    "config.cache_limit_mb must be a whole number of MB, 0 or more (0 keeps "
                    f"only the libraries of the latest compile), not {value!r}"
                )
            value = int(value)  # np.int64(512) is kept as 512
        if name == "loop_products_on_one_thread" and value:
            warnings.warn(
                "sn.config.loop_products_on_one_thread is deprecated: the thread policy runs "
                "products on one thread when other processes keep the cores busy; "
                "sn.config.threads = 1 pins every call to one thread",
                DeprecationWarning,
                stacklevel=2,
            )
        super().__setattr__(name, value)
        for watcher in WATCHERS.get(name, ()):
            watcher(value)

    def __getattr__(self, name):
        """Only for names that are not fields: a misspelt read fails naming the field meant."""
        raise AttributeError(_unknown(name), name=name, obj=self)


def _unknown(name: str) -> str:
    """Setting a misspelt field would make a new attribute that nothing reads; both a read
    and a write of one say which field was meant."""
    known = list(Config.__dataclass_fields__)
    close = difflib.get_close_matches(name, known, n=1) or difflib.get_close_matches(
        name.lower(), [k.lower() for k in known], n=1
    )
    if close:
        meant = next(k for k in known if k.lower() == close[0].lower())
        return f"sn.config has no setting {name!r}; did you mean {meant!r}?"
    return f"sn.config has no setting {name!r}; the settings are {', '.join(sorted(known))}"


def _checked_bool(name: str, value) -> bool:
    """A bool setting's value: True or False (NumPy's too), never a truth value taken from
    another object, as ``"false"`` would be true (SYMNB_FLAGS parses text; code writes
    False)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ArgumentError(f"config.{name} must be True or False, not {value!r}")


def _checked_path(name: str, value) -> str:
    """A path setting's value as a str: a str, or a path-like object (``pathlib.Path``)
    made one, so what reads it (the compiler's lookup, the compile directory's checks)
    always has text."""
    path = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if isinstance(path, str):
        return path
    raise ArgumentError(
        f"config.{name} must be a path (a str or a pathlib.Path; {PATHS[name]}), not "
        f"{value!r} of type {type(value).__name__}"
    )


def _is_size(value) -> bool:
    """A real number of at least 0, not a bool (NaN is not one)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and value >= 0


def _is_device_choice(value) -> bool:
    """Text, and where it is numbers between colons, two of them ("P:D"): "0:0:0" names no
    device, and an int 0 meant the default device silently."""
    if not isinstance(value, str):
        return False
    parts = value.split(":")
    return len(parts) <= 2 or not all(p.isdigit() for p in parts)


def _is_whole(value) -> bool:
    """A whole number of at least 0: an ``int`` or NumPy integer, not a bool (nor a float:
    0.5 or inf is no number of MB an int setting holds)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0


def _is_count(value) -> bool:
    """A whole number of at least 1: an ``int`` or NumPy integer, not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1


#: the values some fields may take (the backends are symnb.backends.LINKERS, the launchers
#: symnb.backends.cuda.runtime.LAUNCHERS; tests keep the lists equal)
CHOICES = {
    "floatX": ("float16", "float32", "float64"),
    "backend": ("", "c", "py", "opencl", "cuda"),
    "optimize": ("fast", "stable", "none"),
    "device_loops": ("device", "auto", "host"),
    "cuda_launcher": ("", "cuda-python", "pycuda"),
}
QUOTED = ("backend", "optimize", "device_loops", "cuda_launcher")
#: the settings that name a file or directory, and what their "" means
PATHS = {
    "cc": '"" is $CC, else cc, gcc or clang',
    "compiledir": '"" is $SYMNB_COMPILEDIR, else ~/.cache/symnb',
}
#: the settings that are True or False (a test keeps this the fields declared bool)
BOOLS = ("openmp", "verify_rewrites", "c_runner", "loop_products_on_one_thread", "cuda_debug_sync")
#: field -> functions called with its new value when it is set (``watch``)
WATCHERS: dict[str, list[Callable]] = {}


def watch(name: str, watcher: Callable) -> None:
    """Call ``watcher(value)`` whenever ``config.<name>`` is set (the C runner keeps the
    thread policy's answer between calls and asks again when ``threads`` changes)."""
    if watcher not in WATCHERS.setdefault(name, []):
        WATCHERS[name].append(watcher)


config = Config()
flags.apply(config, os.environ.get("SYMNB_FLAGS", ""), "SYMNB_FLAGS")
