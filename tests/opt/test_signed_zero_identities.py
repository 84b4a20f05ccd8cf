"""The identity rules that "stable" runs are exact for every value, signed zeros and complex
infinities included: ``x - (-0.0)`` is ``x + 0.0`` (-0.0 becomes +0.0), and a complex
``x * 1`` is a complex product (``(inf+0j) * 1`` is ``inf+nanj``), so neither is ``x``."""

import warnings

import numpy as np
import pytest

import symnb as sn

REALS = np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, -2.5, 3.0])
PARTS = [-0.0, 0.0, np.inf, -np.inf, np.nan, 1.5]
COMPLEXES = np.array([complex(r, i) for r in PARTS for i in PARTS])

#: (expression, dtype, the rule "fast" and "stable" fire, or None where no rule may fire)
CASES = [
    (lambda x: x - (-0.0), "float64", None),
    (lambda x: x - np.float32(-0.0), "float32", None),
    (lambda x: x - np.array([-0.0]), "float64", None),
    (lambda x: x - 0.0, "float64", "sub_zero"),
    (lambda x: x - 0, "float32", "sub_zero"),
    (lambda x: x - np.complex128(complex(0.0, -0.0)), "complex128", None),
    (lambda x: x - np.complex128(0), "complex128", "sub_zero"),
    (lambda x: x * 1, "float64", "mul_by_one"),
    (lambda x: x / 1, "float32", "div_by_one"),
    (lambda x: x**1, "float64", "pow_one"),
    (lambda x: x * 1, "complex128", None),
    (lambda x: x * 1.0, "complex64", None),
    (lambda x: x / 1, "complex128", None),
    (lambda x: x**1, "complex128", None),
    (lambda x: np.negative(np.negative(x)), "complex128", "neg_of_neg"),
    # x + 0 makes an imaginary part of -0.0 +0.0 (the side of sqrt's and log's branch cut):
    # not even "fast" drops it for complex x
    (lambda x: x + 0, "complex128", None),
    (lambda x: 0.0 + x, "complex64", None),
    (lambda x: x + np.complex128(0), "complex128", None),
]


def same_bits(got, want) -> bool:
    """Equal values, NaN where NumPy has NaN, and the sign of every number (a NaN's sign
    means nothing), for the real and imaginary parts alike."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        nan = np.isnan(w)
        if not np.array_equal(np.isnan(g), nan):
            return False
        g, w = g[~nan], w[~nan]
        if not (np.array_equal(g, w) and np.array_equal(np.signbit(g), np.signbit(w))):
            return False
    return True


@pytest.mark.parametrize("mode", ["stable", "fast"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_identity_rules_keep_numpys_signed_zeros_and_complex_values(case, mode):
    build, dtype, rule = CASES[case]
    values = (COMPLEXES if dtype.startswith("complex") else REALS).astype(dtype)
    x = sn.tensor("x", shape=(len(values),), dtype=dtype)
    f = sn.function([x], build(x), backend="py", optimize=mode)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want = build(values)
        got = f(values)
    assert same_bits(got, want), (mode, dtype, got, want)
    counts = f.rewrites.counts()
    if rule is None:
        assert not counts, counts
    else:
        assert counts == {rule: 1}, counts


@pytest.mark.parametrize("zero", [-0.0, np.float32(-0.0)])
def test_adding_negative_zero_is_exact_and_adding_zero_is_not(zero):
    """x + (-0.0) is x for every x (add_zero may drop it); x + 0.0 makes -0.0 +0.0, so
    add_zero is ieee=False and "stable" keeps it."""
    x = sn.tensor("x", shape=(len(REALS),), dtype=np.asarray(zero).dtype)
    values = REALS.astype(x.type.dtype)
    with np.errstate(all="ignore"):
        for mode in ("stable", "fast"):
            f = sn.function([x], x + zero, backend="py", optimize=mode)
            assert same_bits(f(values), values + zero)
        stable = sn.function([x], x + 0.0, backend="py", optimize="stable")
        assert same_bits(stable(values), values + 0.0)
        assert np.signbit(stable(values)[0]) == np.False_
