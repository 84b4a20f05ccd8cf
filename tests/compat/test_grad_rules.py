"""``T.grad`` by Theano's rules (Theano's own test_gradient.py cases): integer ``wrt`` are
differentiated where they enter float results, a ``consider_constant`` variable that is
also a ``wrt`` gets its gradient, and errors are in Theano's names at the user's line.
``sn.grad`` keeps its own rules."""

import numpy as np
import pytest

import symnb as sn
import symnb.compat.theano as theano
import symnb.compat.theano.tensor as T
from symnb.compat.theano.tensor.shared_randomstreams import RandomStreams


def run(inputs, outputs, *values):
    return theano.function(inputs, outputs, mode="FAST_COMPILE", on_unused_input="ignore")(*values)


def test_grad_with_respect_to_an_integer_is_taken_as_theano_did():
    # Theano's test_downcast_dtype: theano.grad(c, [x, y, z, c]) with z an lscalar
    x, z = T.fscalar("x"), T.lscalar("z")
    y = x * 2
    c = y + z
    dx, dy, dz, dc = theano.grad(c, [x, y, z, c])
    assert dx.dtype == "float32" and dz.dtype.kind == "f" and dc.dtype.kind == "f"
    assert [float(v) for v in run([x, z], [dx, dy, dz, dc], 1.5, 3)] == [2, 1, 1, 1]


def test_an_integer_wrt_does_not_run_a_print_of_the_cost_twice(capsys):
    """An integer wrt is differentiated on a copy of the cost that reads its casts: the
    gradients read the copy's Print, which ran beside the cost's each call."""
    z, w = T.lscalar("z"), T.dvector("w")
    p = theano.printing.Print("P")(T.tanh(w * z))
    cost = (p**2).sum()
    f = theano.function([z, w], [cost, *theano.grad(cost, [z, w])])
    wv = np.array([0.5, 0.25])
    capsys.readouterr()
    _, dz, dw = f(2, wv)
    t = np.tanh(2 * wv)
    assert capsys.readouterr().out.splitlines() == [f"P __str__ = {t}"]
    np.testing.assert_allclose([dz, *dw], [np.sum(2 * t * (1 - t**2) * wv), *(4 * t * (1 - t**2))])


def test_integer_input_of_a_float_result_gets_the_float_inputs_gradient(rng):
    # Theano's test_grad_int: the gradient wrt an imatrix equals the one wrt a float matrix
    W, b = T.matrix("W"), T.vector("b")

    def gradient(X):
        cost = T.nnet.sigmoid(T.dot(X, W) + b).sum()
        return T.grad(cost, X)

    Xi, Xf = T.imatrix("Xi"), T.dmatrix("Xf")
    X = (rng.standard_normal((5, 3)) * 127).astype("int32")
    Wv, bv = rng.standard_normal((3, 4)), rng.standard_normal(4)
    gi, gf = run([Xi, Xf, W, b], [gradient(Xi), gradient(Xf)], X, X, Wv, bv)
    assert gi.dtype.kind == "f" and np.allclose(gi, gf)
    s = 1 / (1 + np.exp(-(X @ Wv + bv)))
    assert np.allclose(gi, (s * (1 - s)) @ Wv.T)


def test_integer_cost_known_grads_and_integer_results():
    i = T.iscalar("i")
    assert float(T.grad(i, i).eval({i: 12})) == 1.0  # Theano's test_dxdx
    g = T.scalar("g")
    known = theano.gradient.grad(cost=None, known_grads={i: g}, wrt=i)
    assert float(run([g], known, 0.6)) == pytest.approx(0.6)  # test_known_grads_integers
    x = T.dscalar("x")
    through_ints = T.cast(i * 2, "float64") * x  # i * 2 is an integer: no gradient through it
    assert float(run([x, i], T.grad(through_ints, i), 1.5, 2)) == 0.0
    assert float(run([x], T.grad(T.cast(x, "int64") * 3, x), 2.0)) == 0.0


