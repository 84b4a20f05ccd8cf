"""float64 sums on backend "c" are about as accurate as NumPy's pairwise sum: blocks of
``cpu.SUM_BLOCK`` elements, their sums combined with compensation (a reduction kernel's rows;
a row program's passes keep one accumulator). Errors are measured against ``math.fsum``."""

import math

import numpy as np
import pytest

import symnb as sn
from tests.helpers import needs_c

pytestmark = needs_c


def ulps(got, exact) -> float:
    """|got - exact| in units of the last place at ``exact`` (float64)."""
    return float(np.max(np.abs(np.asarray(got) - exact) / np.spacing(np.abs(exact))))


@pytest.fixture(scope="module")
def rows():
    """Rows without special structure: an offset and noise (a long row's one accumulator
    drifts by tens of ulps; NumPy's pairwise sum by one or two)."""
    return 3.0 + np.random.default_rng(7).standard_normal((4, 1_000_000))


def test_float64_sums_are_within_a_few_ulps(rows):
    x, m = sn.tensor("x", (None,), "float64"), sn.tensor("m", (None, None), "float64")
    whole = sn.function([x], [sn.sum(x), sn.mean(x)], backend="c")
    per_row = sn.function([m], sn.sum(m, axis=1), backend="c")
    flat = rows.ravel()
    exact = math.fsum(flat)
    total, mean = whole(flat)
    assert ulps(total, exact) <= 2, (ulps(total, exact), ulps(flat.sum(), exact))
    assert ulps(mean, exact / flat.size) <= 2
    exact_rows = np.array([math.fsum(r) for r in rows])
    got = per_row(rows)
    assert ulps(got, exact_rows) <= 2, (ulps(got, exact_rows), ulps(rows.sum(1), exact_rows))


def test_float64_row_programs_keep_one_accumulator(rows):
    """logsumexp's sum of exponentials (a row program's pass) adds in one accumulator: its
    terms are positive, so the error grows slowly (a few ulps over 10^6 elements, where
    blocks cost W6 5-8%); this bounds it."""
    m = sn.tensor("m", (None, None), "float64")
    got = sn.function([m], sn.logsumexp(m, axis=1), backend="c")(rows)
    top = rows.max(axis=1)
    exact = np.array([t + math.log(math.fsum(np.exp(r - t))) for r, t in zip(rows, top)])
    assert ulps(got, exact) <= 16, ulps(got, exact)


@pytest.mark.parametrize(
    "values",
    [[1.0, np.inf, 2.0], [np.inf, -np.inf], [1.0, np.nan], [1e308, 1e308, -1e308], [-np.inf]],
)
def test_compensated_sums_keep_infinities_and_nans(values):
    """The compensation term is dropped once the total is not finite: inf, -inf and NaN as
    NumPy's sum gives them (also across blocks)."""
    data = np.repeat(np.array(values, "float64"), 700)
    x = sn.tensor("x", (None,), "float64")
    f = sn.function([x], [sn.sum(x), sn.logsumexp(x)], backend="c")
    total, lse = f(data)
    with np.errstate(all="ignore"):
        np.testing.assert_equal(total, data.sum())
        np.testing.assert_equal(lse, np.logaddexp.reduce(data))
