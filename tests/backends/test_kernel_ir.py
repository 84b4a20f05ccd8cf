"""The kernel description's own functions (symnb/backends/kernels/ir.py), on their values: a
reduction's start value, which dtypes kernels compute in, and the SSA walks every renderer
uses to decide what a loop must compute. A wrong start value or a value left out of a loop
gives wrong numbers in every dialect at once, so these are checked here, without a compiler."""

from __future__ import annotations

import math

import numpy as np
import pytest

from symnb.backends.kernels.ir import (
    Convert,
    Extent,
    Gather,
    Index,
    Kernel,
    Literal,
    Load,
    Map,
    Op,
    Operand,
    Pass,
    Reduce,
    Rows,
    RowValue,
    Stored,
    Unsupported,
    arguments,
    check_dtype,
    closure,
    depends,
    identity,
)
from tests.helpers import KERNEL_DTYPES

COMBINE = {
    "sum": np.add,
    "prod": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
    "all": np.logical_and,
    "any": np.logical_or,
}


def extremes(dtype: str) -> np.ndarray:
    """The values of ``dtype`` a start value must leave unchanged, its limits included."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.array([False, True])
    if dt.kind == "f":
        info = np.finfo(dt)
        return np.array([-np.inf, info.min, -1.5, -0.0, 0.0, 2.5, info.max, np.inf], dt)
    info = np.iinfo(dt)
    return np.array([info.min, info.min + 1, 0, 1, info.max - 1, info.max], dt)


#: every reduction over every dtype it accumulates in (all/any accumulate bools)
REDUCED = [
    (k, d) for k in sorted(COMBINE) for d in KERNEL_DTYPES if k not in ("all", "any") or d == "bool"
]


@pytest.mark.parametrize("kind,dtype", REDUCED)
def test_identity_is_the_start_value_of_each_reduction(kind, dtype):
    start = identity(kind, dtype)
    assert type(start) in (bool, int, float), type(start)  # a Python number renderers spell
    assert (type(start) is bool) == (dtype == "bool"), start  # a bool start only for bools
    values = extremes(dtype)
    combined = COMBINE[kind](np.array(start, dtype), values)
    np.testing.assert_array_equal(combined, values)
    assert combined.dtype == np.dtype(dtype)


def test_identity_values_exactly():
    assert identity("sum", "bool") is False and identity("any", "bool") is False
    assert identity("prod", "bool") is True and identity("all", "bool") is True
    assert identity("sum", "float32") == 0 and identity("prod", "int8") == 1
    assert identity("max", "float64") == -math.inf and identity("min", "float32") == math.inf
    assert identity("max", "bool") is False and identity("min", "bool") is True
    assert identity("max", "int8") == -128 and identity("min", "int8") == 127
    assert identity("max", "uint64") == 0 and identity("min", "uint64") == 2**64 - 1
    assert identity("max", "int64") == -(2**63) and identity("min", "uint32") == 2**32 - 1


@pytest.mark.parametrize("dtype", KERNEL_DTYPES)
def test_check_dtype_accepts_what_kernels_compute_in(dtype):
    assert check_dtype(dtype) is None
    assert check_dtype(np.dtype(dtype)) is None


@pytest.mark.parametrize("dtype", ["float16", "complex64", "complex128", "str", "object"])
def test_check_dtype_refuses_what_numpy_computes(dtype):
    name = np.dtype(dtype).name
    with pytest.raises(Unsupported, match=f"^{name} is computed by NumPy, not in kernels$"):
        check_dtype(dtype)


#: an SSA program: 0 x, 1 y, 2 literal, 3 x + 2.0, 4 index, 5 y[index], 6 float(5),
#: 7 (x + 2.0) * 6, 8 the row's length, 9 an earlier pass's total, 10 a stored element
VALUES = (
    Load(0, "float64"),
    Load(1, "float64"),
    Literal(2.0, "float64"),
    Op("add", (0, 2), "float64"),
    Index(),
    Gather(1, 4, "float64"),
    Convert(5, "float64"),
    Op("mul", (3, 6), "float64"),
    Extent(),
    RowValue(0, "float64"),
    Stored(0, "float64"),
)


def test_arguments_are_the_values_each_value_reads():
    assert [arguments(v) for v in VALUES] == [
        (),
        (),
        (),
        (0, 2),
        (),
        (4,),
        (5,),
        (3, 6),
        (),
        (),
        (),
    ]


def test_closure_is_every_value_needed_in_ssa_order():
    assert closure(VALUES, [7]) == [0, 2, 3, 4, 5, 6, 7]
    assert closure(VALUES, [6, None, 3]) == [0, 2, 3, 4, 5, 6]
    assert closure(VALUES, [None]) == []
    assert closure(VALUES, [9, 2, 9]) == [2, 9]


def test_depends_follows_arguments_through_gathers_and_converts():
    assert depends(VALUES, 7, (Index,)) and depends(VALUES, 6, (Index,))
    assert depends(VALUES, 7, (Load,)) and depends(VALUES, 5, (Gather,))
    assert not depends(VALUES, 3, (Index,))
    assert not depends(VALUES, 2, (Load, Index))
    assert depends(VALUES, 8, (Extent, RowValue)) and not depends(VALUES, 9, (Stored,))


def test_a_kernel_is_named_after_its_loop_shape():
    one = (Operand("float64"),)
    assert Kernel(one, one, VALUES[:1], Map(((0, 0),))).name == "map"
    assert Kernel(one, one, VALUES[:1], Reduce(0, "sum", "float64")).name == "reduce"
    rows = Rows((Pass(kind="max", value=0, acc_dtype="float64"),), finals=((0, 0),))
    assert Kernel(one, one, VALUES[:1], rows).name == "rows"
