"""Where a compile's seconds go, for the compile log (``symnb.compile.function``).

``recording()`` opens a ``Phases`` for the code inside it on this thread; ``timed(phase)``
adds the seconds of its block to that phase, less the seconds of phases timed inside it, so
the phases never count a second twice and add up to the time they cover. Compiler runs go
on threads of their own: each reports its seconds with ``ran`` (a list, one per run, since
runs in parallel overlap), on the recording its caller handed the thread (``joined``).
Outside a recording every call does nothing but read a clock.
"""

from __future__ import annotations

import contextlib
import threading
import time

from symnb.core import locks

#: the order the log gives the phases it knows (others follow in the order they ended)
ORDER = ("graph", "rewrites", "planning", "probe", "compile", "loading", "runner")
_local = threading.local()


class Phases:
    """Seconds per phase (exclusive: a phase timed inside another is not in the other's) and
    the seconds of each compiler run."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self.runs: list[float] = []
        self._open: list[list[float]] = []  # per open phase: [seconds of the phases inside]
        self._lock = locks.lock()

    def __getstate__(self):
        """What pickle and ``copy.deepcopy`` keep: everything but the lock (made anew)."""
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = locks.lock()

    @contextlib.contextmanager
    def timed(self, phase: str):
        inner = [0.0]
        self._open.append(inner)
        start = time.perf_counter()
        try:
            yield
        finally:
            spent = time.perf_counter() - start
            self._open.pop()
            if self._open:
                self._open[-1][0] += spent
            self.add(phase, spent - inner[0])

    def add(self, phase: str, seconds: float) -> None:
        with self._lock:
            self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds

    def ran(self, seconds: float) -> None:
        """One compiler run took ``seconds`` (any thread)."""
        with self._lock:
            self.runs.append(seconds)

    def total(self) -> float:
        return sum(self.seconds.values())

    def __repr__(self) -> str:
        return f"<compile phases, {self.total():.3f} s: {self or 'none recorded'}>"

    def __str__(self) -> str:
        parts = []
        known = sorted(self.seconds, key=lambda p: ORDER.index(p) if p in ORDER else len(ORDER))
        for phase in known:
            seconds = self.seconds[phase]
            part = f"{phase} {seconds:.3f} s"
            if phase == "compile" and self.runs:
                each = ", ".join(f"{s:.3f}" for s in self.runs)
                part += f" ({len(self.runs)} compiler run{'s' * (len(self.runs) > 1)}: {each} s)"
            parts.append(part)
        return ", ".join(parts)


class _Nothing(Phases):
    """The recording outside any: keeps nothing."""

    @contextlib.contextmanager
    def timed(self, phase: str):
        yield

    def add(self, phase: str, seconds: float) -> None:
        pass

    def ran(self, seconds: float) -> None:
        pass


NOTHING = _Nothing()


def current() -> Phases:
    """The recording open on this thread (the innermost), else one that keeps nothing."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else NOTHING


@contextlib.contextmanager
def recording():
    """A new ``Phases`` for what runs inside, on this thread."""
    with joined(Phases()) as phases:
        yield phases


@contextlib.contextmanager
def joined(phases: Phases):
    """Report to ``phases`` (another thread's recording) from this thread, inside."""
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    stack.append(phases)
    try:
        yield phases
    finally:
        stack.pop()


def timed(phase: str):
    """``current().timed(phase)``."""
    return current().timed(phase)
