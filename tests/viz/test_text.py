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
            "constants: b:f32[2]=[1.0, 2.0]",
            "  v0:f32[batch,2] = matmul x W",
            "  v1:f32[batch,2] = add v0 b",
            "  v2:f32[batch,2] = tanh v1",
            "  v3:f32[batch,2] = mul v2 2.0",
            "  v4:f32[batch] = mean[axis=(1,), keepdims=False] v3",
            "outputs: v4",
        ]
    )


def test_text_form_keeps_the_names_the_user_gave_the_results():
    """A rewrite put a fused node it built in prob's place (it takes the name) and the input
    itself in q's (a value with a name of its own): the outputs line still says which result
    is which."""
    a = sn.tensor("a", shape=(3,), dtype="float64")
    p = sn.exp(a) * 2 + 1
    p.name = "prob"
    q = a * 1
    q.name = "q"
    f = sn.function([a], [p, q], backend="py")
    lines = f.text().splitlines()
    assert lines[-1] == "outputs: prob q=a"
    assert lines[-2].startswith("  prob:f64[3] = ")
    assert sn.function([a], [p, q], optimize="none").text().endswith("outputs: prob q")


def test_a_value_an_in_place_rewrite_rebuilt_keeps_the_users_name():
    """tanh became tanh_inplace (a node the rule built): the compiled function's listing (and
    Theano's debugprint of it) still calls it hidden, in its line and in the outputs line."""
    x, W = sn.vector("x"), sn.matrix("W")
    hidden = sn.tanh(W @ x)
    hidden.name = "hidden"
    cost = (hidden**2).sum()
    cost.name = "cost"
    f = sn.function([x, W], [cost, hidden])
    lines = f.text().splitlines()
    assert lines[-1] == "outputs: cost hidden"
    assert any(line.startswith("  hidden:f64[?] = tanh") for line in lines), lines


def test_a_name_with_a_newline_or_a_tab_keeps_one_equation_a_line():
    """``a\\nb`` (a real newline) and ``c\\td``: the text form writes each as its escape, so
    the listing stays one binder a word and one equation a line."""
    a, c = sn.vector("a\nb"), sn.vector("c\td")
    lines = sn.format_expr(a * 2 + c).splitlines()
    assert lines[0] == "inputs: a\\nb:f64[?] c\\td:f64[?]"
    assert lines[1] == "  v0:f64[?] = mul a\\nb 2" and len(lines) == 4


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


def test_text_form_writes_each_constant_as_its_value_round_trips():
    """Constants were written by ``np.array2string`` at 8 digits: ``x * 1.0`` and
    ``x * 1.0000000001`` had the same text, 0.1234567890123 read 0.12345679. Each element is
    now the shortest text that reads back as it, in its dtype (float32 0.1 is ``0.1``)."""
    x = sn.tensor("x", shape=(2, 2), dtype="float64")

    def constants(value):
        return sn.format_expr(x * value).splitlines()[1]

    assert constants(np.float64(1.0)) == "constants: c0:f64[]=1.0"
    assert constants(np.float64(1.0000000001)) == "constants: c0:f64[]=1.0000000001"
    assert constants(np.float64(0.1234567890123)) == "constants: c0:f64[]=0.1234567890123"
    pair = sn.constant(np.array([[0.1, 1e-9], [3.0, 1.0000001]], "float32"))
    assert constants(pair) == "constants: c0:f32[2,2]=[[0.1, 1e-09], [3.0, 1.0000001]]"
    assert constants(sn.constant(np.array([1, -2], "int8"))) == "constants: c0:i8[2]=[1, -2]"
    for value in (np.float64(1 / 3), np.float32(1 / 3), np.float32(0.1) + np.float32(1e-7)):
        assert type(value)(constants(value).split("=")[1]) == value
