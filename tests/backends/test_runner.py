"""The C runner (symnb/backends/c/runner.c): same results as the Python runtime, calls it
cannot take handed back with the same errors, and output buffers never reused while held."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import symnb as sn
from symnb.backends.c import runner
from symnb.backends.execute import RuntimeValueFailure
from symnb.errors import InputError
from tests.helpers import needs_c

pytestmark = [
    needs_c,
    pytest.mark.skipif(runner.module() is None, reason="the C runner could not be built"),
]


def both(inputs, outputs, **kwargs):
    """The function compiled with the runner, and without it."""
    fast = sn.function(inputs, outputs, backend="c", **kwargs)
    sn.config.c_runner = False
    try:
        slow = sn.function(inputs, outputs, backend="c", **kwargs)
    finally:
        sn.config.c_runner = True
    assert fast._runner is not None and slow._runner is None
    return fast, slow


def test_elementwise_broadcast_and_scalars_run_in_c():
    x, b = sn.matrix("x", shape=("n", 3)), sn.vector("b", shape=(3,))
    fast, slow = both([x, b], sn.tanh(x * 2 - b) + 1)
    xv, bv = np.random.default_rng(0).standard_normal((5, 3)), np.arange(3.0)
    np.testing.assert_allclose(fast(xv, bv), np.tanh(xv * 2 - bv) + 1, rtol=1e-12)
    np.testing.assert_array_equal(fast(xv, bv), slow(xv, bv))
    assert fast.runner.runs == 2 and fast.runner.declined == 0


def test_zero_d_inputs_accept_numpy_scalars():
    a, b = sn.scalar("a"), sn.scalar("b")
    f = sn.function([a, b], a * b + 1, backend="c")
    assert f(np.float64(2.0), np.asarray(3.0)) == 7.0
    assert f.runner.runs == 1
    assert f(2.0, 3) == 7.0  # Python numbers: converted by the runner itself
    assert f.runner.declined == 0
    assert f.runner.runs == 2
    assert f(2.0, 2**60) == 2.0**61 + 1  # an int float64 cannot hold exactly: the input checks
    assert f.runner.declined == 1


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # 1e300 as float32: inf
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "bool"])
def test_python_numbers_take_the_fast_path_as_the_input_checks_convert_them(dtype):
    """A Python float, int or bool for a 0-d input: the runner converts the values the input
    checks convert the same way (to the same value), and hands the rest to them, which
    convert them or raise the same errors as before."""
    a = sn.scalar("a", dtype=dtype)
    f = sn.function([a], a * 1 if dtype != "bool" else ~a, backend="c")
    values = [
        0.1,
        1e300,
        -2.5,
        float("nan"),
        float("inf"),
        3,
        -7,
        2**24 + 1,
        2**53 + 1,
        2**31,
        -(2**31),
        2**70,
        True,
        False,
    ]
    for value in values:
        try:
            (want,) = f._convert([value])
        except sn.SymnbError as exc:
            with pytest.raises(type(exc)):
                f(value)
            continue
        want = np.asarray(want)
        got = f(value)
        assert got.dtype == want.dtype, value
        expected = np.logical_not(want) if dtype == "bool" else want
        np.testing.assert_array_equal(got, expected, err_msg=repr(value))
    assert f.runner.runs >= 2  # (a bool input takes only True and False)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "uint32", "float16"])
def test_python_ints_for_narrow_zero_d_inputs_go_to_the_input_checks(dtype):
    """The runner stores a Python int only into a float64, float32, int32 or int64 element: a
    0 for a uint8 input was written as 8 bytes into its 1-byte array (valgrind: an invalid
    write). The input checks convert the rest."""
    a = sn.scalar("a", dtype=dtype)
    f = sn.function([a], a if dtype == "bool" else a + 1, backend="c")
    for value in (0, 1):
        want = np.asarray(value, dtype=dtype) if dtype == "bool" else np.asarray(value + 1, dtype)
        np.testing.assert_array_equal(f(value), want)
    assert f.runner.declined == 2


@pytest.mark.parametrize("kind", [float, np.float64, np.float32, int, np.int64])
def test_a_reused_zero_d_argument_array_never_changes_a_held_result(kind):
    """A Python or NumPy number for a 0-d input is written into the array the last call used
    when nothing holds it now: a result that is that array (``borrow=True``), a view of it or
    a value computed from it keeps its value through the next calls, and each call reads its
    own argument."""
    a, b = sn.scalar("a"), sn.scalar("b")
    same = sn.function([a], a, backend="c", borrow=True)  # the result is the argument's array
    view = sn.function([a], a.reshape((1,)), backend="c", borrow=True)
    product = sn.function([a, b], a * b + 1, backend="c")
    held = [(same(kind(v)), view(kind(v)), product(kind(v), kind(v + 1))) for v in range(1, 6)]
    for v, (x, y, z) in enumerate(held, start=1):
        assert x == v and x.shape == () and x.dtype == np.float64
        np.testing.assert_array_equal(y, [v])
        assert z == v * (v + 1) + 1
    for _ in range(3):  # nothing held: the same two arrays each call, read afresh
        assert product(kind(2), kind(3)) == 7 and product(kind(4), kind(5)) == 21
    if kind in (float, np.float64, int):  # the others' dtype is not the input's: converted
        assert product.runner.declined == 0  # by the input checks (the call is declined)


def test_non_contiguous_and_negative_strides():
    x = sn.matrix("x")
    fast, slow = both([x], sn.exp(x) * 2)
    base = np.random.default_rng(1).standard_normal((6, 8))
    for view in (base[::2, ::-1], base.T, base[::-1, 1:7:3]):
        np.testing.assert_allclose(fast(view), np.exp(view) * 2, rtol=1e-12)
        np.testing.assert_array_equal(fast(view), slow(view))
    assert fast.runner.declined == 0


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [0, 1, (0, 1)])
def test_reductions_match_numpy(axis, keepdims):
    x = sn.matrix("x")
    fast, _ = both([x], sn.sum(sn.exp(x), axis=axis, keepdims=keepdims))
    xv = np.random.default_rng(2).standard_normal((4, 7))
    got = fast(xv)
    want = np.exp(xv).sum(axis=axis, keepdims=keepdims)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert fast.runner.runs == 1


def test_empty_reduction_is_handed_back_to_numpy():
    x = sn.matrix("x")
    f = sn.function([x], sn.max(x, axis=1), backend="c")
    with pytest.raises(Exception, match="zero-size|identity|empty"):
        f(np.zeros((3, 0)))
    assert f.runner.declined == 1


def test_library_steps_multiple_outputs_and_updates():
    w = sn.shared(np.ones((3, 2)), name="w")
    x = sn.matrix("x", shape=("batch", 3))
    y = x @ w
    loss = sn.mean(sn.tanh(y))
    step = {w: w - 0.1 * sn.grad(loss, w)}
    fast = sn.function([x], [loss, sn.sort(y, axis=0)], updates=step, backend="c")
    xv = np.arange(12.0).reshape(4, 3) / 10
    w0 = w.get_value().copy()
    got_loss, got_sorted = fast(xv)
    np.testing.assert_allclose(got_sorted, np.sort(xv @ w0, axis=0), rtol=1e-12)
    np.testing.assert_allclose(got_loss, np.tanh(xv @ w0).mean(), rtol=1e-12)
    dw = xv.T @ ((1 - np.tanh(xv @ w0) ** 2) / 8)
    np.testing.assert_allclose(w.get_value(), w0 - 0.1 * dw, rtol=1e-12)
    assert fast.runner.runs == 1 and fast.runner.declined == 0


def test_bad_input_gets_the_python_runtime_error():
    x = sn.matrix("x", shape=("n", 3))
    f = sn.function([x], x * 2, backend="c")
    with pytest.raises(InputError, match=r"input 0 'x'.*axis 1 has length 4, expected 3"):
        f(np.zeros((2, 4)))
    with pytest.raises(InputError, match="float64"):
        f(np.zeros((2, 3), dtype=np.complex128))


def test_named_dims_must_agree_across_inputs():
    x, y = sn.vector("x", shape=("n",)), sn.vector("y", shape=("n",))
    f = sn.function([x, y], x + y, backend="c")
    with pytest.raises(InputError, match="dim 'n'"):
        f(np.zeros(3), np.zeros(4))
    assert f.runner.declined == 1


def test_expression_dims_are_checked_in_python_then_the_runner_runs_the_call():
    """An input of ``("n+1",)`` or a shared value of ``("2*m",)``: runner.c checks no dim
    computed from names, so the input checks check them first, and the runner runs the call
    (the whole call ran in the Python executor before, cffi launching each kernel)."""
    a, b = sn.tensor("a", shape=("n",)), sn.tensor("b", shape=("n+1",))
    f = sn.function([a, b], sn.exp(a) * 2 + b[1:], backend="c")
    x, y = np.linspace(0.1, 0.9, 4), np.linspace(-1.0, 2.0, 5)
    np.testing.assert_allclose(f(x, y), np.exp(x) * 2 + y[1:], rtol=1e-12)
    assert f.runner.runs == 1
    with pytest.raises(InputError, match=r"axis 0 \(n\+1\) should be 5 with n=4"):
        f(x, y[:4])
    assert f.runner.runs == 1  # (refused before the runner)
    s = sn.shared(np.arange(6.0), shape=("2*m",), name="S")
    c = sn.tensor("c", shape=("m",))
    g = sn.function([c], c + s[:3], updates={s: s * 2}, backend="c")
    np.testing.assert_array_equal(g(np.ones(3)), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(s.get_value(), np.arange(6.0) * 2)
    assert g.runner.runs == 1
    with pytest.raises(InputError, match="dim 'm'"):
        g(np.ones(4))
    assert g.runner.runs == 1 and s.get_value()[1] == 2.0


def test_more_named_dims_than_the_runner_binds_are_checked_in_python_then_it_runs():
    """Past ``runner.MAX_NAMES`` named dims runner.c binds no more names: the input checks
    check those calls first and the runner still runs them."""
    count = runner.MAX_NAMES + 3
    xs = [sn.tensor(f"x{i}", shape=(f"n{i}",)) for i in range(count)]
    last = sn.tensor("last", shape=(f"n{count - 1}",))
    f = sn.function([*xs, last], sn.sum(sn.stack([sn.sum(x) for x in xs])) + last, backend="c")
    values = [np.full(i % 4 + 1, float(i)) for i in range(count)]
    tail = np.linspace(0.0, 1.0, len(values[-1]))
    want = sum(v.sum() for v in values) + tail
    np.testing.assert_allclose(f(*values, tail), want, rtol=1e-12)
    assert f.runner.runs == 1 and f.runner.declined == 0
    with pytest.raises(InputError, match=f"dim 'n{count - 1}'"):
        f(*values, np.zeros(len(tail) + 1))
    assert f.runner.runs == 1  # (refused before the runner)


def test_a_result_too_big_to_exist_is_an_error_naming_the_node():
    """A kernel's result of 2**62 elements (two broadcast inputs that hold one number): NumPy's
    "array is too big" in runner.c's allocation was raised bare, naming no node and no line."""
    x, y = sn.vector("x"), sn.vector("y")
    f = sn.function([x, y], sn.exp(x[:, None] * y[None, :]), backend="c")
    big = np.broadcast_to(np.ones(1), (2**31,))  # (stride 0: no memory)
    with pytest.raises(RuntimeValueFailure, match="array is too big") as info:
        f(big, big)
    assert "float64[2147483648, 1]" in str(info.value)
    assert "test_runner.py" in str(info.value)
    np.testing.assert_allclose(f(np.ones(2), np.ones(3)), np.full((2, 3), np.e))


