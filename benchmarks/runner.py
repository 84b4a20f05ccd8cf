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

REPO = Path(__file__).resolve().parent.parent
SETUP_TIMEOUT_S = 420  # torch.compile's first compile of a training step can take minutes here
TIME_TIMEOUT_S = 120
# Idle gap before each sample: thread pools that spin after their work (OpenMP, Eigen) go to
# sleep before the next peer runs, instead of taking one of the two cores from it.
PAUSE_S = 0.02


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

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None


class WorkerProcess:
    """A ``benchmarks.worker`` subprocess answering one JSON request at a time."""

    def __init__(self, peer: str, log):
        self.peer = peer
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.worker", peer],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
            text=True, cwd=REPO, env=_worker_env(),
        )  # fmt: skip

    def ask(self, cmd: str, timeout: float, **args) -> dict:
        if self.proc.poll() is not None:
            return {"status": "error", "note": f"worker exited with code {self.proc.returncode}"}
        self.proc.stdin.write(json.dumps({"cmd": cmd, "args": args}) + "\n")
        self.proc.stdin.flush()
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


def _worker_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def start_workers(peer_names: list[str], log) -> tuple[dict, dict]:
    """Start every worker, then greet them: (live workers by peer, versions or absence notes)."""
    started = {name: WorkerProcess(name, log) for name in peer_names}
    live, hello = {}, {}
    for name, worker in started.items():
        reply = worker.ask("hello", SETUP_TIMEOUT_S)
        hello[name] = reply
        if reply["status"] == "ok":
            live[name] = worker
        else:
            worker.close()
    return live, hello


def run_workload(workload, workers: dict, mode: str, rounds: int, target_s: float, say):
    """Prepare the workload in every worker, then time it over ``rounds`` alternating rounds."""
    results, ready = {}, []
    for name, worker in workers.items():
        say(f"  {workload.key}: preparing {name}")
        reply = worker.ask("setup", SETUP_TIMEOUT_S, workload=workload.key, mode=mode,
                           target_s=target_s)  # fmt: skip
        results[name] = Result(workload.key, name, reply["status"], reply.get("note", ""))
        if reply["status"] == "ok":
            results[name].calls_per_sample = reply["calls"]
            results[name].extra["first_call_s"] = reply["first_call_s"]
            ready.append(name)
    for index in range(rounds):
        order = ready[index % len(ready) :] + ready[: index % len(ready)] if ready else []
        for name in order:
            _sample(workers[name], results[name])
    for name in ready:
        workers[name].ask("release", TIME_TIMEOUT_S)
    return list(results.values())


def _sample(worker: WorkerProcess, result: Result) -> None:
    if result.status != "ok":
        return
    time.sleep(PAUSE_S)
    reply = worker.ask("time", TIME_TIMEOUT_S, samples=1)
    if reply["status"] == "ok":
        result.samples.extend(reply["seconds"])
    else:
        result.status, result.note, result.samples = "error", reply.get("note", ""), []
