"""Float max/min reductions start every SIMD lane at the infinities. OpenMP's own ``max``/``min``
identifiers start them at the "least representable value", which clang reads as -FLT_MAX /
-DBL_MAX: a row made only of -inf reduced to -1.8e308 there (GCC starts at -inf), so the C
dialect spells float extrema with reductions it declares (``sn_max``/``sn_min``). The declared
reductions are clang's (``SN_OMP_MAX`` is OpenMP's ``max`` under GCC); CI runs this file
under clang too."""

import numpy as np
import pytest

import symnb as sn


def rows_of(fill, dtype):
    """Rows of only ``fill`` (the reduction's identity), one row that isn't, and a NaN row."""
    a = np.full((4, 37), fill, dtype=dtype)
    a[1, 3:9] = 1.5
    a[3, 5] = np.nan
    return a


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind, fill", [("max", -np.inf), ("min", np.inf)])
def test_rows_of_the_identity_reduce_to_it(dtype, kind, fill):
    x = sn.matrix("x", dtype=dtype)
    f = sn.function([x], getattr(sn, kind)(x, axis=1), backend="c")
    a = rows_of(fill, dtype)
    np.testing.assert_array_equal(f(a), getattr(np, kind)(a, axis=1))
    (source,) = [k.source for k in f.kernels if k.kind == "kernel"]
    assert f"reduction(SN_OMP_{kind.upper()}:acc)" in source
    assert f"#pragma omp declare reduction(sn_{kind} : float, double" in source  # clang's


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_row_kernels_max_step_declares_it_too(dtype):
    """softmax's row kernel: its max step is spelled the same way (rows.py)."""
    x = sn.matrix("x", dtype=dtype)
    f = sn.function([x], sn.softmax(x, axis=1), backend="c")
    a = rows_of(-np.inf, dtype)
    a[2, :4] = [0.5, -1.0, 2.0, -np.inf]
    with np.errstate(invalid="ignore"):
        e = np.exp(a - a.max(axis=1, keepdims=True))
        want = e / e.sum(axis=1, keepdims=True)
    rtol = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(f(a), want, rtol=rtol)
    (source,) = [k.source for k in f.kernels if k.kind == "kernel"]
    assert "reduction(SN_OMP_MAX:acc)" in source and "reduction(max:" not in source


@pytest.mark.parametrize("kind", ["max", "min"])
def test_whole_array_and_integer_extrema(kind):
    """The whole-array reduction too; integers keep OpenMP's identifiers (their least value
    is the identity)."""
    x = sn.matrix("x")
    a = np.full((5, 33), -np.inf if kind == "max" else np.inf)
    assert getattr(sn, kind)(x).eval({x: a}) == a[0, 0]
    f = sn.function([x], getattr(sn, kind)(x), backend="c")
    assert f(a) == a[0, 0]
    i = sn.matrix("i", dtype="int16")
    g = sn.function([i], getattr(sn, kind)(i, axis=1), backend="c")
    b = np.full((3, 40), np.iinfo(np.int16).min if kind == "max" else np.iinfo(np.int16).max)
    b = b.astype(np.int16)
    np.testing.assert_array_equal(g(b), getattr(np, kind)(b, axis=1))
    (source,) = [k.source for k in g.kernels if k.kind == "kernel"]
    assert f"reduction({kind}:acc)" in source and "declare reduction" not in source
