"""The logsumexp row kernel on rows long enough for its chunked, prefetching exp pass: values
against SciPy, NaN/inf rows as NumPy's reference, fused producers, strided rows, threads."""

import numpy as np
import pytest
import scipy.special as sps

import symnb as sn
from symnb.backends.schedule.cpu import PREFETCH_CHUNK as CHUNK
from symnb.ops.reduce import Logsumexp
from tests.helpers import needs_c

pytestmark = needs_c


def _compile(shape, dtype, build=None):
    x = sn.tensor("x", shape=shape, dtype=dtype)
    out = build(x) if build else sn.logsumexp(x, axis=-1)
    f = sn.function([x], out, backend="c")
    assert f.kernels[0].kind == "kernel" and "__builtin_prefetch" in f.kernels[0].source
    return f


@pytest.mark.parametrize("n", [CHUNK - 1, CHUNK, 3 * CHUNK + 5, 4096])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rows_of_every_length_match_scipy(n, dtype, rng):
    x = rng.normal(scale=4, size=(5, n)).astype(dtype)
    got = _compile(x.shape, dtype)(x)
    rtol = 1e-5 if dtype == "float32" else 1e-13
    assert got.dtype == np.dtype(dtype) and got.shape == (5,)
    np.testing.assert_allclose(got, sps.logsumexp(x.astype("float64"), axis=-1), rtol=rtol)


def test_nan_and_infinite_rows_as_the_reference(rng):
    x = rng.normal(size=(6, 3 * CHUNK + 1))
    x[0, 100] = np.nan
    x[1, 7] = np.inf
    x[2, :] = -np.inf
    x[3, 150] = -np.inf
    x[4, 190] = 800.0  # exp overflows without the shift
    got = _compile(x.shape, "float64")(x)
    want = Logsumexp((1,), False).perform(x)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert np.isnan(got[0]) and got[1] == np.inf and got[2] == -np.inf
    assert got[4] == pytest.approx(800.0)


def test_a_fused_producer_and_rows_wider_apart_than_their_length(rng):
    base = rng.normal(size=(40, 300))
    rows = base[:, 10:210]  # row stride 300 elements, row length 200: prefetch one stride on
    f = _compile(rows.shape, "float64", lambda x: sn.logsumexp(2 * x + 1, axis=1))
    np.testing.assert_allclose(f(rows), sps.logsumexp(2 * rows + 1, axis=1), rtol=1e-13)


def test_many_rows_split_between_threads(rng):
    x = rng.normal(size=(2000, 600))  # 1.2M elements: above the parallel threshold
    got = _compile(x.shape, "float64")(x)
    np.testing.assert_allclose(got, sps.logsumexp(x, axis=1), rtol=1e-13)
