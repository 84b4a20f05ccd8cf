"""Random draws and sn.scan: a draw made outside the loop and read by the step is one value
for the whole loop (a dropout mask per sequence); a draw made in the step is new each step."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from tests.helpers import available_backends

BACKENDS = ["py", *(b for b in available_backends() if b != "py")]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_draw_made_outside_the_loop_is_the_same_at_every_step(backend):
    rng = sn.RandomStream(1)
    x = sn.matrix("x")
    mask = rng.bernoulli((50,), p=0.5, dtype="float64")
    (masked, noisy), updates = sn.scan(
        lambda row: [row * mask, row * rng.uniform((50,), dtype="float64")], sequences=x
    )
    f = sn.function([x], [mask, masked, noisy], updates=updates, backend=backend)
    for _ in range(2):  # each call a new mask, the same at every step of the call
        m, rows, drawn = f(np.ones((4, 50)))
        assert 10 < m.sum() < 40
        for row in rows:
            np.testing.assert_array_equal(row, m)
        assert all(not np.array_equal(drawn[0], d) for d in drawn[1:])  # new each step
    (_, mask_counter), (_, step_counter) = rng.states
    assert int(mask_counter.get_value()) == 2 * 50  # one mask a call, not one a step
    assert int(step_counter.get_value()) == 2 * 4 * 50


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_outer_draw_read_by_the_step_equals_one_passed_as_a_non_sequence(backend):
    rng = sn.RandomStream(4)
    x = sn.matrix("x")
    noise = rng.normal((3,), dtype="float64")
    implicit, _ = sn.scan(lambda row: row + noise, sequences=x)
    explicit, _ = sn.scan(lambda row, n: row + n, sequences=x, non_sequences=[noise])
    got_noise, got_implicit, got_explicit = sn.function(
        [x], [noise, implicit, explicit], backend=backend
    )(np.zeros((5, 3)))
    np.testing.assert_array_equal(got_implicit, np.tile(got_noise, (5, 1)))
    np.testing.assert_array_equal(got_implicit, got_explicit)
