"""A scan on backend="opencl" (PoCL) runs its loop on the device executor: a ``Repeat`` step
whose body is a device plan, run per step over device arrays (symnb/backends/device/loop.py,
``execute.run_repeat``). Its results equal backend "py"'s (forward with history and last-only
states, plain outputs, backwards, gradients, until, strided operands), a loop's errors are
the other backends', and an RNN training step's transfers do not grow with its steps while
its body's kernels launch once per step. The same counts for backend "cuda" through a
stand-in driver are in test_cuda_residency.py."""

from __future__ import annotations

import collections
import os

import numpy as np
import pytest

import symnb as sn
from symnb.backends.device import execute as device_execute
from symnb.backends.device.loop import DeviceMemory
from symnb.backends.device.runtime import DeviceArray
from symnb.backends.plan import Launch, Repeat
from tests.helpers import available_backends, opencl_problem

#: skipped without an OpenCL device that builds kernels, unless SYMNB_REQUIRE_OPENCL=1 (then
#: they run, and fail there: tests/backends/conftest.py)
needs_opencl = pytest.mark.skipif(
    opencl_problem() is not None and os.environ.get("SYMNB_REQUIRE_OPENCL") != "1",
    reason=str(opencl_problem()),
)
COUNTED = ("write", "upload", "read", "download", "copy", "launch", "synchronize")


@pytest.fixture(autouse=True)
def loops_on_the_device(monkeypatch):
    """The device loop (the default, ``device_loops="device"``) whatever ``SYMNB_FLAGS`` says:
    PoCL is a CPU device, where ``"auto"`` would run the loops on the host (tested at the
    end)."""
    monkeypatch.setattr(sn.config, "device_loops", "device")


class Counter:
    """Calls of a runtime's copies (to, from and within the device), launches and waits
    since the last ``take``."""

    def __init__(self, runtime, monkeypatch):
        self.calls = collections.Counter()
        for name in COUNTED:
            monkeypatch.setattr(runtime, name, self._counting(name, getattr(runtime, name)))

    def _counting(self, name, method):
        def counted(*args):
            self.calls[name] += 1
            return method(*args)

        return counted

    def take(self) -> dict:
        counts = {name: self.calls[name] for name in COUNTED}
        self.calls.clear()
        return counts


def loops_of(f) -> list[Repeat]:
    """The loop steps of a function's plan."""
    return [s for s in f.linker.plan.steps if isinstance(s, Repeat)]


def spy_on_loops(monkeypatch) -> list:
    """The loop steps the device executor runs from now on (``run_repeat``), in order."""
    ran = []

    def run_repeat(call, step, slots):
        ran.append(step)
        return device_execute.run_repeat(call, step, slots)

    monkeypatch.setitem(device_execute.EXECUTE, Repeat, run_repeat)
    return ran


def launches_per_call(f, n_steps: int) -> int:
    """Kernel launches of one call: the plan's, and each loop body's once per step."""
    outer = sum(isinstance(s, Launch) for s in f.linker.plan.steps)
    body = sum(isinstance(s, Launch) for loop in loops_of(f) for s in loop.body.steps)
    return outer + n_steps * body


def row_copies_per_call(f, n_steps: int) -> int:
    """Copies within the device of one call: each loop's sequence rows (the first is a view
    of the sequence), each state's history row and plain output's row per step."""
    return sum(
        loop.n_seqs * (n_steps - 1) + (sum(loop.history) + loop.n_plain) * n_steps
        for loop in loops_of(f)
    )


# -- an RNN step, its gradients ------------------------------------------------------------------
def rnn_values(rng, n_in=5, n_hidden=6) -> dict:
    return {
        "W": rng.normal(scale=0.5, size=(n_in, n_hidden)).astype("float32"),
        "U": rng.normal(scale=0.5, size=(n_hidden, n_hidden)).astype("float32"),
        "b": rng.normal(scale=0.1, size=n_hidden).astype("float32"),
    }


