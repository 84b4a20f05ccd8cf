"""A forked child of a process that opened OpenCL gets a DeviceError saying what to do, never
a hang: PoCL's threads are not copied by a fork, and the child's first call (or a new
context) waits for them forever. Spawned children open OpenCL themselves and compute."""

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import symnb as sn
from symnb.backends.device.runtime import DeviceError
from tests.helpers import opencl_problem

pytestmark = pytest.mark.skipif(opencl_problem() is not None, reason=str(opencl_problem()))
WAIT = 60  # (a child that hangs is killed after it: a TimeoutError here)
INHERITED: list = []  # the parent's function, which a forked child has without a pickle


def call(f, a):
    return np.asarray(f(a))


def call_inherited(a):
    return np.asarray(INHERITED[0](a))


def compile_and_call(a):
    x = sn.vector("x")
    return np.asarray(sn.function([x], sn.exp(x) * 3, backend="opencl")(a))


def in_pool(method, job, *args):
    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context(method))
    try:
        return pool.submit(job, *args).result(timeout=WAIT)
    finally:
        for process in list(getattr(pool, "_processes", {}).values()):
            if process.exitcode is None:
                process.kill()
        pool.shutdown(wait=False, cancel_futures=True)


@pytest.fixture
def opened(tmp_path, monkeypatch):
    """An OpenCL function that ran here, and its input."""
    monkeypatch.setenv("SYMNB_COMPILEDIR", sn.config.compiledir)
    x = sn.vector("x")
    f = sn.function([x], sn.exp(x) * 2, backend="opencl")
    a = np.linspace(0, 1, 1000)
    np.testing.assert_allclose(f(a), np.exp(a) * 2)
    INHERITED[:] = [f]
    yield f, a
    INHERITED.clear()


def test_a_forked_child_is_told_to_use_spawn(opened):
    _, a = opened
    with pytest.raises(DeviceError, match=r"is a fork of it.*'spawn' or 'forkserver'"):
        in_pool("fork", call_inherited, a)
    with pytest.raises(DeviceError, match=r"OpenCL was opened in process \d+"):
        in_pool("fork", compile_and_call, a)  # a new context in the child would hang too


def test_a_function_sent_to_a_forked_child_raises_there_for_the_caller(opened):
    """Unpickling the task in the worker used to raise, which a pool does not pass on (a
    ``multiprocessing.Pool`` waited forever, ``ProcessPoolExecutor`` said a worker died)."""
    f, a = opened
    with pytest.raises(DeviceError, match=r"is a fork of it.*'spawn' or 'forkserver'"):
        in_pool("fork", call, f, a)
    with multiprocessing.get_context("fork").Pool(1) as pool:
        with pytest.raises(DeviceError, match=r"is a fork of it"):
            pool.apply_async(call, (f, a)).get(timeout=WAIT)


def test_a_spawned_child_opens_its_own(opened):
    f, a = opened
    np.testing.assert_allclose(in_pool("spawn", call, f, a), np.exp(a) * 2)


SHARED: list = []  # (w, a backend "c" function of w), inherited by a forked child


def read_shared(how):
    w, f = SHARED
    if how == "get_value":
        return w.get_value()
    if how == "c":
        return np.asarray(f())
    return pickle.loads(pickle.dumps(w)).get_value()


@pytest.fixture
def on_device(opened):
    """A shared w whose value an OpenCL function's update left on the device (2.0 each)."""
    w = sn.shared(np.ones(3), name="w")
    step = sn.function([], w * 2, updates={w: w + 1}, backend="opencl")
    f = sn.function([], w * 3, backend="c")
    step()
    assert w._value is None and w._device is not None  # (only on the device now)
    SHARED[:] = [w, f]
    yield w
    SHARED.clear()


@pytest.mark.parametrize("how", ["get_value", "c", "pickle"])
def test_a_forked_child_reading_a_value_on_the_device_is_told_to_use_spawn(on_device, how):
    """Downloading it there would hang as a call does: the same DeviceError instead."""
    with pytest.raises(DeviceError, match=r"is a fork of it.*'spawn' or 'forkserver'"):
        in_pool("fork", read_shared, how)


def test_a_forked_child_reads_a_host_copy_that_is_current(on_device):
    """Once the parent downloaded the value, the child reads it without the device."""
    np.testing.assert_array_equal(on_device.get_value(), np.full(3, 2.0))
    np.testing.assert_array_equal(in_pool("fork", read_shared, "get_value"), np.full(3, 2.0))
    np.testing.assert_array_equal(in_pool("fork", read_shared, "c"), np.full(3, 6.0))
    np.testing.assert_array_equal(in_pool("fork", read_shared, "pickle"), np.full(3, 2.0))