def test_runtime_broadcast_clash_names_the_node():
    x, y = sn.vector("x"), sn.vector("y")
    f = sn.function([x, y], x + y, backend="c")
    with pytest.raises(sn.SymnbError, match=r"add.*\(3,\).*\(4,\)|\(3,\).*\(4,\)") as err:
        f(np.zeros(3), np.zeros(4))
    assert "test_runner.py" in str(err.value)
    assert f.runner.declined == 1


def test_held_results_are_never_overwritten():
    x = sn.vector("x")
    f = sn.function([x], x * 3, backend="c")
    first = f(np.ones(5))
    view = f(np.full(5, 2.0))[1:]
    third = f(np.full(5, 4.0))
    np.testing.assert_array_equal(first, np.full(5, 3.0))
    np.testing.assert_array_equal(view, np.full(4, 6.0))
    np.testing.assert_array_equal(third, np.full(5, 12.0))
    assert len({id(first), id(view.base), id(third)}) == 3


def test_a_dropped_result_buffer_is_reused():
    x = sn.vector("x")
    f = sn.function([x], x * 3, backend="c")
    address = f(np.ones(1000)).ctypes.data  # the result is dropped at once
    again = f(np.ones(1000))
    assert again.ctypes.data == address
    assert f.runner.pooled() >= 1


