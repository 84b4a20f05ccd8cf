"""``x + 0 -> x`` and its kin drop the neutral operand only where it cannot stretch x: all its
dims are 1 and it has no more of them than x. Found by mutation testing: the rule's check of
that (``does_not_stretch``) could be weakened or made stricter without a test failing."""

import numpy as np

import symnb as sn
from tests.opt.util import assert_same_values, fired

CANONICAL = {"include": ["canonicalize"]}


def test_a_neutral_operand_of_ones_dims_is_dropped(rng):
    x = sn.matrix("x")
    for zeros in (np.zeros((1, 1)), np.zeros(1), np.zeros(())):
        expr = x + sn.constant(zeros)
        f = assert_same_values([x], expr, [rng.normal(size=(3, 4))], CANONICAL)
        assert f.rewrites.counts() == {"add_zero": 1}, zeros.shape


def test_a_neutral_operand_that_would_stretch_x_stays(rng):
    """x of one element plus zeros(3) has three: x alone would have one."""
    x = sn.vector("x")
    expr = x + sn.constant(np.zeros(3))
    assert fired([x], expr, CANONICAL) == {}
    assert_same_values([x], expr, [rng.normal(size=1)], CANONICAL)
    y = sn.tensor("y", shape=(None,))
    assert fired([y], y + sn.constant(np.zeros((1, 1))), CANONICAL) == {}  # adds an axis
