"""Values at the borders of a compiled function (issue #17): copies unless ``borrow=True``,
updates from several threads, integers a float input cannot hold, masked arrays."""

import contextlib
import io
import threading
import warnings

import numpy as np
import pytest

import symnb as sn
from symnb.errors import InputError, ReentrantCallError
from tests.helpers import call_from_threads


def test_returned_shared_value_is_a_copy(backend):
    w = sn.shared(np.ones(3), name="w")
    got = sn.function([], [w, w.T, w[::-1]], backend=backend)()
    for out in got:
        out[:] = 5
    np.testing.assert_array_equal(w.get_value(), np.ones(3))


def test_returned_input_and_constant_are_copies(backend):
    x = sn.vector("x")
    c = sn.constant(np.arange(3.0))
    f = sn.function([x], [x, x[::-1], c], backend=backend)
    xv = np.zeros(3)
    a, b, k = f(xv)
    a[:] = 1
    b[:] = 2
    np.testing.assert_array_equal(xv, np.zeros(3))
    assert k.flags.writeable
    k[:] = 9
    np.testing.assert_array_equal(f(xv)[2], np.arange(3.0))


def test_kernel_results_are_returned_unchecked_and_views_are_checked(backend):
    """Results a kernel or BLAS call wrote are the call's own storage, so a call does not
    look for aliases there (it costs most of a small call); views and leaves are looked at."""
    x, m = sn.vector("x"), sn.matrix("m")
    f = sn.function([x, m], [x * 2, m @ m, sn.reshape(m, (-1,)), x], backend=backend)
    fresh = set() if backend == "py" else {0, 1}  # "py" runs NumPy references only
    assert set(range(4)) - set(f._alias_check) == fresh
    xv, mv = np.ones(3), np.eye(2)
    outs = f(xv, mv)
    assert not any(np.may_share_memory(o, a) for o in outs for a in (xv, mv))


def test_a_kernels_fallback_never_hands_an_argument_back():
    """A kernel step's NumPy fallback that returns its input (or a view of it) is copied, so
    the kernel's output stays the call's own storage when the kernel declines a layout."""
    from symnb.backends.plan import OwnResults

    xv = np.arange(4.0)
    own = OwnResults(lambda a: a)
    assert not np.may_share_memory(own(xv), xv)
    assert not np.may_share_memory(OwnResults(lambda a: a[::2])(xv), xv)
    pair = OwnResults(lambda a: (a, a + 1))(xv)
    assert not np.may_share_memory(pair[0], xv) and pair[1][0] == 1.0


def test_update_with_an_input_keeps_no_reference_to_it(backend):
    w = sn.shared(np.zeros(3), name="w")
    x = sn.vector("x")
    f = sn.function([x], [], updates={w: x}, backend=backend)
    xv = np.ones(3)
    f(xv)
    xv[:] = 7
    np.testing.assert_array_equal(w.get_value(), np.ones(3))


def test_a_call_whose_update_does_not_fit_writes_no_update(backend):
    """Every update is checked before any is written: the second update's value (of a dim
    only the call knows) does not fit, and the first shared value keeps its value too."""
    x = sn.vector("x", shape=(None,), dtype="float32")
    a = sn.shared(np.zeros(2, np.float32), name="a")
    w = sn.shared(np.zeros(2, np.float32), name="w")
    f = sn.function([x], x.sum(), updates={a: a + 1, w: x * 2}, backend=backend)
    assert f(np.ones(2, np.float32)) == 2.0  # (the entry point's path from now on)
    with pytest.raises(InputError, match=r"shared 'w' \(float32\(2,\)\).*shape \(3,\)"):
        f(np.ones(3, np.float32))
    np.testing.assert_array_equal(a.get_value(), [1.0, 1.0])
    np.testing.assert_array_equal(w.get_value(), [2.0, 2.0])
    f(np.full(2, 3.0, np.float32))
    np.testing.assert_array_equal(a.get_value(), [2.0, 2.0])
    np.testing.assert_array_equal(w.get_value(), [6.0, 6.0])


def test_borrow_true_returns_the_arrays_themselves(backend):
    w = sn.shared(np.ones(3), name="w")
    x = sn.vector("x")
    f = sn.function([x], [w, x], updates={w: x}, backend=backend, borrow=True)
    xv = np.full(3, 4.0)
    before = w.get_value(borrow=True)
    out_w, out_x = f(xv)
    assert out_w is before and np.shares_memory(out_x, xv)
    assert w.get_value(borrow=True) is xv


@pytest.mark.parametrize("threads", [4])
def test_updates_from_several_threads_are_not_lost(backend, threads):
    count = sn.shared(np.zeros((), "int64"), name="count")
    step = sn.function([], count, updates={count: count + 1}, backend=backend)
    calls = 2000
    call_from_threads(step, threads, calls)
    assert int(count.get_value()) == threads * calls


