"""sn.grad's documented behaviour: options, markers, refusals and their messages, provenance."""

import sys
import warnings

import numpy as np
import pytest

import symnb as sn
from symnb.core.graph import ancestors
from symnb.core.op import NotDifferentiable, Op
from symnb.core.types import TensorType


def f64(name, shape=(3,)):
    return sn.tensor(name, shape=shape, dtype="float64")


def evaluate(outputs, inputs, *values):
    return sn.function(inputs, outputs)(*values)


class _Snap(Op):
    """A float op with no gradient at all (as a quantiser or a sampler would be)."""

    differentiable = False

    def infer_types(self, x):
        return [x.type]

    def perform(self, x):
        return np.round(x, 1)


class _HalfDifferentiable(Op):
    """x * y, differentiable in x only."""

    def infer_types(self, x, y):
        return [x.type]

    def perform(self, x, y):
        return x * y

    def grad(self, inputs, outputs, output_grads):
        return [output_grads[0] * inputs[1], NotDifferentiable("y is a lookup table")]


# -- disconnected inputs --------------------------------------------------------------------
def test_disconnected_input_raises_by_default_naming_it():
    x, b = f64("x"), f64("b")
    with pytest.raises(sn.DisconnectedInputError, match=r"does not depend on 'b' \(float64"):
        sn.grad(sn.sum(x**2), [x, b])


