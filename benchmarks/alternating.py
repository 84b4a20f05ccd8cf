"""The thread policy between rounds of another process (issue 37): two worker processes run
one workload in turn, as the harness's peers do and as two notebooks on one laptop do; one
with the policy, one pinned to every core (``sn.config.threads``). The other's threads may
still hold a core when a round starts (OpenBLAS's idle threads spin about 0.1 s after a
product), so the policy's worker should go to one thread then, and back to all of them as
soon as that core is free: it prints each worker's median and minimum call and the share of
the policy's calls that ran on one thread.

``python -m benchmarks.alternating [ROUNDS] [ROUND_S] [WORKLOAD]``: WORKLOAD is a key of
``benchmarks.workloads`` or ``map+gemm`` (benchmarks/thread_policy.py), W3 by default.
"""

from __future__ import annotations

import multiprocessing
import statistics
import sys
import time

from benchmarks import thread_policy


def worker(conn, key: str, pinned: bool, round_s: float) -> None:
    """Runs rounds when told: (call seconds, share of calls whose team was one thread)."""
    import symnb as sn
    from symnb.backends.c import threads

    cores = threads.allowed_cores()
    if pinned:
        sn.config.threads = cores
    run = thread_policy.workload(key)
    for _ in range(3):
        run()
    conn.send("ready")
    while conn.recv() == "round":
        seconds, teams = [], []
        end = time.perf_counter() + round_s
        while time.perf_counter() < end:
            start = time.perf_counter()
            run()
            seconds.append(time.perf_counter() - start)
            teams.append(threads.team())
        conn.send((seconds, sum(t == 1 for t in teams) / len(teams)))


def main(argv: list[str]) -> None:
    rounds = int(argv[0]) if argv else 10
    round_s = float(argv[1]) if len(argv) > 1 else 0.3
    key = argv[2] if len(argv) > 2 else "W3"
    context = multiprocessing.get_context("spawn")
    workers = {}
    for name, pinned in (("policy", False), ("pinned", True)):
        ours, theirs = context.Pipe()
        process = context.Process(target=worker, args=(theirs, key, pinned, round_s))
        process.start()
        workers[name] = (ours, process)
    for ours, _ in workers.values():
        assert ours.recv() == "ready"
    seconds = {name: [] for name in workers}
    one_thread = []
    for index in range(rounds):
        for name in list(workers)[:: 1 if index % 2 == 0 else -1]:
            workers[name][0].send("round")
            times, share = workers[name][0].recv()
            seconds[name] += times
            if name == "policy":
                one_thread.append(share)
    for ours, process in workers.values():
        ours.send("stop")
        process.join()
    print(f"{key}: {rounds} alternating rounds of {round_s} s")
    for name, times in seconds.items():
        print(
            f"  {name:7} median {statistics.median(times) * 1e3:.2f} ms, "
            f"min {min(times) * 1e3:.2f} ms, {len(times)} calls"
        )
    print(f"  calls of the policy's worker on one thread: {statistics.mean(one_thread):.0%}")


if __name__ == "__main__":
    main(sys.argv[1:])
