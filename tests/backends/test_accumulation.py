"""Accumulation precision of float32 reductions over more elements than float32 counts
exactly (2**24): a sum accumulated in float32 stops growing at 2**24 ones, and adding 0.1
2**24 times drifts by percents; NumPy's pairwise sum is within 1e-6. Every reduction that
accumulates (sum, mean, over all axes, along rows and down columns) on every backend."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn

N = 2**24 + 2**22  # past float32's exact integers


def _values(kind):
    if kind == "ones":
        return np.ones(N, np.float32)
    return np.full(N, 0.1, np.float32)


#: name: (graph of a float32 tensor, the shape the values take, NumPy on float64)
REDUCTIONS = {
    "sum": (lambda x: sn.sum(x), (N,), lambda a: a.sum()),
    "mean": (lambda x: sn.mean(x), (N,), lambda a: a.mean()),
    "sum_of_rows": (lambda x: sn.sum(x, axis=1), (2, N // 2), lambda a: a.sum(1)),
    "mean_of_rows": (lambda x: sn.mean(x, axis=-1), (4, N // 4), lambda a: a.mean(-1)),
    "sum_of_squares": (lambda x: sn.sum(x * x), (N,), lambda a: (a * a).sum()),
    "softmax_of_a_row": (lambda x: sn.softmax(x, axis=-1)[:, :4], (1, N), lambda a: _softmax(a)),
    "logsumexp_of_a_row": (
        lambda x: sn.logsumexp(x, axis=-1),
        (1, N),
        lambda a: np.log(np.exp(a).sum(-1)),
    ),
}


def _softmax(a):
    e = np.exp(a - a.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True))[:, :4]


@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_float32_reductions_accumulate_past_2_to_the_24(name, backend):
    graph, shape, reference = REDUCTIONS[name]
    x = sn.tensor("x", shape=shape, dtype="float32")
    f = sn.function([x], graph(x), backend=backend)
    values = _values("tenths").reshape(shape)
    got = f(values)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, reference(values.astype(np.float64)), rtol=1e-6)


def test_float32_sums_down_columns_are_no_worse_than_numpys(backend):
    """Down columns (the reduced axis outermost) each output is its own running sum, as in
    NumPy, which is 4% off for 2**22 tenths here (it does not sum pairwise along a strided
    axis): no backend may be worse than NumPy's float32 answer."""
    x = sn.tensor("x", shape=(N // 4, 4), dtype="float32")
    values = _values("tenths").reshape(N // 4, 4)
    exact = values.astype(np.float64).sum(0)
    numpys = np.abs(values.sum(0) - exact)
    got = sn.function([x], sn.sum(x, axis=0), backend=backend)(values)
    assert np.all(np.abs(got - exact) <= numpys * 1.001), (got, exact, values.sum(0))