def test_a_disconnected_integer_is_reported_in_theanos_words_at_the_users_line():
    x, z = T.dscalar("x"), T.lscalar("z")
    with pytest.raises(theano.gradient.DisconnectedInputError) as error:
        T.grad(x * 2, z)
    message = str(error.value)
    assert "T.grad" in message and "disconnected_inputs='ignore'" in message
    assert "\n  at " in message and "test_grad_rules.py" in message
    ignored = T.grad(x * 2, z, disconnected_inputs="ignore")
    assert ignored.dtype == theano.config.floatX and float(run([x], ignored, 1.0)) == 0.0


def test_disconnected_grad_disconnects_with_an_integer_wrt_in_the_list_too():
    """With an integer wrt, T.grad took connectedness from plain ancestry, which ignores
    disconnected_grad: x of [x, n] and an integer n reached only through it got silent
    zeros, where T.grad(cost, x) raised (Theano: DisconnectedGrad connects nothing)."""
    x, y, n = T.dvector("x"), T.dvector("y"), T.lvector("n")
    cost = T.sum(theano.gradient.disconnected_grad(x) * y * n)
    for wrt in (x, [x, n]):
        with pytest.raises(theano.gradient.DisconnectedInputError, match="depend on 'x'"):
            T.grad(cost, wrt)
    through = T.sum(theano.gradient.disconnected_grad(n * 1.0) * y)
    with pytest.raises(theano.gradient.DisconnectedInputError, match="depend on 'n'"):
        T.grad(through, n)
    gx, gn = T.grad(cost, [x, n], disconnected_inputs="ignore")
    got = run([x, y, n], [gx, gn], np.ones(2), np.array([2.0, 3.0]), np.array([1, 2]))
    np.testing.assert_array_equal(got[0], [0.0, 0.0])
    np.testing.assert_array_equal(got[1], [2.0, 3.0])  # n stays connected through y * n


def test_core_errors_seen_through_t_grad_name_theano_and_the_users_line():
    v = T.vector("v")
    with pytest.raises(sn.ShapeError) as error:
        T.grad(v * 2, v)
    message = str(error.value)
    assert message.startswith("T.grad: the cost must be a scalar") and "T.sum" in message
    assert "sn." not in message and "test_grad_rules.py" in message


def test_a_non_scalar_cost_is_theanos_type_error():
    """Theano's ``grad`` raised TypeError("cost must be a scalar."), which course code catches
    (``assertRaises(TypeError, T.grad, ...)``); it was a ShapeError (a ValueError) here. It is
    a ShapeTypeError, both, for a float cost and through the rules for integers too."""
    x, W = T.matrix("x"), theano.shared(np.zeros((4, 3)), name="W")
    y, n = T.ivector("y"), T.ivector("n")
    nll = -T.log(T.nnet.softmax(T.dot(x, W)))[T.arange(y.shape[0]), y]  # forgot .mean()
    for cost, wrt in ((nll, W), (n * 2, n), (nll, n)):
        with pytest.raises(TypeError, match=r"^T\.grad: the cost must be a scalar") as info:
            T.grad(cost, wrt)
        assert isinstance(info.value, sn.ShapeTypeError)


def test_consider_constant_on_a_wrt_still_differentiates_it():
    # Theano's test_grad_constant: grad(x + y, x, consider_constant=[x]) is 1
    x, y = T.scalar("x"), T.scalar("y")
    one = T.constant(1.0)
    g_x = T.grad(x + y, x, consider_constant=[x])
    g_one = T.grad(one + y, one)
    assert [float(v) for v in run([x, y], [g_x, g_one], 1.0, 0.5)] == [1.0, 1.0]
    # below the listed variable the gradient stops: d(z * z)/dx with z = 3x held constant
    z = 3 * x
    ignored = T.grad(z * z, x, consider_constant=[z], disconnected_inputs="ignore")
    assert float(run([x], ignored, 2.0)) == 0.0
    assert float(run([x], T.grad(z * z + x, x, consider_constant=[z]), 2.0)) == 1.0
    assert (
        float(
            run(
                [x],
                T.grad(z * z, [x, z], consider_constant=[z], disconnected_inputs="ignore")[1],
                2.0,
            )
        )
        == 12.0
    )


