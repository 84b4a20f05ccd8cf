"""A loop's run-time errors name what the user passed: a sequence read at several taps (the
loop reads shifted slices of it, which have no name of its own) and each state of an output
fed back at several taps (rows of its initial value)."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from tests.helpers import available_backends

HOST = [b for b in available_backends() if b in ("py", "c")]


@pytest.mark.parametrize("backend", HOST)
@pytest.mark.parametrize("named", [True, False])
def test_n_steps_beyond_a_sequence_read_at_taps_names_the_sequence(backend, named):
    x = sn.tensor("x" if named else None, shape=("T",), dtype="float64")
    n = sn.tensor("n", shape=(), dtype="int64")
    ys, _ = sn.scan(lambda a, b: a + b, sequences={"input": x, "taps": [-1, 1]}, n_steps=n)
    f = sn.function([x, n], ys, backend=backend)
    np.testing.assert_array_equal(f(np.arange(5.0), 3), [2.0, 4.0, 6.0])
    name = "'x'" if named else "sequences[0]"
    expected = f"n_steps=4, but the sequence {name} at taps [-1, 1] has only 3 steps"
    with pytest.raises(sn.ShapeError, match=expected.replace("[", r"\[")):
        f(np.arange(5.0), 4)


@pytest.mark.parametrize("backend", HOST)
def test_a_state_fed_back_at_taps_is_named_with_its_tap(backend):
    x0 = sn.tensor("x0", shape=(None, None), dtype="float64")
    out, _ = sn.scan(
        lambda a, b: sn.concatenate([a, b]),
        outputs_info={"initial": x0, "taps": [-2, -1]},
        n_steps=3,
    )
    f = sn.function([x0], out, backend=backend)
    with pytest.raises(
        sn.ShapeError, match=r"the state 'x0' at tap -1 has shape \(2,\) before step 0"
    ):
        f(np.ones((2, 2)))
