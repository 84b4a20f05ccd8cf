"""The 2-layer MLP training step: fewer nodes after rewriting, the same training values."""

import numpy as np

import symnb as sn
from benchmarks.rewrite_time import mlp_training_step


def _train_once(f, params, values, batch):
    for p, v in zip(params, values):
        p.set_value(v)
    loss = f(*batch)
    return loss, [p.get_value() for p in params]


def test_the_training_step_gets_smaller_and_computes_the_same(rng):
    inputs, loss, updates, params = mlp_training_step(layers=2)
    plain = sn.function(inputs, loss, updates=updates, optimize="none", backend="py")
    fast = sn.function(inputs, loss, updates=updates, backend="py")
    assert len(fast.graph) < len(fast.graph_before) == len(plain.graph)
    counts = fast.rewrites.counts()
    rules = (
        "log_softmax_of_softmax",
        "add_to_gemm",
        "sub_to_gemm",
    )
    for rule in rules + ("fuse_elemwise", "elemwise_inplace"):
        assert counts.get(rule, 0) >= 1, (rule, counts)
    start = [p.get_value() for p in params]
    batch = (rng.normal(size=(5, 8)), rng.integers(0, 3, size=5))
    want_loss, want = _train_once(plain, params, start, batch)
    got_loss, got = _train_once(fast, params, start, batch)
    np.testing.assert_allclose(got_loss, want_loss, rtol=1e-12)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-14)


def test_large_logits_train_to_finite_values():
    inputs, loss, updates, params = mlp_training_step(layers=2)
    fast = sn.function(inputs, loss, updates=updates, backend="py")
    x = np.full((4, 8), 300.0)
    params[-2].set_value(np.full(params[-2].get_value().shape, 50.0) * [1, -1, 0])
    value = fast(x, np.array([1, 1, 2, 2]))
    assert np.isfinite(value) and value > 100
    assert all(np.isfinite(p.get_value()).all() for p in params)


def test_the_gradient_fuses_where_the_batch_size_is_unknown(rng):
    """sn.matrix's rows are None: the scattered gradient has the softmax's shape because it
    is scattered into zeros made with that shape, so no ``+ zeros`` blocks the fused op."""
    x, y = sn.matrix("x"), sn.vector("y", dtype="int64")
    W, b = sn.shared(rng.normal(size=(4, 3)), name="W"), sn.shared(np.zeros(3), name="b")
    loss = sn.mean(sn.crossentropy(sn.softmax(sn.tanh(x) @ W + b, axis=1), y))
    gW, gb = sn.grad(loss, [W, b])
    fast = sn.function([x, y], [loss, gW, gb], backend="py")
    plain = sn.function([x, y], [loss, gW, gb], backend="py", optimize="none")
    ops = {type(node.op).op_name() for node in fast.graph.toposort()}
    assert "softmax_cross_entropy_grad" in ops
    assert not ops & {"inc_along_axis", "alloc", "shape"}, ops
    xv, yv = rng.normal(size=(6, 4)), rng.integers(0, 3, size=6)
    for got, want in zip(fast(xv, yv), plain(xv, yv)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-15)
