"""Two peers in one process, a workload's step of each in turn: their ratio on a shared, noisy
machine, where two runs of `make bench` minutes apart can disagree by a fifth (each worker
process of the main suite sees the load of its own moment).

    python -m benchmarks.side_by_side W8b symnb-c torch [--steps 30] [--sets 3]

Each set times ``steps`` steps of each peer, alternating step by step after five warm-up
steps, and prints both medians, their ratio and both minimums. Both peers' thread pools live
in the process; neither is idle while the other runs long enough to sleep, which is how a
user's loop that calls one library runs, but not how `make bench` times them.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks import workloads
from benchmarks.peers import load


def steps_of(peer: str, workload) -> object:
    return load(peer).build(workload.builder, workloads.make_inputs(workload, "full"))


def one_set(first, second, steps: int) -> tuple[np.ndarray, np.ndarray]:
    for _ in range(5):
        first(), second()
    a, b = [], []
    for _ in range(steps):
        start = time.perf_counter()
        first()
        middle = time.perf_counter()
        second()
        a.append(middle - start)
        b.append(time.perf_counter() - middle)
    return np.array(a), np.array(b)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload")
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--sets", type=int, default=3)
    args = parser.parse_args(argv)
    known = {w.key: w for w in workloads.WORKLOADS}
    if args.workload not in known:
        parser.error(f"unknown workload {args.workload!r}; known: {', '.join(known)}")
    workload = known[args.workload]
    first, second = steps_of(args.first, workload), steps_of(args.second, workload)
    for _ in range(args.sets):
        a, b = one_set(first, second, args.steps)
        ratio = np.median(a) / np.median(b)
        print(
            f"{args.workload}: {args.first} {np.median(a) * 1e3:.2f} ms, {args.second} "
            f"{np.median(b) * 1e3:.2f} ms, ratio {ratio:.2f}; minimums "
            f"{a.min() * 1e3:.2f} / {b.min() * 1e3:.2f} ms"
        )


if __name__ == "__main__":
    main()
