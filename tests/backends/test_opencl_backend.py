"""backend="opencl" as a whole: shared values kept on the device between calls, transfers
placed in the plan, host fallbacks shown, a declining kernel rerun on the host, and an MLP that
trains on PoCL to the same accuracy as on "c". (The op suite runs on "opencl" through the
``backend`` fixture, tests/helpers.py.)"""

from __future__ import annotations

import math
import os
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

import symnb as sn
from symnb.backends.device.runtime import DeviceArray, DeviceError, DeviceOutOfMemory, bucket_of
from symnb.backends.execute import RuntimeValueFailure
from symnb.backends.opencl.runtime import current_runtime
from symnb.backends.plan import Branch, Library, Transfer
from tests.helpers import needs_c, opencl_problem

pytestmark = pytest.mark.skipif(opencl_problem() is not None, reason=str(opencl_problem()))


def test_shared_values_stay_on_the_device_between_calls():
    W = sn.shared(np.arange(6.0).reshape(2, 3), name="W")
    x = sn.vector("x")
    f = sn.function([x], sn.sum(sn.exp(W) * x), updates={W: W * 0.5 + 1}, backend="opencl")
    xv = np.array([1.0, 2.0, 3.0])
    want_w = np.arange(6.0).reshape(2, 3)
    for _ in range(3):
        got = f(xv)
        np.testing.assert_allclose(got, np.sum(np.exp(want_w) * xv), rtol=1e-12)
        want_w = want_w * 0.5 + 1
        assert isinstance(W.current_value(), DeviceArray)  # not copied back after the call
        assert W._value is None
    np.testing.assert_allclose(W.get_value(), want_w, rtol=1e-12)
    W.set_value(np.zeros((2, 3)))  # a host value replaces the device copy
    np.testing.assert_allclose(f(xv), 12.0)  # exp(0) * x over two rows
    assert pickle.loads(pickle.dumps(W)).get_value().shape == (2, 3)


@pytest.mark.parametrize("after", ["an update", "an upload"])
def test_a_borrowed_value_replaces_the_device_copy(after):
    """``set_value(v, borrow=True)`` once raised AttributeError after an update (no host
    value to compare with); after an upload, a stale device copy must not be read."""
    W = sn.shared(np.ones(4), name="W")
    updates = {W: W + 1} if after == "an update" else {}
    f = sn.function([], sn.sum(W) * 1.0, updates=updates, backend="opencl")
    f()
    new = np.full(4, 10.0)
    W.set_value(new, borrow=True)
    assert W.get_value(borrow=True) is new
    assert f() == 40.0
    with pytest.raises(sn.DTypeError):
        W.set_value(np.zeros(4, "complex128"), borrow=True)


@pytest.mark.parametrize("after", ["an update", "an upload"])
def test_a_write_into_a_borrowed_value_is_what_device_functions_read(after):
    """``get_value(borrow=True)`` hands out the variable's own host array: written into, it
    is what every backend reads next (the device copy is dropped, and uploaded again); a
    function's own read of the host value keeps the device copy."""
    s = sn.shared(np.array([1.0, 2.0]), name="s")
    x = sn.vector("x", shape=(2,))
    update = sn.function([x], [], updates={s: s + x}, backend="opencl")
    read_device = sn.function([], s * 2.0, backend="opencl")
    read_host = sn.function([], s * 2.0, backend="py")
    if after == "an update":
        update(np.ones(2))  # s = [2, 3], on the device
    else:
        read_device()  # s uploaded, its device copy kept
    read_host()  # a host read (a download after an update) keeps the device copy
    assert isinstance(s.current_value(), DeviceArray)
    s.get_value(borrow=True)[0] = 100.0
    want = np.array([100.0, 3.0 if after == "an update" else 2.0])
    np.testing.assert_array_equal(read_device(), want * 2)
    np.testing.assert_array_equal(read_host(), want * 2)
    np.testing.assert_array_equal(s.get_value(), want)
    update(np.ones(2))
    np.testing.assert_array_equal(read_device(), (want + 1) * 2)


