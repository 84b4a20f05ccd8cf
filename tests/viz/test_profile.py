"""``f.profile()`` is honest: the first call's one-time costs are not timed, steps are
reported by median and spread, and the total per call is what a plain timed call takes."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest

import symnb as sn
from symnb.viz import profile as profile_module
from tests.helpers import needs_c

RNG = np.random.default_rng(0)


def test_the_first_calls_are_not_timed():
    """A call that is slow the first time (BLAS starting its threads, loading, caching) is
    run untimed first: no timed call pays it."""
    x = sn.tensor("x", shape=("n", 4))
    f = sn.function([x], sn.tanh(x) * 2.0, backend="py")
    slow = {"run": 0, "run_profiled": 0}
    for name in slow:
        method = getattr(f.linker, name)

        def first_slow(*args, _name=name, _method=method):
            slow[_name] += 1
            if slow[_name] == 1:
                time.sleep(0.05)
            return _method(*args)

        setattr(f.linker, name, first_slow)
    profile = f.profile(np.ones((5, 4)), repeat=5)
    assert slow["run_profiled"] == 5 + profile_module.WARMUP and profile.warmup >= 1
    assert max(profile.per_call) < 0.05 and all(max(r.samples) < 0.05 for r in profile.rows)
    assert profile.calls == 5 and all(len(r.samples) == 5 for r in profile.rows)


def test_rows_report_median_and_spread():
    x = sn.tensor("x", shape=("n", 4))
    W = sn.shared(np.ones((4, 3)), name="W")
    f = sn.function([x], sn.sum(sn.tanh(x @ W), axis=1), backend="py", optimize="none")
    profile = f.profile(np.ones((5, 4)), repeat=7)
    for row in profile.rows:
        low, high = row.spread
        assert low <= row.median <= high
        assert row.median == pytest.approx(float(np.median(row.samples)))
    assert profile.median == pytest.approx(float(np.median(profile.per_call)))
    text = profile.text()
    assert "median µs" in text and "IQR µs" in text and "after 2 untimed" in text
    html = profile.html()
    assert "<th>median µs</th><th>IQR µs</th>" in html


def _tour_functions():
    """The tour's three functions (notebooks/00_tour.ipynb) with its inputs."""
    x = sn.tensor("x", shape=("batch", 64), dtype="float32")
    y = sn.tensor("y", shape=("batch", 10), dtype="float32")
    W = sn.shared(RNG.standard_normal((64, 10)).astype("float32") * 0.1, name="W")
    b = sn.shared(np.zeros(10, "float32"), name="b")
    p = sn.softmax(x @ W + b, axis=-1)
    loss = -sn.mean(sn.sum(y * sn.log(p), axis=1))
    gW, gb = sn.grad(loss, [W, b])
    train = sn.function(
        [x, y], loss, updates={W: W - 0.5 * gW, b: b - 0.5 * gb}, backend="c", name="train"
    )
    predict = sn.function([x], 2.0 * sn.sigmoid(sn.tanh(x @ W + b)) - 1.0, backend="c")
    predict_py = sn.function([x], predict.graph.outputs[0] * 1.0, backend="py")
    xb = RNG.standard_normal((256, 64)).astype("float32")
    yb = np.eye(10, dtype="float32")[RNG.integers(0, 10, 128)]
    return [(predict, (xb,)), (predict_py, (xb,)), (train, (xb[:128], yb))]


def _plain_median(f, args, calls: int) -> float:
    for _ in range(3):
        f(*args)
    seconds = []
    for _ in range(calls):
        start = time.perf_counter()
        f(*args)
        seconds.append(time.perf_counter() - start)
    return float(np.median(seconds))


