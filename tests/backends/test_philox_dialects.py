"""The Philox draws' kernels in the GPU dialects: the OpenCL C runs on PoCL and gives the
NumPy reference's numbers; the CUDA C compiles with NVRTC."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from symnb.backends.cuda.dialect import CUDADialect
from symnb.backends.kernels.lowering import lower
from symnb.backends.opencl.dialect import OpenCLDialect
from symnb.backends.render.source import render_program
from symnb.backends.schedule import gpu
from symnb.core.graph import ancestors
from symnb.core.variable import Constant

COUNTER = np.uint64(2**32 - 100)  # the blocks cross into the counter's high word


def _draw_nodes():
    """The Philox nodes (a draw with parameters is ordinary arithmetic on one of them)."""
    rng = sn.RandomStream(9)
    draws = [
        rng.uniform((257,), dtype="float64", low=-1.0, high=3.0),
        rng.uniform((257,), dtype="float32"),
        rng.normal((257,), dtype="float64"),
        rng.normal((257,), avg=1.0, std=2.0, dtype="float32"),
        rng.bernoulli((257,), p=0.3, dtype="float32"),
    ]
    return [_philox_node(d) for d in draws]


def _philox_node(var):
    return next(n for n in ancestors([var]) if isinstance(n.op, sn.ops.random_draws._Philox))


def _arrays(node):
    positions, key, counter = node.inputs
    return [np.arange(257, dtype=np.uint64), key.get_value(), COUNTER]


def test_opencl_renders_philox_and_matches_numpy(opencl_runtime):
    from symnb.backends.opencl.launch import OpenCLProgram, launch_record

    nodes = _draw_nodes()
    lowered = [lower(node, OpenCLDialect()) for node in nodes]
    program = OpenCLProgram(opencl_runtime, [low.kernel for low in lowered])
    for index, (node, low) in enumerate(zip(nodes, lowered)):
        by_var = dict(zip(map(id, node.inputs), _arrays(node)))
        arrays = [v.data if isinstance(v, Constant) else by_var[id(v)] for v, _ in low.inputs]
        (got,) = program.launch(index, launch_record(low), arrays)
        want = node.op.perform(*_arrays(node))
        assert got.dtype == want.dtype
        if isinstance(node.op, sn.ops.random_draws.PhiloxNormal):  # the device's log1p and cos
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        else:
            assert np.array_equal(got, want), node.op


def test_cuda_compiles_philox():
    pytest.importorskip("cuda.bindings.nvrtc", reason="pip install 'symnb[cuda]' for NVRTC")
    from symnb.backends.cuda.nvrtc import compile_ptx

    kernels = [lower(node, CUDADialect()).kernel for node in _draw_nodes()]
    names = [f"sn_kernel_{i}" for i in range(len(kernels))]
    schedules = [gpu.schedule(kernel, None) for kernel in kernels]
    ptx = compile_ptx(render_program(CUDADialect(), kernels, names, schedules), "compute_90")
    assert all(f".entry {name}(".encode() in ptx for name in names)
