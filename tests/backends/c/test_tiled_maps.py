"""Maps whose input is read across the output's rows (a transposed operand) run in tiles of
the last two axes (``sn_tile`` in symnb/backends/render/maps.py): the same values as NumPy
for every tile size, for shapes no tile divides, and with other operands broadcast, strided
or reversed."""

import numpy as np
import pytest

import symnb as sn


def transposed(a, axes):
    """An array whose ``transpose(axes)`` view is ``a``, with that view returned."""
    inverse = np.argsort(axes)
    return np.ascontiguousarray(a.transpose(inverse)).transpose(axes)


@pytest.mark.parametrize(
    "shape, axes",
    [
        ((64, 96), (1, 0)),  # tiles of 32
        ((48, 40), (1, 0)),  # 8
        ((36, 20), (1, 0)),  # 4
        ((37, 41), (1, 0)),  # no tile divides: rows as before
        ((3, 64, 32), (0, 2, 1)),  # a batch of transposed matrices
        ((16, 3, 64), (2, 1, 0)),
        ((1, 64, 64), (0, 2, 1)),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_a_transposed_operand_gives_numpys_values(shape, axes, dtype):
    rng = np.random.default_rng(5)
    a = transposed((rng.standard_normal(shape) * 10).astype(dtype), axes)
    b = (rng.standard_normal(shape) * 10).astype(dtype)
    x = sn.tensor("x", shape=(None,) * len(shape), dtype=dtype)
    y = sn.tensor("y", shape=(None,) * len(shape), dtype=dtype)
    f = sn.function([x, y], x * 3 + y, backend="c")
    assert "sn_tile(" in f.kernels[-1].source
    np.testing.assert_array_equal(f(a, b), a * 3 + b)
    np.testing.assert_array_equal(f(a, a), a * 3 + a)  # both operands transposed


@pytest.mark.parametrize("other", ["broadcast row", "broadcast column", "reversed", "strided"])
def test_tiles_with_other_operands_broadcast_strided_or_reversed(other):
    rng = np.random.default_rng(6)
    a = transposed(rng.standard_normal((64, 128)), (1, 0))
    b = {
        "broadcast row": rng.standard_normal((1, 128)),
        "broadcast column": rng.standard_normal((64, 1)),
        "reversed": rng.standard_normal((64, 128))[::-1, ::-1],
        "strided": rng.standard_normal((128, 256))[::2, ::2],
    }[other]
    x, y = sn.matrix("x"), sn.matrix("y")
    f = sn.function([x, y], sn.tanh(x) - y, backend="c")
    np.testing.assert_allclose(f(a, b), np.tanh(a) - b, rtol=1e-12, atol=1e-15)
