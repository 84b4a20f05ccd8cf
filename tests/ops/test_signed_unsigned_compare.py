"""int64 against uint64: NumPy promotes the pair to float64 but NumPy 2 compares it exactly;
the kernels must too (in float64, 2**63 - 1 < 2**63 is False and 2**53 + 1 == 2**53 True)."""

import operator
import warnings

import numpy as np
import pytest

import symnb as sn

SIGNED = np.array([2**63 - 1, 2**53 + 1, -1, 0, 5, -(2**63)], np.int64)
UNSIGNED = np.array([2**63, 2**53, 2**64 - 1, 0, 5, 2**63], np.uint64)
COMPARISONS = [operator.lt, operator.le, operator.gt, operator.ge, sn.equal, sn.not_equal]
NUMPY = {sn.equal: np.equal, sn.not_equal: np.not_equal}


@pytest.mark.parametrize("compare", COMPARISONS, ids=["lt", "le", "gt", "ge", "eq", "ne"])
def test_int64_against_uint64_compares_exactly(compare, backend):
    x = sn.tensor("x", shape=(6,), dtype="int64")
    y = sn.tensor("y", shape=(6,), dtype="uint64")
    reference = NUMPY.get(compare, compare)
    got = sn.function([x, y], [compare(x, y), compare(y, x)], backend=backend)(SIGNED, UNSIGNED)
    np.testing.assert_array_equal(got[0], reference(SIGNED, UNSIGNED))
    np.testing.assert_array_equal(got[1], reference(UNSIGNED, SIGNED))


def test_fused_and_against_strong_scalars_compares_exactly(backend):
    x = sn.tensor("x", shape=(6,), dtype="int64")
    y = sn.tensor("y", shape=(6,), dtype="uint64")
    big, near = np.uint64(2**63), np.int64(2**53 + 1)
    outputs = [(x + 0) < big, sn.equal(near, y * 1), sn.where(x >= y, 1, 2), y > near]
    got = sn.function([x, y], outputs, backend=backend)(SIGNED, UNSIGNED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = [SIGNED < big, near == UNSIGNED, np.where(SIGNED >= UNSIGNED, 1, 2), UNSIGNED > near]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
