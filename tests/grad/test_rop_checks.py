"""sn.Rop's own checks and words: eval point shapes, disconnected inputs, and the markers
that change only the backward pass (their tangent is the function they compute)."""

import warnings

import numpy as np
import pytest

import symnb as sn
from symnb.backends.execute import RuntimeFailure
from tests.helpers import available_backends

BACKENDS = available_backends()


def f64(name, shape):
    return sn.tensor(name, shape=shape, dtype="float64")


@pytest.mark.parametrize(
    ("shape", "point", "says"),
    [
        ((1, 3), (2, 3), "axis 0 has 2, not 1"),  # was accepted, its rows summed
        ((2, 3), (3, 2), "axis 0 has 3, not 2"),  # was a 'mul: cannot broadcast' error
        ((3,), (1, 3), "2 axes, not 1"),
    ],
)
def test_an_eval_point_of_another_static_shape_is_refused_at_the_users_line(shape, point, says):
    x = f64("x", shape)
    with pytest.raises(sn.ShapeError) as info:
        sn.Rop(2 * x, x, np.ones(point))
    message = str(info.value)
    assert message.startswith(f"Rop: eval point 0 (float64{point}) does not fit 'x'")
    assert says in message and "test_rop_checks.py" in message


def test_a_count_of_eval_points_other_than_wrts_is_an_argument_error_at_the_users_line():
    """Rop's was a plain ValueError with no line, where Lop's is an ArgumentError at it."""
    x, W = f64("x", (3,)), f64("W", (3, 3))
    with pytest.raises(sn.ArgumentError) as info:
        sn.Rop(W @ x, [x, W], [x])
    assert str(info.value).startswith(
        "Rop: 2 wrt but 1 eval_points; give one eval point per wrt, shaped like it"
    ), info.value
    assert info.value.location.filename == __file__
    with pytest.raises(sn.ArgumentError, match=r"^Rop: 1 wrt but 2 eval_points"):
        sn.Rop(x**2, x, [x, x])
    with pytest.raises(sn.ArgumentError) as info:
        sn.Lop([x**2, x], x, [x])
    assert str(info.value).startswith("Lop: 2 expressions but 1 eval_points")
    assert info.value.location.filename == __file__


def test_eval_points_of_unknown_and_matching_dims_are_taken():
    x, v = f64("x", (None, 3)), f64("v", ("n", 3))
    got = sn.function([x, v], sn.Rop(2 * x, x, v))(np.ones((2, 3)), np.full((2, 3), 5.0))
    np.testing.assert_array_equal(got, np.full((2, 3), 10.0))


def _products(x, v):
    """Rop, Lop and a known gradient of ``tanh(x)`` with the point ``v``, each with the name
    its error starts with."""
    y = sn.tanh(x)
    return [
        ("Rop: eval point 0 'v'", sn.Rop(y, x, v)),
        ("Lop: eval point 0 'v'", sn.Lop(y, x, v)),
        ("sn.grad: the known gradient 'v'", sn.grad(None, x, known_grads={y: v})),
    ]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("point", [(1, 4), (3, 1)])
