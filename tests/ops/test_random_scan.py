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


@pytest.mark.parametrize("backend", BACKENDS)
def test_givens_replace_an_outer_draw_the_step_reads_without_listing_it(backend):
    """The step reads the user's draw itself (an implicit non-sequence), so a given keyed by
    it replaces it in the loop, as it does for one listed in non_sequences; without the given
    the draw advances its stream once per call, not once per step."""
    s = sn.vector("s", shape=(4,))
    rng = sn.RandomStream(seed=7)
    mask = rng.uniform((3,), dtype="float64")
    implicit, _ = sn.scan(lambda si, h: h + si * mask, sequences=[s], outputs_info=[sn.zeros((3,))])
    listed, _ = sn.scan(
        lambda si, h, m: h + si * m,
        sequences=[s],
        outputs_info=[sn.zeros((3,))],
        non_sequences=[mask],
    )
    given = sn.function(
        [s], [implicit[-1], listed[-1]], givens={mask: sn.constant(np.ones(3))}, backend=backend
    )
    a, b = given(np.ones(4))
    np.testing.assert_array_equal(a, [4.0, 4.0, 4.0])
    np.testing.assert_array_equal(b, [4.0, 4.0, 4.0])
    drawn = sn.function([s], [mask, implicit[-1]], backend=backend)
    ((_, counter),) = rng.states
    start = int(counter.get_value())
    for _ in range(2):
        m, last = drawn(np.ones(4))
        np.testing.assert_allclose(last, 4 * m, rtol=1e-12)
    assert int(counter.get_value()) == start + 2 * 3  # one mask a call
