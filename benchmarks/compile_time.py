"""W5: time to first result of the W3 training step in a new process, cold and warm cache.

``python -m benchmarks.compile_time PEER CACHE_DIR`` is one probe: it loads the peer (imports
are not timed), points its compile cache at CACHE_DIR, then times building the step and its
first call (tracing, differentiation, rewrites, code generation, compilation and one step),
checks the result against the float64 reference, and prints one JSON line. The reference is
computed after the timed part: its float64 BLAS calls leave OpenBLAS threads spinning for a
while, which on two cores took CPU from the compiler (about 0.07 s more CPU in the timed part,
and a slower first call, measured with symnb-c). Cold: a new empty CACHE_DIR. Warm: a new process
on the directory a cold probe filled.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from benchmarks import peers
from benchmarks.check import Skip, compare
from benchmarks.runner import REPO, Result, worker_env
from benchmarks.workloads import BY_KEY, comparable, make_inputs, reference

COMPILING = {"pytensor", "jax", "torch.compile"}  # peers with a compile step (plus symnb's)
SYMNB_REPEATS = 3  # symnb's backends get the median of three pairs (full mode), peers one pair
PROBE_TIMEOUT_S = 420


def probe(peer_name: str, cache_dir: str, mode: str) -> dict:
    """Build and run the W3 step once, timed; the reply the parent reads."""
    peer = peers.load(peer_name)
    peer.configure_cache(cache_dir)
    peer.start_runtime()
    spec = BY_KEY["W5"]
    inputs = make_inputs(spec, mode)
    start = time.perf_counter()
    try:
        outputs = peer.build(spec.builder, {k: v.copy() for k, v in inputs.items()})()
    except Skip as exc:
        return {"status": "skipped", "note": str(exc)}
    seconds = time.perf_counter() - start
    expected = comparable(spec, inputs, reference(spec, inputs))  # untimed: see the docstring
    problem = compare(comparable(spec, inputs, peer.to_numpy(outputs)), expected, spec.dtype)
    if problem:
        return {"status": "WRONG", "note": problem}
    return {"status": "ok", "seconds": seconds}


def measure(peer_names: list[str], mode: str, say) -> list[Result]:
    """Cold and warm rows for every peer that compiles."""
    results = []
    for name in peer_names:
        if not (peers.is_symnb(name) or name in COMPILING):
            continue
        repeats = SYMNB_REPEATS if mode == "full" and peers.is_symnb(name) else 1
        say(f"  W5: {name}, {repeats} cold + {repeats} warm new processes")
        results += _cold_and_warm(name, mode, repeats)
    return results


def _cold_and_warm(name: str, mode: str, repeats: int) -> list[Result]:
    cold, warm = Result("W5-cold", name, "ok"), Result("W5-warm", name, "ok")
    with tempfile.TemporaryDirectory(prefix="symnb-bench-cache-") as root:
        for index in range(repeats):
            cache = os.path.join(root, str(index))
            os.makedirs(cache)
            _record(cold, _spawn(name, cache, mode))
            _record(warm, _spawn(name, cache, mode))
    return [cold, warm]


def _record(result: Result, reply: dict) -> None:
    if result.status != "ok":
        return
    if reply["status"] == "ok":
        result.samples.append(reply["seconds"])
        result.calls_per_sample = 1
    else:
        result.status, result.note, result.samples = reply["status"], reply.get("note", ""), []


def _spawn(name: str, cache: str, mode: str) -> dict:
    env = worker_env() | peers.cache_env(name, cache)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.compile_time", name, cache, mode],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"status": "error", "note": f"probe took over {PROBE_TIMEOUT_S} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"status": "error", "note": f"probe failed: {tail[:300]}"}
    return json.loads(lines[-1])


def main(argv: list[str]) -> None:
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # library output goes to stderr; stdout carries the one JSON line
    sys.stdout = sys.stderr
    reply = probe(argv[0], argv[1], argv[2])
    replies.write(json.dumps(reply) + "\n")
    replies.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
