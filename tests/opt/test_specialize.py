"""Specialize rules: x**2 -> square, dot + add + scale -> gemm."""

import numpy as np

import symnb as sn
from symnb.ops.blas import Gemm, gemm
from symnb.ops.conv import MaxPool2dGrad
from tests.opt.util import assert_same_values, fired, ops_of

SPECIALIZE = {"include": ["specialize"]}


def test_pow_two_becomes_square(rng):
    x = sn.matrix("x")
    f = assert_same_values([x], x**2, [rng.normal(size=(3, 2))], SPECIALIZE)
    assert f.rewrites.counts() == {"pow_two_to_square": 1} and ops_of(f) == ["square"]
    i = sn.tensor("i", shape=(3,), dtype="int32")
    assert fired([i], i**2.0, SPECIALIZE) == {}  # int ** float is float: square keeps int
    assert fired([x], x**3, SPECIALIZE) == {}


def test_gemm_forms(rng):
    x, w, z = sn.matrix("x"), sn.matrix("w"), sn.matrix("z")
    a = sn.scalar("a")
    values = [rng.normal(size=(4, 3)), rng.normal(size=(3, 2)), rng.normal(size=(4, 2)), 0.3]
    for expr, rule in [
        (z + x @ w, "add_to_gemm"),
        (x @ w + z, "add_to_gemm"),
        (z + a * (x @ w), "add_to_gemm"),
        (z - (x @ w) * a, "sub_to_gemm"),
        (z - 0.5 * (x @ w), "sub_to_gemm"),
    ]:
        f = assert_same_values([x, w, z, a], [expr, a], values, SPECIALIZE, rtol=1e-12)
        assert f.rewrites.counts() == {rule: 1}, rule
        assert "gemm" in ops_of(f) and "matmul" not in ops_of(f)


def test_gemm_with_a_bias_vector(rng):
    x, w, b = sn.matrix("x"), sn.matrix("w"), sn.vector("b")
    values = [rng.normal(size=(4, 3)), rng.normal(size=(3, 2)), rng.normal(size=2)]
    f = assert_same_values([x, w, b], x @ w + b, values, SPECIALIZE, rtol=1e-12)
    assert ops_of(f) == ["gemm"]


def test_gemm_near_misses(rng):
    x, w, z = sn.matrix("x"), sn.matrix("w"), sn.matrix("z")
    product = x @ w
    assert fired([x, w, z], [z + product, product], SPECIALIZE) == {}  # product used twice
    v = sn.vector("v")
    assert fired([x, v, z], z + x @ v, SPECIALIZE) == {}  # matrix-vector
    i = sn.tensor("i", shape=(None, None), dtype="int64")
    assert fired([i, z], z + i @ i, SPECIALIZE) == {}  # integer product
    x32 = sn.tensor("x32", shape=(None, None), dtype="float32")
    assert fired([x32, z], z + x32 @ x32, SPECIALIZE) == {}  # mixed dtypes
    m = sn.matrix("m")
    assert fired([x, w, m], (x @ w) * m + 1.0, SPECIALIZE) == {}  # not a scalar scale


def test_gemm_reference_and_inplace_give_the_same_values(rng):
    z, x, y = rng.normal(size=(3, 2)), rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    alpha, beta = np.array(-0.5), np.array(2.0)
    want = beta * z + alpha * (x @ y)
    np.testing.assert_allclose(gemm.perform(z, alpha, x, y, beta), want, rtol=1e-14)
    buffer = z.copy()
    out = Gemm(inplace=True).perform(buffer, alpha, x, y, beta)
    assert out is buffer
    np.testing.assert_allclose(out, want, rtol=1e-14)


