"""How many threads a call of backend "c" may use: the thread policy.

A call's team is the smallest of ``sn.config.threads`` (when set: it pins the team), the cores
this process may run on (its affinity) and the cores other processes leave free now, and never
more than the OpenMP and BLAS runtimes allow (``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``,
threadpoolctl's limits). Work too small for threads stays on one thread whatever the team: the
kernels' size thresholds and runner_gemm.h's bands decide that, within the team.

runner.c asks ``team()`` at most every ``PEEK_S`` (runner_threads.h) and, for each call,
lowers the calling thread's OpenMP team (``omp_set_num_threads``, restored after the call),
which every parallel region of the kernels obeys, and the BLAS threads of its products. So
on a machine where another process holds a core, a call runs on the cores that are free
instead of waiting at every barrier for a thread that has no core (3-4x its one-thread time
before, docs/c_backend.md, "Threads").

How busy the machine is: on Linux, ``/proc/stat``'s busy time of all cores between two
samples, less this process's own CPU time over the same interval (its threads, spinning or
not, are not other work), and never more than the other tasks running at the sample's
instant (``/proc/loadavg``): an interval describes the past, and work that has stopped (a
process that just finished, its BLAS threads' 0.1 s of spinning after its last product)
takes no core now. The first sample, and macOS and the BSDs, read the load average
(``/proc/loadavg``: no more than the tasks running at that instant; ``os.getloadavg``);
Windows has neither and counts every core as free. The samples are cheap (one read of
``/proc/stat`` and one of ``/proc/loadavg``, about 30 us) and rate-limited, never one per
call: every ``INTERVAL_S`` while the whole team is free, every ``RECHECK_S`` while it is
smaller. A smaller team also peeks at the tasks running now every ``PEEK_S`` (one read of
``/proc/loadavg``), which can only lower the count: a core given back (another process's
OpenMP threads spin a few milliseconds after its parallel region, OpenBLAS's 0.1 s after its
product) is used again within ``PEEK_S``.

``openmp_environment()`` gives the OpenMP runtime a passive wait policy with a short spin when
symnb loads it (its idle workers sleep instead of spinning on a core another process or
OpenBLAS needs, yet stay awake through the short serial gaps between one call's parallel
regions), without leaving the setting in the user's environment.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable

from symnb.config import config
from symnb.core import locks

#: how often the policy samples the machine while every allowed core is free
INTERVAL_S = 0.15
#: how often while other work leaves fewer: contention that ends gives its core back sooner
RECHECK_S = 0.05
#: how often a smaller team looks at the tasks running now (runner.c asks no more often)
PEEK_S = 0.01
#: a sample after calls this far apart that sees other tasks running looks again every
#: ``SETTLE_STEP_S``, at most ``SETTLE_LOOKS`` times, until none runs: the process that woke
#: this one (a parent sending it work, Jupyter's server sending a cell) still runs for up to
#: about 0.5 ms after it (measured on the 2-core machine), and taking it for other work put
#: the first call after every pause on one thread. One look 1 ms later cost that call 1.2 ms
#: (W3's first call after a pause 7.67 ms, 6.42 with an immediate look; docs/benchmarks.md)
LONG_S = 0.3
SETTLE_STEP_S = 0.0001
SETTLE_LOOKS = 8
#: no look is needed where the interval saw work all along as large as what runs now, less
#: this (a process spinning on a core shows as 0.9-1.0 core): that work is still there, and
#: looking cost every first call after a pause on a busy machine the looks' 1.2 ms. Nor
#: where the answer cannot change: other work of half a core or less leaves every core free
STEADY_MARGIN = 0.25
#: a /proc/stat delta over more than this (calls far apart) says little about now: the load
#: average stands in for that sample, and the next one measures from it
STALE_S = 1.0
#: what libgomp and LLVM's libomp read when they are loaded; set when the user has not. A
#: passive worker sleeps as soon as a region ends, and on a virtual machine a core left idle
#: for a while wakes slowly: with no spin, the first call after a pause woke it at every
#: region (a conv training step's first call 15-20% slower, docs/benchmarks.md, "Wait
#: policy"). libgomp's spin count bridges the gaps between a call's regions (3000 pauses,
#: 30-150 us by CPU) and still sleeps long before another process needs the core. libomp
#: keeps its own passive wait (its first calls showed no such cost; KMP_BLOCKTIME counts ms)
WAIT_SETTINGS = {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": "3000"}
#: any of these set by the user is their choice of how the runtimes wait: symnb adds nothing
USER_WAIT_SETTINGS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")

_lock = locks.lock()  # unlocked in a forked child (core/locks.py)
#: the load average where the platform has one (macOS, the BSDs, Linux; not Windows)
GETLOADAVG = getattr(os, "getloadavg", None)


def free_cores(allowed: int, total: int, busy: float) -> int:
    """Of the ``allowed`` cores (this process's affinity) among ``total``, those that ``busy``
    cores' worth of other processes' work leaves idle, at least one. Other work is counted
    against the allowed cores only where the other cores cannot hold it (2 busy of 16 leave
    2 allowed cores free; on 2 cores, 0.6 busy or more leaves 1: a thread sharing its core
    with another process runs at half speed, and a parallel region waits for its slowest
    thread)."""
    idle = int(total - max(busy, 0.0) + 0.5)
    return max(1, min(allowed, idle))


def allowed_cores() -> int:
    """The cores this process may run on: its affinity (Linux), else every core."""
    cpus = affinity()
    if cpus:
        return len(cpus)
    return getattr(os, "process_cpu_count", os.cpu_count)() or 1


def affinity() -> frozenset[int] | None:
    """The numbers of the cores this process may run on (Linux), else None."""
    try:
        return frozenset(os.sched_getaffinity(0)) or None
    except (AttributeError, OSError):  # macOS, Windows: no affinity mask to read
        return None


def read_text(path: str) -> str | None:
    """A small file's text (``/proc/stat``, ``/proc/loadavg``), None where it is absent."""
    try:
        with open(path) as f:
            return f.read(1 << 16)
    except OSError:
        return None


def stat_jiffies(text: str | None, cpus: frozenset[int] | None) -> tuple[int, int, int] | None:
    """(busy, total, cores) clock ticks from ``/proc/stat``, summed over the lines of the
    cores in ``cpus`` (all of them, the first line, when None): busy is everything but idle
    and iowait (guest time is already inside user time)."""
    busy = total = cores = 0
    for line in (text or "").splitlines():
        if not line.startswith("cpu"):
            break
        name, *values = line.split()
        if (name != "cpu") if cpus is None else (name[3:] == "" or int(name[3:]) not in cpus):
            continue
        try:
            fields = [int(v) for v in values[:8]]
        except ValueError:
            return None
        if len(fields) < 4:
            return None
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
        busy, total = busy + sum(fields) - idle, total + sum(fields)
        cores += 1 if cpus is not None else os.cpu_count() or 1
    return (busy, total, cores) if cores else None


def running_now(loadavg_text: str | None) -> float:
    """The other tasks running at this instant (``/proc/loadavg``'s runnable count less the
    thread reading it; this process's other threads, if running, count too: an upper bound),
    infinity where it cannot be read."""
    fields = (loadavg_text or "").split()
    try:
        return max(0.0, float(int(fields[3].split("/")[0]) - 1))
    except (IndexError, ValueError):
        return float("inf")


def load_average(loadavg_text: str | None, getloadavg: Callable | None) -> float:
    """Other processes' busy cores from the load average: ``/proc/loadavg``'s one-minute load
    but no more than the tasks running at that instant less this one (so neither a moment's
    spike nor this process's own last minute counts); else ``os.getloadavg()``; else 0."""
    fields = (loadavg_text or "").split()
    try:
        return max(0.0, min(float(fields[0]), running_now(loadavg_text)))
    except (IndexError, ValueError):
        pass
    try:
        return max(0.0, getloadavg()[0]) if getloadavg is not None else 0.0
    except OSError:
        return 0.0


class Sampler:
    """How busy other processes keep the cores, sampled at most every ``RECHECK_S``. The
    sources are arguments so tests can stand in for Linux, macOS and Windows.

    ``busy`` is other processes' busy cores among ``scope`` cores: on Linux, among the cores
    of this process's affinity (``/proc/stat``'s line of each, less this process's own CPU
    time, which runs only there); from a load average, among every core of the machine."""

    def __init__(
        self,
        read: Callable[[str], str | None] = read_text,
        getloadavg: Callable | None = GETLOADAVG,
        clock: Callable[[], float] = time.monotonic,
        own_cpu: Callable[[], float] = time.process_time,
        cpus: Callable[[], frozenset[int] | None] = affinity,
        total: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.read, self.getloadavg, self.clock, self.own_cpu = read, getloadavg, clock, own_cpu
        self.sleep = sleep
        self.cpus = cpus
        self.total = total or os.cpu_count() or 1
        self.when: float | None = None  # the last sample's time
        self.ticks: tuple | None = None  # (busy, total, cores, cpus) of /proc/stat then
        self.cpu = 0.0  # this process's CPU seconds then
        self.busy, self.scope = 0.0, self.total
        self.interval = INTERVAL_S  # until the next sample (see ``free``)
        self.peeked = 0.0  # when the tasks running were last looked at
        self.samples = 0

    def free(self, allowed: int) -> int:
        """The free cores of the ``allowed`` ones, sampled again when ``INTERVAL_S`` has
        passed (``RECHECK_S`` when the last answer was fewer than ``allowed``, which also
        looks at the tasks running now every ``PEEK_S``)."""
        now = self.clock()
        if self.when is None or now - self.when >= self.interval:
            self.sample(now)
            self.peeked = now
        elif self.interval == RECHECK_S and now - self.peeked >= PEEK_S and self.ticks:
            self.peeked = now  # (only where /proc/stat is read: the running count is Linux's)
            self.busy = min(self.busy, running_now(self.read("/proc/loadavg")))
        free = free_cores(allowed, self.scope, self.busy)
        self.interval = INTERVAL_S if free >= allowed else RECHECK_S
        return free

    def sample(self, now: float) -> None:
        cpus, cpu = self.cpus(), self.own_cpu()
        ticks = stat_jiffies(self.read("/proc/stat"), cpus)
        ticks = None if ticks is None else (*ticks, cpus)
        loadavg = self.read("/proc/loadavg")
        running = running_now(loadavg)
        before, wall = self.ticks, now - (self.when or now)
        fresh = before is not None and before[3] == cpus and 0 < wall <= STALE_S
        if ticks is not None and fresh:
            busy, total = ticks[0] - before[0], ticks[1] - before[1]
            if total <= 0:
                return
            own = (cpu - self.cpu) / wall  # this process's cores' worth over the interval
            others = max(0.0, busy / total * ticks[2] - own)
            self.busy, self.scope = min(others, running), ticks[2]
            steady, after_pause = others, wall > LONG_S
        else:  # the first sample, or no /proc/stat
            self.busy, self.scope = load_average(loadavg, self.getloadavg), self.total
            steady, after_pause = 0.0, True
        if after_pause and self.busy > 0.5 and steady < running - STEADY_MARGIN:
            self.busy = self.settle(self.busy, steady)  # a task that woke this process
        self.when, self.ticks, self.cpu = now, ticks, cpu
        self.samples += 1

    def settle(self, busy: float, steady: float) -> float:
        """``busy``, lowered by looks at the tasks running now, ``SETTLE_STEP_S`` apart, that
        stop as soon as no more run than the ``steady`` work the interval saw all along (the
        task that woke this process has blocked again)."""
        for _ in range(SETTLE_LOOKS):
            self.sleep(SETTLE_STEP_S)
            running = running_now(self.read("/proc/loadavg"))
            busy = min(busy, running)
            if running <= steady + STEADY_MARGIN:
                break
        return busy


_sampler = Sampler()


def team(sampler: Sampler | None = None) -> int:
    """The team of a call now: ``sn.config.threads`` when set, else the free cores."""
    pinned = config.threads
    if pinned is not None:
        return pinned
    sampler = sampler or _sampler
    with _lock:
        return sampler.free(allowed_cores())


@contextlib.contextmanager
def openmp_environment():
    """While symnb loads a library that may bring in the OpenMP runtime (the runner, a kernel
    library), ``WAIT_SETTINGS`` unless the user chose how the runtimes wait: the runtime reads
    them once, when it is loaded, and its idle workers then sleep after a short spin instead
    of spinning on a core another process (or OpenBLAS's threads) needs. The environment is
    restored afterwards: the user's own subprocesses and libraries see it as it was. A
    runtime another library loaded first keeps the settings it read then."""
    chosen = any(name in os.environ for name in USER_WAIT_SETTINGS)
    added = {} if chosen else dict(WAIT_SETTINGS)
    os.environ.update(added)
    try:
        yield
    finally:
        for name, value in added.items():
            if os.environ.get(name) == value:
                del os.environ[name]
