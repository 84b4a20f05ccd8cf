"""Rewrite time of a deep MLP training graph (forward + ``sn.grad`` + SGD updates).

``python -m benchmarks.rewrite_time [LAYERS ...]`` builds the training step of an MLP with
LAYERS tanh layers (50, 100 and 200 by default), runs every rewrite phase on it once, and
prints the graph's node count before and after, the seconds spent in each phase and in all
of them, and the time per 100 nodes (flat when the rewrites grow linearly with depth).
"""

from __future__ import annotations

import sys
import time

import numpy as np

import symnb as sn
from symnb.core.graph import Graph
from symnb.opt import PHASES, optimize

DEPTHS = (50, 100, 200)


def mlp_training_step(layers=2, width=16, n_in=8, n_out=3, lr=0.1, seed=0):
    """(inputs, loss, updates, params) of one SGD step of a tanh MLP with a softmax
    cross-entropy loss on integer labels."""
    rng = np.random.default_rng(seed)
    x = sn.tensor("x", shape=("batch", n_in))
    y = sn.tensor("y", shape=("batch",), dtype="int64")
    sizes = [n_in] + [width] * (layers - 1) + [n_out]
    params, h = [], x
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        W = sn.shared(rng.normal(scale=a**-0.5, size=(a, b)), name=f"W{i}")
        bias = sn.shared(np.zeros(b), name=f"b{i}")
        params += [W, bias]
        z = h @ W + bias
        h = sn.tanh(z) if i < len(sizes) - 2 else z
    loss = sn.mean(sn.crossentropy(sn.softmax(h, axis=1), y))
    grads = sn.grad(loss, params)
    updates = {p: p - lr * g for p, g in zip(params, grads)}
    return [x, y], loss, updates, params


def measure(layers: int) -> dict:
    """Node counts and rewrite seconds (per phase and total) for one depth."""
    inputs, loss, updates, _ = mlp_training_step(layers=layers)
    graph = Graph(inputs, [loss] + list(updates.values()))
    before = len(graph)
    start = time.perf_counter()
    history = optimize(graph, "fast", verify_each_phase=False)
    total = time.perf_counter() - start
    return {
        "layers": layers,
        "before": before,
        "after": len(graph),
        "firings": len(history),
        "phases": history.phase_times(),
        "total": total,
    }


def report(rows: list[dict]) -> str:
    head = f"{'layers':>6} {'nodes':>11} {'firings':>7} " + " ".join(f"{p[:8]:>8}" for p in PHASES)
    lines = [head + f" {'total s':>8} {'ms/100n':>8}"]
    for r in rows:
        phases = " ".join(f"{r['phases'].get(p, 0.0):8.3f}" for p in PHASES)
        nodes = f"{r['before']}->{r['after']}"
        per = 1e5 * r["total"] / r["before"]
        lines.append(
            f"{r['layers']:>6} {nodes:>11} {r['firings']:>7} {phases} {r['total']:8.3f} {per:8.2f}"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    depths = [int(a) for a in (argv if argv is not None else sys.argv[1:])] or DEPTHS
    print(report([measure(n) for n in depths]))


if __name__ == "__main__":
    main()
