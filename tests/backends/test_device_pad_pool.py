"""Padding and the max-pool gradient run on the device (plan ``Layout`` steps "pad" and
"max_pool_grad", hand-written kernels: symnb/backends/device/windows.py). On PoCL (backend
"opencl") and backend "cuda" on the stand-in driver (test_cuda_residency.py), each equals
backend "py" on random inputs (the max-pool gradient also on integer-valued floats, whose
windows have ties) and runs on the device (no NumPy step of theirs runs); a conv+pool
training step uploads only its inputs and downloads only its loss and the status word, and
its gradient agrees with finite differences."""

from __future__ import annotations

import types

import numpy as np
import pytest

import symnb as sn
from symnb.backends.device import execute as device_execute
from symnb.backends.device import layouts, windows
from symnb.backends.device.runtime import DeviceArray
from symnb.backends.plan import Layout, Library, Transfer
from tests.backends.test_device_residency import Counter
from tests.backends.test_device_views import HostRuns, device_backend  # noqa: F401 - "backend"
from tests.helpers import opencl_problem

try:  # backend "cuda" on a stand-in driver (skipped without cuda-python's enums)
    from tests.backends.test_cuda_residency import stand_in  # noqa: F401 - a fixture
except pytest.skip.Exception:
    stand_in = None

pytestmark = pytest.mark.skipif(opencl_problem() is not None, reason=str(opencl_problem()))


@pytest.fixture
def on_host(monkeypatch) -> HostRuns:
    """The steps (in ``fallbacks``) whose NumPy reference runs on device arrays; in
    ``kernels``, (how, whether the device made it) for each pad and max-pool gradient."""
    ran = HostRuns()
    run_host = device_execute.run_host

    def spy(call, step, slots):
        if step in ran.fallbacks and any(isinstance(slots[i], DeviceArray) for i in step.ins):
            ran.append(step.node)
        return run_host(call, step, slots)

    monkeypatch.setattr(device_execute, "run_host", spy)
    ran.kernels = []  # the device kernels' results, by how
    for how, made in windows.KERNELS.items():
        monkeypatch.setitem(layouts.LAYOUTS, how, counted(how, made, ran.kernels))
    return ran


def counted(how, made, results):
    def count(*args):
        result = made(*args)
        results.append((how, result is not None))
        return result

    return count


PADS = [((0, 0), (0, 0)), ((1, 2), (2, 1)), ((2, 1), (0, 3)), ((0, 1), (1, 0))]


def layouts_of(f, how: str) -> list:
    return [s for s in f.linker.plan.steps if isinstance(s, Layout) and s.how == how]


def watch_fallbacks(f, on_host, how: str) -> list:
    steps = layouts_of(f, how)
    assert steps, f.linker.plan
    on_host.fallbacks.update(s.fallback for s in steps)
    return steps


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("pads", PADS)
@pytest.mark.parametrize("fill", [0.0, -1.5])
def test_sn_pad_of_the_last_two_axes_runs_on_the_device(backend, on_host, rng, dtype, pads, fill):
    x = sn.tensor4("x", dtype=dtype)
    y = sn.pad(x, ((0, 0), (0, 0), *pads), constant_values=fill) * 2
    f = sn.function([x], y, backend=backend)
    watch_fallbacks(f, on_host, "pad")
    for shape in [(2, 3, 5, 7), (1, 1, 4, 1)]:
        xv = rng.normal(size=shape).astype(dtype)
        want = sn.function([x], y, backend="py")(xv)
        got = f(xv)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    assert not on_host
    assert on_host.kernels == [("pad", True)] * 2


def test_sn_pad_of_a_matrix_and_a_transposed_one(backend, on_host, rng):
    z = sn.matrix("z", dtype="float32")
    y = sn.pad(sn.exp(z).T, ((1, 2), (2, 1)), constant_values=3.0)
    f = sn.function([z], y, backend=backend)
    watch_fallbacks(f, on_host, "pad")
    zv = rng.normal(size=(4, 6)).astype("float32")
    np.testing.assert_allclose(
        f(zv), np.pad(np.exp(zv).T, ((1, 2), (2, 1)), constant_values=3.0), rtol=1e-6
    )
    assert not on_host
    assert on_host.kernels == [("pad", True)]


