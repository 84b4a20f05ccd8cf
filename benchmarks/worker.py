"""``python -m benchmarks.worker PEER``: one peer in its own process, driven over a pipe.

Requests and replies are JSON objects, one per line, on stdin and on the original stdout;
everything the libraries print goes to stderr so it cannot corrupt the protocol.
Commands: hello, setup (build, check against the float64 reference, warm up), check (the same
without warming up), time, profile, release.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback

from benchmarks import load, peers, profiling, timing
from benchmarks.check import Skip, problem_with
from benchmarks.workloads import BY_KEY, comparable, copy_inputs, make_inputs, reference


class Worker:
    """Holds one peer and at most one prepared workload."""

    def __init__(self, peer_name: str):
        self.peer_name = peer_name
        self.peer = None
        self.run = None
        self.calls = 1
        self.kept = timing.Kept()

    def handle(self, request: dict) -> dict:
        command = getattr(self, "cmd_" + request.get("cmd", ""), None)
        if command is None:
            return {"status": "error", "note": f"unknown command {request.get('cmd')!r}"}
        try:
            return command(**request.get("args", {}))
        except Skip as exc:
            return {"status": "skipped", "note": str(exc)}
        except Exception as exc:  # reported, not fatal: the next workload still runs
            traceback.print_exc()
            return {"status": "error", "note": _one_line(exc)}

    def cmd_hello(self) -> dict:
        try:
            self.peer = peers.load(self.peer_name)
            version = self.peer.version()  # a device backend may find no device here
        except ImportError as exc:
            return {"status": "absent", "note": f"cannot be imported ({_one_line(exc)})"}
        return {"status": "ok", "version": version, "threads": _threads()}

    def cmd_setup(self, workload: str, mode: str, target_s: float) -> dict:
        self.run, self.kept = None, timing.Kept()
        run, reply = self._checked(workload, mode)
        if reply["status"] != "ok":
            return reply
        per_call = timing.warm_up(run, self.kept)
        self.run, self.calls = run, timing.calls_per_sample(per_call, target_s)
        return reply | {"calls": self.calls, "sample_s": per_call * self.calls}

    def cmd_check(self, workload: str, mode: str) -> dict:
        """Build, call once and check against the reference, without preparing to time."""
        return self._checked(workload, mode)[1]

    def _checked(self, workload: str, mode: str):
        """(the built callable, the reply): dtypes and values checked after the first call."""
        spec = BY_KEY[workload]
        inputs = make_inputs(spec, mode)
        expected = comparable(spec, inputs, reference(spec, inputs))
        start = time.perf_counter()
        run = self.peer.build(spec.builder, copy_inputs(inputs))
        outputs = self.peer.to_numpy(run())
        first_s = time.perf_counter() - start
        problem = problem_with(outputs, comparable(spec, inputs, outputs), expected, spec.dtype)
        if problem:
            return run, {"status": "WRONG", "note": problem}
        return run, {"status": "ok", "first_call_s": first_s, "note": self.peer.setup_note()}

    def cmd_time(self, samples: int = 1) -> dict:
        if self.run is None:
            return {"status": "error", "note": "no workload prepared"}
        seconds = [timing.batch_seconds(self.run, self.calls, self.kept) for _ in range(samples)]
        return {"status": "ok", "seconds": seconds}

    def cmd_profile(self) -> dict:
        if self.run is None:
            return {"status": "error", "note": "no workload prepared"}
        steps = profiling.own_profile(self.run)
        calls = profiling.profile_calls(self.run, self.calls)
        return {"status": "ok", "profile": f"{steps}\n\n{calls}" if steps else calls}

    def cmd_release(self) -> dict:
        self.run, self.kept = None, timing.Kept()
        return {"status": "ok"}


def _threads() -> dict:
    """What this worker may use: its cores (affinity) and the OpenMP thread count asked for."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    return {"cores": cores, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "")}


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def serve(peer_name: str, requests, replies) -> None:
    """Answer requests until ``quit`` or end of input."""
    worker = Worker(peer_name)
    for line in requests:
        request = json.loads(line)
        if request.get("cmd") == "quit":
            break
        replies.write(json.dumps(worker.handle(request)) + "\n")
        replies.flush()


def main(argv: list[str]) -> None:
    load.pin_from_env()  # a one-thread twin: before any library sizes its thread pool
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # library output (C level too) goes to stderr, not into the protocol
    sys.stdout = sys.stderr
    serve(argv[0], sys.stdin, replies)


if __name__ == "__main__":
    main(sys.argv[1:])