def test_an_eval_point_of_unknown_dims_is_checked_when_the_function_runs(backend, point):
    """Unknown dims were not checked: a (1, 4) or (3, 1) point broadcast against a (3, 4)
    wrt, and the products summed it silently. Each backend raises one ShapeError naming the
    point and both shapes; a point of the wrt's shape costs a view. (The check reads a
    value the product computes anyway: ``Lop(x @ W, W, v)`` still needs no ``W``.)"""
    x, v = f64("x", (None, None)), f64("v", (None, None))
    X = np.arange(12.0).reshape(3, 4)
    for starts, product in _products(x, v):
        f = sn.function([x, v], product, backend=backend)
        with pytest.raises(sn.ShapeError) as info:
            f(X, np.ones(point))
        assert not isinstance(info.value, RuntimeFailure)  # the same type on every backend
        message = str(info.value)
        assert message.startswith(starts), message
        assert f"({point[0]}, {point[1]}), not (3, 4), when the function ran" in message
        assert "test_rop_checks.py" in message
        np.testing.assert_allclose(f(X, np.full((3, 4), 2.0)), 2 / np.cosh(X) ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_known_gradient_given_as_an_array_is_checked_when_the_function_runs(backend):
    """A known gradient given as an array was made a constant twice: the walk
    started from one, the run-time check was put on the other, which nothing read; a (1,)
    array for a (3,) variable was broadcast silently, a (4,) one failed inside the product.
    Both raise the ShapeError naming the known gradient, for sn.grad and sn.Lop alike."""
    x = f64("x", (None,))
    h = sn.exp(x)
    xv = np.array([1.0, 2.0, 3.0])
    for size in (1, 4):
        point = np.ones(size)
        for starts, product in [
            ("sn.grad: the known gradient (float64(", sn.grad(None, x, known_grads={h: point})),
            ("Lop: eval point 0 (float64(", sn.Lop(h, x, point)),
        ]:
            f = sn.function([x], product, backend=backend)
            with pytest.raises(sn.ShapeError) as info:
                f(xv)
            assert not isinstance(info.value, RuntimeFailure)
            message = str(info.value)
            assert message.startswith(starts), message
            assert f"(({size},), not (3,), when the function ran)" in message, message
    want = np.exp(xv) * 2
    got = sn.function([x], sn.grad(None, x, known_grads={h: np.full(3, 2.0)}))(xv)
    np.testing.assert_allclose(got, want)


def test_lop_names_its_eval_point_in_shape_errors():
    """Lop's shape errors named 'sn.grad: the known gradient', a call the user did not
    make: they name the eval point by its place, as Rop's do."""
    x, y, v = f64("x", (None,)), f64("y", (3,)), f64("v", (None,))
    f = sn.function([x, v], sn.Lop([sn.sum(x), 2 * x], x, [1.0, v]))
    with pytest.raises(sn.ShapeError) as info:
        f(np.ones(3), np.ones(1))
    assert str(info.value).startswith("Lop: eval point 1 'v' (float64(?,)) does not"), info.value
    with pytest.raises(sn.ShapeError, match=r"^Lop: eval point 0 \(float64\(4,\)\) does not fit"):
        sn.Lop(2 * y, y, np.ones(4))


def test_points_whose_lengths_come_from_several_values_are_checked():
    """The check compared lengths holding variables with ``==``, a symbolic comparison:
    building ``Lop(x[:, None] * y[None, :], [x, y], V)`` (each axis of f read off another
    input), ``Lop(V @ W, V, V @ W)`` or the same known gradients raised InputError 'need a
    truth value'. The products are right, and a point of another shape is refused."""
    x, y, V, W = (
        f64("x", (None,)),
        f64("y", (None,)),
        f64("V", (None, None)),
        f64("W", (None, None)),
    )
    xv, yv, Vv = np.arange(2.0), np.arange(3.0), np.arange(6.0).reshape(2, 3)
    outer = x[:, None] * y[None, :]
    for starts, product in [
        ("Lop: eval point 0 'V'", sn.Lop(outer, [x, y], V)),
        ("sn.grad: the known gradient 'V'", sn.grad(None, [x, y], known_grads={outer: V})),
    ]:
        f = sn.function([x, y, V], product)
        gx, gy = f(xv, yv, Vv)
        np.testing.assert_allclose(gx, Vv @ yv)
        np.testing.assert_allclose(gy, xv @ Vv)
        with pytest.raises(sn.ShapeError) as info:
            f(xv, yv, np.ones((2, 1)))
        message = str(info.value)
        assert message.startswith(starts), message
        assert "((2, 1), not (2, 3), when the function ran)" in message, message
    Wv = np.arange(12.0).reshape(3, 4) / 10
    for product in [sn.Lop(V @ W, V, V @ W), sn.grad(None, V, known_grads={V @ W: V @ W})]:
        got = sn.function([V, W], product)(Vv, Wv)
        np.testing.assert_allclose(got, (Vv @ Wv) @ Wv.T, rtol=1e-12)


# id -> (f of x, its vector-Jacobian product with v, in NumPy)
NOT_COMPUTED = {
    "x ** 2": (lambda x: x**2, lambda X, V: 2 * X * V),
    "exp(x) + 1": (lambda x: sn.exp(x) + 1, lambda X, V: np.exp(X) * V),
    "2 * tanh(x) - 0.5": (lambda x: 2 * sn.tanh(x) - 0.5, lambda X, V: 2 * V / np.cosh(X) ** 2),
}


@pytest.mark.parametrize("case", list(NOT_COMPUTED))
def test_lops_eval_point_is_checked_where_the_product_never_computes_f(backend, case):
    """``Lop(x ** 2, x, v)`` computes ``2 * x * v``, not ``x ** 2``: the eval point was left
    unchecked, and a (1, 4) v for a (3, 4) f broadcast silently. It is checked against a value
    of f's shape that the product computes (x, through elementwise ops whose other operands
    are scalars), naming v and both shapes."""
    build, numeric = NOT_COMPUTED[case]
    x, v = f64("x", (None, None)), f64("v", (None, None))
    X, V = np.arange(12.0).reshape(3, 4) / 10, np.linspace(-1, 1, 12).reshape(3, 4)
    f = sn.function([x, v], sn.Lop(build(x), x, v), backend=backend)
    with pytest.raises(sn.ShapeError) as info:
        f(X, np.ones((1, 4)))
    message = str(info.value)
    assert message.startswith("Lop: eval point 0 'v' (float64(?, ?)) does not have"), message
    assert "((1, 4), not (3, 4), when the function ran)" in message, message
    np.testing.assert_allclose(f(X, V), numeric(X, V), rtol=1e-12)


# id -> (f of x, its vector-Jacobian product with v in NumPy, the shape of v for X (3, 4),
# the words of a length-1 v)
SHAPE_FROM_OPERANDS = {
    "exp(x) * x": (
        lambda x: sn.exp(x) * x,
        lambda X, V: V * np.exp(X) * (X + 1),
        (3, 4),
        "((1, 1), not (3, 4), when the function ran)",
    ),
    "sum(x * x, axis=1)": (
        lambda x: sn.sum(x * x, axis=1),
        lambda X, V: 2 * X * V[:, None],
        (3,),
        "((1,), not (3,), when the function ran)",
    ),
    "mean(x, axis=0) * x[0]": (
        lambda x: sn.mean(x, axis=0) * x[0],
        lambda X, V: V * X[0] / 3 + np.eye(3, 1)[:, :1] * V * X.mean(axis=0),
        (4,),
        "((1,), not (4,), when the function ran)",
    ),
}


@pytest.mark.parametrize("case", list(SHAPE_FROM_OPERANDS))
def test_an_eval_point_is_checked_where_fs_shape_follows_from_its_operands(backend, case):
    """``Lop(exp(x) * x, x, v)`` computes ``exp(x)`` and ``x`` but not their product, and
    ``Lop(sum(x * x, axis=1), x, v)`` no sum: the point was left unchecked (two operands of
    f's shape, a reduction) and a length-1 v broadcast silently, for Lop and a known
    gradient alike. Its shape is read off the operands when the function runs."""
    build, numeric, shape, says = SHAPE_FROM_OPERANDS[case]
    x, v = f64("x", (None, None)), f64("v", (None,) * len(shape))
    X = np.arange(12.0).reshape(3, 4) / 10
    V = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape)
    for starts, product in [
        ("Lop: eval point 0 'v' (float64(", sn.Lop(build(x), x, v)),
        ("sn.grad: the known gradient 'v' (float64(", sn.grad(None, x, known_grads={build(x): v})),
    ]:
        f = sn.function([x, v], product, backend=backend)
        with pytest.raises(sn.ShapeError) as info:
            f(X, np.ones((1,) * len(shape)))
        message = str(info.value)
        assert message.startswith(starts), message
        assert says in message, message
        np.testing.assert_allclose(f(X, V), numeric(X, V), rtol=1e-12)