def _lend(how: str, W, start: np.ndarray) -> np.ndarray:
    """The host array the caller holds as ``W``'s value, lent the way ``how`` says."""
    if how == "get_value":
        W.set_value(start)
        return W.get_value(borrow=True)
    if how == "set_value":
        held = start.copy()
        W.set_value(held, borrow=True)
        return held
    if how == "function updates":
        x = sn.vector("x", shape=(4,))
        held = start.copy()
        sn.function([x], [], updates={W: x}, borrow=True, backend="py")(held)
        return held
    assert how == "function output"
    W.set_value(start)
    return sn.function([], W, borrow=True, backend="py")()


@pytest.mark.parametrize(
    "how", ["get_value", "set_value", "shared", "function updates", "function output"]
)
def test_every_write_into_a_lent_array_is_what_device_calls_read(how):
    """A host array the caller holds as a shared value (borrowed in or out) is uploaded at
    each device call: the device copy cached at one call went stale at the caller's next
    write (only ``get_value(borrow=True)`` dropped it, once)."""
    start = np.arange(4.0)
    if how == "shared":
        held = start.copy()
        W = sn.shared(held, name="W", borrow=True)
    else:
        W = sn.shared(np.zeros(4), name="W")
        held = _lend(how, W, start)
    on_device = sn.function([], sn.sum(W * 2.0), backend="opencl")
    on_host = sn.function([], sn.sum(W * 2.0), backend="py")
    for k in range(1, 4):
        held[:] = start * k  # written after a device call read (and uploaded) it
        assert (on_device(), on_host()) == (np.sum(start * k * 2.0),) * 2
    assert W.lent and not isinstance(W.current_value(), DeviceArray)


def _wrapped(kind: str, array: np.ndarray):
    if kind == "memoryview":
        return memoryview(array)
    return pytest.importorskip("torch").from_numpy(array)


@pytest.mark.parametrize("how", ["shared", "set_value"])
@pytest.mark.parametrize("kind", ["memoryview", "torch"])
def test_a_borrowed_tensor_or_memoryview_is_lent_as_an_ndarray_is(kind, how):
    """A torch CPU tensor or a memoryview taken with ``borrow=True`` is the caller's memory
    (read without a copy): only an ndarray was marked lent, so "opencl" kept the device copy
    it uploaded first and missed the caller's writes that "py" and "c" read."""
    held = np.arange(4.0)
    if how == "shared":
        W = sn.shared(_wrapped(kind, held), name="W", borrow=True)
    else:
        W = sn.shared(np.zeros(4), name="W")
        W.set_value(_wrapped(kind, held), borrow=True)
    on_device = sn.function([], W * 2.0, backend="opencl")
    on_host = sn.function([], W * 2.0, backend="py")
    assert on_device().tolist() == [0.0, 2.0, 4.0, 6.0]
    held[0] = 100.0  # the caller writes into the borrowed buffer
    assert on_device().tolist() == on_host().tolist() == [200.0, 2.0, 4.0, 6.0]
    assert W.lent and not isinstance(W.current_value(), DeviceArray)


def test_a_value_no_caller_holds_keeps_its_device_copy():
    W = sn.shared(np.zeros(4), name="W", borrow=True)
    f = sn.function([], sn.sum(W * 2.0), backend="opencl")
    W.set_value(np.ones(4))  # a copy: not lent
    assert not W.lent and f() == 8.0
    assert isinstance(W.current_value(), DeviceArray)  # cached for the next call
    W.get_value(borrow=True)
    W.set_value(np.ones(4), borrow=False)
    f()
    assert not W.lent and isinstance(W.current_value(), DeviceArray)