def test_a_wrt_reached_only_through_a_consider_constant_variable_is_disconnected():
    """Theano's consider_constant variable "is not a function of anything": a wrt reached
    only through it is disconnected (DisconnectedInputError, or a warning with 'warn'); it
    was a silent zero. The ops consider_constant() and zero_grad() stay connected."""
    x = T.dvector("x")
    h = T.tanh(x)
    cost = T.sum(h * h)
    with pytest.raises(theano.gradient.DisconnectedInputError) as error:
        T.grad(cost, x, consider_constant=[h])
    assert "'x'" in str(error.value) and "disconnected_inputs='ignore'" in str(error.value)
    with pytest.warns(sn.DisconnectedInputWarning, match="T.grad: the cost does not depend on 'x'"):
        warned = T.grad(cost, x, consider_constant=[h], disconnected_inputs="warn")
    np.testing.assert_array_equal(run([x], warned, np.array([0.3, -0.2])), [0.0, 0.0])
    for marker in (theano.gradient.consider_constant, theano.gradient.zero_grad):
        g = T.grad(T.sum(marker(h) * h), x)  # connected: only one path is stopped
        xv = np.array([0.3, -0.2])
        np.testing.assert_allclose(run([x], g, xv), np.tanh(xv) / np.cosh(xv) ** 2)
    with pytest.raises(theano.gradient.DisconnectedInputError):
        T.jacobian(h * 2, x, consider_constant=[h])


def test_known_grads_replace_what_the_cost_sends_as_in_theano():
    """Theano's grad puts the known gradients in its table first and computes only the
    variables not in it: a known gradient is its variable's whole gradient, and one of the
    cost replaces its 1. T.grad added them to the cost's (sn.grad's rule, which stays)."""
    x = T.dvector("x")
    h = x * 2
    cost = T.sum(h * h)  # d cost / d h = 4x
    xv = np.array([1.0, 2.0, 3.0])
    got = run(
        [x],
        [
            T.grad(cost, x, known_grads={h: T.ones_like(h)}),  # 2 * 1, not 2 * (1 + 4x)
            T.grad(cost, x, known_grads={cost: T.constant(3.0)}),  # 3 * 8x, not 4 * 8x
            T.grad(cost, x, known_grads={x: T.ones_like(x)}),  # 1, not 1 + 8x
            T.grad(cost, [x, h], known_grads={h: T.ones_like(h)})[1],
        ],
        xv,
    )
    np.testing.assert_allclose(got, [2 * np.ones(3), 24 * xv, np.ones(3), np.ones(3)])
    additive = sn.grad(cost, x, known_grads={h: T.ones_like(h)})
    np.testing.assert_allclose(run([x], additive, xv), 2 * (1 + 4 * xv))
    # Keras' Theano backend test_gradients: consider_constant with known_grads={a: ones}
    a, b, y = T.dscalar("a"), T.dscalar("b"), T.dscalar("y")
    xx = a * b
    loss = T.pow(3.0 - xx * y * (a + b), 2)
    grads = T.grad(loss, [a, b, y], consider_constant=[xx], known_grads={a: T.ones_like(a)})
    got = run([a, b, y], grads, 1.2, 1.3, 2.0)
    np.testing.assert_allclose([float(v) for v in got], [1.0, 29.951998, 37.439999], atol=1e-5)


def test_a_known_gradient_of_another_length_is_refused_not_spread_by_an_update():
    """``T.grad(None, W, known_grads={T.dot(x, W): g})`` of a shared W (3, 2) with g of
    length 1 gave a (3, 1) gradient, and the SGD update broadcast it over both columns
    silently (Theano refused it when the function ran). g is checked against W's columns,
    read when the function runs; W is left as it was."""
    x, g = T.vector("x"), T.vector("g")
    W = theano.shared(np.ones((3, 2)), name="W")
    gW = T.grad(None, W, known_grads={T.dot(x, W): g})
    f = theano.function([x, g], gW, updates=[(W, W - 0.1 * gW)])
    with pytest.raises(sn.ShapeError) as info:
        f(np.ones(3), np.array([5.0]))
    message = str(info.value)
    assert message.startswith("sn.grad: the known gradient 'g' (float64(?,)) does not"), message
    assert "((1,), not (2,), when the function ran)" in message, message
    np.testing.assert_array_equal(W.get_value(), np.ones((3, 2)))
    np.testing.assert_allclose(f(np.ones(3), np.array([5.0, 10.0])), [[5.0, 10.0]] * 3)
    np.testing.assert_allclose(W.get_value(), [[0.5, 0.0]] * 3)


