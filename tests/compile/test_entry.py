"""``f(...)``'s entry point: where the C runner runs a function, a call reaches it with no
Python frame in between (runner_entry.h's ``Entry``); every other call takes the Python path
with the same results, errors and warnings."""

from __future__ import annotations

import gc
import inspect
import os
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest

import symnb as sn
from symnb.backends.c import runner, threads
from symnb.errors import InputError
from tests.helpers import needs_c

pytestmark = needs_c


@pytest.fixture
def native():
    if runner.module() is None:
        pytest.skip("no C runner on this machine")


PACKAGE = str(Path(sn.__file__).resolve().parent) + os.sep
#: the thread policy the runner asks at most every 10 ms (runner_threads.h): not the call path
POLICY = str(Path(threads.__file__).resolve())


def python_frames(call) -> list[str]:
    """The names of the Python functions of the symnb package that run during ``call()``
    (by the package's own folder: a checkout's folder may be called symnb too), less the
    thread policy's, the garbage collector held off."""
    seen = []

    def profile(frame, event, arg):
        path = str(Path(frame.f_code.co_filename).resolve())
        if event == "call" and path.startswith(PACKAGE) and path != POLICY:
            seen.append(frame.f_code.co_name)

    gc.collect()  # another test's garbage (a function's finalizers) is not this call's frames
    enabled = gc.isenabled()
    gc.disable()
    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
        if enabled:
            gc.enable()
    return seen


def test_a_plain_call_runs_no_python_of_symnb(native):
    a, b = sn.scalar("a"), sn.scalar("b")
    f = sn.function([a, b], a * b + 1.0, backend="c")
    assert f(1.5, 2.0) == 4.0
    assert python_frames(lambda: f(np.asarray(1.5), np.asarray(2.0))) == []
    assert python_frames(lambda: f(1.5, 2.0)) == []  # Python numbers: the runner's slots


@pytest.mark.parametrize(
    "outputs, expected",
    [
        (lambda x: x * 2.0, np.array([2.0, 4.0, 6.0])),
        (lambda x: [x * 2.0, x + 1.0], [np.array([2.0, 4.0, 6.0]), np.array([2.0, 3.0, 4.0])]),
        (lambda x: (x * 2.0,), (np.array([2.0, 4.0, 6.0]),)),
        (lambda x: {"twice": x * 2.0, "sum": sn.sum(x)}, {"twice": [2.0, 4.0, 6.0], "sum": 6.0}),
    ],
    ids=["single", "list", "tuple", "dict"],
)
def test_results_keep_the_structure_asked_for(native, outputs, expected):
    x = sn.vector("x")
    f = sn.function([x], outputs(x), backend="c")
    for call in (lambda: f(np.array([1.0, 2.0, 3.0])), lambda: f(x=np.array([1.0, 2.0, 3.0]))):
        got = call()
        assert type(got) is type(expected)
        if isinstance(expected, dict):
            assert list(got) == list(expected)
            got, expected_values = list(got.values()), list(expected.values())
        else:
            expected_values = expected
        many = isinstance(got, (list, tuple))
        for g, e in zip(got if many else [got], expected_values if many else [expected_values]):
            np.testing.assert_array_equal(g, e)


def test_keywords_are_bound_in_c_and_bad_ones_named_by_the_python_path(native):
    a, b = sn.scalar("a"), sn.scalar("b")
    f = sn.function([a, b], a - 2.0 * b, backend="c")
    name = "".join(["b"])  # not the interned string of the input's name
    for call in (
        lambda: f(a=1.5, b=2.0),
        lambda: f(b=2.0, a=1.5),
        lambda: f(1.5, b=2.0),
        lambda: f(1.5, **{name: 2.0}),
    ):
        assert call() == -2.5
        assert python_frames(call) == []
    x = sn.vector("x", dtype="float32")
    g = sn.function([x], x * 2.0, backend="c")
    got = g(x=[1, 2, 3])  # a list: declined, then converted and run
    assert got.dtype == np.float32 and got.tolist() == [2.0, 4.0, 6.0]
    with pytest.raises(InputError, match="'x'"):
        g(x=np.ones((2, 2), np.float32))
    for call, message in (
        (lambda: f(a=1.0, c=2.0), "no input named 'c'"),
        (lambda: f(1.0, a=2.0), "'a' given twice"),
        (lambda: f(1.0, 2.0, a=3.0), "'a' given twice"),
        (lambda: f(a=1.0), "missing .*b"),
        (lambda: f(1.0, 2.0, 3.0, a=1.0), "takes 2 inputs, got 3"),
    ):
        with pytest.raises(InputError, match=message):
            call()