def test_a_pad_with_a_value_per_side_runs_its_reference(backend, on_host, rng):
    """The pad kernel fills with one value; per-side values (np.pad's constant_values
    pairs) are NumPy's step, equal ones the kernel."""
    x = sn.matrix("x", dtype="float32")
    xv = rng.normal(size=(3, 4)).astype("float32")
    f = sn.function([x], sn.pad(x, 1, constant_values=(1, 2)), backend=backend)
    assert not layouts_of(f, "pad")
    np.testing.assert_array_equal(f(xv), np.pad(xv, 1, constant_values=(1, 2)))
    g = sn.function([x], sn.pad(x, 1, constant_values=[5, 5]), backend=backend)
    watch_fallbacks(g, on_host, "pad")
    np.testing.assert_array_equal(g(xv), np.pad(xv, 1, constant_values=5))
    assert not on_host and on_host.kernels == [("pad", True)]


def test_a_pad_of_other_axes_runs_its_reference(rng):
    x = sn.tensor3("x", dtype="float32")
    f = sn.function([x], sn.pad(x, ((1, 0), (0, 0), (2, 2))), backend="opencl")
    assert not layouts_of(f, "pad")
    xv = rng.normal(size=(2, 3, 4)).astype("float32")
    np.testing.assert_array_equal(f(xv), np.pad(xv, ((1, 0), (0, 0), (2, 2))))


