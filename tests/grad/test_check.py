"""The finite-difference checker: passes right gradients, reports the worst wrong element."""

import numpy as np
import pytest

import symnb as sn
from symnb.core.op import Op
from symnb.ops.elemwise import Elemwise


class _WrongSin(Elemwise):
    """sin with a gradient that is off by a factor 2 on purpose."""

    nin = 1
    impl = staticmethod(np.sin)

    def grad_elem(self, inputs, output, gz):
        return [gz * 2 * sn.cos(inputs[0])]


def test_check_grad_accepts_a_right_gradient(rng):
    x, w = rng.standard_normal((3, 4)), rng.standard_normal(4)
    assert sn.check_grad(lambda a, b: sn.tanh(a * b + 1) ** 2, [x, w]) is None


def test_check_grad_names_the_input_and_element_of_the_worst_mismatch(rng):
    x, y = rng.standard_normal((2, 3)), rng.standard_normal(3)
    with pytest.raises(sn.GradientError, match=r"input 1 'x1' \(float64\(3,\)\).*element \(\d,\)"):
        sn.check_grad(lambda a, b: a * _WrongSin()(b), [x, y])
    with pytest.raises(AssertionError, match=r"analytic .*numeric .*3 of 3 elements"):
        sn.check_grad(lambda a, b: a * _WrongSin()(b), [x, y])


def test_check_grad_holds_integer_inputs_fixed(rng):
    x, k = rng.standard_normal(5), np.arange(5)
    sn.check_grad(lambda a, n: a * n + a**2, [x, k])


def test_check_grad_refuses_a_complex_input_naming_it(rng):
    """A complex input was held fixed like an integer one: alone, the check checked nothing
    and passed; sn.grad refuses gradients with respect to complex variables."""
    x, z = rng.standard_normal(2), np.array([1 + 2j, 3 - 1j])
    for fn, arrays, index in [
        (lambda v: sn.abs(v) ** 2, [z], 0),
        (lambda a, v: a * sn.abs(v), [x, z], 1),
    ]:
        with pytest.raises(sn.DTypeError) as info:
            sn.check_grad(fn, arrays)
        message = str(info.value)
        assert message.startswith(
            f"check_grad: input {index} 'x{index}' (complex128(2,)) is complex: "
        ), message
        assert "not verified (docs/autodiff.md)" in message
        assert info.value.location.filename == __file__


def test_check_grad_projection_depends_on_rng(rng):
    x = rng.standard_normal(4)
    sn.check_grad(sn.exp, [x], rng=np.random.default_rng(7))
    sn.check_grad(sn.exp, [x], rng=3)


def test_op_without_gradient_is_reported_by_check_grad(rng):
    class _NoGrad(Op):
        def infer_types(self, x):
            return [x.type]

        def perform(self, x):
            return np.array(x)

    with pytest.raises(sn.NotDifferentiableError, match="no_grad"):
        sn.check_grad(lambda a: _NoGrad()(a) * 2, [rng.standard_normal(3)])


def test_check_grad_with_an_unused_input_and_a_0d_output(rng):
    sn.check_grad(lambda a, b: sn.sum(a**2), [rng.standard_normal(3), rng.standard_normal(2)])
    with pytest.raises(TypeError, match="a float output is needed"):
        sn.check_grad(lambda a: a > 0, [rng.standard_normal(3)])


@pytest.mark.parametrize(
    "options, refused",
    [
        ({"eps": 0}, "eps is a positive finite number (the finite-difference step), not 0"),
        ({"eps": 0.0}, "eps is a positive finite number (the finite-difference step), not 0.0"),
        ({"eps": -1e-6}, "eps is a positive finite number"),
        ({"eps": np.inf}, "eps is a positive finite number"),
        ({"eps": "a"}, "eps is a positive finite number (the finite-difference step), not 'a'"),
        ({"rtol": "a"}, "rtol is a non-negative number, not 'a'"),
        ({"atol": None, "rtol": [1, 2]}, "rtol is a non-negative number, not [1, 2]"),
        ({"atol": -1e-7}, "atol is a non-negative number, not -1e-07"),
        ({"rtol": np.nan}, "rtol is a non-negative number, not nan"),
        ({"eps": True}, "eps is a positive finite number (the finite-difference step), not True"),
    ],
)
def test_check_grad_refuses_a_step_or_tolerance_that_is_no_such_number(rng, options, refused):
    # eps=0 was a ZeroDivisionError, a string or a list a NumPy error from the comparison
    with pytest.raises(sn.ArgumentError) as error:
        sn.check_grad(lambda a: sn.sum(a**2), [rng.standard_normal(3)], **options)
    assert str(error.value).startswith(f"check_grad: {refused}")
    assert error.value.location.filename == __file__
    sn.check_grad(sn.exp, [rng.standard_normal(3)], eps=np.float32(1e-6), rtol=1e-4, atol=0)


