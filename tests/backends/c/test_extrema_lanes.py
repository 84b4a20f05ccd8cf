"""Float max/min reductions in explicit lanes (``Walk.extremum_loop``): clang vectorises no float
max/min reduction (LLVM does only where it may assume no NaNs), so the C dialect spells them
for clang as lanes of the schedule's ``lane_bytes`` (blocks of L elements, the last block re-run
over the row's last L elements, NaN flags beside the lanes, the lanes halved into one), and
keeps the declared SIMD reduction for GCC. NumPy's results exactly: NaN anywhere in a row, rows
of only the identity, rows shorter than the lanes, rows not a multiple of L, strided rows. CI
runs this file under clang too, where the lanes are what runs."""

import numpy as np
import pytest

import symnb as sn
from symnb.backends.c.dialect import CDialect
from symnb.backends.kernels.lowering import lower
from symnb.backends.schedule import cpu

LANE_BYTES = cpu.EXTREMA_LANE_BYTES
LENGTHS = [1, 5, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 100, 257]


def lanes(dtype: str) -> int:
    return LANE_BYTES // np.dtype(dtype).itemsize


def rows(n: int, dtype: str) -> np.ndarray:
    """Rows of ``n``: plain, NaN first, NaN last, NaN in the re-run tail, NaN inside the lane
    body, only -inf, only +inf, -inf and NaN, one NaN among +inf."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal((9, n)).astype(dtype)
    a[1, 0] = np.nan
    a[2, n - 1] = np.nan
    a[3, max(n - 2, 0)] = np.nan
    a[4, n // 2] = np.nan
    a[5, :] = -np.inf
    a[6, :] = np.inf
    a[7, :] = -np.inf
    a[7, n // 3] = np.nan
    a[8, :] = np.inf
    a[8, n - 1] = np.nan
    return a


def expect(got, want):
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["max", "min"])
def test_rows_match_numpy(dtype, kind):
    x = sn.matrix("x", dtype=dtype)
    along = sn.function([x], getattr(sn, kind)(x, axis=1), backend="c")
    across = sn.function([x], getattr(sn, kind)(x, axis=0), backend="c")
    whole = sn.function([x], getattr(sn, kind)(x), backend="c")
    for n in LENGTHS:
        a = rows(n, dtype)
        for view in (a, a[:, ::2], a[::-1, ::-3], np.asfortranarray(a)):
            if view.shape[1] == 0:
                continue
            want = getattr(np, kind)(view, axis=1)
            expect(along(view), want)
            expect(across(view.T), getattr(np, kind)(view.T, axis=0))
            expect(whole(view), getattr(np, kind)(view))
            expect(whole(view[5:7]), getattr(np, kind)(view[5:7]))  # only +-inf: no NaN


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_row_programs_max_pass(dtype):
    """softmax's and logsumexp's max pass: NaN and infinite rows as NumPy (and scipy's
    logsumexp) give them."""
    x = sn.matrix("x", dtype=dtype)
    f = sn.function([x], [sn.softmax(x, axis=1), sn.logsumexp(x, axis=1)], backend="c")
    rtol = 1e-5 if dtype == "float32" else 1e-13
    for n in LENGTHS:
        a = rows(n, dtype)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            m = a.max(axis=1, keepdims=True)
            e = np.exp(a - m)
            s = e.sum(axis=1, keepdims=True)
            shift = np.where(np.isfinite(m), m, 0)  # scipy's logsumexp: rows of -inf give -inf
            want_lse = (shift + np.log(np.exp(a - shift).sum(axis=1, keepdims=True)))[:, 0]
            want_soft = e / s
        soft, lse = f(a)
        np.testing.assert_allclose(soft, want_soft, rtol=rtol, equal_nan=True)
        np.testing.assert_allclose(lse, want_lse, rtol=rtol, equal_nan=True)
        assert np.array_equal(np.isnan(lse), np.isnan(want_lse))


def test_signed_zeros():
    """Rows of zeros of either sign reduce to a zero, as before."""
    x = sn.matrix("x")
    f = sn.function([x], [sn.max(x, axis=1), sn.min(x, axis=1)], backend="c")
    a = np.zeros((3, 100))
    a[1] = -0.0
    a[2, ::2] = -0.0
    hi, lo = f(a)
    assert (hi == 0).all() and (lo == 0).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["max", "min"])
def test_source_has_lanes_for_clang(dtype, kind):
    """The row reduction: lanes of ``lane_bytes`` under clang, the declared reduction else."""
    x = sn.matrix("x", dtype=dtype)
    f = sn.function([x], getattr(sn, kind)(x, axis=1), backend="c")
    (source,) = [k.source for k in f.kernels if k.kind == "kernel"]
    n, flag = lanes(dtype), f"int{8 * np.dtype(dtype).itemsize}_t"
    t = "float" if dtype == "float32" else "double"
    assert "#if defined(__clang__)" in source
    assert f"{t} lane[{n}]; {flag} nl[{n}];" in source
    assert f": n - {n};" in source  # the last block re-run over the row's last L elements
    assert f"reduction(SN_OMP_{kind.upper()}:acc)" in source  # GCC's form, after #else
    assert source.count("lane[k] = acc;") == 2  # flat and strided rows


def test_row_program_source_and_schedule():
    x = sn.matrix("x", dtype="float32")
    f = sn.function([x], sn.softmax(x, axis=1), backend="c")
    (source,) = [k.source for k in f.kernels if k.kind == "kernel"]
    assert "float lane[32]; int32_t nl[32];" in source
    kernel = lower(sn.softmax(x, axis=1).owner, CDialect()).kernel
    assert cpu.schedule(kernel, CDialect()).lane_bytes == LANE_BYTES


def test_integers_and_sums_have_no_lanes():
    i = sn.matrix("i", dtype="int32")
    x = sn.matrix("x")
    for out in (sn.max(i, axis=1), sn.sum(x, axis=1)):
        f = sn.function([out.owner.inputs[0]], out, backend="c")
        (source,) = [k.source for k in f.kernels if k.kind == "kernel"]
        assert "lane[" not in source and "#if defined(__clang__)" not in source