def test_jacobian_and_hessian_of_a_list_are_refused_naming_the_argument():
    """``theano.gradient.jacobian([x ** 2, x * 3], x)`` was an internal AttributeError
    ('list' object has no attribute 'type'); Theano 1.0 asserted "tensor.jacobian expects a
    Variable as `expression`". Also with consider_constant, and T.hessian's cost."""
    x = T.dvector("x")
    G = theano.gradient
    for build, says in [
        (lambda: G.jacobian([x**2, x * 3], x), "T.jacobian: `expression` must be one"),
        (lambda: T.jacobian((x**2,), x, consider_constant=[x]), "T.jacobian: `expression`"),
        (lambda: G.hessian([T.sum(x**3)], x), "T.hessian: `cost` must be one"),
    ]:
        with pytest.raises(sn.ArgumentError) as info:
            build()
        message = str(info.value)
        assert message.startswith(says) and "once per" in message, message
        assert "test_grad_rules.py" in message, message


def test_sn_grad_keeps_refusing_integers():
    z = sn.scalar("z", dtype="int64")
    with pytest.raises(sn.DTypeError, match="sn.grad: cannot differentiate"):
        sn.grad(sn.cast(z, "float64") * 2, z)


def test_a_tuple_in_gives_a_tuple_out_as_theanos_format_as():
    """theano.gradient's jacobian, hessian and Lop format their results as wrt, and Rop as
    f (Theano's format_as): a tuple gave a list, so `T.jacobian(e, (x, y)) + (extra,)` was
    a TypeError."""
    x, y = T.dvector("x"), T.dvector("y")
    e = x * y
    G = theano.gradient
    got = {
        "jacobian": G.jacobian(e, (x, y)),
        "jacobian, consider_constant": G.jacobian(e, (x, y), consider_constant=[y]),
        "hessian": G.hessian(T.sum(e**2), (x, y)),
        "Lop": G.Lop(e, (x, y), y),
        "Rop": G.Rop((e, e * 2), x, y),
    }
    assert {k: type(v).__name__ for k, v in got.items()} == dict.fromkeys(got, "tuple")
    assert isinstance(G.jacobian(e, [x, y]), list) and isinstance(G.Rop([e], x, y), list)
    jx, jy = got["jacobian"]
    rx, r2 = got["Rop"]
    xv, yv = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    values = run([x, y], [jx, jy, rx, r2, *got["Lop"]], xv, yv)
    expected = [np.diag(yv), np.diag(xv), yv * yv, 2 * yv * yv, yv * yv, xv * yv]
    for value, want in zip(values, expected):
        np.testing.assert_allclose(value, want)


def test_consider_constant_keeps_known_grads_on_the_graph_differentiated():
    """With consider_constant the cost is differentiated as a copy, but the known_grads keys
    stayed on the original graph: the cost's copy sent its own gradient to h's copy, which
    was added (2 + 8x for an unrelated consider_constant=[y], where Theano gives 2)."""
    x, y = T.dvector("x"), T.dvector("y")
    h = 2 * x
    cost = T.sum(h * h) + T.sum(y * y)
    known = {h: T.ones_like(h)}
    grads = [
        T.grad(cost, x, known_grads=known),
        T.grad(cost, x, known_grads=known, consider_constant=[y]),
        T.grad(cost, [x, y], known_grads=known, consider_constant=[y])[1],
    ]
    xv, yv = np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.0, 2.0])
    got = run([x, y], grads, xv, yv)
    np.testing.assert_allclose(got, [2 * np.ones(3), 2 * np.ones(3), 2 * yv])


