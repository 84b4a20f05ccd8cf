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
from tests.helpers import call_from_threads, needs_c

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


def test_functions_whose_results_need_copies_take_the_python_path(native):
    x = sn.vector("x")
    g = sn.function([x], x, backend="c")  # the input itself: a copy, the caller's own
    a = np.array([1.0, 2.0])
    out = g(a)
    assert out is not a and not np.shares_memory(out, a)
    assert g._entry.fast is None
    w = sn.shared(np.zeros(2), name="w")
    h = sn.function([], w, updates={w: w + 1.0}, backend="c")  # the old value, returned
    olds = [h() for _ in range(3)]
    np.testing.assert_array_equal(olds, [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    assert not any(np.shares_memory(o, w.get_value(borrow=True)) for o in olds)


def test_a_training_step_reads_and_writes_its_shared_values_in_c(native):
    rng = np.random.default_rng(7)
    w0, b0 = rng.standard_normal((3, 2)), rng.standard_normal(2)
    w, b = sn.shared(w0.copy(), name="W"), sn.shared(b0.copy(), name="b")
    x, y = sn.matrix("x", shape=(5, 3)), sn.matrix("y", shape=(5, 2))  # no Python steps
    loss = sn.mean((x @ w + b - y) ** 2)
    grad_w, grad_b = sn.grad(loss, [w, b])
    updates = {w: w - 0.1 * grad_w, b: b - 0.1 * grad_b}
    step = sn.function([x, y], loss, updates=updates, backend="c")
    xv, yv = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    want_w, want_b = w0.copy(), b0.copy()
    for call in range(4):
        err = xv @ want_w + want_b - yv
        got = step(xv, yv) if call % 2 else step(y=yv, x=xv)
        np.testing.assert_allclose(got, np.mean(err**2), rtol=1e-10)
        want_w = want_w - 0.1 * 2 * xv.T @ err / err.size
        want_b = want_b - 0.1 * 2 * err.sum(axis=0) / err.size
        np.testing.assert_allclose(w.get_value(), want_w, rtol=1e-10)
        np.testing.assert_allclose(b.get_value(), want_b, rtol=1e-10)
    assert python_frames(lambda: step(xv, yv)) == []
    assert python_frames(lambda: step(x=xv, y=yv)) == []


class _OnDevice:
    """A value a device backend keeps (shape, dtype, ``to_host()``)."""

    def __init__(self, array):
        self.array, self.shape, self.dtype = array, array.shape, array.dtype

    def to_host(self):
        return self.array.copy()


def test_shared_values_on_a_device_or_of_a_new_shape_take_the_python_way(native):
    w = sn.shared(np.ones(3), name="w")
    x = sn.vector("x")
    f = sn.function([x], sn.sum(w * x), updates={w: w + x}, backend="c")
    assert f(np.ones(3)) == 3.0
    w._device = _OnDevice(np.ones(3))  # a device copy of the current value: stale after
    assert f(np.ones(3)) == 6.0
    assert w._device is None
    np.testing.assert_array_equal(w.get_value(), [3.0, 3.0, 3.0])
    w._value, w._device = None, _OnDevice(np.full(3, 5.0))  # only on the device
    assert f(np.ones(3)) == 15.0
    assert w._device is None
    np.testing.assert_array_equal(w.get_value(), [6.0, 6.0, 6.0])
    grows = sn.shared(np.ones(2), name="grows", shape=(None,))
    twice = sn.concatenate([grows, grows])
    g = sn.function([], sn.sum(grows), updates={grows: twice}, backend="c")
    assert [float(g()) for _ in range(4)] == [2.0, 4.0, 8.0, 16.0]
    assert grows.get_value().shape == (32,)


def test_a_call_the_entry_point_hands_over_for_a_device_value_runs_in_the_runner(native):
    """A shared value only on a device makes the entry point hand the call to Python, which
    downloads it; the runner then runs the call (the Python executor ran it whole, each
    kernel launched through cffi)."""
    w = sn.shared(np.ones(3), name="w")
    x = sn.vector("x")
    f = sn.function([x], sn.sum(w * x), updates={w: w + x}, backend="c")
    assert f(np.ones(3)) == 3.0
    runs = f.runner.runs
    w._value, w._device = None, _OnDevice(np.full(3, 5.0))
    assert f(np.full(3, 2.0)) == 30.0
    assert f.runner.runs == runs + 1
    np.testing.assert_array_equal(w.get_value(), [7.0, 7.0, 7.0])


def test_the_entry_point_checks_every_update_before_writing_any(native):
    """An update the entry point cannot simply assign (a value of a new shape) goes through
    ``SharedVariable.fitted`` first; one that does not fit leaves every shared value as it
    was, the ones before it included."""
    x = sn.vector("x", shape=(None,))
    a, w = sn.shared(np.zeros(2), name="a"), sn.shared(np.zeros(2), name="w")
    grows = sn.shared(np.zeros(3), name="grows", shape=(None,))  # (fitted to (2,))
    step = sn.function([x], [], updates={a: a + 1.0, grows: x * 3.0, w: x * 2.0}, backend="c")
    step(np.ones(2))
    assert step._entry.fast is not None  # the entry point makes these calls
    with pytest.raises(InputError, match=r"shared 'w' \(float64\(2,\)\).*shape \(3,\)"):
        step(np.ones(3))
    assert [v.get_value().tolist() for v in (a, grows, w)] == [[1, 1], [3, 3], [2, 2]]
    step(np.full(2, 2.0))
    assert [v.get_value().tolist() for v in (a, grows, w)] == [[2, 2], [6, 6], [4, 4]]


def test_calls_with_updates_from_threads_take_turns_in_c(native):
    size, threads, calls = 200_000, 4, 40  # past the size whose kernels let go of the GIL
    w = sn.shared(np.zeros(size), name="w")
    step = sn.function([], [], updates={w: w + 1.0}, backend="c")
    assert step() == []
    assert step._entry.fast is not None  # the entry point makes these calls
    call_from_threads(step, threads, calls)
    np.testing.assert_array_equal(w.get_value(), 1.0 + threads * calls)


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
