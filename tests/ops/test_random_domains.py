"""Draw parameters outside their domain are refused as NumPy's Generator refuses them: a
constant when the draw is built (an ArgumentError at the user's line), a scalar known only
when the function runs then (naming the draw and the parameter); what NumPy accepts
(``uniform(1, 1)``, ``normal(0, 0)``, a NaN std) symnb accepts too."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn

REFUSED = [  # (NumPy's call, symnb's, the message)
    (
        lambda g: g.uniform(1, 0),
        lambda r: r.uniform((3,), 1.0, 0.0),
        "uniform: high must be >= low",
    ),
    (lambda g: g.uniform(0, np.inf), lambda r: r.uniform((3,), 0.0, np.inf), "uniform: high - low"),
    (lambda g: g.normal(0, -1), lambda r: r.normal((3,), 0.0, -1.0), "normal: std must be >= 0"),
    (lambda g: g.normal(0, [1, -1]), lambda r: r.normal(None, 0.0, [1.0, -1.0]), "normal: std"),
    (lambda g: g.binomial(-1, 0.5), lambda r: r.binomial((3,), -1, 0.5), "binomial: n"),
    (lambda g: g.binomial(3, 1.5), lambda r: r.binomial((3,), 3, 1.5), "binomial: p"),
    (lambda g: g.binomial(3, np.nan), lambda r: r.binomial((3,), 3, np.nan), "binomial: p"),
    (lambda g: g.binomial(1, [0.5, 2.0]), lambda r: r.binomial(None, 1, [0.5, 2.0]), "binomial: p"),
    (lambda g: g.integers(5, 5), lambda r: r.integers(5, 5), "integers: high"),
    (lambda g: g.integers(5, 3), lambda r: r.integers(5, 3), "integers: high"),
    (lambda g: g.multinomial(-1, [0.5, 0.5]), lambda r: r.multinomial((2,), -1, [0.5, 0.5]), "n"),
]


@pytest.mark.parametrize("numpy_call, symnb_call, message", REFUSED)
def test_constant_parameters_numpy_refuses_are_refused_at_the_users_line(
    numpy_call, symnb_call, message
):
    with pytest.raises((ValueError, OverflowError)):
        numpy_call(np.random.default_rng(0))
    with pytest.raises(sn.ArgumentError, match=message) as info:
        symnb_call(sn.RandomStream(0))  # <- the draw
    assert "test_random_domains.py" in str(info.value)


def test_parameters_numpy_accepts_are_accepted():
    g, rng = np.random.default_rng(0), sn.RandomStream(0)
    assert g.uniform(1, 1) == 1.0 and g.normal(2, 0) == 2.0 and np.isnan(g.normal(0, np.nan))
    draws = [rng.uniform((2,), 1.0, 1.0), rng.normal((2,), 2.0, 0.0), rng.normal((2,), 0.0, np.nan)]
    same, mean, nan = sn.function([], draws)()
    assert np.all(same == 1.0) and np.all(mean == 2.0) and np.all(np.isnan(nan))


def test_integer_parameters_are_checked_as_numpy_truncates_them():
    """An integer parameter given as a float is compared as NumPy reads it, truncated:
    ``integers(2, 2.5)`` is the empty range [2, 2), refused when built (it built, and every
    call failed inside the op), while ``binomial(n=-0.5)`` (n = 0) and ``integers(-0.5, 5,
    dtype="uint8")`` (low = 0) are drawn, as NumPy draws them."""
    g = np.random.default_rng(0)
    for numpy_call, symnb_call, message in [
        (
            lambda g: g.integers(2, 2.5),
            lambda r: r.integers(2, 2.5, size=3),
            r"integers: high \(2\.5, read as 2: NumPy truncates a float bound\) must exceed "
            r"low \(2\)",
        ),
        (
            lambda g: g.integers(-2.5, -2),
            lambda r: r.integers(-2.5, -2),
            r"high \(-2\) must exceed low \(-2\.5, read as -2",
        ),
        (
            lambda g: g.integers([0.0, 1.0], [1.0, 1.5], size=2),
            lambda r: r.integers([0.0, 1.0], [1.0, 1.5]),
            r"high \(\[1\.0, 1\.5\], read as \[1, 1\].*\) must exceed low \(\[0\.0, 1\.0\]\)",
        ),
    ]:
        with pytest.raises(ValueError):
            numpy_call(g)
        with pytest.raises(sn.ArgumentError, match=message) as info:
            symnb_call(sn.RandomStream(0))  # <- the draw
        assert "test_random_domains.py" in str(info.value)
    assert (g.binomial(-0.5, 0.5, size=3) == 0).all() and g.integers(-0.5, 5, dtype="uint8") >= 0
    rng = sn.RandomStream(0)
    draws = [rng.binomial((3,), -0.5, 0.5), rng.integers(-0.5, 5, size=200, dtype="uint8")]
    none, small = sn.function([], draws)()
    assert none.tolist() == [0, 0, 0] and set(small.tolist()) == {0, 1, 2, 3, 4}


@pytest.mark.parametrize("backend", ["py", "c"])
def test_scalar_parameters_known_at_run_time_are_checked_then(backend):
    a, b = sn.scalar("a", dtype="float64"), sn.scalar("b", dtype="float64")
    rng = sn.RandomStream(0)
    z = rng.normal((4,), avg=a, std=b, dtype="float64")
    u = rng.uniform((4,), low=a, high=b, dtype="float64")
    f = sn.function([a, b], [z, u, *sn.grad(sn.sum(z) + sn.sum(u), [a, b])], backend=backend)
    z0, u0, *_ = f(0.0, 0.0)  # std 0 and high == low: NumPy accepts both
    assert np.all(z0 == 0.0) and np.all(u0 == 0.0)
    with pytest.raises(sn.SymnbError, match=r"normal: std must be >= 0, .*got -1\.0"):
        f(-2.0, -1.0)
    with pytest.raises(
        sn.SymnbError, match=r"uniform: high - low must be finite and >= 0.*got -1\.0"
    ):
        f(1.0, 0.0)
    with pytest.raises(
        sn.SymnbError, match=r"uniform: high - low must be finite and >= 0.*got inf"
    ):
        f(0.0, np.inf)
    with pytest.raises(sn.SymnbError, match=r"uniform: high - low .*got nan"):
        f(0.0, np.nan)  # NumPy: OverflowError
    g = sn.function([a, b], sn.RandomStream(0).normal((2,), avg=a, std=b), backend=backend)
    assert np.all(np.isnan(g(0.0, np.nan)))  # a NaN std gives NaN, as in NumPy
