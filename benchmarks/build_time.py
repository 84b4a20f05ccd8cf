"""W11: how long building graphs takes, per node, in a new process per peer.

``python -m benchmarks.build_time PEER MODE`` is one probe. After a small warm-up build (so a
library's first use of its tracing code is not counted), it times, with the arrays made
beforehand:

- *build*: the forward graph of an MLP of LAYERS layers ``tanh(h @ W + b)`` of width WIDTH
  (symnb: ``sn.shared(..., borrow=True)`` weights; PyTensor: ``pytensor.shared`` likewise;
  JAX: ``make_jaxpr`` of the function, the weights as arguments);
- *grad*: the gradient of ``sum(h)`` with respect to every weight (symnb ``sn.grad``,
  PyTensor ``pytensor.grad``, both on the graph already built; JAX ``make_jaxpr`` of
  ``jax.grad``, which traces the forward pass again);
- *compile*: symnb only, ``sn.function`` of those gradients on the peer's backend;
- *chain*: the gradient of ``sum`` of a CHAIN-step ``tanh(x * 0.9 + 0.1)`` chain (building
  the chain is included, as ``make_jaxpr(grad)`` includes it).

Each phase is repeated (REPEATS, fewer when a phase is slow: BUDGET_S) and reported, in
wall-clock and in CPU seconds of the probe, with the number of nodes it made (symnb and
PyTensor: apply nodes; JAX: jaxpr equations), so rows give microseconds per node.
It prints one JSON line.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time

import numpy as np

from benchmarks import peers
from benchmarks.probes import reply, run_probe
from benchmarks.runner import Result, with_load, worker_env
from benchmarks.workloads import BY_KEY

REPEATS = {"full": 5, "quick": 3, "tiny": 1}
BUDGET_S = {"full": 20.0, "quick": 10.0, "tiny": 5.0}  # a phase stops repeating past this
PHASES = ("build", "grad", "compile", "chain")
#: the peers with a graph to build: symnb's backends, PyTensor once (its graph does not depend
#: on its mode), JAX
GRAPH_PEERS = ("pytensor (numba)", "jax")
PROBE_TIMEOUT_S = 600
WARM_UP = (2, 4, 3)  # layers, width, chain steps of the untimed first build


def mlp_arrays(layers: int, width: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (W, b) pairs of the MLP, float64, scaled so that tanh does not saturate."""
    rng = np.random.default_rng(seed)
    return [
        (rng.standard_normal((width, width)) / np.sqrt(width), rng.standard_normal(width) * 0.1)
        for _ in range(layers)
    ]


def probe(peer_name: str, mode: str) -> dict:
    """Every phase's samples (seconds) and node counts for one peer."""
    layers, width, chain = BY_KEY["W11"].size(mode)
    peer = peers.load(peer_name)
    _run_once(peer, *WARM_UP)
    reply = {"status": "ok", "nodes": {}, "samples": {}}
    started = time.perf_counter()
    while _more(reply["samples"], mode, time.perf_counter() - started):
        nodes, seconds = _run_once(peer, layers, width, chain)
        reply["nodes"] = nodes
        for phase, value in seconds.items():
            reply["samples"].setdefault(phase, []).append(value)
    return reply


def _more(samples: dict, mode: str, elapsed: float) -> bool:
    done = len(samples.get("build", []))
    return done == 0 or done < REPEATS[mode] and elapsed < BUDGET_S[mode]


def _run_once(peer, layers: int, width: int, chain: int) -> tuple[dict, dict]:
    """One build of every phase: the node counts and the seconds of each."""
    arrays = mlp_arrays(layers, width)
    seconds, nodes = {}, {}
    forward = _timed(seconds, "build", peer.graph_mlp, arrays)
    grads = _timed(seconds, "grad", peer.graph_mlp_grad, forward)
    nodes["build"], nodes["grad"] = peer.graph_nodes(forward), peer.graph_nodes(grads)
    if hasattr(peer, "graph_compile"):
        _timed(seconds, "compile", peer.graph_compile, grads)
        nodes["compile"] = nodes["grad"]
    chained = _timed(seconds, "chain", peer.graph_chain_grad, chain)
    nodes["chain"] = peer.graph_nodes(chained)
    return nodes, seconds


def _timed(seconds: dict, phase: str, fn, *args):
    """``fn(*args)``, its wall-clock seconds in ``seconds[phase]`` and its CPU seconds (this
    process's, which other jobs on a loaded machine disturb less) in ``seconds[phase_cpu]``."""
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    out = fn(*args)
    seconds[phase] = time.perf_counter() - start
    seconds[phase + "_cpu"] = time.process_time() - cpu
    return out


def measure(peer_names: list[str], mode: str, say) -> list[Result]:
    """One row per phase and peer (the symnb backends and the graph-building peers)."""
    results = []
    for name in peer_names:
        if not (peers.is_symnb(name) or name in GRAPH_PEERS):
            continue
        say(f"  W11: {name}, a new process")
        results += with_load(rows(name, _spawn(name, mode)))
    return results


def rows(peer: str, reply: dict) -> list[Result]:
    """The probe's reply as rows W11-build, W11-grad, W11-compile, W11-chain."""
    if reply["status"] != "ok":
        return [Result("W11-build", peer, reply["status"], reply.get("note", ""))]
    out = []
    for phase in PHASES:
        samples, nodes = reply["samples"].get(phase), reply["nodes"].get(phase)
        if not samples:
            continue
        row = Result(f"W11-{phase}", peer, "ok", samples=samples, calls_per_sample=1)
        cpu = statistics.median(reply["samples"][phase + "_cpu"])
        row.extra.update(nodes=nodes, cpu_s=cpu)
        row.extra["us_per_node"] = 1e6 * row.median_s / nodes if nodes else None
        if nodes:
            row.note = (
                f"{nodes} nodes, {row.extra['us_per_node']:.1f} us/node "
                f"({1e6 * cpu / nodes:.1f} us/node of CPU)"
            )
        out.append(row)
    return out


def _spawn(name: str, mode: str) -> dict:
    return run_probe("benchmarks.build_time", [name, mode], worker_env(), PROBE_TIMEOUT_S)


def main(argv: list[str]) -> None:
    reply(probe, argv[0], argv[1])


if __name__ == "__main__":
    main(sys.argv[1:])