# id -> (f of x and y, wrt, its vector-Jacobian product with v in NumPy, the shape of v
# for X (2, 3) and Y (4, 3))
BY_SHAPE_RULE = {
    "pad(x, 1)": (lambda x, y: sn.pad(x, 1), "x", lambda X, Y, V: V[1:-1, 1:-1], (4, 5)),
    "sort(x)": (
        lambda x, y: sn.sort(x),
        "x",
        lambda X, Y, V: np.take_along_axis(V, np.argsort(np.argsort(X, 1), 1), 1),
        (2, 3),
    ),
    "concatenate([x, x])": (
        lambda x, y: sn.concatenate([x, x]),
        "x",
        lambda X, Y, V: V[:2] + V[2:],
        (4, 3),
    ),
    "concatenate([x, y])": (
        lambda x, y: sn.concatenate([x, y]),
        "x",
        lambda X, Y, V: V[:2],
        (6, 3),
    ),
    "repeat(x, 2, axis=0)": (
        lambda x, y: sn.repeat(x, 2, axis=0),
        "x",
        lambda X, Y, V: V[0::2] + V[1::2],
        (4, 3),
    ),
    "tile(x, (2, 3))": (
        lambda x, y: sn.tile(x, (2, 3)),
        "x",
        lambda X, Y, V: V.reshape(2, 2, 3, 3).sum(axis=(0, 2)),
        (4, 9),
    ),
    "exp(pad(2 * x, 1))": (
        lambda x, y: sn.exp(sn.pad(2 * x, 1)),
        "x",
        lambda X, Y, V: 2 * (V * np.exp(np.pad(2 * X, 1)))[1:-1, 1:-1],
        (4, 5),
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(BY_SHAPE_RULE))
def test_an_eval_point_is_checked_by_the_shape_rule_of_fs_op(backend, case):
    """The check found f's shape only through elementwise ops, reductions, dimshuffles and
    matmul: for sort, concatenate, repeat and tile a wrong point failed inside their
    gradient ops (an IndexError in unsort, a ValueError in split or a reshape), for pad it
    was taken and the gradient came back shaped (0, 3). f's shape now follows from the op's
    own shape rule applied to its input's lengths, which the product reads."""
    build, wrt, numeric, shape = BY_SHAPE_RULE[case]
    x, y, v = f64("x", (None, None)), f64("y", (None, None)), f64("v", (None, None))
    X, Y = np.array([[0.3, -1.0, 2.0], [1.5, 0.2, -0.4]]), np.ones((4, 3))
    V = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape)
    f = sn.function([x, y, v], sn.Lop(build(x, y), x, v), backend=backend)
    for wrong in [(1, shape[1]), (shape[0], 1), (shape[0] + 1, shape[1])]:
        with pytest.raises(sn.ShapeError) as info:
            f(X, Y, np.ones(wrong))
        assert not isinstance(info.value, RuntimeFailure)
        message = str(info.value)
        assert message.startswith("Lop: eval point 0 'v' (float64(?, ?)) does not"), message
        assert f"({wrong[0]}, {wrong[1]}), not ({shape[0]}, {shape[1]}), when the" in message
    np.testing.assert_allclose(f(X, Y, V), numeric(X, Y, V), rtol=1e-12)


