"""Malformed ``updates=``: the message a student reads says "updates", shows the expected
form with the student's own variable names, and points at the student's line."""

import re

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


@pytest.mark.parametrize("backend", ["py", "c"])
def test_an_update_ties_a_named_dim_to_its_shared_values_fixed_size(backend):
    """``updates={w: x * 2}`` with x of ``("n",)`` and w of ``(2,)``: n is 2 in every call
    that can write w, so a call with another n is refused by the input checks, naming the
    input, the update and the line, before anything runs (it ran, then failed writing)."""
    x = sn.tensor("x", shape=("n",), dtype="float32")
    a = sn.shared(np.zeros(2, np.float32), name="a")
    w = sn.shared(np.zeros(2, np.float32), name="w")
    f = sn.function([x], x.sum(), updates={a: a + 1, w: x * 2}, backend=backend)  # <- tie
    with pytest.raises(sn.ShapeError) as info:
        f(np.ones(3, np.float32))
    message = str(info.value)
    assert message.startswith("input 0 'x' expects shape (n,) (float32), got an array of shape")
    assert "dim 'n' (axis 0) is 3 here but 2 in the update of shared 'w' (float32(2,))" in message
    assert f"line {_line_of('<- tie')}" in message
    np.testing.assert_array_equal(a.get_value(), [0.0, 0.0])
    if backend == "c" and f.runner is not None:
        assert f.runner.declined == 1  # the runner refused it: no step ran
    assert f(np.ones(2, np.float32)) == 2.0
    np.testing.assert_array_equal(w.get_value(), [2.0, 2.0])


def test_two_updates_tying_a_named_dim_to_two_sizes_are_refused_at_compile_time():
    x = sn.tensor("x", shape=("n",))
    v, w = sn.shared(np.zeros(2), name="v"), sn.shared(np.zeros(3), name="w")
    with pytest.raises(sn.ShapeError) as info:
        sn.function([x], [], updates={v: x * 2, w: x * 3})  # <- two sizes
    message = str(info.value)
    assert "updates: dim 'n' is 2 in the update of shared 'v' (float64(2,))" in message
    assert "but 3 in the update of shared 'w' (float64(3,))" in message
    assert f"\n  at {__file__}, line {_line_of('<- two sizes')}" in message


@pytest.mark.parametrize(
    "dtype, literal, why",
    [
        ("int8", 300, r"out of bounds for int8 \(-128\.\.127\), and a cast would wrap it to 44"),
        ("uint8", -1, r"out of bounds for uint8 \(0\.\.255\), and a cast would wrap it to 255"),
        ("int64", 2.7, r"int64 holds no Python float .*a cast would make it 2;"),
        ("float32", 1e300, r"beyond float32's largest finite value .* would become inf"),
    ],
    ids=["int8", "uint8", "int64", "float32"],
)
def test_a_python_number_an_update_or_given_cannot_hold_is_refused(dtype, literal, why):
    """A Python number as an update's or a given's value takes the variable's dtype only where
    its value survives, as NumPy 2 refuses ``x8 + 300`` and ``set_value(300)`` refuses it:
    ``{s8: 300}`` stored 44 at every call, ``{u8: -1}`` 255, ``{i64: 2.7}`` 2, ``{f32: 1e300}``
    inf, and ``givens={x8: 300}`` computed with 44."""
    s = sn.shared(np.zeros((), dtype), name="s")
    with pytest.raises(sn.DTypeError) as info:
        sn.function([], [], updates={s: literal})  # <- update literal
    message = str(info.value)
    assert message.startswith(f"update: 's' ({dtype}()) cannot take the Python ")
    assert re.search(why, message), message
    assert f"\n  at {__file__}, line {_line_of('<- update literal')}" in message
    assert s.get_value() == 0
    x = sn.tensor("x", (), dtype)
    with pytest.raises(sn.DTypeError, match=rf"givens: 'x' \({dtype}\(\)\) cannot take .*{why}"):
        sn.function([], x * 1, givens={x: literal})


