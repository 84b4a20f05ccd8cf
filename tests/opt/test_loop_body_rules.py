"""A scan's step is rewritten with the function's own ``optimize=`` on every backend: the
rules that may change IEEE results ("fast" only) fire inside a loop exactly when they would
outside it, so "py", "c" and "opencl" agree in every mode, and the step's firings are kept
for the stepper (``loop_histories``)."""

import warnings

import numpy as np
import pytest

import symnb as sn
from symnb.viz.stepper import loop_histories

STEPS = {
    # (step, the rows, what the step gives as written (NumPy), the rule "fast" fires)
    "r - r": (lambda r: r - r, [[np.inf, 1.0]], [[np.nan, 0.0]], "sub_self"),
    "log(exp(r))": (lambda r: sn.log(sn.exp(r)), [[1000.0, 1.0]], [[np.inf, 1.0]], "log_of_exp"),
}
MODES = ["none", "stable", {"include": ["fast"], "exclude": ["log_of_exp", "sub_self"]}]


def _call(step, rows, optimize, backend):
    X = sn.matrix("X")
    outs, _ = sn.scan(step, sequences=[X])
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        f = sn.function([X], outs, optimize=optimize, backend=backend)
        return f, f(np.array(rows))


@pytest.mark.parametrize("mode", MODES, ids=["none", "stable", "exclude"])
@pytest.mark.parametrize("name", sorted(STEPS))
def test_a_loops_step_keeps_ieee_results_where_the_mode_does(name, mode, backend):
    step, rows, as_written, rule = STEPS[name]
    f, got = _call(step, rows, mode, backend)
    np.testing.assert_allclose(got, as_written)
    fired = {r for _, history in loop_histories(f) for r in history.counts()}
    assert rule not in fired, fired


@pytest.mark.parametrize("name", sorted(STEPS))
def test_fast_rewrites_a_loops_step_alike_on_every_backend(name, backend):
    step, rows, _, rule = STEPS[name]
    f, got = _call(step, rows, "fast", backend)
    _, want = _call(step, rows, "fast", "py")
    np.testing.assert_allclose(got, want)
    histories = loop_histories(f)
    assert len(histories) == 1 and rule in histories[0][1].counts(), histories
