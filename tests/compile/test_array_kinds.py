"""One input rule for every kind of array: torch tensors, JAX arrays, pandas objects,
memoryviews, xarray DataArrays and any ``__dlpack__`` object meet the dtype rule of ndarrays
(a float64 value into a float32 input is refused, never rounded), on every backend; DLPack
objects on the host are taken without a copy; DataArrays are matched to named dims by name.
A kind whose library is not installed skips with the reason."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import symnb as sn
from symnb.compile.inputs import InputSpec
from symnb.errors import InputError, InputWarning
from tests.helpers import named_backends

BACKENDS = named_backends("py", "c")
ROWS = np.array([[0.1, 0.2, 0.3], [1.5, -2.0, 4.25]])  # 0.1 is not a float32 value


def _torch(array):
    return pytest.importorskip("torch").from_numpy(array)


def _jax(array):
    jax = pytest.importorskip("jax")
    if array.dtype.itemsize == 8 and hasattr(jax, "enable_x64"):
        with jax.enable_x64(True):
            return jax.numpy.asarray(array)
    return jax.numpy.asarray(array)


def _pandas(array):
    return pytest.importorskip("pandas").DataFrame(array)


def _xarray(array):
    return pytest.importorskip("xarray").DataArray(array, dims=("batch", "feature"))


#: kind -> (how to make one from an ndarray, what messages call it, how they say to cast it)
KINDS = {
    "ndarray": (np.asarray, "array", "value.astype('float32')"),
    "torch": (_torch, "torch Tensor", "value.to(torch.float32)"),
    "jax": (_jax, "JAX array", "value.astype('float32')"),
    "pandas": (_pandas, "pandas DataFrame", "value.astype('float32')"),
    "memoryview": (memoryview, "memoryview", "np.asarray(value, 'float32')"),
    "xarray": (_xarray, "xarray DataArray", "value.astype('float32')"),
}


def batch_sums(backend, dtype="float32"):
    x = sn.tensor("x", shape=("batch", "feature"), dtype=dtype)
    return sn.function([x], sn.sum(x * 2, axis=1), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", KINDS)
def test_a_float64_value_into_a_float32_input_is_refused_like_an_ndarray(kind, backend):
    make, noun, cast = KINDS[kind]
    value = make(ROWS)
    with pytest.raises(InputError) as info:
        batch_sums(backend)(value)
    assert str(info.value) == (
        f"input 0 'x' expects float32, got a float64 {noun}, which would lose precision; pass "
        f"{cast} or declare the input with dtype='float64'"
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", KINDS)
def test_values_of_the_inputs_dtype_or_a_safe_one_give_the_ndarray_result(kind, backend):
    make = KINDS[kind][0]
    f = batch_sums(backend, "float64")
    want = f(ROWS)
    np.testing.assert_array_equal(f(make(ROWS)), want)
    np.testing.assert_array_equal(f(make(ROWS.astype("float32"))), f(ROWS.astype("float32")))
    g = batch_sums(backend, "float32")
    np.testing.assert_array_equal(g(make(ROWS.astype("float32"))), g(ROWS.astype("float32")))


@pytest.mark.parametrize("kind", ["torch", "jax", "pandas", "memoryview"])
def test_float_values_into_an_integer_input_get_the_labels_message(kind):
    make, noun, _ = KINDS[kind]
    i = sn.tensor("labels", shape=("batch",), dtype="int64")
    with pytest.raises(InputError) as info:
        sn.function([i], i + 1, backend="py")(make(np.array([1.0, 2.0], "float32")))
    assert str(info.value).startswith(
        f"input 0 'labels' expects int64, got a float32 {noun}; integer inputs take integer "
        "values such as class labels (yours are floats; they are whole numbers)"
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tensor_that_requires_grad_is_detached_with_a_note(backend):
    torch = pytest.importorskip("torch")
    t = torch.tensor(ROWS, dtype=torch.float32, requires_grad=True)
    f = batch_sums(backend)
    with pytest.warns(InputWarning) as caught:
        got = f(t)
    np.testing.assert_array_equal(got, f(ROWS.astype("float32")))
    (note,) = [str(w.message) for w in caught]
    assert note == (
        "input 0 'x' got a torch tensor that requires grad: symnb computes on its values "
        "(detached), so no gradient flows back to torch; pass value.detach() to say so"
    )
    assert caught[0].filename == __file__  # the user's line, not symnb's
    assert t.grad is None and t.requires_grad
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(t.detach())  # said so: no note


@pytest.mark.parametrize("backend", BACKENDS)
def test_torch_views_with_a_negative_or_conjugate_bit_are_read_by_their_values(backend):
    torch = pytest.importorskip("torch")
    z = torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex128)
    imag = z.conj().imag  # a view with the negative bit: DLPack exports its raw memory
    assert imag.is_neg()
    x = sn.tensor("x", shape=(None,), dtype="float64")
    np.testing.assert_array_equal(sn.function([x], x + 0, backend=backend)(imag), [-2.0, 4.0])
    c = sn.tensor("c", shape=(None,), dtype="complex128")
    conj = sn.function([c], c + 0, backend=backend)
    np.testing.assert_array_equal(conj(z.conj()), np.conj(z.numpy()))
    np.testing.assert_array_equal(conj(-z.conj()), -np.conj(z.numpy()))


def test_a_tensor_of_a_dtype_numpy_lacks_is_a_clear_error():
    torch = pytest.importorskip("torch")
    with pytest.raises(
        InputError,
        match=r"^input 0 'x': cannot read the torch Tensor as an "
        r"array: .*BFloat16",
    ):
        batch_sums("py")(torch.ones((2, 3), dtype=torch.bfloat16))


class Exported:
    """An array from some library that offers only DLPack (here over NumPy's memory)."""

    def __init__(self, array, device=(1, 0)):
        self.array, self.device = array, device

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.device


def test_a_dlpack_object_on_the_host_is_taken_without_a_copy():
    spec = InputSpec(sn.tensor("x", shape=("batch", 3)), 0)
    base = np.arange(6.0).reshape(2, 3)
    taken = spec.convert(Exported(base), {})
    assert np.shares_memory(taken, base) and taken.shape == (2, 3)
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    assert np.shares_memory(spec.convert(t, {}), t.numpy())
    assert not np.shares_memory(spec.convert(t.float(), {}), t.float().numpy())  # a cast: a copy


def test_a_dlpack_object_on_a_device_is_refused_with_how_to_copy_it():
    with pytest.raises(InputError) as info:
        batch_sums("py", "float64")(Exported(ROWS, device=(2, 0)))
    assert str(info.value) == (
        "input 0 'x' got a tests Exported on a CUDA device; symnb's inputs are read on the "
        "host: copy it there first (torch: value.cpu(), JAX: jax.device_get(value), CuPy: "
        "value.get())"
    )  # a kind is named by its library (the class's top module) and class


def test_a_dataframe_of_mixed_columns_is_refused():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]})
    with pytest.raises(InputError) as info:
        batch_sums("py")(frame)
    assert str(info.value) == (
        "input 0 'x' expects float32, got a pandas DataFrame holding Python objects (no one "
        "numeric dtype)"
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_dataframes_int_column_is_not_rounded_by_merging_with_a_float_one(backend):
    """pandas reads int64 and float64 columns as one float64 array, rounding 2**53 + 1 before
    the dtype check; the int column alone is refused, so the frame is too (per column)."""
    pd = pytest.importorskip("pandas")
    f = batch_sums(backend, "float64")
    frame = pd.DataFrame({"a": [2**53 + 1, 2], "b": [3.0, 4.0]})
    with pytest.raises(InputError) as info:
        f(frame)
    assert str(info.value) == (
        "input 0 'x' got a pandas DataFrame whose int64 column 'a' holds integers that float64 "
        "cannot represent exactly (beyond 2**53), and its columns are read as one float64 "
        "array, which would round them; convert it yourself if rounding is fine "
        "(value.astype('float64')), or pass the integer columns apart"
    )
    with pytest.raises(InputError, match=r"uint64 column 'u' holds integers that float64"):
        sn.shared(pd.DataFrame({"u": np.array([2**64 - 1, 0], "uint64"), "i": [-1, 2]}))
    exact = pd.DataFrame({"a": [2**53, 2], "b": [3.5, 4.0]})
    np.testing.assert_array_equal(f(exact), [2.0 * (2**53 + 3.5), 12.0])


# -- xarray: dims matched by name -----------------------------------------------------------
def _dataarray(array, dims):
    return pytest.importorskip("xarray").DataArray(array, dims=dims)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_dataarray_is_transposed_to_the_inputs_dim_names(backend):
    f = batch_sums(backend, "float64")
    flipped = _dataarray(ROWS.T.copy(), ("feature", "batch"))
    np.testing.assert_array_equal(f(flipped), f(ROWS))
    x = sn.tensor("x", shape=("batch", 3, "time"))
    g = sn.function([x], x[:, :, 0] - x[:, :, 1], backend=backend)
    data = np.random.default_rng(0).normal(size=(4, 2, 3))  # (time, batch, channel)
    got = g(_dataarray(data, ("time", "batch", "channel")))
    np.testing.assert_array_equal(got, g(data.transpose(1, 2, 0)))


def test_names_that_disagree_are_a_clear_error():
    with pytest.raises(InputError) as info:
        batch_sums("py", "float64")(_dataarray(ROWS, ("sample", "feature")))
    assert str(info.value) == (
        "input 0 'x' has dims ('batch', 'feature'); the DataArray's dims are ('sample', "
        "'feature'), with no 'batch': rename them (value.rename({'sample': 'batch'})) or pass "
        "value.values to match by position"
    )


def test_a_dataarray_with_xarrays_default_names_is_taken_by_position():
    f = batch_sums("py", "float64")
    np.testing.assert_array_equal(f(_dataarray(ROWS, ("dim_0", "dim_1"))), f(ROWS))


def test_named_dims_bind_their_sizes_across_inputs_after_the_transpose():
    x = sn.tensor("x", shape=("batch", "feature"))
    w = sn.tensor("w", shape=("feature",))
    f = sn.function([x, w], x @ w, backend="py")
    flipped = _dataarray(ROWS.T.copy(), ("feature", "batch"))
    np.testing.assert_allclose(f(flipped, np.ones(3)), ROWS.sum(axis=1))
    with pytest.raises(InputError, match=r"dim 'feature' \(axis 0\) is 2 here but 3"):
        f(flipped, np.ones(2))


def test_a_pandas_integer_series_with_missing_values_says_so_and_how_to_fill_them():
    pd = pytest.importorskip("pandas")
    labels = sn.tensor("labels", shape=(None,), dtype="int64")
    f = sn.function([labels], labels + 0, backend="py")
    series = pd.Series([1, None, 3], dtype="Int64")
    with pytest.raises(InputError) as info:
        f(series)
    assert str(info.value).endswith(
        "(yours are floats; some are missing (NaN, NA) or infinite: fill or drop them first)\n"
        "  hint: convert them with value.fillna(fill_value).astype('int64')"
    )
    np.testing.assert_array_equal(f(series.fillna(0).astype("int64")), [1, 0, 3])


def test_a_jax_array_of_a_dtype_numpy_lacks_names_it():
    jnp = pytest.importorskip("jax.numpy")
    with pytest.raises(InputError, match=r"^input 0 'x' expects float32, got a JAX array of "):
        batch_sums("py")(jnp.ones((2, 3), dtype=jnp.bfloat16))
    with pytest.raises(InputError, match=r"bfloat16 values$"):
        batch_sums("py")(jnp.ones((2, 3), dtype=jnp.bfloat16))


def test_a_list_of_torch_tensors_that_require_grad_is_an_input_error():
    torch = pytest.importorskip("torch")
    v = sn.tensor("v", shape=(None,))
    with pytest.raises(InputError, match=r"^input 0 'v': cannot make an array of \[tensor\("):
        sn.function([v], v + 0, backend="py")([torch.tensor(1.0, requires_grad=True)])
