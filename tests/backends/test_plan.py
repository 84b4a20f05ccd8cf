"""One plan, two executors: every step kind runs through runner.c and through the Python
executor (symnb/backends/execute.py) on the same plan objects, against NumPy's reference."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import symnb as sn
from symnb.backends import execute
from symnb.backends import plan as plan_module
from symnb.backends.c import blas, cache, compiler, runner
from symnb.backends.plan import Gemm, Launch, Library, Repeat, View
from symnb.core.op import Op
from symnb.core.types import MAX_RANK, TensorType
from symnb.errors import ShapeError
from symnb.ops.broadcast import BroadcastLike, SumToLike
from symnb.ops.shape import ReducedSize, ReshapeLike
from tests.helpers import needs_c, tolerance

needs_runner = pytest.mark.skipif(runner.module() is None, reason="no C runner")


def executors(f, plan=None):
    """``{name: run(*args) -> outputs}`` for the plan of ``f`` (or ``plan``)."""
    plan = plan or f.linker.plan
    schedule = runner.schedule(plan)
    assert schedule is not None

    def in_c(*args):
        out = schedule(*args)
        assert out is not None, "runner.c declined the call"
        return list(out)

    def in_python(*args):
        return execute.run(plan, list(args))

    return {"runner.c": in_c, "python": in_python}


def agree(inputs, outputs, args, kinds=(), **kwargs):
    """Both executors of backend c's plan give the py backend's values, dtypes and shapes;
    the plan holds each step kind in ``kinds``."""
    f = sn.function(inputs, outputs, backend="c", **kwargs)
    want = sn.function(inputs, outputs, backend="py", **kwargs)(*args)
    want = want if isinstance(want, list) else [want]
    present = {type(step) for step in f.linker.plan.steps}
    assert set(kinds) <= present, (kinds, f.kernels)
    for name, run in executors(f).items():
        got = run(*args)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape, name
            tol = tolerance(w.dtype, 10)
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=name)
    return f


rng = np.random.default_rng(0)
#: backend "c"'s plans: their kernels need a C compiler, their runner the built runner.c
pytestmark = [needs_c, needs_runner]


# -- Launch ------------------------------------------------------------------------------------
def test_launch_elementwise_broadcast_and_0d():
    x, b, s = sn.matrix("x"), sn.vector("b"), sn.scalar("s")
    agree(
        [x, b, s],
        sn.tanh(x * s - b) + 1,
        [rng.random((4, 3)), rng.random(3), np.float64(2)],
        [Launch],
    )
    agree([s], s * s + 1, [np.float64(3.0)], [Launch])


def test_launch_empty_space_skips_the_kernel():
    x, b = sn.matrix("x"), sn.vector("b")
    agree([x, b], sn.exp(x) + b, [np.ones((0, 3)), np.ones(3)], [Launch])


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [0, 1, (0, 1)])
def test_launch_reduction_outputs_lack_the_reduced_axes(axis, keepdims):
    x = sn.matrix("x")
    out = sn.sum(sn.exp(x), axis=axis, keepdims=keepdims)
    agree([x], out, [rng.random((5, 7))], [Launch])


def test_launch_empty_reduction_declines_to_numpy():
    x = sn.matrix("x")
    f = agree([x], sn.sum(x, axis=1), [np.ones((3, 0))], [Launch])
    with pytest.raises(sn.SymnbError, match="zero-size|identity|empty"):
        execute.run(sn.function([x], sn.max(x, axis=1), backend="c").linker.plan, [np.ones((3, 0))])
    assert f.linker.plan.steps[0].empty == "decline"


def _add_plan(y_ndim=2):
    x, y = sn.matrix("x"), sn.tensor("y", shape=(None,) * y_ndim)
    f = sn.function([x, y], x + y, backend="c")
    (step,) = f.linker.plan.steps
    return f, step


def _with_step(f, step):
    return dataclasses.replace(f.linker.plan, steps=(step,))


def test_launch_in_place_takes_the_input_buffer_only_when_it_fits():
    f, step = _add_plan()
    plan = _with_step(f, dataclasses.replace(step, inplace=0))
    for name, run in executors(f, plan).items():
        x, y = rng.random((2, 3)), rng.random((2, 3))
        want = x + y
        (got,) = run(x, y)
        assert got is x, name
        np.testing.assert_array_equal(got, want)
        small, y = rng.random((1, 3)), rng.random((2, 3))  # broadcast: a new buffer
        (got,) = run(small, y)
        assert got is not small and got.shape == (2, 3), name
        np.testing.assert_array_equal(got, small + y)


def test_launch_into_writes_through_the_arrays_strides():
    """``Launch.into``: output 0 is written into that slot's array whatever its strides (the
    interior of padded planes), by the kernel or, where it declines, by its fallback's result
    copied there; an array that cannot take it is an error naming the node."""
    x, y, z = sn.matrix("x"), sn.matrix("y"), sn.matrix("z")
    f = sn.function([x, y, z], x + y, backend="c")
    (step,) = f.linker.plan.steps
    (declines,) = cache.load_many(
        [
            "#include <stdint.h>\nint sn_kernel(int64_t *a, char **p) "
            "{ (void)a; (void)p; return 1; }\n"
        ]
    )
    declining = type(step.kernel)("declines", None)
    declining.load(None, declines)
    for kernel in (step.kernel, declining):
        into = dataclasses.replace(step, into=2, kernel=kernel)
        plan = dataclasses.replace(f.linker.plan, steps=(into,))
        for name, run in executors(f, plan).items():
            xv, yv = rng.random((3, 4)), rng.random((3, 4))
            big = np.zeros((5, 9))
            interior = big[1:4, 2:9:2]  # rows 9 apart, every other column
            (got,) = run(xv, yv, interior)
            assert np.shares_memory(got, big), name
            np.testing.assert_array_equal(big[1:4, 2:9:2], xv + yv, err_msg=name)
            big[1:4, 2:9:2] = 0
            assert not big.any(), name  # nothing written outside the view
    with pytest.raises(execute.RuntimeFailure, match="cannot go into"):
        execute.run(plan, [rng.random((3, 4)), rng.random((3, 4)), np.zeros((4, 3))])
    with pytest.raises(execute.RuntimeFailure, match="cannot go into"):  # the runner's own
        runner.schedule(plan)(rng.random((3, 4)), rng.random((3, 4)), np.zeros((4, 3)))


def test_launch_inputs_with_absent_axes():
    """The generic ABI: y lacks axis 1 of the space, so it runs along axis 0 (y[:, None])."""
    f, step = _add_plan(y_ndim=1)
    (x_in, _), (y_in, _) = step.ins
    fallback = Library(
        _column_add, step.fallback.ins, step.fallback.outs, step.fallback.dtypes, step.node
    )
    absent = dataclasses.replace(step, ins=((x_in, ()), (y_in, (1,))), fallback=fallback)
    for name, run in executors(f, _with_step(f, absent)).items():
        x, y = rng.random((4, 3)), rng.random(4)
        (got,) = run(x, y)
        np.testing.assert_allclose(got, x + y[:, None], err_msg=name)
        (got,) = run(x, rng.random(5))  # does not broadcast: the fallback runs
        assert got.shape == (1,), name


def _column_add(x, y):
    return np.zeros(1)


def test_a_declining_kernel_runs_the_reference():
    (declines,) = cache.load_many(
        [
            "#include <stdint.h>\nint sn_kernel(int64_t *a, char **p) "
            "{ (void)a; (void)p; return 1; }\n"
        ]
    )
    f, step = _add_plan()
    ref = type(step.kernel)("declines", None)
    ref.load(None, declines)
    plan = _with_step(f, dataclasses.replace(step, kernel=ref))
    for name, run in executors(f, plan).items():
        x, y = rng.random((2, 3)), rng.random((2, 3))
        np.testing.assert_array_equal(run(x, y)[0], x + y, err_msg=name)


# -- Gemm --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gemm_matmul_and_fused_bias(dtype):
    x, w, b = sn.matrix("x", dtype=dtype), sn.matrix("w", dtype=dtype), sn.vector("b", dtype=dtype)
    xv, wv = rng.random((5, 4)).astype(dtype), rng.random((3, 4)).astype(dtype)
    bv = rng.random(3).astype(dtype)
    agree([x, w], x @ w.T, [xv, wv], [Gemm, View])
    f = agree([x, w, b], x @ w.T * 2 + b, [xv, wv, bv], [Gemm])
    assert "1  blas     s6 <- s2, s3, s0, s5, s4  (gemm)" in repr(f.linker.plan)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_products_split_between_threads_match_numpy(dtype):
    """Products of 4M-16M multiply-adds run in parts on OpenMP threads (runner_gemm.h's
    SMALL_SPLIT_MIN): a dense layer's three (64 x 9216 x 10 with its bias, the input's
    gradient through the transposed weights, the weights' SGD update from the transposed
    input), split by rows or by columns, agree with NumPy; so does a split product of an odd
    size, whose parts differ."""
    x, w, b = (sn.matrix(n, dtype=dtype) for n in "xwb")
    g = sn.matrix("g", dtype=dtype)
    xv = rng.standard_normal((64, 9216)).astype(dtype)
    wv = rng.standard_normal((9216, 10)).astype(dtype)
    bv = rng.standard_normal((1, 10)).astype(dtype)
    gv = rng.standard_normal((64, 10)).astype(dtype)
    agree([x, w, b], x @ w + b, [xv, wv, bv], [Gemm])
    agree([g, w], g @ w.T, [gv, wv], [Gemm])
    agree([x, g, w], w - 0.1 * (x.T @ g), [xv, gv, wv], [Gemm])
    agree([x, w], x @ w, [xv[:61, :8191], wv[:8191, :9]], [Gemm])


def test_a_plan_without_blas_says_so_and_runs_numpy(monkeypatch):
    monkeypatch.setitem(blas._found, "gemm", {})
    x, w = sn.matrix("x"), sn.matrix("w")
    f = agree([x, w], x @ w, [rng.random((3, 4)), rng.random((4, 2))], [Gemm])
    assert f.linker.plan.steps[0].blas is None
    assert "no ?gemm found" in f.kernels[0].reason


def test_gemm_without_blas_and_batched_matmul_run_numpy():
    x, w = sn.matrix("x"), sn.matrix("w")
    f = sn.function([x, w], x @ w, backend="c")
    (step,) = f.linker.plan.steps
    plan = _with_step(f, dataclasses.replace(step, blas=None))
    xv, wv = rng.random((3, 4)), rng.random((4, 2))
    for name, run in executors(f, plan).items():
        np.testing.assert_allclose(run(xv, wv)[0], xv @ wv, err_msg=name)
    for name, run in executors(f).items():  # empty operands: NumPy
        assert run(np.ones((3, 0)), np.ones((0, 2)))[0].shape == (3, 2), name
    t = sn.tensor("t", shape=(None, None, None))
    agree([t, w], t @ w, [rng.random((2, 3, 4)), wv], [Library])


# -- View --------------------------------------------------------------------------------------
def test_views_of_axes():
    x = sn.tensor("x", shape=(None, 1, None))
    out = [sn.transpose(x, (2, 1, 0)), sn.squeeze(x, 1), sn.expand_dims(x, 0)]
    agree([x], [o * 1 for o in out] + out, [rng.random((3, 1, 4))], [View])


def test_views_of_broadcast_reshape_and_size():
    g, like, flat = sn.vector("g"), sn.matrix("like"), sn.vector("flat")
    out = [BroadcastLike()(g, like) * 2, ReducedSize((0, 1))(like), ReshapeLike()(like, flat) + 0]
    args = [rng.random(2), rng.random((3, 2)), rng.random(6)]
    agree([g, like, flat], out, args, [View])
    agree([g, like, flat], out, [args[0], args[1].T.copy().T, args[2]], [View])  # F-ordered
    x = sn.matrix("x", shape=("n", 6))
    agree([x], sn.reshape(x, ("n", 2, -1)) * 1, [rng.random((4, 6))], [View])
    agree([x], sn.reshape(x.T, (-1,)) * 1, [rng.random((4, 6))], [View])  # a copy: NumPy


def test_a_sum_to_like_that_sums_nothing_is_a_view_else_the_reference_sums():
    """``SumToLike`` (a bias's gradient when the batch's sizes are unknown when compiling):
    where ``like`` has g's shape at run time, g itself (a view step, no Python); where
    ``like`` is broadcast along an axis (length 1) or has fewer axes, the fallback sums."""
    g, like = sn.matrix("g"), sn.matrix("like")
    out = [SumToLike()(g, like) * 2]
    f = agree([g, like], out, [rng.random((3, 4)), rng.random((3, 4))], [View])
    (view,) = [s for s in f.linker.plan.steps if isinstance(s, View)]
    assert view.how == "same_shape"
    agree([g, like], out, [rng.random((3, 4)), rng.random((1, 4))])
    agree([g, like], out, [rng.random((3, 4))[:, ::-1], rng.random((3, 1))])
    agree([g, like], out, [rng.random((3, 4)), rng.random((1, 1))])
    for name, run in executors(f).items():  # the view's result is g's values, not a copy
        a = rng.random((5, 2))
        np.testing.assert_array_equal(run(a, a)[0], 2 * a, err_msg=name)
        np.testing.assert_array_equal(run(a, a[:1])[0], 2 * a.sum(0, keepdims=True), name)
    # a result the caller owns: NumPy's copy (the library step), never a view of g
    h = sn.function([g, like], SumToLike()(g, like), backend="c")
    a = rng.random((2, 3))
    got = h(a, a)
    assert not np.shares_memory(got, a) and got.flags.writeable
    np.testing.assert_array_equal(got, a)


def test_shapes_are_views_made_in_c():
    """``Shape`` (``x.shape[0]``, the zeros a gradient allocates) is a view step: a new int64
    vector of the dims, also as an output the caller owns and of a 0-d or empty array."""
    x, s = sn.tensor("x", shape=(None, None, None)), sn.scalar("s")
    out = [sn.shape(x), sn.shape(x) * 2, sn.shape(s), sn.zeros_like(x) + x]
    f = agree([x, s], out, [rng.random((2, 3, 4)), np.float64(1.5)], [View])
    kinds = {step.how for step in f.linker.plan.steps if isinstance(step, View)}
    assert "shape" in kinds, kinds
    agree([x, s], out, [np.empty((0, 5, 1)), np.float64(0.0)])
    for name, run in executors(f).items():
        got = run(np.ones((4, 1, 2)), np.float64(2.0))
        assert got[0].dtype == np.int64 and got[0].tolist() == [4, 1, 2], name
        assert got[2].shape == (0,) and got[2].dtype == np.int64, name
        got[0][0] = 99  # a vector of its own
        assert run(np.ones((4, 1, 2)), np.float64(2.0))[0].tolist() == [4, 1, 2], name


BASIC_INDEXES = {
    "a:b": lambda x, a, b, c: x[a:b],
    "a:b:c": lambda x, a, b, c: x[a:b:c],
    "a": lambda x, a, b, c: x[a],
    ":, a, b:": lambda x, a, b, c: x[:, a, b:],
    "None, a:, ::c, 1": lambda x, a, b, c: x[None, a:, ::c, 1],
    "-1, :, a:b:2": lambda x, a, b, c: x[-1, :, a:b:2],
    "a, b, c": lambda x, a, b, c: x[a, b, c],
    "::-1, None": lambda x, a, b, c: x[::-1, None],
    "c:a:-2, ..., None": lambda x, a, b, c: x[c:a:-2, ..., None],
}


@pytest.mark.parametrize("index", list(BASIC_INDEXES))
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_basic_indexes_with_symbolic_parts_are_views(index, dtype):
    """Subtensor's basic index (ints, slices whose bounds are computed, new axes) is a
    read-only view made in C, as NumPy indexes: negative and out-of-range bounds clamp,
    negative steps, 0-d and empty results, bounds of any integer dtype, a source of any
    strides; a result the caller owns is a copy."""
    x = sn.tensor("x", shape=(None, None, None))
    a, b, c = (sn.scalar(name, dtype=dtype) for name in "abc")
    out = BASIC_INDEXES[index](x, a, b, c)
    f = agree([x, a, b, c], [out * 2], [rng.random((5, 6, 7)), *np.array([1, 4, 2], dtype)])
    assert "basic" in {s.how for s in f.linker.plan.steps if isinstance(s, View)}
    pick = np.random.default_rng(len(index))
    sources = [rng.random((5, 6, 7)), rng.random((7, 6, 5)).T, rng.random((9, 6, 14))[::2, :, ::-2]]
    signed = np.dtype(dtype).kind == "i"
    for source in sources:
        for _ in range(6):
            bounds = pick.integers(-8 if signed else 0, 9, 3)
            bounds[2] = bounds[2] or 1
            try:
                want = BASIC_INDEXES[index](source, *bounds)
            except IndexError:
                continue  # an int out of range: test_a_basic_index_out_of_range_...
            for name, run in executors(f).items():
                (got,) = run(source, *bounds.astype(dtype))
                assert got.shape == want.shape, (name, bounds)
                np.testing.assert_array_equal(got, want * 2, err_msg=f"{name} {bounds}")
    owned = sn.function([x, a, b, c], out, backend="c")
    source, bounds = rng.random((5, 6, 7)), np.array([1, 4, 2], dtype)
    got = owned(source, *bounds)
    np.testing.assert_array_equal(got, BASIC_INDEXES[index](source, *bounds))
    assert not np.shares_memory(got, source) and got.flags.writeable


def test_a_basic_index_out_of_range_or_of_step_zero_raises_numpys_error_at_the_users_line():
    x, i, k = sn.matrix("x"), sn.scalar("i", dtype="int64"), sn.scalar("k", dtype="int64")
    f = sn.function([x, i, k], x[i, ::k] * 2, backend="c")
    for name, run in executors(f).items():
        with pytest.raises(execute.RuntimeFailure, match="IndexError: index 3") as err:
            run(rng.random((3, 4)), np.int64(3), np.int64(1))
        assert "test_plan.py" in str(err.value), name
        assert not isinstance(err.value, ValueError), name
        with pytest.raises(execute.RuntimeFailure, match="slice step cannot be zero") as err:
            run(rng.random((3, 4)), np.int64(0), np.int64(0))
        assert isinstance(err.value, ValueError), name  # NumPy's ValueError: caught as one
        np.testing.assert_array_equal(run(np.eye(3), np.int64(-1), np.int64(-1))[0], [2, 0, 0])


def test_a_minibatch_sliced_from_a_shared_dataset_reads_its_rows_in_place():
    """Theano's ``givens={x: data[i * n:(i + 1) * n]}``: no copy of the rows each call."""
    values = rng.random((50, 8))
    data, i = sn.shared(values, name="data"), sn.scalar("i", dtype="int64")
    f = sn.function([i], sn.sum(data[i * 10 : (i + 1) * 10] ** 2, axis=0), backend="c")
    (view,) = [s for s in f.linker.plan.steps if isinstance(s, View)]
    assert view.how == "basic" and view.bounds
    for k in (0, 3, 4, 5, -1):
        want = (values[k * 10 : (k + 1) * 10] ** 2).sum(0)
        np.testing.assert_allclose(f(k), want, rtol=1e-12)
    assert f.runner.declined == 0


