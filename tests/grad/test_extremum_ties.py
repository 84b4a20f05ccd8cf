"""The gradient of max/min where values tie (issue #35): shared equally by the tied elements,
so a value repeated by ``repeat``, ``tile`` or a broadcast gets its gradient once, as the
numerical gradient says, not once per copy."""

import warnings

import numpy as np
import pytest

import symnb as sn
from symnb.grad.check import numeric_gradient
from tests.helpers import reference_backend

REPEATS = {
    "repeat": lambda x: sn.repeat(x, 3, axis=0),
    "tile": lambda x: sn.tile(x, (2, 2)),
    "broadcast": lambda x: x + sn.zeros((4, 1, 1)),
    "concatenate": lambda x: sn.concatenate([x, x], axis=1),
}


@pytest.mark.parametrize("how", sorted(REPEATS))
@pytest.mark.parametrize("reduction", ["max", "min"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)])
def test_a_repeated_value_gets_the_numerical_gradient(how, reduction, axis):
    rng = np.random.default_rng(7)
    a = rng.permutation(6).reshape(2, 3) / 5.0 + 0.1  # distinct values, no ties of their own
    x = sn.matrix("x")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the broadcast is meant here
        y = getattr(sn, reduction)(REPEATS[how](x), axis=axis)
    weights = rng.uniform(0.5, 1.5, size=np.shape(sn.function([x], y, backend="py")(a)))
    loss = sn.sum(y * weights)
    with reference_backend():
        got = sn.function([x], sn.grad(loss, x))(a)
        want = numeric_gradient(sn.function([x], loss), [a], 0, 1e-6)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_true_ties_share_the_gradient_equally():
    x = sn.vector("x")
    g = sn.function([x], sn.grad(sn.max(x) * 6.0, x), backend="py")
    np.testing.assert_allclose(g(np.array([1.0, 3.0, 3.0, 3.0])), [0, 2, 2, 2])
    np.testing.assert_allclose(g(np.array([3.0, 1.0, 2.0])), [6, 0, 0])