def test_in_place_steps_do_not_touch_the_arguments():
    x = sn.vector("x")
    f = sn.function([x], sn.exp(sn.sin(x) * 2) + sn.sort(x), backend="c")
    xv = np.array([3.0, 1.0, 2.0])
    keep = xv.copy()
    f(xv)
    np.testing.assert_array_equal(xv, keep)


def test_wrong_argument_count_is_the_python_error():
    x = sn.vector("x")
    f = sn.function([x], x + 1, backend="c")
    with pytest.raises(InputError, match="takes 1 input, got 2"):
        f(np.ones(2), np.ones(2))


def test_a_runner_that_cannot_be_built_warns_once_and_python_runs(monkeypatch, tmp_path):
    monkeypatch.setattr(runner, "_module", [])
    monkeypatch.setattr(runner, "_problem", [])
    monkeypatch.setattr(runner, "_installed", lambda: None)
    monkeypatch.setattr(runner, "_cached_path", lambda cc: str(tmp_path / "_runner_x.so"))
    monkeypatch.setattr(
        runner,
        "compile_command",
        lambda cc, target: [
            cc,
            "-DSN_BROKEN",
            "-x",
            "c",
            "/dev/null",
            "-c",
            "-o",
            "/nonexistent/x",
        ],
    )
    x = sn.vector("x")
    with pytest.warns(RuntimeWarning, match="C runner could not be built"):
        f = sn.function([x], x * 2, backend="c")
    assert f._runner is None
    np.testing.assert_array_equal(f(np.arange(3.0)), [0.0, 2.0, 4.0])