def test_the_listing_describes_device_views_as_the_device_executor_makes_them():
    """Views (dim_shuffle, shape, alloc) were listed with backend "c"'s note, "computed in C
    with NumPy's C API": no C runs on a device; the linker gives its own (``view_note``)."""
    x = sn.matrix("x")
    y = sn.exp(x).T * sn.ones_like(x).T
    f = sn.function([x], y, backend="opencl")
    views = [k for k in f.kernels if k.kind == "view"]
    assert [k.ops.split("[")[0] for k in views] == [
        "dim_shuffle",
        "shape",
        "alloc",
        "dim_shuffle",
    ]
    for k in views:
        assert k.reason == (
            "a view the device executor makes of the device array (a new shape and strides "
            "over its buffer, or read from them: no copy, no kernel), else NumPy on the host"
        )
    assert "C API" not in repr(f.kernels) and "computed in C" not in repr(f.kernels)
    on_c = [k.reason for k in sn.function([x], y, backend="c").kernels if k.kind == "view"]
    assert on_c and all("computed in C with NumPy's C API" in r for r in on_c)
    xv = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(f(xv), np.exp(xv).T, rtol=1e-15)


def test_transfers_are_steps_of_the_plan_and_fallbacks_are_shown(rng):
    x = sn.matrix("x")
    f = sn.function([x], sn.exp(sn.sort(sn.exp(x), axis=1)), backend="opencl")
    steps = f.linker.plan.steps
    kinds = [type(s).__name__ for s in steps]
    # x to the device, exp(x) to the host for sort, and sort's result back to the device
    assert kinds.count("Transfer") == 3, f.linker.plan
    sort = next(s for s in steps if isinstance(s, Library))
    assert "sort" in str(sort.node.op).lower()
    to_host = [s for s in steps if isinstance(s, Transfer) and s.to == "host"]
    assert to_host and to_host[0].out in sort.ins
    listing = repr(f.kernels)
    assert "OpenCL C" in listing and "on the host" in listing
    assert "__kernel void" in f.kernels[0].source
    xv = rng.standard_normal((4, 5))
    np.testing.assert_allclose(f(xv), np.exp(np.sort(np.exp(xv), axis=1)), rtol=1e-12)
    profile = f.profile(xv, repeat=2)
    places = {row.where for row in profile.rows}
    assert {"OpenCL kernel", "transfer", "NumPy on the host"} <= places
    assert any("transfers between host and device" in note for note in profile.notes)


def test_an_ifelse_reads_its_condition_on_the_host_and_runs_the_side_taken(rng):
    """A lazy Branch step, as on "c": the condition (a kernel's result) comes down before
    it; each side has its own transfers; a result that one side computes on the device and
    the other on the host (a constant) is uploaded as that side's last step, so the steps
    after the branch find it on the device whichever side ran."""
    m = sn.tensor("m", shape=(3, None), dtype="float64")
    picked = sn.ifelse(sn.sum(m) < 0, sn.exp(m) @ m.T, sn.constant(np.eye(3)))
    f = sn.function([m], sn.tanh(picked) * 2.0, backend="opencl")
    steps = f.linker.plan.steps
    (branch,) = [s for s in steps if isinstance(s, Branch)]
    down = steps[steps.index(branch) - 1]
    assert isinstance(down, Transfer) and down.to == "host" and down.out == branch.cond
    assert any(type(s).__name__ == "Launch" for s in branch.then_steps)
    assert [(type(s).__name__, s.to) for s in branch.else_steps] == [("Transfer", "device")]
    assert branch.else_outs == (branch.else_steps[-1].out,)
    for a in (-rng.uniform(0.5, 1.0, (3, 4)), rng.uniform(0.5, 1.0, (3, 4))):
        want = np.tanh(np.exp(a) @ a.T if a.sum() < 0 else np.eye(3)) * 2.0
        np.testing.assert_allclose(f(a), want, rtol=1e-12)
    sides = f.linker.placement().sides
    assert sides[id(branch.node)] == "device"
    assert sides[id(branch.then_steps[-1].node)] == "device"
    profile = f.profile(-np.ones((3, 2)), repeat=2)
    rows = sorted((row.label.split(": ")[1], row.where) for row in profile.rows)
    assert ("ifelse", "branch") in rows and ("ifelse", "transfer") in rows  # and the cond
    assert ("matmul", "OpenCL kernel") in rows  # the side taken, timed step by step


