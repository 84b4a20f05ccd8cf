"""Shared test helpers: random data of a given dtype, and NumPy-vs-symnb comparison."""

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def random_array(rng, shape, dtype):
    """Values that suit most ops: positive floats away from 0, small ints, random bools."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        return rng.integers(1, 5, size=shape).astype(dtype)
    return rng.uniform(0.5, 2.0, size=shape).astype(dtype)
