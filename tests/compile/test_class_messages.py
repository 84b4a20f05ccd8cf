"""What a student sees at call time and when compiling updates: shape errors that
``except sn.ShapeError`` catches, lossy updates that name the culprit and the line, advice for
float labels, and the hint for ``if x > 0:``."""

import numpy as np
import pytest

import symnb as sn


def _line_of(marker: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, start=1) if marker in line)


@pytest.fixture
def classifier():
    x = sn.tensor("x", shape=("batch", 3), dtype="float32")
    y = sn.tensor("y", shape=("batch",), dtype="int64")
    return sn.function([x, y], x.sum(axis=1) + y)


@pytest.mark.parametrize(
    "xs, ys, fragment",
    [
        ((2, 3, 1), (2,), "it has 3 dims, expected 2"),
        ((2, 4), (2,), "axis 1 has length 4, expected 3"),
        ((2, 3), (5,), "'batch' (axis 0) is 5 here but 2 in input 0 'x'"),
    ],
)
def test_a_wrong_shape_at_call_time_is_a_shape_error_and_an_input_error(
    classifier, xs, ys, fragment
):
    with pytest.raises(sn.ShapeError) as info:
        classifier(np.ones(xs, "float32"), np.zeros(ys, "int64"))  # <- call line
    assert isinstance(info.value, sn.InputError)
    assert fragment in str(info.value)
    assert info.value.location.lineno == _line_of("<- call line")
    assert type(info.value).__name__ == "InputError"  # as tracebacks and `symnb check` say


def test_a_wrong_dtype_at_call_time_is_not_a_shape_error(classifier):
    with pytest.raises(sn.InputError) as info:
        classifier(np.ones((2, 3)), np.zeros(2, "int64"))
    assert not isinstance(info.value, sn.ShapeError)


def test_a_shared_value_of_the_wrong_shape_is_a_shape_error():
    W = sn.shared(np.zeros((4, 3)), name="W")
    with pytest.raises(sn.ShapeError, match=r"shared 'W' \(float64\(4, 3\)\): the new value"):
        W.set_value(np.zeros((3, 4)))


@pytest.mark.parametrize(
    "labels, why",
    [
        (np.array([0.0, 2.0]), "they are whole numbers"),
        (np.array([0.5, 1.0]), "some are not whole numbers"),
    ],
)
def test_float_labels_for_an_int_input_are_told_to_convert_the_labels(classifier, labels, why):
    with pytest.raises(sn.InputError) as info:
        classifier(np.ones((2, 3), "float32"), labels)
    message = str(info.value)
    assert "input 1 'y' expects int64, got a float64 array" in message
    assert "class labels" in message and why in message
    assert "hint: convert them with value.astype('int64')" in message
    assert "declare the input with dtype" not in message


def _float32_model():
    x = sn.tensor("x", shape=("batch", 4), dtype="float32")
    W = sn.shared(np.zeros((4, 3), "float32"), name="W")
    loss = sn.mean(x @ W)
    return x, W, loss, sn.grad(loss, W)


def test_a_float64_learning_rate_names_lr_and_the_update_line():
    x, W, loss, gW = _float32_model()
    lr = sn.scalar("lr")
    with pytest.raises(sn.DTypeError) as info:
        sn.function([x, lr], loss, updates={W: W - lr * gW})  # <- update line
    message = str(info.value)
    assert "update: 'W' (float32(4, 3)) cannot take" in message
    assert "without losing precision: 'lr' (float64()) makes it float64" in message
    assert "; declare lr with dtype='float32', or cast the new value with .astype(" in message
    assert f"test_class_messages.py, line {_line_of('<- update line')}" in message
    assert info.value.location.lineno == _line_of("<- update line")


def test_a_float64_shared_rate_and_a_python_rate():
    x, W, loss, gW = _float32_model()
    rate = sn.shared(np.float64(0.1), name="rate")
    with pytest.warns(sn.Float64Warning, match="'rate' \\(float64\\(\\)\\) is a float64 shared"):
        step = W - rate * gW  # <- step line
    with pytest.raises(sn.DTypeError) as info:
        sn.function([x], loss, updates={W: step})
    assert "'rate' (float64()) makes it float64" in str(info.value)
    assert "make rate float32" in str(info.value)
    assert f"line {_line_of('<- step line')}" in str(info.value)
    with pytest.raises(sn.DTypeError) as info:
        sn.function([x], loss, updates={W: W - np.float64(0.1) * gW})
    assert "the float64 constant 0.1 (np.float64(...) or a float64 array) makes it" in str(
        info.value
    )
    assert "write the constant as a Python number, which takes float32" in str(info.value)
    f = sn.function([x], loss, updates={W: W - 0.1 * gW})  # a Python float stays float32
    f(np.ones((2, 4), "float32"))
    assert W.get_value().dtype == np.float32


def test_only_the_leaves_a_widening_dtype_comes_from_are_named():
    """An int64 shape vector (under sn.ones/reshape) is no culprit; an int64 operand that
    promotes float32 to float64 is; each fix is said once."""
    W = sn.shared(np.zeros((2, 3), "float32"), name="W")
    x = sn.tensor("x", shape=(2, 3), dtype="float32")
    lr, n, v = sn.scalar("lr"), sn.scalar("n", dtype="int64"), sn.vector("v", shape=(6,))

    def message(update) -> str:
        with pytest.raises(sn.DTypeError) as info:
            sn.function([x, lr, n, v], sn.sum(x), updates={W: update}, backend="py")
        return str(info.value).split("\n")[0]

    got = message(W - lr * sn.ones((2, 3), dtype="float32"))
    assert got.endswith(
        "without losing precision: 'lr' (float64()) makes it float64; declare lr with "
        "dtype='float32', or cast the new value with .astype('float32')"
    )
    assert "'v' (float64(6,)) makes it float64;" in message(W - sn.reshape(v, (2, 3)))
    assert "'n' (int64()) makes it float64;" in message(W - x * n)
    got = message(W - np.float64(0.1) * x - np.float64(0.2) * x)
    assert "constant 0.1 (np.float64(...) or a float64 array), the float64 constant 0.2" in got
    assert got.count("write the constant as a Python number") == 1


def test_if_on_a_symbolic_variable_names_what_exists():
    x = sn.tensor("x", shape=(3,))
    with pytest.raises(TypeError) as info:
        if x > 0:  # <- if line
            pass
    message = str(info.value)
    assert "sn.where(cond, a, b)" in message and "sn.switch" in message
    assert "sn.ifelse(x > 0, then_value, else_value)" in message
    assert f"line {_line_of('<- if line')}" in message
    # the three functions the message names exist and choose by the condition
    v = np.array([-2.0, 0.0, 3.0])
    picked = [sn.where(x > 0, x, -x), sn.switch(x > 0, x, -x), sn.ifelse(sn.sum(x) > 0, x, -x)]
    got = sn.function([x], picked, backend="py")(v)
    np.testing.assert_array_equal(got, [[2, 0, 3], [2, 0, 3], [-2, 0, 3]])  # sum(v) > 0: v