def rnn_step(values: dict, backend: str):
    """h_t = tanh(x_t @ W + h_{t-1} @ U + b) over x (steps, batch, n_in), the loss the sum of
    the squared states; the function returns the loss and its gradients wrt W, U, b."""
    x, h0 = sn.tensor3("x", dtype="float32"), sn.matrix("h0", dtype="float32")
    W, U, b = (sn.shared(values[k], name=k) for k in "WUb")
    hs, _ = sn.scan(lambda xt, h: sn.tanh(xt @ W + h @ U + b), sequences=x, outputs_info=h0)
    loss = sn.sum(hs * hs)
    return sn.function([x, h0], [loss, *sn.grad(loss, [W, U, b])], backend=backend)


def rnn_inputs(rng, n_steps: int, batch=4, n_in=5, n_hidden=6):
    return (
        rng.normal(size=(n_steps, batch, n_in)).astype("float32"),
        rng.normal(size=(batch, n_hidden)).astype("float32"),
    )


@needs_opencl
def test_an_rnn_step_runs_its_loop_on_the_device(rng, monkeypatch):
    values = rnn_values(rng)
    f, reference = rnn_step(values, "opencl"), rnn_step(values, "py")
    assert len(loops_of(f)) == 2  # the forward loop and its gradient's backward loop
    counter = Counter(f.linker.runtime, monkeypatch)
    inside = []  # what each loop step of a call did, counted from its start to its end

    def run_repeat(call, step, slots):
        before = dict(counter.calls)
        device_execute.run_repeat(call, step, slots)
        inside.append({k: counter.calls[k] - before.get(k, 0) for k in COUNTED})

    monkeypatch.setitem(device_execute.EXECUTE, Repeat, run_repeat)
    counts = {}
    for n_steps in (20, 40):
        x, h0 = rnn_inputs(rng, n_steps)
        f(x, h0)  # (the launch arguments of new shapes go up once)
        counter.take()
        inside.clear()
        got = f(x, h0)
        counts[n_steps] = counter.take()
        for loop, did in zip(loops_of(f), inside, strict=True):  # nothing crosses the bus
            body = sum(isinstance(s, Launch) for s in loop.body.steps)
            assert did["launch"] == n_steps * body, (did, loop.body)
            assert did["write"] == did["upload"] == did["read"] == did["download"] == 0, did
        for g, want in zip(got, reference(x, h0)):
            np.testing.assert_allclose(g, want, rtol=2e-4, atol=1e-5)
        assert counts[n_steps]["launch"] == launches_per_call(f, n_steps), counts
        # the loops' rows, and the gradient's concatenate(h0[None], hs[:-1]): one copy per
        # piece (the slices x[:n] and hs[:-1] start at their source's start: views)
        assert counts[n_steps]["copy"] == row_copies_per_call(f, n_steps) + 2, counts
    across = ("write", "upload", "read", "download", "synchronize")
    assert {k: counts[20][k] for k in across} == {k: counts[40][k] for k in across}, counts
    assert counts[20]["synchronize"] == 1 and counts[20]["upload"] == 0, counts
    # only the inputs go up (x, h0: written into pooled buffers), only the results come
    # home (the loss and 3 gradients, queued behind the kernels with the status word): the
    # gradient's slices, concatenate and reshape between the loops stay on the device
    assert counts[20]["write"] == len(f.inputs), counts
    assert counts[20]["read"] == 4 + 1 and counts[20]["download"] == 0, counts


# -- results equal backend "py"'s ------------------------------------------------------------------
def _forward_history_and_plain():
    x = sn.tensor("x", shape=("T", 3), dtype="float64")
    h0 = sn.tensor("h0", shape=(3,), dtype="float64")
    (hs, products), _ = sn.scan(
        lambda xt, h: (0.5 * h + sn.sin(xt), xt * h), sequences=x, outputs_info=[h0, None]
    )
    return [x, h0], [hs, products], [(7, 3), (3,)]


