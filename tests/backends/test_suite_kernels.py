"""Every kernel the test suite generates, rendered by every dialect: the OpenCL C of those the
suite did not already run through backend="opencl" runs on PoCL against the NumPy reference of
the node(s) it computes, and the CUDA C of each distinct source compiles with NVRTC for
compute_75 and compute_90. The kernels are those
lowered while the rest of the suite ran (tests/conftest.py records them), so the op suite's
kernels are all here; these tests run last. Run alone, they first build a small set of their
own."""

from __future__ import annotations

import functools
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import symnb as sn
from symnb.backends.cuda.dialect import CUDADialect
from symnb.backends.kernels.lowering import lower
from symnb.backends.opencl.dialect import OpenCLDialect
from symnb.backends.render.source import render_program
from symnb.backends.schedule import gpu
from symnb.core.variable import Constant
from tests.conftest import KERNELS_DIR, LOWERED, UNSAVED, launched
from tests.helpers import OPENCL_CHUNK

pytestmark = pytest.mark.after_suite
CHUNK = OPENCL_CHUNK  # kernels per program: one device-compiler run each
#: NVRTC's whole front end and its code generation to PTX with fewer optimization passes: about
#: an eighth of the time of its defaults on the suite's kernels (docs/gpu_backends.md); the
#: dialect tests compile each kind of kernel with the defaults, as backend="cuda" does. NVRTC
#: before 12.9 rejects the option: there ``fast_compile_options`` gives the defaults


def kernels() -> list:
    assert not UNSAVED, "kernels the suite lowered but could not pass on:\n" + "\n".join(UNSAVED)
    if KERNELS_DIR:  # make test: the parallel run's processes left what they lowered there
        assert len(LOWERED) >= 20, f"the suite left {len(LOWERED)} kernels in {KERNELS_DIR}"
    elif len(LOWERED) < 20:  # run alone: lower a few of each shape first
        x, y = sn.matrix("x", dtype="float32"), sn.vector("y", dtype="int64")
        for out in (
            sn.exp(x) * 2 - x,
            sn.sum(x, axis=0),
            sn.max(x * x, axis=1),
            sn.softmax(x),
            sn.logsumexp(x, axis=1),
            sn.where(x > 1, x, 0.5),
            sn.ops.nnet.SoftmaxCrossEntropy(1)(x, y)[0],
        ):
            lower(out.owner, OpenCLDialect())
    return list(LOWERED.values())


def sample(lowered, rng) -> dict:
    """Random values for the kernel's operands: every named or unknown dim 3, integers in
    [0, 3) (labels in range), floats in [0.5, 2)."""
    values = {}
    for var, _ in lowered.inputs:
        if isinstance(var, Constant):
            continue
        shape = tuple(d if isinstance(d, int) else 3 for d in var.type.shape)
        kind = var.type.dtype.kind
        if kind == "b":
            values[id(var)] = rng.random(shape) > 0.5
        elif kind in "iu":
            values[id(var)] = rng.integers(0, 3, shape).astype(var.type.dtype)
        else:
            values[id(var)] = rng.uniform(0.5, 2.0, shape).astype(var.type.dtype)
    return values


def reference(lowered, values):
    """The NumPy reference of the kernel's node(s) on the same values (None if it raises)."""

    def value(var):
        return var.data if isinstance(var, Constant) else np.array(values[id(var)])

    nodes = lowered.nodes
    try:
        with np.errstate(all="ignore"):
            args = [value(v) for v in nodes[0].inputs]
            result = nodes[0].op.perform(*args)
            if len(nodes) == 2:
                result = nodes[1].op.perform(np.asarray(result))
    except Exception:
        return None
    return [np.asarray(r) for r in (result if len(lowered.outputs) > 1 else [result])]


def computed_in(lowered, dtype) -> np.dtype:
    """The narrowest float the kernel computes in: a float64 result of a float32 step (a
    float32 tanh, then exp in float64) carries float32's error, and the device's float32
    tanh may differ from NumPy's by an ulp."""
    floats = [
        np.dtype(v.dtype)
        for v in lowered.kernel.values
        if np.dtype(getattr(v, "dtype", "int8")).kind == "f"
    ]
    return min([np.dtype(dtype), *floats], key=lambda d: (d.kind != "f", d.itemsize))