def test_consider_constant_with_no_cost_or_a_list_of_outputs():
    """``T.grad(None, wrt, known_grads=..., consider_constant=...)`` (Theano's own
    grad_sources_inputs) and ``T.Lop([f1, f2], ...)`` with consider_constant were an
    internal AttributeError: the copy assumed one cost variable."""
    x, y, u = T.dvector("x"), T.dvector("y"), T.dvector("u")
    h = 2 * x
    from_known = [
        T.grad(None, x, known_grads={h: T.ones_like(h)}, consider_constant=held)
        for held in ([x], [y])
    ]
    a, b = T.exp(x) * y, x * 3
    lop = T.Lop([a, b], x, [u, u], consider_constant=[y])
    held_a = T.Lop([a, b], x, [u, u], consider_constant=[a])  # a's path stopped at a
    xv, yv, uv = np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.0, 2.0]), np.array([1.0, -1.0, 2.0])
    got = run([x, y, u], [*from_known, lop, held_a], xv, yv, uv)
    np.testing.assert_allclose(got[:2], [2 * np.ones(3), 2 * np.ones(3)])
    np.testing.assert_allclose(got[2], yv * np.exp(xv) * uv + 3 * uv)
    np.testing.assert_allclose(got[3], 3 * uv)
    with pytest.raises(theano.gradient.DisconnectedInputError):  # x is below h alone
        T.grad(None, x, known_grads={h: T.ones_like(h)}, consider_constant=[h])


def test_consider_constant_does_not_run_a_print_of_the_cost_twice(capsys):
    """With consider_constant the cost is differentiated as a copy with the constants behind
    markers: the gradients read the copy's Print, which ran beside the cost's (impure nodes
    are never merged), so each call printed twice. Theano builds no second cost. The
    gradient still stops at the constant: ``a``, below ``x``, gets none through the Print."""
    a, w = T.dvector("a"), T.dvector("w")
    x = a * 2
    p = theano.printing.Print("P")(T.tanh(x * w))
    cost = (p**2).sum()
    grads = [
        *T.grad(cost, [w, a], consider_constant=[x], disconnected_inputs="ignore"),
        T.jacobian(p**2, w, consider_constant=[x]),
        T.hessian(cost, w, consider_constant=[x]),
        T.Lop(p**2, w, T.ones_like(p), consider_constant=[x]),
    ]
    f = theano.function([a, w], [cost, *grads])
    av, wv = np.array([0.5, 1.0]), np.array([0.5, 0.5])
    capsys.readouterr()
    _, g_w, g_a, jac, _, lop = f(av, wv)
    assert capsys.readouterr().out.splitlines() == [f"P __str__ = {np.tanh(2 * av * wv)}"]
    t = np.tanh(2 * av * wv)
    np.testing.assert_allclose(g_w, 2 * t * (1 - t**2) * 2 * av)
    np.testing.assert_array_equal(g_a, [0.0, 0.0])
    np.testing.assert_allclose(jac, np.diag(g_w))
    np.testing.assert_allclose(lop, g_w)


def test_consider_constant_does_not_draw_a_random_draw_of_the_cost_twice():
    """A draw above a consider_constant variable was copied with the cost: the function
    drew twice, the gradient reading the copy's numbers; it reads the cost's draw."""
    x, w = T.dvector("x"), T.dvector("w")
    c = T.exp(x) * 2
    u = RandomStreams(5).normal(avg=c, size=c.shape)
    grads = T.grad((u * w).sum(), [w, x], consider_constant=[c], disconnected_inputs="ignore")
    f = theano.function([x, w], [u, *grads])
    draws = [n for n in f.graph_before.toposort() if not getattr(n.op, "pure", True)]
    assert [n.op.op_name() for n in draws] == ["philox_normal"]
    first = None
    for _ in range(2):  # a new draw each call, the gradient reading it
        drawn, g_w, g_x = f(np.array([0.0, 1.0]), np.array([1.0, 2.0]))
        np.testing.assert_array_equal(g_w, drawn)
        np.testing.assert_array_equal(g_x, [0.0, 0.0])  # (the draw's avg is held constant)
        assert first is None or not np.array_equal(drawn, first)
        first = drawn


