"""Gradients and random draws: sn.check_grad holds a draw's numbers fixed through its
finite differences."""

from __future__ import annotations

import numpy as np

import symnb as sn
from symnb.compat.theano.gradient import verify_grad


def test_check_grad_of_an_expression_with_a_draw_holds_its_numbers_fixed():
    """d/dx sum(x * z * proj) is z; each finite-difference call must see the same z."""
    rng = sn.RandomStream(1)
    sn.check_grad(lambda x: x * rng.normal((3,), dtype="float64"), [np.ones(3)])
    verify_grad(lambda x: sn.tanh(x * rng.uniform((3,), dtype="float64")), [np.ones(3)], rng=0)
    for _, counter in rng.states:  # the checks leave the streams where they were
        assert int(counter.get_value()) == 0