def close(got, want, dtype) -> bool:
    tol = {"float16": 1e-2, "float32": 1e-4, "float64": 1e-10}.get(np.dtype(dtype).name, 0)
    if want.ndim == 0 and got.shape == (1,):  # a 0-d output comes back as one element
        got = got.reshape(())
    if got.shape != want.shape:
        return False
    return bool(np.allclose(got, want, rtol=tol, atol=tol, equal_nan=True))


@pytest.fixture(scope="module")
def context(opencl_runtime):
    return opencl_runtime


@functools.cache
def runnable() -> list:
    """The suite's kernels, one per (OpenCL source, ops, operands' dtypes and ranks): two that
    share all four compute the same function of operands of the same kinds, so running the
    second tests nothing the first did not (a fifth of the suite's kernels differ from
    another only in the names or fixed sizes of their dims). Less those whose source the
    suite ran through backend="opencl" (``tests.conftest.launched``: about two thirds)."""
    dialect, found, ran = OpenCLDialect(), {}, launched()
    for lowered in kernels():
        source = dialect.render(lowered.kernel)
        if source in ran:
            continue
        ops = tuple(repr(node.op) for node in lowered.nodes)
        operands = tuple((v.type.dtype, v.type.ndim) for v, _ in lowered.inputs)
        found.setdefault((source, ops, operands), lowered)
    return list(found.values())


#: the PoCL run in parts, so that make test's parallel processes share it evenly (PoCL
#: compiles each kernel again at its first launch: about 0.1 s of CPU each)
SHARDS = 8


@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_kernel_runs_on_pocl_like_numpy(context, shard):
    from symnb.backends.opencl.launch import OpenCLProgram, launch_record

    everything, rng, wrong = runnable(), np.random.default_rng(shard), []
    found = everything[shard::SHARDS]
    for start in range(0, len(found), CHUNK):
        chunk = found[start : start + CHUNK]
        program = OpenCLProgram(context, [low.kernel for low in chunk])
        for index, lowered in enumerate(chunk):
            values = sample(lowered, rng)
            arrays = [
                v.data if isinstance(v, Constant) else values[id(v)] for v, _ in lowered.inputs
            ]
            got = program.launch(index, launch_record(lowered), arrays)
            want = reference(lowered, values)
            if got is None or want is None:
                if (got is None) != (want is None) and lowered.empty != "decline":
                    wrong.append(f"{lowered.nodes[-1].op}: declined={got is None}")
                continue
            for g, w, (v, _, _) in zip(got, want, lowered.outputs):
                if g.dtype != w.dtype or not close(g, w, computed_in(lowered, w.dtype)):
                    wrong.append(f"{lowered.nodes[-1].op} ({v.type}): got {g}, want {w}")
    assert len(everything) >= 7 and (found or len(everything) < SHARDS)
    assert not wrong, f"{len(wrong)} of {len(found)} kernels differ:\n" + "\n".join(wrong[:20])


def distinct(dialect) -> list:
    """The suite's kernel descriptions, one per distinct source in ``dialect`` (two that
    render the same source compile the same)."""
    found: dict = {}
    for lowered in kernels():
        found.setdefault(dialect.render(lowered.kernel), lowered.kernel)
    return list(found.values())


@pytest.mark.parametrize("arch", ["compute_75", "compute_90"])
def test_every_kernel_compiles_with_nvrtc(arch):
    """Every distinct kernel, CHUNK to a program, compiled to PTX for ``arch`` (the oldest
    supported and Hopper), ``--Ofast-compile=min`` where NVRTC takes it, in threads (the
    bindings release the GIL)."""
    from symnb.backends.cuda.nvrtc import compile_ptx, fast_compile_options, nvrtc

    try:
        nvrtc()
    except ImportError as exc:  # no bindings, or bindings without the library
        pytest.skip(str(exc))

    fast = fast_compile_options()
    found = distinct(CUDADialect())
    chunks = [found[start : start + CHUNK] for start in range(0, len(found), CHUNK)]

    def compiled(chunk) -> bool:
        names = [f"sn_kernel_{i}" for i in range(len(chunk))]
        schedules = [gpu.schedule(kernel, None) for kernel in chunk]
        program = render_program(CUDADialect(), chunk, names, schedules)
        ptx = compile_ptx(program, arch, fast)
        return all(f".entry {name}(".encode() in ptx for name in names)

    with ThreadPoolExecutor(max(1, min(len(chunks), os.cpu_count() or 1))) as pool:
        assert all(pool.map(compiled, chunks))
    assert len(found) >= 7