def _last_only_state_and_shared_update():
    count = sn.shared(np.float64(0.0), name="count")
    n = sn.scalar("n", dtype="int64")
    h0 = sn.tensor("h0", shape=(2,), dtype="float64")
    hs, updates = sn.scan(lambda h: (2 * h, {count: count + h[0]}), outputs_info=h0, n_steps=n)
    return [n, h0], [hs[-1], updates[count]], [5, (2,)]


def _backwards_with_taps():
    x = sn.tensor("x", shape=(6,), dtype="float64")
    (sums, diffs), _ = sn.scan(
        lambda prev, now, acc: (acc + now, now - prev),
        sequences={"input": x, "taps": [-1, 0]},
        outputs_info=[sn.constant(0.0), None],
        go_backwards=True,
    )
    return [x], [sums, diffs], [(6,)]


def _gradient_of_two_taps():
    x = sn.tensor("x", shape=(5, 2), dtype="float64")
    h0 = sn.tensor("h0", shape=(2, 2), dtype="float64")
    hs, _ = sn.scan(
        lambda xt, h2, h1: 0.5 * h1 - 0.3 * h2 * h1 + sn.tanh(xt),
        sequences=x,
        outputs_info={"initial": h0, "taps": [-2, -1]},
    )
    cost = sn.sum(hs * hs)
    return [x, h0], [hs, *sn.grad(cost, [x, h0])], [(5, 2), (2, 2)]


def _until():
    a = sn.tensor("A", shape=(4, 4), dtype="float64")
    v0 = sn.tensor("v0", shape=(4,), dtype="float64")

    def step(v, a):
        w = a @ v
        w = w / sn.sqrt(sn.sum(w * w))
        return w, sn.until(sn.max(sn.abs(w - v)) < 1e-6)

    vs, _ = sn.scan(step, outputs_info=v0, non_sequences=a, n_steps=300)
    return [a, v0], [vs], [(4, 4), (4,)]


def _until_early_and_its_gradient():
    """A loop that stops before its last row (then its gradient's loop, backwards, over the
    steps it ran)."""
    x = sn.tensor("x", shape=(8, 3), dtype="float64")
    hs, _ = sn.scan(
        lambda xt, h: (h + xt * xt, sn.until(sn.sum(h) > 4.0)),
        sequences=x,
        outputs_info=sn.zeros(3),
        go_backwards=True,
    )
    return [x], [hs, sn.grad(sn.sum(hs * hs), x)], [(8, 3)]


def _strided_operands():
    """A transposed sequence (made dense once on the device), a state the step returns
    transposed, and a plain output that is a broadcast fill (both copied dense per row)."""
    x = sn.tensor("x", shape=(3, "T"), dtype="float64")
    h0 = sn.tensor("h0", shape=(3, 3), dtype="float64")
    (hs, fills), _ = sn.scan(
        lambda xt, h: ((h + xt).T, sn.ones_like(h) * sn.sum(xt)),
        sequences=x.T,
        outputs_info=[h0, None],
    )
    return [x, h0], [hs, fills], [(3, 6), (3, 3)]


def _nested_and_its_gradient():
    """A loop in a loop's step (the body's own Repeat, run by the body's executor)."""
    x = sn.tensor("x", shape=(4, 3, 2), dtype="float64")

    def outer(xt, acc):
        inner, _ = sn.scan(lambda r, h: 0.5 * h + sn.sin(r), sequences=xt, outputs_info=sn.zeros(2))
        return acc + inner[-1] + sn.sum(inner, axis=0)

    hs, _ = sn.scan(outer, sequences=x, outputs_info=sn.zeros(2))
    return [x], [hs, sn.grad(sn.sum(hs * hs), x)], [(4, 3, 2)]