def test_the_schedule_reads_the_devices_compute_units_and_limits():
    runtime = current_runtime()
    device = runtime.device
    assert runtime.facts.compute_units == device.max_compute_units
    assert runtime.facts.max_group == device.max_work_group_size
    assert runtime.facts.local_bytes == device.local_mem_size


def test_card_names_the_device():
    x = sn.vector("x")
    f = sn.function([x], x * 2, backend="opencl")
    assert f.linker.device.startswith("OpenCL on ")
    bundle = f._repr_mimebundle_()
    assert f.linker.runtime.device_name in bundle["text/plain"]
    assert f"device {f.linker.device}" in bundle["text/html"]
    assert repr(f).endswith(f"backend=opencl device='OpenCL on {f.linker.runtime.device_name}'>")


def test_a_declining_kernel_reruns_on_the_host_with_numpys_error():
    x, y = sn.matrix("x"), sn.vector("y", dtype="int64")
    loss = sn.mean(sn.crossentropy(sn.softmax(x, axis=1), y))
    f = sn.function([x, y], loss, backend="opencl")
    xv = np.random.default_rng(0).standard_normal((3, 4))
    want = -np.mean(np.log(np.exp(xv) / np.exp(xv).sum(1, keepdims=True))[range(3), [0, 1, 3]])
    np.testing.assert_allclose(f(xv, np.array([0, 1, 3])), want, rtol=1e-10)
    with pytest.raises(Exception, match="out of range|out of bounds|index"):
        f(xv, np.array([0, 1, 7]))
    np.testing.assert_allclose(f(xv, np.array([0, 1, 3])), want, rtol=1e-10)


