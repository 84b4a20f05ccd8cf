"""Steps with more operands than runner.c's arrays hold (64 inputs, 16 outputs): the runner
still runs the plan, the wide step through its NumPy fallback, instead of declining every
call to the Python executor."""

import numpy as np
import pytest

import symnb as sn
from symnb.backends.c import runner
from symnb.opt.rules import fuse


def _runner_ran(f, values):
    if runner.module() is None:
        pytest.skip("the C runner could not be built")
    return f.runner is not None and f.runner(*values) is not None


@pytest.mark.parametrize("join", ["concatenate", "stack"])
def test_a_library_step_of_a_hundred_inputs_runs_in_the_runner(join):
    xs = [sn.vector(f"x{i}") for i in range(100)]
    values = [np.arange(3.0) + i for i in range(100)]
    out = getattr(sn, join)(xs) * 2.0
    f = sn.function(xs, out, backend="c")
    assert _runner_ran(f, values)
    np.testing.assert_array_equal(f(*values), getattr(np, join)(values) * 2.0)


def test_a_kernel_of_more_operands_than_the_runner_takes_runs_as_its_fallback(monkeypatch):
    monkeypatch.setattr(fuse, "MAX_INPUTS", 1000)  # one fused kernel of 80 inputs
    xs = [sn.vector(f"x{i}") for i in range(80)]
    total = xs[0]
    for i, x in enumerate(xs[1:]):
        total = total + x * float(i % 3 + 1)
    f = sn.function(xs, total, backend="c")
    wide = [k for k in f.kernels if k.kind == "kernel" and len(k.nodes.inputs) > 64]
    assert len(wide) == 1
    values = [np.random.default_rng(i).normal(size=4) for i in range(80)]
    assert _runner_ran(f, values)
    want = values[0] + sum(v * float(i % 3 + 1) for i, v in enumerate(values[1:]))
    np.testing.assert_allclose(f(*values), want, rtol=1e-12)


def test_a_loop_of_more_outputs_than_a_launch_takes_runs_in_the_runner():
    """A scan of 20 states (runner.c's launches take 16 outputs): the loop runs in C, its
    states kept in storage taken for the call, and no step is handed to Python."""
    n = 20
    x = sn.matrix("x")
    starts = [sn.vector(f"s{j}") for j in range(n)]

    def step(row, *states):
        return [s * 0.5 + row * float(j + 1) for j, s in enumerate(states)]

    outs, _ = sn.scan(step, sequences=x, outputs_info=starts)
    f = sn.function([x, *starts], [o[-1] for o in outs] + [outs[3]], backend="c")
    rng = np.random.default_rng(1)
    values = [rng.normal(size=(7, 3))] + [rng.normal(size=3) for _ in range(n)]
    assert _runner_ran(f, values)
    assert f.runner.declined == 0
    states = [v.copy() for v in values[1:]]
    fourth = []
    for row in values[0]:
        states = [s * 0.5 + row * float(j + 1) for j, s in enumerate(states)]
        fourth.append(states[3])
    got = f(*values)
    for g, w in zip(got, [*states, np.array(fourth)], strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)