def test_a_view_that_does_not_fit_runs_the_reference():
    x = sn.tensor("x", shape=(None, None))
    f = sn.function([x], sn.squeeze(x, 1) + 0, backend="c", optimize="none")
    for name, run in executors(f).items():  # the runner raises the fallback's error itself
        with pytest.raises(execute.RuntimeFailure, match="squeeze") as err:
            run(rng.random((3, 2)))
        assert "test_plan.py" in str(err.value), name
        assert "\n  given float64[3, 2]\n" in str(err.value), name  # the run-time shape
    for name, run in executors(f).items():
        np.testing.assert_array_equal(run(np.ones((3, 1)))[0], np.ones(3), err_msg=name)


# -- Library -----------------------------------------------------------------------------------
class _Liar(Op):
    """Promises float32, returns float64."""

    def infer_types(self, x):
        return [TensorType("float32", x.type.shape)]

    def perform(self, x):
        return np.asarray(x, dtype=np.float64)


def test_library_steps_and_their_dtype_check():
    x = sn.vector("x")
    agree([x], [sn.sort(x), sn.argsort(x)], [rng.random(5)], [Library])
    for backend in ("c", "py"):
        f = sn.function([x], _Liar()(x), backend=backend)
        with pytest.raises(execute.RuntimeFailure) as err:
            f(np.ones(3))
        assert not isinstance(err.value, AssertionError)
        assert (
            "liar('x' (float64(?,))) failed: TypeError: its perform returned float64[3], "
            "not the float32[?] its infer_types promised" in str(err.value)
        ), backend
        assert "test_plan.py" in str(err.value), backend  # the line that built the node


