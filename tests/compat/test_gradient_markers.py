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


def test_rop_of_a_disconnected_input_names_the_theano_call():
    x, z = T.dvector("x"), T.dvector("z")
    with pytest.raises(sn.DisconnectedInputError) as info:
        T.Rop(T.sin(x), z, z)
    message = str(info.value)
    assert message.startswith("T.Rop: f does not depend on 'z'")
    assert "disconnected_outputs='ignore' or 'warn'" in message and "T.grad" not in message
