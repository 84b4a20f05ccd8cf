"""Compiled functions in worker processes: after the parent ran threaded kernels, a forked child
(``ProcessPoolExecutor()``'s default on Linux) must not wait forever for OpenMP threads the fork
did not copy (symnb/backends/c/forks.py); spawn and forkserver children start clean. Every wait
has a timeout, and a pool that hangs is killed, so a regression fails instead of hanging."""

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import symnb as sn
from symnb.backends.c import forks
from tests.helpers import run_python, waiting_for_child

WAIT = 120  # seconds for a worker's result (a spawned one imports symnb and loads kernels)


def threaded_function():
    """Kernels big enough to run on every core (a map, a row reduction) and a BLAS product."""
    x = sn.matrix("x")
    w = sn.matrix("w")
    return sn.function([x, w], [sn.exp(x) * 2 + sn.sin(x), sn.tanh(x @ w).sum(axis=1)])


def inputs():
    rng = np.random.default_rng(7)
    return rng.standard_normal((1500, 1500)) / 8, rng.standard_normal((1500, 40)) / 8


def expected(a, w):
    return [np.exp(a) * 2 + np.sin(a), np.tanh(a @ w).sum(axis=1)]


def call(f, a, w):
    """A worker's job (module level, so spawn and forkserver children can import it)."""
    return [np.asarray(r) for r in f(a, w)]


def in_pool(method, f, a, w):
    """``f(a, w)`` in a one-worker pool of ``method``; a pool that does not answer is killed."""
    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context(method))
    try:
        return pool.submit(call, f, a, w).result(timeout=WAIT)
    finally:
        for process in list(getattr(pool, "_processes", {}).values()):
            if process.is_alive() and process.exitcode is None:
                process.kill()
        pool.shutdown(wait=False, cancel_futures=True)


@pytest.fixture
def shared_compiledir(compiledir, monkeypatch):
    """Spawned children read the compile directory from the environment, not sn.config."""
    monkeypatch.setenv("SYMNB_COMPILEDIR", str(compiledir))
    return compiledir


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_a_worker_process_computes_after_threaded_kernels_ran(shared_compiledir, method):
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start method on this platform")
    f = threaded_function()
    a, w = inputs()
    for got, want in zip(f(a, w), expected(a, w)):  # threaded kernels run in the parent
        np.testing.assert_allclose(got, want)
    for got, want in zip(in_pool(method, f, a, w), expected(a, w)):
        np.testing.assert_allclose(got, want)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_the_default_pool_works_after_threaded_kernels(shared_compiledir):
    """``ProcessPoolExecutor()`` as users write it (fork on Linux before Python 3.14)."""
    f = threaded_function()
    a, w = inputs()
    f(a, w)
    pool = ProcessPoolExecutor(2)
    try:
        results = [job.result(timeout=WAIT) for job in [pool.submit(call, f, a, w)] * 2]
    finally:
        for process in list(getattr(pool, "_processes", {}).values()):
            process.kill()
        pool.shutdown(wait=False, cancel_futures=True)
    for got in results:
        for value, want in zip(got, expected(a, w)):
            np.testing.assert_allclose(value, want)


def test_the_kernels_openmp_runtime_is_noted_for_forks(shared_compiledir):
    threaded_function()
    assert forks._runtimes or not sn.config.openmp  # OpenMP kernels: their runtime is known


#: a program that forks while another thread holds one of symnb's locks (``held`` says which
#: and when), and whose child compiles, unpickles and calls (``waiting_for_child`` ends it)
HELD_AT_FORK = """
import os, pickle, sys, threading, time
import numpy as np
import symnb as sn
from tests.helpers import run_python
from symnb.backends.c import cache

def compiling():
    for i in range(1000):  # a new kernel each time: the cache's lock is held while it compiles
        x = sn.vector("x")
        sn.function([x], sn.exp(x) * (i + 0.25) + sn.sin(x))

y = sn.vector("y")
w = sn.shared(np.zeros(4_000_000), name="w")
g = sn.function([y], w.sum(), updates={w: sn.tanh(w + sn.exp(w) * 0.5)})
g(np.ones(2))

def updating():
    while True:  # calls with updates hold the function's turns
        g(np.ones(2))

def locked(lock):  # held by another thread (the cache's lock is an RLock: no .locked())
    if lock.acquire(blocking=False):
        lock.release()
        return False
    return True

held = {HELD}
threading.Thread(target=compiling if held == "cache" else updating, daemon=True).start()
deadline = time.monotonic() + 60
while not locked(cache._lock if held == "cache" else g._turns):
    assert time.monotonic() < deadline, "the lock was never held"
    time.sleep(0.0005)
pid = os.fork()
if pid == 0:
    x = sn.vector("x")
    f = sn.function([x], sn.cos(x) * 7)
    h = pickle.loads(pickle.dumps(f))
    ok = np.allclose(h(np.ones(3)), np.cos(1) * 7) and np.isfinite(g(np.ones(2)))
    os._exit(0 if ok else 1)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
@pytest.mark.parametrize("held", ["cache", "turns"])
def test_a_child_forked_while_a_thread_holds_a_lock_computes(compiledir, held):
    """A thread compiling (the kernel cache's lock) or calling a function with updates (its
    turns) when another forks: the child compiles, unpickles and calls (symnb/core/locks.py)."""
    env = dict(os.environ, SYMNB_COMPILEDIR=str(compiledir))
    program = HELD_AT_FORK.replace("{HELD}", repr(held)) + waiting_for_child(60)
    out = run_python(program, env=env, timeout=180)
    assert out.strip() == "child exit 0"
