"""The OpenCL dialect renders the same kernel IR as the C dialect, and its kernels run on
PoCL (OpenCL on the CPU) with NumPy's results: the GPU dialects are small subclasses of the
shared renderer, not a second code generator."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from symnb.backends.opencl.dialect import OpenCLDialect

cl = pytest.importorskip("pyopencl", reason="pip install 'symnb[opencl]' (pyopencl with PoCL)")
from symnb.backends.opencl.launch import OpenCLKernel  # noqa: E402


@pytest.fixture(scope="module")
def context(tmp_path_factory):
    import os

    os.environ.setdefault("POCL_CACHE_DIR", str(tmp_path_factory.mktemp("pocl")))
    devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    if not devices:
        pytest.skip("no OpenCL device (pyopencl installed without PoCL?)")
    return cl.Context(devices=devices[:1])


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
    got = OpenCLKernel(node, context)(xv, yv, zv)
    want = np.exp(-xv * xv) * np.sin(yv) + np.log1p(np.abs(zv)) / (1 + xv * xv)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


def test_broadcast_and_non_contiguous_operands(context):
    a, b = sn.matrix("a"), sn.tensor("b", shape=(1, 5))
    node = fused_node([a, b], sn.tanh(a - b) * 2)
    base = np.random.default_rng(1).standard_normal((6, 10))
    av, bv = base[::2, ::-2], np.arange(5.0)[None, :]
    np.testing.assert_allclose(OpenCLKernel(node, context)(av, bv), np.tanh(av - bv) * 2,
                               rtol=1e-13, atol=1e-15)  # fmt: skip


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
    np.testing.assert_array_equal(OpenCLKernel(node, context)(av, bv), want)


def test_float_helpers_nan_and_signs(context):
    a, b = sn.vector("a"), sn.vector("b")
    node = fused_node([a, b], sn.maximum(a, b) + sn.sign(a) * sn.sigmoid(b))
    av = np.array([1.0, np.nan, -2.0, 0.0, -0.0, 3.0])
    bv = np.array([np.nan, 1.0, -3.0, 800.0, -800.0, 2.0])
    with np.errstate(all="ignore"):
        want = np.maximum(av, bv) + np.sign(av) / (1 + np.exp(-bv))
    np.testing.assert_allclose(OpenCLKernel(node, context)(av, bv), want, rtol=1e-13)


def test_comparisons_give_bool(context):
    a, b = sn.vector("a"), sn.vector("b")
    node = fused_node([a, b], sn.bitwise_and(a > b, sn.isfinite(a)))
    av, bv = np.array([1.0, 2.0, np.inf, np.nan]), np.array([0.0, 3.0, 1.0, 0.0])
    got = OpenCLKernel(node, context)(av, bv)
    assert got.dtype == np.bool_
    want = (av > bv) & np.isfinite(av)
    np.testing.assert_array_equal(got, want)


def test_same_ir_renders_in_both_dialects():
    from symnb.backends.c.dialect import CDialect
    from symnb.backends.kernel_ir import elemwise_kernel

    x = sn.vector("x", dtype="float32")
    kernel, _ = elemwise_kernel(fused_node([x], sn.exp(x) * 2 + 1))
    c_source, cl_source = CDialect().render(kernel), OpenCLDialect().render(kernel)
    assert "expf(" in c_source and "int sn_kernel(" in c_source
    assert "exp(" in cl_source and "expf(" not in cl_source
    assert "__kernel void sn_kernel(" in cl_source and "get_global_id(0)" in cl_source
