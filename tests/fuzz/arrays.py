"""The arrays a fuzzed program runs on: its leaves' values and its constants.

Each has one of the dtypes kernels are written for and one kind of values (small numbers, the
dtype's whole range, specials, or floats at the ends of every integer type's range), and a
leaf's is passed as one of four memory layouts. A module of its own because both the program
drawing (``graphs.py``) and the ``constant`` step (``steps.py``) need it.
"""

from __future__ import annotations

import numpy as np

from tests.helpers import KERNEL_DTYPES

DTYPES = KERNEL_DTYPES
VIEWS = ["plain", "strided", "reversed", "transposed"]
VALUES = ["small", "wide", "special", "ranges"]


def _range_landmarks(dt) -> np.ndarray:
    """Floats of ``dt`` at the ends of every integer type's range and just inside them (with
    fractions, which casts truncate): 2**63 and 2**64 - 2048 for uint64, -128.5 for int8."""
    marks = []
    for name in DTYPES:
        if np.dtype(name).kind in "iu":
            info = np.iinfo(name)
            marks += [float(info.min), float(info.max), float(info.max) / 2 + 0.5, 0.75]
    marks += [2.0**63, 2.0**64 - 2048, -(2.0**63), 2.0**32 - 1, -128.5, 255.5, 65535.25]
    return np.array(marks, dtype=np.float64).astype(dt)


def array(rng, shape, dtype, values: str) -> np.ndarray:
    """Values of ``dtype``: small numbers, the dtype's whole range, specials (NaN, inf,
    -0.0, huge and tiny floats; extremes of integers), or for floats the ends of every
    integer type's range (what casts meet)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) > 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if values == "small":
            lo = 0 if dt.kind == "u" else -5
            return rng.integers(lo, 6, size=shape).astype(dt)
        if values == "special":
            picks = np.array([info.min, info.max, 0, 1, info.max // 2], dtype=dt)
            return rng.choice(picks, size=shape)
        return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    if values == "special":
        picks = np.array([np.nan, np.inf, -np.inf, -0.0, 1e30, -1e-30, 0.5, -2.0], dtype=dt)
        return rng.choice(picks, size=shape)
    if values == "ranges":
        return rng.choice(_range_landmarks(dt), size=shape)
    scale = 3.0 if values == "small" else 1e4
    return rng.uniform(-scale, scale, size=shape).astype(dt)


def view(rng, shape, dtype, values: str, kind: str) -> np.ndarray:
    """An array of ``shape``: contiguous, strided, reversed or a transposed view."""
    if kind == "transposed" and len(shape) == 2:
        return array(rng, shape[::-1], dtype, values).T
    base = np.asarray(array(rng, tuple(2 * d for d in shape), dtype, values))
    first = tuple(slice(0, d) for d in shape)
    if kind == "strided":
        return base[tuple(slice(None, None, 2) for _ in shape)][first]
    if kind == "reversed":
        return base[tuple(slice(None, None, -1) for _ in shape)][first]
    return base[first].copy()
