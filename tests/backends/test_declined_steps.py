"""The C runner is backend "c"'s executor of record: a step it cannot run is run by Python for
that step alone (the runner goes on, no earlier step runs again), a Python step's error is
raised by the runner's call, and ``f.profile()`` times the runner's own steps."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from symnb.backends import execute
from symnb.backends.c import runner
from symnb.backends.plan import Branch, Gemm, Launch, Library, Repeat, View
from symnb.core.op import Op
from symnb.core.types import TensorType
from tests.helpers import needs_c, tolerance

pytestmark = [
    needs_c,
    pytest.mark.skipif(runner.module() is None, reason="the C runner could not be built"),
]
RNG = np.random.default_rng(0)


class _Counted(Op):
    """``x * 1`` as a Python step (no kernel), counting its calls."""

    def __init__(self):
        self.calls = 0

    def infer_types(self, x):
        return [TensorType(x.type.dtype, x.type.shape)]

    def perform(self, x):
        self.calls += 1
        return np.array(x, copy=True)


class _FailsOnNegative(Op):
    """``x`` itself, but an error when it holds a negative number."""

    def infer_types(self, x):
        return [TensorType(x.type.dtype, x.type.shape)]

    def perform(self, x):
        if (x < 0).any():
            raise ValueError("negative input")
        return np.array(x, copy=True)


def _every_kind():
    """A graph whose plan on backend "c" holds every step kind, a counted Python step first,
    and its arguments: a product, kernels, a library step, views, a lazy branch, a loop."""
    counted = _Counted()
    x, w = sn.matrix("x", shape=(6, 4)), sn.matrix("w", shape=(4, 5))
    c = sn.scalar("c", dtype="bool")
    h = sn.tanh(counted(x) @ w)
    s = sn.sort(h, axis=1)
    t = s.T * 2.0
    picked = sn.ifelse(c, sn.sum(t * 3.0), sn.sum(sn.exp(t)))
    rows, _ = sn.scan(
        lambda row, acc: acc + sn.tanh(row) * 0.5, sequences=h, outputs_info=sn.zeros(5)
    )
    outputs = [h, s, t, picked, rows]
    args = [RNG.standard_normal((6, 4)), RNG.standard_normal((4, 5))]
    return counted, [x, w, c], outputs, args


KINDS = {
    "library": Library,
    "launch": Launch,
    "gemm": Gemm,
    "view": View,
    "branch": Branch,
    "loop": Repeat,
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_step_kind_declined_in_c_gives_the_same_values_without_rerunning(kind, monkeypatch):
    """Every step of one kind handed to Python (runner.py's ``force_decline``): the call
    returns backend "py"'s values, the Python step before them runs once per call, and each
    declined step runs once in Python."""
    handed: list = []
    declined = execute.run_declined

    def counting(step, slots, raised=None):
        handed.append(step)
        return declined(step, slots, raised)

    monkeypatch.setattr(execute, "run_declined", counting)  # bound into the records below
    counted, inputs, outputs, args = _every_kind()
    f = sn.function(inputs, outputs, backend="c")
    plan = f.linker.plan
    present = {type(step) for step in plan.steps}
    present |= {
        type(s)
        for step in plan.steps
        if isinstance(step, Branch)
        for s in (*step.then_steps, *step.else_steps)
    }
    assert set(KINDS.values()) <= present, f.kernels
    schedule = runner.schedule(plan)
    runner.force_decline(schedule, [kind])
    want_f = sn.function(inputs, outputs, backend="py")
    for truth in (True, False):
        full = [*args, np.bool_(truth)]
        want = want_f(*full)
        counted.calls, handed[:] = 0, []
        got = schedule(*full)
        assert counted.calls == 1, (kind, counted.calls)  # no step ran twice
        assert handed and all(isinstance(s, KINDS[kind]) for s in handed), (kind, handed)
        if kind in ("branch", "loop"):  # one of each, handed over once
            assert len(handed) == 1, handed
        for g, w in zip(got, want, strict=True):
            tol = tolerance(w.dtype, 10)
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=kind)
    assert schedule.runs == 2 and schedule.declined >= 2


def test_without_forcing_no_step_is_declined():
    counted, inputs, outputs, args = _every_kind()
    f = sn.function(inputs, outputs, backend="c")
    want = sn.function(inputs, outputs, backend="py")(*args, np.bool_(True))
    counted.calls = 0
    for g, w in zip(f(*args, np.bool_(True)), want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    assert f.runner.runs == 1 and f.runner.declined == 0 and counted.calls == 1


def test_a_python_steps_error_is_raised_by_the_runner_after_one_run():
    counted = _Counted()
    x = sn.vector("x")
    y = _FailsOnNegative()(sn.exp(counted(x)) - 2.0) * 3.0
    f = sn.function([x], y, backend="c")
    np.testing.assert_allclose(f(np.ones(3)), (np.e - 2) * 3 * np.ones(3))
    counted.calls = 0
    with pytest.raises(execute.RuntimeFailure, match="negative input") as err:
        f.runner(np.zeros(3))  # the runner's own call raises it
    assert "test_declined_steps.py" in str(err.value)  # the user's line
    assert counted.calls == 1 and f.runner.declined == 1 and f.runner.runs == 1
    with pytest.raises(execute.RuntimeFailure, match="negative input"):
        f(np.zeros(3))
    assert counted.calls == 2  # the function did not run the call again in Python


def test_arguments_not_as_planned_are_converted_then_run_by_the_runner(monkeypatch):
    """A Python number or list: the input checks convert it and the runner runs the call;
    the Python executor runs no call of a function that has a runner."""
    monkeypatch.setattr(execute, "run", lambda *a: pytest.fail("the Python executor ran"))
    a, v = sn.scalar("a"), sn.vector("v", shape=(3,))
    f = sn.function([a, v], a * v + 1, backend="c")
    np.testing.assert_allclose(f(2.0, [1, 2, 3]), [3.0, 5.0, 7.0])
    assert f.runner.runs == 1 and f.runner.declined == 1
    with pytest.raises(sn.InputError, match="axis 0 has length 4, expected 3"):
        f(2.0, [1, 2, 3, 4])


# -- f.profile() times the runner's steps ------------------------------------------------------
def _mlp_step():
    """The loss and gradients of an MLP (784-256-64-10, batch 128, float32): above timer
    noise, and with no updates, so the profile's plain calls are ``f(*args)`` itself."""
    rng = np.random.default_rng(1)
    x = sn.tensor("x", shape=("batch", 784), dtype="float32")
    y = sn.tensor("y", shape=("batch", 10), dtype="float32")
    sizes = [784, 256, 64, 10]
    params = []
    h = x
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        w = sn.shared((rng.standard_normal((n_in, n_out)) * 0.05).astype("float32"), name=f"w{i}")
        b = sn.shared(np.zeros(n_out, "float32"), name=f"b{i}")
        params += [w, b]
        h = h @ w + b
        h = sn.tanh(h) if i < len(sizes) - 2 else h
    loss = -sn.mean(sn.sum(y * sn.log_softmax(h, axis=-1), axis=1))
    f = sn.function([x, y], [loss, *sn.grad(loss, params)], backend="c")
    xb = rng.standard_normal((128, 784)).astype("float32")
    yb = np.eye(10, dtype="float32")[rng.integers(0, 10, 128)]
    return f, (xb, yb)


def test_the_profile_times_the_runners_steps_and_adds_up_to_a_plain_call(monkeypatch):
    """The profiled call is the runner's (the Python executor runs nothing), and the steps'
    time per call (median) is within 20% of a plain timed call's (median; the profile times
    one of each per round, alternated, so a machine busy elsewhere slows both alike): a
    relative check in one process, tried up to five times."""
    f, args = _mlp_step()
    monkeypatch.setattr(execute, "run_profiled", lambda *a: pytest.fail("Python profiled"))
    ratios = []
    for _attempt in range(5):
        profile = f.profile(*args, repeat=30)
        ratios.append(float(np.median(profile.in_steps)) / profile.median)
        if abs(ratios[-1] - 1) <= 0.2:
            break
    else:
        pytest.fail(f"the profile's steps per call over a plain call, per attempt: {ratios}")
    kinds = {row.where for row in profile.rows}
    assert {"BLAS", "generated C on the CPU"} <= kinds, kinds


def test_a_loops_body_steps_are_timed_apart_and_summed_over_its_steps():
    x = sn.matrix("x")
    w = sn.matrix("w")
    hs, _ = sn.scan(
        lambda row, h, w: sn.tanh(row + h @ w),
        sequences=x,
        outputs_info=sn.zeros(8),
        non_sequences=w,
    )
    f = sn.function([x, w], hs, backend="c")
    args = [RNG.standard_normal((20, 8)), RNG.standard_normal((8, 8)) * 0.1]
    outputs, records = f.linker.run_profiled(args)
    np.testing.assert_allclose(outputs[0], f(*args), rtol=1e-12)
    (loop,) = [i for i, r in enumerate(records) if r[3] == "loop"]
    assert records[loop][4] == 20  # the iterations it ran
    body = [r for r in records if r[5] is not None]
    assert body and all(r[5][0] == loop for r in body)
    assert {r[3] for r in body} >= {"blas", "kernel"}
    assert all(r[1] > 0 for r in body)
    profile = f.profile(*args, repeat=3)
    assert any("20 steps per call" in note for note in profile.notes), profile.notes
