"""Python's protocols on symbolic variables, as NumPy's arrays answer them: ``round``,
``divmod``, ``x.mT``, ``x.transpose(0)``, ``flatten``/``ravel`` with an order; those that need
a value (``int``, ``float``, ``complex``, ``range``) and misuses (an axis out of range,
``np.where(cond)``) are symnb errors naming the variable, at the user's line."""

import math

import numpy as np
import pytest

import symnb as sn
from tests.helpers import check
from tests.helpers import run as run_on

A = np.linspace(-3.3, 4.6, 12).reshape(3, 4)


def _line_of(function) -> str:
    return f"test_python_protocols.py, line {function.__code__.co_firstlineno}"


# id -> (the call on a variable, its NumPy answer on an array)
PROTOCOLS = {
    "round": (lambda x: round(x), np.round),  # ndarray has no __round__; jax.Array rounds
    "round 0": (lambda x: round(x, 0), np.round),
    "divmod": (lambda x: divmod(x, 1.5)[0], lambda a: divmod(a, 1.5)[0]),
    "divmod mod": (lambda x: divmod(x, 1.5)[1], lambda a: divmod(a, 1.5)[1]),
    "rdivmod": (lambda x: divmod(7.0, x)[0], lambda a: divmod(7.0, a)[0]),
    "rdivmod mod": (lambda x: divmod(7.0, x)[1], lambda a: divmod(7.0, a)[1]),
    "mT": (lambda x: x.mT, lambda a: a.mT),
    "mT of 3-d": (lambda x: x.reshape(3, 2, 2).mT, lambda a: a.reshape(3, 2, 2).mT),
    "transpose of a vector by one int": (lambda x: x[0].transpose(0), lambda a: a[0].transpose(0)),
    "transpose ints": (lambda x: x.transpose(1, 0), lambda a: a.transpose(1, 0)),
    "transpose tuple": (lambda x: x.transpose((1, 0)), lambda a: a.transpose((1, 0))),
    "transpose None": (lambda x: x.transpose(None), lambda a: a.transpose(None)),
    "transpose () of a 0-d": (lambda x: x[0, 0].transpose(()), lambda a: a[0, 0].transpose(())),
    "sn.transpose int": (lambda x: sn.transpose(x[0], 0), lambda a: np.transpose(a[0], 0)),
    "flatten C": (lambda x: x.flatten("C"), lambda a: a.flatten("C")),
    "ravel": (lambda x: x.ravel(), lambda a: a.ravel()),
    "ravel K": (lambda x: x.ravel("K"), lambda a: a.ravel("K")),
    "swapaxes negative": (lambda x: x.swapaxes(-1, 0), lambda a: a.swapaxes(-1, 0)),
    "np.swapaxes": (lambda x: np.swapaxes(x, 0, 1), lambda a: np.swapaxes(a, 0, 1)),
}


@pytest.mark.parametrize("case", list(PROTOCOLS))
def test_protocols_answer_as_numpy(case, backend):
    symbolic, numeric = PROTOCOLS[case]
    check(run_on(symbolic, A, backend=backend), numeric(A))


def test_bool_to_the_power_2_is_numpys_square_with_the_operator_only(backend):
    """NumPy's ``b ** 2`` takes its fast path for the Python int 2, ``np.square``: int8 for a
    bool array, where ``np.power(b, 2)`` is int64. symnb's ``b ** 2`` was int64."""
    a = np.array([[True, False, True], [False, False, True]])
    b = sn.tensor("b", shape=a.shape, dtype="bool")
    outs = [b**2, pow(b, 2), sn.pow(b, 2), np.power(b, 2), b**2.0, b ** np.int64(2), 2**b]
    wants = [a**2, pow(a, 2), np.power(a, 2), np.power(a, 2), a**2.0, a ** np.int64(2), 2**a]
    assert [v.type.dtype for v in outs] == [w.dtype for w in wants]
    assert outs[0].type.dtype == "int8" and outs[2].type.dtype == "int64"
    for got, want in zip(sn.function([b], outs, backend=backend)(a), wants):
        check(got, want)


