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


@pytest.mark.parametrize("multiplier", ["a", None, float("nan")])
def test_grad_scale_refuses_a_multiplier_that_is_not_a_number_at_the_users_line(multiplier):
    """``grad_scale(x, "a")`` and ``(x, None)`` escaped as the ValueError/TypeError of
    ``float(multiplier)`` inside markers.py, naming neither grad_scale nor the user's line."""
    x = T.dvector("x")
    shown = f"grad_scale: the multiplier must be a real number, not {multiplier!r}"
    with pytest.raises(sn.ArgumentError, match=shown) as raised:
        theano.gradient.grad_scale(x, multiplier)
    assert raised.value.location.filename == __file__


def test_rop_takes_tangents_from_the_wrt_that_f_uses():
    """Theano 1.0's Rop goes forward from the wrt that f uses: one that f does not use adds
    nothing (``T.Rop(exp(x) * 2, [x, y], [vx, vy])`` raised about y), and every other leaf's
    tangent is zero, so an f computed from none of wrt is zeros (``T.Rop(T.sin(x), z, z)``
    raised); ``disconnected_outputs`` is about an output with no tangent at all."""
    x, y, z = T.dvector("x"), T.dvector("y"), T.dvector("z")
    jvp = T.Rop(T.exp(x) * 2, [x, y], [T.ones_like(x), T.ones_like(y)])
    run = theano.function([x, y], jvp, on_unused_input="ignore")
    np.testing.assert_allclose(run(np.log([1.0, 2.0, 3.0]), np.ones(3)), [2.0, 4.0, 6.0])
    a, b = T.Rop([T.exp(x), T.sin(z)], [x, y], [x, y])
    run = theano.function([x, y, z], [a, b], on_unused_input="ignore")
    got_a, got_b = run(np.zeros(2), np.ones(2), np.ones(2))
    np.testing.assert_allclose(got_a, [0.0, 0.0])
    np.testing.assert_array_equal(got_b, [0.0, 0.0])
    zeros = theano.function([x, z], T.Rop(T.sin(x), z, z), on_unused_input="ignore")
    np.testing.assert_array_equal(zeros(np.ones(3), np.ones(3)), np.zeros(3))


def test_rop_of_an_output_with_no_tangent_names_the_theano_call():
    x, y = T.dvector("x"), T.dvector("y")
    with pytest.raises(sn.DisconnectedInputError) as info:
        T.Rop(y, x, x)
    message = str(info.value)
    assert message.startswith("T.Rop: output 0, 'y' (float64(?,)), has no tangent: it is an")
    assert "disconnected_outputs='ignore' or 'warn' to get zeros" in message
    assert "T.grad" not in message and "test_gradient_markers.py" in message
    with pytest.raises(sn.DisconnectedInputError, match="only through theano.gradient.dis"):
        T.Rop(T.sin(theano.gradient.disconnected_grad(x)), x, x)
    with pytest.warns(sn.DisconnectedInputWarning, match="T.Rop: output 1, 'y'"):
        _, zero = T.Rop([x * 2, y], x, x, disconnected_outputs="warn")
    np.testing.assert_array_equal(theano.function([y], zero)(np.ones(2)), np.zeros(2))
    assert T.Rop(y, x, x, "ignore", return_disconnected="None") is None
    with pytest.raises(ValueError, match="T.Rop: disconnected_outputs='no'"):
        T.Rop(y, x, x, disconnected_outputs="no")


def test_sn_rops_own_message_keeps_symnbs_names_beside_the_theano_layer():
    """This module uses the Theano layer, whose names the messages of symnb's calls took:
    sn.Rop's said 'T.Rop ... theano.gradient.disconnected_grad; pass disconnected=...'."""
    x, z = sn.tensor("x", shape=(3,)), sn.tensor("z", shape=(3,))
    with pytest.raises(sn.DisconnectedInputError) as info:
        sn.Rop(sn.sin(x), z, np.ones(3))
    message = str(info.value).split("\n  at ")[0]  # (the user's line: its path may say theano)
    assert message.startswith("sn.Rop: f does not depend on 'z'"), message
    assert "only through sn.disconnected_grad" in message and "theano" not in message