def test_products_that_never_read_f_s_input_need_no_value_of_it():
    """flip's gradient is flip(v): no computed value tells f's shape, and the check asks
    for no input the product does not read (docs/autodiff.md), as Lop(x @ W, W, v) needs
    no W."""
    x, v = f64("x", (None, None)), f64("v", (None, None))
    got = sn.function([v], sn.Lop(sn.flip(x, axis=0), x, v))(np.arange(6.0).reshape(3, 2))
    np.testing.assert_array_equal(got, np.arange(6.0).reshape(3, 2)[::-1])


def test_a_disconnected_wrt_is_reported_in_rops_words():
    x, z = f64("x", (3,)), f64("z", (3,))
    with pytest.raises(sn.DisconnectedInputError) as info:
        sn.Rop(sn.sin(x), z, np.ones(3))
    message = str(info.value)
    assert message.startswith("sn.Rop: f does not depend on 'z' (float64(3,))")
    assert "sn.grad" not in message and "the cost" not in message and "None" not in message
    assert "disconnected='ignore' or 'warn' to take its tangent as zero" in message
    assert "test_rop_checks.py" in message  # the user's line
    with pytest.warns(sn.DisconnectedInputWarning, match="sn.Rop: f does not") as got:
        jvp = sn.Rop(sn.sin(x), [x, z], [np.ones(3), np.ones(3)], disconnected="warn")
    assert got[0].filename == __file__
    np.testing.assert_allclose(sn.function([x], jvp)(np.zeros(3)), np.ones(3))  # what it says
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sn.Rop(sn.sin(x), z, np.ones(3), disconnected="ignore")
    with pytest.raises(ValueError, match="sn.Rop: disconnected='no'"):
        sn.Rop(sn.sin(x), x, np.ones(3), disconnected="no")


