"""What crosses the bus on backend="opencl" (PoCL), counted per call: after the first call an
inference uploads only its inputs, and an MLP training step (784-512-256-10, batch 256)
uploads its inputs, reads back its loss and the status word after one synchronisation, and
asks the driver for no memory (the runtime's pool); values equal backend "py"'s. The same
counts for backend "cuda" through a stand-in driver are in test_cuda_residency.py."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import symnb as sn
from symnb.backends.device import runtime as device_runtime
from symnb.backends.device.runtime import (
    DeviceArray,
    DeviceError,
    DeviceOutOfMemory,
    Pool,
    bucket_of,
)
from symnb.backends.plan import Transfer, View
from tests.helpers import opencl_problem

needs_opencl = pytest.mark.skipif(opencl_problem() is not None, reason=str(opencl_problem()))
COUNTED = ("write", "upload", "read", "download", "synchronize", "launch")


class Counter:
    """Calls of a runtime's copies, launches and waits (with the bytes copied), and the
    driver allocations of its pool, since the last ``take``."""

    def __init__(self, runtime, monkeypatch):
        self.runtime, self.calls = runtime, collections.defaultdict(list)
        for name in COUNTED:
            monkeypatch.setattr(runtime, name, self._counting(name, getattr(runtime, name)))
        self.allocations = runtime.pool.allocations

    def _counting(self, name, method):
        def counted(*args):
            size = {
                "write": lambda: args[1].nbytes,
                "upload": lambda: args[0].nbytes,
                "read": lambda: args[1],
                "download": lambda: args[1],
            }
            self.calls[name].append(size[name]() if name in size else 1)
            return method(*args)

        return counted

    def take(self) -> dict:
        """{name: sorted sizes (or 1s)} and "allocations" since the last take."""
        counts = {name: sorted(self.calls[name]) for name in COUNTED}
        counts["allocations"] = self.runtime.pool.allocations - self.allocations
        self.calls.clear()
        self.allocations = self.runtime.pool.allocations
        return counts


def mlp_step(values: dict, backend: str):
    """The SGD step of a ReLU MLP with softmax cross-entropy (the benchmark's W3), its
    shared parameters made from ``values``; (function, parameters, logits function)."""
    x, y = sn.matrix("x", dtype="float32"), sn.vector("y", dtype="int64")
    params = [sn.shared(values[k], name=k) for k in ("W0", "b0", "W1", "b1", "W2", "b2")]
    h = x
    for i in range(3):
        h = h @ params[2 * i] + params[2 * i + 1]
        h = sn.relu(h) if i < 2 else h
    loss = sn.mean(sn.crossentropy(sn.softmax(h, axis=1), y))
    grads = sn.grad(loss, params)
    updates = {p: p - np.float32(0.1) * g for p, g in zip(params, grads)}
    return sn.function([x, y], loss, updates=updates, backend=backend), params


def mlp_values(rng, sizes=(784, 512, 256, 10)) -> dict:
    values = {}
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        values[f"W{i}"] = rng.normal(scale=a**-0.5, size=(a, b)).astype("float32")
        values[f"b{i}"] = rng.normal(scale=0.1, size=b).astype("float32")
    return values


@needs_opencl
def test_an_mlp_training_step_makes_no_host_round_trip(rng, monkeypatch):
    values = mlp_values(rng)
    batches = [
        (rng.random((256, 784), dtype=np.float32), rng.integers(0, 10, 256)) for _ in range(3)
    ]
    step, params = mlp_step(values, "opencl")
    plan = step.linker.plan
    ups = [s for s in plan.steps if isinstance(s, Transfer) and s.to == "device"]
    # x (and its transpose) go up once, y once; the rest are constants (uploaded once per
    # function) and the batch size the mean divides by (once per distinct size)
    assert sorted(s.src for s in ups if s.src < plan.nargs) == [0, 1], plan
    assert not [s for s in plan.steps if isinstance(s, Transfer) and s.to == "host"], plan
    counter = Counter(step.linker.runtime, monkeypatch)
    losses = [step(*batches[0])]
    first = counter.take()
    assert first["allocations"] > 0
    for x, y in batches[1:]:
        losses.append(step(x, y))
        counts = counter.take()
        assert counts["write"] == sorted([x.nbytes, y.nbytes]), counts  # the inputs only
        assert counts["read"] == [4, 4], counts  # the status word and the float32 loss
        assert counts["download"] == counts["upload"] == [], counts
        assert counts["synchronize"] == [1], counts
        assert counts["allocations"] <= 2, counts
    assert all(isinstance(p.current_value(), DeviceArray) for p in params)

    reference, ref_params = mlp_step(values, "py")
    want = [reference(x, y) for x, y in batches]
    np.testing.assert_allclose(losses, want, rtol=1e-4)
    for p, q in zip(params, ref_params):
        np.testing.assert_allclose(p.get_value(), q.get_value(), rtol=1e-3, atol=1e-5)


@needs_opencl
def test_an_inference_call_uploads_only_its_inputs(rng, monkeypatch):
    """Weights no function updates are uploaded by the first call and kept on the device
    (each call once uploaded a 36,864-byte W again)."""
    W = sn.shared(rng.normal(size=(96, 96)).astype("float32"), name="W")
    b = sn.shared(np.ones(96, "float32"), name="b")
    steps = sn.shared(np.zeros((), "int64"), name="steps")
    x = sn.matrix("x", dtype="float32")
    out = sn.tanh(x @ W + b)
    f = sn.function([x], out, updates={steps: steps + 1}, backend="opencl")
    counter = Counter(f.linker.runtime, monkeypatch)
    xv = rng.random((8, 96), dtype=np.float32)
    want = np.tanh(xv @ W.get_value() + 1)
    np.testing.assert_allclose(f(xv), want, rtol=1e-5, atol=1e-5)
    assert W.get_value().nbytes in counter.take()["write"]
    for _ in range(2):
        np.testing.assert_allclose(f(xv), want, rtol=1e-5, atol=1e-5)
        counts = counter.take()
        assert counts["write"] == [xv.nbytes], counts
        assert counts["read"] == [4, want.nbytes] and counts["download"] == [], counts
        assert counts["allocations"] == 0, counts
    assert isinstance(W.current_value(), DeviceArray)
    np.testing.assert_array_equal(W.get_value(), W.current_value().to_host())
    assert steps.get_value() == 3
    W.set_value(np.zeros((96, 96), "float32"))  # a new host value replaces the device copy
    np.testing.assert_allclose(f(xv), np.tanh(np.ones((8, 96))), rtol=1e-6)


@needs_opencl
def test_shape_alloc_and_sum_to_like_stay_on_the_device(rng):
    """Shape read from the device array, alloc as its value broadcast, sum_to_like where
    nothing is summed: no transfer; where it sums, the host reference gives the values."""
    a, c = sn.matrix("a"), sn.matrix("c")
    filled = sn.alloc(np.float64(2.5), sn.shape(c)[0], sn.shape(c)[1])
    loss = sn.sum(sn.exp(a + c) * filled)
    ga = sn.grad(loss, a)
    f = sn.function([a, c], [ga, filled * c], backend="opencl")
    views = {s.how for s in f.linker.plan.steps if isinstance(s, View)}
    assert {"shape", "alloc", "sum_to_like"} <= views, f.linker.plan
    downs = [s for s in f.linker.plan.steps if isinstance(s, Transfer) and s.to == "host"]
    assert not downs, f.linker.plan
    cv = rng.normal(size=(4, 3))
    for av in (rng.normal(size=(4, 3)), rng.normal(size=(1, 3)), rng.normal(size=(4, 1))):
        got_ga, got_filled = f(av, cv)
        want = 2.5 * np.exp(av + cv)
        want = want.sum(axis=tuple(i for i in range(2) if av.shape[i] == 1), keepdims=True)
        np.testing.assert_allclose(got_ga, want, rtol=1e-12)
        np.testing.assert_allclose(got_filled, 2.5 * cv, rtol=1e-12)


@needs_opencl
def test_a_declining_kernel_still_reruns_after_one_synchronisation():
    x, y = sn.matrix("x"), sn.vector("y", dtype="int64")
    f = sn.function([x, y], sn.mean(sn.crossentropy(sn.softmax(x, axis=1), y)), backend="opencl")
    xv = np.random.default_rng(0).standard_normal((3, 4))
    with pytest.raises(Exception, match="out of range|out of bounds|index"):
        f(xv, np.array([0, 1, 7]))
    want = -np.mean(np.log(np.exp(xv) / np.exp(xv).sum(1, keepdims=True))[range(3), [0, 1, 3]])
    np.testing.assert_allclose(f(xv, np.array([0, 1, 3])), want, rtol=1e-10)


def test_buckets_round_up_to_quarter_steps():
    assert [bucket_of(n) for n in (1, 256, 257, 320, 321, 1000, 1024, 1025)] == [
        256,
        256,
        320,
        320,
        384,
        1024,
        1024,
        1280,
    ]
    for n in range(1, 1 << 16, 97):
        assert n <= bucket_of(n) < max(2 * n, 512)


def test_the_pool_reuses_freed_blocks_and_frees_them_when_memory_runs_out():
    full = [False]

    def allocate(size):
        if full[0]:
            full[0] = False  # the pool gave its free blocks back: now it fits
            raise DeviceOutOfMemory("the test's device", size, "out of memory", "use less")
        return bytearray(size)

    pool = Pool(allocate)
    first = pool.take(1000)
    buffer = first.buffer
    del first  # its block goes back to the pool
    again = pool.take(900)  # the same bucket: reused, not allocated
    assert again.buffer is buffer and (pool.allocations, pool.reuses) == (1, 1)
    del again
    assert pool.held == 1024
    full[0] = True
    big = pool.take(3000)
    assert big.size == 3072 and pool.held == 0 and pool.allocations == 2
    full[0] = True
    with pytest.raises(DeviceOutOfMemory) as info:  # nothing held to give back: refused
        pool.take(3000)
    assert (info.value.nbytes, info.value.block) == (3000, 3072)  # asked for, and the block
    assert str(info.value) == (
        "the test's device could not allocate 3,000 bytes (its pool's block: 3,072; "
        "out of memory); use less"
    )


def test_the_pool_hands_back_its_blocks_only_when_memory_runs_out():
    asked = []

    def allocate(size):
        asked.append(size)
        raise DeviceError("the context is gone")  # not a refusal for lack of memory

    pool = Pool(allocate)
    pool.give(1024, bytearray(1024))
    with pytest.raises(DeviceError, match="the context is gone"):
        pool.take(3000)
    assert asked == [3072] and pool.held == 1024  # not asked again, the free block kept


def test_the_pool_refuses_a_size_no_int64_holds_without_asking_the_driver():
    """A size past 2**63 - 1 bytes went to the driver as it was: pyopencl raised a TypeError
    (past size_t), and the CUDA bindings an OverflowError, instead of the refusal."""
    asked = []
    pool = Pool(lambda size: asked.append(size) or bytearray(size))
    nbytes = 2**33 * (2**31 + 3) * 8
    with pytest.raises(DeviceOutOfMemory) as info:
        pool.take(nbytes)
    assert asked == [] and (info.value.nbytes, info.value.block) == (nbytes, nbytes)
    assert str(info.value) == (
        "the device could not allocate 147,573,952,795,834,843,136 bytes (past the "
        "9,223,372,036,854,775,807 bytes an array can have: its size is an int64); "
        "use smaller batches"
    )
    assert len(pool.take(1000).buffer) == 1024 and asked == [1024]  # a size that fits: asked


def test_the_pool_keeps_at_most_max_held_bytes(monkeypatch):
    monkeypatch.setattr(device_runtime, "MAX_HELD", 1024)
    pool = Pool(bytearray)
    blocks = [pool.take(1024) for _ in range(3)]
    del blocks
    assert pool.held == 1024 and len(pool.free[1024]) == 1


@needs_opencl
def test_a_value_set_while_a_call_uploads_the_old_one_is_not_shadowed(monkeypatch):
    """Another thread's ``W.set_value`` between a call's read of W and its upload: the upload
    (of the old value) was kept as the device copy of the new one, and every later call
    computed with the old W. Made deterministic: the set runs inside the upload."""
    W = sn.shared(np.zeros(4, "float32"), name="W")
    x = sn.vector("x", dtype="float32")
    f = sn.function([x], W + x, backend="opencl")
    runtime, upload = f.linker.runtime, f.linker.runtime.to_device
    old = W.get_value()

    def upload_then_set(array):
        device = upload(array)
        if isinstance(array, np.ndarray) and array.shape == (4,) and np.all(array == 0):
            W.set_value(np.full(4, 7, "float32"))  # "another thread", mid-call
        return device

    monkeypatch.setattr(runtime, "to_device", upload_then_set)
    xv = np.ones(4, "float32")
    np.testing.assert_array_equal(f(xv), old + xv)  # this call read W before the set
    monkeypatch.undo()
    for _ in range(2):
        np.testing.assert_array_equal(f(xv), W.get_value() + xv)  # 8s, not 1s
    assert np.all(W.get_value() == 7)


@needs_opencl
def test_a_download_does_not_replace_a_value_set_meanwhile(monkeypatch):
    """``get_value`` downloads a device-only value; a ``set_value`` in another thread
    during that download must win (the download was stored over it)."""
    W = sn.shared(np.zeros(3, "float32"), name="W")
    f = sn.function([], [], updates={W: W + 1}, backend="opencl")
    f()
    device = W.current_value()
    assert isinstance(device, DeviceArray)
    download = DeviceArray.to_host

    def download_then_set(array):
        host = download(array)
        if array is device:
            W.set_value(np.full(3, 5, "float32"))  # "another thread", mid-download
        return host

    monkeypatch.setattr(DeviceArray, "to_host", download_then_set)
    np.testing.assert_array_equal(W.get_value(), np.ones(3, "float32"))  # read before the set
    np.testing.assert_array_equal(W.get_value(), np.full(3, 5, "float32"))
    f()
    np.testing.assert_array_equal(W.get_value(), np.full(3, 6, "float32"))
