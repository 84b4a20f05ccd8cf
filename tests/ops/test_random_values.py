"""The values of sn.RandomStream's draws against NumPy: the same numbers on every backend
whatever the parameters' dtype, uniforms of every float dtype in [0, 1), Bernoulli draws with
a float16 probability, the documented sum tolerance of probabilities, clear refusals."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import symnb as sn
from symnb.ops.philox import below, seed_key, split_key, uniform53, words_at
from tests.helpers import available_backends

BACKENDS = ["py", *(b for b in available_backends() if b != "py")]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_uniform_with_float32_parameters_is_the_same_on_every_backend(dtype):
    """The kernels compute ``low + (high - low) * u`` in float64 from the converted
    parameters; the reference must too, or float32 parameters give other numbers on "py"."""
    got = {}
    for backend in BACKENDS:
        rng = sn.RandomStream(3)
        lo, hi = sn.scalar("lo", dtype="float32"), sn.scalar("hi", dtype="float32")
        draw = rng.uniform((4000,), low=lo, high=hi, dtype=dtype)
        f = sn.function([lo, hi], draw, backend=backend)
        got[backend] = f(np.float32(0.1), np.float32(0.7))
    for backend in BACKENDS:
        assert got[backend].dtype == dtype and np.array_equal(got[backend], got["py"]), backend
    if dtype == "float64":  # NumPy's float64 arithmetic on the 53-bit uniforms
        rng = sn.RandomStream(3)
        draw = rng.uniform((4000,), dtype="float64")
        key, counter = (v.get_value() for v in rng.states[0])
        words = words_at(np.arange(4000, dtype=np.uint64), (key & 0xFFFFFFFF, key >> 32), counter)
        u = uniform53(words[0], words[1])
        np.testing.assert_array_equal(sn.function([], draw)(), u)
        low, high = np.float64(np.float32(0.1)), np.float64(np.float32(0.7))
        np.testing.assert_array_equal(got["py"], low + (high - low) * u)


@pytest.mark.parametrize("dtype, bits", [("float16", 11), ("float32", 24), ("float64", 53)])
def test_uniform_of_every_float_dtype_lies_in_the_unit_interval(dtype, bits):
    """As many random bits as the dtype holds: every value is a multiple of 2**-bits below 1
    (a 53-bit value rounded to float16 was 1.0 once in 4096 draws)."""
    results = {}
    for backend in BACKENDS:
        draw = sn.RandomStream(0).uniform((100_000,), dtype=dtype)
        results[backend] = sn.function([], draw, backend=backend)()
    u = results["py"]
    assert u.dtype == dtype and u.min() >= 0 and u.max() < 1
    steps = u.astype(np.float64) * 2.0**bits
    assert np.array_equal(steps, np.floor(steps))
    for backend, got in results.items():
        assert np.array_equal(got, u), backend
    if dtype == "float16":  # every one of the 2048 values, evenly (chi-square(2047), 99.9%)
        counts = np.bincount(steps.astype(np.int64), minlength=2048)
        expected = counts.sum() / 2048
        assert ((counts - expected) ** 2 / expected).sum() < 2290


@pytest.mark.parametrize("backend", BACKENDS)
def test_bernoulli_with_a_float16_probability_per_element(backend):
    """``binomial(p.shape, 1, p)`` compares a 53-bit uniform with p: p = 1 always gives 1,
    p = 0 never, and a small float16 p keeps its probability (not rounded up to 2**-11)."""
    p = sn.vector("p", dtype="float16")
    rng = sn.RandomStream(5)
    f = sn.function([p], rng.binomial(p.shape, 1, p, dtype="int8"), backend=backend)
    n = 200_000
    for value in (1.0, 0.0, 0.3, 1e-4):
        prob = float(np.float16(value))
        got = f(np.full(n, value, np.float16))
        assert got.dtype == np.int8 and set(np.unique(got)) <= {0, 1}
        se = np.sqrt(prob * (1 - prob) / n)
        assert abs(got.mean() - prob) <= 5 * se, (value, got.mean())


def test_probabilities_sum_to_one_within_the_documented_tolerance():
    """docs/random.md: within 1e-6 for float64, 1e-4 for float32 (the default rtol of
    np.isclose let float64 p off by 1e-5 through); NumPy refuses 1 + 8e-6 too."""
    off = np.array([0.3, 0.3, 0.4 + 8e-6])
    with pytest.raises(ValueError, match="do not sum to 1"):
        np.random.default_rng(0).choice(3, 4, p=off)
    rng = sn.RandomStream(0)
    p, rows = sn.vector("p", dtype="float64"), sn.matrix("P", dtype="float64")
    choose = sn.function([p], rng.choice(3, (4,), p=p))
    counts = sn.function([rows], rng.multinomial(n=3, pvals=rows))
    with pytest.raises(sn.SymnbError, match=r"sum to 1 \(within 1e-06\).*1\.000008"):
        choose(off)
    with pytest.raises(sn.SymnbError, match="row 0 sums to 1.00001"):
        counts(off[None, :])
    with pytest.raises(ValueError, match="pvals must sum to 1"):
        rng.multinomial((2,), n=3, pvals=off)  # known when built
    close = np.array([0.3, 0.3, 0.4 + 8e-7])
    assert choose(close).shape == (4,) and counts(close[None, :]).sum() == 3
    p32, rows32 = sn.vector("p", dtype="float32"), sn.matrix("P", dtype="float32")
    choose32 = sn.function([p32], rng.choice(3, (4,), p=p32))
    counts32 = sn.function([rows32], rng.multinomial(n=3, pvals=rows32))
    assert choose32(np.float32([0.3, 0.3, 0.40005])).shape == (4,)
    assert counts32(np.float32([[0.3, 0.3, 0.40005]])).sum() == 3
    with pytest.raises(sn.SymnbError, match=r"within 0\.0001"):
        choose32(np.float32([0.3, 0.3, 0.4003]))


@pytest.mark.parametrize("x", [3.0, np.array(4), np.array(2.5)])
def test_permutation_of_a_0d_value_that_is_not_an_int_is_refused_clearly(x):
    """NumPy permutes range(n) for an int n and refuses 0-d arrays and floats (AxisError);
    the error names permutation and x, at the user's line, not an internal shape vector."""
    with pytest.raises(ValueError):
        np.random.default_rng(0).permutation(x)
    rng = sn.RandomStream(0)
    with pytest.raises(sn.ShapeError, match=r"permutation: x = .* has no axis to permute") as e:
        rng.permutation(x)  # <- the 0-d value
    assert "<- the 0-d value" in str(e.value)
    assert len(rng.states) == 0  # no state left behind by the refused draw
    assert sorted(sn.function([], rng.permutation(np.int64(4)))().tolist()) == [0, 1, 2, 3]