def test_rop_through_grad_clip_is_the_tangent_of_the_identity(backend):
    x = f64("x", (3,))
    v, xv = np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.0, 2.0])
    y = 3 * sn.grad_clip(x, 0.1, 0.5)  # bounds without 0: the zero cotangent clipped was 0.1
    squared = sn.grad_clip(x * x, -0.5, 0.5) ** 2
    f = sn.function([x], [sn.Rop(y, x, v), sn.Rop(squared, x, v)], backend=backend)
    got, got_squared = f(xv)
    np.testing.assert_allclose(got, 3 * v)
    np.testing.assert_allclose(got_squared, 4 * xv**3 * v)
    # the reverse pass still clips
    g = sn.function([x], sn.grad(sn.sum(y), x), backend=backend)(xv)
    np.testing.assert_allclose(g, [0.5, 0.5, 0.5])


def _rnn(x, marker, nested=False):
    """Two steps of h = sin(h * x) from ones, the step reading grad_clip(h, 0.1, 1.0) with
    ``marker`` (bounds without 0), inside a second scan with ``nested``."""

    def step(h, x):
        return sn.sin((sn.grad_clip(h, 0.1, 1.0) if marker else h) * x)

    def steps(x):
        hs, _ = sn.scan(step, outputs_info=sn.ones_like(x), non_sequences=x, n_steps=2)
        return hs[-1]

    if not nested:
        return steps(x)
    outer, _ = sn.scan(lambda x: steps(x), non_sequences=x, n_steps=1)
    return outer[0]


@pytest.mark.parametrize("nested", [False, True], ids=["scan", "scan in scan"])
def test_rop_through_grad_clip_in_a_scans_step_is_the_tangent_of_the_identity(nested):
    """The markers were taken out of the outer graph only: a grad_clip in a scan's step kept
    its rule, which clipped the placeholder cotangent (0, outside [0.1, 1]) and gave a wrong
    tangent. The tangent is that of the step without the marker, by finite differences."""
    x = f64("x", (3,))
    xv, v = np.array([0.5, 1.0, 2.0]), np.array([1.0, -2.0, 0.5])
    got = sn.function([x], sn.Rop(_rnn(x, True, nested), x, v))(xv)
    at = sn.function([x], _rnn(x, False))
    want = (at(xv + 1e-6 * v) - at(xv - 1e-6 * v)) / 2e-6
    np.testing.assert_allclose(got, want, rtol=1e-6)
    # the reverse pass still clips: its gradient differs from the one without the marker
    clipped = sn.function([x], sn.grad(sn.sum(_rnn(x, True, nested)), x))(xv)
    plain = sn.function([x], sn.grad(sn.sum(_rnn(x, False)), x))(xv)
    assert not np.allclose(clipped, plain)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("in_scan", [False, True], ids=["outer", "scan step"])
