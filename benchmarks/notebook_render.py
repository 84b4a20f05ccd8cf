"""Time to draw large graphs (build the picture, collapse, DOT, Graphviz layout to SVG).

    python -m benchmarks.notebook_render

Each shape has about 2,000 nodes; the target is under 3 s each (issue 8). Renders are cached
by DOT text, so every timing clears the cache first.
"""

from __future__ import annotations

import time

import numpy as np

import symnb as sn
from symnb.viz import render
from symnb.viz.graphs import picture


def deep_chain(n=1000):
    """tanh(h * 1.01) applied 1,000 times: 2,000 op nodes in one line of code."""
    h = sn.tensor("h", shape=(16,))
    for _ in range(n):
        h = sn.tanh(h * 1.01)
    return h


def parallel_chains(width=20, depth=50):
    """20 independent 50-layer chains summed: repeated structure side by side."""
    outs = []
    for i in range(width):
        h = sn.tensor(f"x{i}", shape=(8,))
        for _ in range(depth):
            h = sn.tanh(h * 1.5)
        outs.append(h)
    total = outs[0]
    for o in outs[1:]:
        total = total + o
    return total


def mlp_with_gradient(layers=220):
    """A 220-layer MLP's loss and its gradient (forward + backward nodes, shared weights)."""
    x = sn.tensor("x", shape=("batch", 16))
    h, weights = x, []
    for i in range(layers):
        W = sn.shared(np.eye(16) * 0.5, name=f"W{i}")
        weights.append(W)
        h = sn.tanh(h @ W)
    loss = sn.mean(h**2)
    return [loss, *sn.grad(loss, weights)]


def random_dag(n=1000, seed=0):
    """Each step adds the last node and a random earlier one: little repeated structure."""
    rng = np.random.default_rng(seed)
    nodes = [sn.tensor(f"in{i}", shape=(4,)) for i in range(8)]
    for _ in range(n):
        earlier = nodes[rng.integers(0, len(nodes))]
        nodes.append(sn.tanh(nodes[-1] + earlier))
    return nodes[-1]


def time_render(outputs) -> tuple[int, float]:
    """(boxes drawn, seconds) for one cold render."""
    render.render_svg.cache_clear()
    start = time.perf_counter()
    pic = picture(outputs)
    pic.svg()
    return len(pic.view.nodes), time.perf_counter() - start


def count_nodes(outputs) -> int:
    from symnb.core.graph import ancestors

    return len(ancestors(outputs if isinstance(outputs, list) else [outputs]))


def main() -> None:
    print(f"renderer: {render.renderer_name()}")
    for build in (deep_chain, parallel_chains, mlp_with_gradient, random_dag):
        outputs = build()
        boxes, seconds = time_render(outputs)
        print(
            f"{build.__name__:<20} {count_nodes(outputs):>6} nodes -> {boxes:>4} boxes  "
            f"{seconds:6.2f} s"
        )


if __name__ == "__main__":
    main()
