"""gemm on backend c: one ?gemm call into NumPy's own OpenBLAS, over every operand layout."""

import os

import numpy as np
import pytest
import scipy.linalg  # noqa: F401 - SciPy's OpenBLAS loaded too: it must not be chosen

import symnb as sn
from symnb.backends.c import blas
from symnb.ops.blas import Gemm
from tests.helpers import tolerance

pytestmark = pytest.mark.skipif(not blas.numpy_blas(), reason="NumPy's BLAS not found")


def gemm_function(dtype, inplace=False, z_ndim=1):
    z = sn.tensor("z", shape=(None,) * z_ndim, dtype=dtype)
    x, y = sn.matrix("x", dtype=dtype), sn.matrix("y", dtype=dtype)
    alpha, beta = sn.scalar("alpha", dtype=dtype), sn.scalar("beta", dtype=dtype)
    out = Gemm(inplace)(z, alpha, x, y, beta)
    return sn.function([z, alpha, x, y, beta], out, backend="c", optimize="none")


def layouts(a):
    """The same matrix as C-ordered, Fortran-ordered, row-strided, column-reversed views."""
    wide = np.zeros((a.shape[0], 2 * a.shape[1]), a.dtype)
    wide[:, ::2] = a
    tall = np.zeros((2 * a.shape[0], a.shape[1]), a.dtype)
    tall[::2] = a
    return {
        "c": a.copy(),
        "fortran": np.asfortranarray(a),
        "rows-strided": tall[::2],
        "cols-strided": wide[:, ::2],
        "reversed": a[:, ::-1].copy()[:, ::-1],
    }


def test_the_blas_is_numpys_own_not_scipys():
    path = blas._numpy_blas_path()
    numpy_root = os.path.dirname(os.path.dirname(np.__file__))
    assert path.startswith(os.path.join(numpy_root, "numpy")) and "openblas" in path
    assert set(blas.numpy_blas()) == {np.dtype("float32"), np.dtype("float64")}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("x_layout", ["c", "fortran", "rows-strided", "cols-strided", "reversed"])
@pytest.mark.parametrize("y_layout", ["c", "fortran", "reversed"])
def test_every_layout_gives_the_reference(dtype, x_layout, y_layout):
    rng = np.random.default_rng(1)
    xv, yv = rng.standard_normal((7, 5)).astype(dtype), rng.standard_normal((5, 3)).astype(dtype)
    zv = rng.standard_normal(3).astype(dtype)
    a, b = np.array(-0.25, dtype), np.array(1.5, dtype)
    want = b * zv + a * (xv.astype(np.float64) @ yv.astype(np.float64))
    got = gemm_function(dtype)(zv, a, layouts(xv)[x_layout], layouts(yv)[y_layout], b)
    assert got.dtype == dtype and got.shape == (7, 3)
    np.testing.assert_allclose(got, want, rtol=tolerance(dtype), atol=tolerance(dtype))


@pytest.mark.parametrize("z_ndim", [0, 1, 2])
def test_z_broadcasts_and_beta_zero_ignores_it(z_ndim):
    rng = np.random.default_rng(2)
    xv, yv = rng.standard_normal((4, 6)), rng.standard_normal((6, 5))
    zv = rng.standard_normal((4, 5)[2 - z_ndim :])
    f = gemm_function("float64", z_ndim=z_ndim)
    np.testing.assert_allclose(f(zv, 2.0, xv, yv, 3.0), 3 * zv + 2 * (xv @ yv), rtol=1e-12)
    np.testing.assert_allclose(f(zv, 2.0, xv, yv, 0.0), 2 * (xv @ yv), rtol=1e-12)


def test_in_place_gemm_writes_into_z_unless_z_overlaps_an_operand():
    """runner.c's ?gemm call (the Python executor runs a product's NumPy reference)."""
    rng = np.random.default_rng(3)
    xv, yv = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    f = gemm_function("float64", inplace=True, z_ndim=2)
    if f.runner is None:
        pytest.skip("the C runner could not be built")
    run = lambda *args: f.runner(*args)[0]  # noqa: E731
    zv = rng.standard_normal((4, 4))
    want = zv - 0.5 * (xv @ yv)
    got = run(zv, np.float64(-0.5), xv, yv, np.float64(1.0))
    assert got is zv
    np.testing.assert_allclose(got, want, rtol=1e-12)
    shared = rng.standard_normal((4, 4))
    want = shared + shared @ yv
    got = run(shared, np.float64(1.0), shared, yv, np.float64(1.0))
    assert got is not shared
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_empty_and_mixed_cases_fall_back_to_matmul():
    f = gemm_function("float64")
    got = f(np.ones(3), 2.0, np.ones((4, 0)), np.ones((0, 3)), 1.0)
    np.testing.assert_array_equal(got, np.ones((4, 3)))
    got = f(np.ones(0), 2.0, np.ones((0, 5)), np.ones((5, 0)), 1.0)
    assert got.shape == (0, 0)


#: (m, n, k) above runner.c's SPLIT_MIN (2^28 multiply-adds): split by columns (n >= m) and by
#: rows, with part sizes that are not multiples of the split's alignment
SPLIT_SHAPES = [(130, 8200, 260), (8200, 130, 260), (257, 1031, 1019), (180, 180, 8300)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SPLIT_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("x_layout", ["c", "fortran"])
@pytest.mark.parametrize("y_layout", ["c", "fortran", "reversed"])
def test_products_split_between_threads_give_the_reference(dtype, shape, x_layout, y_layout):
    m, n, k = shape
    rng = np.random.default_rng(4)
    xv, yv = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
    zv = rng.standard_normal(n).astype(dtype)
    a, b = np.array(0.75, dtype), np.array(-2.0, dtype)
    want = b * zv + a * (xv.astype(np.float64) @ yv.astype(np.float64))
    f = gemm_function(dtype)
    if f.runner is None:
        pytest.skip("the C runner could not be built")
    got = f.runner(zv, a, layouts(xv)[x_layout], layouts(yv)[y_layout], b)[0]
    assert got.shape == (m, n) and got.flags.c_contiguous
    scale = np.sqrt(k) * tolerance(dtype)
    np.testing.assert_allclose(got, want, rtol=scale, atol=scale)