def _no_steps():
    x = sn.tensor("x", shape=("T", 2), dtype="float64")
    n = sn.scalar("n", dtype="int64")
    (hs, out), _ = sn.scan(
        lambda xt, h: (h + xt, 2 * xt), sequences=x, outputs_info=[sn.zeros(2), None], n_steps=n
    )
    return [x, n], [hs, out], [(4, 2), 0]


CASES = {
    "forward history and plain outputs": _forward_history_and_plain,
    "last-only state and a shared update": _last_only_state_and_shared_update,
    "backwards with taps": _backwards_with_taps,
    "gradient of two taps": _gradient_of_two_taps,
    "until": _until,
    "until early and its gradient": _until_early_and_its_gradient,
    "strided operands": _strided_operands,
    "nested and its gradient": _nested_and_its_gradient,
    "no steps": _no_steps,
}


def _arguments(rng, specs):
    return [
        np.int64(s) if isinstance(s, int) else rng.normal(size=s).astype("float64") for s in specs
    ]


@needs_opencl
@pytest.mark.parametrize("case", CASES)
def test_scan_results_equal_backend_py(case, rng, monkeypatch):
    ran = spy_on_loops(monkeypatch)
    results, args = {}, None
    for backend in ("opencl", "py"):
        inputs, outputs, specs = CASES[case]()
        f = sn.function(inputs, outputs, backend=backend)
        if case == "until":  # a matrix whose top eigenvector the loop finds in some steps
            m = rng.normal(size=(4, 4))
            args = args or [m @ m.T + np.diag([8.0, 0, 0, 0]), np.ones(4) / 2]
        else:
            args = args or _arguments(rng, specs)
        results[backend] = [np.asarray(v) for v in f(*args)]
        if backend == "opencl":
            assert loops_of(f) and len(ran) >= len(loops_of(f)), f.linker.plan
            results["opencl again"] = [np.asarray(v) for v in f(*args)]
    if case == "until early and its gradient":
        assert 1 < len(results["py"][0]) < 8, results["py"][0]
    for got, again, want in zip(results["opencl"], results["opencl again"], results["py"]):
        assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(again, got)


HESSIANS = {
    "sum(x * x[::-1])": lambda x: sn.sum(x * x[::-1]),
    "sum(sin(x) * x[::-1] ** 2)": lambda x: sn.sum(sn.sin(x) * x[::-1] ** 2),
    "sum(x[::-1] * exp(x)) + sum(x ** 3)": lambda x: sn.sum(x[::-1] * sn.exp(x)) + sn.sum(x**3),
}


@needs_opencl
@pytest.mark.parametrize("expression", HESSIANS)
def test_a_hessian_of_unknown_length_equals_backend_py(expression, rng, monkeypatch):
    """sn.hessian of an x of unknown length is a scan over the gradient's entries, whose body
    reverses a one-hot row on the host (a reversed slice, then inc_subtensor) and uploads it
    for a kernel. The body's plan ran each step with one call, whose uploads (by slot) were
    the first step's: every row after the first read the first row's one-hot."""
    ran = spy_on_loops(monkeypatch)
    x = sn.tensor("x", shape=(None,), dtype="float64")
    hessian = sn.hessian(HESSIANS[expression](x), x)
    f = sn.function([x], hessian, backend="opencl")
    reference = sn.function([x], hessian, backend="py")
    for n in (4, 5):
        value = rng.normal(size=n)
        np.testing.assert_allclose(f(value), reference(value), rtol=1e-12, atol=1e-12)
    assert ran, f.linker.plan