def test_bad_arguments_to_t_grad_are_argument_errors_naming_them():
    """A non-variable cost or wrt, a set of wrt and a non-variable consider_constant entry
    were an internal AttributeError (or "unhashable type: 'numpy.ndarray'"); Theano raised
    TypeErrors. A bad disconnected_inputs was reported as sn.grad's ``disconnected=``, and a
    bad null_gradients was not read."""
    x = T.dvector("x")
    cost = T.sum(x**2)
    cases = [
        (lambda: T.grad(cost, 3.0), "T.grad: wrt must be a symbolic variable, not 3.0 (float)"),
        (lambda: T.grad(cost, [x, "a"]), "T.grad: wrt[1] must be a symbolic variable, not 'a'"),
        (lambda: T.grad(cost, {x}), "T.grad: wrt must not be a set"),
        (lambda: T.grad(3.0, x), "T.grad: cost must be a symbolic variable (or None, with"),
        (
            lambda: T.grad(cost, x, consider_constant=[np.ones(3)]),
            "T.grad: consider_constant[0] must be a symbolic variable, not array(",
        ),
        (
            lambda: T.grad(cost, x, consider_constant=x),
            "T.grad: consider_constant must be a list of symbolic variables, not 'x'",
        ),
        (
            lambda: T.grad(cost, x, disconnected_inputs="bogus"),
            "T.grad: disconnected_inputs='bogus'; use one of 'raise', 'warn', 'ignore'",
        ),
        (
            lambda: T.grad(cost, x, null_gradients="zero"),
            "T.grad: null_gradients='zero'; use one of 'raise', 'return_zero'",
        ),
        (
            lambda: T.Lop(x * 2, 3.0, x, consider_constant=[x]),
            "T.Lop: wrt must be a symbolic variable, not 3.0 (float)",
        ),
        (
            lambda: T.jacobian(x * 2, x, disconnected_inputs="no"),
            "T.jacobian: disconnected_inputs='no'",
        ),
    ]
    for build, says in cases:
        with pytest.raises(sn.ArgumentError) as info:
            build()
        message = str(info.value)
        assert isinstance(info.value, TypeError), message
        assert message.startswith(says) and "test_grad_rules.py" in message, message
    assert float(run([x], T.grad(cost, x, null_gradients="return_zero"), [1.5])[0]) == 3.0


def test_add_names_names_gradients_as_theano():
    """Theano's grad (add_names=True, the default) named a gradient '(dcost/dx)' where the
    cost and the wrt have names; the argument was accepted and not read."""
    x, W = T.dvector("x"), T.dmatrix("W")
    cost = T.sum(T.tanh(T.dot(W, x)) ** 2)
    cost.name = "cost"
    gx, gW = T.grad(cost, [x, W])
    assert (gx.name, gW.name) == ("(dcost/dx)", "(dcost/dW)")
    assert T.grad(cost, x, add_names=False).name is None
    assert T.grad(T.sum(x * 2), x).name is None  # an unnamed cost
    g = T.dvector("g")
    known = T.grad(cost, [x, W], known_grads={x: g})[0]
    assert g.name == "g" and known.name != "(dcost/dx)"  # a known gradient is not named
    fx = theano.function([x, W], gx)
    np.testing.assert_allclose(fx(np.zeros(2), np.ones((2, 2))), [0.0, 0.0])


