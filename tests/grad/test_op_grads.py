"""Every differentiable op of the first set: symbolic gradient vs finite differences (float64).

Inputs are drawn where each op is smooth (positive bases for pow/log/sqrt, values away from 0
for abs, no ties for max/min, quotients away from integers for // and %).
"""

import operator

import numpy as np
import pytest

import symnb as sn

BINARY = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "pow": operator.pow,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
}
UNARY = {
    "neg": operator.neg,
    "pos": operator.pos,
    "abs": abs,
    "sign": sn.sign,
    "exp": sn.exp,
    "log": sn.log,
    "sqrt": sn.sqrt,
    "tanh": sn.tanh,
    "sigmoid": sn.sigmoid,
    "sin": sn.sin,
    "cos": sn.cos,
}
BROADCAST_SHAPES = [
    ((3, 4), (3, 4)),
    ((3, 4), (4,)),
    ((2, 1, 4), (3, 1)),
    ((), (5,)),
    ((3, 1), (1, 4)),
]


def positive(rng, shape):
    """Values in [0.5, 2): smooth for every op here, and quotients rarely near integers."""
    return rng.uniform(0.5, 2.0, size=shape)


def away_from_integer_quotients(rng, shape_a, shape_b):
    """Draws for which a / b and b / a are all at least 1e-3 from an integer."""
    while True:
        a, b = positive(rng, shape_a), positive(rng, shape_b)
        quotients = np.concatenate([np.ravel(a / b), np.ravel(b / a)])
        if np.all(np.abs(quotients - np.round(quotients)) > 1e-3):
            return a, b


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES)
def test_binary_gradients(name, shapes, rng):
    a, b = away_from_integer_quotients(rng, *shapes)
    sn.check_grad(BINARY[name], [a, b])
    sn.check_grad(BINARY[name], [b, a])


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape", [(3, 4), ()])
def test_unary_gradients(name, shape, rng):
    a = positive(rng, shape)
    if name in ("abs", "sign", "sin", "cos", "tanh", "sigmoid", "neg", "pos", "exp"):
        a = a * rng.choice([-1.0, 1.0], size=shape)  # both signs, away from 0
    sn.check_grad(UNARY[name], [a])


def test_gradient_through_weak_scalars_and_constants(rng):
    a = positive(rng, (2, 3))
    sn.check_grad(lambda x: 3.0 * x**2 - x / 2 + 1, [a])
    sn.check_grad(lambda x: 2.0**x + sn.constant(np.arange(3.0)) * x, [a])


@pytest.mark.parametrize("fn", [sn.sum, sn.mean, sn.max, sn.min])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction_gradients(fn, axis, keepdims, rng):
    a = rng.permutation(24).reshape(2, 3, 4) / 7.0  # distinct values: no ties for max/min
    sn.check_grad(lambda x: fn(x, axis=axis, keepdims=keepdims), [a])


SHAPE_OPS = {
    "reshape": lambda x: sn.reshape(x, (4, 6)),
    "reshape_minus_one": lambda x: x.reshape(-1, 2),
    "transpose": sn.transpose,
    "transpose_axes": lambda x: sn.transpose(x, (1, 2, 0)),
    "T": lambda x: x.T,
    "expand_dims": lambda x: sn.expand_dims(x, (0, 2)),
    "squeeze_after_expand": lambda x: sn.squeeze(sn.expand_dims(x, 1), 1),
    "dimshuffle": lambda x: sn.expand_dims(sn.transpose(x, (2, 0, 1)), -1),
}


@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
def test_shape_op_gradients(name, rng):
    a = rng.standard_normal((2, 3, 4))
    sn.check_grad(lambda x: SHAPE_OPS[name](x) * 2.0, [a])


def test_squeeze_gradient(rng):
    sn.check_grad(lambda x: sn.squeeze(x) ** 2, [rng.standard_normal((3, 1, 4, 1))])
    sn.check_grad(lambda x: sn.squeeze(x, 1) ** 2, [rng.standard_normal((3, 1, 4, 1))])


@pytest.mark.parametrize(
    "sa,sb",
    [
        ((3, 4), (4, 5)),
        ((4,), (4, 5)),
        ((3, 4), (4,)),
        ((4,), (4,)),
        ((2, 3, 4), (4, 5)),
        ((2, 1, 3, 4), (5, 4, 2)),
        ((4,), (2, 4, 3)),
        ((2, 3, 4), (4,)),
    ],
)
def test_matmul_gradients(sa, sb, rng):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    sn.check_grad(operator.matmul, [a, b])
    if len(sa) <= 2 and len(sb) <= 2:
        sn.check_grad(sn.dot, [a, b])


def test_cast_gradients(rng):
    a = rng.uniform(0.5, 4.0, size=(3, 4))
    a[np.abs(a - np.round(a)) < 1e-2] += 0.05
    # through float32: exact in value, so only float32 rounding limits the differences
    sn.check_grad(lambda x: sn.cast(x, "float32").astype("float64") * x, [a], eps=1e-3, rtol=1e-4)
    # through an integer: the integer path passes no gradient, d(int(x) * x)/dx = int(x)
    sn.check_grad(lambda x: sn.cast(x, "int64") * x, [a])


