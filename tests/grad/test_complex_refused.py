"""Gradients of complex values are refused, not silently wrong: the op rules multiply by
f'(z) where PyTorch's convention (dL/dx + i dL/dy) needs conj(f'(z)) (docs/autodiff.md)."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn

WHY = (
    "it is complex, and symnb's gradients of complex values are not verified "
    "(docs/autodiff.md); hold the real and imaginary parts in real float variables"
)


def test_a_gradient_with_respect_to_a_complex_variable_is_refused():
    """The refusal names the call made (sn.Lop's, sn.jacobian's... said sn.grad's)."""
    z = sn.tensor("z", shape=(None,), dtype="complex128")
    w = sn.constant(np.array([1 - 1j, 2j, 0.5]))
    for call, make in [
        ("sn.grad", lambda: sn.grad(sn.sum(sn.abs(z * w)), z)),
        ("sn.Lop", lambda: sn.Lop(sn.abs(z), z, sn.constant(np.ones(3)))),
        ("sn.Rop", lambda: sn.Rop(sn.abs(z), z, z)),
        ("sn.jacobian", lambda: sn.jacobian(sn.abs(z), z)),
        ("sn.hessian", lambda: sn.hessian(sn.sum(sn.abs(z)), z)),
    ]:
        with pytest.raises(sn.DTypeError) as info:
            make()
        message = str(info.value)
        assert message.startswith(
            f"{call}: cannot differentiate with respect to 'z' (complex128(?,)): "
        ), message
        assert WHY in message
        assert info.value.location.filename == __file__


def test_a_gradient_through_a_complex_value_is_refused_naming_it():
    x = sn.vector("x", dtype="float64")
    phase = sn.exp(x * 1j)
    with pytest.raises(sn.DTypeError, match=r"^sn.grad: cannot differentiate through ") as info:
        sn.grad(sn.sum(sn.abs(phase)), x)
    assert "(complex128(?,)), the mul at " in str(info.value) and WHY in str(info.value)
    with pytest.raises(sn.DTypeError, match=r"through .*complex128"):
        sn.Rop(sn.abs(phase), x, sn.constant(np.ones(2)))


def test_complex_values_off_the_gradients_path_do_not_matter():
    x = sn.vector("x", dtype="float64")
    z = sn.tensor("z", shape=(None,), dtype="complex128")
    g = sn.grad(sn.sum(x * 2) + sn.sum(sn.abs(z)), x)
    got = sn.function([x, z], g, backend="py")(np.ones(2), np.array([1j]))
    np.testing.assert_array_equal(got, [2.0, 2.0])


def test_complex_values_that_pass_no_gradient_are_not_refused():
    """A complex value reached only through a comparison, an isnan mask or sn.zero_grad
    passes no gradient (integer and boolean values pass none): the gradient does not flow
    through it, so it is not refused (it was, as the walk followed every input)."""
    x = sn.vector("x", dtype="float64")
    v = np.array([0.5, 2.0])
    cases = [
        (sn.sum(x * (sn.abs(x * 1j) > 1)), [0.0, 1.0]),
        (sn.sum(sn.abs(sn.zero_grad(x * 1j)) * x), np.abs(v)),
        (sn.sum(sn.where(sn.isnan(x * 1j), 0, x)), [1.0, 1.0]),
        (sn.sum(sn.abs(sn.disconnected_grad(sn.exp(x * 1j))) * x), [1.0, 1.0]),
    ]
    for cost, want in cases:
        got = sn.function([x], sn.grad(cost, x), backend="py")(v)
        np.testing.assert_allclose(got, want)


def test_a_complex_value_beside_a_stopped_one_is_still_refused():
    """Where the gradient does flow through a complex value, beside one it does not, the
    refusal names the one it flows through."""
    x = sn.vector("x", dtype="float64")
    phase = sn.exp(x * 1j)
    cost = sn.sum(sn.abs(sn.zero_grad(x * 2j)) + sn.abs(phase) * (sn.abs(phase) > 0))
    with pytest.raises(sn.DTypeError, match=r"^sn.grad: cannot differentiate through ") as e:
        sn.grad(cost, x)
    assert "(complex128(?,)), the mul at " in str(e.value) and WHY in str(e.value)
    assert "phase = sn.exp(x * 1j): it is complex" in str(e.value)  # not zero_grad's x * 2j