def test_rop_through_grad_clip_does_not_run_a_print_above_it_twice(backend, in_scan, capsys):
    """Rop differentiated a copy of f with the markers taken out: the copy's print_value
    above the marker (impure, never merged) printed a second time per call, once per step
    in a scan's step. The passes differentiate f itself, the marker as the identity."""
    x, v = f64("x", (2,)), f64("v", (2,))
    if in_scan:

        def step(h, x):  # (the state printed: the backward loop reads its stored rows)
            return sn.print_value((sn.grad_clip(h, -1, 1) * x) ** 2, "P")

        hs, _ = sn.scan(step, outputs_info=sn.ones_like(x), non_sequences=x, n_steps=2)
        y, prints = hs[-1], ["P __str__ = [1. 4.]", "P __str__ = [ 1. 64.]"]
        want = [6.0, 192.0]  # y = (x**2 * x)**2 = x**6: 6 x**5 v
    else:
        y = sn.print_value(sn.grad_clip(x, -1, 1) * 2, "P") ** 2
        prints, want = ["P __str__ = [2. 4.]"], [8.0, 16.0]  # 8 x v
    f = sn.function([x, v], [y, sn.Rop(y, x, v)], backend=backend)
    capsys.readouterr()
    _, jvp = f(np.array([1.0, 2.0]), np.ones(2))
    np.testing.assert_allclose(jvp, want)
    assert capsys.readouterr().out.splitlines() == prints


@pytest.mark.parametrize("backend", BACKENDS)
def test_rop_through_grad_clip_does_not_draw_twice_above_it(backend):
    """A random draw above a marker was drawn again in Rop's copy of f: two draw nodes in
    the function; the tangent must read the draw that f's value reads (y = c * u: u v)."""
    x, v = f64("x", (3,)), f64("v", (3,))
    c = sn.grad_clip(x, -1, 1)
    u = sn.RandomStream(3).uniform(size=c.shape)  # a draw reading the marker's shape
    y = c * u
    f = sn.function([x, v], [u, sn.Rop(y, x, v)], backend=backend)
    draws = [n for n in f.graph.toposort() if not getattr(n.op, "pure", True)]
    assert len(draws) == 1, [n.op.op_name() for n in draws]
    for _ in range(2):  # a new draw each call, the tangent reading it
        drawn, jvp = f(np.array([0.5, 2.0, -3.0]), np.array([1.0, -2.0, 4.0]))
        np.testing.assert_allclose(jvp, drawn * [1.0, -2.0, 4.0])


def test_rop_with_respect_to_a_grad_clip_output_keeps_it():
    x = f64("x", (3,))
    h = sn.grad_clip(x, -1.0, 1.0)
    got = sn.function([x], sn.Rop(sn.sin(h), h, np.ones(3)))(np.zeros(3))
    np.testing.assert_allclose(got, np.ones(3))