def test_keywords_bind_past_the_entry_points_stack(native):
    inputs = [sn.scalar(f"x{i}") for i in range(11)]
    f = sn.function(inputs, sum(x * (i + 1) for i, x in enumerate(inputs)), backend="c")
    values = {f"x{i}": float(10 - i) for i in range(11)}
    want = sum(v * (i + 1) for i, v in enumerate(values.values()))
    assert f(**dict(reversed(values.items()))) == want
    assert f(10.0, 9.0, **{k: v for k, v in list(values.items())[2:]}) == want


def test_a_declined_call_is_converted_or_names_the_input(native):
    x = sn.vector("x", dtype="float32")
    f = sn.function([x], x * 2.0, backend="c")
    got = f([1, 2, 3])  # a list: the runner declines, the Python path converts it
    assert got.dtype == np.float32 and got.tolist() == [2.0, 4.0, 6.0]
    with pytest.raises(InputError, match="'x'"):
        f(np.ones((2, 2), np.float32))
    with pytest.raises(TypeError):
        f(np.ones(3, np.float32), np.ones(3, np.float32))


def test_the_first_call_warns_then_calls_go_straight_to_the_runner(native):
    x, y = sn.vector("x", shape=(None,)), sn.matrix("y", shape=(None, None))
    f = sn.function([x, y], x - y, backend="c")
    assert f._entry.fast is None  # unknown dims: the first call looks at its shapes
    with pytest.warns(sn.ShapeWarning):
        f(np.ones(3), np.ones((3, 1)))  # (n,) - (n, 1) gives (n, n): said at the first call
    assert f._entry.fast is not None
    assert python_frames(lambda: f(np.ones(3), np.ones((3, 1)))) == []


def test_functions_with_updates_or_copies_take_the_python_path(native):
    w = sn.shared(np.zeros(2), name="w")
    x = sn.vector("x")
    f = sn.function([x], sn.sum(x), updates={w: w + x}, backend="c")
    f(np.array([1.0, 2.0]))
    f(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(w.get_value(), [2.0, 4.0])
    g = sn.function([x], x, backend="c")  # the input itself: a copy, the caller's own
    a = np.array([1.0, 2.0])
    out = g(a)
    assert out is not a and not np.shares_memory(out, a)


@pytest.mark.parametrize("backend", ["c", "py"])
def test_a_function_nothing_holds_goes_at_once(backend):
    """The function holds its entry point, which holds it only weakly: no cycle, so the
    function (and its buffers, a device's memory) goes when its last reference does."""
    x = sn.vector("x")
    f = sn.function([x], x * 2.0, backend=backend)
    f(np.ones(3))
    entry = f.__call__
    gone = weakref.ref(f)
    enabled = gc.isenabled()
    gc.disable()
    try:
        del f
        assert gone() is None
    finally:
        if enabled:
            gc.enable()
    with pytest.raises(ReferenceError, match="deleted"):
        entry(y=np.ones(3))  # the Python path (a keyword that binds nothing) needs it


def test_the_signature_names_the_inputs():
    x, w = sn.vector("x"), sn.matrix("W")
    f = sn.function([x, w], sn.dot(w, x), backend="py")
    assert str(inspect.signature(f)) == "(x, W)"
    odd = sn.function([sn.vector("x.T"), sn.vector("x.T2")], [], backend="py")
    assert str(inspect.signature(odd)) == "(input0, input1, /)"
    keyword_name = sn.function([sn.vector("lambda")], [], backend="py")
    assert str(inspect.signature(keyword_name)) == "(input0, /)"
