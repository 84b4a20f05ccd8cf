import re
import sys

import numpy as np
import pytest

import symnb as sn


def test_outputs_keep_the_users_structure():
    x = sn.vector("x")
    one = sn.function([x], x + 1)
    assert np.array_equal(one([1, 2]), [2, 3])
    pair = sn.function([x], [x + 1, x * 2])
    assert isinstance(pair([1.0]), list) and pair([1.0])[1][0] == 2
    tup = sn.function([x], (x, x))
    assert isinstance(tup([1.0]), tuple)
    named = sn.function([x], {"double": x * 2, "neg": -x})
    out = named([3.0])
    assert set(out) == {"double", "neg"} and out["neg"][0] == -3


def test_nested_outputs_of_variables_are_refused_at_the_users_line():
    """A list inside the list of outputs was read as a constant array of variables: the
    error said a variable "has no value until the function runs"."""
    x = sn.vector("x")
    for outputs, key in [([x * 2, [x + 1, x - 1]], "1"), ({"a": x, "b": (x, -x)}, "'b'")]:
        with pytest.raises(sn.GraphError, match=f"output {key} is a (list|tuple): outputs ar") as e:
            sn.function([x], outputs)
        assert "test_function.py" in str(e.value)
    numbers = sn.function([x], [x, [1.0, 2.0]])  # a list of numbers is still a constant
    np.testing.assert_array_equal(numbers([3.0])[1], [1.0, 2.0])


def test_keyword_arguments_and_missing_inputs():
    x, y = sn.scalar("x"), sn.scalar("y")
    f = sn.function([x, y], x - y, name="diff")
    assert f(y=1.0, x=3.0) == 2.0
    with pytest.raises(sn.InputError, match="missing input 1 'y'"):
        f(1.0)
    with pytest.raises(sn.InputError, match="no input named 'z'"):
        f(1.0, z=2.0)
    with pytest.raises(sn.InputError, match="takes 2 inputs, got 3"):
        f(1.0, 2.0, 3.0)


def test_updates_are_all_computed_before_any_is_written():
    a = sn.shared(np.array(1.0), name="a")
    b = sn.shared(np.array(10.0), name="b")
    swap = sn.function([], [a, b], updates={a: b, b: a})
    assert [float(v) for v in swap()] == [1.0, 10.0]
    assert float(a.get_value()) == 10.0 and float(b.get_value()) == 1.0


def test_updates_accumulate_across_calls_and_accept_pairs():
    count = sn.shared(np.array(0, dtype="int64"), name="count")
    step = sn.function([], count, updates=[(count, count + 1)])
    assert [int(step()) for _ in range(3)] == [0, 1, 2]
    assert int(count.get_value()) == 3


def test_bad_updates_are_refused():
    w = sn.shared(np.zeros(3, "float32"), name="w")
    x = sn.vector("x", dtype="float64")
    with pytest.raises(sn.DTypeError, match=r"update: 'w'.*losing precision.*astype\('float32'\)"):
        sn.function([x], x, updates={w: x})
    with pytest.raises(sn.ShapeError, match=r"update: 'w'.*\(4,\)"):
        sn.function([], w, updates={w: sn.constant(np.zeros(4, "float32"))})
    with pytest.raises(sn.GraphError, match="not a shared variable"):
        sn.function([x], x, updates={x: x})


def test_givens_substitute_variables():
    x, y = sn.vector("x"), sn.vector("y")
    f = sn.function([y], x * 2, givens={x: y + 1})
    assert np.array_equal(f([1.0, 2.0]), [4.0, 6.0])
    w = sn.shared(np.arange(3.0), name="w")
    g = sn.function([], x.sum(), givens={x: w})
    assert float(g()) == 3.0