def test_zero_grad_and_disconnected_grad_keep_their_tangents():
    """zero_grad: a zero tangent (JAX's stop_gradient); disconnected_grad: none (Theano)."""
    x = f64("x", (3,))
    xv, v = np.array([0.5, 1.0, 2.0]), np.ones(3)
    got = sn.function([x], sn.Rop(sn.zero_grad(x) * x, x, v))(xv)
    np.testing.assert_allclose(got, xv)  # jax.jvp(lambda x: stop_gradient(x) * x): x * v
    with pytest.raises(sn.DisconnectedInputError, match="'x'"):
        sn.Rop(sn.disconnected_grad(x) * 2, x, v)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_known_gradient_is_checked_against_a_shared_variables_shape(backend):
    """``h = x @ W`` of a shared ``W`` whose dims are unknown: the gradient with respect to
    ``W`` computes no ``W`` and no ``h``, so the known gradient of ``h`` was not checked and
    a length-1 one gave a (3, 1) gradient for the (3, 2) ``W``. A shared variable is read,
    not computed: its shape, read when the function runs (``set_value`` may change it),
    checks the point; still no input the product does not read."""
    x, g = f64("x", (None,)), f64("g", (None,))
    W = sn.shared(np.ones((3, 2)), name="W", shape=(None, None))
    for starts, product in [
        ("sn.grad: the known gradient 'g'", sn.grad(None, W, known_grads={x @ W: g})),
        ("Lop: eval point 0 'g'", sn.Lop(x @ W, W, g)),
    ]:
        f = sn.function([x, g], product, backend=backend)
        with pytest.raises(sn.ShapeError) as info:
            f(np.ones(3), np.array([5.0]))
        message = str(info.value)
        assert message.startswith(f"{starts} (float64(?,)) does not"), message
        assert "((1,), not (2,), when the function ran)" in message, message
        got = f(np.arange(3.0), np.array([1.0, 2.0]))
        np.testing.assert_allclose(got, [[0, 0], [1, 2], [2, 4]])
        W.set_value(np.ones((3, 1)))  # the shape when the function runs, not when built
        np.testing.assert_allclose(f(np.arange(3.0), np.array([5.0])), [[0], [5], [10]])
        with pytest.raises(sn.ShapeError, match=r"\(\(2,\), not \(1,\), when the function ran"):
            f(np.arange(3.0), np.array([1.0, 2.0]))
        W.set_value(np.ones((3, 2)))


def _taps_scan(x, h, n=None):
    """h_t = tanh(h_{t-2} * h_{t-1} + x_t) from two rows of h, over x's rows or n steps."""
    if n is None:
        step, seqs = (lambda xt, a, b: sn.tanh(a * b + xt)), x
    else:
        step, seqs = (lambda a, b: sn.tanh(a * b + 0.5)), None
    hs, _ = sn.scan(step, sequences=seqs, outputs_info={"initial": h, "taps": [-2, -1]}, n_steps=n)
    return hs


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("steps", ["sequence", "n_steps"])
def test_an_eval_point_of_a_scan_with_taps_is_checked_when_the_function_runs(backend, steps):
    """The Lop of a scan fed back at taps -2 and -1 computes a scan keeping every state's
    rows, not ``hs``, and the rule gave no length for hs's rows (the state's placeholder
    has unknown dims) nor, with ``n_steps`` alone, for its steps: a (6, 3) point for the
    (4, 3) ``hs`` was taken, the product that of its last 4 rows, and a (4, 1) one was
    broadcast. A state keeps its initial value's shape, and the steps are read off the
    rule when the function runs; Lop and a known gradient raise the ShapeError."""
    x, h, u = f64("x", (None, None)), f64("h", (None, None)), f64("u", (None, None))
    n = sn.tensor("n", shape=(), dtype="int64")
    rng = np.random.default_rng(0)
    X, H, U = rng.standard_normal((4, 3)), rng.standard_normal((2, 3)), rng.standard_normal((4, 3))
    ins, args = ([x, h], [X, H]) if steps == "sequence" else ([h, n], [H, np.int64(4)])
    hs = _taps_scan(x, h, None if steps == "sequence" else n)
    wrt = ins[:1] if steps == "sequence" else [h]
    want = sn.function(ins + [u], sn.grad(sn.sum(hs * u), wrt), backend=backend)(*args, U)
    for starts, product in [
        ("Lop: eval point 0 'u' (float64(?, ?)) does not", sn.Lop(hs, wrt, u)),
        ("sn.grad: the known gradient 'u'", sn.grad(None, wrt, known_grads={hs: u})),
    ]:
        f = sn.function(ins + [u], product, backend=backend)
        for wrong in [(6, 3), (4, 1), (1, 3)]:
            with pytest.raises(sn.ShapeError) as info:
                f(*args, np.ones(wrong))
            assert not isinstance(info.value, RuntimeFailure)
            message = str(info.value)
            assert message.startswith(starts), message
            assert f"(({wrong[0]}, {wrong[1]}), not (4, 3), when the function ran)" in message
        np.testing.assert_allclose(f(*args, U), want, rtol=1e-12)


