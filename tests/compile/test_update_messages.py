"""Malformed ``updates=``: the message a student reads says "updates", shows the expected
form with the student's own variable names, and points at the student's line."""

import numpy as np
import pytest

import symnb as sn
import symnb.compat.theano as theano
import symnb.compat.theano.tensor as T


def _line_of(marker: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, start=1) if marker in line)


def _model():
    x = sn.tensor("x", shape=("n", 3))
    W = sn.shared(np.zeros(3))  # no name=: messages use the Python name W
    cost = sn.sum(x @ W)
    return x, W, cost, sn.grad(cost, W)


def _message(compile_with) -> str:
    with pytest.raises(sn.GraphError) as info:
        compile_with()
    return str(info.value)


def test_a_single_pair_not_in_a_list():
    x, W, cost, g = _model()
    lr = 0.1
    message = _message(lambda: sn.function([x], cost, updates=(W, W - lr * g)))  # <- pair
    assert message.startswith("updates=(W, <the float64 expression built at line")
    assert "is a single pair, not a list of pairs" in message
    assert "list of (shared variable, new value) pairs" in message
    assert "e.g. updates=[(W, W - lr * g)]" in message
    assert f"line {_line_of('<- pair')}" in message and "an unnamed variable" not in message


def test_values_without_their_variables():
    x, W, cost, g = _model()
    message = _message(lambda: sn.function([x], cost, updates=[W - 0.1 * g]))  # <- values
    assert message.startswith("updates[0] is the value <the float64 expression built at line")
    assert "without the shared variable it replaces" in message
    assert "e.g. updates=[(W, W - lr * g)]" in message
    assert f"line {_line_of('<- values')}" in message


def test_one_value_a_triple_and_an_input_in_place_of_a_shared():
    x, W, cost, g = _model()
    message = _message(lambda: sn.function([x], cost, updates=W - 0.1 * g))
    assert "is one value, not a pair" in message and "updates=[(W, W - lr * g)]" in message
    message = _message(lambda: sn.function([x], cost, updates=[(W, W - g, 0.1)]))
    assert (
        message.startswith("updates[0] is (W, <the float64 expression") and "not a pair" in message
    )
    message = _message(lambda: sn.function([x], cost, updates=[(x, x + 1)]))
    assert "updates: 'x' (float64(n, 3)) is not a shared variable" in message
    assert "each pair is (shared variable, new value)" in message


def test_the_theano_layer_gives_the_same_messages():
    x = T.matrix("x")
    W = theano.shared(np.zeros(3))
    cost = T.sum(T.dot(x, W))
    g = T.grad(cost, W)
    message = _message(lambda: theano.function([x], cost, updates=(W, W - 0.1 * g)))  # <- th
    assert message.startswith("updates=(W, ") and "single pair" in message
    assert f"line {_line_of('<- th')}" in message


def test_a_python_name_names_an_unnamed_shared_variable_in_errors():
    W = sn.shared(np.zeros((3, 4)))
    v = sn.shared(np.zeros(5))
    with pytest.raises(sn.ShapeError, match=r"'W' \(float64\(3, 4\)\)"):
        W @ v
