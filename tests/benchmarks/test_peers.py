"""Every peer's version of every workload returns the reference's answer, in the reference's
dtypes, on tiny sizes; torch.compile builds without graph breaks.

The worker's ``check`` is the harness's ``setup`` without the warm-up: it builds the workload,
makes the first call, and checks every output's dtype and value against the float64 reference.
"""

import importlib
import subprocess

import numpy as np
import pytest

from benchmarks import numpy_impl, peers
from benchmarks.runner import WorkerProcess
from benchmarks.worker import Worker
from benchmarks.workloads import BY_KEY, LEARNING_RATE, WORKLOADS, make_inputs
from tests.helpers import cuda_problem

MLP = ("w1", "b1", "w2", "b2", "w3", "b3")
TIMED = [w.key for w in WORKLOADS if w.kind == "timed"]
ELEMENTWISE = ["W1-f64", "W1-f32", "W1b", "W7-tanh", "W7-abs"]
# The workloads each peer has a version of (the others must be skipped, never an error).
OWN = {
    "numexpr": ELEMENTWISE + ["W4", "W4-float", "W4-npscalar", "W6"],
    "numpy (out=)": ELEMENTWISE,
    "numexpr (out=)": ELEMENTWISE,
    "torch (out=)": ELEMENTWISE,
}
# PyTensor compiles for seconds per workload (C or Numba): a subset with every kind of call.
PYTENSOR = ["W1-f32", "W3s", "W4", "W4-float", "W4-npscalar"]
# W9's scan: ~5 s to build with Numba, ~30 s cold with the C VM (its scan is C code)
PYTENSOR_MORE = {"pytensor (numba)": ["W9"], "pytensor (cvm)": []}


def worker_for(peer: str, **kwargs) -> Worker:
    """A worker holding ``peer`` (built with ``kwargs`` instead of its table entry if given)."""
    worker = Worker(peer)
    hello = worker.handle({"cmd": "hello"})
    if hello["status"] == "absent":
        pytest.skip(hello["note"])
    if kwargs:
        module, table = peers.EXTERNAL[peer]
        worker.peer = importlib.import_module(module).Peer(**(table | kwargs))
    return worker


def check_every_workload(worker, keys: list[str], own: list[str]) -> dict:
    """Check each workload in ``worker`` (a ``Worker`` here, or a ``WorkerProcess``); those in
    ``own`` must be ok, the others skipped."""
    replies = {key: _check(worker, key) for key in keys}
    for key, reply in replies.items():
        want = "ok" if key in own else "skipped"
        assert reply["status"] == want, f"{key}: {reply}"
    return replies


def _check(worker, key: str) -> dict:
    args = {"workload": key, "mode": "tiny"}
    if isinstance(worker, WorkerProcess):
        return worker.ask("check", 300, **args)
    return worker.handle({"cmd": "check", "args": args})


@pytest.mark.parametrize(
    "peer", ["numpy", "numpy (out=)", "numexpr", "numexpr (out=)", "jax", "torch", "torch (out=)"]
)
def test_every_workload_matches_the_reference(peer):
    check_every_workload(worker_for(peer), TIMED, OWN.get(peer, TIMED))


#: the device backends' rows are checked where `make bench` runs them; here their own tests
#: (tests/backends/test_opencl_backend.py) cover them: every workload on PoCL costs a minute
HOST_BACKENDS = [p for p in peers.symnb_peers() if p not in ("symnb-opencl", "symnb-cuda")]


@pytest.mark.parametrize("peer", HOST_BACKENDS)
def test_every_symnb_workload_matches_the_reference(peer, tmp_path, monkeypatch):
    """In a worker process, as the harness runs it: the kernels lowered for the benchmarks stay
    out of the suite's record of kernels (tests/conftest.py), which the dialect tests render,
    and its compiled code goes to a temporary cache."""
    monkeypatch.setenv("SYMNB_COMPILEDIR", str(tmp_path / "symnb"))
    process = WorkerProcess(peer, subprocess.DEVNULL)
    try:
        hello = process.ask("hello", 120)
        assert hello["status"] == "ok", hello
        check_every_workload(process, TIMED, TIMED)
    finally:
        process.close()


@pytest.mark.parametrize("peer", ["pytensor (numba)", "pytensor (cvm)"])
def test_pytensor_modes_match_the_reference(peer):
    worker = worker_for(peer)
    assert peer.split()[1].strip("()").upper() in worker.peer.version()
    keys = PYTENSOR + PYTENSOR_MORE[peer]
    check_every_workload(worker, keys, keys)