class _Promises(Op):
    """Promises ``x``'s type (or ``nout`` of them); returns what ``_RESULTS[label](x)``
    gives (looked up, not held: the suite's kernels, recorded for the after-suite tests,
    are pickled with the ops they read)."""

    __props__ = ("label",)

    def __init__(self, label, result, nout=1):
        _RESULTS[label] = result
        self.label, self.nout = label, nout

    def infer_types(self, x):
        return [x.type] * self.nout

    def perform(self, x):
        return _RESULTS[self.label](x)


_RESULTS: dict = {}


#: (label, what perform returns, outputs, the message's part, the builtin the error is)
_BROKEN = [
    (
        "dtype",
        lambda x: x.astype(np.float32),
        1,
        "returned float32[2, 3], not the float64[2, 3]",
        RuntimeError,
    ),
    ("row", lambda x: x[:1], 1, "returned float64[1, 3], not the float64[2, 3]", ValueError),
    (
        "float",
        lambda x: float(x.sum()),
        1,
        "returned float (float64[] as an array), not the float64[2, 3]",
        ValueError,
    ),
    (
        "0-d",
        lambda x: np.asarray(x.sum()),
        1,
        "returned float64[], not the float64[2, 3]",
        ValueError,
    ),
    ("rank", lambda x: x[None], 1, "returned float64[1, 2, 3], not the float64[2, 3]", ValueError),
    (
        "count",
        lambda x: (x, x, x),
        2,
        "returned 3 results, not the 2 (float64[2, 3], float64[2, 3]) its infer_types promised",
        ValueError,
    ),
    ("one", lambda x: x, 2, "returned one result (float64[2, 3])", ValueError),
    (
        "second",
        lambda x: (x, x[:1]),
        2,
        "result 1 of its perform is float64[1, 3], not the float64[2, 3]",
        ValueError,
    ),
]


