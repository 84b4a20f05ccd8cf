"""Stabilize rules: finite, accurate answers where the naive graph gives 0, inf or nan."""

import numpy as np
import pytest
from scipy import special

import symnb as sn
from tests.opt.util import compile_pair, fired

STABLE = "stable"


def _both(inputs, expr, values):
    plain, stable = compile_pair(inputs, expr, STABLE)
    with np.errstate(all="ignore"):
        return plain(*values), stable(*values), stable.rewrites.counts()


def test_log1p_and_expm1_keep_tiny_values():
    x = sn.vector("x")
    tiny = np.array([1e-20, 3e-17, 0.5])
    naive, good, counts = _both([x], sn.log(1 + x), [tiny])
    assert counts == {"log1p_of_sum": 1} and naive[0] == 0.0
    np.testing.assert_allclose(good, np.log1p(tiny), rtol=1e-15)
    naive, good, counts = _both([x], sn.exp(x) - 1, [tiny])
    assert counts == {"expm1_of_exp": 1} and naive[0] == 0.0
    np.testing.assert_allclose(good, np.expm1(tiny), rtol=1e-15)


def test_log1p_near_misses():
    x = sn.vector("x")
    i = sn.tensor("i", shape=(None,), dtype="int8")
    assert fired([x], sn.log(2 + x), STABLE) == {}  # not 1
    assert fired([i], sn.log(1 + i), STABLE) == {}  # integers wrap around
    assert fired([x], sn.exp(x) - 2, STABLE) == {}
    assert fired([x], sn.exp(x) + 1, STABLE) == {}


def test_log_sigmoid_is_minus_softplus():
    x = sn.vector("x")
    values = np.array([-1000.0, -30.0, 0.0, 40.0])
    naive, good, counts = _both([x], sn.log(sn.sigmoid(x)), [values])
    assert counts == {"log_sigmoid": 1} and np.isneginf(naive[0])
    np.testing.assert_allclose(good, special.log_expit(values), rtol=1e-12)
    assert fired([x], sn.log(sn.tanh(x)), STABLE) == {}


def test_logsumexp_of_large_values():
    x = sn.matrix("x")
    values = np.array([[1000.0, 999.0], [-5.0, 2.0]])
    for axis in (0, 1, None):
        naive, good, counts = _both([x], sn.log(sn.sum(sn.exp(x), axis=axis)), [values])
        assert counts == {"logsumexp_of_exp": 1} and not np.isfinite(naive).all()
        np.testing.assert_allclose(good, special.logsumexp(values, axis=axis), rtol=1e-12)
    assert fired([x], sn.log(sn.max(sn.exp(x), axis=1)), STABLE) == {}  # max, not sum
    assert fired([x], sn.log(sn.sum(sn.sqrt(x), axis=1)), STABLE) == {}


@pytest.mark.parametrize("labels", ["int", "onehot"])
def test_crossentropy_of_softmax_with_logits_of_1000(labels):
    logits = np.array([[1000.0, 0.0, -1000.0], [0.0, 1000.0, 0.0]])
    y_int = np.array([1, 0])
    x = sn.matrix("x")
    if labels == "int":
        y = sn.tensor("y", shape=(None,), dtype="int64")
        values = [logits, y_int]
    else:
        y = sn.matrix("y")
        values = [logits, np.eye(3)[y_int]]
    loss = sn.mean(sn.crossentropy(sn.softmax(x, axis=1), y))
    naive, good, counts = _both([x, y], loss, values)
    assert counts["log_softmax_of_softmax"] == 1
    assert not np.isfinite(naive)
    want = -np.mean(special.log_softmax(logits, axis=1)[np.arange(2), y_int])
    np.testing.assert_allclose(good, want, rtol=1e-12)
    assert good == pytest.approx(1000.0)


def test_log_softmax_keeps_the_axis():
    x = sn.matrix("x")
    values = np.array([[1000.0, 0.0], [3.0, -1000.0]])
    _, good, counts = _both([x], sn.log(sn.softmax(x, axis=0)), [values])
    assert counts == {"log_softmax_of_softmax": 1}
    np.testing.assert_allclose(good, special.log_softmax(values, axis=0), rtol=1e-12)
    assert fired([x], sn.log(x.T), STABLE) == {}  # a selection, but not of a softmax


@pytest.mark.parametrize("labels", ["int", "onehot"])
def test_crossentropy_gradient_with_logits_of_1000(labels):
    logits = np.array([[1000.0, 0.0, -5.0], [1.0, 2.0, 3.0]])
    y_int = np.array([1, 2])
    x = sn.matrix("x")
    if labels == "int":
        y, target = sn.tensor("y", shape=(None,), dtype="int64"), y_int
    else:
        y, target = sn.matrix("y"), np.eye(3)[y_int]
    loss = sn.mean(sn.crossentropy(sn.softmax(x, axis=1), y))
    naive, good, counts = _both([x, y], sn.grad(loss, x), [logits, target])
    assert counts["softmax_grad_without_division"] == 1
    assert np.isnan(naive[0]).all()
    want = (special.softmax(logits, axis=1) - np.eye(3)[y_int]) / 2
    np.testing.assert_allclose(good, want, rtol=1e-12, atol=1e-15)


def test_softmax_gradient_near_misses():
    x, h = sn.matrix("x"), sn.matrix("h")
    sm = sn.softmax(x, axis=1)
    g = h / sm
    assert fired([x, h], sm * (g - sn.sum(g * sm, axis=0, keepdims=True)), STABLE) == {}
    e = sn.exp(x)  # not a softmax
    g = h / e
    assert fired([x, h], e * (g - sn.sum(g * e, axis=1, keepdims=True)), STABLE) == {}
    g = h * sm  # no division to remove
    assert fired([x, h], sm * (g - sn.sum(g * sm, axis=1, keepdims=True)), STABLE) == {}
