"""Vectorised math (glibc libmvec) stays within 4 ulp of a correctly rounded reference.

float64 results are compared with long double (x87, 64-bit mantissa) evaluations, float32
results with float64 ones rounded to float32. The arrays are long enough for the SIMD path.
"""

import numpy as np
import pytest

import symnb as sn

MAX_ULP = 4
#: name -> (symbolic, reference, float64 range, float32 range)
CASES = {
    "exp": (sn.exp, np.exp, (-700, 700), (-80, 80)),
    "log": (sn.log, np.log, (1e-300, 1e300), (1e-30, 1e30)),
    "sin": (sn.sin, np.sin, (-100, 100), (-100, 100)),
    "cos": (sn.cos, np.cos, (-100, 100), (-100, 100)),
    "tanh": (sn.tanh, np.tanh, (-20, 20), (-10, 10)),
    "log1p": (sn.log1p, np.log1p, (-0.99, 1e6), (-0.99, 1e6)),
}


def ulp_error(got: np.ndarray, exact: np.ndarray) -> float:
    """|got - exact| in units of the last place of ``got``'s dtype at ``exact``."""
    dtype = got.dtype
    rounded = exact.astype(dtype)
    spacing = np.spacing(np.abs(rounded)).astype(np.longdouble)
    return float(np.max(np.abs(got.astype(np.longdouble) - exact) / spacing))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_vector_math_within_4_ulp(name, dtype):
    build, ref, range64, range32 = CASES[name]
    lo, hi = range64 if dtype == "float64" else range32
    rng = np.random.default_rng(0)
    a = rng.uniform(lo, hi, 100_000) if lo < 0 else np.geomspace(lo, hi, 100_000)
    a = a.astype(dtype)
    x = sn.vector("x", dtype=dtype)
    f = sn.function([x], build(x), backend="c")
    assert "__attribute__((simd" in f.kernels[0].source
    wide = np.longdouble if dtype == "float64" else np.float64
    exact = ref(a.astype(wide)).astype(np.longdouble)
    assert ulp_error(f(a), exact) <= MAX_ULP


def test_special_values_survive_vector_math():
    a = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0] * 8)
    x = sn.vector("x")
    for build, ref in ((sn.exp, np.exp), (sn.log, np.log), (sn.tanh, np.tanh)):
        f = sn.function([x], build(x), backend="c")
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(f(a), ref(a))
