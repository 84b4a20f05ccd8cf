"""A bare Python float as an argument: rounded into a float input like a literal, taken by an
integer input only when it is a whole number. Found by mutation testing: only lists of floats
were tried against integer inputs, so a float that skipped the checks went unseen."""

import numpy as np
import pytest

import symnb as sn


def test_a_python_float_into_an_integer_input_must_be_whole():
    i = sn.tensor("i", shape=(), dtype="int64")
    f = sn.function([i], i * 2, backend="py")
    assert f(2.0) == 4 and f(2.0).dtype == np.int64
    with pytest.raises(sn.InputError, match=r"expects int64; the value 2\.5 does not convert"):
        f(2.5)


def test_a_python_float_into_a_float32_input_is_rounded_to_it():
    x = sn.tensor("x", shape=(), dtype="float32")
    got = sn.function([x], x * 1, backend="py")(0.1)
    assert got.dtype == np.float32 and got == np.float32(0.1)
