"""Messages a course's students see (issue 34): each test reads the message itself."""

import textwrap
import warnings

import numpy as np

import symnb as sn
from symnb.cli import main

TIME_MAJOR = textwrap.dedent(
    """\
    import numpy as np
    import symnb as sn

    h = sn.tensor("h", shape=("T", "batch", 16))
    w = sn.shared(np.ones(16), name="w")
    scores = h @ w
    attention = sn.softmax(scores, axis=0)
    context = sn.sum(attention[:, :, None] * h, axis=0)
    """
)


def _warnings_of(build) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build()
    return [str(w.message) for w in caught if issubclass(w.category, sn.ShapeWarning)]


def test_time_major_attention_over_time_does_not_warn(tmp_path, capsys):
    """("T", "batch", ...): the explicit batch name beats the role heuristic that took T."""
    h = sn.tensor("h", shape=("T", "batch", 16))
    w = sn.shared(np.ones(16), name="w")
    assert _warnings_of(lambda: sn.softmax(h @ w, axis=0)) == []
    program = tmp_path / "attention.py"
    program.write_text(TIME_MAJOR)
    assert main(["check", "--strict", str(program)]) == 0
    assert "0 errors, 0 warnings" in capsys.readouterr().out


def test_softmax_over_the_batch_still_warns():
    h = sn.tensor("h", shape=("T", "batch", 16))
    w = sn.shared(np.ones(16), name="w")
    (message,) = _warnings_of(lambda: sn.softmax(h @ w, axis=1))
    assert "over axis 1" in message and "named 'batch'" in message
    x = sn.tensor("x", shape=("n", 10))  # no batch name: the role heuristic still speaks
    (message,) = _warnings_of(lambda: sn.softmax(x, axis=0))
    assert "which holds the examples ('n', axis 0 of the data input 'x'" in message


def _line_of(marker: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, start=1) if marker in line)


def test_an_input_made_again_under_its_name_is_a_different_variable():
    x = sn.tensor("x", shape=("n", 3))  # <- first x
    y = x * 2
    x = sn.tensor("x", shape=("n", 3))  # <- second x
    try:
        sn.function([x], y)
    except sn.GraphError as exc:
        message = str(exc)
    else:
        raise AssertionError("no GraphError")
    assert f"'x' (float64(n, 3)) (created at {__file__}, line {_line_of('<- first x')}" in message
    assert "the input given under that name is a different variable with the same name" in message
    assert f"created at {__file__}, line {_line_of('<- second x')}" in message


def _error_of(build) -> str:
    try:
        build()
    except (sn.ShapeError, sn.DTypeError) as exc:
        return str(exc)
    raise AssertionError("no error")


def test_a_size_built_with_slash_gets_a_floor_division_hint():
    x = sn.tensor("x", shape=("n", 4))
    rng = sn.RandomStream(0)
    hint = "hint: / divides into a float even for integers; use // for a size or an index"
    for build in (
        lambda: x.reshape((x.shape[0] / 2, 8)),
        lambda: x.reshape((8 / 2, -1)),
        lambda: sn.zeros((x.shape[0] / 2, 3)),
        lambda: sn.zeros((4 / 2, 3)),
        lambda: rng.normal(size=(x.shape[0] / 2,)),
        lambda: x[: x.shape[0] / 2],
    ):
        assert hint in _error_of(build)
    assert hint not in _error_of(lambda: x.reshape((x.shape[0] * 0.5, 8)))


def test_first_call_warns_once_where_unknown_dims_broadcast_into_a_table():
    y = sn.vector("y")
    p = sn.tensor("p", shape=(None, None))  # the build cannot tell that p is a column
    d = y - p  # <- outer
    f = sn.function([y, p], sn.mean(d**2))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f(np.ones(4), np.ones((4, 1)))
        f(np.ones(4), np.ones((4, 1)))
    (warning,) = [w for w in caught if issubclass(w.category, sn.BroadcastOuterWarning)]
    message = str(warning.message)
    assert message.startswith("with the shapes of this call: sub: 'y' (float64(4,)) and 'p' ")
    assert "(float64(4, 1)) broadcast against each other into (4, 4)" in message
    assert (warning.filename, warning.lineno) == (__file__, _line_of("<- outer"))
    with warnings.catch_warnings(record=True) as caught:  # shapes that fit: no warning
        warnings.simplefilter("always")
        sn.function([y, p], sn.mean(d**2))(np.ones(4), np.ones((1, 4)))
    assert not [w for w in caught if issubclass(w.category, sn.ShapeWarning)]