def test_theano_flatten_by_ndim_still_works():
    x = sn.tensor3("t", shape=(2, 3, 4))
    assert x.flatten(2).type.shape == (2, 12) and x.flatten().type.shape == (24,)


# id -> (the call, fragments of its message)
NEEDS_A_VALUE = {
    "int": (lambda x, n: int(n), ["int() needs a value", "'n' (int64())", "sn.function"]),
    "float": (lambda x, n: float(x), ["float() needs a value", "'x' (float64(3, 4))"]),
    "complex": (lambda x, n: complex(x), ["complex() needs a value", "'x'"]),
    "math.trunc": (lambda x, n: math.trunc(x[0, 0]), ["math.trunc() needs a value"]),
    "tolist": (lambda x, n: x.tolist(), ["tolist() needs a value, but 'x' (float64(3, 4))"]),
    "format spec": (
        lambda x, n: f"{x:.3f}",
        ["the format spec '.3f' (f\"{x:.3f}\") needs a value, but 'x' (float64(3, 4))"],
    ),
    "str.format": (lambda x, n: f"{n:d}", ["the format spec 'd'", "'n' (int64())"]),
}


def test_format_without_a_spec_is_str():
    """f"{x}" (a print) is str(x); only a format spec asks for a value."""
    x = sn.matrix("x", shape=(3, 4))
    assert f"{x}" == format(x, "") == str(x) == "x"


@pytest.mark.parametrize("case", list(NEEDS_A_VALUE))
def test_what_needs_a_value_is_a_clear_error_at_the_users_line(case):
    x = sn.matrix("x", shape=(3, 4))
    n = x.shape[0]
    n.name = "n"
    call, fragments = NEEDS_A_VALUE[case]
    with pytest.raises(sn.InputError) as info:
        call(x, n)
    assert isinstance(info.value, TypeError)  # what Python's own error is
    message = str(info.value)
    for fragment in fragments + [_line_of(call)]:
        assert fragment in message, message


# id -> (the call, its error class, fragments of its message): a symbolic size handed to
# NumPy or Python where they need an int. NumPy's np.zeros(n) replaced symnb's TypeError with
# "expected a sequence of integers or a single integer, got 'Variable:i64[]'", and np.ones(n)
# named NumPy's own line; np.arange(n) and if x: were plain TypeErrors
NEEDS_AN_INT = {
    "range": (lambda x: range(x.shape[0]), sn.SymbolicValueError, ["a Python int (range(n)"]),
    "list index": (lambda x: [1, 2, 3][x.shape[0]], sn.SymbolicValueError, ["a Python int"]),
    "np.zeros": (lambda x: np.zeros(x.shape[0]), sn.SymbolicValueError, ["sn.zeros(n)"]),
    "np.ones": (lambda x: np.ones(x.shape[0]), sn.SymbolicValueError, ["sn.ones"]),
    "np.empty": (lambda x: np.empty(x.shape[0]), sn.SymbolicValueError, ["sn.zeros(n)"]),
    "np.full": (lambda x: np.full(x.shape[0], 2.0), sn.SymbolicValueError, ["sn.full"]),
    "np.zeros tuple": (lambda x: np.zeros((x.shape[0], 2)), sn.SymbolicValueError, []),
    "np.linspace": (lambda x: np.linspace(0, 1, x.shape[0]), sn.SymbolicValueError, []),
    "Generator.normal": (
        lambda x: np.random.default_rng(0).normal(size=x.shape[0]),
        sn.SymbolicValueError,
        ["rng.normal(size=n)"],
    ),
    "np.arange": (
        lambda x: np.arange(x.shape[0]),
        sn.InputError,
        ["NumPy cannot make an array of it", "sn.arange(n) for np.arange(n)"],
    ),
    "if": (
        lambda x: 1 if x.sum() > 0 else 0,
        sn.InputError,
        ["need a truth value, but an unnamed variable (bool())", "sn.ifelse", "sn.where"],
    ),
    "len of an unknown dim": (
        lambda x: len(x),
        sn.InputError,
        ["len() of 'x' (float64(?, 4)) is not known", "use x.shape[0]"],
    ),
}