INTEGER_OPERAND = {  # op(x, i) of a float x and an integer i: the integer passes no gradient
    "x @ i": (lambda x, i: x @ i, (3, 4), (4, 2)),
    "i @ x": (lambda x, i: i @ x, (4, 2), (3, 4)),
    "vector @ i": (lambda x, i: x @ i, (4,), (4, 2)),
    "i @ vector": (lambda x, i: i @ x, (4,), (3, 4)),
    "batched x @ i": (lambda x, i: x @ i, (2, 3, 4), (4, 2)),
    "tensordot": (lambda x, i: sn.tensordot(x, i, 1), (3, 4), (4, 2)),
    "einsum": (lambda x, i: sn.einsum("ij,jk->ik", x, i), (3, 4), (4, 2)),
    "solve(x, i)": (lambda x, i: sn.solve(x + 4 * sn.eye(3), i), (3, 3), (3,)),
    "solve(i, x)": (lambda x, i: sn.solve(i + 9 * sn.eye(3, dtype="int64"), x), (3, 2), (3, 3)),
    "conv2d(x, i)": (lambda x, i: sn.conv2d(x, i), (1, 2, 5, 4), (3, 2, 2, 2)),
    "conv2d(i, x)": (lambda x, i: sn.conv2d(i, x), (3, 2, 2, 2), (1, 2, 5, 4)),
    "concatenate": (lambda x, i: sn.concatenate([x, i, x]) ** 2, (2, 3), (4, 3)),
    "stack": (lambda x, i: sn.stack([i, x], axis=1) ** 2, (2, 3), (2, 3)),
}


@pytest.mark.parametrize("name", sorted(INTEGER_OPERAND))
def test_an_integer_operand_passes_no_gradient(name, rng):
    """docs/autodiff.md: an integer value passes no gradient. The rules of the products,
    solve, conv2d and concatenate gave one for the integer operand too, which the reverse
    mode took for gradients in the wrong order (a TypeError), not the float operand's."""
    op, x_shape, i_shape = INTEGER_OPERAND[name]
    i = sn.constant(rng.integers(-3, 4, size=i_shape).astype("int32"))
    sn.check_grad(lambda x: op(x, i), [rng.standard_normal(x_shape)])


INTEGER_EXPONENTS = {  # n's dtype: (n, x), n - 1 out of n's range somewhere
    "uint8": ([0, 0, 1], [100.0, 1e3, 3.0]),
    "int8": ([-128, 3, -2], [2.0, 2.0, 2.0]),
    "int16": ([-32768, 0, 2], [1.5, 1e5, 3.0]),
}


@pytest.mark.parametrize("dtype", sorted(INTEGER_EXPONENTS))
def test_pow_gradient_of_an_integer_exponent_tensor_does_not_wrap(dtype, backend):
    """d(x ** n)/dx = n * x ** (n - 1) for an integer tensor n: n - 1 was computed in n's
    dtype, so uint8 0 - 1 was 255 (0 * 100 ** 255 = NaN) and int8 -128 - 1 was 127."""
    nv, xv = INTEGER_EXPONENTS[dtype]
    x, n = sn.tensor("x", shape=(3,), dtype="float64"), sn.tensor("n", shape=(3,), dtype=dtype)
    na, xa = np.array(nv, dtype), np.array(xv)
    got = sn.function([x, n], sn.grad(sn.sum(x**n), x), backend=backend)(xa, na)
    want = na.astype("float64") * xa ** (na.astype("float64") - 1)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16"])
def test_pow_gradient_of_an_integer_base_wrt_the_exponent_is_in_float64(dtype, backend):
    """d(b ** y)/dy = b ** y * log(b) for an integer b and a float64 y is float64 all along:
    log(b) was log's own dtype for b (float16 for int8: a relative error of 2e-4)."""
    b, y = sn.tensor("b", shape=(3,), dtype=dtype), sn.tensor("y", shape=(3,), dtype="float64")
    bv, yv = np.array([3, 7, 1], dtype), np.array([2.0, 1.5, 0.5])
    got = sn.function([b, y], sn.grad(sn.sum(b**y), y), backend=backend)(bv, yv)
    want = bv.astype("float64") ** yv * np.log(bv.astype("float64"))
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)


def test_gradients_keep_each_input_dtype_and_static_shape():
    x = sn.tensor("x", shape=("batch", 3), dtype="float32")
    b = sn.tensor("b", shape=(3,), dtype="float64")
    gx, gb = sn.grad(sn.sum(sn.tanh(x) * b), [x, b])
    assert (gx.type.dtype, gx.type.shape) == (np.float32, ("batch", 3))
    assert (gb.type.dtype, gb.type.shape) == (np.float64, (3,))


