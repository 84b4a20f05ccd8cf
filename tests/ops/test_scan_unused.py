"""A scan whose plain outputs are not all read loses them (``scan_unused_outputs``), and the
inputs nothing left in the step reads; a sequence still sets the step count (the fewest
rows) and bounds a given ``n_steps``, so the loop runs as it would with every output read."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from symnb.control.scan import Scan
from tests.helpers import available_backends

BACKENDS = available_backends()
HOST = [b for b in BACKENDS if b in ("py", "c")]


def _scans(f) -> list:
    return [n.op.loop for n in f.graph.toposort() if isinstance(n.op, Scan)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_sequence_only_an_unread_output_reads_still_sets_the_steps(backend):
    x = sn.tensor("x", shape=("T",), dtype="float64")
    y = sn.tensor("y", shape=("U",), dtype="float64")
    h0 = sn.tensor("h0", shape=(), dtype="float64")
    (hs, _), _ = sn.scan(lambda a, b, h: (h + a, b * 2), sequences=[x, y], outputs_info=[h0, None])
    xv, yv = np.arange(1.0, 6.0), np.arange(3.0)  # 5 and 3 rows: 3 steps
    got = sn.function([x, y, h0], hs, backend=backend)(xv, yv, 0.5)
    np.testing.assert_array_equal(got, 0.5 + np.cumsum(xv[:3]))


@pytest.mark.parametrize("backend", HOST)
def test_n_steps_is_checked_against_a_sequence_only_an_unread_output_reads(backend):
    x = sn.tensor("x", shape=("T",), dtype="float64")
    n = sn.tensor("n", shape=(), dtype="int64")
    h0 = sn.tensor("h0", shape=(), dtype="float64")
    (hs, _), _ = sn.scan(
        lambda a, h: (h + 1.0, a * 2), sequences=x, outputs_info=[h0, None], n_steps=n
    )
    f = sn.function([x, h0, n], hs, backend=backend)
    np.testing.assert_array_equal(f(np.arange(3.0), 0.0, 2), [1.0, 2.0])
    with pytest.raises(sn.ShapeError, match="n_steps=5, but the sequence 'x' has only 3 steps"):
        f(np.arange(3.0), 0.0, 5)


def test_an_unread_sequence_no_shorter_than_a_kept_one_is_dropped():
    x = sn.tensor("x", shape=("T",), dtype="float64")
    h0 = sn.tensor("h0", shape=(), dtype="float64")
    (hs, _), _ = sn.scan(
        lambda a, b, c, h: (h + a, b + c),
        sequences=[x, {"input": x, "taps": [-1]}, sn.exp(x)],
        outputs_info=[h0, None],
    )
    f = sn.function([x, h0], hs, backend="py")
    # x[:-1] has one row fewer than x: it stays and sets the steps; exp(x), as long as x, goes
    assert [loop.n_seqs for loop in _scans(f)] == [2]
    np.testing.assert_array_equal(f(np.arange(1.0, 5.0), 0.0), np.cumsum([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("draw", [False, True])
def test_grad_through_a_scan_whose_step_updates_a_shared_value(backend, draw):
    """The gradient keeps a copy of the scan storing every state; only the counter's (or the
    stream's) values are read from it, and it must still run the sequence's steps."""
    x = sn.tensor("x", shape=("T", 2), dtype="float64")
    w = sn.tensor("w", shape=(2,), dtype="float64")
    count = sn.shared(np.float64(0.0), name="count")
    rng = sn.RandomStream(3)

    def step(a, w):
        if draw:
            return a * w + 0.0 * rng.normal((2,), dtype="float64")
        return a * w, {count: count + 1}

    ys, _ = sn.scan(step, sequences=x, non_sequences=w)
    g = sn.grad(sn.sum(ys**2), w)
    xv, wv = np.arange(6.0).reshape(3, 2) / 4, np.array([1.0, -2.0])
    got = sn.function([x, w], g, backend=backend)(xv, wv)
    np.testing.assert_allclose(got, 2 * wv * np.sum(xv**2, axis=0), rtol=1e-12)


def test_grad_through_a_scan_with_updates_matches_finite_differences():
    count = sn.shared(np.float64(0.0), name="count")

    def fn(x, w):
        ys, _ = sn.scan(
            lambda a, w: (sn.tanh(a * w), {count: count + 1}), sequences=x, non_sequences=w
        )
        return ys

    sn.check_grad(fn, [np.linspace(-1, 1, 8).reshape(4, 2), np.array([0.3, -0.7])], rng=0)
