"""Maps with an input constant along the output's rows by its type (a trailing axis of length
1: a bias of shape (1, C, 1, 1), a column (N, 1)) have a row that reads it once and runs
vectorised, taken when its stride along the row is 0 at run time; every layout gives NumPy's
values, the others through the flat or the strided row."""

import numpy as np
import pytest

import symnb as sn


def layouts(a):
    """C-ordered, Fortran-ordered, column-strided and reversed views of a."""
    wide = np.repeat(a, 2, axis=-1)
    return {
        "c": a.copy(),
        "fortran": np.asfortranarray(a),
        "strided": wide[..., ::2],
        "reversed": a[..., ::-1].copy()[..., ::-1],
    }


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("layout", ["c", "fortran", "strided", "reversed"])
def test_rows_scaled_by_a_column(dtype, layout):
    rng = np.random.default_rng(7)
    a = (rng.uniform(1, 5, (37, 45)) * 4).astype(dtype)
    col = (rng.uniform(1, 5, (37, 1)) * 4).astype(dtype)
    x = sn.tensor("x", shape=(None, None), dtype=dtype)
    c = sn.tensor("c", shape=(None, 1), dtype=dtype)
    f = sn.function([x, c], x * c - c, backend="c")
    (kernel,) = [k for k in f.kernels if k.kind == "kernel"]
    assert "sn_row_const(" in kernel.source
    np.testing.assert_array_equal(f(layouts(a)[layout], col), a * col - col)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["c", "strided", "reversed"])
def test_a_bias_added_to_nchw_data(dtype, layout):
    rng = np.random.default_rng(8)
    a = rng.standard_normal((3, 5, 6, 7)).astype(dtype)
    b = rng.standard_normal((1, 5, 1, 1)).astype(dtype)
    x = sn.tensor("x", shape=(None, 5, 6, 7), dtype=dtype)
    bias = sn.tensor("b", shape=(1, 5, 1, 1), dtype=dtype)
    f = sn.function([x, bias], sn.relu(x + bias), backend="c")
    np.testing.assert_array_equal(f(layouts(a)[layout], b), np.maximum(a + b, 0))


def test_a_row_constant_operand_that_is_not_broadcast_at_run_time():
    """Declared (N, 1) against an (N, 1) operand: no row to broadcast along; and a (1, 1)
    column against a longer output."""
    x = sn.tensor("x", shape=(None, 1))
    c = sn.tensor("c", shape=(None, 1))
    f = sn.function([x, c], x / c + 1.0, backend="c")
    a, col = np.arange(1.0, 6.0)[:, None], np.arange(2.0, 7.0)[:, None]
    np.testing.assert_array_equal(f(a, col), a / col + 1.0)
    np.testing.assert_array_equal(f(np.ones((5, 1)), np.full((1, 1), 4.0)), np.full((5, 1), 1.25))
