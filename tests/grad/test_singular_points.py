"""Gradients at the points where a rule's textbook form is 0 * inf or calls a singular solve:
a zero base or exponent of ``pow``, the determinant of a singular matrix."""

import warnings

import numpy as np
import pytest

import symnb as sn


def f64(name, shape):
    return sn.tensor(name, shape=shape, dtype="float64")


def test_pow_partials_at_a_zero_base_are_zero_not_nan(backend):
    x, y = f64("x", (3,)), f64("y", (3,))
    xv, yv = np.array([0.0, 1.0, 2.0]), np.array([2.0, 1.5, 0.5])
    f = x**y
    gy = sn.grad(sn.sum(f), y)
    ry = sn.Rop(f, y, np.ones(3))
    gx = sn.grad(sn.sum(f), x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0 * inf on the way
        got = sn.function([x, y], [gy, ry, gx], backend=backend)(xv, yv)
    want_y = xv**yv * np.log(np.where(xv == 0, 1, xv))  # JAX's 0 at x = 0
    np.testing.assert_allclose(got[0], want_y, rtol=1e-12)
    np.testing.assert_allclose(got[1], want_y, rtol=1e-12)
    np.testing.assert_allclose(got[2], yv * xv ** (yv - 1), rtol=1e-12)


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_every_derivative_of_an_integer_power_is_finite_at_zero(n, backend):
    x = f64("x", (3,))
    xv = np.array([0.0, 1.5, -2.0])
    orders, g = [], x**n
    for _ in range(4):
        g = sn.grad(sn.sum(g), x)
        orders.append(g)
    got = sn.function([x], orders, backend=backend)(xv)
    for k, value in enumerate(got, start=1):  # d^k x^n = n!/(n-k)! x^(n-k), 0 past k = n
        coef = np.prod(np.arange(n - k + 1, n + 1)) if k <= n else 0.0
        want = coef * xv ** max(n - k, 0)
        np.testing.assert_allclose(value, want, rtol=1e-12, err_msg=f"order {k} of x**{n}")


def test_pow_second_derivatives_match_jax_and_are_finite_at_zero():
    """Values from jax.hessian of sum(x ** y) (JAX has NaN at x = y = 0, symnb 0 or 1)."""
    x, y = f64("x", (5,)), f64("y", (5,))
    xv, yv = np.array([0.0, 0.0, 2.0, 2.0, 1.5]), np.array([0.0, 2.0, 0.0, 1.7, 3.0])
    gx, gy = sn.grad(sn.sum(x**y), [x, y])
    hxx, hxy = sn.grad(sn.sum(gx), [x, y])
    hyx, hyy = sn.grad(sn.sum(gy), [x, y])
    got = sn.function([x, y], [gx, gy, hxx, hxy, hyx, hyy])(xv, yv)
    assert np.all(np.isfinite(got))
    lx = np.log(np.where(xv == 0, 1, xv))
    with np.errstate(all="ignore"):  # the references' 0 * inf at x = 0 are left out
        want = [
            yv * xv ** (yv - 1),
            xv**yv * lx,
            yv * (yv - 1) * xv ** (yv - 2),
            np.where(xv == 0, 0, xv ** (yv - 1) * (1 + yv * lx)),  # 1/x at y = 0
            xv**yv * lx**2,
        ]
    np.testing.assert_allclose(got[0][1:], want[0][1:], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    np.testing.assert_allclose(got[2][1:], want[2][1:], rtol=1e-12)
    np.testing.assert_allclose(got[3][1:], want[3][1:], rtol=1e-12)  # got[3][2] is 0.5
    np.testing.assert_allclose(got[4], want[3], rtol=1e-12)
    np.testing.assert_allclose(got[5], want[4], rtol=1e-12)


def test_pow_gradients_of_a_constant_exponent_keep_their_graph():
    """No where(... == 0, ...) for a constant exponent without zeros, at any order: the
    gradients of x ** 3 are ``gz * 3 * x ** (3 - 1)``, ... as before (the benchmarks' kernels
    do not change)."""
    x = f64("x", (3,))
    g = sn.sum(x**3 + x**0.5)
    for _ in range(3):
        g = sn.grad(sn.sum(g), x)
        ops = {node.op.op_name() for node in sn.core.graph.ancestors([g])}
        assert "where" not in ops, ops


def _cofactor(a):
    """adj(a)^T by its definition, (-1)^(i+j) times the (i, j) minor."""
    n = a.shape[0]
    out = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, 0), j, 1)
            out[i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return out


SINGULAR = {
    "rank 1 of 2": np.array([[1.0, 2.0], [2.0, 4.0]]),
    "rank 2 of 3": np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]),
    "rank 2 of 4": np.outer([1.0, 2, 3, 4], [1.0, 0, 2, 1])
    + np.outer([0.0, 1, 0, 2], [3.0, 1, 1, 0]),
    "zeros": np.zeros((3, 3)),
}


