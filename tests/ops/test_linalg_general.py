"""Linear algebra on general (non-symmetric) matrices: values and gradients.

On a symmetric matrix A and A.T agree, so a gradient that forgets a transpose (of ``inv(A)``
in ``det``'s, ``inv``'s or ``solve``'s rule) still passes there; these inputs are random,
diagonally dominant (well conditioned) and not symmetric. Cholesky alone needs SPD inputs.
"""

import numpy as np
import pytest

import symnb as sn
from symnb.ops.linalg import TraceAdjoint
from tests.helpers import check, tolerance
from tests.helpers import run as run_on


def general(rng, shape, dtype="float64"):
    """Random square matrices, diagonally dominant and far from symmetric."""
    n = shape[-1]
    a = rng.uniform(-1, 1, size=shape) + np.triu(rng.uniform(1, 2, size=shape), 1)
    return (a + (n + 1) * np.eye(n)).astype(dtype)


def test_the_inputs_are_not_symmetric(rng):
    a = general(rng, (2, 4, 4))
    assert np.abs(a - np.swapaxes(a, -1, -2)).max() > 0.5


VALUES = {
    "inv": (sn.inv, np.linalg.inv),
    "det": (sn.det, np.linalg.det),
    "slogdet sign": (lambda x: sn.slogdet(x)[0], lambda a: np.linalg.slogdet(a)[0]),
    "slogdet log": (lambda x: sn.slogdet(x)[1], lambda a: np.linalg.slogdet(a)[1]),
    "solve column": (
        lambda x: sn.solve(x, sn.expand_dims(sn.sum(x, axis=-1), -1)),
        lambda a: np.linalg.solve(a, a.sum(-1)[..., None]),
    ),
    "solve matrix": (
        lambda x: sn.solve(x, x[..., :2] * 3),
        lambda a: np.linalg.solve(a, a[..., :2] * 3),
    ),
}


@pytest.mark.parametrize("name", sorted(VALUES))
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_on_general_matrices(name, shape, dtype, rng, backend):
    fn, ref = VALUES[name]
    a = general(rng, shape, dtype)
    check(run_on(fn, a, backend=backend), ref(a), rtol=tolerance(dtype, 100))


GRADS = {
    "inv": sn.inv,
    "det": sn.det,
    "slogdet": lambda a: sn.slogdet(a)[1],
    "solve column": lambda a: sn.solve(a, sn.expand_dims(sn.sum(a, axis=-1), -1)),
    "solve matrix": lambda a: sn.solve(a, a[..., :2] * 3),
    "solve constant rhs": lambda a: sn.solve(a, sn.constant(np.arange(6.0).reshape(3, 2))),
    "inv of a product": lambda a: sn.inv(a @ a),
}


@pytest.mark.parametrize("name", sorted(GRADS))
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
def test_gradients_on_general_matrices(name, shape, rng):
    sn.check_grad(GRADS[name], [general(rng, shape)], rng=rng)


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((3, 3), (3,)),
        ((3, 3), (3, 2)),
        ((3, 3), (2, 3, 2)),
        ((2, 3, 3), (3,)),
        ((2, 3, 3), (3, 2)),
        ((2, 3, 3), (1, 3, 2)),
    ],
)
def test_solve_gradient_for_both_operands(a_shape, b_shape, rng):
    """A stack of matrices with one vector b (NumPy 2: solved against each matrix) too: its
    gradient once solved g, a stack of vectors, as if it were one matrix (a ShapeError)."""
    a, b = general(rng, a_shape), rng.standard_normal(b_shape)
    check(run_on(sn.solve, a, b, backend="py"), np.linalg.solve(a, b), rtol=1e-12)
    sn.check_grad(sn.solve, [a, b], rng=rng)


