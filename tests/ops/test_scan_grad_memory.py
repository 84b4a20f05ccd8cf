"""The gradient of a scan holds no more copies of the steps' values than it reads: the
gradient of ``hs[-1]`` starts the backward loop's carry (no ``(T, ...)`` array of zeros
with the last row set, read row by row), and a sequence the loop read every row of gets the
backward loop's rows as its gradient (no zeros of its size written into)."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from symnb.control.scan import Scan
from symnb.ops.broadcast import Alloc
from symnb.ops.index import IncSubtensor
from tests.helpers import available_backends

BACKENDS = available_backends()


def _big_arrays_of_zeros_or_increments(f, rank: int) -> list:
    """The nodes of f's graph making zeros or increments of rank ``rank`` (a history's)."""
    return [
        str(n.op)
        for n in f.graph.toposort()
        if isinstance(n.op, (Alloc, IncSubtensor)) and n.outputs[0].type.ndim == rank
    ]


def _rnn(x, h0, w):
    hs, _ = sn.scan(
        lambda row, h, w: sn.tanh(h @ w + row), sequences=x, outputs_info=h0, non_sequences=w
    )
    return hs


def _numpy_rnn(xv, hv, wv):
    hs, h = [], hv
    for row in xv:
        h = np.tanh(h @ wv + row)
        hs.append(h)
    return np.array(hs)


def _numeric(loss, values, k, eps=1e-6):
    grad = np.zeros_like(values[k])
    for i in np.ndindex(values[k].shape):
        up, down = [v.copy() for v in values], [v.copy() for v in values]
        up[k][i] += eps
        down[k][i] -= eps
        grad[i] = (loss(*up) - loss(*down)) / (2 * eps)
    return grad


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_gradient_of_the_last_value_reads_no_array_of_zeros(backend):
    x = sn.tensor("x", shape=("T", 3), dtype="float64")
    h0 = sn.tensor("h0", shape=(2, 3), dtype="float64")
    w = sn.tensor("w", shape=(3, 3), dtype="float64")
    loss = sn.sum(_rnn(x, h0, w)[-1] ** 2)
    f = sn.function([x, h0, w], sn.grad(loss, [x, h0, w]), backend=backend)
    assert _big_arrays_of_zeros_or_increments(f, 3) == []
    rng = np.random.default_rng(1)
    values = [rng.normal(size=(5, 3)), rng.normal(size=(2, 3)), rng.normal(size=(3, 3)) * 0.5]

    def numpy_loss(xv, hv, wv):
        return np.sum(_numpy_rnn(xv, hv, wv)[-1] ** 2)

    for k, got in enumerate(f(*values)):
        np.testing.assert_allclose(got, _numeric(numpy_loss, values, k), rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_sequence_read_whole_gets_the_backward_rows_as_its_gradient(backend):
    x = sn.tensor("x", shape=("T", 3), dtype="float64")
    h0 = sn.tensor("h0", shape=(3,), dtype="float64")
    w = sn.tensor("w", shape=(3, 3), dtype="float64")
    gx = sn.grad(sn.sum(_rnn(x, h0, w) ** 2), x)
    assert gx.type.shape == ("T", 3)  # the sequence's type, its length named
    f = sn.function([x, h0, w], gx, backend=backend)
    assert _big_arrays_of_zeros_or_increments(f, 2) == []
    rng = np.random.default_rng(2)
    values = [rng.normal(size=(4, 3)), rng.normal(size=3), rng.normal(size=(3, 3)) * 0.5]

    def numpy_loss(xv, hv, wv):
        return np.sum(_numpy_rnn(xv, hv, wv) ** 2)

    np.testing.assert_allclose(f(*values), _numeric(numpy_loss, values, 0), rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_shorter_or_truncated_loop_still_writes_its_rows_into_zeros(backend):
    """The loop ran fewer steps than the sequence has rows (n_steps), or backpropagates
    through the last 2 only: the other rows' gradient is zeros."""
    x = sn.tensor("x", shape=("T", 3), dtype="float64")
    h0 = sn.tensor("h0", shape=(3,), dtype="float64")
    hs, _ = sn.scan(lambda row, h: sn.tanh(h + row), sequences=x, outputs_info=h0, n_steps=3)
    cut, _ = sn.scan(
        lambda row, h: sn.tanh(h + row), sequences=x, outputs_info=h0, truncate_gradient=2
    )
    f = sn.function([x, h0], [sn.grad(sn.sum(hs[-1]), x), sn.grad(sn.sum(cut), x)], backend=backend)
    xv, hv = np.linspace(-1, 1, 15).reshape(5, 3), np.zeros(3)
    short, truncated = f(xv, hv)

    def numpy_loss(xv, hv):
        return np.sum(_numpy_rnn(xv[:3], hv, np.eye(3))[-1])

    np.testing.assert_allclose(short, _numeric(numpy_loss, [xv, hv], 0), rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(short[3:], 0.0)
    np.testing.assert_array_equal(truncated[:3], 0.0)
    assert np.all(truncated[3:] != 0.0)


def test_a_loop_counting_a_size_of_the_graph_has_that_many_rows():
    """``n_steps=x.shape[0]``: the loop's values have x's first dim (the backward loop of a
    gradient counts its steps so)."""
    x = sn.tensor("x", shape=("T", 3), dtype="float64")
    h0 = sn.tensor("h0", shape=(3,), dtype="float64")
    hs, _ = sn.scan(lambda h: h * 2.0, outputs_info=h0, n_steps=x.shape[0])
    assert hs.type.shape == ("T", 3)
    n = sn.tensor("n", shape=(), dtype="int64")
    free, _ = sn.scan(lambda h: h * 2.0, outputs_info=h0, n_steps=n)
    assert free.type.shape == (None, 3)
    f = sn.function([x, h0], hs, backend="py")
    np.testing.assert_array_equal(f(np.zeros((2, 3)), np.ones(3)), [[2.0] * 3, [4.0] * 3])
    assert [n.op for n in f.graph.toposort() if isinstance(n.op, Scan)]