@needs_c
@pytest.mark.parametrize("which", ["predict", "predict_py", "train"])
def test_the_total_matches_a_plain_timed_call_on_the_tours_functions(which):
    """A relative check in one process, by medians, tried three times (a busy machine): the
    profile's time per call is within 20% of a plain timed call, and its steps add up to
    between half and twice that time (each is timed on its own)."""
    f, args = dict(zip(["predict", "predict_py", "train"], _tour_functions()))[which]
    ratios = []
    for _attempt in range(3):
        profile = f.profile(*args, repeat=30)
        plain = _plain_median(f, args, 30)
        steps = sum(r.median for r in profile.rows)
        ratios.append((profile.median / plain, steps / plain))
        if abs(ratios[-1][0] - 1) <= 0.2 and 0.5 <= ratios[-1][1] <= 2.0:
            return
    pytest.fail(f"{which}: profile/plain and steps/plain per attempt: {ratios}")


@pytest.mark.parametrize("repeat", [0, -1, 2.5, "10", True])
@pytest.mark.parametrize("given", ["inputs", "none"])
def test_repeat_is_a_count_of_at_least_one(repeat, given):
    """``repeat=-1`` once printed "profile: -1 calls ... median 0.0 us" (and ``True`` is no
    count). With no inputs the check comes before any random input is drawn."""
    x = sn.tensor("x", shape=("n",))
    f = sn.function([x], x * 2.0, backend="py")
    args = (np.ones(3),) if given == "inputs" else ()
    message = f"takes the number of calls to time, an integer of at least 1, not {repeat!r}"
    with pytest.raises(ValueError, match=re.escape(message)):
        f.profile(*args, repeat=repeat)
    assert f.profile(*args, repeat=np.int64(1)).calls == 1


def test_a_large_profile_computes_each_rows_quartiles_once(monkeypatch):
    """Showing a profile of many rows (a 100-layer MLP's training step has 700) asks each
    row's median for its own line and again for every other row's share: each row's
    quartiles are computed once, not once per row shown (490,000 percentiles, a minute)."""
    n = 300
    rows = [
        profile_module.ProfileRow(f"{i}: tanh", "tanh", "C", calls=5, samples=[1e-6 * i] * 5)
        for i in range(n)
    ]
    profile = profile_module.Profile(rows, 5, ["a note"], [1e-3] * 5, 2, [1e-3] * 5)
    calls = []
    percentile = np.percentile

    def counted(*args, **kwargs):
        calls.append(1)
        return percentile(*args, **kwargs)

    monkeypatch.setattr(np, "percentile", counted)
    text, html = repr(profile), profile._repr_html_()
    assert len(calls) <= n + 5
    assert text.count("tanh") == n and html.count("<tr>") == n + 1
    assert sum(profile.share(r) for r in rows) == pytest.approx(1.0)
    rows[0].samples.append(1.0)  # a sample added later is counted
    assert rows[0].median == pytest.approx(float(np.median(rows[0].samples)))


def _bytes_by_label(profile) -> dict:
    return {r.label: r.bytes_per_call for r in profile.rows}


@pytest.mark.parametrize("backend", ["py", pytest.param("c", marks=needs_c)])
def test_bytes_are_per_call_and_count_only_what_a_step_moves(backend):
    """The bytes column is per call, like the times beside it; a view and a branch copy
    nothing, and a Python scalar is a kernel's literal, not an array: backends "py" and
    "c" report the same bytes."""
    x = sn.matrix("x")
    outs = [x > 0, x.T, sn.ifelse(sn.sum(x) > 0, x, x * 2)]
    f = sn.function([x], outs, backend=backend, optimize="none")
    xv = np.ones((2, 3))
    once, four = (f.profile(xv, repeat=n) for n in (1, 4))
    assert _bytes_by_label(once) == _bytes_by_label(four)
    rows = {r.label: r for r in four.rows}
    assert rows["0: greater"].bytes_per_call == 6 * 8 + 6  # x and the bools; 0 is no array
    assert rows["0: greater"].bytes == 4 * (6 * 8 + 6)  # the sum over the timed calls
    assert rows["4: ifelse"].bytes_per_call == 0
    # x.T: backend "c" plans a view; "py" runs NumPy's transpose (a view too)
    assert rows["1: dim_shuffle"].bytes_per_call == (0 if backend == "c" else 2 * 6 * 8)
    assert "bytes/call" in four.text() and "bytes/call" in four.html()