POOLS = [
    ((2, 2), (2, 2), 0),
    ((2, 2), (1, 1), 0),
    ((2, 2), (3, 3), 1),
    ((3, 3), (1, 1), 1),
    ((3, 3), (2, 2), 0),
    ((3, 3), (2, 2), 1),
    ((3, 3), (3, 3), 1),
    ((2, 3), (1, 2), (1, 0)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kernel, stride, padding", POOLS)
@pytest.mark.parametrize("ties", [False, True])
def test_max_pool_and_its_gradient_run_on_the_device(
    backend, on_host, rng, dtype, kernel, stride, padding, ties
):
    for shape in [(2, 3, 7, 9), (1, 2, 8, 5)]:  # sizes the windows do not divide
        x = sn.tensor("x", dtype=dtype, shape=(None, *shape[1:]))  # the pool's kernel path
        g = sn.tensor4("g", dtype=dtype)
        y = sn.max_pool2d(x, kernel, stride, padding)
        (dx,) = sn.grad(sn.sum(y * g), [x])
        f = sn.function([x, g], [y, dx], backend=backend)
        reference = sn.function([x, g], [y, dx], backend="py")
        watch_fallbacks(f, on_host, "max_pool_grad")
        if padding:
            watch_fallbacks(f, on_host, "pad")
        if ties:
            xv = rng.integers(-2, 3, size=shape).astype(dtype)
        else:
            xv = rng.normal(size=shape).astype(dtype)
        out_shape = sn.function([x], y, backend="py")(xv).shape
        gv = rng.normal(size=out_shape).astype(dtype)
        got, want = f(xv, gv), reference(xv, gv)
        for a, b in zip(got, want):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)
    assert not on_host
    made = [("pad", True)] * (2 if padding else 0) + [("max_pool_grad", True)] * 2
    assert sorted(on_host.kernels) == sorted(made)


def test_the_positive_max_pool_gradient_and_nans_match_the_reference(backend, on_host, rng):
    """``positive`` (a ReLU folded into the pool's gradient) and NaN maxima, with ties."""
    x, g = sn.tensor4("x", dtype="float32"), sn.tensor4("g", dtype="float32")
    op = sn.ops.conv.MaxPool2dGrad((3, 3), (2, 2), ((1, 1), (1, 1)), positive=True)
    f = sn.function([x, g], op(x, g), backend=backend)
    reference = sn.function([x, g], op(x, g), backend="py")
    watch_fallbacks(f, on_host, "max_pool_grad")
    xv = rng.integers(-2, 2, size=(2, 2, 6, 7)).astype("float32")
    xv[0, 0, 1, 1] = xv[1, 1, 4, 2] = np.nan
    gv = rng.normal(size=(2, 2, 3, 4)).astype("float32")
    np.testing.assert_array_equal(f(xv, gv), reference(xv, gv))
    assert not on_host
    assert on_host.kernels == [("max_pool_grad", True)]


def conv_pool_step(values: dict, backend: str):
    """One SGD step of conv2d (padding 1) + relu + 3x3 max-pool (stride 2, padding 1) +
    dense + softmax cross-entropy, every weight updated; (function, parameters)."""
    x = sn.tensor("x", dtype="float32", shape=(None, 3, 10, 10))
    y = sn.vector("y", dtype="int64")
    params = [sn.shared(values[k], name=k) for k in ("K", "c", "W", "b")]
    K, c, W, b = params
    h = sn.relu(sn.conv2d(x, K, padding=1) + c.dimshuffle("x", 0, "x", "x"))
    h = sn.max_pool2d(h, 3, 2, padding=1)
    logits = sn.reshape(h, (-1, 4 * 5 * 5)) @ W + b  # (flatten runs on the host)
    loss = sn.mean(sn.crossentropy(sn.softmax(logits, axis=1), y))
    grads = sn.grad(loss, params)
    updates = {p: p - np.float32(0.05) * d for p, d in zip(params, grads)}
    return sn.function([x, y], loss, updates=updates, backend=backend), params


def conv_pool_values(rng) -> dict:
    return {
        "K": rng.normal(scale=0.3, size=(4, 3, 3, 3)).astype("float32"),
        "c": rng.normal(scale=0.1, size=4).astype("float32"),
        "W": rng.normal(scale=0.2, size=(4 * 5 * 5, 10)).astype("float32"),
        "b": np.zeros(10, "float32"),
    }


def test_a_conv_pool_training_step_moves_only_its_inputs_and_loss(rng, monkeypatch):
    values = conv_pool_values(rng)
    batches = [
        (rng.normal(size=(16, 3, 10, 10)).astype("float32"), rng.integers(0, 10, 16))
        for _ in range(3)
    ]
    step, params = conv_pool_step(values, "opencl")
    plan = step.linker.plan
    assert layouts_of(step, "pad") and layouts_of(step, "max_pool_grad"), plan
    assert not [s for s in plan.steps if isinstance(s, Library)], plan
    assert not [s for s in plan.steps if isinstance(s, Transfer) and s.to == "host"], plan
    counter = Counter(step.linker.runtime, monkeypatch)
    losses = [step(*batches[0])]
    counter.take()
    for x, y in batches[1:]:
        losses.append(step(x, y))
        counts = counter.take()
        assert counts["write"] == sorted([x.nbytes, y.nbytes]), counts  # the inputs only
        assert counts["read"] == [4, 4], counts  # the status word and the loss
        assert counts["download"] == counts["upload"] == [], counts
        assert counts["synchronize"] == [1], counts
    reference, ref_params = conv_pool_step(values, "py")
    np.testing.assert_allclose(losses, [reference(x, y) for x, y in batches], rtol=1e-4)
    for p, q in zip(params, ref_params):
        np.testing.assert_allclose(p.get_value(), q.get_value(), rtol=1e-3, atol=1e-5)


def test_a_conv_pool_step_on_the_cuda_runtime_copies_only_inputs_and_the_loss(rng, request):
    if stand_in is None:
        pytest.skip("no cuda-python for the stand-in driver")
    driver = request.getfixturevalue("stand_in")
    values = conv_pool_values(rng)
    batches = [
        (rng.normal(size=(8, 3, 10, 10)).astype("float32"), rng.integers(0, 10, 8))
        for _ in range(3)
    ]
    step, params = conv_pool_step(values, "cuda")
    losses = [step(*batches[0])]
    driver.calls.clear()
    for x, y in batches[1:]:
        losses.append(step(x, y))
        counts = dict(driver.calls)
        driver.calls.clear()
        assert counts["cuMemcpyHtoD"] == 2, counts  # x and y
        assert counts["cuMemcpyDtoH"] == 2, counts  # the status word and the loss
    reference, _ = conv_pool_step(values, "py")
    np.testing.assert_allclose(losses, [reference(x, y) for x, y in batches], rtol=1e-4)


def test_the_conv_pool_gradient_agrees_with_finite_differences(rng):
    """The gradients of the step's loss on PoCL in float64 against central differences."""
    x = sn.tensor("x", dtype="float64", shape=(None, 3, 10, 10))
    y = sn.vector("y", dtype="int64")
    values = {k: v.astype("float64") for k, v in conv_pool_values(rng).items()}
    params = [sn.tensor(k, dtype="float64", shape=v.shape) for k, v in values.items()]
    K, c, W, b = params
    h = sn.relu(sn.conv2d(x, K, padding=1) + c.dimshuffle("x", 0, "x", "x"))
    h = sn.max_pool2d(h, 3, 2, padding=1)
    loss = sn.mean(sn.crossentropy(sn.softmax(sn.reshape(h, (-1, 100)) @ W + b, axis=1), y))
    f = sn.function([x, y, *params], [loss, *sn.grad(loss, params)], backend="opencl")
    assert layouts_of(f, "max_pool_grad") and layouts_of(f, "pad")
    xv, yv = rng.normal(size=(3, 3, 10, 10)), rng.integers(0, 10, 3)
    args = [values[k] for k in ("K", "c", "W", "b")]
    _, *grads = f(xv, yv, *args)
    eps = 1e-6
    for i, (arg, grad) in enumerate(zip(args, grads)):
        for index in list(np.ndindex(arg.shape))[:: max(1, arg.size // 12)]:
            up, down = [a.copy() for a in args], [a.copy() for a in args]
            up[i][index] += eps
            down[i][index] -= eps
            numeric = (f(xv, yv, *up)[0] - f(xv, yv, *down)[0]) / (2 * eps)
            assert abs(numeric - grad[index]) <= 1e-5 + 1e-4 * abs(numeric), (i, index)


def test_the_kernels_decline_what_they_do_not_take(opencl_runtime):
    x = opencl_runtime.to_device(np.zeros((2, 3, 4), "float32"))
    assert windows.pad(opencl_runtime.to_device(np.zeros((1, 2, 3, 4, 5))), PADS[1], 0) is None
    op = sn.ops.conv.MaxPool2dGrad((2, 2), (2, 2), ((0, 0), (0, 0)))
    assert windows.max_pool_grad(x, x, op) is None  # 3-d
    x4 = opencl_runtime.to_device(np.zeros((1, 1, 4, 4), "float32"))
    g = opencl_runtime.to_device(np.zeros((1, 1, 3, 2), "float32"))
    assert windows.max_pool_grad(x4, g, op) is None  # g of another shape: the reference's error


def test_the_cuda_spellings_compile_with_nvrtc():
    """The stand-in runs the OpenCL C spelling; the CUDA C one is compiled by NVRTC."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="pip install 'symnb[cuda]' for NVRTC")
    from symnb.backends.cuda.dialect import CUDADialect
    from symnb.backends.cuda.nvrtc import compile_ptx

    runtime = types.SimpleNamespace(dialect=CUDADialect())
    for how, name, dtypes in (
        ("pad", b"sn_pad", ("float32", "float64", "int64")),
        ("max_pool_grad", b"sn_max_pool_grad", ("float32", "float64")),
    ):
        for dtype in dtypes:
            source = windows.source_of(runtime, how, dtype, -1.5)
            for arch in ("compute_75", "compute_90"):
                assert b".entry " + name in compile_ptx(source, arch)
