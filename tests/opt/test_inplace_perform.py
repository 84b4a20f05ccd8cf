"""The in-place variants run on the py backend: they write into the destroyed input's buffer
when it can hold the result, and compute into a new one when it cannot (broadcast, read-only,
not an array). Found by mutation testing: a variant that never wrote in place, or wrote
into the wrong input, passed every value check."""

import numpy as np
import pytest

import symnb as sn
from symnb.ops.composite import Composite
from symnb.ops.inplace import CompositeInplace, ElemwiseInplace, inplace_variant

PROGRAM = ((sn.exp, (("in", 0),)), (sn.mul, (("tmp", 0), ("in", 1))))  # exp(a) * b


def composite():
    return Composite(PROGRAM, "float64", 2)


def variants(destroyed):
    return {
        "elemwise": (ElemwiseInplace(sn.add, destroyed), np.add),
        "composite": (inplace_variant(composite(), destroyed), lambda a, b: np.exp(a) * b),
    }


@pytest.mark.parametrize("kind", ["elemwise", "composite"])
@pytest.mark.parametrize("destroyed", [0, 1])
def test_the_result_is_written_into_the_destroyed_input(kind, destroyed):
    op, ref = variants(destroyed)[kind]
    arrays = [np.arange(6.0).reshape(2, 3) / 7, np.linspace(1, 2, 6).reshape(2, 3)]
    want = ref(*arrays)
    out = op.perform(*arrays)
    assert out is arrays[destroyed] and np.array_equal(out, want)
    assert op.destroy_map == {0: [destroyed]}


@pytest.mark.parametrize("kind", ["elemwise", "composite"])
def test_an_input_that_cannot_hold_the_result_is_left_alone(kind):
    op, ref = variants(0)[kind]
    broadcast = [np.linspace(1, 2, 3), np.arange(6.0).reshape(2, 3)]
    read_only = [np.linspace(1, 2, 3), np.linspace(3, 4, 3)]
    read_only[0].setflags(write=False)
    for arrays in (broadcast, read_only, [np.float64(0.5), np.linspace(1, 2, 3)]):
        kept = np.copy(arrays[0])
        out = op.perform(*arrays)
        assert out is not arrays[0] and np.array_equal(out, ref(*arrays))
        assert np.array_equal(arrays[0], kept)


def test_the_variants_keep_the_base_ops_arity_dtype_and_name():
    plain, into_second = ElemwiseInplace(sn.add, 0), ElemwiseInplace(sn.add, 1)
    assert plain.nin == 2 and (str(plain), str(into_second)) == ("add_inplace", "add_inplace[1]")
    variant = inplace_variant(composite(), 1)
    assert isinstance(variant, CompositeInplace) and variant.dtype == "float64"
    assert inplace_variant(Composite(PROGRAM, "float32", 2), 0).dtype == "float32"
    assert variant.nin == 2 and str(variant) == f"{composite()}_inplace[1]"
    assert str(inplace_variant(composite(), 0)) == f"{composite()}_inplace"