@pytest.mark.parametrize("kind", [list, tuple])
def test_check_grad_refuses_an_fn_of_several_outputs_saying_so(rng, kind):
    """fn returning a list was made a constant: an InputError 'NumPy cannot make an array'
    of a symbolic variable, with a hint to compile it, which named neither fn nor what it
    returned. It is an ArgumentError naming the outputs, at the user's line."""
    with pytest.raises(sn.ArgumentError) as error:
        sn.check_grad(lambda x: kind([x * x, sn.exp(x)]), [rng.standard_normal(3)])
    message = str(error.value)
    assert message.startswith(
        f"check_grad: fn returned a {kind.__name__} of 2 outputs (an unnamed variable "
        "(float64(3,)), an unnamed variable (float64(3,))); it must return one variable"
    ), message
    assert "NumPy cannot make" not in message
    assert error.value.location.filename == __file__


def test_check_grad_runs_on_a_chosen_backend(rng, backend):
    sn.check_grad(
        lambda a, b: sn.sigmoid(a @ b),
        [rng.standard_normal((2, 3)), rng.standard_normal(3)],
        backend=backend,
    )


def test_check_grad_gives_fn_the_variables_it_is_given(rng):
    """``variables=``: the inputs fn gets (a layer's own types, dims unknown allowed), each
    checked against its array's dtype and shape."""
    seen = []
    a, b = sn.tensor("a", shape=(None, 4)), sn.tensor("b", shape=(4,))

    def fn(x, y):
        seen.append((x, y))
        return sn.tanh(x @ y)

    x, w = rng.standard_normal((3, 4)), rng.standard_normal(4)
    assert sn.check_grad(fn, [x, w], variables=[a, b]) is None
    assert seen and all(got == (a, b) for got in seen)
    with pytest.raises(sn.GradientError, match=r"input 0 'a' \(float64\(\?, 4\)\)"):
        sn.check_grad(lambda p, q: _WrongSin()(p) @ q, [x, w], variables=[a, b])
    with pytest.raises(sn.ArgumentError, match="1 variables for 2 input arrays"):
        sn.check_grad(fn, [x, w], variables=[a])
    with pytest.raises(sn.ArgumentError, match=r"variables\[1\] must be an input variable"):
        sn.check_grad(fn, [x, w], variables=[a, b * 2])
    with pytest.raises(
        sn.DTypeError, match=r"variables\[0\] 'a' .* does not fit .*float32\(3, 4\)"
    ):
        sn.check_grad(fn, [x.astype("float32"), w], variables=[a, b])
    with pytest.raises(sn.DTypeError, match=r"variables\[1\] 'b' .* does not fit .*float64\(5,\)"):
        sn.check_grad(fn, [x, rng.standard_normal(5)], variables=[a, b])


def test_check_grad_refuses_an_fn_or_inputs_of_the_wrong_kind_naming_it(rng):
    """fn=3 failed inside the check ("'int' object is not callable"), and a lone array for
    inputs was iterated as one 0-d input per element ("takes 1 positional argument but 3
    were given"). Each is an ArgumentError naming the argument, at the user's line; a lone
    array is refused, not read as one input (a matrix's rows could be meant as inputs)."""
    for fn, inputs, refused in [
        (
            3,
            [np.ones(3)],
            "fn is the function to check (it takes one symbolic variable per "
            "input array and returns a variable), not 3 (int)",
        ),
        (None, [np.ones(3)], "fn is the function to check"),
        (
            sn.vector("v"),
            [np.ones(3)],
            "fn is the function to check (it takes one symbolic "
            "variable per input array and returns a variable), not 'v' (float64(?,))",
        ),
        (
            lambda a: sn.sum(a**2),
            np.ones(3),
            "inputs is a list (or tuple) of arrays, one per "
            "argument of fn, not an array float64(3,); for one input write [array]",
        ),
        (
            lambda a: sn.sum(a**2),
            2.0,
            "inputs is a list (or tuple) of arrays, one per argument of fn, not 2.0 (float)",
        ),
    ]:
        with pytest.raises(sn.ArgumentError) as error:
            sn.verify_grad(fn, inputs) if fn is None else sn.check_grad(fn, inputs)
        assert str(error.value).startswith(f"check_grad: {refused}"), str(error.value)
        assert error.value.location.filename == __file__
    assert sn.check_grad(lambda a: sn.sum(a**2), (rng.standard_normal(3),)) is None
