"""RandomStream.poisson: the inverse CDF at one 53-bit uniform an element, exact against
SciPy's quantile; moments of 10^5 draws; the same numbers on every backend; bad lam."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

import symnb as sn
from symnb.ops.random_draws import poisson_quantile
from tests.helpers import available_backends

BACKENDS = ["py", *(b for b in available_backends() if b != "py")]


@pytest.mark.parametrize("lam", [1e-3, 0.5, 5.0, 50.0, 1e4, 1e8])
def test_quantile_is_scipys(lam):
    u = np.random.default_rng(1).random(5000)
    want = scipy.stats.poisson.ppf(u, lam)
    np.testing.assert_array_equal(poisson_quantile(u, lam), want)


@pytest.mark.parametrize("lam", [0.0, 0.5, 5.0, 50.0, 1e4])
def test_mean_and_variance_of_10_5_draws_within_5_standard_errors(lam):
    size = 100_000
    k = sn.function([], sn.RandomStream(2026).poisson((size,), lam))()
    assert k.dtype == np.int64 and k.shape == (size,) and k.min() >= 0
    numpy_k = np.random.default_rng(2026).poisson(lam, size)
    for sample in (k, numpy_k):  # NumPy's draws pass the same bounds
        assert abs(sample.mean() - lam) <= 5 * np.sqrt(lam / size)
        assert abs(sample.var() - lam) <= 5 * np.sqrt((lam + 2 * lam**2) / size)
    if lam == 0:
        assert not k.any()


def test_same_seed_same_numbers_on_every_backend_and_calls_differ():
    lam = sn.tensor("lam", (None,))
    results = {}
    for backend in BACKENDS:
        rng = sn.RandomStream(7)
        f = sn.function([lam], [rng.poisson((3, 4), 2.5), rng.poisson(lam=lam)], backend=backend)
        results[backend] = [f(np.array([0.5, 30.0, 1e5])) for _ in range(2)]
    (a1, b1), (a2, b2) = results["py"]
    assert a1.shape == (3, 4) and b1.shape == (3,) and not np.array_equal(a1, a2)
    for backend, calls in results.items():
        for got, want in zip(calls[0] + calls[1], [a1, b1, a2, b2]):
            assert got.dtype == want.dtype and np.array_equal(got, want), backend
    again = sn.function([], sn.RandomStream(7).poisson((3, 4), 2.5))()
    np.testing.assert_array_equal(again, a1)
    other = sn.function([], sn.RandomStream(8).poisson((3, 4), 2.5))()
    assert not np.array_equal(other, a1)


def test_lam_per_element_broadcasts_and_the_counter_advances_by_the_count():
    rng = sn.RandomStream(5)
    draw = rng.poisson((2, 3), lam=np.array([1.0, 100.0, 1e4]))
    (_, counter) = rng.states[0]
    k = sn.function([], draw)()
    assert k.shape == (2, 3) and counter.get_value() == 6
    assert np.all(np.abs(k - [1.0, 100.0, 1e4]) < 10 * np.sqrt([1.0, 100.0, 1e4]))


def test_bad_lam_and_dtype_are_refused():
    rng = sn.RandomStream(0)
    for lam in (-1.0, np.nan, np.inf):
        with pytest.raises(sn.errors.ArgumentError, match="poisson: lam must be finite") as info:
            rng.poisson((2,), lam)  # <- bad lam
        assert "<- bad lam" in str(info.value) and isinstance(info.value, ValueError)
    with pytest.raises(sn.DTypeError, match="poisson: dtype must be an integer"):
        rng.poisson((2,), 1.0, dtype="float32")
    lam = sn.scalar("lam", dtype="float64")
    f = sn.function([lam], rng.poisson((2,), lam))
    with pytest.raises(sn.SymnbError, match=r"poisson: lam must be finite and >= 0, got -2"):
        f(np.float64(-2.0))
    g = sn.function([], rng.poisson((50,), 1e4, dtype="int8"))
    with pytest.raises(sn.SymnbError, match="poisson: a count drawn"):
        g()