@pytest.mark.parametrize("label", [b[0] for b in _BROKEN])
def test_library_step_result_against_its_promise_on_every_executor(label):
    """A Python op's result that breaks its type's promise (dtype, rank, a fixed size, the
    number of results) is a RuntimeFailure naming the op, the promise, the result and the
    line that built it on both executors of one plan and on backend "py", never an
    AssertionError, a bare zip() error or a silent broadcast (a (1, 3) row for a (2, 3))."""
    _, result, nout, part, kind = next(b for b in _BROKEN if b[0] == label)
    x = sn.tensor("x", (2, 3), "float64")
    out = _Promises(label, result, nout)(x)
    out = out[nout - 1] if nout > 1 else out
    f = sn.function([x], out * x, backend="c")
    runs = {**executors(f), "py": sn.function([x], out * x, backend="py")}
    for name, run in runs.items():
        with pytest.raises(execute.RuntimeFailure) as err:
            run(np.arange(6.0).reshape(2, 3))
        message = str(err.value)
        assert isinstance(err.value, kind), name
        assert message.startswith(f"promises[label={label!r}]('x' (float64(2, 3))) failed"), name
        assert part in message, (name, message)
        assert "\n  given float64[2, 3]\n" in message, name
        assert "test_plan.py" in message.splitlines()[-1], name