def test_device_memory_copies_rows_at_offsets(opencl_runtime):
    """Rows read, written and kept by byte offsets within the device."""
    runtime = opencl_runtime
    memory = DeviceMemory(runtime, dense=None)
    seq = runtime.to_device(np.arange(24.0).reshape(4, 2, 3))
    for t in range(4):
        np.testing.assert_array_equal(
            memory.row(seq, t).to_host(), np.arange(24.0).reshape(4, 2, 3)[t]
        )
    repeated = seq.view((4, 2, 3), (0, *seq.strides[1:]))  # one row at every step
    assert memory.sequence(repeated) is repeated
    np.testing.assert_array_equal(memory.row(repeated, 3).to_host(), np.arange(6.0).reshape(2, 3))
    rows = memory.empty((3, 2), np.float32)
    for t in (2, 0, 1):
        memory.put(rows, t, runtime.to_device(np.full(2, t, np.float32)))
    np.testing.assert_array_equal(rows.to_host(), [[0, 0], [1, 1], [2, 2]])
    np.testing.assert_array_equal(memory.part(rows, 1, 3).to_host(), [[1, 1], [2, 2]])
    np.testing.assert_array_equal(memory.part(rows, 0, 2).to_host(), [[0, 0], [1, 1]])
    assert memory.truth(runtime.to_device(np.array(True))) is True


@needs_opencl
def test_strided_values_are_made_dense_on_the_device(rng, monkeypatch):
    """The strided case copies on the device (a copy kernel), not through the host."""
    inputs, outputs, specs = _strided_operands()
    f = sn.function(inputs, outputs, backend="opencl")
    args = _arguments(rng, specs)
    f(*args)
    assert f.linker._dense, "no strided value was made dense"
    counter = Counter(f.linker.runtime, monkeypatch)
    f(*args)
    counts = counter.take()
    assert counts["write"] == 2 and counts["read"] == 3 and counts["download"] == 0, counts


@needs_opencl
def test_the_gradient_through_a_device_loop_matches_finite_differences(rng, monkeypatch):
    ran = spy_on_loops(monkeypatch)

    def rnn(x, h0, w, u):
        hs, _ = sn.scan(lambda xt, h: sn.tanh(xt @ w + h @ u), sequences=x, outputs_info=h0)
        return hs

    arrays = [
        rng.normal(size=(9, 2, 3)),
        rng.normal(size=(2, 4)),
        rng.normal(scale=0.6, size=(3, 4)),
        rng.normal(scale=0.6, size=(4, 4)),
    ]
    sn.check_grad(rnn, arrays, backend="opencl", rng=5)
    assert len(ran) >= 3, ran  # the forward loops, and the gradient's backward one


# -- errors ------------------------------------------------------------------------------------
def _growing_state_error(backend: str) -> Exception:
    """The error of a call whose loop's state grows at its first step (raised on one line,
    which each backend's message names)."""
    h0 = sn.tensor("h0", shape=(None,), dtype="float64")
    hs, _ = sn.scan(lambda h: sn.concatenate([h, h]), outputs_info=h0, n_steps=3)
    with pytest.raises(sn.SymnbError) as info:
        sn.function([h0], hs, backend=backend)(np.ones(2))
    return info.value


@needs_opencl
def test_a_state_that_changes_shape_is_the_error_other_backends_raise():
    """Backend "c"'s error (its runner hands the loop to the Python executor), which is
    backend "py"'s (the loop's reference, wrapped naming the scan node)."""
    got = _growing_state_error("opencl")
    message = str(got)
    assert isinstance(got, sn.ShapeError), message
    assert "the state 'h0' has shape (2,) before step 0 but the step returned shape (4,)" in (
        message
    )
    assert message.splitlines()[0] in str(_growing_state_error("py"))
    if "c" in available_backends():
        assert message == str(_growing_state_error("c"))