# a symbolic shape (an integer vector) handed to NumPy where it needs Python ints: NumPy put
# "expected a sequence of integers or a single integer, got 'Variable:i64[2]'" in place of
# symnb's TypeError (from the vector's iteration, then its __index__)
NEEDS_INTS = {
    "np.zeros": (lambda x: np.zeros(x.shape), "np.zeros(x.shape) -> sn.zeros(x.shape)"),
    "np.ones": (lambda x: np.ones(x.shape), "sn.zeros_like(x) (also sn.ones, sn.full)"),
    "reshape": (lambda x: np.arange(6.0).reshape(x.shape), "sn.reshape(arr, x.shape)"),
    "np.reshape": (lambda x: np.reshape(np.arange(6.0), x.shape), "sn.reshape(arr, x.shape)"),
    "Generator.normal": (
        lambda x: np.random.default_rng(0).normal(size=x.shape),
        "rng.normal(size=x.shape) with rng an sn.RandomStream",
    ),
}


@pytest.mark.parametrize("case", list(NEEDS_INTS))
def test_a_symbolic_shape_given_to_numpy_is_a_clear_error_at_the_users_line(case):
    x = sn.matrix("x", shape=(None, 3))
    call, fragment = NEEDS_INTS[case]
    with pytest.raises(sn.SymbolicValueError) as info:
        call(x)
    message = str(info.value)
    assert message.startswith(
        "Python ints from an integer vector (a shape: np.zeros(shape), arr.reshape(shape), "
        "size=shape) need values, but 'x.shape' (int64(2,)) is symbolic"
    ), message
    assert fragment in message and _line_of(call) in message, message
    assert message.count("\n  at ") == 1, message
    v = sn.vector("sizes", dtype="int32")
    with pytest.raises(sn.SymbolicValueError, match=r"np.zeros\(sizes\) -> sn.zeros\(sizes\) \("):
        np.zeros(v)


@pytest.mark.parametrize("case", list(NEEDS_AN_INT))
def test_a_symbolic_size_given_to_numpy_or_python_is_a_clear_error_at_the_users_line(case):
    """The error names the size (``x.shape[0]``), says what to write and points at the line
    that called NumPy; a size's error is a ValueError (its type fits, its value is not there
    yet), which NumPy lets through; the others are TypeErrors, as Python's own."""
    x = sn.matrix("x", shape=(None, 4))
    call, error, fragments = NEEDS_AN_INT[case]
    with pytest.raises(error) as info:
        call(x)
    message = str(info.value)
    if error is sn.SymbolicValueError:
        assert not isinstance(info.value, TypeError)
        fragments = fragments + ["'x.shape[0]' (int64()) is symbolic"]
    else:
        assert isinstance(info.value, TypeError)
    for fragment in fragments + [_line_of(call)]:
        assert fragment in message, message
    assert message.count("\n  at ") == 1, message


def test_len_of_a_fixed_first_dim_is_its_size():
    assert len(sn.matrix("x", shape=(3, None))) == 3


