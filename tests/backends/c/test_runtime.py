"""Backend c against NumPy where C and NumPy differ: NaN, integer division, empties, buffers."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

import symnb as sn
from symnb.backends import default_backend, execute
from symnb.backends.c import compiler
from tests.helpers import check, run_python, tolerance


def compile_c(build, *arrays):
    xs = [
        sn.tensor(f"x{i}", shape=(None,) * np.ndim(a), dtype=np.asarray(a).dtype)
        for i, a in enumerate(arrays)
    ]
    return sn.function(xs, build(*xs), backend="c")


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "float32", "float64"])
def test_floor_div_and_mod_follow_python(dtype):
    a = np.array([7, -7, 7, -7, 0, 5, 3], dtype=np.int64)
    b = np.array([2, 2, -2, -2, 3, 0, -1], dtype=np.int64)
    if dtype.startswith("u"):
        a, b = np.abs(a), np.abs(b)
    a, b = a.astype(dtype), b.astype(dtype)
    with np.errstate(all="ignore"):
        check(compile_c(sn.floor_div, a, b)(a, b), np.floor_divide(a, b))
        check(compile_c(sn.mod, a, b)(a, b), np.mod(a, b))


def test_float_floor_div_and_mod_edge_values():
    a = np.array([5.5, -5.5, 0.0, -0.0, np.inf, np.nan, 1e300, 3.0])
    b = np.array([2.0, 2.0, -3.0, 3.0, 2.0, 1.0, 1e-300, 0.0])
    with np.errstate(all="ignore"):
        got = compile_c(sn.floor_div, a, b)(a, b), compile_c(sn.mod, a, b)(a, b)
        want = np.floor_divide(a, b), np.mod(a, b)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


def test_max_min_propagate_nan_as_numpy():
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]])
    for reduce, ref in ((sn.max, np.max), (sn.min, np.min)):
        for axis in (None, 0, 1):
            f = compile_c(lambda x, r=reduce, ax=axis: r(x, axis=ax), a)
            check(f(a), ref(a, axis=axis))
    f = compile_c(sn.maximum, a, a[::-1])
    check(f(a, a[::-1]), np.maximum(a, a[::-1]))


def test_isnan_and_isinf_still_work():
    a = np.array([np.nan, np.inf, -np.inf, 1.0, 0.0])
    check(compile_c(lambda x: sn.isnan(x * 1.0), a)(a), np.isnan(a))
    check(compile_c(lambda x: sn.isinf(x + 0.0), a)(a), np.isinf(a))


def test_integer_overflow_wraps_like_numpy():
    a = np.array([2**62, -(2**63), 127], dtype=np.int64)
    check(compile_c(lambda x: x * 4 + x, a)(a), a * 4 + a)
    b = np.array([100, -128, 127], dtype=np.int8)
    check(compile_c(lambda x: x + x, b)(b), b + b)


def test_empty_reductions_follow_numpy():
    empty = np.zeros((0, 3))
    check(compile_c(lambda x: sn.sum(x, axis=0), empty)(empty), np.zeros(3))
    with pytest.raises(sn.SymnbError, match="zero-size|identity"):
        compile_c(sn.max, empty)(empty)


def test_fused_reduction_is_one_kernel():
    a = np.random.default_rng(0).standard_normal((5, 7))
    f = compile_c(lambda x: sn.sum(sn.exp(x) * 2, axis=1), a)
    check(f(a), (np.exp(a) * 2).sum(axis=1))
    assert [k.kind for k in f.kernels] == ["kernel"]
    assert "sum" in f.kernels[0].ops


def test_library_calls_are_listed_with_a_reason():
    a = np.random.default_rng(0).standard_normal((4, 3))
    f = compile_c(lambda x: sn.sort(x, axis=0), a)
    kinds = {k.kind for k in f.kernels}
    assert kinds & {"library", "blas"}
    assert all(k.reason for k in f.kernels if k.kind != "kernel")
    assert "library" in repr(f.kernels) or "blas" in repr(f.kernels)


def test_float16_is_left_to_numpy_and_says_so():
    a = np.arange(4, dtype=np.float16)
    f = compile_c(lambda x: x * 2 + 1, a)
    check(f(a), a * 2 + 1)
    assert f.kernels[0].kind == "library"
    assert "float16" in f.kernels[0].reason


def test_reused_buffers_do_not_change_returned_results():
    x = sn.vector("x")
    mid = sn.exp(x) + 1
    f = sn.function([x], [mid * 2, sn.sum(mid)], backend="c", optimize="none")
    first = f(np.zeros(3))
    kept = first[0].copy()
    f(np.ones(3))
    np.testing.assert_array_equal(first[0], kept)
    second = f(np.ones(4))
    check(second[0], (np.exp(np.ones(4)) + 1) * 2)


def test_default_backend_is_c_with_a_compiler():
    x = sn.vector("x")
    assert sn.function([x], x + 1).backend == "c"


def test_missing_compiler_falls_back_to_py_with_one_warning(monkeypatch):
    import symnb.backends as backends

    monkeypatch.setattr(sn.config, "cc", "symnb-no-such-compiler")
    monkeypatch.setattr(backends, "_warned_no_compiler", [])
    with pytest.raises(compiler.CompileError, match="sn.config.cc = 'symnb-no-such-compiler'"):
        compiler.find_compiler()  # backend="c" asked for: the error names the setting
    x = sn.vector("x")
    wanted = "sn.config.cc = 'symnb-no-such-compiler': no such.*backend='py'.*install a C"
    with pytest.warns(RuntimeWarning, match=wanted):
        f = sn.function([x], x + 1)
    assert f.backend == "py"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert default_backend() == "py"  # warned once only
    check(f(np.arange(3.0)), np.arange(3.0) + 1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("transposed", [False, True])
def test_gemm_runs_blas_with_scale_and_add_in_place(dtype, transposed):
    from symnb.ops.blas import Gemm

    z, x, y = sn.vector("z", dtype=dtype), sn.matrix("x", dtype=dtype), sn.matrix("y", dtype=dtype)
    alpha, beta = sn.scalar("alpha", dtype=dtype), sn.scalar("beta", dtype=dtype)
    out = Gemm()(z, alpha, x.T if transposed else x, y, beta)
    f = sn.function([z, alpha, x, y, beta], out, backend="c", optimize="none")
    rng = np.random.default_rng(0)
    zv, yv = rng.random(4).astype(dtype), rng.random((5, 4)).astype(dtype)
    xv = rng.random((5, 3) if transposed else (3, 5)).astype(dtype)
    a, b = np.array(2, dtype), np.array(0.5, dtype)
    check(f(zv, a, xv, yv, b), b * zv + a * ((xv.T if transposed else xv) @ yv))
    step = f.linker.steps[-1]
    assert step.kind == "blas" and "gemm" in f.kernels[-1].reason
    if step.blas is not None:  # one ?gemm call, in the Python executor too
        got = execute.run(f.linker.plan, [zv, a, xv, yv, b])[0]
        check(got, b * zv + a * ((xv.T if transposed else xv) @ yv))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_row_kernels_match_the_reference(name, dtype, axis):
    op = getattr(sn, name)
    a = (np.random.default_rng(0).standard_normal((3, 4, 40)) * 5).astype(dtype)
    a[1, 2, 3], a[2, 1, :] = np.nan, -np.inf
    x = sn.tensor("x", shape=(None, None, None), dtype=dtype)
    with np.errstate(all="ignore"):
        want = sn.function([x], op(x, axis=axis), backend="py")(a)
        f = sn.function([x], op(x, axis=axis), backend="c")
        tol = tolerance(dtype, 10)
        check(f(a), want, rtol=tol, atol=tol)
        view = a[:, ::-1, ::2]
        check(f(view), sn.function([x], op(x, axis=axis), backend="py")(view), rtol=tol, atol=tol)
    if axis == -1:
        assert f.kernels[0].kind == "kernel" and "exp" in f.kernels[0].source
    else:  # a row program runs along the last axis; other axes run the reference, and say so
        assert f.kernels[0].kind == "library" and "last axis" in f.kernels[0].reason


def test_process_exits_cleanly_after_threaded_kernels(tmp_path):
    """Exiting while OpenMP workers spin must not unmap their runtime (it crashed once)."""
    import os

    code = (
        "import numpy as np, symnb as sn\n"
        f"sn.config.compiledir = {str(tmp_path)!r}\n"
        "x = sn.vector('x')\n"
        "f = sn.function([x], sn.exp(-x * x) * sn.sin(x))\n"
        "a = np.linspace(0, 1, 2_000_000)\n"
        "for _ in range(3):\n"
        "    f(a)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.getcwd(), OMP_WAIT_POLICY="ACTIVE", OMP_NUM_THREADS="2")
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True)
        assert done.returncode == 0, done.stderr.decode()[-2000:]


def test_functions_runner_c_runs_never_load_cffi(tmp_path):
    """cffi is the Python executor's: a process whose function runner.c compiles and runs
    (elementwise, a reduction, a product) never imports it, nor does its profile, which the
    runner times itself."""
    script = (
        "import sys, numpy as np, symnb as sn\n"
        f"sn.config.compiledir = {str(tmp_path)!r}\n"
        "x, w = sn.matrix('x'), sn.matrix('w')\n"
        "f = sn.function([x, w], [sn.sum(sn.tanh(x @ w) * 2, axis=0)], backend='c')\n"
        "a, b = np.ones((4, 3)), np.ones((3, 5))\n"
        "(got,) = f(a, b)\n"
        "assert f.linker.runner() is not None, 'no runner'\n"
        "print('cffi' in sys.modules)\n"
        "f.profile(a, b)\n"
        "print('cffi' in sys.modules)\n"
    )
    assert run_python(script).split() == ["False", "False"]