@pytest.mark.parametrize(
    ("kernels", "built", "used"),
    [
        ("libgomp", "libgomp", True),
        ("libomp", "libgomp", False),  # CC=clang beside pip's GCC build: CI's clang pass
        ("libgomp", "libomp", False),
        ("libgomp", "", False),  # a build without OpenMP cannot give the kernels a team
        ("", "libgomp", True),  # kernels without OpenMP (Apple's clang): any build serves
        ("", "", True),
    ],
)
def test_the_installed_runner_serves_only_kernels_of_its_openmp_runtime(
    monkeypatch, kernels, built, used
):
    monkeypatch.setattr(runner.compiler, "find_compiler", lambda: "/usr/bin/cc")
    monkeypatch.setattr(runner.compiler, "problem", lambda: None)
    monkeypatch.setattr(runner.compiler, "openmp_runtime", lambda cc: kernels)
    assert runner._same_openmp(built) is used


@pytest.mark.parametrize(
    ("marker", "kernels", "loaded"),
    [
        ("SYMNB-RUNNER-BUILD {hash} libgomp;", "libgomp", True),
        ("SYMNB-RUNNER-BUILD {hash} libgomp;", "libomp", False),  # CC=clang's kernels
        ("SYMNB-RUNNER-BUILD {hash} ;", "", True),  # no OpenMP on either side
        ("SYMNB-RUNNER-BUILD 0123456789abcdef libgomp;", "libgomp", False),  # another runner.c
        ("no marker at all", "libgomp", False),  # a build from before the marker
    ],
)
def test_an_installed_runner_that_will_not_serve_is_never_loaded(
    monkeypatch, tmp_path, marker, kernels, loaded
):
    """Its source hash and OpenMP runtime are read from the file: importing a libgomp build
    to find out, beside kernels linking LLVM's libomp, would load both runtimes."""
    build = tmp_path / "_runner.so"
    build.write_bytes(b"\x7fELF..." + marker.format(hash=runner.source_hash()).encode() + b"...")
    imported = []
    monkeypatch.setattr(
        runner.importlib.machinery.PathFinder,
        "find_spec",
        lambda name, path: types.SimpleNamespace(origin=str(build)),
    )
    monkeypatch.setattr(runner.importlib, "import_module", lambda name: imported.append(name))
    monkeypatch.setattr(runner.compiler, "find_compiler", lambda: "/usr/bin/cc")
    monkeypatch.setattr(runner.compiler, "problem", lambda: None)
    monkeypatch.setattr(runner.compiler, "openmp_runtime", lambda cc: kernels)
    runner._installed()
    assert imported == ([runner.MODULE] if loaded else [])


