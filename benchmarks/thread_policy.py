"""The thread policy in one process (issue 37): each workload timed with the policy, pinned to
one thread, and with every thread the runtimes allow (the runner's policy unset, as before
it existed), round by round, on the machine as it is and beside a spinning process.

``python -m benchmarks.thread_policy [ROUNDS] [WORKLOAD ...]``; the workloads are keys of
``benchmarks.workloads`` (W2, W3, W8) or ``map+gemm`` (a 2^22-element float64 map above the
threads threshold and a 704^3 float32 product above runner_gemm.h's SPLIT_MIN: the loaded
test's function, tests/backends/c/test_threads.py). Prints medians and minimums in ms.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time

import numpy as np

import symnb as sn
from benchmarks import load, workloads
from benchmarks.peers.symnb_peer import Peer
from symnb.backends.c import runner, threads

MODES = ("policy", "one thread", "all threads")


def map_and_gemm():
    """The loaded test's call: a threaded map and a split product."""
    x = sn.vector("x", dtype="float64")
    a, b = sn.matrix("a", dtype="float32"), sn.matrix("b", dtype="float32")
    f = sn.function([x, a, b], [sn.exp(x) * 2.0 + 1.0, sn.dot(a, b)], backend="c")
    rng = np.random.default_rng(0)
    args = (
        rng.random(1 << 22),
        rng.random((704, 704), dtype=np.float32),
        rng.random((704, 704), dtype=np.float32),
    )
    return lambda: f(*args)


def workload(key: str):
    if key == "map+gemm":
        return map_and_gemm()
    w = workloads.BY_KEY[key]
    return getattr(Peer("c"), "build_" + w.builder.lower().replace("-", "_"))(
        workloads.make_inputs(w, "full")
    )


def mode(name: str) -> None:
    sn.config.threads = 1 if name == "one thread" else None  # (re)registers the policy
    if name == "all threads":
        runner.module().set_team_policy(None)  # every thread OMP_NUM_THREADS and the BLAS allow


def rounds_of(run, rounds: int) -> dict:
    times = {m: [] for m in MODES}
    order = random.Random(0)
    for _ in range(rounds):
        # in a shuffled order, after a random pause: on a loaded machine other processes'
        # time slices recur, and a fixed order can meet them in the same mode every round
        for m in order.sample(MODES, len(MODES)):
            time.sleep(order.random() * 0.005)
            mode(m)
            run()  # the first call in a mode after another: not timed
            start = time.perf_counter()
            run()
            times[m].append(time.perf_counter() - start)
    mode("policy")
    return {m: (statistics.median(t) * 1e3, min(t) * 1e3) for m, t in times.items()}


def main(argv: list[str]) -> None:
    rounds = int(argv[0]) if argv and argv[0].isdigit() else 11
    keys = [a for a in argv if not a.isdigit()] or ["map+gemm", "W2", "W3", "W8"]
    print(f"{threads.allowed_cores()} cores; medians, minimums in ms; {rounds} rounds")
    for key in keys:
        run = workload(key)
        run()
        for condition in (load.IDLE, load.LOADED):
            with load.condition(condition):
                time.sleep(2 * threads.INTERVAL_S)  # the policy sees the spinner
                loadavg = f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "?"
                result = rounds_of(run, rounds)
            cells = ", ".join(f"{m} {a:.2f} / {b:.2f}" for m, (a, b) in result.items())
            print(f"{key:9} {condition:6} load {loadavg}: {cells}")


if __name__ == "__main__":
    main(sys.argv[1:])