def test_a_python_number_an_update_can_hold_takes_its_dtype(backend):
    s8 = sn.shared(np.int8(0), name="s8")
    f32 = sn.shared(np.float32(0), name="f32")
    sn.function([], [], updates={s8: -128, f32: 0.1}, backend=backend)()
    assert s8.get_value() == -128 and s8.get_value().dtype == np.int8
    assert f32.get_value() == np.float32(0.1) and f32.get_value().dtype == np.float32


def test_an_update_that_does_not_fit_names_the_update_and_its_line(backend):
    """A call whose update value does not fit its shared variable's fixed shape names the
    update and the line that built it (it said only "shared 'B': the new value has shape
    (4,)", set_value's words, of a value the user never gave); no shared value is written."""
    B = sn.shared(np.zeros(3), name="B")
    a = sn.shared(np.zeros(2), name="a")
    x = sn.tensor("x", (None,), "float64")
    f = sn.function([x], [], updates={a: a + 1, B: x}, backend=backend)  # <- built
    for _ in range(2):  # (a first call takes the Python path; the second, the C entry)
        with pytest.raises(sn.InputError) as info:
            f(np.ones(4))
        message = str(info.value)
        assert message.startswith(
            "shared 'B' (float64(3,)): the value of its update in this call, 'x' (float64(?,)) "
            f"(at {__file__}, line {_line_of('<- built')}: f = sn.function("
        )
        assert message.endswith("), has shape (4,), which does not fit (3,)")
        assert a.get_value().tolist() == [0.0, 0.0]
    g = sn.function([x], [], updates={B: x * 2}, backend=backend)  # <- one update
    g(np.ones(3))
    assert B.get_value().tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(sn.InputError, match=r"update in this call, an unnamed .*<- one update\),"):
        g(np.ones(5))
    B.set_value(np.ones(3))
    with pytest.raises(sn.InputError, match=r"^shared 'B' \(float64\(3,\)\): the new value has"):
        B.set_value(np.ones(4))


def test_an_update_that_would_leave_two_shared_values_disagreeing_about_a_name_is_refused(
    backend,
):
    """A and B of ``("n",)``, both read: ``updates={A: x}`` with x of 4 values for n 3 was
    written, and every later call failed blaming set_value. It is refused like an update
    that does not fit, naming the update, the dim and B, with nothing written; updates that
    keep the names agreeing (both to 5, or an expression dim of them) are written."""
    A = sn.shared(np.ones(3), name="A", shape=("n",))
    B = sn.shared(np.ones(3), name="B", shape=("n",))
    x = sn.tensor("x", (None,), "float64")
    s = sn.shared(np.float64(0.0), name="s")
    f = sn.function([x], (A + B).sum(), updates={A: x, s: s + 1}, backend=backend)  # <- A
    for _ in range(2):  # (a first call takes the Python path; then the C entry would)
        with pytest.raises(sn.InputError) as info:
            f(np.ones(4))
        assert str(info.value) == (
            "shared 'A' (float64(n,)): the value of its update in this call, 'x' (float64(?,)) "
            f"(at {__file__}, line {_line_of('<- A')}: f = sn.function([x], (A + B).sum(), "
            "updates={A: x, s: s + 1}, backend=backend)  # <- A), has shape (4,): dim 'n' "
            "(axis 0) is 4 here but 3 in shared 'B' (float64(n,)); a named dim has one size "
            "across a call; no shared value was written (update them alike)"
        )
        assert A.get_value().shape == (3,) and s.get_value() == 0.0
    assert f(np.full(3, 2.0)) == 6.0 and A.get_value().tolist() == [2.0] * 3
    g = sn.function([x], (A + B).sum(), updates={A: x, B: x * 2}, backend=backend)
    assert g(np.ones(5)) == 9.0 and B.get_value().tolist() == [2.0] * 5
    T = sn.shared(np.ones(10), name="T", shape=("2*n",))
    h = sn.function([x], T.sum() + A.sum(), updates={T: x}, backend=backend)
    with pytest.raises(sn.InputError, match=r"axis 0 \(n\*2\) should be 10 with n=5 in shared 'A'"):
        h(np.ones(4))
    assert h(np.ones(10)) == 15.0 and T.get_value().shape == (10,)