def test_library_step_keeps_unknown_sizes_and_takes_a_list_of_results():
    """Only fixed sizes are checked (a None dim takes any size); several results may come
    as a list as well as a tuple, on both executors."""
    x = sn.tensor("x", (None, 3), "float64")
    a, b = _Promises("list", lambda v: [v + 1, v * 2], 2)(x)
    f = sn.function([x], a - b, backend="c")
    value = np.arange(12.0).reshape(4, 3)
    for name, run in executors(f).items():
        np.testing.assert_array_equal(run(value)[0], 1 - value, err_msg=name)


# -- Repeat (a scan's loop) --------------------------------------------------------------------
def _rnn(t=5, b=3, n=4):
    x = sn.tensor("x", shape=("T", b, n))
    h0, w = sn.matrix("h0"), sn.matrix("w")
    hs, _ = sn.scan(
        lambda xt, h, w: sn.tanh(xt + h @ w), sequences=x, outputs_info=h0, non_sequences=w
    )
    args = [rng.standard_normal((t, b, n)), rng.standard_normal((b, n)), 0.5 * rng.random((n, n))]
    return [x, h0, w], hs, args


def test_a_loop_and_its_backward_loop_run_in_the_runner():
    """History kept (the forward loop), states keeping only their last value and a loop run
    last row first (the backward loop of the gradient)."""
    inputs, hs, args = _rnn()
    grads = sn.grad(sn.sum(hs * hs), inputs)
    f = agree(inputs, [hs, *grads], args, [Repeat])
    loops = [s for s in f.linker.plan.steps if isinstance(s, Repeat)]
    assert [s.backwards for s in loops] == [False, True]
    assert not all(loops[1].history) and all(loops[0].history)
    assert {type(s) for s in loops[0].body.steps} >= {Gemm, Launch}  # no Python in the body


