"""A state whose values are read only at the last step (``hs[-1]``, ``hs[n_steps - 1]``,
``theano.reduce`` / ``foldl`` / ``foldr``), or not at all, keeps only its last value
(``scan_unread_history``, Theano's ``scan_save_mem``): one value, not one per step. A loop of
no steps then has no last value to read, an error as ``hs[-1]`` of its empty rows was; a
gradient reads every value, so its forward loop keeps them."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
import symnb.compat.theano as theano
from symnb.control.scan import Scan
from tests.helpers import available_backends

BACKENDS = available_backends()


def _forward_history(f) -> list:
    """The history flags of each forward loop (not a gradient's backward one) in f's graph."""
    return [
        n.op.loop.history
        for n in f.graph.toposort()
        if isinstance(n.op, Scan) and not n.op.loop.backwards
    ]


def _numpy_loop(h, n, w=0.5):
    values = []
    for _ in range(n):
        h = np.tanh(h * w) + 1.0
        values.append(h)
    return np.array(values)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("count", ["int64", "int32"])
def test_the_last_value_read_at_minus_one_or_n_steps_minus_one_is_all_the_loop_keeps(
    backend, count
):
    h0 = sn.tensor("h0", shape=(2, 3), dtype="float64")
    n = sn.tensor("n", shape=(), dtype=count)
    hs, _ = sn.scan(lambda h: sn.tanh(h * 0.5) + 1.0, outputs_info=h0, n_steps=n)
    f = sn.function([h0, n], [hs[-1], hs[n - 1], hs[-1, 1:], hs[-1][:, 0]], backend=backend)
    assert _forward_history(f) == [(False,)]
    value = np.linspace(-1, 1, 6).reshape(2, 3)
    want = _numpy_loop(value, 4)[-1]
    last, at_n, row, column = f(value, 4)
    np.testing.assert_allclose(last, want, rtol=1e-12)
    np.testing.assert_allclose(at_n, want, rtol=1e-12)
    np.testing.assert_allclose(row, want[1:], rtol=1e-12)
    np.testing.assert_allclose(column, want[:, 0], rtol=1e-12)
    np.testing.assert_allclose(f(value, 1)[0], np.tanh(value * 0.5) + 1.0, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_given_step_count_read_at_its_last_index(backend):
    h0 = sn.tensor("h0", shape=(3,), dtype="float64")
    hs, _ = sn.scan(lambda h: sn.tanh(h * 0.5) + 1.0, outputs_info=h0, n_steps=5)
    f = sn.function([h0], hs[4], backend=backend)
    assert _forward_history(f) == [(False,)]
    np.testing.assert_allclose(f(np.arange(3.0)), _numpy_loop(np.arange(3.0), 5)[-1], rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("view", ["reduce", "foldl", "foldr"])
def test_theano_reduce_and_folds_keep_only_the_last_value(backend, view):
    x = sn.tensor("x", shape=("T", 3), dtype="float64")
    acc = sn.tensor("acc", shape=(3,), dtype="float64")
    out, _ = getattr(theano, view)(lambda row, a: a * 0.5 + row, x, acc)
    f = sn.function([x, acc], out, backend=backend)
    assert _forward_history(f) == [(False,)]
    xv, want = np.arange(12.0).reshape(4, 3), np.ones(3)
    for row in xv[::-1] if view == "foldr" else xv:
        want = want * 0.5 + row
    np.testing.assert_allclose(f(xv, np.ones(3)), want, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_values_read_elsewhere_are_kept_and_an_unread_state_is_not(backend):
    """(h, c) as an LSTM's: the hs returned whole, c never read, keeps none of its values."""
    h0 = sn.tensor("h0", shape=(3,), dtype="float64")
    c0 = sn.tensor("c0", shape=(3,), dtype="float64")
    (hs, _cs), _ = sn.scan(
        lambda h, c: (sn.tanh(c) + h * 0.5, c + 1.0), outputs_info=[h0, c0], n_steps=3
    )
    f = sn.function([h0, c0], [hs[-1], hs[0]], backend=backend)
    assert _forward_history(f) == [(True, False)]
    h, c, rows = np.zeros(3), np.arange(3.0), []
    for _ in range(3):
        h, c = np.tanh(c) + h * 0.5, c + 1.0
        rows.append(h)
    last, first = f(np.zeros(3), np.arange(3.0))
    np.testing.assert_allclose(last, rows[-1], rtol=1e-12)
    np.testing.assert_allclose(first, rows[0], rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_until_read_at_minus_one_keeps_the_last_value_and_at_n_minus_one_all(backend):
    """A loop that stops early has fewer rows than n_steps: ``hs[n - 1]`` is not its last."""
    h0 = sn.tensor("h0", shape=(), dtype="float64")
    n = sn.tensor("n", shape=(), dtype="int64")
    hs, _ = sn.scan(lambda h: (h + 1.0, sn.until(h >= 2.0)), outputs_info=h0, n_steps=n)
    f = sn.function([h0, n], hs[-1], backend=backend)
    assert _forward_history(f) == [(False,)]
    assert f(0.0, 10) == 3.0
    g = sn.function([h0, n], hs[n - 1], backend=backend)
    assert _forward_history(g) == [(True,)]
    assert g(0.0, 2) == 2.0
    with pytest.raises(Exception, match="out of bounds"):
        g(0.0, 10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_last_value_of_a_loop_of_no_steps_is_an_error_not_the_initial_value(backend):
    h0 = sn.tensor("h0", shape=(3,), dtype="float64")
    n = sn.tensor("n", shape=(), dtype="int64")
    hs, _ = sn.scan(lambda h: h * 2.0, outputs_info=h0, n_steps=n)  # the scan's line
    last = hs[-1]
    f = sn.function([h0, n], last, backend=backend)
    assert _forward_history(f) == [(False,)]
    with pytest.raises(IndexError) as info:
        f(np.ones(3), 0)
    assert isinstance(info.value, sn.ShapeError)
    message = str(info.value)
    assert "last value of the state 'h0' is read ([-1] of its values)" in message
    assert "(read at " in message and "last = hs[-1]" in message
    assert "the loop runs no step (n_steps=0): a loop of no steps has no last value" in message
    assert message.endswith(
        "hs, _ = sn.scan(lambda h: h * 2.0, outputs_info=h0, n_steps=n)  # the scan's line"
    )
    np.testing.assert_array_equal(f(np.ones(3), 2), [4.0, 4.0, 4.0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_rows_to_run_over_is_the_same_error(backend):
    x = sn.tensor("x", shape=("T", 3), dtype="float64")
    h0 = sn.tensor("h0", shape=(3,), dtype="float64")
    hs, _ = sn.scan(lambda row, h: h + row, sequences=x, outputs_info=h0)
    f = sn.function([x, h0], hs[-1], backend=backend)
    with pytest.raises(sn.ShapeIndexError, match=r"runs no step \(its sequences have no rows\)"):
        f(np.zeros((0, 3)), np.ones(3))
    np.testing.assert_array_equal(f(np.ones((2, 3)), np.ones(3)), [3.0, 3.0, 3.0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_gradient_of_the_last_value_keeps_the_history_and_is_right(backend):
    x = sn.tensor("x", shape=("T", 3), dtype="float64")
    h0 = sn.tensor("h0", shape=(3,), dtype="float64")
    w = sn.tensor("w", shape=(3, 3), dtype="float64")
    hs, _ = sn.scan(
        lambda row, h, w: sn.tanh(h @ w + row), sequences=x, outputs_info=h0, non_sequences=w
    )
    loss = sn.sum(hs[-1] ** 2)
    f = sn.function([x, h0, w], [hs[-1], *sn.grad(loss, [x, h0, w])], backend=backend)
    assert (True,) in _forward_history(f)  # the backward loop reads every value
    rng = np.random.default_rng(0)
    xv, hv, wv = rng.normal(size=(4, 3)), rng.normal(size=3), rng.normal(size=(3, 3)) * 0.5
    last, gx, gh, gw = f(xv, hv, wv)
    h = hv
    for row in xv:
        h = np.tanh(h @ wv + row)
    np.testing.assert_allclose(last, h, rtol=1e-10)

    def numeric(k, values):
        grad, eps = np.zeros_like(values[k]), 1e-6
        for i in np.ndindex(values[k].shape):
            up, down = [v.copy() for v in values], [v.copy() for v in values]
            up[k][i] += eps
            down[k][i] -= eps
            grad[i] = (_loss(*up) - _loss(*down)) / (2 * eps)
        return grad

    for k, got in enumerate([gx, gh, gw]):
        np.testing.assert_allclose(got, numeric(k, [xv, hv, wv]), rtol=1e-5, atol=1e-8)


def _loss(xv, hv, wv):
    h = hv
    for row in xv:
        h = np.tanh(h @ wv + row)
    return np.sum(h**2)


def test_check_grad_through_the_last_value():
    def fn(x, h0):
        hs, _ = sn.scan(lambda row, h: sn.tanh(h * row), sequences=x, outputs_info=h0)
        return hs[-1]

    sn.check_grad(fn, [np.linspace(-1, 1, 8).reshape(4, 2), np.array([0.3, -0.7])], rng=0)


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b in ("py", "c")])  # a loop step
def test_the_profile_counts_the_steps_of_a_loop_keeping_no_rows(backend):
    """The steps a call ran were read off the rows a loop keeps; with none kept, off its
    step count and sequences."""
    x = sn.tensor("x", shape=(7, 3), dtype="float64")
    out, _ = sn.scan(lambda xt, h: h * 0.5 + xt, sequences=x, outputs_info=sn.zeros(3))
    f = sn.function([x], out[-1], backend=backend)
    assert _forward_history(f) == [(False,)]
    profile = f.profile(np.ones((7, 3)), repeat=2)
    (note,) = [n for n in profile.notes if "steps per call" in n]
    assert "scan: 7 steps per call" in note, profile.text()