def test_subgraph_grad_backpropagates_one_part_at_a_time():
    """``theano.gradient.subgraph_grad`` (Theano 1.0's) was a bare AttributeError. Theano's
    example: the gradients down to h, then from h's known gradient down to x."""
    x, W1, W2 = T.dvector("x"), T.dmatrix("W1"), T.dvector("W2")
    h = T.tanh(T.dot(W1, x))
    c = T.sum(h * W2)
    (gW2,), (gh,) = theano.gradient.subgraph_grad(wrt=[W2], end=[h], cost=c)
    (gW1,), (gx,) = theano.gradient.subgraph_grad(wrt=[W1], end=[x], start={h: gh})
    # with both, the two gradients are added; details gives them apart
    both, _, from_start, from_cost = theano.gradient.subgraph_grad(
        wrt=[W2], end=[h], start={h: T.ones_like(h)}, cost=c, details=True
    )
    outputs = [gW2, gh, gW1, gx, T.grad(c, W1), T.grad(c, x), both[0], from_start[0]]
    f = theano.function([x, W1, W2], outputs, on_unused_input="ignore")
    xv, W1v, W2v = np.array([0.5, -1.0]), np.arange(4.0).reshape(2, 2) / 4, np.array([1.0, -2.0])
    got = f(xv, W1v, W2v)
    hv = np.tanh(W1v @ xv)
    np.testing.assert_allclose(got[0], hv)
    np.testing.assert_allclose(got[1], W2v)
    np.testing.assert_allclose(got[2], got[4])
    np.testing.assert_allclose(got[3], got[5])
    np.testing.assert_allclose(got[6], hv)  # h is end: the start gradient adds nothing to W2
    np.testing.assert_allclose(got[7], [0.0, 0.0])
    assert from_cost[0] is not None
    with pytest.raises(sn.ArgumentError, match="subgraph_grad: give cost, start"):
        theano.gradient.subgraph_grad(wrt=[W2], end=[h])
    with pytest.raises(sn.ArgumentError, match="subgraph_grad: end must be a list"):
        theano.gradient.subgraph_grad(wrt=[W2], end=h, cost=c)


def test_pow_gradient_wrt_the_exponent_is_theanos_zero_at_a_zero_base():
    """Theano 1.0's Pow.L_op: d(x ** y)/dy is switch(eq(x, 0), 0, ...), 0 at x = 0 for every
    y; sn.grad's is JAX's, NaN at x = 0, y < 0 (the value there is inf). Every gradient
    the layer builds has Theano's rule: T.Rop's, T.Lop's, T.jacobian's, a scan's."""
    x, y = T.dvector("x"), T.dvector("y")
    xv, yv = np.array([0.0, 0.0, 0.0, 2.0]), np.array([-1.0, -2.5, 0.5, 3.0])
    log2 = np.log(2.0)
    f = x**y
    outputs = [
        T.grad(T.sum(f), y),
        T.Rop(f, y, T.ones_like(y)),
        T.Lop(f, y, T.ones_like(y)),
        T.diagonal(T.jacobian(f, y)),
    ]

    def step(yi, total):
        return total + T.sum(x**yi)

    out, _ = theano.scan(step, sequences=[y], outputs_info=[T.constant(0.0, dtype="float64")])
    with np.errstate(all="ignore"):  # (the values at x = 0, y < 0 are inf)
        for mode in ("FAST_RUN", "FAST_COMPILE"):
            for got in theano.function([x, y], outputs, mode=mode)(xv, yv):
                np.testing.assert_allclose(got, [0, 0, 0, 8 * log2], rtol=1e-12, atol=0)
        got = run([x, y], T.grad(out[-1], y), xv, yv)  # x's 0s add 0, 2 ** y_i * log(2)
        np.testing.assert_allclose(got, 2**yv * log2, rtol=1e-12)
        # sn.grad keeps JAX's value, and T.grad symnb's d/dx (0 at x = y = 0, Theano's NaN)
        assert np.isnan(sn.function([x, y], sn.grad(sn.sum(f), y))(xv, yv)[0])
        dx = run([x, y], T.grad(T.sum(f), x), np.array([0.0, 2.0]), np.array([0.0, 3.0]))
    np.testing.assert_allclose(dx, [0.0, 12.0], rtol=1e-12)
    base = T.constant(np.array([0.0, 2.0]))
    theano.gradient.verify_grad(lambda e: base**e, [np.array([1.5, 0.5])])


def test_pow_gradient_wrt_the_exponent_is_zero_at_a_zero_base_whatever_flows_into_it():
    """Theano's switch holds gz: an infinite gradient arriving at x ** y where x is 0
    (``log(x ** y)``, ``1 / x ** y``) gives 0 too, not inf * 0 = NaN."""
    a, b = T.dscalar("a"), T.dscalar("b")
    with np.errstate(all="ignore"):
        for cost in (T.log(a**b), 1 / a**b):
            assert float(run([a, b], T.grad(cost, b), 0.0, 2.0)) == 0.0
        np.testing.assert_allclose(
            float(run([a, b], T.grad(T.log(a**b), b), 3.0, 2.0)), np.log(3.0), rtol=1e-12
        )


