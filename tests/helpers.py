"""Helpers every op test uses, so each op test runs on every backend against NumPy.

``available_backends()`` is what this machine can run: "py" always, "c" when a C compiler is
on the PATH (without one the "c" tests skip, saying so, through ``needs_c``), "opencl" when an
OpenCL device builds kernels.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import subprocess
import sys
import tempfile
import threading

import numpy as np
import pytest

import symnb as sn
from symnb.backends.c.compiler import find_compiler
from symnb.backends.cuda.runtime import cuda_problem as runtime_cuda_problem

#: skips a test (or a module, as ``pytestmark``) where no C compiler can build kernels
needs_c = pytest.mark.skipif(find_compiler() is None, reason="no C compiler (cc, gcc or clang)")


#: every dtype kernels are written for (real numbers and bool), for tests that sweep them
KERNEL_DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
]


def named_backends(*names: str) -> list:
    """Parameter values for a test that names its backends: "c" carries ``needs_c``, so it
    skips, saying why, where no C compiler is found instead of failing."""
    return [pytest.param(name, marks=needs_c) if name == "c" else name for name in names]


def available_backends() -> list[str]:
    """The backends the op suite runs here: "py", and "c" where a C compiler is found; plus
    the device backends named in ``SYMNB_SUITE_DEVICES`` ("opencl", "cuda", comma-separated;
    "opencl" when it is not set, an empty value names none) that this machine runs: so
    ``make test`` runs the op suite on "opencl" wherever an OpenCL device builds kernels (PoCL
    on the CPU), and ``python -m benchmarks.gpu`` names "cuda". With
    ``SYMNB_REQUIRE_OPENCL=1`` (or ``SYMNB_REQUIRE_CUDA=1``) a named device backend is listed
    even where it does not run, so a machine without it fails instead of skipping.
    ``SYMNB_SUITE_HOST`` (comma-separated, default "py,c") narrows the host backends: CI's
    clang runs set it to "c", since the "py" rows do not depend on the C compiler."""
    host = os.environ.get("SYMNB_SUITE_HOST", "py,c").replace(" ", "").split(",")
    c = ["c"] if "c" in host and find_compiler() is not None else []
    named = os.environ.get("SYMNB_SUITE_DEVICES", "opencl").replace(" ", "").split(",")
    opencl = opencl_backend() if "opencl" in named else []
    devices = [*opencl, *(cuda_backend() if "cuda" in named else [])]
    return [*(["py"] if "py" in host else []), *c, *devices]


@functools.cache
def opencl_problem() -> str | None:
    """None when an OpenCL device builds kernels here; else why not."""
    os.environ.setdefault("POCL_CACHE_DIR", tempfile.mkdtemp(prefix="symnb-pocl-"))
    try:
        import pyopencl

        from symnb.backends.opencl.device import NoOpenCLDevice, usable_device
    except ImportError:
        return "pip install 'symnb[opencl]' (pyopencl, PoCL)"
    try:
        usable_device(pyopencl)
    except NoOpenCLDevice as exc:
        return str(exc)
    return None


@functools.cache
def cuda_problem() -> str | None:
    """None when a CUDA driver and device run kernels here; else why not (asked once)."""
    return runtime_cuda_problem()


def cuda_backend() -> list[str]:
    """["cuda"] on a machine with a GPU (or with ``SYMNB_REQUIRE_CUDA=1``, which
    ``python -m benchmarks.gpu`` sets to run the op suite there)."""
    if os.environ.get("SYMNB_REQUIRE_CUDA") == "1" or cuda_problem() is None:
        return ["cuda"]
    return []


def opencl_backend() -> list[str]:
    if os.environ.get("SYMNB_REQUIRE_OPENCL") == "1" or opencl_problem() is None:
        return ["opencl"]
    return []


#: kernels per program when the tests build many at once (one device-compiler run each)
OPENCL_CHUNK = 150


def prebuild_opencl(kernels) -> None:
    """``kernels`` (descriptions) built on backend="opencl"'s runtime, OPENCL_CHUNK to a
    program, less those it built before (``Runtime.kernels``); nothing where OpenCL does not
    run, or where one does not build (the test that needs it then fails on its own)."""
    if opencl_problem() is not None:
        return
    from symnb.backends.device.runtime import DeviceError
    from symnb.backends.opencl.runtime import current_runtime

    runtime = current_runtime()
    found = {runtime.dialect.render(kernel): kernel for kernel in kernels}
    sources, descriptions = list(found), list(found.values())
    for start in range(0, len(sources), OPENCL_CHUNK):
        chunk = slice(start, start + OPENCL_CHUNK)
        try:
            runtime.kernels(descriptions[chunk], sources[chunk])
        except DeviceError:
            continue


def random_array(rng, shape, dtype):
    """Values that suit most ops: positive floats away from 0, small ints, random bools."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        return rng.integers(1, 5, size=shape).astype(dtype)
    return rng.uniform(0.5, 2.0, size=shape).astype(dtype)