@pytest.mark.parametrize("name", sorted(SINGULAR))
def test_det_gradient_at_a_singular_matrix_is_the_cofactor_matrix(name, backend):
    """It was det * inv(a).T: LinAlgError (or inf * 0) where a is singular."""
    value = SINGULAR[name]
    a = f64("a", value.shape)
    got = sn.function([a], sn.grad(sn.det(a), a), backend=backend)(value)
    np.testing.assert_allclose(got, _cofactor(value), atol=1e-12)
    sn.check_grad(lambda m: sn.grad(sn.det(m), m), [value])  # the Hessian there


def test_det_gradient_and_hessian_of_invertible_matrices_keep_their_values(rng):
    value = rng.standard_normal((2, 4, 4))
    a = f64("a", (2, 4, 4))
    got = sn.function([a], sn.grad(sn.sum(sn.det(a)), a))(value)
    want = np.linalg.det(value)[:, None, None] * np.swapaxes(np.linalg.inv(value), -1, -2)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    m = value[0]
    x = f64("x", (4, 4))
    got = sn.function([x], sn.hessian(sn.det(x), x))(m)
    inv = np.linalg.inv(m)  # d2 det = det (tr(inv dA) tr(inv dB) - tr(inv dA inv dB))
    want = np.linalg.det(m) * (
        np.einsum("ji,lk->ijkl", inv, inv) - np.einsum("jk,li->ijkl", inv, inv)
    )
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_det_hessian_at_the_identity_and_third_derivatives():
    """Repeated singular values (the identity) need no derivative of U or V at second order;
    the third goes through them (distinct singular values)."""
    x = f64("x", (3, 3))
    got = sn.function([x], sn.hessian(sn.det(x), x))(np.eye(3))
    eye = np.eye(3)
    want = np.einsum("ij,kl->ijkl", eye, eye) - np.einsum("il,kj->ijkl", eye, eye)
    np.testing.assert_allclose(got, want, atol=1e-12)
    value = np.array([[2.0, 0.5, 0.1], [0.3, -1.0, 0.7], [0.2, 0.4, 1.5]])
    sn.check_grad(lambda m: sn.hessian(sn.det(m), m), [value])


def _cofactor_derivative(a, w, h=1e-6):
    """d adj(a)^T applied to w, by central differences of the minors' definition."""
    return (_cofactor(a + h * w) - _cofactor(a - h * w)) / (2 * h)


HVP_POINTS = {
    "invertible": np.random.default_rng(3).standard_normal((5, 5)),
    "near singular": np.diag([1.0, 2.0, 3.0, 4.0, 1e-11])
    @ np.random.default_rng(4).standard_normal((5, 5)),
    **{name: m for name, m in SINGULAR.items() if name != "zeros"},
}


@pytest.mark.parametrize("name", sorted(HVP_POINTS))
def test_det_hessian_vector_products_are_inverse_based_and_exact_at_singular_points(name, backend):
    """Cofactor's gradient was written from the SVD: a 50x50 Hessian-vector product of det
    took 19 ms, not 0.2 (Svd and its gradient in the graph). It is one op now, whose
    reference uses one inverse where the matrix is well conditioned, the SVD's form where it
    is not: compared with differences of the minors' definition, finite at singular
    matrices, near one, and away from them."""
    value = HVP_POINTS[name]
    v = np.random.default_rng(5).standard_normal(value.shape)
    a, t = f64("a", value.shape), f64("t", value.shape)
    hvp = sn.Rop(sn.grad(sn.det(a), a), a, t)
    ops = {node.op.op_name() for node in sn.core.graph.ancestors([hvp])}
    assert "svd" not in ops and "cofactor_grad" in ops, ops
    got = sn.function([a, t], hvp, backend=backend)(value, v)
    want = _cofactor_derivative(value, v)
    np.testing.assert_allclose(got, want, atol=1e-7 * max(1.0, np.abs(want).max()))
    hessian = sn.function([a], sn.hessian(sn.det(a), a), backend=backend)(value)
    np.testing.assert_allclose(np.einsum("ijkl,kl->ij", hessian, v), got, atol=1e-10)
