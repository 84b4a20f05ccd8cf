"""Malformed ``givens=``: checked as ``updates=`` is (a dict or pairs, each key a variable),
with errors that say "givens", name the bad key and point at the user's line; a key the graph
never reads compiles, with a GraphWarning (Theano ignored it silently)."""

import pickle
import warnings

import numpy as np
import pytest

import symnb as sn
import symnb.compat.theano as theano
from symnb.errors import GraphWarning
from tests.helpers import available_backends


def _line_of(marker: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, start=1) if marker in line)


def _error(givens, error=sn.GraphError) -> str:
    x = sn.tensor("x", shape=("batch", 3))
    with pytest.raises(error) as info:
        sn.function([x], sn.sum(x), givens=givens(x), backend="py")  # <- compile
    return str(info.value)


def test_a_key_that_is_not_a_variable_is_named():
    message = _error(lambda x: {"x": x * 2})
    assert message.startswith("givens: the key 'x' (str) is not a symbolic variable")
    assert "pass the variable itself" in message
    assert f"line {_line_of('<- compile')}" in message
    message = _error(lambda x: [(3, x)])
    assert message.startswith("givens: the key 3 (int) is not a symbolic variable")


def test_givens_not_a_dict_or_pairs():
    w = sn.shared(np.ones((2, 3)), name="W")
    message = _error(lambda x: w)
    assert message.startswith("givens=W is one variable, not a pair")
    assert "a dict {variable: replacement} or a list of (variable, replacement) pairs" in message
    assert "is a single pair, not a list of pairs" in _error(lambda x: (x, x * 2))
    assert _error(lambda x: 5).startswith("givens=5 is neither a dict nor pairs")
    assert _error(lambda x: [(x, x, 1)]).startswith("givens[0] is (x, x, 1), not a pair")
    assert "'x' (float64(batch, 3)) is given twice" in _error(lambda x: [(x, x), (x, x * 2)])
    message = _error(lambda x: {x: "abc"}, sn.DTypeError)
    assert message.startswith("givens: the replacement for 'x' (float64(batch, 3)): cannot use")


def test_the_theano_layer_checks_givens_before_its_unused_input_check():
    x = theano.tensor.matrix("x")
    with pytest.raises(sn.GraphError, match=r"givens: the key 'x' \(str\)"):
        theano.function([x], x.sum(), givens={"x": x * 2})


def test_an_unread_key_raised_by_an_error_filter_names_the_users_line():
    """Under ``-W error`` the GraphWarning's message ends with the user's line and it holds
    ``.location``, as a raised ShapeWarning does (it had neither)."""
    x, y = sn.vector("x"), sn.vector("y")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(GraphWarning, match="replaces nothing\n  at ") as info:
            sn.function([x], x * 2, givens={y: x + 1}, backend="py")  # <- raised
    line = _line_of("<- raised")
    code = 'sn.function([x], x * 2, givens={y: x + 1}, backend="py")  # <- raised'
    assert str(info.value).endswith(f"\n  at {__file__}, line {line}: {code}")
    assert (info.value.location.filename, info.value.location.lineno) == (__file__, line)


