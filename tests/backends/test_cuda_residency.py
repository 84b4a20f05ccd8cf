"""backend="cuda"'s runtime (symnb/backends/cuda/runtime.py: its allocations through the pool,
its copies, its launches) against a stand-in for cuda-python's driver module that counts
``cuMemAlloc``, ``cuMemcpyHtoD``, ``cuMemcpyDtoH``, ``cuMemcpyDtoD`` and ``cuLaunchKernel`` and
runs them on
PoCL: device memory is OpenCL buffers, and a launch runs the kernel's OpenCL C rendering with
the buffers its parameters point to. So the counts are the CUDA runtime's own calls, and the
values are checked against backend "py". No GPU is needed (none was used to write this)."""

from __future__ import annotations

import collections
import ctypes

import numpy as np
import pytest

import symnb as sn
from symnb.backends.cuda import runtime as cuda_runtime
from symnb.backends.cuda.linker import CUDALinker
from symnb.backends.device import execute as device_execute
from symnb.backends.device.runtime import DeviceArray
from symnb.backends.opencl.dialect import OpenCLDialect
from symnb.backends.plan import Repeat
from tests.backends.test_device_loops import (
    launches_per_call,
    loops_of,
    rnn_inputs,
    rnn_step,
    rnn_values,
    row_copies_per_call,
)
from tests.backends.test_device_residency import mlp_step, mlp_values
from tests.helpers import opencl_problem

pytestmark = pytest.mark.skipif(opencl_problem() is not None, reason=str(opencl_problem()))
real = pytest.importorskip("cuda.bindings.driver", reason="the stand-in uses cuda-python's enums")