def test_torch_compile_builds_every_workload_without_graph_breaks():
    """Graph breaks are dynamo's (before any backend), so the quick ``aot_eager`` backend
    stands in for inductor here; the harness itself runs inductor."""
    replies = check_every_workload(worker_for("torch.compile", backend="aot_eager"), TIMED, TIMED)
    for key, reply in replies.items():
        assert reply["note"] == "1 graph, 0 graph breaks", (key, reply)


def test_a_graph_break_fails_the_torch_compile_build():
    torch = pytest.importorskip("torch")
    worker = worker_for("torch.compile", backend="aot_eager")

    def breaking(x):
        torch._dynamo.graph_break()
        return x + 1

    with pytest.raises(Exception, match="graph_break|Unsupported|graph break"):
        worker.peer._wrap(breaking)(torch.ones(2))


def _tanh_mlp_loss(params, x, labels):
    w1, b1, w2, b2, w3, b3 = params
    logits = np.tanh(np.tanh(x @ w1 + b1) @ w2 + b2) @ w3 + b3
    return numpy_impl.softmax_xent(logits, labels)[0]


def test_w3s_reference_step_follows_the_numerical_gradient():
    """The hand-written backward pass of the tanh MLP against central differences."""
    inputs = make_inputs(BY_KEY["W3s"], "tiny")
    start = [inputs[k].astype(np.float64) for k in MLP]
    x, labels = inputs["x"].astype(np.float64), inputs["labels"]
    moved = [p.copy() for p in start]
    loss = numpy_impl.tanh_mlp_step(moved, x, labels, LEARNING_RATE)
    assert loss == pytest.approx(_tanh_mlp_loss(start, x, labels), rel=1e-12)
    rng = np.random.default_rng(5)
    for index, param in enumerate(start):
        grad = (start[index] - moved[index]) / LEARNING_RATE
        for flat in rng.choice(param.size, 3, replace=False):
            where = np.unravel_index(flat, param.shape)
            numeric = _central_difference(start, index, where, x, labels)
            assert grad[where] == pytest.approx(numeric, rel=1e-5, abs=1e-9)


def _central_difference(params, index, where, x, labels, eps=1e-6):
    values = []
    for sign in (1, -1):
        shifted = [p.copy() for p in params]
        shifted[index][where] += sign * eps
        values.append(_tanh_mlp_loss(shifted, x, labels))
    return (values[0] - values[1]) / (2 * eps)


def test_w3s_inputs_are_shaped_like_the_digits():
    spec = BY_KEY["W3s"]
    full = make_inputs(spec, "full")
    assert full["x"].shape == (32, 64) and full["x"].dtype == np.float32
    assert full["w2"].shape == (128, 64) and full["b3"].shape == (10,)
    assert set(np.unique(full["x"] * 16)) <= set(range(17))
    assert full["labels"].min() >= 0 and full["labels"].max() <= 9


def test_w4_variants_pass_python_floats_and_numpy_scalars():
    floats, scalars = (make_inputs(BY_KEY[k], "full") for k in ("W4-float", "W4-npscalar"))
    assert all(type(v) is float for v in floats.values())
    assert all(type(v) is np.float64 for v in scalars.values())
    assert floats == {k: float(v) for k, v in make_inputs(BY_KEY["W4"], "full").items()}


def _convnet2_loss(params, x, labels):
    """W8b's loss by explicit loops for the convolutions (no shared code with the step)."""
    k1, b1, k2, b2, dense, dbias = params

    def conv(a, k):
        n, _, h, w = a.shape
        out = np.zeros((n, k.shape[0], h - 2, w - 2))
        for i in range(3):
            for j in range(3):
                out += np.einsum(
                    "nchw,oc->nohw", a[:, :, i : i + h - 2, j : j + w - 2], k[..., i, j]
                )
        return out

    act1 = np.maximum(conv(x, k1) + b1[None, :, None, None], 0)
    act2 = np.maximum(conv(act1, k2) + b2[None, :, None, None], 0)
    n, c, h, w = act2.shape
    pooled = act2.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))
    return numpy_impl.softmax_xent(pooled.reshape(n, -1) @ dense + dbias, labels)[0]