def test_graph_errors_name_the_variable():
    x, y = sn.vector("x"), sn.vector("y")
    with pytest.raises(sn.GraphError, match=r"depend on 'y'.*not among the inputs"):
        sn.function([x], x + y)
    with pytest.raises(sn.GraphError, match="computed"):
        sn.function([x + 1], x)
    with pytest.raises(sn.GraphError, match="listed twice"):
        sn.function([x, x], x)
    w = sn.shared(np.ones(3), name="w")
    with pytest.raises(sn.GraphError, match=r"input 1 'w' .* is a shared variable") as error:
        sn.function([x, w], x * w)
    assert "givens={w: that_input}" in str(error.value)
    assert "test_function.py" in str(error.value)  # the user's line
    with pytest.raises(sn.GraphError, match="input 0 .* is a constant"):
        sn.function([sn.constant(2.0)], x)
    y.name = 7  # (made with a str: Variable refuses another); the C runner's internal error
    with pytest.raises(
        sn.ArgumentError,
        match=r"input 1 '7' .*: name must be a string \(or None\), not 7 \(int\); the variable is "
        r"float64",
    ):
        sn.function([x, y], x + y)


def test_inputs_are_a_list_or_tuple():
    a, b = sn.scalar("a"), sn.scalar("b")
    assert float(sn.function((a, b), a - b)(0.0, 1.0)) == -1.0
    assert float(sn.function(a, a * 2)(3.0)) == 6.0
    # a set's iteration order would bind the values to other inputs than the user wrote
    with pytest.raises(sn.ArgumentError, match=r"list or tuple .* \(a set\): its order"):
        sn.function({a, b}, a - b)
    for inputs, shown in [(None, "None (NoneType)"), (3, "3 (int)"), ({"a": a}, "(a dict)")]:
        with pytest.raises(sn.ArgumentError, match=re.escape(shown)) as error:
            sn.function(inputs, a)
        assert "test_function.py" in str(error.value)  # the user's line
    with pytest.raises(sn.ArgumentError, match=r"\(generator\); write list"):
        sn.function((v for v in [a, b]), a - b)


def test_input_checks_name_the_input_and_the_shapes():
    x = sn.tensor("x", shape=("batch", 3), dtype="float32")
    y = sn.tensor("y", shape=("batch",), dtype="int64")
    f = sn.function([x, y], x.sum(axis=1) + y)
    assert f(np.ones((2, 3), "float32"), np.array([1, 2])).shape == (2,)
    assert f(np.ones((2, 3), "float16"), [1, 2]).dtype == np.float64  # f32 + i64, as NumPy
    with pytest.raises(sn.InputError, match=r"input 0 'x' expects float32, got a float64 array"):
        f(np.ones((2, 3)), np.array([1, 2]))
    with pytest.raises(sn.InputError, match=r"input 0 'x' expects shape \(batch, 3\).*3 dims"):
        f(np.ones((2, 3, 1), "float32"), np.array([1, 2]))
    with pytest.raises(sn.InputError, match=r"axis 1 has length 4, expected 3"):
        f(np.ones((2, 4), "float32"), np.array([1, 2]))
    with pytest.raises(
        sn.InputError, match=r"input 1 'y'.*'batch' \(axis 0\) is 5 here but 2 in input 0 'x'"
    ):
        f(np.ones((2, 3), "float32"), np.arange(5))
    with pytest.raises(sn.InputError, match=r"input 1 'y' expects int64; the value \[1.5\]"):
        f(np.ones((1, 3), "float32"), [1.5])


def test_python_floats_round_into_float32_inputs():
    x = sn.scalar("x", dtype="float32")
    assert sn.function([x], x * 1)(0.1) == np.float32(0.1)


def test_eval_and_sn_eval():
    x = sn.vector("x")
    assert np.array_equal((x * 3).eval({x: [1.0, 2.0]}), [3.0, 6.0])
    assert float(sn.eval(sn.constant(2.0) + 1)) == 3.0


