"""gemm on backend c: one ?gemm call into NumPy's own OpenBLAS, over every operand layout."""

import itertools
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


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_zero_alpha_or_beta_keeps_the_nan_of_what_it_scales(dtype, inplace):
    """BLAS skips the product when alpha is 0 and never reads z when beta is 0: a NaN or an
    inf there vanished (z + 0 * (x @ y) was z where x held NaN); the expression's value is
    NaN (0 * inf), as NumPy's and the gemm's reference give it."""
    xv = np.array([[np.nan, 1.0, 2.0], [2.0, np.inf, 0.5]], dtype)
    yv = np.array([[1.0, 2.0], [3.0, 0.0], [0.5, 1.0]], dtype)
    zv = np.array([[1.0, np.nan], [-np.inf, 2.0]], dtype)
    f = gemm_function(dtype, inplace=inplace, z_ndim=2)
    with np.errstate(all="ignore"):
        for alpha, beta in [(0.0, 1.0), (0.0, 0.0), (1.5, 0.0), (1.5, 2.0)]:
            want = beta * zv + alpha * (xv @ yv)
            got = f(zv.copy(), alpha, xv, yv, beta)
            np.testing.assert_array_equal(got, want, err_msg=f"alpha {alpha}, beta {beta}")
    x, y, z = sn.matrix("x", dtype=dtype), sn.matrix("y", dtype=dtype), sn.matrix("z", dtype=dtype)
    lr = sn.scalar("lr", dtype=dtype)
    for update in [z - lr * (x @ y), z + lr * (x @ y)]:  # (the rewrites make each a gemm)
        step = sn.function([x, y, z, lr], update, backend="c")
        assert [type(n.op) for n in step.graph.toposort()][-1] is Gemm  # (after -lr)
        with np.errstate(all="ignore"):  # (NumPy's warning for 0 * inf, as the reference's)
            assert np.isnan(step(xv, yv, zv, 0.0)).all()  # (each row of x: a NaN or an inf)


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


def vector_layouts(v):
    """The same vector contiguous, every other element of a longer one, and reversed (BLAS
    takes no negative step: NumPy runs it)."""
    wide = np.zeros(2 * v.size, v.dtype)
    wide[::2] = v
    return {"c": v.copy(), "strided": wide[::2], "reversed": v[::-1].copy()[::-1]}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(32, 20), (1, 5), (7, 1), (1, 1), (300, 200), (300, 300)])
def test_a_matrix_and_a_vector_are_one_gemm_call(dtype, shape):
    """``x @ w`` and ``v @ x`` (Theano's ``T.dot(x, w)``): a Gemm step, the vector a row or
    a column of the call, over every layout of both; products past runner_gemm.h's VECTOR_MAX
    (300 x 300) are NumPy's gemv. Each against NumPy, shape and dtype too."""
    rng = np.random.default_rng(sum(shape))
    x, w, v = sn.matrix("x", dtype=dtype), sn.vector("w", dtype=dtype), sn.vector("v", dtype=dtype)
    f = sn.function([x, w, v], [sn.dot(x, w), sn.dot(v, x)], backend="c")
    steps = [type(s).__name__ for s in f.linker.plan.steps]
    assert steps == ["Gemm", "Gemm"], steps
    tol = tolerance(dtype, 10 * shape[0])

    # new values for every call: a result left in a reused buffer by the call before shows
    for xl in ["c", "fortran", "rows-strided", "cols-strided", "reversed"]:
        for wl, vl in itertools.product(["c", "strided", "reversed"], repeat=2):
            xs = layouts(rng.standard_normal(shape).astype(dtype))[xl]
            ws = vector_layouts(rng.standard_normal(shape[1]).astype(dtype))[wl]
            vs = vector_layouts(rng.standard_normal(shape[0]).astype(dtype))[vl]
            for got, want in zip(f(xs, ws, vs), [xs @ ws, vs @ xs], strict=True):
                assert got.shape == want.shape and got.dtype == want.dtype
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=(xl, wl, vl))


def test_a_matrix_vector_product_in_a_training_step():
    """Theano's logistic regression tutorial: ``T.dot(x, w)`` with w a shared vector, its
    gradient ``T.dot(x.T, d)``, 20 steps against NumPy."""
    rng = np.random.default_rng(5)
    xs, ys = rng.standard_normal((40, 7)), (rng.random(40) > 0.5).astype(float)
    x, y = sn.matrix("x"), sn.vector("y")
    w, b = sn.shared(np.zeros(7), name="w"), sn.shared(0.0, name="b")
    p = 1 / (1 + sn.exp(-sn.dot(x, w) - b))
    cost = sn.mean(-y * sn.log(p) - (1 - y) * sn.log(1 - p))
    gw, gb = sn.grad(cost, [w, b])
    updates = [(w, w - 0.5 * gw), (b, b - 0.5 * gb)]
    train = sn.function([x, y], cost, updates=updates, backend="c")
    assert any(type(s).__name__ == "Gemm" for s in train.linker.plan.steps)
    wv, bv = np.zeros(7), 0.0
    for _ in range(20):
        pv = 1 / (1 + np.exp(-(xs @ wv) - bv))
        want = np.mean(-ys * np.log(pv) - (1 - ys) * np.log(1 - pv))
        np.testing.assert_allclose(train(xs, ys), want, rtol=1e-12)
        wv, bv = wv - 0.5 * xs.T @ (pv - ys) / 40, bv - 0.5 * np.mean(pv - ys)
    np.testing.assert_allclose(w.get_value(), wv, rtol=1e-12, atol=1e-15)


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
