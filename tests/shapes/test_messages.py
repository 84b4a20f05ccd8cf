"""Shape errors read by content (op, both shapes with dim names, the clash, the user's line, a
hint), warnings by category (each can be turned off), sn.infer_shape and call-time checks."""

import importlib
import os
import re
import subprocess
import sys
import textwrap
import warnings
import zipfile

import numpy as np
import pytest

import symnb as sn


def _line_of(marker: str) -> int:
    """The line of this file that holds ``marker`` (in a comment)."""
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, start=1) if marker in line)


def _raises(build, *fragments):
    with pytest.raises(sn.ShapeError) as info:
        build()
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in:\n{message}"
    assert info.value.location.filename == __file__
    return message


def test_matmul_names_both_shapes_the_dims_the_line_and_the_fix():
    x = sn.tensor("x", shape=("batch", 784))
    W = sn.tensor("W", shape=(10, 784))
    message = _raises(
        lambda: x @ W,  # <- matmul line
        "matmul",
        "'x' (float64(batch, 784))",
        "'W' (float64(10, 784))",
        "784 (last axis of the left) != 10",
        "hint: did you mean W.T?",
        f"test_messages.py, line {_line_of('<- matmul line')}",
    )
    assert "x @ W" in message  # the user's code is quoted


def test_broadcast_names_the_axis_and_the_different_names():
    h = sn.tensor("h", shape=("batch", 64))
    pos = sn.tensor("pos", shape=("seq", 64))
    _raises(
        lambda: h + pos,  # <- add line
        "add: cannot broadcast 'h' (float64(batch, 64)) and 'pos' (float64(seq, 64))",
        "axis -2 is batch in one and seq in the other",
        "'batch' and 'seq' are different named dims",
        f"line {_line_of('<- add line')}",
    )


CLASHES = [
    ((2, 3, 4), (5, 4)),
    ((5, 4), (2, 3, 4)),
    ((7, 1, 3), (6, 2, 3)),
    ((4,), (2, 3, 5)),
    ((2, 3, 5, 1), (9, 5, 1)),
    (("n", 3, 1), ("n", 2, 1)),
]


@pytest.mark.parametrize("left,right", CLASHES, ids=str)
def test_the_axis_a_broadcast_error_names_indexes_both_operands(left, right):
    """NumPy counts broadcast axes from the end: the message's axis, used as an index into
    either operand, must find the two sizes it says clash, whatever the operands' ranks."""
    a, b = sn.tensor("a", shape=left), sn.tensor("b", shape=right)
    message = _raises(lambda: a * b, "cannot broadcast")
    axis = int(re.search(r"axis (-?\d+) is", message)[1])
    assert axis < 0, message
    assert f"axis {axis} is {left[axis]} in one and {right[axis]} in the other" in message


BATCH_CLASHES = [
    (("b", "n", "k"), ("c", "k", "m")),
    ((2, 5, "n", "k"), (3, 1, "k", "m")),
    ((7, 4, 3, "n", "k"), (6, 3, "k", "m")),
]


@pytest.mark.parametrize("left,right", BATCH_CLASHES, ids=str)
@pytest.mark.parametrize("op", ["matmul", "solve"])
def test_a_batch_axes_error_shows_the_whole_operands_and_indexes_both(op, left, right):
    """matmul and solve broadcast all but the last two axes: the message shows each operand
    with its whole shape (it showed the batch axes as the shape: 'p' (float64(b,))), and its
    axis indexes both operands at the two sizes it says clash."""
    if op == "solve":
        left = left[:-1] + (left[-2],)  # a stack of square matrices
        right = right[:-2] + (left[-1], right[-1])
    p, q = sn.tensor("p", shape=left), sn.tensor("q", shape=right)
    build = (lambda: p @ q) if op == "matmul" else (lambda: sn.solve(p, q))
    message = _raises(build, f"{op}: cannot broadcast the batch axes (all but the last 2) of ")
    shown = re.findall(r"'([pq])' \(float64(\([^)]*\))\)", message)
    assert shown == [("p", _shape_text(left)), ("q", _shape_text(right))], message
    axis = int(re.search(r"axis (-?\d+) is", message)[1])
    assert f"axis {axis} is {left[axis]} in one and {right[axis]} in the other" in message