def test_a_loop_with_until_taps_plain_outputs_and_a_loop_inside():
    v0, a = sn.vector("v0"), sn.matrix("a")

    def power(v, a):
        w = a @ v
        w = w / sn.sqrt(sn.sum(w * w))
        return w, sn.until(sn.max(sn.abs(w - v)) < 1e-6)

    vs, _ = sn.scan(power, outputs_info=v0, non_sequences=a, n_steps=200)
    m = rng.random((3, 3))
    f = agree([v0, a], vs, [np.ones(3), m @ m.T], [Repeat])
    assert 1 < len(f(np.ones(3), m @ m.T)) < 200  # stopped early: rows of the steps run
    x = sn.vector("x")

    def inner(prev, now, acc):
        rows, _ = sn.scan(
            lambda r, c: c * 0.5 + r, sequences=sn.stack([prev, now]), outputs_info=sn.constant(0.0)
        )
        return acc + rows[-1], now - prev  # fed back, and a plain output

    taps = {"input": x, "taps": [-1, 0]}
    outs, _ = sn.scan(
        inner, sequences=taps, outputs_info=[sn.constant(0.0), None], go_backwards=True
    )
    f = agree([x], list(outs), [rng.random(6)], [Repeat])
    (outer,) = [s for s in f.linker.plan.steps if isinstance(s, Repeat)]
    assert any(isinstance(s, Repeat) for s in outer.body.steps)