def test_det_gradient_is_the_transposed_cofactor_matrix(rng):
    """d det(A)/dA = det(A) inv(A).T: an exact value, not only a finite difference."""
    a = general(rng, (4, 4))
    x = sn.tensor("x", shape=(4, 4))
    got = sn.function([x], sn.grad(sn.det(x), x), backend="py")(a)
    want = np.linalg.det(a) * np.linalg.inv(a).T
    np.testing.assert_allclose(got, want, rtol=1e-10)


def spd(rng, shape):
    """Symmetric positive definite: the inputs cholesky is defined on."""
    a = general(rng, shape)
    return a @ np.swapaxes(a, -1, -2)


def test_cholesky_gradient_on_a_stack_of_stacks(rng):
    """Two batch axes, the second of length 1: the halved diagonal must be the matrices'."""
    sn.check_grad(sn.cholesky, [spd(rng, (2, 1, 3, 3))], rng=rng)
    sn.check_grad(sn.cholesky, [spd(rng, (3, 2, 4, 4))], rng=rng)


def test_cholesky_has_second_derivatives(rng):
    """Its gradient is built from differentiable ops: the gradient of a gradient checks."""
    weights = rng.standard_normal((3, 3))

    def gradient(a):
        return sn.grad(sn.sum(sn.cholesky(a) ** 3), a) * weights

    sn.check_grad(gradient, [spd(rng, (3, 3)) + 3 * np.eye(3)], rng=rng)
    sn.check_grad(gradient, [spd(rng, (2, 3, 3)) + 3 * np.eye(3)], rng=rng)


@pytest.mark.parametrize("backend", ["py", "c"])
def test_cholesky_rop_is_the_directional_derivative(backend, rng):
    a_value = spd(rng, (4, 4)) + 4 * np.eye(4)
    direction = general(rng, (4, 4))
    direction = direction + direction.T  # cholesky reads a symmetric a
    a, v = sn.tensor("a", shape=(4, 4)), sn.tensor("v", shape=(4, 4))
    f = sn.function([a, v], sn.Rop(sn.cholesky(a), a, v), backend=backend)
    eps = 1e-6
    step = eps * direction
    want = (np.linalg.cholesky(a_value + step) - np.linalg.cholesky(a_value - step)) / (2 * eps)
    np.testing.assert_allclose(f(a_value, direction), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 4, 3), (3, 2, 2, 3)])
def test_singular_value_gradient_on_stacks(shape, rng):
    sn.check_grad(lambda x: sn.svd(x, compute_uv=False), [rng.standard_normal(shape)], rng=rng)


GRAD_DTYPES = {
    "trace": (sn.trace, (3, 4)),
    "trace batched": (lambda x: sn.trace(x, 0, -1, 0), (3, 2, 3)),
    "cholesky": (sn.cholesky, (3, 3)),
    "inv": (sn.inv, (3, 3)),
    "svd": (lambda x: sn.svd(x, compute_uv=False), (2, 3, 4)),
}


@pytest.mark.parametrize("name", sorted(GRAD_DTYPES))
def test_float32_gradients_are_float32_of_the_input_shape(name, rng):
    """The gradient's type and its value agree with the input: float32 stays float32."""
    fn, shape = GRAD_DTYPES[name]
    value = spd(rng, shape) if shape[-1] == shape[-2] else rng.standard_normal(shape)
    x = sn.tensor("x", shape=shape, dtype="float32")
    g = sn.grad(sn.sum(fn(x)), x)
    assert (g.type.dtype, g.type.shape) == (np.float32, shape)
    got = sn.function([x], g, backend="py")(value.astype("float32"))
    assert (got.dtype, got.shape) == (np.float32, shape)


def test_the_trace_adjoint_is_typed_like_the_matrix():
    """Its output has x's shape and g's dtype (grad would hide a wrong type behind a
    sum_to_like, but a backend allocates by the type)."""
    x = sn.tensor("x", shape=(3, 2, 4), dtype="float64")
    g = sn.tensor("g", shape=(2,), dtype="float32")
    assert TraceAdjoint(0, 0, 2)(g, x).type == sn.tensor("y", shape=(3, 2, 4), dtype="float32").type
