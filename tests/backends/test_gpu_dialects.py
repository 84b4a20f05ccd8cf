"""The GPU dialects render the same kernel descriptions as the C dialect: OpenCL kernels run on
PoCL (OpenCL on the CPU) with NumPy's results, CUDA kernels compile with NVRTC. The dialects
are small subclasses of the shared renderer, not second code generators."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from symnb.backends.c.dialect import CDialect
from symnb.backends.cuda.dialect import CUDADialect
from symnb.backends.kernels.lowering import lower
from symnb.backends.opencl.dialect import OpenCLDialect
from symnb.backends.opencl.launch import OpenCLProgram, launch_record

cl = pytest.importorskip("pyopencl", reason="pip install 'symnb[opencl]' (pyopencl with PoCL)")


@pytest.fixture(scope="module")
def context(opencl_runtime):
    return opencl_runtime


def run(context, node, *values):
    """``node``'s OpenCL kernel on ``values`` (the node's inputs, in order): its outputs."""
    lowered = lower(node, OpenCLDialect())
    given = {id(v): np.asarray(x) for v, x in zip(node.inputs, values)}
    arrays = [given.get(id(v), getattr(v, "data", None)) for v, _ in lowered.inputs]
    program = OpenCLProgram(context, [lowered.kernel])
    results = program.launch(0, launch_record(lowered), arrays)
    return results if results is None or len(results) > 1 else results[0]


def fused_node(inputs, output):
    """The single fused (Composite) node of the optimised graph."""
    f = sn.function(inputs, output, backend="py")
    nodes = f.graph.toposort()
    assert len(nodes) == 1, f.text()
    return nodes[0]


@pytest.mark.parametrize("dtype, rtol", [("float64", 1e-13), ("float32", 2e-6)])
def test_w1_expression_fused_matches_numpy(context, dtype, rtol):
    x, y, z = (sn.vector(k, dtype=dtype) for k in "xyz")
    out = sn.exp(-x * x) * sn.sin(y) + sn.log1p(sn.abs(z)) / (1 + x * x)
    node = fused_node([x, y, z], out)
    rng = np.random.default_rng(0)
    xv, yv, zv = (rng.uniform(-3, 3, 1000).astype(dtype) for _ in range(3))
    got = run(context, node, xv, yv, zv)
    want = np.exp(-xv * xv) * np.sin(yv) + np.log1p(np.abs(zv)) / (1 + xv * xv)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


def test_broadcast_and_non_contiguous_operands(context):
    a, b = sn.matrix("a"), sn.tensor("b", shape=(1, 5))
    node = fused_node([a, b], sn.tanh(a - b) * 2)
    base = np.random.default_rng(1).standard_normal((6, 10))
    av, bv = base[::2, ::-2], np.arange(5.0)[None, :]
    np.testing.assert_allclose(
        run(context, node, av, bv), np.tanh(av - bv) * 2, rtol=1e-13, atol=1e-15
    )


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_integer_helpers_keep_numpy_semantics(context, dtype):
    a, b = sn.vector("a", dtype=dtype), sn.vector("b", dtype=dtype)
    node = fused_node([a, b], (a // b) * 3 + a % b)
    info = np.iinfo(dtype)
    signs = [1, -1, 1, -1, 1, 1, 1, 1] if info.min < 0 else [1] * 8
    av = np.array([7, 7, 7, 7, 0, 5, info.max, info.min], dtype=dtype) * np.array(signs, dtype)
    bv = np.array([2, 2, 2, 2, 3, 0, 3, 7], dtype=dtype) * np.array(signs[::-1], dtype)
    with np.errstate(all="ignore"):
        want = (av // bv) * 3 + av % bv
    np.testing.assert_array_equal(run(context, node, av, bv), want)


def test_float_helpers_nan_and_signs(context):
    a, b = sn.vector("a"), sn.vector("b")
    node = fused_node([a, b], sn.maximum(a, b) + sn.sign(a) * sn.sigmoid(b))
    av = np.array([1.0, np.nan, -2.0, 0.0, -0.0, 3.0])
    bv = np.array([np.nan, 1.0, -3.0, 800.0, -800.0, 2.0])
    with np.errstate(all="ignore"):
        want = np.maximum(av, bv) + np.sign(av) / (1 + np.exp(-bv))
    np.testing.assert_allclose(run(context, node, av, bv), want, rtol=1e-13)


def test_comparisons_give_bool(context):
    a, b = sn.vector("a"), sn.vector("b")
    node = fused_node([a, b], sn.bitwise_and(a > b, sn.isfinite(a)))
    av, bv = np.array([1.0, 2.0, np.inf, np.nan]), np.array([0.0, 3.0, 1.0, 0.0])
    got = run(context, node, av, bv)
    assert got.dtype == np.bool_
    want = (av > bv) & np.isfinite(av)
    np.testing.assert_array_equal(got, want)


def test_same_description_renders_in_every_dialect():
    x = sn.vector("x", dtype="float32")
    kernel = lower(fused_node([x], sn.exp(x) * 2 + 1), CDialect()).kernel
    c_source, cl_source = CDialect().render(kernel), OpenCLDialect().render(kernel)
    cuda_source = CUDADialect().render(kernel)
    assert "expf(" in c_source and "int sn_kernel(" in c_source
    assert "exp(" in cl_source and "expf(" not in cl_source
    assert "__kernel void sn_kernel(" in cl_source and "get_global_id(0)" in cl_source
    assert 'extern "C" __global__ void sn_kernel(' in cuda_source and "expf(" in cuda_source


@pytest.mark.parametrize("axis", [0, 1, (0, 1)])
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod", "any"])
def test_reductions_over_any_axes(context, name, axis):
    x = sn.matrix("x")
    out = getattr(sn, name)(x, axis=axis)
    value = np.random.default_rng(2).uniform(0.5, 1.5, (37, 70))
    value[3, 5] = np.nan if name in ("max", "min") else value[3, 5]
    with np.errstate(all="ignore"):
        want = getattr(np, name)(value, axis=axis)
    np.testing.assert_allclose(run(context, out.owner, value), want, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_row_programs_meet_numpy(context, dtype):
    x = sn.tensor("x", shape=(None, None), dtype=dtype)
    y = sn.vector("y", dtype="int64")
    rng = np.random.default_rng(3)
    value = (rng.standard_normal((9, 300)) * 4).astype(dtype)
    labels = rng.integers(0, 300, 9)
    shifted = value.astype("float64") - value.max(1, keepdims=True)
    probs = np.exp(shifted) / np.exp(shifted).sum(1, keepdims=True)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(run(context, sn.softmax(x).owner, value), probs, rtol=rtol)
    lse = np.log(np.exp(shifted).sum(1)) + value.max(1)
    np.testing.assert_allclose(run(context, sn.logsumexp(x, axis=1).owner, value), lse, rtol=rtol)
    node = sn.ops.nnet.SoftmaxCrossEntropy(1)(x, y)[0].owner
    loss, got_probs = run(context, node, value, labels)
    picked = np.log(probs[np.arange(9), labels])
    np.testing.assert_allclose(loss, -picked, rtol=rtol * 10)
    np.testing.assert_allclose(got_probs, probs, rtol=rtol)
    labels[4] = 300  # out of range: the kernel declines, and the reference raises
    assert run(context, node, value, labels) is None
    labels[4] = -1  # so is a negative label (not the last class)
    assert run(context, node, value, labels) is None


def test_cuda_kernels_compile_with_nvrtc():
    pytest.importorskip("cuda.bindings.nvrtc", reason="pip install 'symnb[cuda]' for NVRTC")
    from symnb.backends.cuda.nvrtc import compile_ptx

    x, y = sn.matrix("x", dtype="float32"), sn.vector("y", dtype="int64")
    for out in (
        sn.sigmoid(x) // 2,
        sn.sum(x, axis=0),
        sn.max(x),  # a work-group's tree in shared memory, chosen per call
        sn.mean(sn.cast(x, "float64"), axis=1),
        sn.softmax(x),
        sn.ops.nnet.SoftmaxCrossEntropy(1)(x, y)[0],
    ):
        source = CUDADialect().render(lower(out.owner, CUDADialect()).kernel)
        for arch in ("compute_75", "compute_90"):
            assert b".entry sn_kernel" in compile_ptx(source, arch)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cuda_kernels_round_a_product_before_adding_it(dtype):
    """NVRTC fuses ``a*b + c`` into one FMA by default (one rounding): the last bit then
    differs from NumPy's and the C backend's (``-ffp-contract=off``); every build says
    ``--fmad=false``."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="pip install 'symnb[cuda]' for NVRTC")
    from symnb.backends.cuda.nvrtc import compile_ptx

    x, y, z = (sn.vector(n, dtype=dtype) for n in "xyz")
    for out in (x * y + z, z - 0.1 * y):
        source = CUDADialect().render(lower(fused_node([x, y, z], out), CUDADialect()).kernel)
        ptx = compile_ptx(source, "compute_90")
        assert b"mul.rn" in ptx and b"fma." not in ptx, ptx.decode()