def test_first_call_gives_named_dims_the_calls_sizes_against_unknown_ones():
    """Labels ``("batch",)`` minus predictions ``sn.matrix`` that are (4, 1) at the call is
    the ``(n,) - (n, 1)`` bug: batch is 4 in this call, as p's unknown rows are, so it warns
    as a ``sn.vector`` y does; rows of another size (5) are a size of their own."""
    y = sn.tensor("y", shape=("batch",))
    p = sn.matrix("p")
    d = y - p  # <- named outer
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sn.function([y, p], sn.mean(d**2), backend="py")(np.ones(4), np.ones((4, 1)))
    (warning,) = [w for w in caught if issubclass(w.category, sn.BroadcastOuterWarning)]
    message = str(warning.message)
    assert message.startswith("with the shapes of this call: sub: 'y' (float64(4,)) and 'p' ")
    assert "(float64(4, 1)) broadcast against each other into (4, 4)" in message
    assert (warning.filename, warning.lineno) == (__file__, _line_of("<- named outer"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sn.function([y, p], sn.mean(d**2), backend="py")(np.ones(4), np.ones((5, 1)))
    assert not [w for w in caught if issubclass(w.category, sn.ShapeWarning)]


def _float64_warnings(build) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build()
    return [w for w in caught if issubclass(w.category, sn.Float64Warning)]


def test_a_float64_shared_among_float32_weights_warns_once_at_its_line():
    x = sn.tensor("x", shape=("batch", 4), dtype="float32")
    W = sn.shared(np.zeros((4, 3), "float32"), name="W")
    b = sn.shared(np.zeros(3))  # float64: the slip

    def layers():
        h = sn.tanh(x @ W + b)  # <- float64 creeps in
        sn.grad(sn.sum(h * 2 + b), W)

    (warning,) = _float64_warnings(layers)
    message = str(warning.message)
    assert message.startswith("add: 'b' (float64(3,)) is a float64 shared variable; read with")
    assert "(float32(batch, 3)) it makes the result float64" in message
    assert "sn.cast(b, 'float32')" in message
    assert (warning.filename, warning.lineno) == (__file__, _line_of("<- float64 creeps in"))


def test_a_float64_warning_raised_by_an_error_filter_names_its_line():
    """``-W error`` (or an "error" filter) raises the Float64Warning: its message ends with
    the user's line and it holds ``.location``, as a raised ShapeWarning does (it had
    neither: the line was given to the warnings machinery alone)."""
    x = sn.tensor("x", shape=(3,), dtype="float32")
    b = sn.shared(np.zeros(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", sn.Float64Warning)
        try:
            x + b  # <- mixed here
        except sn.Float64Warning as raised:
            error = raised
    line = _line_of("<- mixed here")
    assert str(error).startswith("add: 'b' (float64(3,)) is a float64 shared variable")
    assert str(error).endswith(f"\n  at {__file__}, line {line}: x + b  # <- mixed here")
    assert (error.location.filename, error.location.lineno) == (__file__, line)


def test_no_float64_warning_for_constants_float64_inputs_or_float32_shared():
    x = sn.tensor("x", shape=("batch", 3), dtype="float32")
    x64 = sn.tensor("x64", shape=("batch", 3), dtype="float64")
    b32 = sn.shared(np.zeros(3, "float32"))
    b64 = sn.shared(np.zeros(3))
    assert not _float64_warnings(lambda: x * 0.5 + np.float64(2.0) + b32)
    assert not _float64_warnings(lambda: x + sn.constant(np.zeros(3)))
    assert not _float64_warnings(lambda: x64 + b64)