def _shape_text(shape) -> str:
    inner = ", ".join(str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def test_broadcast_hints_a_missing_axis_and_a_transpose():
    x = sn.tensor("x", shape=(5, 3))
    _raises(lambda: x + sn.tensor("v", shape=(5,)), "expand_dims(v, -1)")
    _raises(lambda: x - sn.tensor("t", shape=(3, 5)), "did you mean t.T?")


def test_hints_name_an_unnamed_variable_by_its_assigned_name_as_the_message_does():
    """``W = sn.shared(...)`` is 'W' in the message and in its hint: the hints read only the
    explicit name ("did you mean the right operand.T?", "expand_dims(the operand, -1)").
    (The expected words are on lines of their own: the message quotes the failing line.)"""
    x = sn.tensor("x", shape=("batch", 784))
    W = sn.shared(np.zeros((10, 784)))
    W2 = sn.shared(np.zeros((3, 4)))
    b = sn.shared(np.zeros(3))
    u = sn.shared(np.zeros((4, 3)))
    matmul = _raises(lambda: x @ W)
    assert "hint: did you mean W.T?" in matmul and "operand" not in matmul
    missing_axis = _raises(lambda: W2 + b)
    assert "hint: to line b up with axis 0 of W2, add trailing axes: expand_dims(b, -1)" in (
        missing_axis
    )
    transposed = _raises(lambda: W2 - u)
    assert "hint: did you mean u.T?" in transposed
    m = sn.matrix()
    with pytest.raises(sn.InputError) as raised:
        len(m)
    assert "len() of 'm' (float64(?, ?)) is not known before it runs" in str(raised.value)
    assert "use m.shape[0], a symbolic size" in str(raised.value)


def test_concatenate_names_the_clashing_axis():
    a = sn.tensor("a", shape=("n", 3))
    b = sn.tensor("b", shape=("m", 4))
    _raises(
        lambda: sn.concatenate([a, b], axis=0),
        "concatenate: axis 1 differs: 3 in array 0 'a' (float64(n, 3)), 4 in array 1 'b'",
    )


def test_reshape_gives_both_element_counts_symbolically():
    x = sn.tensor("x", shape=("batch", 64, 7, 7))
    _raises(
        lambda: x.reshape(("batch", 64 * 4 * 4)),
        "cannot reshape (batch, 64, 7, 7) (batch*3136 elements) into (batch, 1024) "
        "(batch*1024 elements)",
    )


def test_loss_class_dims():
    p = sn.softmax(sn.tensor("logits", shape=("batch", 5)))
    t = sn.tensor("t", shape=("batch", 10))
    _raises(lambda: sn.categorical_crossentropy(p, t), "(float64(batch, 10))", "(batch, 5)")


def test_axis_out_of_range_and_bad_permutation_carry_the_line():
    x = sn.tensor("x", shape=("batch", 10))
    _raises(
        lambda: x.sum(axis=2),  # <- sum line
        "sum: axis 2 is out of range for 'x' (float64(batch, 10))",
        f"line {_line_of('<- sum line')}",
    )
    _raises(
        lambda: x.transpose(1, 1),
        "transpose: (1, 1) is not a permutation of the 2 axes of 'x' (float64(batch, 10))",
        "each axis must appear exactly once",
    )


def test_a_shape_error_is_raised_once_with_one_location():
    x = sn.tensor("x", shape=(2, 3))
    with pytest.raises(sn.ShapeError) as info:
        x @ x
    assert str(info.value).count("\n  at ") == 1


# -- warnings ---------------------------------------------------------------------------------
def _warns(category, build):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build()
    hits = [w for w in caught if issubclass(w.category, sn.ShapeWarning)]
    assert [w.category for w in hits] == [category], [str(w.message) for w in hits]
    assert hits[0].filename == __file__
    return hits[0]


def test_batch_axes_warnings_show_the_whole_operands():
    """The warnings matmul's batch axes give show each operand's whole shape (they showed
    its batch axes as the shape, 'p' (float64(b,)))."""
    p = sn.tensor("p", shape=("b", "n", "k"))
    q = sn.tensor("q", shape=("b", 1, "k", "m"))
    outer = str(_warns(sn.BroadcastOuterWarning, lambda: p @ q).message)
    assert "the batch axes (all but the last 2) of 'p' (float64(b, n, k)) and " in outer
    assert "'q' (float64(b, 1, k, m)) broadcast against each other into (b, b)" in outer
    assert "give them the same batch axes" in outer
    r = sn.tensor("r", shape=(3, "k", "m"))
    pinned = str(_warns(sn.PinnedDimWarning, lambda: p @ r).message)
    assert "named dim 'b' (axis 0 of 'p' (float64(b, n, k))) is forced to equal 3" in pinned


def test_outer_broadcast_warning_points_at_the_users_line():
    pred = sn.tensor("pred", shape=("n", 1))
    y = sn.tensor("y", shape=("n",))
    w = _warns(sn.BroadcastOuterWarning, lambda: pred - y)  # <- outer line
    assert w.lineno == _line_of("<- outer line")
    assert "into (n, n), larger than either" in str(w.message)
    assert "'y' (float64(n,))" in str(w.message) and "'pred' (float64(n, 1))" in str(w.message)


@pytest.mark.parametrize(
    "category, build",
    [
        (
            sn.LossTrailingOneWarning,
            lambda: sn.binary_crossentropy(sn.tensor("p", shape=("n", 1)), sn.vector("t")),
        ),
        (sn.SuspiciousAxisWarning, lambda: sn.softmax(sn.tensor("z", shape=("batch", 3)), 0)),
        (sn.SuspiciousAxisWarning, lambda: sn.argmax(sn.tensor("z", shape=(5, 1)), axis=1)),
        (sn.ReshapeSplitsDimWarning, lambda: sn.tensor("h", shape=("b", 64)).reshape(-1, 24)),
        (sn.ReshapeMovesDimWarning, lambda: sn.tensor("h", shape=("b", 3)).reshape((3, "b"))),
        (
            sn.PinnedDimWarning,
            lambda: sn.tensor("x", shape=("b", "f")) @ sn.matrix("W", shape=(9, 2)),
        ),
    ],
)
def test_each_pattern_has_its_category_and_can_be_turned_off(category, build):
    assert issubclass(category, sn.ShapeWarning) and category.__doc__
    _warns(category, build)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", category)
        build()  # off by category: no warning, no error


def test_a_split_of_a_sum_of_names_says_the_share_with_its_parentheses():
    """The -1's share of ``(m+n,)`` split into pairs is ``(m+n)/2``: ``m+n/2`` would read as
    m plus half of n."""
    n, m = sn.tensor("nv", shape=("n",)), sn.tensor("mv", shape=("m",))
    w = _warns(sn.ReshapeSplitsDimWarning, lambda: sn.concatenate([n, m]).reshape((-1, 2)))
    assert "the -1 in (-1, 2) takes (m+n)/2 elements of " in str(w.message)
    w = _warns(sn.ReshapeSplitsDimWarning, lambda: sn.tensor("h", shape=("b", 64)).reshape(-1, 24))
    assert "takes b*64/24 elements of 'h' (float64(b, 64))" in str(w.message)


def test_shape_warnings_are_errors_under_this_test_suite():
    with pytest.raises(sn.BroadcastOuterWarning):
        sn.vector("y") - sn.tensor("p", shape=(None, 1))


def test_a_shape_warning_raised_by_an_error_filter_names_the_users_line():
    """docs/shapes.md's ``simplefilter("error", sn.ShapeWarning)`` raises the warning: its
    message ends with the user's line, as a ShapeError's does (the line was given to the
    warnings machinery alone, which prints it for a shown warning and drops it for a raised
    one); shown, the message is as it was and the line is the warning's own."""
    p = sn.tensor("p", shape=(None, 1))
    with pytest.raises(sn.BroadcastOuterWarning) as info:
        sn.vector("y") - p  # <- raised here
    line = _line_of("<- raised here")
    message = str(info.value)
    assert message.count("\n  at ") == 1 and message.startswith("sub: 'y' (float64(?,)) and ")
    assert message.endswith(f'\n  at {__file__}, line {line}: sn.vector("y") - p  # <- raised here')
    assert (info.value.location.filename, info.value.location.lineno) == (__file__, line)
    shown = _warns(sn.BroadcastOuterWarning, lambda: sn.vector("y") - p)
    assert "\n  at " not in str(shown.message)


def test_a_first_call_warning_raised_by_an_error_filter_names_the_line_that_built_it():
    """The first call's shape warning (unknown dims at build), raised by this suite's
    "error" filter, ends with the line that built the node, as a shown one points there,
    and holds it as ``.location`` (it had the call's line in its text only, no location)."""
    y, p = sn.vector("y"), sn.tensor("p", shape=(None, None))
    d = y - p  # <- built here
    f = sn.function([y, p], d, backend="py")
    with pytest.raises(sn.BroadcastOuterWarning) as info:
        f(np.ones(4), np.ones((4, 1)))  # <- called here
    line = _line_of("<- built here")
    message = str(info.value)
    assert message.startswith("with the shapes of this call: sub: 'y' (float64(4,)) and 'p' ")
    assert f"called at {__file__}, line {_line_of('<- called here')}: f(np.ones(4)" in message
    assert message.endswith(f"\n  at {__file__}, line {line}: d = y - p  # <- built here")
    assert (info.value.location.filename, info.value.location.lineno) == (__file__, line)


LAYERS = """\
import symnb as sn


def outer(y, p):
    return y - p


def mix(x, b):
    return x + b


def table():
    y, p = sn.vector("y"), sn.tensor("p", shape=(None, None))
    return sn.function([y, p], y - p, backend="py")
"""


def test_filters_naming_a_module_select_the_warnings_given_at_its_lines(
    tmp_path, monkeypatch, request
):
    """A warning at a user's line is that code's module's, as ``warnings.warn(...,
    stacklevel=k)`` pointed there is: ``filterwarnings(..., module="course_layers")`` (and
    ``-W ignore::UserWarning:course_layers``, pytest's filterwarnings) never matched symnb's
    warnings, whose module was derived from the file's path. The same for a shape warning,
    a float64 one and a first call's, given where the graph was built."""
    (tmp_path / "course_layers.py").write_text(LAYERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    layers = importlib.import_module("course_layers")
    request.addfinalizer(lambda: sys.modules.pop("course_layers", None))
    x, col = sn.tensor("x", shape=(3,), dtype="float32"), sn.tensor("p", shape=(None, 1))
    builds = {
        sn.BroadcastOuterWarning: lambda: layers.outer(sn.vector("y"), col),
        sn.Float64Warning: lambda: layers.mix(x, sn.shared(np.zeros(3))),
        sn.ShapeWarning: lambda: layers.table()(np.ones(4), np.ones((4, 1))),
    }
    lines = {sn.BroadcastOuterWarning: 5, sn.Float64Warning: 9, sn.ShapeWarning: 14}
    for category, build in builds.items():
        for module, shown in (("course_layers", False), ("course", True), (__name__, True)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                warnings.filterwarnings("ignore", category=category, module=module + r"\Z")
                build()
            got = [(w.filename, w.lineno) for w in caught if issubclass(w.category, category)]
            assert got == ([(layers.__file__, lines[category])] if shown else []), module
    with warnings.catch_warnings():
        warnings.filterwarnings("error", module="course_layers")
        with pytest.raises(sn.Float64Warning) as info:
            builds[sn.Float64Warning]()
    assert info.value.location.lineno == 9


FLOAT64_AT_LINE_3 = """\
import numpy as np, symnb as sn
y = sn.vector("y", dtype="float32")
z = y + sn.shared(np.zeros(4, "float64"), name="w")
print("built")
"""


def test_a_warning_from_python_c_or_stdin_is_shown_and_the_program_goes_on(tmp_path):
    """``python -c`` and ``python -`` (how worker scripts are started): ``__main__``'s loader
    is BuiltinImporter, whose ``get_source('__main__')`` raises; its globals were handed to
    ``warn_explicit``, so every symnb warning was an ImportError ("'__main__' is not a
    built-in module"), and the first compile under an unusable compile directory died
    instead of falling back with its warning."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(sn.__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    for argv, stdin in (
        ([sys.executable, "-c", FLOAT64_AT_LINE_3], None),
        ([sys.executable, "-"], FLOAT64_AT_LINE_3),
    ):
        done = subprocess.run(
            argv, input=stdin, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0 and done.stdout == "built\n", done.stderr
        where = "<string>" if argv[1] == "-c" else "<stdin>"
        assert f"{where}:3: Float64Warning: add: 'w' (float64(4,)) is a float64" in done.stderr
        assert "ImportError" not in done.stderr


class _BrokenLoader:
    """A module's loader whose ``get_source`` raises what it likes."""

    def __init__(self, error):
        self.error = error

    def get_source(self, name):
        raise self.error


class _ShortLoader:
    """A loader whose source has fewer lines than the line that warns."""

    @staticmethod
    def get_source(name):
        return "# one line"


@pytest.mark.parametrize(
    "extra",
    [
        {"__loader__": importlib.machinery.BuiltinImporter},  # python -c, python -
        {"__loader__": _BrokenLoader(RuntimeError("no source here"))},
        {"__loader__": _BrokenLoader(KeyError("x"))},
        {"__loader__": _ShortLoader()},
        {"__loader__": object(), "__name__": None},
        {"__warningregistry__": []},  # (not the dict warnings keeps there)
    ],
    ids=["builtin", "runtime-error", "key-error", "short-source", "no-get-source", "registry"],
)
def test_a_warning_in_code_of_any_module_globals_is_only_what_the_filters_make_it(extra):
    """Code exec'd with globals whose loader cannot give its source (frozen, zipimported or
    made-up modules, IPython cells, ``python -c``): the warning is shown, or raised by an
    "error" filter as the located warning, never the loader's error."""
    namespace = {"__name__": "made_up", "np": np, "sn": sn, **extra}
    code = compile(FLOAT64_AT_LINE_3.replace('print("built")', ""), "made_up.py", "exec")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(code, dict(namespace))
    assert [(w.category, w.filename, w.lineno) for w in caught] == [
        (sn.Float64Warning, "made_up.py", 3)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error", sn.Float64Warning)
        with pytest.raises(sn.Float64Warning) as info:
            exec(code, dict(namespace))
    assert (info.value.location.filename, info.value.location.lineno) == ("made_up.py", 3)
    assert str(info.value).startswith("add: 'w' (float64(4,)) is a float64 shared variable")


def test_a_warning_in_a_zipimported_module_shows_its_line(tmp_path, monkeypatch, request):
    """A module imported from a zip file: its loader gives the source, so the located
    warning an "error" filter raises ends with the line's code (as from a file)."""
    archive = tmp_path / "lessons.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("zipped_layers.py", LAYERS)
    monkeypatch.syspath_prepend(str(archive))
    layers = importlib.import_module("zipped_layers")
    request.addfinalizer(lambda: sys.modules.pop("zipped_layers", None))
    x = sn.tensor("x", shape=(3,), dtype="float32")
    with warnings.catch_warnings():
        warnings.simplefilter("error", sn.Float64Warning)
        with pytest.raises(sn.Float64Warning) as info:
            layers.mix(x, sn.shared(np.zeros(3)))
    assert str(info.value).endswith(f"\n  at {layers.__file__}, line 9: return x + b")


def test_a_relative_sys_path_entry_to_symnb_still_gives_the_users_line(tmp_path):
    """A course's notebooks/ folder reaching a checkout with ``sys.path.insert(0, "..")``:
    Python names symnb's code objects ``/cwd/../symnb/core/op.py``, which the normalised
    package path did not prefix, so every error and warning pointed inside symnb (the
    error at symnb/errors.py, the warning at symnb/core/shapes/warnings.py)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(sn.__file__)))
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    script = notebooks / "lesson.py"
    script.write_text(
        textwrap.dedent(
            f"""\
            import sys, warnings
            sys.path.insert(0, {os.path.relpath(root, notebooks)!r})
            import symnb as sn
            x = sn.tensor("x", shape=("batch", 784))
            W = sn.tensor("W", shape=(10, 784))
            try:
                h = x @ W
            except sn.ShapeError as e:
                print(str(e).splitlines()[-1])
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                d = sn.vector("y") - sn.tensor("p", shape=(None, 1))
            print(caught[0].filename, caught[0].lineno)
            print(sn.__file__)
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "lesson.py"], cwd=notebooks, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    error, warning, imported = done.stdout.splitlines()
    assert os.sep + ".." + os.sep in imported  # symnb came through the relative entry
    assert error == f"  at {script}, line 7: h = x @ W"
    assert warning == f"{script} 12"


def test_ordinary_idioms_do_not_warn():
    x = sn.tensor("x", shape=("batch", 10))
    b = sn.tensor("b", shape=(10,))
    a, c = sn.tensor("a", shape=("n",)), sn.tensor("c", shape=("m",))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x + b
        x - x.max(axis=1, keepdims=True)
        x / x.sum(axis=-1, keepdims=True)
        a[:, None] * a[None, :]
        a[:, None] * c
        x * 2.0 + 1
        x.reshape(-1, 5, 2)
        sn.softmax(x, axis=-1)
        sn.argmax(x, axis=1)


def test_a_name_against_a_fixed_size_is_no_outer_product_of_examples():
    """A one-hot ``y[:, None] == arange(10)`` and a time embedding ``t[:, None] * freqs``
    broadcast a named dim against a fixed one: silent, like two different names; the same
    name, an unknown dim or two equal fixed sizes still warn, at build and at the first call."""
    y = sn.tensor("y", shape=("batch",), dtype="int64")
    t, freqs = sn.tensor("t", shape=("T",)), sn.tensor("freqs", shape=(64,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        onehot = y[:, None] == sn.arange(10)
        onehot_np = y[:, None] == np.arange(10)
        embedding = t[:, None] * freqs
        f = sn.function([y], [onehot, onehot_np], backend="py")
        got, got_np = f(np.array([3, 0, 9, 3, 1, 2, 4, 5, 6, 7]))  # batch 10: still silent
    want = np.array([3, 0, 9, 3, 1, 2, 4, 5, 6, 7])[:, None] == np.arange(10)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_np, want)
    assert sn.infer_shape(embedding) == ("T", 64)
    _warns(sn.BroadcastOuterWarning, lambda: y[:, None] == y)
    _warns(sn.BroadcastOuterWarning, lambda: sn.vector("v")[:, None] * freqs)
    _warns(sn.BroadcastOuterWarning, lambda: sn.tensor("s", shape=(64, 1)) * freqs)


# -- infer_shape, text form, call time ---------------------------------------------------------
def test_infer_shape_and_the_text_form_show_symbolic_dims():
    a = sn.tensor("a", shape=("n", 3))
    b = sn.tensor("b", shape=("m", 3))
    both = sn.concatenate([a, b])
    flat = sn.tensor("img", shape=("batch", 28, 28)).reshape(-1, 784)
    assert sn.infer_shape(flat) == ("batch", 784)
    assert sn.infer_shape(both) == (sn.dim("n") + sn.dim("m"), 3)
    assert "f64[m+n,3] = concatenate" in sn.format_expr(both)


def test_call_time_checks_named_and_computed_dims():
    a, b = sn.tensor("a", shape=("n",)), sn.tensor("b", shape=("m",))
    c = sn.tensor("c", shape=("n+m",))
    f = sn.function([a, b, c], c.sum() + a.sum() + b.sum())
    assert f(np.ones(2), np.ones(3), np.ones(5)) == 10.0
    with pytest.raises(sn.InputError, match=r"axis 0 \(m\+n\) should be 5 with m=3 in input 1"):
        f(np.ones(2), np.ones(3), np.ones(6))
    x, y = sn.tensor("x", shape=("batch", 2)), sn.tensor("y", shape=("batch",))
    g = sn.function([x, y], x.sum() + y.sum())
    with pytest.raises(sn.InputError, match=r"'batch'.*is 4 here but 3 in input 0 'x'"):
        g(np.ones((3, 2)), np.ones(4))


def test_in_a_notebook_the_error_names_the_cell_and_line():
    interactiveshell = pytest.importorskip("IPython.core.interactiveshell")
    shell = interactiveshell.InteractiveShell.instance()
    shell.run_cell("import symnb as sn\nx = sn.tensor('x', shape=('batch', 3))", store_history=True)
    number = shell.execution_count
    cell = (
        "W = sn.tensor('W', shape=(4, 5))\ntry:\n    x @ W\nexcept sn.ShapeError as e:\n    m = e"
    )
    shell.run_cell(cell, store_history=True)
    message = str(shell.user_ns["m"])
    assert f"at notebook cell, line 3: x @ W  (In[{number}])" in message
    assert "'x' (float64(batch, 3)) @ 'W' (float64(4, 5))" in message


def test_a_transposed_operand_is_named_and_the_hint_undoes_the_transpose():
    x = sn.tensor("x", shape=("batch", 784))
    W = sn.shared(np.zeros((784, 10)), name="W")
    with pytest.raises(sn.ShapeError) as info:
        x @ W.T
    message = str(info.value)
    assert "'W.T' (float64(10, 784))" in message
    assert "hint: did you mean W?" in message