_X34 = np.array([[0.3, -1.0, 2.0, 0.5], [1.5, 0.2, -0.4, 1.0], [0.7, 0.1, -2.0, 0.9]])
_I = np.array([0, 2, 2, 1])
_MASK = np.array([[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 1]], bool)
_J = np.array([[0, 1], [2, 2], [3, 0]])
# id -> (f of x (3, 4) and the int/bool input z, z's dtype and value, f's shape)
BY_RULE_WHEN_IT_RUNS = {
    "x[i]": (lambda x, z: x[z], "int64", _I, (4, 4)),
    "x[:, i]": (lambda x, z: x[:, z], "int64", _I, (3, 4)),
    "x[1:, ::2]": (lambda x, z: x[1:, ::2], None, None, (2, 2)),
    "x[-1, 1:3]": (lambda x, z: x[-1, 1:3], None, None, (2,)),
    "x[:n]": (lambda x, z: x[:z], "int64", np.int64(2), (2, 4)),
    "x[n::2, :n]": (lambda x, z: x[z::2, :z], "int64", np.int64(-2), (1, 2)),
    "x[mask]": (lambda x, z: x[z], "bool", _MASK, (8,)),
    "take_along_axis": (lambda x, z: sn.take_along_axis(x, z, axis=1), "int64", _J, (3, 2)),
    "einsum('ii->i')": (lambda x, z: sn.einsum("ii->i", x[:, :3]), None, None, (3,)),
    "svd(compute_uv=False)": (lambda x, z: sn.svd(x, compute_uv=False), None, None, (3,)),
    "categorical_crossentropy": (
        lambda x, z: sn.categorical_crossentropy(sn.softmax(x), z),
        "int64",
        np.array([0, 3, 1]),
        (3,),
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(BY_RULE_WHEN_IT_RUNS))
def test_an_eval_point_is_checked_by_fs_shape_rule_when_the_function_runs(backend, case):
    """A length no expression of known lengths gives (an index's, a slice's, a mask's
    count, svd's min(m, n)) left the point unchecked: a length-1 point was broadcast over
    the rows ``x[i]`` picks and the product silently wrong, or failed inside the gradient
    op. f's op's shape rule is applied when the function runs to the shapes of its inputs
    (the values of the integer and boolean ones), which the product reads; f itself is not
    computed."""
    build, dtype, value, shape = BY_RULE_WHEN_IT_RUNS[case]
    x, v = f64("x", (None, None)), f64("v", (None,) * len(shape))
    z = sn.tensor("z", shape=(None,) * np.ndim(value), dtype=dtype) if dtype else None
    ins, args = ([x, z], [_X34, value]) if dtype else ([x], [_X34])
    out = build(x, z)
    V = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape)
    want = sn.function(ins + [v], sn.grad(sn.sum(out * v), x), backend=backend)(*args, V)
    for starts, product in [
        ("Lop: eval point 0 'v' (float64(", sn.Lop(out, x, v)),
        ("sn.grad: the known gradient 'v' (float64(", sn.grad(None, x, known_grads={out: v})),
    ]:
        f = sn.function(ins + [v], product, backend=backend)
        for wrong in [(1,) + shape[1:], (shape[0] + 1,) + shape[1:], shape[:-1] + (1,)]:
            if wrong == shape:
                continue
            with pytest.raises(sn.ShapeError) as info:
                f(*args, np.ones(wrong))
            assert not isinstance(info.value, RuntimeFailure)
            message = str(info.value)
            assert message.startswith(starts), message
            assert f"{wrong}, not {shape}, when the function ran" in message, message
        np.testing.assert_allclose(f(*args, V), want, rtol=1e-12)
    assert all(node.op != out.owner.op for node in f.graph.toposort())  # f is not computed