# id -> (the call, its error class, fragments of its message)
MISUSES = {
    "round 2": (
        lambda x: round(x, 2),
        NotImplementedError,
        ["round: only decimals=0 is implemented, not decimals=2 (rounding 'x'"],
    ),
    "mT of a vector": (
        lambda x: x[0].mT,
        sn.ShapeError,
        ["mT: an unnamed variable (float64(4,)) has 1 dim", "needs at least 2"],
    ),
    "swapaxes out of range": (
        lambda x: x.swapaxes(0, 5),
        sn.ShapeError,
        ["swapaxes: axis 5 is out of range for 'x' (float64(3, 4)), which has 2 dims"],
    ),
    "swapaxes negative out of range": (
        lambda x: x.swapaxes(-3, 0),
        sn.ShapeError,
        ["swapaxes: axis -3 is out of range for 'x'"],
    ),
    "transpose out of range": (
        lambda x: sn.transpose(x, (0, 5)),
        sn.ShapeError,
        ["transpose: axis 5 is out of range for 'x'"],
    ),
    "transpose one int of a matrix": (
        lambda x: x.transpose(0),
        sn.ShapeError,
        ["transpose: (0,) is not a permutation of the 2 axes of 'x'"],
    ),
    "transpose of an empty tuple": (  # NumPy: "axes don't match array"; x.T it was
        lambda x: x.transpose(()),
        sn.ShapeError,
        ["transpose: () is not a permutation of the 2 axes of 'x' (float64(3, 4))"],
    ),
    "flatten F": (
        lambda x: x.flatten("F"),
        sn.InputError,
        ["flatten(order='F') of 'x' (float64(3, 4)): symnb orders elements as C", "x.T.ravel()"],
    ),
    "ravel F": (lambda x: x.ravel(order="F"), sn.InputError, ["ravel(order='F')"]),
    "np.where one argument": (
        lambda x: np.where(x > 0),
        sn.InputError,
        ["where: one argument", "np.nonzero", "sn.where(cond, x, y)"],
    ),
    "sn.where one argument": (lambda x: sn.where(x > 0), sn.InputError, ["np.nonzero"]),
    "np.where two arguments": (
        lambda x: np.where(x > 0, x),
        sn.InputError,
        ["'x' (float64(3, 4))): either both or neither of x and y should be given"],
    ),
    "sn.where two arguments": (
        lambda x: sn.where(x > 0, x),
        sn.InputError,
        ["either both or neither of x and y", "sn.where(cond, x, 0)"],
    ),
}


@pytest.mark.parametrize("case", list(MISUSES))
def test_misuses_are_clear_errors_at_the_users_line(case):
    x = sn.matrix("x", shape=(3, 4))
    call, error, fragments = MISUSES[case]
    with pytest.raises(error) as info:
        call(x)
    message = str(info.value)
    for fragment in fragments + [_line_of(call)]:
        assert fragment in message, message
    assert message.count("\n  at ") == 1, message


def test_a_constants_value_converts_as_numpys():
    """A constant's value is known when the graph is built: ``int``, ``float``, ``complex``
    and ``operator.index`` give it (NumPy's answers, its errors for arrays of more than one
    element), where a symbolic variable's raise."""
    import operator

    assert int(sn.constant(3)) == 3 and type(int(sn.constant(3))) is int
    assert float(sn.constant(2.5)) == 2.5 and complex(sn.constant(1 + 2j)) == 1 + 2j
    assert operator.index(sn.constant(np.int8(-4))) == -4
    assert np.zeros(sn.constant(2)).shape == (2,) and list(range(sn.constant(3))) == [0, 1, 2]
    with pytest.raises(TypeError, match="integer"):
        operator.index(sn.constant(2.0))
    with pytest.raises(TypeError):
        int(sn.constant([1, 2]))


@pytest.mark.parametrize(
    "call, fragments",
    [
        ("logsumexp", ["NumPy cannot make an array of it", "use sn.logsumexp"]),
        ("softmax", ["NumPy cannot make an array of it", "use sn.softmax"]),
    ],
)
def test_a_scipy_function_running_numpy_on_a_variable_names_itself_at_the_users_line(
    call, fragments
):
    """SciPy's Python code asks NumPy about the variable: the error was located in SciPy's
    own file and named only the NumPy function it asked for."""
    special = pytest.importorskip("scipy.special")
    x = sn.vector("x")
    with pytest.raises(sn.InputError) as info:
        getattr(special, call)(x)
    message = str(info.value)
    expected = f"scipy.special.{call} runs NumPy on the values it is given"
    for fragment in [*fragments, expected, "test_python_protocols.py, line"]:
        assert fragment in message, message
    assert "site-packages" not in message, message