def run(build, *arrays, backend="py", **function_kwargs):
    """Compile ``build(*inputs)`` for inputs shaped like ``arrays`` and run it on them."""
    xs = [
        sn.tensor(f"x{i}", shape=np.shape(a), dtype=np.asarray(a).dtype)
        for i, a in enumerate(arrays)
    ]
    return sn.function(xs, build(*xs), backend=backend, **function_kwargs)(*arrays)


@contextlib.contextmanager
def reference_backend():
    """Compile on the NumPy reference backend inside the block, whatever the default is:
    gradient checks test symbolic rules, and the value tests already compare backends."""
    function_module = importlib.import_module("symnb.compile.function")
    saved = function_module.default_backend
    function_module.default_backend = _py_backend
    try:
        yield
    finally:
        function_module.default_backend = saved


def _py_backend() -> str:
    return "py"


def check(got, want, rtol=None, atol=0.0):
    """Same dtype, same shape, values within float tolerance (tighter for float64)."""
    want = np.asarray(want)
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if rtol is None:
        rtol = {np.float16: 1e-3, np.float32: 1e-5}.get(want.dtype.type, 1e-7)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


#: relative error a result of each float dtype may carry after a few well-conditioned ops
EPS_RTOL = {"float16": 2e-3, "float32": 2e-5, "float64": 1e-12}


def tolerance(dtype, scale: float = 1.0) -> float:
    """The relative tolerance for results of ``dtype`` (exact for ints and bools), times
    ``scale`` for computations that lose more (a condition number, a long sum)."""
    return EPS_RTOL.get(np.dtype(dtype).name, 0.0) * scale


def run_python(code: str, env: dict | None = None, timeout: float | None = None) -> str:
    """``code`` run by this Python in a new process (imports and caches of its own); its
    standard output. A failure shows the process's error output; a process still running
    after ``timeout`` seconds is killed (``subprocess.TimeoutExpired``)."""
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def waiting_for_child(seconds: float) -> str:
    """The end of a ``run_python`` program that forked (its child's ``pid``; ``os`` and
    ``time`` imported): it prints "child exit N", or kills a child still running after
    ``seconds`` and prints "child hung" (a fork test's hang is a failure, not a stuck run)."""
    return f"""
deadline = time.monotonic() + {seconds}
done, status = os.waitpid(pid, os.WNOHANG)
while not done and time.monotonic() < deadline:
    time.sleep(0.05)
    done, status = os.waitpid(pid, os.WNOHANG)
if done:
    print("child exit", os.waitstatus_to_exitcode(status))
else:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    print("child hung")
"""


def call_from_threads(call, threads: int, calls: int) -> None:
    """``call()`` ``calls`` times in each of ``threads`` threads at once; a worker's exception
    fails the caller (collected, then raised after every thread has ended)."""
    errors = []

    def work():
        try:
            for _ in range(calls):
                call()
        except BaseException as exc:
            errors.append(exc)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    assert not errors, errors