def test_small_products_in_a_loop_take_the_blas_thread_control(monkeypatch):
    """runner.c gets OpenBLAS's set/get_num_threads for every gemm step (for small products
    on one thread and for splitting large products between threads), and takes small products
    inside loops to one thread only when ``sn.config.loop_products_on_one_thread`` is on
    (deprecated: the thread policy does it when the cores are busy)."""
    with pytest.warns(DeprecationWarning, match="thread policy"):
        monkeypatch.setattr(sn.config, "loop_products_on_one_thread", True)
    inputs, hs, args = _rnn()
    f = agree(inputs, hs, args, [Repeat])
    (loop,) = f.linker.plan.steps
    (gemm,) = [s for s in loop.body.steps if isinstance(s, Gemm)]
    if gemm.blas is None:
        pytest.skip("no BLAS found")
    assert runner._record(gemm)[6][2:4] == gemm.blas.threads != (0, 0)
    assert runner._record(gemm)[6][4:] == (1,)  # one thread inside loops
    sn.config.loop_products_on_one_thread = False  # (monkeypatch's undo: no warning)
    assert runner._record(gemm)[6][2:] == (*gemm.blas.threads, 0)
    for name, run in executors(f).items():  # the same values either way
        np.testing.assert_allclose(run(*args)[0], f(*args), rtol=1e-12, err_msg=name)