def test_one_variable_where_numpy_takes_a_sequence_is_a_clear_error():
    """np.concatenate(x) asks for x's rows: NumPy's own "dispatcher for __array_function__
    did not return an iterable" named neither x nor what to write."""
    x = sn.matrix("x", shape=(3, 4))
    y = sn.tensor("y", shape=(2, 3, 4))
    with pytest.raises(sn.InputError) as info:
        np.concatenate(x)  # line: concatenate one
    message = str(info.value)
    assert "cannot iterate over symbolic 'x' (float64(3, 4))" in message
    assert "np.concatenate(x) is x.reshape(-1)" in message
    assert "test_python_protocols.py, line " in message and "np.concatenate(x)  #" in message
    with pytest.raises(sn.InputError, match=r"np.stack\(y\) is y itself"):
        np.stack(y)
    with pytest.raises(sn.InputError, match=r"concatenate\(y\) is y.reshape\(\(-1,\) \+ y.shape"):
        [row for row in y]


def test_messages_name_an_unnamed_variable_after_their_word_in_a_sentence():
    """describe() of an unnamed variable is "an unnamed variable (...)", so a message that put
    a word before it read "cannot iterate over symbolic an unnamed variable" or "shared an
    unnamed variable cannot take ...": the word and the name read as one phrase, named or not."""
    x = sn.vector("x")
    messages = []
    for v in (x, x * 2, sn.matrix("m") + 1):
        with pytest.raises(sn.InputError) as info:
            list(v)
        messages.append(str(info.value).splitlines()[0])
    assert messages[0].startswith("cannot iterate over symbolic 'x' (float64(?,)): its elements")
    assert messages[1].startswith(
        "cannot iterate over an unnamed symbolic variable (float64(?,)): its elements exist"
    ), messages[1]
    assert messages[2].startswith(
        "cannot iterate over an unnamed symbolic variable (float64(?, ?)): its rows exist"
    ), messages[2]
    with pytest.raises(sn.DTypeError) as info:  # (no assignment: no name to take from it)
        sn.shared(np.zeros(2)).set_value(np.zeros(2, dtype=complex))
    assert str(info.value).startswith(
        "an unnamed shared variable (float64(2,)) cannot take a complex128 value"
    ), info.value
    with pytest.raises(sn.ShapeError) as info:
        sn.conv2d(sn.tensor("a", shape=(1, 2, 5, 5)) * 1, sn.tensor("w", shape=(2, 3, 2, 2)) * 1)
    assert str(info.value).startswith(
        "conv2d: an unnamed input variable (float64(1, 2, 5, 5)) has 2 channels (axis 1) but "
        "the unnamed filters (float64(2, 3, 2, 2)) take 3"
    ), info.value
    assert x.describe_as("input") == "input 'x' (float64(?,))"
    assert (x + 1).describe_as("output") == "an unnamed output variable (float64(?,))"