def test_softmax_reuses_the_log_softmax_it_sits_beside(rng):
    x = sn.matrix("x")
    values = [rng.normal(size=(4, 5)) * 30]
    outputs = [sn.softmax(x, axis=1), sn.log_softmax(x, axis=-1)]
    f = assert_same_values([x], outputs, values, SPECIALIZE, rtol=1e-12)
    assert f.rewrites.counts() == {"softmax_from_log_softmax": 1}
    assert sorted(ops_of(f)) == ["exp", "log_softmax"]
    assert fired([x], sn.softmax(x, axis=1), SPECIALIZE) == {}  # no log_softmax to reuse
    other_axis = [sn.softmax(x, axis=0), sn.log_softmax(x, axis=1)]
    assert fired([x], other_axis, SPECIALIZE) == {}
    y = sn.matrix("y")
    assert fired([x, y], [sn.softmax(x), sn.log_softmax(y)], SPECIALIZE) == {}  # other input


def test_cross_entropy_gradient_computes_one_row_normalisation(rng):
    x = sn.matrix("x")
    labels = sn.vector("labels", dtype="int64")
    loss = sn.mean(sn.crossentropy(sn.softmax(x), labels))
    values = [rng.normal(size=(6, 5)), rng.integers(0, 5, size=6)]
    unfused = {"exclude": ["softmax_crossentropy_fused", "softmax_crossentropy_grad_fused"]}
    f = assert_same_values([x, labels], [loss, sn.grad(loss, x)], values, unfused, rtol=1e-10)
    # sn.grad differentiates log_softmax (symnb/grad/formulas.py), whose gradient reads the
    # forward's rows as exp(log_softmax): one normalisation, no softmax op
    assert "log_softmax_of_softmax" in f.rewrites.counts()
    assert "softmax" not in ops_of(f) and ops_of(f).count("log_softmax") == 1


def _pooled_relu_gradient(pool_kwargs):
    """x, w, and a loss through relu -> max_pool2d and its gradient with respect to x."""
    x = sn.tensor("x", (2, 3, 8, 8))
    pooled = sn.max_pool2d(sn.relu(x * 1.5 - 0.2), 2, **pool_kwargs)
    w = sn.tensor("w", pooled.type.shape)
    loss = sn.sum(pooled * w)
    return x, w, loss, sn.grad(loss, x)


def test_relu_mask_moves_through_the_max_pool_gradient(rng):
    """max_pool2d_grad(h, g) * (h > 0) -> max_pool2d_grad(h, g, positive=True): the same
    values (tiling and overlapping windows, with padding), exactly where tiled, and no
    input-sized mask left."""
    for kwargs in ({}, {"stride": 1}, {"stride": 1, "padding": 1}):
        x, w, loss, dx = _pooled_relu_gradient(kwargs)
        values = [rng.normal(size=(2, 3, 8, 8)), rng.normal(size=w.type.shape)]
        f = assert_same_values([x, w], [loss, dx], values, SPECIALIZE, rtol=1e-14)
        assert f.rewrites.counts().get("relu_mask_through_max_pool") == 1, kwargs
        (route,) = [n for n in f.graph.toposort() if type(n.op).op_name() == "max_pool2d_grad"]
        assert route.op.positive and "greater" not in ops_of(f)
    x, w, loss, dx = _pooled_relu_gradient({})
    tiled = sn.function([x, w], dx, backend="c")
    plain = sn.function([x, w], dx, backend="c", optimize="none")
    a, b = rng.normal(size=(2, 3, 8, 8)), rng.normal(size=w.type.shape)
    np.testing.assert_array_equal(tiled(a, b), plain(a, b))


def test_relu_mask_through_the_max_pool_gradient_near_misses():
    x, g = sn.tensor("x", (2, 3, 8, 8)), sn.tensor("g", (2, 3, 4, 4))
    h = sn.relu(x)
    routed = MaxPool2dGrad((2, 2), (2, 2), ((0, 0), (0, 0)))(h, g)
    assert "relu_mask_through_max_pool" in fired([x, g], routed * (h > 0), SPECIALIZE)
    # a mask other than > 0, a mask of another tensor, the routed gradient read twice
    for out in ([routed * (h > 1)], [routed * (sn.abs(x) > 0)], [routed * (h > 0), routed]):
        assert "relu_mask_through_max_pool" not in fired([x, g], out, SPECIALIZE), out
