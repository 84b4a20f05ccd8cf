"""A forked child of a process that opened OpenCL gets a DeviceError saying what to do, never
a hang: PoCL's threads are not copied by a fork, and the child's first call (or a new
context) waits for them forever. Spawned children open OpenCL themselves and compute."""

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import symnb as sn
from symnb.backends.device.runtime import DeviceError
from tests.helpers import opencl_problem

pytestmark = pytest.mark.skipif(opencl_problem() is not None, reason=str(opencl_problem()))
WAIT = 60
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
