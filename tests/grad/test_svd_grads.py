"""Gradients through the SVD's U and Vh (Townsend 2016), and so second derivatives of the
functions of singular values: ``svd(a, compute_uv=False)``, ``norm(a, 'nuc' / 2 / -2)``."""

import numpy as np
import pytest

import symnb as sn

RNG = np.random.default_rng(0)
SHAPES = [(3, 2), (2, 3), (3, 3)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(
    "cost",
    [
        lambda a: sn.sum(sn.svd(a, compute_uv=False) ** 3),
        lambda a: sn.norm(a, "nuc"),
        lambda a: sn.norm(a, 2),
        lambda a: sn.norm(a, -2),
    ],
    ids=["s**3", "nuc", "2", "-2"],
)
def test_second_derivatives_of_singular_values(shape, cost):
    """NotDifferentiableError before ('gradients through U and Vh are not implemented')."""
    value = RNG.standard_normal(shape)
    sn.check_grad(lambda a: sn.grad(cost(a), a), [value])
    a = sn.tensor("a", shape=shape, dtype="float64")
    hess = sn.function([a], sn.hessian(cost(a), a))(value)
    assert hess.shape == shape + shape
    np.testing.assert_allclose(hess, np.swapaxes(np.swapaxes(hess, 0, 2), 1, 3), atol=1e-12)


def test_nuclear_norm_hessian_is_known_for_a_diagonal_matrix():
    """For a 2x2 a = [[s1, b], [c, s2]] with det > 0, ||a||_* = sqrt((s1 + s2)**2 + (b - c)**2)
    (= sqrt(||a||_F**2 + 2 det a)): at b = c = 0 the Hessian in (b, c) is [[1, -1], [-1, 1]]
    / (s1 + s2), and 0 along the diagonal entries."""
    s1, s2 = 3.0, 1.0
    a = sn.tensor("a", shape=(2, 2), dtype="float64")
    hess = sn.function([a], sn.hessian(sn.norm(a, "nuc"), a))(np.diag([s1, s2]))
    assert hess[0, 1, 0, 1] == pytest.approx(1 / (s1 + s2))
    assert hess[0, 1, 1, 0] == pytest.approx(-1 / (s1 + s2))
    assert hess[0, 0, 0, 0] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 3, 2)])
def test_gradients_through_u_and_vh_of_reduced_factors(shape):
    """Functions that do not depend on the signs of singular vector pairs."""
    k = min(shape[-2:])
    w_u = RNG.standard_normal(k)
    w_vh = RNG.standard_normal((k, shape[-1]))
    w_a = RNG.standard_normal(shape)

    def f(a):
        u, s, vh = sn.svd(a, full_matrices=False)
        rebuilt = u @ (sn.expand_dims(s**2, -1) * vh)
        return sn.sum((u * u) @ w_u) + sn.sum(vh * vh * w_vh) + sn.sum(rebuilt * w_a)

    sn.check_grad(f, [RNG.standard_normal(shape)])


def test_square_full_matrices_have_gradients_and_others_say_why_not():
    sn.check_grad(
        lambda a: sn.sum(sn.svd(a)[0] ** 2 * np.arange(9.0).reshape(3, 3)),
        [RNG.standard_normal((3, 3))],
    )
    value = RNG.standard_normal((3, 2))
    sn.check_grad(lambda a: sn.grad(sn.sum(sn.svd(a)[1] ** 3), a), [value])  # S alone: yes
    x = sn.tensor("x", shape=(3, 2), dtype="float64")
    u, s, vh = sn.svd(x)
    with pytest.raises(sn.NotDifferentiableError, match="pass full_matrices=False"):
        sn.grad(sn.sum(u), x)


def test_unknown_dims_are_not_taken_as_square():
    """With unknown M and N the parts of U and Vh outside the other factor's span count."""
    x = sn.tensor("x", shape=(None, None), dtype="float64")
    u, s, vh = sn.svd(x, full_matrices=False)
    value, w = RNG.standard_normal((4, 2)), RNG.standard_normal(4)
    g = sn.function([x], sn.grad(sn.sum((u * u) @ sn.constant(np.ones(2)) * w), x))(value)
    fixed = sn.tensor("f", shape=(4, 2), dtype="float64")
    uf, _, _ = sn.svd(fixed, full_matrices=False)
    want = sn.function([fixed], sn.grad(sn.sum((uf * uf) @ sn.constant(np.ones(2)) * w), fixed))
    np.testing.assert_allclose(g, want(value), atol=1e-12)
    sn.check_grad(lambda a: sn.sum((sn.svd(a, False)[0] ** 2) @ np.ones(2) * w), [value])