def test_numpy_methods_take_numpys_arguments():
    """x.astype(dtype, copy=False), x.cumsum(1, np.float32), x.sort(0, 'stable'),
    x.argsort(kind='stable'), x.reshape(shape, order='C'): NumPy's method signatures (they
    were Python's raw "unexpected keyword argument" naming TensorMethods)."""
    values = np.random.default_rng(0).standard_normal((3, 4))
    x = sn.matrix("x", shape=(3, 4))
    calls = {
        "astype": (lambda v: v.astype(np.float32, copy=False), values.astype(np.float32)),
        "cumsum": (lambda v: v.cumsum(1, np.float32), values.cumsum(1, np.float32)),
        "cumprod": (lambda v: v.cumprod(0, np.float32), values.cumprod(0, np.float32)),
        "sort": (lambda v: v.sort(0, "stable"), np.sort(values, 0)),
        "argsort": (lambda v: v.argsort(kind="stable"), values.argsort(kind="stable")),
        "reshape": (lambda v: v.reshape((4, 3), order="C"), values.reshape((4, 3))),
        "clip": (lambda v: v.clip(-0.5, 0.5), values.clip(-0.5, 0.5)),
        "var correction": (lambda v: v.var(correction=1), np.var(values, correction=1)),
        "std correction": (lambda v: v.std(0, correction=1), np.std(values, 0, correction=1)),
        "sum where=True": (lambda v: v.sum(1, where=True), values.sum(1, where=True)),
        "max positional": (lambda v: v.max(1, None, True), values.max(1, None, True)),
        "all where=True": (lambda v: (v > 0).all(0, where=True), (values > 0).all(0)),
    }
    for label, (call, want) in calls.items():
        got = sn.function([x], call(x), backend="py")(values)
        assert got.dtype == want.dtype, label
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=label)
    assert sn.constant(np.array([1.5, 2.0])).item(1) == 2.0


NUMPY_METHOD_MISUSES = {
    "reshape F": (lambda x: x.reshape(4, 3, order="F"), sn.InputError, "symnb orders elements"),
    "astype safe": (
        lambda x: x.astype("int32", casting="safe"),
        sn.DTypeError,
        "cannot cast from float64 to int32 according to the rule 'safe'",
    ),
    "cumsum out": (lambda x: x.cumsum(out=np.zeros(12)), sn.InputError, "out=..."),
    "sort order": (lambda x: x.sort(order="a"), sn.InputError, "has no order= (order='a')"),
    "item": (lambda x: x.item(), sn.InputError, "item() needs a value, but 'x'"),
    "max initial": (lambda x: x.max(initial=0.0), sn.InputError, "has no initial= (initial=0.0)"),
    "min initial": (lambda x: x.min(1, initial=0.0), sn.InputError, "np.min on symbolic"),
    "prod initial": (lambda x: x.prod(initial=2.0), sn.InputError, "sn.prod(x, axis=None"),
    "sum where": (lambda x: x.sum(where=x > 0), sn.InputError, "which has no where="),
    "mean where": (lambda x: x.mean(where=x > 0), sn.InputError, "builds sn.mean("),
    "var where": (lambda x: x.var(where=x > 0), sn.InputError, "np.var on symbolic"),
    "std mean": (lambda x: x.std(mean=x), sn.InputError, "which has no mean="),
    "var ddof and correction": (
        lambda x: x.var(ddof=1, correction=0),
        sn.InputError,
        "ddof and correction can't be provided simultaneously",
    ),
    "all where": (lambda x: x.all(where=x > 0), sn.InputError, "np.all on symbolic"),
    "any where": (lambda x: x.any(where=x > 0), sn.InputError, "np.any on symbolic"),
    "nonzero": (lambda x: x.nonzero(), AttributeError, "use sn.where(mask, x, 0)"),
    "copy": (lambda x: x.copy(), AttributeError, "use x itself"),
    "diagonal": (lambda x: x.diagonal(), AttributeError, "use sn.diag(x)"),
}


@pytest.mark.parametrize("case", list(NUMPY_METHOD_MISUSES))
def test_numpy_methods_symnb_cannot_follow_say_so_at_the_users_line(case):
    x = sn.matrix("x", shape=(3, 4))
    call, error, fragment = NUMPY_METHOD_MISUSES[case]
    with pytest.raises(error) as info:
        call(x)
    message = str(info.value)
    assert fragment in message and _line_of(call) in message, message
    assert not hasattr(x, "nonzero")  # only the Theano layer defines it
