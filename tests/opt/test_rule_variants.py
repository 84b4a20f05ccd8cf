"""Every stabilising rule on its variants: keepdims, tuple and negative axes, 3-d inputs,
float32, operands in either order. Each case asserts that the rule fired and that the result
is the exact, finite answer where the naive graph overflows or underflows (a rule that fired
and lost ``keepdims`` gives the wrong shape; one that did not fire gives inf)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

import symnb as sn
from tests.helpers import tolerance
from tests.opt.util import compile_pair

AXES = [0, 1, 2, -1, -2, (0, 2), (-1, 0), (0, 1, 2), None]


def stable(inputs, expr, values, mode="stable"):
    """(naive result, stable result, rules that fired) of ``expr`` on ``values``."""
    plain, good = compile_pair(inputs, expr, mode)
    with np.errstate(all="ignore"):
        return plain(*values), good(*values), good.rewrites.counts()


def large(rng, shape, dtype="float64", scale=800.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_logsumexp_rule_keeps_axes_and_keepdims(axis, keepdims, dtype, rng):
    x = sn.tensor("x", shape=(3, 4, 5), dtype=dtype)
    values = large(rng, (3, 4, 5), dtype, scale=60.0 if dtype == "float32" else 800.0)
    naive, got, counts = stable(
        [x], sn.log(sn.sum(sn.exp(x), axis=axis, keepdims=keepdims)), [values]
    )
    want = special.logsumexp(values.astype("float64"), axis=axis, keepdims=keepdims)
    assert counts.get("logsumexp_of_exp") == 1, counts
    assert not np.isfinite(naive).all()
    assert got.shape == want.shape and got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, want, rtol=tolerance(dtype, 10))


@pytest.mark.parametrize("axis", [0, 1, -1, -3])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_log_of_softmax_rule_on_every_axis(axis, dtype, rng):
    x = sn.tensor("x", shape=(3, 4, 5), dtype=dtype)
    values = large(rng, (3, 4, 5), dtype, scale=200.0)
    naive, got, counts = stable([x], sn.log(sn.softmax(x, axis=axis)), [values])
    assert counts.get("log_softmax_of_softmax") == 1, counts
    assert np.isneginf(naive).any()
    want = special.log_softmax(values.astype("float64"), axis=axis)
    # near 0 the error is that of the inputs' magnitude (x - max - log(sum))
    np.testing.assert_allclose(
        got, want, rtol=tolerance(dtype, 10), atol=tolerance(dtype, 10) * 200
    )


@pytest.mark.parametrize("spelling", ["x + 1", "1 + x", "x + 1.0 (float32)"])
def test_log1p_rule_in_either_operand_order(spelling):
    dtype = "float32" if "float32" in spelling else "float64"
    x = sn.tensor("x", shape=(None,), dtype=dtype)
    expr = 1 + x if spelling.startswith("1") else x + 1
    tiny = np.array([1e-30, 3e-9, 0.25], dtype=dtype)
    naive, got, counts = stable([x], sn.log(expr), [tiny])
    assert counts == {"log1p_of_sum": 1}
    assert naive[0] == 0 and got[0] > 0
    np.testing.assert_allclose(got, np.log1p(tiny), rtol=tolerance(dtype))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_expm1_and_log_sigmoid_rules_in_float32_too(dtype):
    x = sn.tensor("x", shape=(None,), dtype=dtype)
    tiny = np.array([1e-30, -4e-9, 0.5], dtype=dtype)
    naive, got, counts = stable([x], sn.exp(x) - 1, [tiny])
    assert counts == {"expm1_of_exp": 1} and naive[0] == 0
    np.testing.assert_allclose(got, np.expm1(tiny), rtol=tolerance(dtype))
    low = -200.0 if dtype == "float32" else -800.0  # where sigmoid underflows to 0
    far = np.array([low, -20.0, 0.0, 30.0], dtype=dtype)
    naive, got, counts = stable([x], sn.log(sn.sigmoid(x)), [far])
    assert counts == {"log_sigmoid": 1} and np.isneginf(naive[0])
    np.testing.assert_allclose(got, special.log_expit(far.astype("float64")), rtol=tolerance(dtype))


@pytest.mark.parametrize("label_dtype", ["int64", "int32", "uint8"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_crossentropy_of_softmax_is_fused_and_finite(dtype, label_dtype, rng):
    logits = sn.tensor("logits", shape=("n", 6), dtype=dtype)
    labels = sn.tensor("labels", shape=("n",), dtype=label_dtype)
    values = large(rng, (5, 6), dtype, scale=300.0)
    picks = rng.integers(0, 6, 5).astype(label_dtype)
    loss = sn.mean(sn.crossentropy(sn.softmax(logits), labels))
    naive, got, counts = stable(
        [logits, labels], [loss, sn.grad(loss, logits)], [values, picks], mode="fast"
    )
    assert counts.get("softmax_crossentropy_fused") == 1, counts
    x = values.astype("float64")
    want_loss = -special.log_softmax(x, axis=1)[np.arange(5), picks].mean()
    onehot = np.eye(6)[picks]
    want_grad = (special.softmax(x, axis=1) - onehot) / 5
    assert not np.isfinite(naive[0])
    np.testing.assert_allclose(got[0], want_loss, rtol=tolerance(dtype, 10))
    np.testing.assert_allclose(
        got[1], want_grad, rtol=tolerance(dtype, 10), atol=tolerance(dtype, 10)
    )


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(AXES), st.booleans(), st.integers(0, 2**31))
def test_stabilising_rules_fire_on_random_axes(axis, keepdims, seed):
    """Property: wherever a stabilising pattern appears, its rule fires and the stable graph
    is finite where the naive one is not."""
    rng = np.random.default_rng(seed)
    x = sn.tensor("x", shape=(2, 3, 4))
    values = large(rng, (2, 3, 4), scale=900.0)
    lse = sn.log(sn.sum(sn.exp(x), axis=axis, keepdims=keepdims))
    softmax_axis = axis if isinstance(axis, int) else -1
    lsm = sn.log(sn.softmax(x, axis=softmax_axis))
    _, got, counts = stable([x], [lse, lsm], [values])
    assert counts.get("logsumexp_of_exp") == 1 and counts.get("log_softmax_of_softmax") == 1
    assert np.isfinite(got[0]).all() and np.isfinite(got[1]).all()
    assert got[0].shape == special.logsumexp(values, axis=axis, keepdims=keepdims).shape


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint8"])
def test_sigmoid_rules_leave_integer_inputs_alone(dtype):
    """-x wraps around for integers (-(-128) is -128 in int8), so -softplus(-x) is not
    log(sigmoid(x)) there: the rules fire on floating-point x only."""
    x = sn.tensor("x", shape=(None,), dtype=dtype)
    info = np.iinfo(dtype)
    values = np.array([info.min, 0, 3, info.max], dtype)
    for build in (
        lambda v: sn.log(sn.sigmoid(v)),
        lambda v: sn.log(1 - sn.sigmoid(v)),
        lambda v: sn.log1p(-sn.sigmoid(v)),
    ):
        naive, got, counts = stable([x], build(x), [values])
        assert counts == {}, counts
        np.testing.assert_array_equal(got, naive)