def test_calls_from_threads_each_read_their_own_status_flag():
    """A call whose kernel declines once dropped the linker's one status flag while calls in
    other threads still wrote into it: good calls crashed on None or read a stale flag,
    declined calls returned values. Each call now owns its flag."""
    import threading

    x, y = sn.tensor("x", shape=(None, 5)), sn.tensor("y", shape=(None,), dtype="int64")
    loss = sn.softmax_cross_entropy(x, y)
    f = sn.function([x, y], loss, backend="opencl")
    xv = np.random.default_rng(0).normal(size=(64, 5))
    good = np.arange(64) % 5
    bad = good.copy()
    bad[3] = 7  # out of range: the kernel declines, the host rerun raises
    want = sn.function([x, y], loss, backend="py")(xv, good)
    outcomes: list = []

    def calls(labels):
        for _ in range(60):
            try:
                got = f(xv, labels)
            except Exception as exc:  # noqa: BLE001 - recorded, checked below
                outcomes.append((labels is good, type(exc).__name__, str(exc)))
            else:
                outcomes.append((labels is good, "value", np.allclose(got, want, rtol=1e-12)))

    threads = [threading.Thread(target=calls, args=(labels,)) for labels in (good, bad, bad)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert [o for o in outcomes if o[0] and o[1:] != ("value", True)] == []
    assert len([o for o in outcomes if o[0]]) == 60
    declined = [o for o in outcomes if not o[0]]
    assert len(declined) == 120
    assert all(o[1] != "value" and "out of" in o[2] for o in declined), declined[:3]


def test_out_of_device_memory_names_the_op_its_line_and_the_bytes_asked_for():
    n = math.isqrt(current_runtime().device.max_mem_alloc_size // 4) + 1024
    nbytes = n * n * 4  # an n x n float32 past the largest buffer the device makes: refused
    x = sn.vector("x", dtype="float32")  # at once, nothing allocated
    W = sn.shared(np.zeros(3, "float32"), name="W")
    outer = x[:, None] * x[None, :]
    f = sn.function([x], outer, updates={W: W + 1}, backend="opencl")
    with pytest.raises(DeviceOutOfMemory) as info:
        f(np.ones(n, "float32"))
    error = info.value
    assert isinstance(error, DeviceError) and isinstance(error, RuntimeError)
    assert (error.nbytes, error.block) == (nbytes, bucket_of(nbytes))
    message = str(error)
    assert message.startswith("mul(") and "failed: DeviceOutOfMemory: OpenCL device" in message
    assert (
        f"could not allocate {nbytes:,} bytes (its pool's block: {bucket_of(nbytes):,};" in message
    )
    assert "test_opencl_backend.py" in message and "outer = x[:, None] * x[None, :]" in message
    assert str(pickle.loads(pickle.dumps(error))) == message
    # no pyopencl error in its chain: none pickles where exceptions pickle their causes and
    # contexts (tblib's pickling support, which dask installs in the process)
    chain, found = error, []
    while (chain := chain.__cause__ or chain.__context__) is not None:
        found.append(type(chain))
    assert all(issubclass(kind, DeviceError) for kind in found), found
    np.testing.assert_array_equal(W.get_value(), np.zeros(3))  # the failed call wrote nothing
    np.testing.assert_array_equal(f(np.arange(2, dtype="float32")), [[0, 0], [0, 1]])
    np.testing.assert_array_equal(W.get_value(), np.ones(3))


SIZES_PAST_INT64 = [(2**32, 2**32), (2, 2**60), (2**33, 2**31 + 3)]


@pytest.mark.parametrize("sizes", SIZES_PAST_INT64)
def test_a_fill_too_big_to_exist_is_numpys_error_on_alloc_as_on_backend_c(sizes):
    """The broadcast view ``alloc`` makes on the device had a size whose int64 product
    wrapped: the kernel reading it got a buffer of the wrapped size (0 bytes: a raw
    OverflowError in ``launch_args``; for 2**33 x (2**31+3) a DeviceOutOfMemory naming
    206,158,430,208 bytes) or pyopencl's TypeError for a size past size_t."""
    n, m = sn.scalar("n", dtype="int64"), sn.scalar("m", dtype="int64")
    x = sn.vector("x")
    y = sn.exp(sn.alloc(x, n, m))
    args = (np.ones(1), np.int64(sizes[0]), np.int64(sizes[1]))
    functions = [sn.function([x, n, m], y, backend=backend) for backend in ("opencl", "c")]
    messages = []
    for f in functions:
        with pytest.raises(RuntimeValueFailure) as info:
            f(*args)
        messages.append(str(info.value))
    assert messages[0] == messages[1]  # the same error as backend "c", word for word
    assert messages[0].startswith("alloc[") and "ValueError: array is too big" in messages[0]
    assert "test_opencl_backend.py" in messages[0]
    assert "y = sn.exp(sn.alloc(x, n, m))" in messages[0]
    got = functions[0](np.ones(1), np.int64(2), np.int64(3))
    np.testing.assert_allclose(got, np.full((2, 3), np.e), rtol=1e-15)


@pytest.mark.parametrize("sizes", [(2**32, 2**32), (2**33, 2**31 + 3)])
def test_a_result_too_big_to_exist_is_refused_with_its_true_byte_count(sizes):
    """An outer product of two fills, each small enough, whose result's bytes no int64 holds:
    its kernel's buffer was asked for a wrapped size (0 bytes, then an OverflowError in
    ``launch_args``; 206,158,430,208 bytes for 2**33 x (2**31+3)). It is refused before the
    driver is asked, naming the true byte count, the op and the user's line."""
    n, m = sn.scalar("n", dtype="int64"), sn.scalar("m", dtype="int64")
    x = sn.vector("x")
    outer = sn.alloc(x, n, 1) * sn.alloc(x, 1, m)
    f = sn.function([x, n, m], outer, backend="opencl")
    allocations = current_runtime().pool.allocations
    with pytest.raises(DeviceOutOfMemory) as info:
        f(np.ones(1), np.int64(sizes[0]), np.int64(sizes[1]))
    nbytes = sizes[0] * sizes[1] * 8
    error = info.value
    assert (error.nbytes, error.block) == (nbytes, nbytes)
    assert current_runtime().pool.allocations == allocations  # the driver was not asked
    message = str(error)
    assert message.startswith("mul(")
    assert f"could not allocate {nbytes:,} bytes (past the {2**63 - 1:,} bytes " in message
    assert "bytes an array can have: its size is an int64); use smaller batches" in message
    assert "outer = sn.alloc(x, n, 1) * sn.alloc(x, 1, m)" in message
    np.testing.assert_array_equal(f(np.ones(1), np.int64(2), np.int64(3)), np.ones((2, 3)))


def test_unknown_device_choice_lists_the_devices():
    before = sn.config.opencl_device
    sn.config.opencl_device = "no such device anywhere"
    try:
        with pytest.raises(DeviceError, match="names no device; the devices are"):
            x = sn.vector("x")
            sn.function([x], x * 2, backend="opencl")
    finally:
        sn.config.opencl_device = before


@pytest.mark.parametrize("choice", [1, 0, None, "0:0:0", "1:2:3"])
def test_a_device_choice_that_is_not_p_colon_d_or_a_name_is_refused_when_set(choice):
    """An int 0 silently meant the default device, 1 and "0:0:0" ended in an internal
    TypeError / ValueError (unpacking) when the function was compiled."""
    before = sn.config.opencl_device
    with pytest.raises(ValueError, match=f"config.opencl_device must be text.*not {choice!r}"):
        sn.config.opencl_device = choice
    assert sn.config.opencl_device == before


@pytest.mark.parametrize("choice", ["0:0:0", "0:99", "99:0"])
def test_numbers_that_name_no_device_list_the_devices(choice):
    from symnb.backends.opencl.device import NoOpenCLDevice
    from symnb.backends.opencl.launch import pyopencl
    from symnb.backends.opencl.runtime import chosen_device

    with pytest.raises(NoOpenCLDevice, match=f"{choice!r} names no device; the devices are"):
        chosen_device(pyopencl(), choice)


def _devices_command(choice: str | None):
    """``python -m symnb.backends.opencl`` with ``SYMNB_FLAGS=opencl_device=<choice>``."""
    env = {k: v for k, v in os.environ.items() if k != "SYMNB_FLAGS"}
    if choice is not None:
        env["SYMNB_FLAGS"] = f"opencl_device={choice}"
    command = [sys.executable, "-m", "symnb.backends.opencl"]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def test_the_device_command_lists_every_device_and_the_one_the_setting_selects():
    """It printed only the first device that builds, whatever ``sn.config.opencl_device``
    said, though the setting's error says this command lists the devices."""
    from symnb.backends.opencl.device import build_problem, usable_device
    from symnb.backends.opencl.launch import pyopencl

    cl = pyopencl()
    listed = [
        (f"{p}:{d}", f"{platform.name.strip()} / {device.name.strip()}", device)
        for p, platform in enumerate(cl.get_platforms())
        for d, device in enumerate(platform.get_devices())
    ]
    done = _devices_command(None)
    assert done.returncode == 0, done.stderr
    for number, name, device in listed:
        builds = "builds kernels" if build_problem(cl, device) is None else "does not build"
        assert f"  {number}  {name} (" in done.stdout and builds in done.stdout.split(name)[1]
    default = next(n for n, _, device in listed if device == usable_device(cl))
    assert f"'' (the first device that builds kernels): backend \"opencl\" runs on {default} " in (
        done.stdout
    )
    done = _devices_command(default)
    assert done.returncode == 0, done.stderr
    assert f"opencl_device = '{default}': backend \"opencl\" runs on {default} " in done.stdout


@pytest.mark.parametrize("choice", ["0:7", "no such device"])
def test_the_device_command_fails_for_a_setting_that_names_no_device(choice):
    """With ``opencl_device=0:7`` it reported success on device 0 and exited 0."""
    done = _devices_command(choice)
    assert done.returncode == 1
    assert f"sn.config.opencl_device = {choice!r} names no device; the devices are" in done.stderr
    assert "  0:0  " in done.stdout  # the devices are listed, numbered


def mlp_accuracy(backend: str, steps: int = 30) -> tuple[float, float]:
    """(final loss, training accuracy) of a tanh MLP fitted to three Gaussian blobs."""
    from benchmarks.rewrite_time import mlp_training_step

    rng = np.random.default_rng(0)
    centers = rng.normal(scale=3.0, size=(3, 8))
    labels = rng.integers(0, 3, 192)
    data = centers[labels] + rng.normal(size=(192, 8))
    inputs, loss, updates, params = mlp_training_step(layers=2, lr=0.3)
    train = sn.function(inputs, loss, updates=updates, backend=backend)
    x = inputs[0]
    predict = sn.function([x], sn.argmax(_logits(x, params), axis=1), backend=backend)
    for _ in range(steps):
        last = float(train(data, labels))
    return last, float(np.mean(predict(data) == labels))


def _logits(x, params):
    W0, b0, W1, b1 = params
    return sn.tanh(x @ W0 + b0) @ W1 + b1


@needs_c
def test_mlp_trains_on_opencl_like_on_c():
    loss_c, accuracy_c = mlp_accuracy("c")
    loss_cl, accuracy_cl = mlp_accuracy("opencl")
    assert accuracy_c > 0.9
    assert accuracy_cl == accuracy_c
    np.testing.assert_allclose(loss_cl, loss_c, rtol=1e-8)


@needs_c
def test_symcompile_cell_on_opencl_and_c_gives_kernels_of_one_description():
    from symnb.magics.cell import parse_line, symcompile

    cell = "x = tensor('x', shape=(3, 4))\nsoftmax(exp(x) * 2, axis=1)"
    on_cl = symcompile(parse_line("f --backend opencl --quiet"), cell)
    on_c = symcompile(parse_line("g --backend c --quiet"), cell)
    descriptions = [[r.description for r in f.linker.kernel_refs] for f in (on_cl, on_c)]
    assert descriptions[0] == descriptions[1] and descriptions[0]
    assert "__kernel void" in on_cl.kernels.sources()[0]
    xv = np.random.default_rng(0).standard_normal((3, 4))
    np.testing.assert_allclose(on_cl(xv), on_c(xv), rtol=1e-12)


def test_bool_arithmetic_is_numpys_where_bools_are_bytes():
    """OpenCL stores bools as uchar, where True + True is 2: NumPy's bool add is an or, so
    ``(a + b) > b`` is False when both are True, and a bool product stays 0 or 1."""
    a, b = sn.vector("a", dtype="bool"), sn.vector("b", dtype="bool")
    f = sn.function([a, b], [(a + b) > b, a * b, (a + b) == (a | b)], backend="opencl")
    av, bv = np.array([0, 1, 0, 1], bool), np.array([0, 0, 1, 1], bool)
    got = f(av, bv)
    for g, w in zip(got, [(av + bv) > bv, av * bv, (av + bv) == (av | bv)]):
        assert g.dtype == np.bool_
        np.testing.assert_array_equal(g, w)


def test_profile_counts_a_transfers_bytes_once_per_call():
    """A transfer's input and output are one array on each side of the bus: one copy."""
    x = sn.matrix("x")
    f = sn.function([x], [sn.exp(x), x[1:]], backend="opencl")
    xv = np.ones((5, 3))  # 120 bytes
    profile = f.profile(xv, repeat=3)
    moved = [r for r in profile.rows if r.where == "transfer"]
    assert [r.bytes_per_call for r in moved] == [120, 120]  # x up, exp(x) down
    assert all(r.bytes == 3 * r.bytes_per_call for r in moved)
    note = next(n for n in profile.notes if n.startswith("transfers between host and device"))
    assert note.endswith(", 240 bytes per call"), note
    placed = next(n for n in profile.notes if n.startswith("where the steps run"))
    assert "1 × view on the device" in placed and "(C)" not in placed, placed


def test_kernel_builds_print_no_compiler_warnings(tmp_path):
    """A driver's compiler warns on the process's stderr, where a user cannot silence it
    (PoCL: "2 warnings generated." and pyopencl's CompilerWarning for ``x <= x`` of
    integers); kernels are built without warnings."""
    script = (
        "import numpy as np, symnb as sn\n"
        "x = sn.vector('x', dtype='int32')\n"
        "f = sn.function([x], x <= x, backend='opencl', optimize='none')\n"
        "assert f(np.arange(3, dtype='int32')).all()\n"
    )
    env = dict(os.environ, SYMNB_COMPILEDIR=str(tmp_path), POCL_CACHE_DIR=str(tmp_path / "pocl"))
    done = subprocess.run(
        [sys.executable, "-W", "always", "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr.lower(), done.stderr


def test_a_float_constant_is_a_scalar_operand_uploaded_once():
    """``W * 0.9 - 0.1 * x``: the rates are operands the device reads (one constant slot each,
    uploaded on the first call and kept there), so another rate is the same program."""
    rng = np.random.default_rng(0)
    start, xv = (rng.standard_normal(7).astype("float32") for _ in range(2))

    def build(keep, lr):
        x = sn.vector("x", dtype="float32")
        W = sn.shared(start.copy(), name="W")
        f = sn.function([x], sn.sum(W * x), updates={W: W * keep - lr * x}, backend="opencl")
        return f, W

    f, W = build(0.9, 0.1)
    want = start.copy()
    for _ in range(3):
        np.testing.assert_allclose(f(xv), np.sum(want * xv), rtol=1e-5)
        want = want * np.float32(0.9) - np.float32(0.1) * xv
        np.testing.assert_array_equal(W.get_value(), want)
    values = {float(v) for _, v in f.linker.plan.constants if np.ndim(v) == 0}
    assert {0.9, 0.1} <= values
    uploaded = dict(f.linker._constants)
    assert len(uploaded) >= 2
    f(xv)
    assert all(f.linker._constants[slot] is copy for slot, copy in uploaded.items())
    other, _ = build(0.8, 0.2)
    assert other.kernels.sources() == f.kernels.sources()
    assert not any("0x1.999999999999ap-4" in s for s in f.kernels.sources())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log1p_of_subnormals_is_the_input_as_numpy_gives(dtype):
    # PoCL's log1p builtin flushes subnormals to 0; log(sigmoid(100)) rewrites to log1p of one
    tiny = np.finfo(dtype).smallest_subnormal
    x = sn.tensor("x", shape=(None,), dtype=dtype)
    v = np.array([tiny, -tiny, tiny * 2**20, 1e-3, -0.5], dtype=dtype)
    got = sn.function([x], sn.log1p(x), backend="opencl")(v)
    np.testing.assert_array_equal(got, np.log1p(v))
    if dtype == "float32":  # exp(-100) is subnormal in float32
        f = sn.function([x], sn.log(sn.sigmoid(x)), backend="opencl")
        want = -np.log1p(np.exp(-np.float64(100))).astype(dtype)
        np.testing.assert_array_equal(f(np.array([100.0], dtype=dtype)), [want])


def test_a_weak_float_times_float32_stays_a_kernel_without_float64():
    rt = current_runtime()
    rt.float64 = False
    try:
        x = sn.tensor("x", shape=(None,), dtype="float32")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            f = sn.function([x], x * 0.1, backend="opencl")
        assert [k.kind for k in f.linker.kernels] == ["kernel"]
        assert "double" not in f.linker.kernels[0].source
        got = f(np.ones(3, "float32"))
    finally:
        rt.float64 = True
    np.testing.assert_array_equal(got, np.ones(3, "float32") * 0.1)
