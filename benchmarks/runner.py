"""Drives one worker process per peer through the timed workloads, alternating peers by round."""

from __future__ import annotations

import json
import os
import select
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import load, peers

REPO = Path(__file__).resolve().parent.parent
SETUP_TIMEOUT_S = 420  # torch.compile's first compile of a training step can take minutes here
TIME_TIMEOUT_S = 120
# Idle gap before each sample: thread pools that spin after their work go to sleep before the
# next peer runs, instead of taking one of the two cores from it. OpenBLAS's idle threads spin
# for about 0.1 s after a call (2^28 cycles); with a 0.02 s gap, the W3 training step of
# whichever peer ran right after a BLAS-heavy one measured up to 2x slower (symnb-c after
# symnb-py: 7.4-9.7 ms, and 4.5-5.9 ms with 0.3 s), so the gap is 0.3 s for every peer.
PAUSE_S = 0.3
MIN_ROUNDS = 3  # a row whose samples are slow stops after this many rounds (see rounds_for)


@dataclass(frozen=True)
class Pace:
    """How long to time: ``rounds`` alternating rounds of samples lasting about ``sample_s``,
    a slow row stopping once its samples pass ``budget_s`` (after at least MIN_ROUNDS)."""

    rounds: int
    sample_s: float
    budget_s: float


@dataclass
class Result:
    """One (workload, peer) cell of the table."""

    workload: str
    peer: str
    status: str  # ok, skipped, WRONG, error, absent, floor
    note: str = ""
    samples: list = field(default_factory=list)
    calls_per_sample: int = 0
    extra: dict = field(default_factory=dict)
    condition: str = ""  # "" (a plain run), or the loaded mode's "idle" / "loaded"

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    @property
    def min_s(self) -> float | None:
        return min(self.samples) if self.samples else None

    @property
    def group(self) -> str:
        """The table's row label: the workload, with the condition where there is one."""
        return f"{self.workload} ({self.condition})" if self.condition else self.workload