def test_sn_eval_of_no_variable_and_eval_of_no_dict_are_argument_errors_naming_them():
    """sn.eval("x") and sn.eval(None) were AttributeErrors ("'str' object has no attribute
    'eval'"), x.eval(3) a TypeError and x.eval([1.0]) a GraphError about "input 0": each is
    an ArgumentError naming the argument and what it got, at the user's line."""
    x = sn.vector("x")
    for call, refused in [
        (lambda: sn.eval("x"), "sn.eval: var is the symbolic variable to compute, not 'x' (str)"),
        (lambda: sn.eval(None), "sn.eval: var is the symbolic variable to compute, not None"),
        (
            lambda: sn.eval([x], {x: np.ones(2)}),
            "sn.eval: var is the symbolic variable to compute, not [",
        ),
        (
            lambda: (x * 2).eval([1.0, 2.0]),
            "eval of an unnamed variable (float64(?,)): inputs is a dict {input variable or "
            "its name: value}, not [1.0, 2.0] (list)",
        ),
        (lambda: sn.eval(x, 3), "eval of 'x' (float64(?,)): inputs is a dict"),
    ]:
        with pytest.raises(sn.ArgumentError) as info:
            call()
        assert str(info.value).startswith(refused), str(info.value)
        assert info.value.location.filename == __file__
    assert "compile them together with sn.function" in _message(lambda: sn.eval((x, x)))
    np.testing.assert_array_equal(sn.eval(x * 2, {"x": [1.0]}), [2.0])


def _message(call) -> str:
    with pytest.raises(sn.ArgumentError) as info:
        call()
    return str(info.value)


def test_runtime_failures_name_the_node_and_line():
    x = sn.vector("x")
    y = sn.vector("y")
    f = sn.function([x, y], x + y)  # both dims unknown: checked only when it runs
    with pytest.raises(
        sn.SymnbError,
        match=r"add\('x'.*'y'.*\) failed.*\n  given float64\[2\], float64\[3\]\n  built at .*test_",
    ):
        f([1.0, 2.0], [1.0, 2.0, 3.0])


def test_unavailable_backend_is_a_clear_error():
    x = sn.vector("x")
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        sn.function([x], x, backend="gpu")


def test_eval_takes_variables_or_their_names():
    x, y = sn.vector("x"), sn.vector("y")
    z = x * 2 + y
    np.testing.assert_array_equal(z.eval({"x": np.ones(2), y: np.arange(2.0)}), [2.0, 3.0])
    with pytest.raises(
        sn.GraphError, match=r"eval: 'q' names no input of .*named inputs: \['x', 'y'\]"
    ):
        z.eval({"q": 1.0})
    with pytest.raises(sn.GraphError, match="eval: 'x' names 2 inputs"):
        (x + sn.vector("x")).eval({"x": np.ones(2)})


def test_a_keyword_naming_two_inputs_is_an_error_naming_their_places(backend):
    """As ``eval`` reports it: ``f(x=...)`` with two inputs named "x" bound the last silently
    (in the C entry point too); the unique names still bind."""
    a, b, c = sn.vector("x"), sn.vector("y"), sn.vector("x")
    f = sn.function([a, b, c], a + 2 * b + 3 * c, backend=backend)
    one = np.ones(1)
    np.testing.assert_array_equal(f(one, one, one), [6])
    for call in (lambda: f(one, y=one, x=one), lambda: f(x=one, y=one)):
        with pytest.raises(sn.InputError) as info:
            call()
        assert str(info.value) == (
            "the function: inputs 0 and 2 are both named 'x', so the keyword x=... is "
            "ambiguous; pass them by position"
        )
    g = sn.function([a, c, sn.vector("x")], a, backend=backend)
    with pytest.raises(sn.InputError, match="inputs 0, 1 and 2 are all named 'x'"):
        g(x=one)
    h = sn.function([a, b], a + b, backend=backend)
    np.testing.assert_array_equal(h(y=one, x=one * 2), [3])


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"backend": "bogus"}, "unknown backend 'bogus'; choose one of"),
        ({"backend": "py", "mode": "check"}, "unknown mode 'check'; choose one of"),
    ],
)
def test_bad_backend_or_mode_is_refused_before_the_rewrites(monkeypatch, kw, message):
    # they were refused only once the graph was optimised: minutes on a large graph
    fmod = sys.modules["symnb.compile.function"]  # (sn.compile.function is the function)

    def never(*args, **kwargs):
        raise AssertionError("the optimiser ran before the arguments were checked")

    monkeypatch.setattr(fmod, "rewrite", never)
    x = sn.vector("x")
    with pytest.raises(sn.ArgumentError, match=message):
        sn.function([x], sn.exp(x) * 2.0, **kw)
