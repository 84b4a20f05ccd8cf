"""Values on the threaded paths of the C kernels: index spaces above the thresholds where
OpenMP splits the work (symnb/backends/render/maps.py), reductions over axes that are not
innermost (threads must never share an output element), strided, reversed and broadcast
operands, row kernels over many rows, a packed product's long sum cut into pieces. Each call
repeats, since a race shows in some calls only, on teams of one thread, two and the thread
policy's (a loaded machine changes the team from one call to the next): the bits must not
change with the team.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

import symnb as sn
from symnb.backends.schedule.cpu import PARALLEL_MIN, ROW_PARALLEL_MIN
from tests.helpers import tolerance

#: the team of each call: pinned to one thread, to two, the thread policy's
TEAMS = (1, 2, None, 2, 1)
rng = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def policy():
    """Each test leaves ``sn.config.threads`` as it found it."""
    before = sn.config.threads
    yield
    sn.config.threads = before


def repeated(f, *args):
    """``f(*args)`` on each of TEAMS; every result must be the same as the first, bit for bit
    (a team of two on a machine of one core is clipped to one: the check then only repeats)."""
    results = []
    for team in TEAMS:
        sn.config.threads = team
        results.append(np.array(f(*args), copy=True))
    for team, result in zip(TEAMS[1:], results[1:], strict=True):
        np.testing.assert_array_equal(result, results[0], err_msg=f"team {team} against 1")
    return results[0]


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


def test_a_packed_products_long_sum_cut_into_pieces():
    """A convolution's filter gradient, a packed product (render/contract.h) of a 144 x 32
    result summing 12,544 terms: the sum is cut into pieces by its sizes (not the team), their
    partial results added in piece order."""
    x = rng.standard_normal((16, 16, 28, 28)).astype("float32")
    w = rng.standard_normal((32, 16, 3, 3)).astype("float32")
    xs, ws = sn.tensor("x", x.shape, "float32"), sn.tensor("w", w.shape, "float32")
    y = sn.conv2d(xs, ws, padding="same")
    gs = sn.tensor("g", y.type.shape, "float32")
    g = rng.standard_normal(y.type.shape).astype("float32")
    grad = sn.grad(sn.sum(y * gs), ws)
    f = sn.function([xs, ws, gs], grad, backend="c")
    packed = [k.source for k in f.kernels if k.source and "grad_filters" in str(k.nodes)]
    assert packed and "sn_contract(" in packed[0], "the filter gradient is not packed"
    want = sn.function([xs, ws, gs], grad, backend="py")(x, w, g)
    np.testing.assert_allclose(repeated(f, x, w, g), want, rtol=2e-4, atol=2e-4)
