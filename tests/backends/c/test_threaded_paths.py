"""Values on the threaded paths of the C kernels: index spaces above the thresholds where
OpenMP splits the work (symnb/backends/render/maps.py), reductions over axes that are not
innermost (threads must never share an output element), strided, reversed and broadcast
operands, row kernels over many rows. Each call repeats, since a race shows in some calls only.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

import symnb as sn
from symnb.backends.schedule.cpu import PARALLEL_MIN, ROW_PARALLEL_MIN
from tests.helpers import tolerance

CALLS = 5
rng = np.random.default_rng(7)


def repeated(f, *args):
    """``f(*args)`` CALLS times; every result must be the same as the first, bit for bit."""
    first = np.array(f(*args), copy=True)
    for _ in range(CALLS - 1):
        np.testing.assert_array_equal(f(*args), first)
    return first


def test_the_sizes_here_are_above_the_thresholds():
    assert 400 * 4 * 1000 >= PARALLEL_MIN and 14000 * 80 >= ROW_PARALLEL_MIN <= 11000 * 100


@pytest.mark.parametrize("axis", [(0, 2), (0,), (1,), (2,), (0, 1), (1, 2), None, (-1, 0)])
@pytest.mark.parametrize("kind", ["sum", "max", "mean"])
def test_reductions_over_any_axes_of_a_large_tensor(axis, kind):
    a = rng.standard_normal((400, 4, 1000))
    x = sn.tensor("x", shape=(None, None, None))
    f = sn.function([x], getattr(sn, kind)(sn.exp(x), axis=axis), backend="c")
    want = getattr(np, kind)(np.exp(a), axis=axis)
    np.testing.assert_allclose(repeated(f, a), want, rtol=tolerance("float64", 1e3))


@pytest.mark.parametrize("layout", ["contiguous", "strided", "reversed", "transposed"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_large_elementwise_kernels_on_every_layout(layout, dtype):
    base = rng.standard_normal((1200, 2000)).astype(dtype)
    a = {
        "contiguous": base[:, :1000],
        "strided": base[:, ::2],
        "reversed": base[::-1, ::-2],
        "transposed": base[:1000, :1200].T,
    }[layout]
    b = rng.standard_normal(a.shape[1]).astype(dtype)
    x = sn.tensor("x", shape=(None, None), dtype=dtype)
    y = sn.tensor("y", shape=(None,), dtype=dtype)
    f = sn.function([x, y], sn.tanh(x) * y + sn.exp(-x * x), backend="c")
    want = np.tanh(a) * b + np.exp(-a * a)
    got = repeated(f, a, b)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, want, rtol=tolerance(dtype, 10), atol=tolerance(dtype, 10))


@pytest.mark.parametrize("layout", ["contiguous", "strided rows", "reversed rows", "column"])
def test_row_kernels_over_many_rows(layout):
    base = rng.standard_normal((14000, 160)) * 30
    a = {
        "contiguous": base[:, :80],
        "strided rows": base[:, ::2],
        "reversed rows": base[::-1, ::-2],
        "column": base[:160, :].T,
    }[layout]
    x = sn.tensor("x", shape=(None, None))
    f = sn.function([x], [sn.softmax(x), sn.logsumexp(x, axis=1), sn.log_softmax(x)], backend="c")
    softmax, lse, log_softmax = (repeated(lambda v, k=k: f(v)[k], a) for k in range(3))
    tol = tolerance("float64", 100)
    np.testing.assert_allclose(softmax, special.softmax(a, axis=1), rtol=tol, atol=tol)
    np.testing.assert_allclose(lse, special.logsumexp(a, axis=1), rtol=tol)
    np.testing.assert_allclose(log_softmax, special.log_softmax(a, axis=1), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_crossentropy_and_its_gradient_over_many_rows(dtype):
    logits = (rng.standard_normal((11000, 100)) * 10).astype(dtype)
    labels = rng.integers(0, 100, 11000)
    x = sn.tensor("x", shape=("n", 100), dtype=dtype)
    y = sn.tensor("y", shape=("n",), dtype="int64")
    loss = sn.mean(sn.crossentropy(sn.softmax(x), y))
    f = sn.function([x, y], [loss, sn.grad(loss, x)], backend="c")
    got_loss = repeated(lambda *v: f(*v)[0], logits, labels)
    got_grad = repeated(lambda *v: f(*v)[1], logits, labels)
    z = logits.astype("float64")
    want_grad = (special.softmax(z, axis=1) - np.eye(100)[labels]) / 11000
    want_loss = -special.log_softmax(z, axis=1)[np.arange(11000), labels].mean()
    np.testing.assert_allclose(got_loss, want_loss, rtol=tolerance(dtype, 100))
    np.testing.assert_allclose(
        got_grad, want_grad, rtol=tolerance(dtype, 100), atol=tolerance(dtype, 1) / 11000
    )


def _threaded(f) -> list[bool]:
    """Per kernel of ``f``: whether its source splits rows between threads."""
    return ["#pragma omp parallel" in k.source for k in f.kernels if k.kind == "kernel"]


def test_maps_of_stepping_operands_take_threads_at_fewer_elements():
    """A max-pool over 590k outputs reads four windows views every other element (each
    touching twice the memory per element) and is split between threads; a map of four
    plain float32 arrays over as many elements is not (PARALLEL_MIN: 1M)."""
    n, c = 64, 64
    x = sn.tensor("x", (n, c, 24, 24), "float32")
    pooled = sn.function([x], sn.max_pool2d(x, (2, 2)), backend="c")
    outputs = n * c * 12 * 12
    assert outputs * 9 >= PARALLEL_MIN * 5 and outputs < PARALLEL_MIN
    assert _threaded(pooled) == [True]
    a, b, d = (sn.tensor(name, (outputs,), "float32") for name in "abd")
    assert _threaded(sn.function([a, b, d], a * b + d, backend="c")) == [False]
    xv = rng.standard_normal((n, c, 24, 24)).astype("float32")
    want = xv.reshape(n, c, 12, 2, 12, 2).max(axis=(3, 5))
    np.testing.assert_array_equal(repeated(pooled, xv), want)