@pytest.mark.parametrize("installed", ["stale", "current"])
def test_the_installed_build_is_the_file_beside_runner_c_not_a_loaded_cache_build(
    monkeypatch, tmp_path, installed
):
    """Once a build from the cache is imported, ``sys.modules`` holds it under the installed
    build's name: the W5 benchmark, asking afterwards whether pip's build serves, took the
    cache's build for it and hid that every cold probe had built the runner (1.4 s of 0.2)."""
    marker = "SYMNB-RUNNER-BUILD {} libgomp;"
    current = marker.format(runner.source_hash()).encode()
    in_cache = tmp_path / "cache" / "runner.so"
    in_cache.parent.mkdir()
    in_cache.write_bytes(b"\x7fELF..." + current + b"...")
    package = tmp_path / "package"
    package.mkdir()
    suffix = runner.importlib.machinery.EXTENSION_SUFFIXES[0]
    beside = package / ("_runner" + suffix)
    old = marker.format("0123456789abcdef").encode()
    beside.write_bytes(b"\x7fELF..." + (current if installed == "current" else old) + b"...")
    spec = runner.importlib.util.spec_from_file_location(runner.MODULE, in_cache)
    monkeypatch.setitem(sys.modules, runner.MODULE, types.SimpleNamespace(__spec__=spec))
    monkeypatch.setattr(runner, "SOURCE", package / "runner.c")
    monkeypatch.setattr(runner, "_same_openmp", lambda built: built == "libgomp")
    expected = str(beside) if installed == "current" else None
    assert runner.installed_build() == expected


def test_the_loaded_runner_carries_the_marker_it_was_chosen_by():
    built = runner.module()
    if not hasattr(built, "BUILD"):
        pytest.skip("a runner built without SN_RUNNER_HASH")
    assert built.BUILD == f"SYMNB-RUNNER-BUILD {runner.source_hash()} {built.OPENMP};"
    if runner._installed() is built:  # (a build in the cache is loaded through a descriptor)
        assert runner.build_of(built.__file__) == (runner.source_hash(), built.OPENMP)


