import numpy as np
import pytest

import symnb as sn
from symnb.core.dims import broadcast_dims, normalize_shape
from symnb.core.types import TensorType


def test_tensor_type_is_value_like():
    a = TensorType("float32", ("batch", 3))
    assert a == TensorType(np.float32, ["batch", 3])
    assert hash(a) == hash(TensorType("f32", ("batch", 3)))
    assert str(a) == "f32[batch,3]"
    assert a.ndim == 2
    with pytest.raises(AttributeError):
        a.dtype = np.dtype("float64")


@pytest.mark.parametrize("bad", [-1, 1.5, "not a name", True])
def test_bad_dims_are_refused(bad):
    with pytest.raises((TypeError, ValueError)):
        normalize_shape((bad,))


def test_broadcast_dims():
    assert broadcast_dims(1, "n") == "n"
    assert broadcast_dims(None, 3) == 3
    assert broadcast_dims("n", "n") == "n"
    with pytest.raises(Exception, match="3 != 4"):
        broadcast_dims(3, 4)


def test_constructors():
    assert sn.matrix("m").type == TensorType(sn.config.floatX, (None, None))
    assert sn.vector("v", dtype="int32").type.dtype == np.int32
    assert sn.tensor4("t").ndim == 4
    assert sn.scalar("s").type.shape == ()
    x = sn.tensor("x", shape=("batch", 784), dtype="float32")
    assert x.type.shape == ("batch", 784) and x.dtype == np.float32 and x.name == "x"
    with pytest.raises(sn.ShapeError, match=r"matrix 'm' has 2 dims; shape \(1, 2, 3\) has 3"):
        sn.matrix("m", shape=(1, 2, 3))


def test_floatx_is_checked_and_used():
    old = sn.config.floatX
    try:
        sn.config.floatX = "float32"
        assert sn.vector("v").dtype == np.float32
        with pytest.raises(ValueError, match="floatX"):
            sn.config.floatX = "int8"
    finally:
        sn.config.floatX = old


def test_variable_records_the_users_line():
    x = sn.vector("x")  # the line recorded
    assert x.source.filename == __file__
    assert "sn.vector" in x.source.code
    y = x + 1
    assert y.owner.outputs[0].source.lineno == x.source.lineno + 3


def test_symbolic_truth_and_len_are_clear_errors():
    x = sn.vector("x")
    with pytest.raises(TypeError, match="truth value"):
        bool(x > 0)
    with pytest.raises(TypeError, match="not known before it runs"):
        len(x)
    assert len(sn.tensor("t", shape=(3, None))) == 3


@pytest.mark.parametrize("code", ["i8", "u8", "i4", "u2", "f8", "f4", "int8", "uint8", "float16"])
def test_dtype_strings_mean_what_numpy_says(code):
    """ "i8" is NumPy's int64 (8 bytes), not symnb's display name for int8."""
    v = np.array([300, 7000, -5], np.int64)
    x = sn.tensor("x", shape=(3,), dtype="int64")
    y = x.astype(code)
    assert y.type.dtype == np.dtype(code)
    assert sn.tensor("t", shape=(2,), dtype=code).type.dtype == np.dtype(code)
    got = sn.function([x], y, backend="py")(v)
    assert got.dtype == np.dtype(code)
    np.testing.assert_array_equal(got, v.astype(code))


@pytest.mark.parametrize(
    "short, name",
    [
        ("f32", "float32"),
        ("f64", "float64"),
        ("i16", "int16"),
        ("i64", "int64"),
        ("u64", "uint64"),
        ("c128", "complex128"),
    ],
)
def test_short_names_numpy_does_not_read_are_symnbs(short, name):
    assert sn.tensor("x", shape=(2,), dtype=short).type.dtype == np.dtype(name)


def test_f16_is_refused_as_numpys_float128_naming_float16():
    x = sn.tensor("x", shape=(2,), dtype="float64")
    with pytest.raises(sn.DTypeError) as info:
        sn.cast(x, "f16")
    message = str(info.value)
    assert "'x'" in message and "float128" in message and "float64" in message
    assert "write 'float16'" in message
    with pytest.raises(sn.DTypeError, match="float128"):
        sn.tensor("t", shape=(2,), dtype="f16")