class StandInDriver:
    """The driver calls CUDARuntime makes, recorded in ``calls``; memory and launches on an
    OpenCL runtime (``cl_runtime``). Any other ``cu*`` call succeeds and returns 0."""

    def __init__(self, cl_runtime):
        self.cl, self.queue = cl_runtime.cl, cl_runtime.queue
        self.context = cl_runtime.context
        self.CUresult, self.CUdevice_attribute = real.CUresult, real.CUdevice_attribute
        self.calls: collections.Counter = collections.Counter()
        self.memory: dict[int, object] = {}
        self.next = 1 << 16

    def ok(self, *values):
        return (self.CUresult.CUDA_SUCCESS, *values)

    def __getattr__(self, name):
        if not name.startswith("cu"):
            raise AttributeError(name)
        return lambda *args: self.ok(0)

    def cuDriverGetVersion(self):
        return self.ok(13000)  # a CUDA 13 driver, as the installed NVRTC needs

    def cuDeviceGetName(self, size, device):
        return self.ok(b"stand-in GPU\0")

    def cuDeviceGetAttribute(self, attribute, device):
        return self.ok(9 if "MAJOR" in str(attribute) else 0)

    def cuGetErrorName(self, error):
        return self.ok(str(error).encode())

    def cuMemAlloc(self, nbytes):
        self.calls["cuMemAlloc"] += 1
        pointer, self.next = self.next, self.next + -(-nbytes // 256) * 256
        self.memory[pointer] = self.cl.Buffer(self.context, self.cl.mem_flags.READ_WRITE, nbytes)
        return self.ok(pointer)

    def cuMemFree(self, pointer):
        self.calls["cuMemFree"] += 1
        del self.memory[int(pointer)]
        return self.ok()

    def cuMemcpyHtoD(self, pointer, address, nbytes):
        self.calls["cuMemcpyHtoD"] += 1
        host = np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(address))
        self.cl.enqueue_copy(self.queue, self.memory[int(pointer)], host, is_blocking=True)
        return self.ok()

    def cuMemcpyDtoH(self, address, pointer, nbytes):
        self.calls["cuMemcpyDtoH"] += 1
        host = np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(address))
        self.cl.enqueue_copy(self.queue, host, self.memory[int(pointer)], is_blocking=True)
        return self.ok()

    def cuMemcpyDtoD(self, dst, src, nbytes):
        self.calls["cuMemcpyDtoD"] += 1
        (target, at), (source, start) = self._at(dst), self._at(src)
        self.cl.enqueue_copy(
            self.queue, target, source, byte_count=nbytes, src_offset=start, dst_offset=at
        )
        return self.ok()

    def _at(self, pointer) -> tuple:
        """The buffer holding a device address, and the address's offset into it."""
        pointer = int(pointer)
        base = max(p for p in self.memory if p <= pointer)
        return self.memory[base], pointer - base

    def cuLaunchKernel(self, kernel, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        self.calls["cuLaunchKernel"] += 1
        count = kernel.get_info(self.cl.kernel_info.NUM_ARGS)
        slots = (ctypes.c_uint64 * count).from_address(params)
        pointers = [ctypes.c_uint64.from_address(int(slot)).value for slot in slots]
        kernel(self.queue, (gx * bx,), (bx,), *[self.memory[p] for p in pointers])
        return self.ok()

    def cuCtxSynchronize(self):
        self.calls["cuCtxSynchronize"] += 1
        self.queue.finish()
        return self.ok()


@pytest.fixture
def stand_in(monkeypatch, opencl_runtime):
    """backend="cuda" on the stand-in driver: CUDARuntime itself, its kernels rendered in
    OpenCL C and built on PoCL (NVRTC's output could not run here)."""
    driver = StandInDriver(opencl_runtime)
    monkeypatch.setattr(cuda_runtime, "driver", lambda: driver)

    class StandInRuntime(cuda_runtime.CUDARuntime):
        dialect = OpenCLDialect()

        def build(self, source, names):
            return opencl_runtime.build(source, names)

    runtime = StandInRuntime(0)
    runtime.cublas_path = None  # the tiled kernel, as without the cuBLAS wheel
    monkeypatch.setattr(CUDALinker, "make_runtime", classmethod(lambda cls: runtime))
    return driver


def taken(driver) -> dict:
    counts = dict(driver.calls)
    driver.calls.clear()
    return counts


def test_an_mlp_step_on_the_cuda_runtime_copies_only_inputs_and_the_loss(stand_in, rng):
    values = mlp_values(rng)
    batches = [
        (rng.random((256, 784), dtype=np.float32), rng.integers(0, 10, 256)) for _ in range(3)
    ]
    step, params = mlp_step(values, "cuda")
    losses = [step(*batches[0])]
    first = taken(stand_in)
    assert first["cuMemAlloc"] > 10 and first["cuMemcpyHtoD"] > 2, first
    for x, y in batches[1:]:
        losses.append(step(x, y))
        counts = taken(stand_in)
        assert counts["cuMemcpyHtoD"] == 2, counts  # x and y
        assert counts["cuMemcpyDtoH"] == 2, counts  # the status word and the loss
        assert counts.get("cuMemAlloc", 0) <= 2 and not counts.get("cuMemFree"), counts
        assert counts["cuLaunchKernel"] == first["cuLaunchKernel"], counts
    assert all(isinstance(p.current_value(), DeviceArray) for p in params)
    reference, ref_params = mlp_step(values, "py")
    np.testing.assert_allclose(losses, [reference(x, y) for x, y in batches], rtol=1e-4)
    for p, q in zip(params, ref_params):
        np.testing.assert_allclose(p.get_value(), q.get_value(), rtol=1e-3, atol=1e-5)


def test_inference_on_the_cuda_runtime_uploads_only_its_input(stand_in, rng):
    W = sn.shared(rng.normal(size=(96, 96)).astype("float32"), name="W")
    x = sn.matrix("x", dtype="float32")
    f = sn.function([x], sn.tanh(x @ W.T), backend="cuda")
    xv = rng.random((8, 96), dtype=np.float32)
    want = np.tanh(xv @ W.get_value().T)
    np.testing.assert_allclose(f(xv), want, rtol=1e-5, atol=1e-5)
    assert taken(stand_in)["cuMemcpyHtoD"] >= 2  # x, W (and the launch arguments)
    for _ in range(2):
        np.testing.assert_allclose(f(xv), want, rtol=1e-5, atol=1e-5)
        counts = taken(stand_in)
        assert counts["cuMemcpyHtoD"] == 1 and counts["cuMemcpyDtoH"] == 2, counts
        assert not counts.get("cuMemAlloc"), counts


def test_an_rnn_step_on_the_cuda_runtime_runs_its_loop_on_the_device(stand_in, rng, monkeypatch):
    """The scan's loops run on the device executor: per step the body's kernels launch and
    rows are copied within the device (``cuMemcpyDtoD``); copies to and from the host do not
    grow with the steps."""
    values = rnn_values(rng)
    f, reference = rnn_step(values, "cuda"), rnn_step(values, "py")
    assert len(loops_of(f)) == 2
    inside = []  # the driver calls of each loop step of a call, from its start to its end

    def run_repeat(call, step, slots):
        before = collections.Counter(stand_in.calls)
        device_execute.run_repeat(call, step, slots)
        inside.append(stand_in.calls - before)

    monkeypatch.setitem(device_execute.EXECUTE, Repeat, run_repeat)
    counts = {}
    for n_steps in (20, 40):
        x, h0 = rnn_inputs(rng, n_steps)
        f(x, h0)
        taken(stand_in)
        inside.clear()
        got = f(x, h0)
        counts[n_steps] = taken(stand_in)
        assert len(inside) == 2, inside
        for did in inside:  # nothing crossed the bus while a loop ran
            assert not did["cuMemcpyHtoD"] and not did["cuMemcpyDtoH"], did
            assert did["cuLaunchKernel"] and did["cuMemcpyDtoD"], did
        for g, want in zip(got, reference(x, h0)):
            np.testing.assert_allclose(g, want, rtol=2e-4, atol=1e-5)
        assert counts[n_steps]["cuLaunchKernel"] == launches_per_call(f, n_steps), counts
        # the rows, and one copy per piece of the gradient's concatenate(h0[None], hs[:-1])
        assert counts[n_steps]["cuMemcpyDtoD"] == row_copies_per_call(f, n_steps) + 2, counts
    across = ("cuMemcpyHtoD", "cuMemcpyDtoH", "cuCtxSynchronize", "cuMemAlloc")
    assert {k: counts[20].get(k) for k in across} == {k: counts[40].get(k) for k in across}
    assert counts[20]["cuCtxSynchronize"] == 1, counts
    # up: the inputs x and h0; home: the status word, the loss and 3 gradients (the slices,
    # concatenate and reshape between the loops run on the device)
    assert counts[20]["cuMemcpyHtoD"] == 2 and counts[20]["cuMemcpyDtoH"] == 5, counts


def test_an_ifelse_on_the_cuda_runtime_launches_only_the_side_taken(stand_in, rng):
    """A lazy Branch on backend "cuda" too: the condition comes down (one more
    ``cuMemcpyDtoH``), then only the side it picks launches its kernels; the other side's
    product, whose inner sizes differ, never runs."""
    m = sn.matrix("m", dtype="float32")
    picked = sn.ifelse(sn.sum(m) < 0, sn.tensordot(m, m, axes=1), sn.exp(m) @ m.T)
    f = sn.function([m], picked, backend="cuda")
    alone = sn.function([m], [sn.sum(m) < 0, sn.exp(m) @ m.T], backend="cuda")
    a = rng.random((3, 4), dtype=np.float32)
    want = np.exp(a) @ a.T
    for fn in (f, alone):
        fn(a)
        taken(stand_in)
    np.testing.assert_allclose(f(a), want, rtol=1e-5)
    counts = taken(stand_in)
    np.testing.assert_allclose(alone(a)[1], want, rtol=1e-5)
    both = taken(stand_in)
    assert counts["cuLaunchKernel"] == both["cuLaunchKernel"], (counts, both)
    assert counts["cuMemcpyDtoH"] == both["cuMemcpyDtoH"] == 3, (counts, both)


def test_a_full_sum_on_the_cuda_runtime_runs_in_two_launches_over_a_pooled_scratch(stand_in, rng):
    """``sum(x)`` of 2^20 elements on a 16-unit device (the stand-in reports none: the
    default) splits over work-groups (``gpu.parts``): two launches a call, their partials in
    a block from the pool, which later calls reuse (no allocation past the first call)."""
    x = sn.vector("x", dtype="float32")
    f = sn.function([x], [sn.sum(x), sn.mean(x * x)], backend="cuda")
    xv = rng.standard_normal((1 << 20) + 3).astype(np.float32)
    for call in range(3):
        total, mean = f(xv)
        counts = taken(stand_in)
        np.testing.assert_allclose(total, xv.astype(np.float64).sum(), rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(mean, np.mean(xv.astype(np.float64) ** 2), rtol=1e-5)
        assert counts["cuLaunchKernel"] == 4, counts  # (x*x is fused into the mean's kernel)
        if call:
            assert not counts.get("cuMemAlloc"), counts