def test_the_runner_is_built_with_the_plans_serial_max():
    """One SERIAL_MAX (plan.py's), passed to runner.c as a define."""
    command = runner.compile_command(compiler.require_compiler(), "x.so")
    assert f"-DSN_SERIAL_MAX={plan_module.SERIAL_MAX}" in command


def test_a_library_step_inside_a_loop_runs_from_the_runner():
    x = sn.matrix("x")
    sums, _ = sn.scan(
        lambda row, acc: acc + sn.sort(row) * 1.5, sequences=x, outputs_info=sn.zeros(4)
    )
    f = agree([x], sums, [rng.random((5, 4))], [Repeat])
    (loop,) = f.linker.plan.steps
    assert Library in {type(s) for s in loop.body.steps}


def test_a_loop_not_as_planned_is_handed_to_python_which_names_it():
    h0 = sn.vector("h0")
    hs, _ = sn.scan(lambda h: h[1:] * 2, outputs_info=h0, n_steps=3)  # the state shrinks
    f = sn.function([h0], hs, backend="c")
    with pytest.raises(sn.ShapeError, match=r"state 'h0' has shape \(5,\).*\(4,\)"):
        f(np.ones(5))  # the loop step handed to Python, whose loop raises in the call
    assert f.runner.declined == 1 and f.runner.runs == 0
    n = sn.scalar("n", dtype="int64")
    inputs, _, args = _rnn()
    hs, _ = sn.scan(lambda xt, h: h + xt, sequences=inputs[0], outputs_info=inputs[1], n_steps=n)
    f = sn.function([inputs[0], inputs[1], n], hs, backend="c")
    for name, run in executors(f).items():
        got = run(*args[:2], np.int64(2))[0]
        np.testing.assert_allclose(got, args[1] + np.cumsum(args[0][:2], 0), err_msg=name)
    got = f(*args[:2], np.int64(0))  # no step to run: Python's empty rows
    assert got.shape == (0, 3, 4) and f.runner.declined >= 1
    with pytest.raises(sn.ShapeError, match="n_steps=9, but the sequence 'x' has only 5"):
        f(*args[:2], np.int64(9))


# -- rank --------------------------------------------------------------------------------------
def test_more_dims_than_max_rank_is_a_clear_error_at_the_users_line():
    with pytest.raises(
        ShapeError,
        match=rf"(?s)'big' would have {MAX_RANK + 1} dims.*at most "
        rf"{MAX_RANK}.*test_plan.py",
    ):
        sn.tensor("big", shape=(1,) * (MAX_RANK + 1))
    top = sn.tensor("top", shape=(1,) * MAX_RANK)
    with pytest.raises(ShapeError, match=rf"(?s){MAX_RANK + 1} dims.*test_plan.py"):
        sn.expand_dims(top, 0)
    f = sn.function([top], top * 2)
    assert f(np.ones((1,) * MAX_RANK)).shape == (1,) * MAX_RANK