def test_a_key_the_graph_does_not_read_warns_at_the_users_line():
    x, y = sn.vector("x"), sn.vector("y")
    with pytest.warns(GraphWarning, match=r"givens: 'y' .* replaces nothing$") as caught:
        f = sn.function([x], x * 2, givens={y: x + 1}, backend="py")  # <- unread
    assert caught[0].lineno == _line_of("<- unread") and caught[0].filename == __file__
    np.testing.assert_array_equal(f([1.0, 2.0]), [2.0, 4.0])
    again = sn.vector("x")  # a cell run twice: the outputs read the first x
    with pytest.warns(GraphWarning, match="another variable named 'x'.*key the given by that"):
        f = sn.function([x], x * 2, givens={again: x + 1}, backend="py")
    np.testing.assert_array_equal(f([1.0, 2.0]), [2.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a key read directly or as a node's input: no warning
        sn.function([y], x * 2, givens={x: y}, backend="py")
        h = x * 2
        g = sn.function([y], sn.sum(h), givens={h: y}, backend="py")
    assert g([1.0, 2.0]) == 3.0


def test_an_input_that_is_also_a_givens_key_is_refused():
    """The given replaces the input wherever the outputs read it, so the value passed for it
    was silently ignored (``f(x_value, y_value)`` computed from ``data``)."""
    x, y = sn.vector("x"), sn.vector("y")
    data = sn.shared(np.arange(3.0), name="data")
    with pytest.raises(sn.GraphError) as info:
        sn.function([y, x], x + y, givens={x: data}, backend="py")  # <- input given
    message = str(info.value)
    assert message.startswith("givens: input 1 'x' (float64(?,)) is also a key of givens")
    assert "would be ignored" in message and "givens={x: g(y)}" in message
    assert f"line {_line_of('<- input given')}" in message
    f = sn.function([y], x + y, givens={x: data}, backend="py")  # the input of the fix
    np.testing.assert_array_equal(f([1.0, 1.0, 1.0]), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("backend", ["py", "c"])
def test_a_given_for_one_output_of_a_node_leaves_the_others_rebuilt_over_the_givens(backend):
    """givens replacing one output of a scan (a multi-output node) and its sequence: the
    other output read the original sequence (W * 3, not W2 * 3), silently."""
    w = sn.shared(np.array([1.0, 5.0, 2.0]), name="W")
    w2 = sn.shared(np.array([7.0, 1.0, 2.0]), name="W2")
    (o1, o2), _ = sn.scan(lambda v: [v * 2, v * 3], sequences=w)
    f = sn.function([], [o1, o2], givens={w: w2, o1: sn.zeros((3,))}, backend=backend)
    first, second = f()
    np.testing.assert_array_equal(first, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(second, [21.0, 3.0, 6.0])
    (c1, c2) = theano.clone([o1, o2], replace={w: w2, o1: sn.zeros((3,))})
    np.testing.assert_array_equal(sn.function([], c2, backend=backend)(), [21.0, 3.0, 6.0])


@pytest.mark.parametrize("backend", ["py", "c"])
def test_a_given_of_unknown_dims_for_a_key_of_known_dims_is_checked_when_the_function_runs(
    backend,
):
    """x of (1, 2) given y of (?, 2): "c" returned a (3, 2) result for an output typed
    (1, 2), "py" an internal error. Every backend now raises one ShapeError naming both."""
    x = sn.tensor("x", (1, 2), dtype="float64")
    y = sn.tensor("y", (None, 2), dtype="float64")
    f = sn.function([y], x * 2, givens={x: y}, backend=backend)  # <- the given
    np.testing.assert_array_equal(f(np.ones((1, 2))), [[2.0, 2.0]])
    with pytest.raises(sn.ShapeError) as info:
        f(np.ones((3, 2)))
    message = str(info.value)
    assert "'x' (float64(1, 2)) was given 'y' (float64(?, 2)) of another shape" in message
    assert "(3, 2), not (1, 2), when the function ran" in message
    assert f"line {_line_of('<- the given')}" in message
    n, z = sn.tensor("n", ("b", 2)), sn.tensor("z", ("b",))
    g = sn.function([y, z], sn.sum(n, axis=1) + z, givens={n: y}, backend=backend)
    np.testing.assert_array_equal(g(np.ones((3, 2)), np.zeros(3)), [2.0, 2.0, 2.0])
    with pytest.raises(sn.ShapeError, match=r"\(3, 2\), not \(b, 2\) = \(2, 2\)"):
        g(np.ones((3, 2)), np.zeros(2))


@pytest.mark.parametrize("backend", ["py", "c", "opencl"])
def test_a_given_check_runs_where_the_outputs_read_only_the_keys_fixed_shape(backend):
    """x of (3,) given y of (?,), the outputs reading only x's shape (``x.shape[0]``, folded
    to 3) or nothing of x (``sn.ones_like(x)``, built of x's fixed shape): the check was
    dropped with the value nothing read, and a call with 2 values returned 3 silently. The
    check is kept (an output after the updates, not returned), an update not written."""
    if backend not in available_backends():
        pytest.skip(f"no {backend} backend here")
    x, y = sn.vector("x", shape=(3,)), sn.vector("y")
    s = sn.shared(np.float64(0.0), name="s")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphWarning)  # ones_like(x) does not read x
        for out in [x.shape[0] * 2, sn.ones_like(x) * 2]:
            f = sn.function([y], out, givens={x: y}, backend=backend)
            g = sn.function([y], out, givens={x: y}, updates={s: s + 1}, backend=backend)
            np.testing.assert_array_equal(f(np.ones(3)), 6 if out.ndim == 0 else [2.0] * 3)
            np.testing.assert_array_equal(g(np.ones(3)), f(np.ones(3)))
            assert s.get_value() == 1.0
            for h in (f, g, pickle.loads(pickle.dumps(f))):
                with pytest.raises(sn.ShapeError) as info:
                    h(np.ones(2))
                message = str(info.value)
                assert "'x' (float64(3,)) was given 'y' (float64(?,)) of another shape" in message
                assert "(2,), not (3,), when the function ran" in message
                assert "test_givens.py, line" in message and "givens={x: y}" in message
            assert s.get_value() == 1.0
            s.set_value(np.float64(0.0))


def test_a_kept_given_check_is_the_last_step_of_the_rewrite_history():
    """The check kept as an output after the rules ran is a step of f.rewrites
    (checks/keep_givens_checks), so the last step's graph is f.graph, as the stepper's last
    frame is the optimised graph."""
    x, y = sn.vector("x", shape=(3,)), sn.vector("y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphWarning)  # ones_like(x) does not read x
        f = sn.function([y], sn.ones_like(x) * 2, givens={x: y}, backend="py")
    last = f.rewrites[len(f.rewrites) - 1]
    assert (last.phase, last.rule) == ("checks", "keep_givens_checks")
    assert [n.op.op_name() for n in last.added] == ["has_shape"] and last.removed == []
    assert str(last).startswith("checks/keep_givens_checks: - -> has_shape[")
    assert str(last.graph_after()) == f.text() and len(last.graph_after().outputs) == 2
    assert len(f.rewrites.replay(last.index).outputs) == 1
    plain = sn.function([y], x * 2, givens={x: y}, backend="py")
    assert "keep_givens_checks" not in plain.rewrites.counts()  # its check runs: none kept


@pytest.mark.parametrize("backend", ["py", "c", "opencl"])
def test_a_named_dim_of_a_given_is_checked_where_an_expression_dim_or_a_shared_value_gives_it(
    backend,
):
    """x of (n,) given y of (?,), where only an input of (n+1,) gives n (the input checks
    solve it), or only a shared value: a y of another length was taken silently (x.shape[0]
    1 beside w.shape[0] 5) or failed in NumPy's broadcast; it is the givens ShapeError."""
    if backend not in available_backends():
        pytest.skip(f"no {backend} backend here")
    x, y = sn.tensor("x", shape=("n",)), sn.tensor("y", shape=(None,))
    w = sn.tensor("w", shape=("n+1",))
    f = sn.function([y, w], [x * w[1:], x.shape[0]], givens={x: y}, backend=backend)
    np.testing.assert_array_equal(f(np.ones(4), np.arange(5.0))[0], [1.0, 2.0, 3.0, 4.0])
    for length in (1, 3):
        with pytest.raises(sn.ShapeError) as info:
            f(np.ones(length), np.ones(5))
        message = str(info.value)
        assert "'x' (float64(n,)) was given 'y' (float64(?,)) of another shape" in message
        assert f"(({length},), not (n,) = (4,), when the function ran)" in message
    S = sn.shared(np.ones(3), name="S", shape=("n",))
    T = sn.shared(np.ones(6), name="T", shape=("2*n",))
    for other in (S, T):
        g = sn.function([y], x.sum() + other.sum(), givens={x: y}, backend=backend)
        assert g(np.ones(3)) == 3.0 + other.get_value().sum()
        with pytest.raises(sn.ShapeError, match=r"\(\(1,\), not \(n,\) = \(3,\), when the"):
            g(np.ones(1))
