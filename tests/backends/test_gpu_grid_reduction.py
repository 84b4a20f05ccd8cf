"""The two-pass grid reduction (``gpu.parts``, ``ReduceWriter.two_pass``): a reduction to fewer
outputs than the device has compute units, each long, splits each output's elements over
work-groups that write partial results, and a second launch combines them. Run on PoCL with
``DeviceFacts`` standing in for a GPU of 132 compute units, compared with NumPy, each call's
launches recorded (two for a split reduction, one otherwise); the CUDA source compiles with
NVRTC."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import symnb as sn
from symnb.backends.cuda.dialect import CUDADialect
from symnb.backends.kernels.lowering import lower
from symnb.backends.schedule import gpu
from symnb.backends.schedule.base import DeviceFacts
from tests.helpers import opencl_problem

RNG = np.random.default_rng(3636)
H100 = DeviceFacts(max_group=1024, local_bytes=49152, compute_units=132)


def _reduce_schedule(facts):
    x = sn.vector("x", dtype="float32")
    kernel = lower(sn.sum(x).owner, CUDADialect()).kernel
    return gpu.schedule(kernel, None, facts)


def test_few_long_outputs_split_over_work_groups_and_the_rest_keep_one_pass():
    s = _reduce_schedule(H100)
    assert (s.split, s.few, s.max_groups) == (gpu.SPLIT, 132, 132 * gpu.GROUPS_PER_UNIT)
    assert gpu.parts(s, (1 << 24,), 1) == 132 * gpu.GROUPS_PER_UNIT  # sum(x): the whole device
    assert gpu.parts(s, (1 << 24,), 1) * s.group <= 132 * 2048  # (a few groups per unit)
    assert gpu.parts(s, (3, 1 << 21), 3) == 352  # three long rows: a third of the groups each
    assert gpu.parts(s, (5 * gpu.SPLIT,), 1) == 5  # each part keeps SPLIT elements or more
    assert gpu.parts(s, (2 * gpu.SPLIT - 1,), 1) == 0  # too short: one group, one pass
    assert gpu.parts(s, (100,), 1) == 0
    assert gpu.parts(s, (132, 1 << 20), 132) == 0  # as many outputs as units: one pass fills it
    assert gpu.parts(s, (131, 1 << 20), 131) == 8
    small = _reduce_schedule(DeviceFacts(compute_units=1))
    assert gpu.parts(small, (1 << 24,), 1) == 0  # one compute unit: nothing to spread over


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_the_cuda_source_of_a_split_reduction_compiles_with_nvrtc(dtype):
    pytest.importorskip("cuda.bindings.nvrtc", reason="pip install 'symnb[cuda13]' for NVRTC")
    from symnb.backends.cuda.nvrtc import compile_ptx

    x = sn.vector("x", dtype=dtype)
    out = sn.any(x) if dtype == "bool" else sn.mean(x) if dtype == "float64" else sn.sum(x)
    source = CUDADialect().render(lower(out.owner, CUDADialect()).kernel)
    assert "part[b] = red[0]" in source and "head[0] = parts" in source
    for arch in ("compute_75", "compute_90"):
        assert b".entry sn_kernel" in compile_ptx(source, arch)


# -- on PoCL ---------------------------------------------------------------------------------
needs_opencl = pytest.mark.skipif(opencl_problem() is not None, reason=str(opencl_problem()))


@pytest.fixture
def gpu_like(monkeypatch):
    """The OpenCL runtime with a GPU's 132 compute units; its launches' work-group counts."""
    from symnb.backends.opencl.runtime import current_runtime

    runtime = current_runtime()
    monkeypatch.setattr(runtime, "facts", dataclasses.replace(runtime.facts, compute_units=132))
    launches = []
    real = runtime.launch

    def launch(kernel, groups, group_size, args):
        launches.append(groups)
        return real(kernel, groups, group_size, args)

    monkeypatch.setattr(runtime, "launch", launch)
    return launches


def _run(build, *arrays):
    syms = [
        sn.tensor(f"a{i}", shape=(None,) * a.ndim, dtype=str(a.dtype)) for i, a in enumerate(arrays)
    ]
    f = sn.function(syms, build(*syms), backend="opencl")
    return f(*arrays)


def _close(got, expected, rtol):
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-5, equal_nan=True)


FULL = {
    "sum": (sn.sum, np.sum),
    "mean": (sn.mean, np.mean),
    "max": (sn.max, np.max),
    "min": (sn.min, np.min),
    "prod": (sn.prod, np.prod),
}
#: lengths: not multiples of the work-group or of SPLIT, one just past two parts, a long one
LONG = [2 * gpu.SPLIT + 1, 100_003, (1 << 20) + 7]


@needs_opencl
@pytest.mark.parametrize("n", LONG)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", list(FULL))
def test_full_reductions_split_over_work_groups_agree_with_numpy(gpu_like, kind, dtype, n):
    ours, numpy = FULL[kind]
    x = RNG.standard_normal(n).astype(dtype)
    if kind == "prod" and dtype == "float64":
        x = 1 + x / 10_000
    elif kind == "prod":  # (a float32 product of 10^6 values near 1 is 1% off on any backend)
        x = np.ones(n, dtype)
        x[RNG.choice(n, 30, replace=False)] = [2] * 20 + [0.5] * 10  # 2**10, exactly
    got = _run(ours, x)
    _close(got, numpy(x.astype(np.float64)), rtol=1e-4 if dtype == "float32" else 1e-10)
    parts = min(132 * gpu.GROUPS_PER_UNIT, n // gpu.SPLIT)
    assert parts in gpu_like and 1 in gpu_like  # the first pass, then a group per output


@needs_opencl
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_and_boolean_reductions_split_exactly(gpu_like, dtype):
    i = RNG.integers(-1000, 1000, 300_001).astype(dtype)
    assert _run(sn.sum, i) == i.sum()
    assert _run(sn.max, i) == i.max()
    assert _run(sn.min, i) == i.min()
    big = np.full(300_001, 2**30, dtype)  # an int32 sum wraps as NumPy's does
    assert _run(sn.sum, big) == big.sum()
    assert _run(lambda a: sn.any(a > 998), i) == bool(np.any(i > 998))
    assert _run(lambda a: sn.all(a > -1001), i) == True  # noqa: E712
    assert _run(lambda a: sn.all(a > -999), i) == bool(np.all(i > -999))
    assert gpu_like.count(1) >= 7  # every one split: a second launch of one group each


@needs_opencl
@pytest.mark.parametrize("kind", ["sum", "max", "min"])
def test_a_nan_or_infinity_in_any_part_reaches_the_result(gpu_like, kind):
    ours, numpy = FULL[kind]
    base = RNG.standard_normal(100_003)
    for at in (0, 50_000, 100_002):
        x = base.copy()
        x[at] = np.nan
        assert np.isnan(_run(ours, x))
        x = np.abs(base) + 1
        x[at] = np.inf if kind != "min" else -np.inf
        assert _run(ours, x) == numpy(x)


AXES = {
    "three long rows": ((3, 70_001), 1, False),
    "three long columns": ((70_001, 3), 0, False),
    "keepdims": ((5, 40_000), 1, True),
    "middle of three": ((2, 30_000, 3), 1, True),
    "outer two": ((200, 3, 300), (0, 2), False),
}


@needs_opencl
@pytest.mark.parametrize("name", list(AXES))
@pytest.mark.parametrize("kind", ["sum", "mean", "max"])
def test_axis_reductions_to_few_outputs_split_and_agree(gpu_like, kind, name):
    shape, axis, keep = AXES[name]
    ours, numpy = FULL[kind]
    x = RNG.standard_normal(shape)
    got = _run(lambda a: ours(a, axis=axis, keepdims=keep), x)
    _close(got, numpy(x, axis=axis, keepdims=keep), rtol=1e-10)
    outputs = int(np.prod(numpy(x, axis=axis).shape))
    assert outputs in gpu_like  # the second pass: a group per output
    t = np.ascontiguousarray(x.T)  # the same values read transposed: other strides
    got = _run(lambda a: ours(a.T, axis=axis, keepdims=keep), t)
    _close(got, numpy(x, axis=axis, keepdims=keep), rtol=1e-10)


@needs_opencl
def test_a_fused_epilogue_after_a_split_reduction(gpu_like):
    x = RNG.standard_normal(123_457).astype(np.float32)
    got = _run(lambda a: sn.sum(a * a) / a.shape[0] + 1, x)
    _close(got, np.sum(x.astype(np.float64) ** 2) / x.size + 1, rtol=1e-4)


@needs_opencl
@pytest.mark.parametrize("n", [1, 63, 256, 4097, 2 * gpu.SPLIT - 1])
def test_short_reductions_keep_one_pass(gpu_like, n):
    x = RNG.standard_normal(n)
    _close(_run(sn.sum, x), x.sum(), rtol=1e-12)
    _close(_run(sn.mean, x), x.mean(), rtol=1e-12)
    assert len(gpu_like) == 2  # one launch each


@needs_opencl
def test_many_outputs_keep_one_pass(gpu_like):
    x = RNG.standard_normal((300, 20_000))
    _close(_run(lambda a: sn.sum(a, axis=1), x), x.sum(axis=1), rtol=1e-10)
    assert len(gpu_like) == 1


@needs_opencl
@pytest.mark.parametrize(
    "shape,axis,launches",
    [((300, 4), 1, 1), ((5000,), None, 1), ((100_003,), None, 2), ((3, 70_001), 1, 2)],
)
def test_a_float32_mean_divides_the_float32_sum(gpu_like, shape, axis, launches):
    """A work-item per output, a work-group per output, and the two launches: the mean is the
    float32 sum divided, as NumPy's and backend "c"'s (inf where the sum passes FLT_MAX);
    dividing the float64 accumulator first gave 3e38."""
    x = np.full(shape, 3e38, np.float32)
    x.flat[::7] = 1.0
    with np.errstate(over="ignore"):
        want = np.mean(x, axis=axis)
    assert np.isinf(want).all()
    got = _run(lambda a: sn.mean(a, axis=axis), x)
    assert len(gpu_like) == launches
    np.testing.assert_array_equal(got, want)
    small = np.full(shape, 3.0, np.float32)  # in range, the float32 sum rounds as before
    np.testing.assert_allclose(_run(lambda a: sn.mean(a, axis=axis), small), 3.0, rtol=1e-6)