def test_w8b_reference_step_follows_the_numerical_gradient():
    """W8b's hand-written backward pass (two convolutions, max-pool) at the tiny size against
    central differences of a loss written with explicit loops."""
    keys = ("k1", "b1", "k2", "b2", "dense", "dbias")
    inputs = make_inputs(BY_KEY["W8b"], "tiny")
    start = [inputs[k].astype(np.float64) for k in keys]
    x, labels = inputs["x"].astype(np.float64), inputs["labels"]
    moved = [p.copy() for p in start]
    loss = numpy_impl.convnet2_step(moved, x, labels, LEARNING_RATE)
    assert loss == pytest.approx(_convnet2_loss(start, x, labels), rel=1e-12)
    rng = np.random.default_rng(8)
    for index, param in enumerate(start):
        grad = (start[index] - moved[index]) / LEARNING_RATE
        for flat in rng.choice(param.size, min(3, param.size), replace=False):
            where = np.unravel_index(flat, param.shape)
            values = []
            for sign in (1, -1):
                shifted = [p.copy() for p in start]
                shifted[index][where] += sign * 1e-6
                values.append(_convnet2_loss(shifted, x, labels))
            numeric = (values[0] - values[1]) / 2e-6
            assert grad[where] == pytest.approx(numeric, rel=1e-5, abs=1e-9)


def _mlp_grad_reference(arrays, x):
    """Gradients of sum(h) for h = tanh(... tanh(x @ W1 + b1) ... @ Wn + bn), by hand."""
    hs = [x]
    for w, b in arrays:
        hs.append(np.tanh(hs[-1] @ w + b))
    grads, g = [], np.ones_like(hs[-1])
    for (w, _), h_in, h_out in reversed(list(zip(arrays, hs, hs[1:]))):
        dz = g * (1 - h_out**2)
        grads[:0] = [h_in.T @ dz, dz.sum(axis=0)]
        g = dz @ w.T
    return grads


def _chain_grad_reference(x, steps):
    grad = np.ones_like(x)
    for _ in range(steps):
        x = np.tanh(x * 0.9 + 0.1)
        grad = grad * 0.9 * (1 - x**2)
    return grad


@pytest.mark.parametrize("peer", ["symnb-py", "jax", "pytensor (numba)"])
def test_w11_graphs_compute_the_reference_gradients(peer):
    """W11 times these graphs: they must be the workload's (MLP gradients, chain gradient),
    with as many nodes as their ops make."""
    from benchmarks import build_time

    worker = Worker(peer)
    if worker.handle({"cmd": "hello"})["status"] == "absent":
        pytest.skip(f"{peer} is not installed")
    graphs = worker.peer
    layers, width, steps = BY_KEY["W11"].size("tiny")
    arrays = build_time.mlp_arrays(layers, width)
    x = np.random.default_rng(3).standard_normal((32, width))
    grads = graphs.graph_mlp_grad(graphs.graph_mlp(arrays))
    expected = _mlp_grad_reference(arrays, x)
    for got, want in zip(graphs.graph_value(grads, x), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    chain = graphs.graph_chain_grad(steps)
    x = np.random.default_rng(4).uniform(-1, 1, 64)
    (got,) = graphs.graph_value(chain, x)
    np.testing.assert_allclose(got, _chain_grad_reference(x, steps), rtol=1e-10)
    assert graphs.graph_nodes(graphs.graph_mlp(arrays)) >= 3 * layers
    assert graphs.graph_nodes(chain) >= 3 * steps


def test_w11_probe_reports_every_phase_per_node():
    from benchmarks import build_time

    reply = build_time.probe("symnb-py", "tiny")
    rows = {r.workload: r for r in build_time.rows("symnb-py", reply)}
    assert set(rows) == {"W11-build", "W11-grad", "W11-compile", "W11-chain"}
    layers, _, steps = BY_KEY["W11"].size("tiny")
    assert rows["W11-build"].extra["nodes"] == 3 * layers  # matmul, add, tanh per layer
    for row in rows.values():
        assert row.median_s > 0 and row.extra["us_per_node"] > 0
    from benchmarks import report

    section = report.w11_section(list(rows.values()))
    build = rows["W11-build"]
    assert f"| build | symnb-py | {3 * layers} | " in section
    assert f"{build.extra['us_per_node']:.2f}" in section


def test_a_device_backend_that_cannot_start_is_an_absent_peer():
    if cuda_problem() is None:
        pytest.skip("a CUDA device runs here")
    process = WorkerProcess("symnb-cuda", subprocess.DEVNULL)
    try:
        hello = process.ask("hello", 120)
    finally:
        process.close()
    assert hello["status"] == "absent" and "backend 'cuda' cannot start here" in hello["note"]
