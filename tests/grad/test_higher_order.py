"""Second order, Hessians against analytic ones, and Rop / Lop / jacobian cross-checks."""

import numpy as np
import pytest

import symnb as sn


def f64(name, shape):
    return sn.tensor(name, shape=shape, dtype="float64")


def logsumexp(x):
    """Written by hand, shifted by the max for stability."""
    m = sn.max(x)
    return m + sn.log(sn.sum(sn.exp(x - m)))


def test_hessian_of_a_quadratic_is_its_symmetric_matrix(rng):
    a, b = rng.standard_normal((5, 5)), rng.standard_normal(5)
    x = f64("x", (5,))
    cost = 0.5 * sn.sum(x * (sn.constant(a) @ x)) + sn.sum(sn.constant(b) * x)
    hess = sn.hessian(cost, x)
    assert hess.type.shape == (5, 5)
    got = sn.function([x], hess)(rng.standard_normal(5))
    assert np.max(np.abs(got - (a + a.T) / 2)) < 1e-12


def test_hessian_of_logsumexp_is_diag_p_minus_outer_p(rng):
    x = f64("x", (6,))
    hess = sn.hessian(logsumexp(x), x)
    value = rng.standard_normal(6) * 3
    p = np.exp(value - value.max())
    p /= p.sum()
    got = sn.function([x], hess)(value)
    assert np.max(np.abs(got - (np.diag(p) - np.outer(p, p)))) < 1e-12


def test_hessian_of_a_matrix_input_and_of_several_inputs(rng):
    w, v = f64("w", (2, 3)), f64("v", (3,))
    hw, hv = sn.hessian(sn.sum(w**3) + sn.sum(sn.exp(v)), [w, v])
    assert hw.type.shape == (2, 3, 2, 3) and hv.type.shape == (3, 3)
    wv, vv = rng.standard_normal((2, 3)), rng.standard_normal(3)
    got_w, got_v = sn.function([w, v], [hw, hv])(wv, vv)
    want_w = np.diag(6 * wv.ravel()).reshape(2, 3, 2, 3)
    np.testing.assert_allclose(got_w, want_w, atol=1e-12)
    np.testing.assert_allclose(got_v, np.diag(np.exp(vv)), atol=1e-12)


def test_grad_of_a_gradient(rng):
    x, v = f64("x", ("n",)), f64("v", ("n",))
    g = sn.grad(sn.sum(x**3 * sn.sin(x)), x)
    hv = sn.grad(sn.sum(g * v), x)  # Hessian-vector product
    xv, vv = rng.uniform(0.5, 2, 4), rng.standard_normal(4)
    want = (6 * xv * np.sin(xv) + 6 * xv**2 * np.cos(xv) - xv**3 * np.sin(xv)) * vv
    np.testing.assert_allclose(sn.function([x, v], hv)(xv, vv), want, rtol=1e-12)
    sn.check_grad(lambda a: sn.grad(sn.sum(sn.tanh(a) ** 2), a), [xv])


def test_third_order_through_reductions_and_matmul(rng):
    sn.check_grad(
        lambda a, w: sn.grad(sn.sum(sn.grad(sn.mean((a @ w) ** 3), w) ** 2), a),
        [rng.standard_normal((3, 2)), rng.standard_normal((2, 4))],
    )


def network(w, x):
    return sn.tanh(w @ x) * sn.sum(x**2)


