"""The loaded mode (issue 37): a fixed background load, and workers pinned to one thread.

``--loaded`` times every workload twice: on the machine as it is ("idle") and beside a
``Spinner``, a process that does nothing but spin on one core ("loaded"), the state of a
student's laptop with a browser and another kernel busy. ``--one-thread`` adds, for each
peer, a twin whose worker has every thread pool at one thread (``ONE_THREAD_ENV``) and is
pinned to one core, so a library's loaded time can be compared with its own one-thread time.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
import sys

IDLE, LOADED = "idle", "loaded"
STOP_TIMEOUT_S = 5.0
# Spins until stopped, and stops by itself once its parent is gone (the harness killed by a
# signal it cannot catch), checking about every 20 ms of spinning. The parent's pid comes as
# an argument: the parent may already be gone when the spinner's interpreter has started.
SPIN = """\
import os, sys
parent = int(sys.argv[1])
while os.getppid() == parent:
    for _ in range(200_000):
        pass
"""
# Every library's thread count at one: OpenMP (symnb's kernels, PyTorch, PyTensor), the BLAS
# libraries, numexpr, Numba, and XLA's CPU pool (JAX).
ONE_THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "BLIS_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "NUMEXPR_MAX_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
}
XLA_ONE_THREAD = "--xla_cpu_multi_thread_eigen=false"
CORE_VARIABLE = "SYMNB_BENCH_CORE"  # the core a one-thread worker pins itself to


def cores() -> list[int]:
    """The cores this process may run on, in order ([] where affinity is not available)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return []


def spinner_core() -> int | None:
    """The spinner's core: the first one this process may use."""
    available = cores()
    return available[0] if available else None


def one_thread_core() -> int | None:
    """The core of the one-thread workers: the last one, away from the spinner's."""
    available = cores()
    return available[-1] if available else None


def pin(pid: int, core: int | None) -> bool:
    """Pin process ``pid`` to ``core`` where the platform can; whether it did."""
    if core is None or not hasattr(os, "sched_setaffinity"):
        return False
    try:
        os.sched_setaffinity(pid, {core})
    except OSError:
        return False
    return True


class Spinner:
    """A process spinning on one core, as a context manager: started on entry, stopped (and
    waited for) on exit, whatever ended the block; also at interpreter exit, and the process
    ends by itself when its parent dies."""

    def __init__(self, core: int | None = None):
        self.core = spinner_core() if core is None else core
        self.proc: subprocess.Popen | None = None
        self.pinned = False

    def start(self) -> Spinner:
        if self.running:
            return self
        # A session of its own: Ctrl-C reaches the harness, which stops the spinner in order.
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SPIN, str(os.getpid())],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        atexit.register(self.stop)
        self.pinned = pin(self.proc.pid, self.core)
        return self

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        atexit.unregister(self.stop)
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def describe(self) -> str:
        where = f"pinned to core {self.core}" if self.pinned else "not pinned"
        return f"one process spinning ({where})"

    def __enter__(self) -> Spinner:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


@contextlib.contextmanager
def condition(name: str, say=None):
    """The machine state a block of timing runs in: ``LOADED`` runs it beside a Spinner,
    anything else as the machine is. Yields the description of the load (or "")."""
    if name != LOADED:
        yield ""
        return
    with Spinner() as spinner:
        if say:
            say(f"  background load on: {spinner.describe()}")
        yield spinner.describe()


def one_thread_env(env: dict, core: int | None = None) -> dict:
    """``env`` with every library's threads at one (XLA's flag added to any the user set) and,
    where ``core`` is given, the core the worker pins itself to before it imports its library
    (``pin_from_env``)."""
    out = dict(env) | ONE_THREAD_ENV
    if core is not None:
        out[CORE_VARIABLE] = str(core)
    flags = out.get("XLA_FLAGS", "")
    if XLA_ONE_THREAD not in flags:
        out["XLA_FLAGS"] = f"{flags} {XLA_ONE_THREAD}".strip()
    return out


def pin_from_env() -> bool:
    """In a worker: pin this process to the core ``one_thread_env`` named, if any."""
    core = os.environ.get(CORE_VARIABLE, "")
    return pin(0, int(core)) if core.strip().isdigit() else False
