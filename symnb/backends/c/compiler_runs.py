"""The compiler processes of one parallel compile, so that stopping it stops them all.

Kernel batches compile in worker threads; a Ctrl-C reaches only the main thread, which
waits for them. ``Runs`` records every compiler process the workers start (``tracked``
makes it theirs): ``cancel`` kills the live ones with their process groups (the driver's
cc1, as and ld) and refuses new ones, so the workers end at once and the interrupt is not
held up by a compile of up to ``compiler.COMPILE_TIMEOUT`` seconds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading

from symnb.core import locks

_current = threading.local()


class Cancelled(Exception):
    """A compiler run refused or stopped because its compile was cancelled (the thread that
    cancelled it raises its own exception: the user never sees this one)."""


class Runs:
    """The live compiler processes of one compile, and whether it was cancelled."""

    def __init__(self):
        self._lock = locks.lock()  # unlocked in a forked child (core/locks.py)
        self._live: set[subprocess.Popen] = set()
        self.cancelled = False

    def add(self, process: subprocess.Popen) -> None:
        """Record a started process; one started after ``cancel`` is killed (Cancelled)."""
        with self._lock:
            if not self.cancelled:
                self._live.add(process)
                return
        kill(process)
        raise Cancelled()

    def discard(self, process: subprocess.Popen) -> None:
        with self._lock:
            self._live.discard(process)

    def cancel(self) -> None:
        """Kill every live process (and its group) and refuse new ones."""
        with self._lock:
            self.cancelled = True
            live = list(self._live)
        for process in live:
            kill(process)


def current() -> Runs | None:
    """The ``Runs`` this thread's compiler processes belong to (None outside ``tracked``)."""
    return getattr(_current, "runs", None)


@contextlib.contextmanager
def tracked(runs: Runs):
    """Inside, this thread's compiler runs are recorded in ``runs``."""
    before = current()
    _current.runs = runs
    try:
        yield runs
    finally:
        _current.runs = before


def kill(process: subprocess.Popen) -> None:
    """Kill ``process`` with its process group where it leads one (POSIX: started with
    ``start_new_session``), else alone; one reaped already is left (its number may be
    another's now)."""
    if process.returncode is not None:
        return
    try:
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except OSError:
        pass
