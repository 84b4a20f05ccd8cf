"""A bare Python float as an argument: rounded into a float input like a literal, taken by an
integer input only when it is a whole number. Found by mutation testing: only lists of floats
were tried against integer inputs, so a float that skipped the checks went unseen."""

import warnings

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


@pytest.mark.parametrize("dtype, big", [("float32", 1e300), ("float16", 1e5), ("complex64", 1e39)])
def test_a_python_float_beyond_a_narrow_float_input_is_refused(backend, dtype, big):
    """It would become inf; np.float64(big) and [big] are refused already. inf itself, and a
    value just above the largest that rounds down to it (as NumPy rounds), are taken."""
    s = sn.tensor("s", shape=(), dtype=dtype)
    f = sn.function([s], s + 0, backend=backend)  # (inf+0j) * 1 is inf+nanj
    largest = np.finfo(dtype).max
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning: the error says it
        with pytest.raises(sn.InputError, match=rf"input 0 's' expects {dtype}; the value .*inf"):
            f(big)
    with pytest.raises(sn.InputError, match=rf"input 0 's' expects {dtype}"):
        f(np.float64(big))
    assert f(float("inf")) == np.inf and f(-float("inf")) == -np.inf
    just_above = float(largest) * (1 + np.finfo(dtype).eps / 4)
    assert f(just_above) == np.array(just_above).astype(dtype) == largest
    assert f(-0.5) == -0.5 and np.isnan(f(float("nan")))


def test_real_numpy_values_into_a_complex64_input_warn_nothing():
    s = sn.tensor("s", shape=(2,), dtype="complex64")
    f = sn.function([s], s * 1, backend="py")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(f([np.float64(0.5), 2.0]), [0.5, 2.0])
        with pytest.raises(sn.InputError, match=r"complex64 holds 0\.1 as"):
            f([0.1, 1.0])
