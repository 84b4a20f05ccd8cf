"""Every peer's version of a workload returns the reference's answer on tiny sizes."""

import numpy as np
import pytest

from benchmarks import numpy_impl
from benchmarks.worker import Worker
from benchmarks.workloads import BY_KEY, LEARNING_RATE, make_inputs

MLP = ("w1", "b1", "w2", "b2", "w3", "b3")


def setup(peer: str, workload: str) -> dict:
    """The worker's reply to ``setup``: built, first call checked against the reference."""
    worker = Worker(peer)
    hello = worker.handle({"cmd": "hello"})
    if hello["status"] == "absent":
        pytest.skip(hello["note"])
    args = {"workload": workload, "mode": "tiny", "target_s": 0.001}
    return worker.handle({"cmd": "setup", "args": args})


@pytest.mark.parametrize("peer", ["numpy", "symnb-py", "symnb-c", "jax", "torch"])
def test_w3s_step_matches_the_reference(peer):
    reply = setup(peer, "W3s")
    assert reply["status"] == "ok", reply.get("note")


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