@pytest.mark.parametrize(
    ("banner", "flags", "runtime"),
    [
        ("gcc (Debian 12.2.0-14) 12.2.0", ("-O3", "-fopenmp"), "libgomp"),
        ("cc (Ubuntu 13.2.0-4ubuntu3) 13.2.0", ("-fopenmp",), "libgomp"),
        ("Debian clang version 14.0.6", ("-fopenmp",), "libomp"),
        ("Apple clang version 15.0.0 (clang-1500.3.9.4)", ("-O3",), ""),
        ("gcc (GCC) 14.1.0", ("-O3",), ""),  # sn.config.openmp = False
    ],
)
def test_the_kernels_openmp_runtime_is_named_from_the_compiler(monkeypatch, banner, flags, runtime):
    monkeypatch.setattr(runner.compiler, "likely_flags", lambda cc: flags)
    monkeypatch.setattr(runner.compiler, "compiler_identity", lambda cc: banner)
    assert runner.compiler.openmp_runtime("/usr/bin/cc") == runtime


@needs_c
def test_the_loaded_runner_links_the_kernels_openmp_runtime():
    built = runner.module()
    if built is None or not hasattr(built, "OPENMP"):
        pytest.skip("no C runner")
    wanted = runner.compiler.openmp_runtime(runner.compiler.find_compiler())
    assert wanted in ("", built.OPENMP)


def test_two_threads_calling_one_function_get_their_own_results():
    import threading

    x = sn.matrix("x", shape=(64, 1000))
    w = sn.tensor("w", shape=(1000, 8))
    out = [sn.softmax(sn.tanh(x) * 2, axis=-1), sn.exp(x) @ w, sn.sum(x * x, axis=1)]
    f = sn.function([x, w], out, backend="c")
    rng = np.random.default_rng(5)
    wv = rng.standard_normal((1000, 8))
    problems = []

    def work(seed: int, python_numbers: bool) -> None:
        try:
            compare(seed, python_numbers)
        except Exception as exc:  # a worker's exception must fail the test, not vanish
            problems.append(f"thread {seed}: {type(exc).__name__}: {exc}")

    def compare(seed: int, python_numbers: bool) -> None:
        local = np.random.default_rng(seed)
        for _ in range(25):
            xv = local.standard_normal((64, 1000))
            args = (xv.tolist(), wv) if python_numbers else (xv, wv)
            soft, prod, sq = f(*args)
            e = np.exp(np.tanh(xv) * 2)
            if not np.allclose(soft, e / e.sum(axis=1, keepdims=True), rtol=1e-10):
                problems.append("softmax")
            if not np.allclose(prod, np.exp(xv) @ wv, rtol=1e-10):
                problems.append("matmul")
            if not np.allclose(sq, (xv * xv).sum(axis=1), rtol=1e-10):
                problems.append("sum")

    threads = [threading.Thread(target=work, args=(s, s == 3)) for s in (1, 2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert problems == []
    assert f.runner.runs >= 50 and f.runner.declined >= 25  # lists take the Python runtime


def test_every_file_runner_c_includes_is_hashed_and_built_in_the_same_order():
    """A header left out of ``runner.SOURCES`` (or setup.py's ``FILES``) would let a build of
    an older header pass for the current one."""
    included, todo = set(), [runner.SOURCE]
    while todo:
        for name in re.findall(r'#include "([^"]+)"', todo.pop().read_text()):
            path = (runner.SOURCE.parent / name).resolve()
            if path not in included:
                included.add(path)
                todo.append(path)
    hashed = [p.resolve() for p in runner.SOURCES]
    assert set(hashed) == included | {runner.SOURCE.resolve()}
    root = Path(runner.__file__).resolve().parents[3]
    setup = (root / "setup.py").read_text()
    constants = dict(re.findall(r'^([A-Z]+) = "(symnb/[^"]+)"', setup, re.M))
    (files,) = re.findall(r"^FILES = \(([^)]*)\)", setup, re.M)
    built = [(root / constants[name.strip()]).resolve() for name in files.split(",")]
    assert built == hashed