@needs_opencl
def test_a_kernel_that_declines_inside_a_loop_reruns_the_call_on_the_host():
    """A label out of range: the body's row kernel declines (the call's status flag), the
    call runs again on the host, whose reference raises the error naming the op."""
    x = sn.tensor3("x", dtype="float64")
    y = sn.matrix("y", dtype="int64")
    losses, _ = sn.scan(
        lambda xt, yt: sn.mean(sn.crossentropy(sn.softmax(xt, axis=1), yt)), sequences=[x, y]
    )
    f = sn.function([x, y], losses, backend="opencl")
    reference = sn.function([x, y], losses, backend="py")
    xv = np.random.default_rng(0).standard_normal((3, 2, 4))
    good = np.array([[0, 1], [3, 2], [1, 1]])
    np.testing.assert_allclose(f(xv, good), reference(xv, good), rtol=1e-12)
    bad = good.copy()
    bad[2, 1] = 7
    with pytest.raises(Exception, match="out of range|out of bounds|index"):
        f(xv, bad)
    np.testing.assert_allclose(f(xv, good), reference(xv, good), rtol=1e-12)
    assert isinstance(f.linker.plan.steps, tuple) and loops_of(f)


@needs_opencl
def test_a_shared_value_a_loop_updates_stays_on_the_device():
    """A shared value the loop updates (a last-only state of the loop) is kept on the
    device between calls: no copy home, none up again."""
    total = sn.shared(np.zeros(3), name="total")
    h0 = sn.tensor("h0", shape=(3,), dtype="float64")
    hs, updates = sn.scan(lambda h: (0.5 * h + 1.0, {total: total + h}), outputs_info=h0, n_steps=4)
    f = sn.function([h0], sn.sum(hs), updates=updates, backend="opencl")
    want, h = np.zeros(3), np.arange(3.0)
    for _ in range(2):
        f(np.arange(3.0))
        assert isinstance(total.current_value(), DeviceArray)
    for _ in range(4):
        want, h = want + h, 0.5 * h + 1.0
    np.testing.assert_allclose(total.get_value(), 2 * want)


# -- where the loop runs (sn.config.device_loops) -------------------------------------------------
def _where_loops_ran(f) -> list[str]:
    """The kinds of the plan's scan steps and their notes in ``f.kernels``."""
    return [
        (info.kind, info.reason) for info in f.linker.kernels if info.kind in ("loop", "library")
    ]


@needs_opencl
@pytest.mark.parametrize("setting", ["auto", "host", "device"])
def test_device_loops_picks_where_a_scan_runs_and_the_results_agree(setting, rng, monkeypatch):
    """On PoCL (a CPU device) "auto" runs the loop on the host, as "host" does; "device", the
    default, runs it on the device. The listing says which and why; the values equal backend
    "py"'s."""
    monkeypatch.setattr(sn.config, "device_loops", setting)
    values = rnn_values(rng)
    f, reference = rnn_step(values, "opencl"), rnn_step(values, "py")
    ran = spy_on_loops(monkeypatch)
    x, h0 = rnn_inputs(rng, 7)
    for g, want in zip(f(x, h0), reference(x, h0), strict=True):
        np.testing.assert_allclose(g, want, rtol=2e-4, atol=1e-5)
    assert f.linker.runtime.on_cpu  # PoCL
    notes = [reason for kind, reason in _where_loops_ran(f) if "loop" in reason]
    if setting == "device":
        assert len(loops_of(f)) == 2 and len(ran) == 2
        assert f.linker.host_loops is None
        assert all(n.startswith("a loop run by the device executor") for n in notes), notes
    else:
        assert loops_of(f) == [] and ran == []
        why = "is a CPU device" if setting == "auto" else 'sn.config.device_loops is "host"'
        assert why in f.linker.host_loops
        assert len(notes) == 2 and all(
            n.startswith("a loop run on the host (its NumPy reference): ") and why in n
            for n in notes
        ), notes


def test_device_loops_is_device_by_default_and_takes_only_its_three_values():
    assert sn.config.__class__().device_loops == "device"  # a scan runs on the GPU's side
    with pytest.raises(ValueError, match="config.device_loops must be 'device', 'auto' or 'host'"):
        sn.config.device_loops = "gpu"