def test_gradient_sums_broadcast_axes_of_unknown_dims(rng):
    x = sn.tensor("x", shape=(None, 3), dtype="float64")
    b = sn.tensor("b", shape=(None, 3), dtype="float64")
    gb = sn.grad(sn.sum((x * b) ** 2), b)
    a, bv = rng.standard_normal((4, 3)), rng.standard_normal((1, 3))
    got = sn.function([x, b], gb)(a, bv)
    np.testing.assert_allclose(got, np.sum(2 * a**2 * bv, axis=0, keepdims=True), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_second_derivatives(name, rng):
    a = positive(rng, (2, 3))
    sn.check_grad(lambda x: sn.grad(sn.sum(UNARY[name](x) * x), x), [a])


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_second_derivatives(name, rng):
    a, b = away_from_integer_quotients(rng, (2, 3), (3,))
    sn.check_grad(lambda x, y: sn.grad(sn.sum(BINARY[name](x, y) ** 2), [x, y])[1], [a, b])


@pytest.mark.parametrize("fn", [sn.sum, sn.mean, sn.max, sn.min])
def test_reduction_second_derivatives(fn, rng):
    a = rng.permutation(12).reshape(3, 4) / 5.0
    sn.check_grad(lambda x: sn.grad(fn(sn.exp(x), axis=1).sum() ** 2, x), [a])


def test_gradients_through_named_and_unknown_dims(rng):
    """Unknown sizes use the runtime shape ops (broadcast_like, sum_to_like, reshape_like)."""
    x = sn.tensor("x", shape=("batch", None), dtype="float64")
    w = sn.tensor("w", shape=(None,), dtype="float64")
    flat = sn.reshape(sn.tanh(x * w), (-1,))
    cost = sn.mean(flat**2) + sn.sum(sn.exp(x.T) * 0.1)
    (gx,) = sn.grad(cost, [x])
    v = sn.tensor("v", shape=("batch", None), dtype="float64")
    hv = sn.grad(sn.sum(gx * v), x)
    inputs = [x, w, v]
    grad_fn, hv_fn = sn.function(inputs, gx), sn.function(inputs, hv)
    xv, wv, vv = rng.standard_normal((4, 3)), rng.standard_normal(3), rng.standard_normal((4, 3))
    tanh = np.tanh(xv * wv)
    want = 2 * tanh * (1 - tanh**2) * wv / tanh.size + 0.1 * np.exp(xv)
    np.testing.assert_allclose(grad_fn(xv, wv, vv), want, rtol=1e-12)
    eps = 1e-6
    numeric = (grad_fn(xv + eps * vv, wv, vv) - grad_fn(xv - eps * vv, wv, vv)) / (2 * eps)
    np.testing.assert_allclose(hv_fn(xv, wv, vv), numeric, rtol=1e-6, atol=1e-8)


def _named_and_unknown():
    """a of ("n",) and b of (None,): at run time n may be 1 and b longer."""
    return sn.tensor("a", shape=("n",)), sn.tensor("b", shape=(None,))


@pytest.mark.parametrize("backend", ["py", "c"])
def test_a_named_dim_broadcast_against_an_unknown_one_sums_its_gradient(backend):
    """("n",) * (None,) is typed (?,): n may be 1 where the other side is 3, so the gradient
    of a is summed back to a's length when the function runs (it came back of length 3)."""
    a, b = _named_and_unknown()
    z = a * b
    assert sn.infer_shape(z) == (None,)
    ga, gb = sn.grad(sn.sum(z), [a, b])
    av, bv = np.array([2.0]), np.array([1.0, 2.0, 3.0])
    got_a, got_b = sn.function([a, b], [ga, gb], backend=backend)(av, bv)
    np.testing.assert_array_equal(got_a, [6.0])
    np.testing.assert_array_equal(got_b, [2.0, 2.0, 2.0])
    got_a, got_b = sn.function([a, b], [ga, gb], backend=backend)(bv, np.array([2.0]))
    np.testing.assert_array_equal(got_a, [2.0, 2.0, 2.0])  # the other way round too
    np.testing.assert_array_equal(got_b, [6.0])


def test_batch_axes_and_broadcast_to_of_a_name_against_an_unknown_size_sum_gradients(rng):
    p, q = sn.tensor("p", shape=("n", 3, 4)), sn.tensor("q", shape=(None, 4, 5))
    assert sn.infer_shape(p @ q) == (None, 3, 5)
    pv, qv = rng.standard_normal((1, 3, 4)), rng.standard_normal((2, 4, 5))
    gp = sn.function([p, q], sn.grad(sn.sum(p @ q), p))(pv, qv)
    want = (np.ones((2, 3, 5)) @ np.swapaxes(qv, -1, -2)).sum(axis=0, keepdims=True)
    np.testing.assert_allclose(gp, want, rtol=1e-12)
    a = sn.tensor("a", shape=("n",))
    k = sn.scalar("k", dtype="int64")
    wide = sn.broadcast_to(a, (k,))
    assert sn.infer_shape(wide) == (None,)
    ga = sn.function([a, k], sn.grad(sn.sum(wide * sn.arange(k)), a))(np.array([2.0]), 3)
    np.testing.assert_array_equal(ga, [3.0])
