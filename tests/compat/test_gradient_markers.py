"""``theano.gradient``'s markers and ``T.Rop`` under the layer's names."""

import numpy as np
import pytest

import symnb as sn
import symnb.compat.theano as theano
import symnb.compat.theano.tensor as T


def test_grad_scale_scales_the_gradient_only():
    x = T.dvector("x")
    y = theano.gradient.grad_scale(x, 3.0)
    v, xv = np.array([1.0, 2.0]), np.array([1.0, np.inf])
    f = theano.function([x], [y, T.grad(T.sum(y**2), x), T.Rop(y**2, x, v)], mode="FAST_COMPILE")
    with np.errstate(invalid="ignore"):
        value, g, jvp = f(xv)
    np.testing.assert_array_equal(value, xv)  # it was zero_grad(x) + 3 * (x - x): inf - inf
    np.testing.assert_allclose(g[:1], [6.0])
    np.testing.assert_allclose(jvp[:1], [2.0])  # the tangent of x ** 2, not scaled (was 6)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_grad_scale_by_a_symbolic_or_array_multiplier_is_the_identity_forward(mode):
    """A symbolic or array multiplier was written out as zero_grad(x) + m * (x -
    zero_grad(x)): inf - inf gave NaN forward, the dtype was upcast (float32 x with a
    float64 m: float64; int32 x: float64) and T.Rop was scaled by m."""
    x, m = T.dvector("x"), T.dscalar("m")
    y = theano.gradient.grad_scale(x, m)
    v = np.array([1.0, 2.0])
    f = theano.function([x, m], [y, T.grad(T.sum(y**2), x), T.Rop(y**2, x, v)], mode=mode)
    with np.errstate(invalid="ignore"):
        value, g, jvp = f(np.array([1.0, np.inf]), 3.0)
    np.testing.assert_array_equal(value, [1.0, np.inf])
    np.testing.assert_allclose(g[:1], [6.0])  # 3 * d(x ** 2)/dx
    np.testing.assert_allclose(jvp[:1], [2.0])  # the tangent of x ** 2, not scaled
    xf = T.fvector("xf")
    assert theano.gradient.grad_scale(xf, m).dtype == "float32"
    assert theano.gradient.grad_scale(T.ivector("i"), m).dtype == "int32"
    per_element = theano.gradient.grad_scale(xf, np.array([0.5, 2.0]))
    assert per_element.dtype == "float32"
    g = theano.function([xf], T.grad(T.sum(per_element * 3), xf), mode=mode)(np.ones(2, "f4"))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, [1.5, 6.0])
    with pytest.raises(sn.ShapeError, match=r"grad_scale: the multiplier .* would stretch 'x'"):
        theano.gradient.grad_scale(x, np.ones((2, 2)))


def test_rop_of_a_disconnected_input_names_the_theano_call():
    x, z = T.dvector("x"), T.dvector("z")
    with pytest.raises(sn.DisconnectedInputError) as info:
        T.Rop(T.sin(x), z, z)
    message = str(info.value)
    assert message.startswith("T.Rop: f does not depend on 'z'")
    assert "disconnected_outputs='ignore' or 'warn'" in message and "T.grad" not in message