def test_lop_takes_each_eval_point_as_its_fs_whole_gradient_as_theano():
    """Theano 1.0's ``Lop`` is ``grad(None, wrt, known_grads=OrderedDict(zip(f,
    eval_points)))``: an eval point is its f's whole gradient, so what a later f sends back
    through an earlier one is not added. T.Lop added it (sn.Lop's rule, which stays):
    ``T.Lop([y, z], x, [u, w])`` with z = exp(y) gave 2u + 2 exp(2x) w where Theano, and
    T.grad with the same known_grads, give 2u."""
    x, u, w = T.dvector("x"), T.dvector("u"), T.dvector("w")
    y = 2 * x
    z = T.exp(y)
    xv, uv, wv = np.array([0.3, -1.2, 0.7]), np.array([1.0, 2.0, -0.5]), np.array([0.5, 0.25, 1.0])
    outputs = [
        T.Lop([y, z], x, [u, w]),
        T.grad(None, x, known_grads={y: u, z: w}),
        *T.Lop([z, y], [x, y], [w, u]),  # y's own product is its eval point
        T.Lop([y, y], x, [u, w]),  # Theano's dict: an f listed twice keeps its last point
        T.Lop([y, z], x, [u, w], consider_constant=[z]),
        sn.Lop([y, z], x, [u, w]),
    ]
    got = run([x, u, w], outputs, xv, uv, wv)
    for value, want in zip(got[:6], [2 * uv, 2 * uv, 2 * uv, uv, 2 * wv, 2 * uv]):
        np.testing.assert_allclose(value, want)
    np.testing.assert_allclose(got[6], 2 * uv + 2 * np.exp(2 * xv) * wv)


def test_lop_jacobian_and_hessian_with_respect_to_an_integer_as_t_grad():
    """Theano built ``Lop``, ``jacobian`` and ``hessian`` from its ``grad``, which takes an
    integer wrt as if continuous (as T.grad here: ``T.grad(None, n, known_grads={x * n:
    u})`` is x * u). T.Lop(x * n, n, u) and T.jacobian(x * n, n) raised "T.grad: cannot
    differentiate with respect to 'n'" (sn.Lop's and sn.jacobian's refusal)."""
    x, n, u = T.dvector("x"), T.lvector("n"), T.dvector("u")
    xf = sn.tensor("xf", shape=(3,), dtype="float64")  # a fixed shape: rows stacked, no scan
    nf = sn.tensor("nf", shape=(3,), dtype="int64")
    cost = T.sum((x * n) ** 2)
    outputs = [
        T.Lop(x * n, n, u),
        T.grad(None, n, known_grads={x * n: u}),
        T.jacobian(x * n, n),
        T.jacobian(xf * nf, nf),
        T.jacobian(T.sum(x * n), n),
        T.hessian(cost, n),
        *T.hessian(cost, [x, n]),
    ]
    assert all(out.dtype == "float64" for out in outputs)
    xv, nv, uv = np.array([0.3, -1.2, 0.7]), np.array([1, 2, 3]), np.array([1.0, 2.0, -0.5])
    got = run([x, n, u, xf, nf], outputs, xv, nv, uv, xv, nv)
    wanted = [xv * uv, xv * uv, np.diag(xv), np.diag(xv), xv]
    wanted += [np.diag(2 * xv**2), np.diag(2.0 * nv**2), np.diag(2 * xv**2)]
    for value, want in zip(got, wanted):
        np.testing.assert_allclose(value, want)
    ignored = T.jacobian(x * 2, n, disconnected_inputs="ignore")  # zeros, in floatX
    assert ignored.dtype == theano.config.floatX
    np.testing.assert_array_equal(run([x, n], ignored, xv, nv), np.zeros((3, 3)))
    with pytest.raises(theano.gradient.DisconnectedInputError, match="T.jacobian: .*'n'"):
        T.jacobian(x * 2, n)
    c = T.zvector("c")  # a complex wrt is still refused, in T.Lop's words
    with pytest.raises(sn.DTypeError, match=r"^T\.Lop: cannot differentiate .*'c'.*complex"):
        T.Lop(T.abs_(c), c, u)