def test_rop_lop_and_jacobian_agree(rng):
    w, x = f64("w", (3, 4)), f64("x", (4,))
    f = network(w, x)
    dw, dx, u = (sn.constant(rng.standard_normal(s)) for s in [(3, 4), (4,), (3,)])
    jw, jx = sn.jacobian(f, [w, x])
    assert jw.type.shape == (3, 3, 4) and jx.type.shape == (3, 4)
    jvp = sn.Rop(f, [w, x], [dw, dx])
    vjp_w, vjp_x = sn.Lop(f, [w, x], u)
    run = sn.function([w, x], [jw, jx, jvp, vjp_w, vjp_x])
    jw_v, jx_v, jvp_v, lw_v, lx_v = run(rng.standard_normal((3, 4)), rng.standard_normal(4))
    want_jvp = np.tensordot(jw_v, dw.value, 2) + jx_v @ dx.value
    np.testing.assert_allclose(jvp_v, want_jvp, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(lw_v, np.tensordot(u.value, jw_v, 1), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(lx_v, u.value @ jx_v, rtol=1e-12, atol=1e-14)
    # <u, J v> == <J^T u, v>
    assert np.isclose(u.value @ jvp_v, np.sum(lw_v * dw.value) + lx_v @ dx.value, rtol=1e-12)


def test_jacobian_matches_finite_differences(rng):
    x = f64("x", (3,))
    jac = sn.jacobian(sn.exp(x) * sn.sum(x), x)
    value = rng.standard_normal(3)
    want = np.diag(np.exp(value) * value.sum()) + np.outer(np.exp(value), np.ones(3))
    np.testing.assert_allclose(sn.function([x], jac)(value), want, rtol=1e-12)


def test_rop_of_a_batched_output_with_named_dims(rng):
    x, w = f64("x", ("batch", 3)), f64("w", (3, 2))
    f = sn.sigmoid(x @ w)
    dw = rng.standard_normal((3, 2))
    jvp = sn.Rop(f, w, dw)
    assert jvp.type.shape == ("batch", 2)
    xv, wv = rng.standard_normal((5, 3)), rng.standard_normal((3, 2))
    s = 1 / (1 + np.exp(-(xv @ wv)))
    want = s * (1 - s) * (xv @ dw)
    np.testing.assert_allclose(sn.function([x, w], jvp)(xv, wv), want, rtol=1e-12)
    assert not any(v.name and v.name.startswith("cotangent") for v in _leaves(jvp))


def _leaves(var):
    from symnb.core.graph import leaves

    return leaves([var])


@pytest.mark.parametrize("shape", [(), (3,), (None,)], ids=["0-d", "fixed", "symbolic"])
def test_jacobian_of_an_integer_expression_is_refused_whatever_its_shape(shape):
    """An integer expression's Jacobian was a DTypeError for a 0-d one (through sn.grad's
    cost) but zeros for any other: it has no derivative, whatever its shape (sn.grad's
    integer cost and sn.Rop's integer f are DTypeErrors too)."""
    x = f64("x", shape)
    with pytest.raises(sn.DTypeError) as info:
        sn.jacobian(sn.cast(x * 2, "int64"), x)
    message = str(info.value)
    assert message.startswith("sn.jacobian: the expression an unnamed variable (int64("), message
    assert "is not a float; it has no derivative" in message
    assert "test_higher_order.py" in message


def test_jacobian_of_a_symbolic_shape_is_a_scan_over_rows():
    x, y = f64("x", ("n",)), f64("y", ("m",))
    jx, jy = sn.jacobian(x[:, None] * 2 + 0 * y.sum(), [x, y], disconnected="ignore")
    assert jx.type.ndim == 3 and jy.type.ndim == 3
    xv, yv = np.arange(3.0), np.ones(2)
    got_x, got_y = sn.function([x, y], [jx, jy])(xv, yv)
    np.testing.assert_allclose(got_x, 2 * np.eye(3)[:, None, :])
    np.testing.assert_allclose(got_y, np.zeros((3, 1, 2)))


def test_jacobian_and_rop_of_disconnected_inputs():
    x, y = f64("x", (2,)), f64("y", (3,))
    with pytest.raises(sn.DisconnectedInputError, match="'y'"):
        sn.jacobian(x * 2, [x, y])
    jx, jy = sn.jacobian(x * 2, [x, y], disconnected="ignore")
    assert jy.type.shape == (2, 3)
    np.testing.assert_array_equal(sn.function([x], jy)(np.ones(2)), np.zeros((2, 3)))
    assert sn.jacobian(x * 2, y, "ignore", return_disconnected="none") is None
    assert sn.Rop(x * 2, y, np.ones(3), "ignore", return_disconnected="none") is None


def test_a_symbolic_shapes_jacobian_needs_no_value_of_a_disconnected_fixed_shape_wrt():
    """The scan's zero block read shape(y), so sn.function([xs], ...) refused: 'the outputs
    depend on y'. sn.grad and the fixed-shape Jacobian never read it; nor does this now."""
    xs, y = f64("xs", (None,)), f64("y", (3,))
    jx, jy = sn.jacobian(xs * 2, [xs, y], disconnected="ignore")
    assert jy.type.shape[1:] == (3,)
    got_x, got_y = sn.function([xs], [jx, jy], backend="py")(np.array([0.5, -1.0]))
    np.testing.assert_allclose(got_x, 2 * np.eye(2))
    np.testing.assert_array_equal(got_y, np.zeros((2, 3)))


@pytest.mark.parametrize("backend", ["py", "c"])
def test_hessian_of_crossentropy_with_int_labels_is_diag_p_minus_outer_p(rng, backend):
    """Through take_along_axis's gradient (inc_along_axis), whose value input must get
    the second-order term."""
    x, y = f64("x", (5,)), sn.tensor("y", shape=(), dtype="int64")
    hess = sn.hessian(sn.crossentropy(sn.softmax(x), y), x)
    value = rng.standard_normal(5) * 2
    p = np.exp(value - value.max())
    p /= p.sum()
    got = sn.function([x, y], hess, backend=backend)(value, 3)
    np.testing.assert_allclose(got, np.diag(p) - np.outer(p, p), atol=1e-12)


def test_rop_and_second_order_through_take_along_axis(rng):
    t, v = f64("t", (2, 3)), f64("v", (2, 3))
    idx = np.array([[0, 0], [2, 1]])
    picked = sn.take_along_axis(t, idx, 1)
    tv, vv = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    got = sn.function([t, v], sn.Rop(picked, t, v))(tv, vv)
    np.testing.assert_allclose(got, np.take_along_axis(vv, idx, 1), rtol=1e-12)
    sn.check_grad(lambda a: sn.grad(sn.sum(sn.take_along_axis(a, idx, 1) ** 3), a), [tv])


@pytest.mark.parametrize("backend", ["py", "c"])
@pytest.mark.parametrize("options", [{}, {"stride": 1, "padding": 1}, {"stride": (1, 2)}])
def test_rop_and_hessian_vector_products_through_max_pooling(rng, backend, options):
    """max_pool2d's gradient is linear in the cotangent: its own gradient picks the
    cotangent at each window's maximum (with a ReLU before the pool folded in, too)."""
    x, v = f64("x", (2, 3, 5, 5)), f64("v", (2, 3, 5, 5))
    xv, vv = rng.standard_normal((2, 3, 5, 5)), rng.standard_normal((2, 3, 5, 5))
    pooled = sn.max_pool2d(x, 2, **options)
    forward = sn.function([x], pooled, backend="py")
    want = (forward(xv + 1e-6 * vv) - forward(xv - 1e-6 * vv)) / 2e-6
    got = sn.function([x, v], sn.Rop(pooled, x, v), backend=backend)(xv, vv)
    np.testing.assert_allclose(got, want, atol=1e-8)
    cost = sn.sum(sn.max_pool2d(sn.relu(x), 2, **options) ** 2)
    gradient = sn.function([x], sn.grad(cost, x), backend="py")
    want = (gradient(xv + 1e-6 * vv) - gradient(xv - 1e-6 * vv)) / 2e-6
    hv = sn.grad(sn.sum(sn.grad(cost, x) * v), x)
    np.testing.assert_allclose(sn.function([x, v], hv, backend=backend)(xv, vv), want, atol=1e-7)


@pytest.mark.parametrize("shape", [(3,), (None,)])
@pytest.mark.parametrize("backend", ["py", "c"])
def test_a_wrt_listed_twice_gets_its_jacobian_twice_not_doubled(shape, backend):
    """A tied weight listed twice: one Jacobian per entry, as sn.grad gives its gradient
    twice (the fixed-shape rows were summed into one total per variable, giving 2 J)."""
    x, y = f64("x", shape), f64("y", shape)
    xv = np.array([0.1, 0.5, -0.3])
    ja, jy, jb = sn.function([x, y], sn.jacobian(sn.exp(x) + 0 * y, [x, y, x]), backend=backend)(
        xv, xv
    )
    np.testing.assert_allclose(ja, np.diag(np.exp(xv)), rtol=1e-12)
    np.testing.assert_allclose(jb, np.diag(np.exp(xv)), rtol=1e-12)
    np.testing.assert_array_equal(jy, np.zeros((3, 3)))
    ha, hb = sn.function([x], sn.hessian(sn.sum(x**3), [x, x]), backend=backend)(xv)
    np.testing.assert_allclose(ha, np.diag(6 * xv), rtol=1e-12)
    np.testing.assert_allclose(hb, np.diag(6 * xv), rtol=1e-12)


def test_a_fixed_shape_jacobian_does_work_linear_in_its_size():
    """The rows of a fixed-shape Jacobian are stacked: placing each as a one-hot outer
    product and summing them built n arrays of n x n (an (800,) expression's Jacobian took
    137 ms a call, the scan over a symbolic shape 0.8 ms). The graph's elements, summed over
    its nodes, stay within a few times the Jacobian's own; its values are exact."""
    from symnb.core.graph import ancestors

    n = 40
    x = sn.tensor("x", shape=(n,), dtype="float64")
    jac = sn.jacobian(sn.tanh(x) * x, x)
    elements = sum(
        int(np.prod(out.type.shape)) for node in ancestors([jac]) for out in node.outputs
    )
    assert elements < 10 * n * n, elements
    value = np.linspace(-1.5, 2.0, n)
    got = sn.function([x], jac, backend="py")(value)
    want = np.diag(np.tanh(value) + value * (1 - np.tanh(value) ** 2))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    ("call", "given", "says"),
    [
        (sn.jacobian, lambda x: [x**2, x * 3], "sn.jacobian: `expression` must be one"),
        (sn.jacobian, lambda x: (x**2,), "sn.jacobian: `expression` must be one"),
        (sn.hessian, lambda x: [sn.sum(x**3)], "sn.hessian: `cost` must be one"),
    ],
)
def test_a_list_of_expressions_is_refused_naming_the_argument(call, given, says):
    """``sn.jacobian([x ** 2, x * 3], x)`` was an AttributeError from inside ('list' object
    has no attribute 'type'); Theano asserted "tensor.jacobian expects a Variable as
    `expression`"."""
    x = sn.tensor("x", shape=(None,), dtype="float64")
    with pytest.raises(sn.ArgumentError) as info:
        call(given(x), x)
    message = str(info.value)
    assert message.startswith(says), message
    assert "once per" in message and "test_higher_order.py" in message, message
