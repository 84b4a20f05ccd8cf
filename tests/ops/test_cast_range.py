"""Every cast over the full range of its target type, on every backend, against NumPy's
``astype``: floats into every integer type with values from the target's minimum to its
maximum (powers of two and their neighbours, the ends, fractions truncated toward zero;
``[2**63, 2**64)`` into uint64), integers into every integer type (wrapping), integers into
floats (rounding), and into bool. A conversion that takes a detour through a narrower type
(float -> int64 -> uint64) is wrong on part of the range and fails here. Values outside the
target's range are not compared: C leaves float -> integer undefined there."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float32", "float64"]


def _int_range_values(dtype) -> list[int]:
    """The target's range by its landmarks: ends, 0 and +-1, every power of two (and its
    neighbours) inside, and a few values spread over the range."""
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    values = {lo, lo + 1, hi, hi - 1, 0, 1, -1, 2, -2}
    for k in range(info.bits + 1):
        for v in (2**k, 2**k - 1, 2**k + 1, -(2**k), -(2**k) + 1, -(2**k) - 1):
            values.add(v)
    spread = np.random.default_rng(info.bits).integers(lo, hi, size=16, dtype=dtype, endpoint=True)
    values |= {int(v) for v in spread}
    return sorted(v for v in values if lo <= v <= hi)


def _float_values_in_range(src, dst) -> np.ndarray:
    """Values of float type ``src`` whose truncation lies in ``dst``'s range: the landmarks
    that ``src`` holds exactly or rounds into range, and fractions next to them."""
    info = np.iinfo(dst)
    lo, hi = int(info.min), int(info.max)
    out = []
    for v in _int_range_values(dst):
        f = np.array(v, dtype=np.float64).astype(src)
        if np.isfinite(f) and lo <= int(f) <= hi:
            out.append(f)
        for frac in (0.5, 0.25, -0.5, -0.75):
            g = np.array(v + frac, dtype=np.float64).astype(src)
            if np.isfinite(g) and lo <= np.trunc(float(g)) <= hi and lo <= int(g) <= hi:
                out.append(g)
    return np.unique(np.array(out, dtype=src))


def _run(cases, backend):
    """``[(values, dtype), ...]``: each values array cast to its dtype, by one function."""
    xs = [sn.vector(f"x{i}", shape=(len(v),), dtype=v.dtype) for i, (v, _) in enumerate(cases)]
    outs = [sn.cast(x, dtype) for x, (_, dtype) in zip(xs, cases)]
    return sn.function(xs, outs, backend=backend)(*[v for v, _ in cases])


def _check(cases, backend):
    for got, (values, dtype) in zip(_run(cases, backend), cases, strict=True):
        with np.errstate(all="ignore"):
            want = values.astype(dtype)
        assert got.dtype == np.dtype(dtype)
        wrong = np.flatnonzero(got != want)
        assert wrong.size == 0, (dtype, [(values[i], got[i], want[i]) for i in wrong[:8]])


@pytest.mark.parametrize("src", FLOATS)
def test_floats_into_every_integer_type_over_its_full_range(src, backend):
    _check([(_float_values_in_range(src, dst), dst) for dst in INTS], backend)


def test_uint64_upper_half_is_reached_from_floats(backend):
    """The values no int64 holds: [2**63, 2**64) (float64 spacing there is 2048)."""
    values = np.array([2.0**63, 2.0**63 + 2048, 1.5 * 2.0**63, 2.0**64 - 2048], np.float64)
    _check([(values, "uint64"), (values.astype(np.float32)[:3], "uint64")], backend)


@pytest.mark.parametrize("src", INTS)
def test_integers_into_every_integer_type_wrap_like_numpy(src, backend):
    values = np.array(_int_range_values(src), dtype=src)
    _check([(values, dst) for dst in INTS], backend)


@pytest.mark.parametrize("src", INTS)
def test_integers_into_floats_and_bool_round_like_numpy(src, backend):
    values = np.array(_int_range_values(src), dtype=src)
    _check([(values, dst) for dst in [*FLOATS, "bool"]], backend)


@pytest.mark.parametrize("src", [*FLOATS, "float16"])
def test_floats_into_floats_over_the_targets_range(src, backend):
    cases = []
    for dst in [d for d in [*FLOATS, "float16"] if d != src]:
        info = np.finfo(dst)
        big = float(min(info.max, np.finfo(src).max))
        tiny = float(max(info.smallest_subnormal, np.finfo(src).smallest_subnormal))
        values = np.array(
            [
                0.0,
                -0.0,
                tiny,
                -tiny,
                float(info.tiny),
                1.0,
                -1.0,
                1 / 3,
                big,
                -big,
                np.inf,
                -np.inf,
                np.nan,
            ],
            dtype=src,
        )
        cases.append((values, dst))
    for got, (values, dst) in zip(_run(cases, backend), cases, strict=True):
        np.testing.assert_array_equal(got, values.astype(dst))
        assert np.array_equal(np.signbit(got), np.signbit(values.astype(dst))), dst


@pytest.mark.parametrize("src", FLOATS)
def test_floats_into_bool(src, backend):
    values = np.array([0.0, -0.0, 0.5, -1e-30, np.inf, np.nan, 3.0], dtype=src)
    _check([(values, "bool")], backend)


@pytest.mark.parametrize("target", ["uint8", "uint16", "uint64"])
def test_floats_beyond_int32_and_nan_into_unsigned_match_numpys_loops(target, backend):
    """Invalid casts, but NumPy 2.4 gives one answer in every loop: 0 for 8/16-bit unsigned
    targets (the low bits of the int32 conversion), 2**63 for NaN into uint64."""
    values = [3000000007.0, -3000000007.0, 1e10 + 3, 2.5e9, -5.0, 70000.0, np.nan, -np.inf]
    v = np.array(values, np.float64)
    x = sn.tensor("x", shape=(len(v),), dtype="float64")
    got = sn.function([x], [sn.cast(x, target), sn.cast(x[::-1] * 1, target)], backend=backend)(v)
    with np.errstate(invalid="ignore"):
        want = [v.astype(target), v[::-1].astype(target)]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