def test_disconnected_warn_and_ignore_give_zeros_or_none():
    x, b = f64("x"), f64("b", (None, 2))
    with pytest.warns(sn.DisconnectedInputWarning, match="'b'"):
        gx, gb = sn.grad(sn.sum(x**2), [x, b], disconnected="warn")
    assert gb.type == b.type
    np.testing.assert_array_equal(evaluate(gb, [b], np.ones((4, 2))), np.zeros((4, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sn.grad(sn.sum(x), b, disconnected="ignore", return_disconnected="none") is None
    with pytest.raises(ValueError, match="disconnected='maybe'"):
        sn.grad(sn.sum(x), x, disconnected="maybe")


def test_disconnected_grad_counts_as_disconnected_zero_grad_as_zero():
    x = f64("x")
    with pytest.raises(sn.DisconnectedInputError, match="disconnected_grad"):
        sn.grad(sn.sum(sn.disconnected_grad(x) ** 2), x)
    g = sn.grad(sn.sum(sn.disconnected_grad(x) * x), x)  # only the direct path counts
    value = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(evaluate(g, [x], value), value)
    for marker in (sn.zero_grad, sn.stop_gradient):
        np.testing.assert_array_equal(
            evaluate(sn.grad(sn.sum(marker(x) * x), x), [x], value), value
        )
        zero = sn.grad(sn.sum(marker(x) ** 2), x)  # connected: no error, a zero gradient
        np.testing.assert_array_equal(evaluate(zero, [x], value), np.zeros(3))
    np.testing.assert_array_equal(evaluate(sn.zero_grad(x) * 2, [x], value), value * 2)


def test_integer_paths_pass_no_gradient_and_are_connected():
    x = f64("x")
    cost = sn.sum(sn.cast(x > 0, "float64") * 3.0)  # a step function: zero gradient
    np.testing.assert_array_equal(evaluate(sn.grad(cost, x), [x], np.ones(3)), np.zeros(3))


# -- refusals -------------------------------------------------------------------------------
def test_integer_and_boolean_inputs_are_refused_with_a_message():
    n = sn.tensor("n", shape=(3,), dtype="int64")
    flag = sn.tensor("flag", shape=(3,), dtype="bool")
    cost = sn.sum(n * 2.0) + sn.sum(sn.cast(flag, "float64"))
    for var in (n, flag):
        with pytest.raises(sn.DTypeError, match=r"with respect to '(n|flag)'.*integer and boolean"):
            sn.grad(cost, var)


def test_an_integer_wrt_is_refused_in_the_words_of_the_call_made():
    """sn.Rop, sn.Lop, sn.jacobian and sn.hessian refused an integer wrt saying "sn.grad:
    cannot differentiate ...", a call the user never made (Rop's passes are internal); each
    names its own call, as its disconnected-input report does, and Rop its tangent."""
    x = f64("x")
    n = sn.tensor("n", shape=(3,), dtype="int64")
    for call, make in [
        ("sn.Rop", lambda: sn.Rop(x * n, n, n)),
        ("sn.Lop", lambda: sn.Lop(x * n, n, x)),
        ("sn.jacobian", lambda: sn.jacobian(x * n, n)),
        ("sn.jacobian", lambda: sn.jacobian(sn.sum(x * n), [x, n])),
        ("sn.hessian", lambda: sn.hessian(sn.sum(x * n), n)),
    ]:
        with pytest.raises(sn.DTypeError) as info:
            make()
        message = str(info.value)
        assert message.startswith(f"{call}: cannot differentiate with respect to 'n' (int64(3,))")
        assert "integer and boolean variables are kept out of differentiation" in message
        assert info.value.location.filename == __file__
    with pytest.raises(sn.DTypeError, match=r"no tangent is defined .* need its tangent"):
        sn.Rop(x * n, n, n)


def test_cost_must_be_a_float_scalar():
    x = f64("x")
    with pytest.raises(sn.ShapeError, match=r"scalar \(0-d\).*sn.Lop"):
        sn.grad(x * 2, x)
    with pytest.raises(TypeError, match=r"cost must be a scalar") as info:  # Theano's type
        sn.grad(x * 2, x)
    assert isinstance(info.value, sn.ShapeTypeError)
    with pytest.raises(sn.DTypeError, match="not a float"):
        sn.grad(sn.sum(sn.cast(x, "int64")), x)


def test_non_differentiable_op_is_named_with_the_path_from_the_cost():
    x = f64("x")
    loss = sn.sum(sn.exp(_Snap()(x * 2)))
    loss.name = "loss"
    with pytest.raises(sn.NotDifferentiableError) as info:
        sn.grad(loss, x)
    message = str(info.value)
    assert "snap is not differentiable" in message
    assert "path from the cost: 'loss' <- exp <- snap <- mul <- 'x'" in message
    assert "snap was applied at" in message and "test_options.py" in message
    assert isinstance(info.value, NotDifferentiable)


def test_non_differentiable_input_of_a_differentiable_op():
    x, table = f64("x"), f64("table")
    loss = sn.sum(_HalfDifferentiable()(x, table))
    np.testing.assert_array_equal(
        evaluate(sn.grad(loss, x), [x, table], np.ones(3), np.arange(3.0)), np.arange(3.0)
    )
    with pytest.raises(sn.NotDifferentiableError, match=r"table.*y is a lookup table"):
        sn.grad(loss, table)


def test_non_differentiable_op_off_the_path_is_fine():
    x, y = f64("x"), f64("y")
    g = sn.grad(sn.sum(_Snap()(y) * x), x)
    np.testing.assert_array_equal(evaluate(g, [x, y], np.ones(3), np.full(3, 0.5)), np.full(3, 0.5))


# -- known_grads, Lop, intermediate variables ---------------------------------------------
def test_known_grads_start_the_walk_like_lop(rng):
    x = f64("x")
    y = sn.tanh(x) * 2
    v = rng.standard_normal(3)
    by_known = sn.grad(None, x, known_grads={y: sn.constant(v)})
    by_lop = sn.Lop(y, x, v)
    value = rng.standard_normal(3)
    want = v * 2 * (1 - np.tanh(value) ** 2)
    np.testing.assert_allclose(evaluate([by_known, by_lop], [x], value), [want, want], rtol=1e-13)
    both = sn.grad(sn.sum(x), x, known_grads={y: v})  # contributions add up
    np.testing.assert_allclose(evaluate(both, [x], value), want + 1, rtol=1e-13)
    with pytest.raises(ValueError, match="give a cost, or known_grads"):
        sn.grad(None, x)
    with pytest.raises(sn.ShapeError, match=r"known gradient .*\(4,\)\) does not fit .*\(3,\)"):
        sn.grad(None, x, known_grads={y: np.ones(4)})
    pairs = sn.grad(None, x, known_grads=[(y, sn.constant(v))])  # a list of pairs, as Lop's
    np.testing.assert_allclose(evaluate(pairs, [x], value), want, rtol=1e-13)


@pytest.mark.parametrize("given", [3, "a", [sn.vector("y")], [(1, 2, 3)]])
def test_known_grads_of_another_kind_are_refused_saying_what_they_are(given):
    """``known_grads=3`` was "'int' object is not iterable" from inside sn.grad."""
    x = f64("x")
    with pytest.raises(sn.ArgumentError) as error:
        sn.grad(None, x, known_grads=given)
    message = str(error.value)
    assert message.startswith(
        "sn.grad: known_grads is a dict {variable: its gradient} or a list of (variable, "
        f"gradient) pairs, not {given!r}"
    ), message
    assert error.value.location.filename == __file__


def test_gradient_with_respect_to_an_intermediate_variable(rng):
    x = f64("x")
    h = sn.exp(x)
    gh, gx = sn.grad(sn.sum(h * h), [h, x])
    value = rng.standard_normal(3)
    got_h, got_x = evaluate([gh, gx], [x], value)
    np.testing.assert_allclose(got_h, 2 * np.exp(value), rtol=1e-13)
    np.testing.assert_allclose(got_x, 2 * np.exp(2 * value), rtol=1e-13)


def test_repeated_uses_are_summed_once(rng):
    x = f64("x")
    g = sn.grad(sn.sum(x * x + x + sn.sin(x)), x)
    value = rng.standard_normal(3)
    np.testing.assert_allclose(evaluate(g, [x], value), 2 * value + 1 + np.cos(value))
    summing = [n for n in ancestors([g]) if n.op == sn.add and "grad_of" in n.tag]
    assert len(summing) == 3  # x gets 4 contributions (2 from x * x), summed by 3 adds
    assert all(n.tag["grad_of"] is None for n in summing)  # x is a leaf: no forward node


def test_single_and_list_wrt_and_shared_variables(rng):
    w = sn.shared(rng.standard_normal((2, 3)), name="W")
    x = f64("x", ("batch", 2))
    cost = sn.mean((x @ w) ** 2)
    single = sn.grad(cost, w)
    (listed,) = sn.grad(cost, [w])
    assert single.type == w.type and listed.type == w.type
    xv = rng.standard_normal((4, 2))
    want = 2 * xv.T @ (xv @ w.get_value()) / 12
    np.testing.assert_allclose(evaluate(single, [x], xv), want, rtol=1e-12)


# -- provenance -----------------------------------------------------------------------------
def test_every_gradient_node_remembers_its_forward_node():
    x, w = f64("x", (2, 3)), f64("w", (3,))
    h = sn.tanh(x * w)
    cost = sn.sum(h**2)
    forward = set(ancestors([cost]))
    grads = sn.grad(cost, [x, w])
    backward = [n for n in ancestors(grads) if n not in forward]
    assert backward and all("grad_of" in n.tag for n in backward)
    assert all(n.tag["grad_of"] is None or n.tag["grad_of"] in forward for n in backward)
    assert all("grad_of" not in n.tag for n in forward)
    of_tanh = [n for n in backward if n.tag["grad_of"] is h.owner]
    assert of_tanh and all(n.op in (sn.mul, sn.sub) for n in of_tanh)
    compiled = sn.function([x, w], grads)
    assert any(n.tag.get("grad_of") is h.owner for n in compiled.graph_before.nodes)


def test_nodes_made_for_known_grads_and_zeros_are_tagged_too():
    x, y = f64("x", (None,)), f64("y", (None,))
    h = sn.exp(x)
    gx, gy = sn.grad(None, [x, y], known_grads={h: 2.0}, disconnected="ignore")
    forward = set(ancestors([h]))
    backward = [n for n in ancestors([gx, gy]) if n not in forward]
    assert {n.op.op_name() for n in backward} >= {"broadcast_like", "mul"}
    assert all(n.tag["grad_of"] in (None, h.owner) for n in backward)
    np.testing.assert_allclose(evaluate(gx, [x], np.zeros(2)), [2.0, 2.0])


def test_rop_nodes_point_at_forward_nodes():
    x = f64("x")
    y = sn.exp(x) * 3
    jvp = sn.Rop(y, x, np.ones(3))
    forward = set(ancestors([y]))
    tagged = [n.tag["grad_of"] for n in ancestors([jvp]) if n not in forward]
    assert tagged and all(t is None or t in forward for t in tagged)
    assert any(t is y.owner for t in tagged)


def test_gradient_graph_is_typed_and_printable():
    x = f64("x", ("batch", 3))
    g = sn.grad(sn.sum(sn.sigmoid(x)), x)
    text = sn.format_expr(g)
    assert "sigmoid" in text and text.endswith(f"outputs: {text.split()[-1]}")
    assert g.type == TensorType("float64", ("batch", 3))


def test_elemwise_sums_back_only_the_gradients_asked_for(monkeypatch):
    """``x * c`` with a constant ``c`` of another shape: no gradient of ``c`` is summed back
    (nobody asked for it), and x's is right."""
    import symnb.ops.elemwise as elemwise

    fitted = []
    real = elemwise.fit_gradient

    def recording(g, like):
        fitted.append(like)
        return real(g, like)

    monkeypatch.setattr(elemwise, "fit_gradient", recording)
    x = f64("x", shape=(3, 4))
    c = sn.constant(np.arange(4.0))
    g = sn.grad(sn.sum(x * c), x)
    assert fitted and all(v is x for v in fitted)
    value = evaluate(g, [x], np.ones((3, 4)))
    np.testing.assert_array_equal(value, np.broadcast_to(np.arange(4.0), (3, 4)))


def test_every_gradient_node_points_at_the_grad_line():
    """The user's line is found once per sn.grad call and shared by all the nodes it builds;
    constants a node makes take the line of the node."""
    x = f64("x")
    y = sn.tanh(x * 2.0)
    g = sn.grad(sn.sum(y), x)
    grad_line = sys._getframe().f_lineno - 1
    forward = set(ancestors([y]))
    built = [node for node in ancestors([g]) if node not in forward]
    assert built
    for node in built:
        for var in node.outputs:
            assert (var.source.filename, var.source.lineno) == (__file__, grad_line)
    constant = y.owner.inputs[0].owner.inputs[1]
    assert constant.source.lineno == grad_line - 1


def test_grad_clip_clips_the_gradient_only(backend):
    x = f64("x")
    value = np.array([-3.0, 0.5, 4.0])
    clipped = sn.grad_clip(x, -1.0, 2.0)
    g = sn.grad(sn.sum(clipped * value), x)  # the gradient reaching the clip is the value
    got_value, got_grad = sn.function([x], [clipped * 1.0, g], backend=backend)(value)
    np.testing.assert_array_equal(got_value, value)
    np.testing.assert_array_equal(got_grad, [-1.0, 0.5, 2.0])
    assert sn.grad_clip(x, -1, 2).owner.op == clipped.owner.op  # merged like any equal op
    with pytest.raises(ValueError, match=r"lower \(1\.0\) must not exceed upper"):
        sn.grad_clip(x, 1.0, -1.0)


@pytest.mark.parametrize(
    "lower, upper, shown",
    [
        ("a", 1, r"lower must be a real number, not 'a' \(str\)"),
        (None, 1, r"lower must be a real number, not None \(NoneType\)"),
        (-1, float("nan"), r"upper must be a real number, not nan \(float\)"),
        (np.array([0.0, 1.0]), np.array([2.0, 3.0]), r"lower must be a real number, not array"),
    ],
)
def test_grad_clip_refuses_a_bound_that_is_not_a_number_at_the_users_line(lower, upper, shown):
    """A str or None bound escaped as the TypeError of ``lower <= upper`` (an array: the
    ValueError of its truth value), raised in markers.py, naming neither grad_clip nor the
    user's line."""
    x = f64("x")
    with pytest.raises(sn.ArgumentError, match="grad_clip: " + shown) as raised:
        sn.grad_clip(x, lower, upper)
    assert raised.value.location.filename == __file__
    assert isinstance(raised.value, TypeError) and isinstance(raised.value, ValueError)
    assert sn.grad_clip(x, np.float32(-1), np.array(2)).owner.op == sn.grad_clip(x, -1, 2).owner.op
