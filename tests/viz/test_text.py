import numpy as np
import pytest

import symnb as sn


def test_text_form_of_a_small_graph():
    x = sn.tensor("x", shape=("batch", 3), dtype="float32")
    W = sn.shared(np.zeros((3, 2), "float32"), name="W")
    b = sn.constant(np.array([1, 2], "float32"), name="b")
    loss = sn.mean(sn.tanh(x @ W + b) * 2.0, axis=1)
    f = sn.function([x], loss, optimize="none", backend="py")
    assert f.text() == "\n".join(
        [
            "inputs: x:f32[batch,3]",
            "shared: W:f32[3,2]",
            "constants: b:f32[2]=[1., 2.]",
            "  v0:f32[batch,2] = matmul x W",
            "  v1:f32[batch,2] = add v0 b",
            "  v2:f32[batch,2] = tanh v1",
            "  v3:f32[batch,2] = mul v2 2.0",
            "  v4:f32[batch] = mean[axis=(1,), keepdims=False] v3",
            "outputs: v4",
        ]
    )


def test_text_form_names_are_unique():
    a, b = sn.vector("x"), sn.vector("x")
    text = sn.format_expr(a + b)
    assert "inputs: x:f64[?] x_1:f64[?]" in text
    assert "= add x x_1" in text


def test_the_text_forms_take_what_the_pictures_take():
    """``format_graph(cost)``, ``format_expr([cost])`` and ``format_expr(f)``, the ways a
    student prints a cost's graph, were internal AttributeErrors ('Variable' object has no
    attribute 'inputs'); each now shows that graph, and anything else is a TypeError saying
    what is accepted."""
    x = sn.tensor("x", shape=("batch", 3))
    w = sn.shared(np.ones((3, 2)), name="W")
    cost = sn.sum(x @ w)
    f = sn.function([x], cost, backend="py")
    expected = sn.format_expr(cost)
    assert expected.splitlines()[0] == "inputs: x:f64[batch,3]"
    assert sn.format_graph(cost) == expected
    assert sn.format_expr([cost]) == expected
    assert sn.format_expr(cost.owner) == expected
    assert sn.format_expr(f) == sn.format_graph(f.graph) == f.text()
    for bad in (np.ones(2), 3.0, "x", [cost, 2.0]):
        with pytest.raises(TypeError, match=r"cannot show .*: expected a graph, a function, a"):
            sn.format_graph(bad)
        with pytest.raises(TypeError, match=r"cannot show .*: expected a graph"):
            sn.format_expr(bad)