def _within(seconds: float, call):
    """``call()``'s result (or its exception) from a daemon thread; a call that has not
    ended after ``seconds`` (a deadlock) fails the test instead of hanging the suite."""
    done, got = threading.Event(), {}

    def run():
        try:
            got["result"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            got["error"] = exc
        done.set()

    threading.Thread(target=run, daemon=True).start()
    assert done.wait(seconds), f"the call did not end within {seconds} s (a deadlock)"
    if "error" in got:
        raise got["error"]
    return got["result"]


def test_an_input_that_calls_the_function_to_make_its_value_is_converted_first(backend):
    """A call with updates converts its arguments before it takes its turn: an argument
    whose ``__array__`` calls the function (a lazy array) makes that call first."""
    x = sn.vector("x", shape=(2,), dtype="float64")
    s = sn.shared(np.zeros(2), name="s")
    f = sn.function([x], x * 2, updates={s: s + x}, backend=backend)

    class Lazy:
        def __array__(self, dtype=None, copy=None):
            return f(np.array([1.0, 2.0]))

    for _ in range(2):  # (the first call's path, then the entry point's)
        s.set_value(np.zeros(2))
        np.testing.assert_array_equal(_within(20, lambda: f(Lazy())), [4.0, 8.0])
        np.testing.assert_array_equal(s.get_value(), [3.0, 6.0])  # 1, 2 then 2, 4


@pytest.mark.parametrize("view", [False, True], ids=["results as they come", "a view"])
def test_a_call_from_inside_its_own_call_is_an_error_not_a_deadlock(backend, view):
    """A print hook calling the function while its call holds the turns (taken by the entry
    point, or by the Python path where a result is a view to copy): the inner call raises
    ReentrantCallError (it would wait for itself), no update is written, and the function
    takes calls again afterwards."""
    x = sn.vector("x", shape=(2,), dtype="float64")
    s = sn.shared(np.zeros(2), name="s")
    out = sn.print_value(x * 2, "twice") * 3
    f = sn.function([x], out[::-1] if view else out, updates={s: s + x}, backend=backend)

    class Hook(io.StringIO):
        def write(self, text):
            return f(np.ones(2))

    def hooked():
        with contextlib.redirect_stdout(Hook()):
            return f(np.ones(2))

    with pytest.raises(Exception, match="called from inside one of its own calls") as info:
        _within(20, hooked)
    assert isinstance(info.value, ReentrantCallError) or isinstance(
        info.value.__cause__, ReentrantCallError
    ), repr(info.value)
    np.testing.assert_array_equal(s.get_value(), [0.0, 0.0])
    with contextlib.redirect_stdout(io.StringIO()):
        np.testing.assert_array_equal(_within(20, lambda: f(np.ones(2))), [6.0, 6.0])
    np.testing.assert_array_equal(s.get_value(), [1.0, 1.0])


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_integers_beyond_float64s_precision_are_refused(backend, dtype):
    x = sn.vector("x", dtype="float64")
    f = sn.function([x], x * 1, backend=backend)
    np.testing.assert_array_equal(f(np.array([3, 2**53], dtype)), [3.0, 2.0**53])
    with pytest.raises(InputError, match=f"input 0 'x' expects float64.*{dtype}.*2\\*\\*53"):
        f(np.array([1, 2**53 + 1], dtype))


def test_masked_arrays_are_refused(backend):
    x = sn.vector("x")
    f = sn.function([x], x + 1, backend=backend)
    masked = np.ma.masked_array([1.0, 2.0, 3.0], mask=[False, True, False])
    with pytest.raises(InputError, match="input 0 'x' got a masked array.*filled"):
        f(masked)


def test_ndarray_subclasses_are_read_as_plain_arrays(backend):
    """np.matrix redefines sum/var/max (no keepdims, 2-d results): its data is computed on as
    a plain ndarray, as for np.asarray(value); shared values take the same route."""
    a = sn.matrix("a")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
        w = sn.shared(np.matrix([[0.5, 1.0], [1.5, 2.0]]), name="w")
        f = sn.function([a], [sn.var(a, axis=1), sn.max(a * w, axis=0), a], backend=backend)
        var, top, same = f(m)
        w.set_value(np.matrix([[1.0, 1.0], [1.0, 1.0]]))
        assert type(w.get_value()) is np.ndarray
        again = f(m)[1]
    plain, wv = np.asarray(m), np.array([[0.5, 1.0], [1.5, 2.0]])
    np.testing.assert_allclose(var, plain.var(axis=1))
    np.testing.assert_allclose(top, (plain * wv).max(axis=0))
    np.testing.assert_allclose(again, plain.max(axis=0))
    assert type(same) is np.ndarray and same.shape == (2, 2)