def _below_by_python_ints(positions, span, key, counter):
    """Lemire's rule written with Python's integers: words 0-1, words 2-3, then the block
    again under derived keys, the first 64 bits x whose product's low half passes."""
    words = [[int(v) for v in w] for w in words_at(positions, key, counter)]
    joined, out = int(key[0]) | int(key[1]) << 32, []
    for i in range(len(positions)):
        tries, round_ = [(words[0][i], words[1][i]), (words[2][i], words[3][i])], 0
        while True:
            products = [(h << 32 | lo) * span for h, lo in tries]
            hit = next((m for m in products if m % 2**64 >= (2**64 - span) % span), None)
            if hit is not None:
                out.append(hit >> 64)
                break
            round_ += 1
            again = words_at(positions[i : i + 1], split_key(seed_key(joined, round_)), counter)
            tries = [(int(again[0][0]), int(again[1][0])), (int(again[2][0]), int(again[3][0]))]
    return np.array(out, np.uint64)


@pytest.mark.parametrize("span", [1, 10, 2**40, 3 * 2**61, 2**63 + 1, 2**64 - 1])
def test_bounded_integers_follow_lemires_rule(span):
    """``below``: x * span >> 64, rejecting the x that would bias it (2**63 + 1 rejects half
    the tries, so elements reach the derived keys' blocks)."""
    key, counter = split_key(np.uint64(seed_key(7, 0))), np.uint64(2**32 - 5)
    positions = np.arange(3000, dtype=np.uint64)
    got = below(positions, span, key, counter)
    assert got.max() < span
    np.testing.assert_array_equal(got, _below_by_python_ints(positions, span, key, counter))


def test_integers_over_a_wide_range_are_unbiased():
    """integers(0, 3 * 2**61) by 64 bits modulo the range gave P(x < 2**62) = 0.75, not 2/3."""
    n = 200_000
    got = sn.function([], sn.RandomStream(1).integers(0, 3 * 2**61, size=(n,)))()
    assert abs(np.mean(got < 2**62) - 2 / 3) < 5 * np.sqrt(2 / 9 / n)
    full = sn.function([], sn.RandomStream(2).integers(-(2**63), 2**63 - 1, size=(n,)))()
    assert abs(np.mean(full < 0) - 0.5) < 5 * np.sqrt(0.25 / n)


@pytest.mark.parametrize("low, high", [(-1e308, 1e308), (0.0, np.inf), (np.nan, 1.0)])
def test_uniform_bounds_whose_difference_is_not_finite_are_refused(low, high):
    """NumPy raises OverflowError; the draw gave inf (or nan) for every number."""
    with pytest.raises(OverflowError):
        np.random.default_rng(0).uniform(low, high)
    rng = sn.RandomStream(0)
    with pytest.raises(sn.ArgumentError, match=r"uniform: high - low must be a finite") as e:
        rng.uniform((3,), low=low, high=high)  # <- the bounds
    assert "<- the bounds" in str(e.value) and not rng.states
    wide = sn.function([], rng.uniform((1000,), low=-1e307, high=1e307))()
    assert np.all(np.isfinite(wide)) and wide.min() < 0 < wide.max()


def test_an_unpickled_function_continues_the_stream_until_its_worker_reseeds_it():
    """docs/random.md: a copy draws the parent's next numbers; the stream pickled with it
    reseeds the copy alone."""
    rng = sn.RandomStream(3)
    f = sn.function([], rng.uniform((3,), dtype="float64"))
    f()
    copy, copy_rng = pickle.loads(pickle.dumps((f, rng)))
    alone = pickle.loads(pickle.dumps(f))
    same = copy()
    np.testing.assert_array_equal(alone(), same)
    np.testing.assert_array_equal(f(), same)  # the parent's next call: the same numbers
    copy_rng.seed(100)
    reseeded = copy()
    fresh = sn.function([], sn.RandomStream(100).uniform((3,), dtype="float64"))
    np.testing.assert_array_equal(reseeded, fresh())
    assert not np.array_equal(reseeded, f())