@pytest.mark.parametrize("dialect", [CDialect, OpenCLDialect, CUDADialect])
def test_a_source_does_not_depend_on_what_the_dialect_rendered_before(dialect):
    """One renderer serves a whole compile; what one kernel used (math declarations, helpers)
    must not leak into the next one's source, or the cache key of equal kernels differs."""
    x = sn.matrix("x")
    node = fused_node([x], sn.tanh(x) * 3 - 1)
    v = sn.vector("v", dtype="int64")
    other = fused_node([v], sn.exp(v) // 3)
    alone = dialect().render(lower(node, dialect()).kernel)
    shared = dialect()
    shared.render(lower(other, shared).kernel)
    assert shared.render(lower(node, shared).kernel) == alone


def test_casts_to_bool_keep_every_nonzero_value(context):
    """OpenCL stores bools as uchar, where ``(uchar)0.5`` is 0 (found by tests/fuzz)."""
    a = sn.vector("a")
    av = np.array([0.5, -0.25, 0.0, 1e-300, np.nan, 2.0])
    node = fused_node([a], sn.cast(a * 1.0 - 0.0, "bool") | (a > 10))
    np.testing.assert_array_equal(run(context, node, av), av.astype(bool))


def test_float64_mod_and_floor_div_compile_with_nvrtc():
    """``copysign(0, b)`` was ambiguous between float and double in CUDA (found by tests/fuzz)."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="pip install 'symnb[cuda]' for NVRTC")
    from symnb.backends.cuda.nvrtc import compile_ptx

    x, y = sn.vector("x"), sn.vector("y")
    for out in (x % y, x // y):
        source = CUDADialect().render(lower(out.owner, CUDADialect()).kernel)
        assert b".entry sn_kernel" in compile_ptx(source, "compute_75")


def test_defined_conversions_and_wrapping_compile_with_nvrtc():
    """The float -> int helpers and the unsigned wrapping of integer arithmetic (issue #35)."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="pip install 'symnb[cuda]' for NVRTC")
    from symnb.backends.cuda.nvrtc import compile_ptx

    x, i = sn.vector("x"), sn.vector("i", dtype="int32")
    targets = ("int8", "int16", "int64", "uint32", "uint64")
    nodes = [fused_node([x], sn.cast(x * 2.0, t) + 1) for t in targets]
    nodes += [fused_node([i], -((i + 1) * i - i)), fused_node([x], sn.maximum(x, x * 2.0) + x**0.5)]
    nodes += [sn.sum(i * 3).owner, sn.prod(i).owner]
    for node in nodes:
        source = CUDADialect().render(lower(node, CUDADialect()).kernel)
        assert b".entry sn_kernel" in compile_ptx(source, "compute_75"), source


@pytest.mark.parametrize("dialect", [CDialect, OpenCLDialect, CUDADialect])
def test_the_smallest_int64_is_written_as_a_literal_every_compiler_takes(dialect):
    """9223372036854775808 fits no signed 64-bit literal, so ``-9223372036854775808LL`` is
    ill-formed C (NVRTC read it as unsigned); the start of an int64 max reduction uses it."""
    text = dialect().literal(-(2**63), "int64")
    assert "9223372036854775808" not in text and "9223372036854775807" in text
    assert dialect().literal(-(2**63) + 1, "int64").count("9223372036854775807") == 1