class WorkerProcess:
    """A ``benchmarks.worker`` subprocess answering one JSON request at a time."""

    def __init__(self, peer: str, log, base=None):
        self.peer = peer
        env, cwd = worker_env(), REPO
        if peers.is_baseline(peer):
            if base is None:
                raise ValueError(f"peer {peer!r} needs --baseline REV (the tree to run)")
            env, cwd = base.env(env), base.path
        if peers.is_one_thread(peer):
            env = load.one_thread_env(env, load.one_thread_core())
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.worker", peer],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            cwd=cwd,
            env=env,
        )

    def ask(self, cmd: str, timeout: float, **args) -> dict:
        if self.proc.poll() is not None:
            return {"status": "error", "note": f"worker exited with code {self.proc.returncode}"}
        try:
            self.proc.stdin.write(json.dumps({"cmd": cmd, "args": args}) + "\n")
            self.proc.stdin.flush()
        except OSError:  # it died between the poll and the write
            self.close()
            return {"status": "error", "note": f"worker died before {cmd} (see the worker log)"}
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.close()
            why = "timed out" if not ready else "died"
            return {"status": "error", "note": f"worker {why} during {cmd} (see the worker log)"}
        return json.loads(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


def worker_env() -> dict:
    """The environment of every child process: this repository importable first."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def start_workers(peer_names: list[str], log, base=None) -> tuple[dict, dict]:
    """Start every worker, then greet them: (live workers by peer, versions or absence notes).
    ``base`` is the ``--baseline`` tree (benchmarks/baseline.py) the ``symnb-base`` worker
    imports symnb from."""
    started, live, hello = {}, {}, {}
    try:
        for name in peer_names:
            started[name] = WorkerProcess(name, log, base)
        for name, worker in started.items():
            reply = worker.ask("hello", SETUP_TIMEOUT_S)
            hello[name] = reply
            if reply["status"] == "ok":
                live[name] = worker
            else:
                worker.close()
    except BaseException:  # Ctrl-C while starting: no worker left behind
        for worker in started.values():
            worker.close()
        raise
    return live, hello


def rounds_for(sample_s: float, rounds: int, budget_s: float) -> int:
    """Rounds a row takes part in: all of them if its samples fit in ``budget_s``, else as many
    as fit, but at least ``MIN_ROUNDS``."""
    fitting = int(budget_s / max(sample_s, 1e-9))
    return max(min(rounds, MIN_ROUNDS), min(rounds, fitting))


def run_workload(workload, workers: dict, mode: str, pace, say, conditions=("",)):
    """Prepare the workload in every worker, then time it over alternating rounds, once per
    condition (the loaded mode's ``idle`` and ``loaded``: benchmarks/load.py)."""
    replies, ready, wanted = {}, [], {}
    for name, worker in workers.items():
        say(f"  {workload.key}: preparing {name}")
        reply = worker.ask(
            "setup", SETUP_TIMEOUT_S, workload=workload.key, mode=mode, target_s=pace.sample_s
        )
        replies[name] = reply
        if reply["status"] == "ok":
            wanted[name] = rounds_for(reply["sample_s"], pace.rounds, pace.budget_s)
            ready.append(name)
    rows = []
    for condition in conditions:
        results = {
            name: _row(workload.key, name, reply, condition) for name, reply in replies.items()
        }
        with load.condition(condition, say) as background:
            for index in range(pace.rounds):
                order = ready[index % len(ready) :] + ready[: index % len(ready)] if ready else []
                for name in order:
                    if index < wanted[name]:
                        _sample(workers[name], results[name])
            timed = [results[name] for name in ready]
            if condition == conditions[0]:
                _profile_symnb(workers, timed, always=workload.profiled)
            for row in timed:
                row.extra.update({"background": background} if background else {})
            rows += with_load([r for r in results.values() if not _variant_without_version(r)])
    for name in ready:
        workers[name].ask("release", TIME_TIMEOUT_S)
    return rows


def _row(key: str, name: str, reply: dict, condition: str) -> Result:
    row = Result(key, name, reply["status"], reply.get("note", ""), condition=condition)
    if reply["status"] == "ok":
        row.calls_per_sample = reply["calls"]
        row.extra["first_call_s"] = reply["first_call_s"]
    return row


def with_load(results: list) -> list:
    """The rows, each with the machine's 1-minute load average as its workload ended."""
    average = os.getloadavg()[0]
    for result in results:
        result.extra["load"] = average
    return results


def _variant_without_version(result: Result) -> bool:
    """An ``out=`` row of a workload that has no ``out=`` version is left out of the table."""
    return peers.is_variant(result.peer) and result.status == "skipped"


def _profile_symnb(workers: dict, timed: list, always: bool = False) -> None:
    """A profile of symnb's best backend when a peer is faster (or ``always``, for the
    workloads whose targets name a profile): where its time goes."""
    valid = [r for r in timed if r.status == "ok" and r.samples]
    ours = [r for r in valid if peers.is_symnb(r.peer) and peers.is_headline(r.peer)]
    theirs = [r.median_s for r in valid if peers.is_headline(r.peer) and not peers.is_symnb(r.peer)]
    if not (ours and theirs):
        return
    best = min(ours, key=_median)
    if always or best.median_s > min(theirs):
        reply = workers[best.peer].ask("profile", TIME_TIMEOUT_S)
        best.extra["profile"] = reply.get("profile", reply.get("note", ""))


def _median(result: Result) -> float:
    return result.median_s


def _sample(worker: WorkerProcess, result: Result) -> None:
    if result.status != "ok":
        return
    time.sleep(PAUSE_S)
    reply = worker.ask("time", TIME_TIMEOUT_S, samples=1)
    if reply["status"] == "ok":
        result.samples.extend(reply["seconds"])
    else:
        result.status, result.note, result.samples = "error", reply.get("note", ""), []
