"""The GPU kernels' ways of sharing work, run on PoCL and compared with NumPy: reductions
whose work-group reduces one output as a tree in local memory (few long outputs) and those
whose work-items reduce outputs of their own (many short ones), at lengths around the
work-group size, empty and NaN; maps over contiguous, strided and broadcast operands."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from tests.helpers import opencl_problem

pytestmark = pytest.mark.skipif(opencl_problem() is not None, reason=str(opencl_problem()))

RNG = np.random.default_rng(36)
VECTOR = RNG.standard_normal(100_003).astype(np.float32)
LENGTHS = [0, 1, 2, 63, 64, 65, 255, 256, 257, 1000, 100_003]
REDUCE = {
    "sum": (sn.sum, np.sum),
    "max": (sn.max, np.max),
    "min": (sn.min, np.min),
    "mean": (sn.mean, np.mean),
    "prod": (sn.prod, np.prod),
}


def _on_opencl(build, *arrays):
    syms = [
        sn.tensor(f"a{i}", shape=(None,) * a.ndim, dtype=str(a.dtype)) for i, a in enumerate(arrays)
    ]
    return sn.function(syms, build(*syms), backend="opencl")(*arrays)


def _close(got, expected, rtol=1e-4):
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-4, equal_nan=True)


@pytest.mark.filterwarnings("ignore:Mean of empty slice", "ignore:invalid value")
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("kind", list(REDUCE))
def test_full_reductions_at_lengths_around_the_work_group(kind, n):
    ours, numpy = REDUCE[kind]
    x = VECTOR[:n] if kind != "prod" else 1 + VECTOR[:n] / 1000
    if n == 0 and kind in ("max", "min"):
        pytest.skip("NumPy raises (the op suite checks the error)")
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = numpy(x)
    _close(_on_opencl(ours, x), expected)


@pytest.mark.parametrize("kind", ["sum", "max", "min"])
def test_a_nan_anywhere_in_a_long_reduction_is_kept(kind):
    ours, numpy = REDUCE[kind]
    for at in (0, 517, 99_999):
        x = VECTOR.copy()
        x[at] = np.nan
        assert np.isnan(_on_opencl(ours, x))
        x = np.abs(VECTOR) + 1
        x[at] = np.inf if kind != "min" else -np.inf
        assert _on_opencl(ours, x) == numpy(x)


SHAPES = {
    "rows": ((37, 1001), 1),
    "columns": ((37, 1001), 0),
    "few long columns": ((20_000, 3), 0),
    "many short rows": ((20_000, 3), 1),
    "middle": ((5, 300, 7), 1),
    "outer two": ((5, 300, 7), (0, 2)),
    "last two": ((5, 300, 70), (1, 2)),
    "everything": ((5, 300, 70), None),
}


@pytest.mark.parametrize("name", list(SHAPES))
@pytest.mark.parametrize("kind", ["sum", "max", "mean"])
def test_reductions_along_axes(kind, name):
    shape, axis = SHAPES[name]
    ours, numpy = REDUCE[kind]
    x = RNG.standard_normal(shape)
    _close(_on_opencl(lambda a: ours(a, axis=axis), x), numpy(x, axis=axis), rtol=1e-9)
    t = np.ascontiguousarray(x.T)  # the same values read transposed: other strides
    _close(_on_opencl(lambda a: ours(a.T, axis=axis), t), numpy(x, axis=axis), rtol=1e-9)


def test_integer_and_boolean_reductions_over_long_vectors():
    i = RNG.integers(-5, 5, 70_001)
    assert _on_opencl(sn.sum, i) == i.sum()
    assert _on_opencl(sn.max, i) == i.max()
    assert _on_opencl(lambda a: sn.any(a > 3), i) == True  # noqa: E712
    assert _on_opencl(lambda a: sn.all(a > -5), i) == bool(np.all(i > -5))


MAPS = {
    "contiguous": lambda: (RNG.standard_normal((300, 70)), RNG.standard_normal((300, 70))),
    "scalar broadcast": lambda: (RNG.standard_normal((3, 50, 7)), np.float64(2.5)),
    "row broadcast": lambda: (RNG.standard_normal((300, 70)), RNG.standard_normal(70)),
    "column broadcast": lambda: (RNG.standard_normal((300, 70)), RNG.standard_normal((300, 1))),
    "outer product": lambda: (RNG.standard_normal((300, 1)), RNG.standard_normal((1, 70))),
    "one element": lambda: (RNG.standard_normal((1, 1)), RNG.standard_normal((1, 1))),
    "long vector": lambda: (RNG.standard_normal(100_003), RNG.standard_normal(100_003)),
}


@pytest.mark.parametrize("name", list(MAPS))
def test_maps_over_contiguous_and_broadcast_operands(name):
    x, y = MAPS[name]()
    got = _on_opencl(lambda a, b: sn.exp(a) * b + a, np.asarray(x), np.asarray(y))
    _close(got, np.exp(x) * y + x, rtol=1e-12)


@pytest.mark.parametrize("view", ["transposed", "every other", "sliced rows"])
def test_maps_over_strided_views(view):
    x = RNG.standard_normal((60, 40, 6))
    y = RNG.standard_normal((60, 40, 6))
    pick = {
        "transposed": lambda a: a.transpose(2, 0, 1),
        "every other": lambda a: a[::2, :, ::3],
        "sliced rows": lambda a: a[5:50, 3:, :],
    }[view]
    got = _on_opencl(lambda a, b: pick(a) * 2 - sn.sin(pick(b)), x, y)
    _close(got, pick(x) * 2 - np.sin(pick(y)), rtol=1e-12)
