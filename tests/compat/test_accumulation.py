"""Theano's ``acc_dtype`` on ``T.sum``/``T.prod``/``T.mean`` and the same methods of its
variables: the reduction accumulates in ``acc_dtype``, then the result is cast to ``dtype``
(``CAReduceDtype``); an accumulator narrower than the input is refused."""

import numpy as np
import pytest

import symnb as sn
import symnb.compat.theano as theano
import symnb.compat.theano.tensor as T

A = np.array([[100, 100, 100], [-7, 3, 90]], "int8")


def _theano_reduce(ufunc, a, axis, acc, out):
    """Theano's ``perform``: ``ufunc.reduce(dtype=acc)``, then cast to the output dtype."""
    return ufunc.reduce(a, axis=axis, dtype=acc).astype(out)


def _spellings(name, x, **kwargs):
    """``T.name(x, ...)`` and ``x.name(...)``."""
    return [getattr(T, name)(x, **kwargs), getattr(x, name)(**kwargs)]


@pytest.mark.parametrize("name, ufunc", [("sum", np.add), ("prod", np.multiply)])
@pytest.mark.parametrize("acc", ["int8", "int16", "float32", "float64"])
@pytest.mark.parametrize("dtype", [None, "int32", "float64"])
def test_sum_and_prod_accumulate_in_acc_dtype_then_cast_to_dtype(name, ufunc, acc, dtype):
    x = T.bmatrix("x")
    out = dtype or "int64"  # Theano's result of a discrete sum or product: int64
    for expr in _spellings(name, x, axis=1, dtype=dtype, acc_dtype=acc):
        assert expr.type.dtype == out
        got = theano.function([x], expr)(A)
        np.testing.assert_array_equal(got, _theano_reduce(ufunc, A, 1, acc, out))
        assert got.dtype == out


def test_int8_accumulator_wraps_as_in_theano():
    """300 does not fit the int8 accumulator: Theano's sum is 44, cast to int64."""
    x = T.bvector("x")
    f = theano.function([x], [T.sum(x, acc_dtype="int8"), x.sum(acc_dtype="int64")])
    np.testing.assert_array_equal(f(A[0]), [44, 300])


def test_float32_sum_in_a_float64_accumulator_keeps_the_small_terms():
    x = T.fvector("x")
    values = np.array([1.0] + [1e-8] * 1000, "float32")
    total = theano.function([x], x.sum(acc_dtype="float64"))(values)
    assert total.dtype == "float32"
    assert total == np.float32(np.add.reduce(values, dtype="float64"))
    assert total > 1.0  # a float32 accumulator loses every 1e-8


@pytest.mark.parametrize("acc", ["int16", "float32", "float64"])
@pytest.mark.parametrize("axis", [None, 0, 1, [0, 1]])
def test_mean_is_the_sum_in_acc_dtype_over_the_count(acc, axis):
    x = T.bmatrix("x")
    axes = None if axis is None else tuple(np.atleast_1d(axis))
    total = np.add.reduce(A, axis=axes, dtype=acc).astype("int64")
    want = total / (A.size if axes is None else np.prod([A.shape[i] for i in axes]))
    for expr in _spellings("mean", x, axis=axis, acc_dtype=acc):
        assert expr.type.dtype == "float64"
        np.testing.assert_allclose(theano.function([x], expr)(A), want, rtol=1e-15)


def test_mean_of_float32_stays_float32():
    x = T.fmatrix("x")
    a = np.random.default_rng(0).normal(size=(3, 4)).astype("float32")
    for expr in _spellings("mean", x, axis=0, acc_dtype="float64"):
        assert expr.type.dtype == "float32"
        np.testing.assert_allclose(theano.function([x], expr)(a), a.mean(axis=0), rtol=1e-6)


#: Theano's default accumulator of a sum (``CAReduceDtype._acc_dtype``), by input dtype
THEANO_ACC = {"int8": "int64", "uint8": "uint64", "int32": "int64", "float16": "float32"}
#: values that show a wrapping int8 sum (300 -> 44) and a truncated float sum (13.5 -> 13)
MEAN_INPUTS = {
    "int8": A,
    "uint8": A.astype("uint8"),
    "int32": A.astype("int32"),
    "float16": (A / 4).astype("float16"),
    "float32": (A / 4).astype("float32"),
    "float64": A / 4,
}


def _theano_mean(a, axis, dtype):
    """Theano 1.0's ``mean(a, axis, dtype)``: ``sum`` in ``dtype`` (the accumulator the
    input's), then true-divided by the count cast to float32 (a float16/float32/complex64 sum)
    or float64; a float16 ``dtype`` cast back to it."""
    acc = THEANO_ACC.get(a.dtype.name, a.dtype.name)
    total = np.add.reduce(a, axis=axis, dtype=acc).astype(dtype)
    count = np.asarray(a.shape[axis], "float32" if dtype in ("float16", "float32") else "float64")
    out = total / count
    return out.astype("float16") if dtype == "float16" else out


@pytest.mark.parametrize("given", sorted(MEAN_INPUTS))
@pytest.mark.parametrize(
    "dtype", ["int8", "uint16", "int32", "int64", "float16", "float32", "float64"]
)
def test_mean_with_dtype_is_the_sum_in_dtype_over_the_count(given, dtype):
    """An integer ``dtype`` gives a float64 mean of the sum in that dtype (Theano divided
    it by the count as float64), never an integer mean."""
    a = MEAN_INPUTS[given]
    x = T.tensor(given, (False, False), name="x")
    want = _theano_mean(a, 1, dtype)
    for expr in _spellings("mean", x, axis=1, dtype=dtype):
        assert expr.type.dtype == want.dtype, (given, dtype)
        got = theano.function([x], expr)(a)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6 if want.dtype != "float16" else 1e-3)


@pytest.mark.parametrize(
    "make, acc", [(T.dvector, "float32"), (T.lvector, "int32"), (T.bvector, "uint8")]
)
def test_an_accumulator_narrower_than_the_input_is_refused(make, acc):
    x = make("v")
    for call in ("sum", "prod", "mean"):
        with pytest.raises(
            sn.DTypeError,
            match=rf"T.{call if call != 'mean' else 'sum'}: "
            rf"acc_dtype={acc} would lose precision of .*'v'",
        ) as caught:
            getattr(T, call)(x, acc_dtype=acc)
        assert isinstance(caught.value, TypeError)
        assert "test_accumulation.py" in str(caught.value)


def test_methods_take_theanos_argument_order():
    """Theano's ``x.sum(axis, dtype, keepdims, acc_dtype)``: dtype before keepdims."""
    x = T.bmatrix("x")
    f = theano.function([x], [x.sum(1, "int16", True), x.prod(0, None, False, "float64")])
    total, product = f(A)
    np.testing.assert_array_equal(total, A.sum(axis=1, dtype="int16", keepdims=True))
    assert total.dtype == "int16"
    np.testing.assert_array_equal(product, A.prod(axis=0, dtype="float64").astype("int64"))


def test_symnb_variables_keep_numpys_methods():
    x = sn.tensor("x", shape=(2, 3), dtype="int8")
    assert x.sum(1, keepdims=True).type.shape == (2, 1)
    assert x.sum(1, "int16").type.dtype == "int16"  # NumPy's order: dtype second
    with pytest.raises(TypeError):
        x.sum(acc_dtype="int64")


#: a float16 column whose float16 partial sums lose the ones: 2048 + 1 rounds to 2048
HALF_COLUMN = np.tile(np.array([[2048.0]] + [[1.0]] * 7, "float16"), (1, 3))


@pytest.mark.parametrize("backend", ["py", "c"])
def test_float16_sums_and_products_accumulate_in_float32_by_default(backend, monkeypatch):
    """Theano's default accumulator of float16 is float32 (``CAReduceDtype._acc_dtype``), the
    result cast once to float16 (or to ``dtype``). symnb summed in float16, rounding every
    partial sum along the axis: the column [2048, 1 x7] summed to 2048, Theano's 2056."""
    monkeypatch.setattr(sn.config, "backend", backend)  # theano.function compiles on it
    x = T.tensor("float16", (False, False), name="x")
    want = _theano_reduce(np.add, HALF_COLUMN, 0, "float32", "float16")
    assert want.tolist() == [2056.0] * 3
    outs = _spellings("sum", x, axis=0) + [T.sum(x, axis=0, dtype="float16")]
    outs.append(T.sum(x, dtype="int32"))  # dtype only casts the float32 sum
    *sums, as_int = theano.function([x], outs)(HALF_COLUMN)
    for got in sums:
        assert got.dtype == "float16"
        np.testing.assert_array_equal(got, want)
    assert as_int.dtype == "int32" and as_int == 6165  # 3 * 2055, exact in float32
    products = np.tile(np.array([[1.0009765625]] * 64, "float16"), (1, 3))
    want = _theano_reduce(np.multiply, products, 0, "float32", "float16")
    for got in theano.function([x], _spellings("prod", x, axis=0))(products):
        assert got.dtype == "float16"
        np.testing.assert_array_equal(got, want)  # 1.064, not float16's 1.0625


def _theano_half_var(a, axis, ddof=0):
    """Theano 1.0's ``T.var`` of float16: ``mean((x - mean(x)) ** 2)``, both means summed in
    float32 and divided by the count as float32, then cast to float16."""
    n = np.float32(a.shape[axis])
    mean = (np.add.reduce(a, axis, dtype="float32", keepdims=True) / n).astype("float16")
    centred = a - mean
    total = np.add.reduce(centred * centred, axis, dtype="float32")
    return (total / (n - ddof)).astype("float16")


@pytest.mark.parametrize("backend", ["py", "c"])
def test_var_and_std_of_float16_sum_in_float32(backend, monkeypatch):
    """``T.var`` of float16 is Theano's ``mean((x - mean(x)) ** 2)`` with ``T.mean``'s float32
    sums; NumPy's var (which T.var was) sums float16 in float16: [16, 0 x63] gave 3.875 where
    Theano (and the exact variance) give 3.9375."""
    monkeypatch.setattr(sn.config, "backend", backend)
    column = np.zeros((64, 3), "float16")
    column[0] = 16
    x = T.tensor("float16", (False, False), name="x")
    outs = [T.var(x, axis=0), x.var(0, 1), T.std(x, axis=0), x.std(0, 0, True)]
    var, var_ddof1, std, std_kept = theano.function([x], outs)(column)
    for got in (var, var_ddof1, std, std_kept):
        assert got.dtype == "float16"
    np.testing.assert_array_equal(var, _theano_half_var(column, 0))
    assert var.tolist() == [3.9375] * 3
    np.testing.assert_array_equal(var_ddof1, _theano_half_var(column, 0, 1))
    np.testing.assert_array_equal(std, np.sqrt(_theano_half_var(column, 0)))
    np.testing.assert_array_equal(std_kept, np.sqrt(_theano_half_var(column, 0))[None])


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda x: T.sum(x, dtype="float33"), "T.sum: dtype: 'float33' is not a dtype"),
        (lambda x: T.sum(x, acc_dtype="float33"), "T.sum: acc_dtype: 'float33' is not a dtype"),
        (lambda x: x.sum(dtype="float33"), "T.sum: dtype: 'float33' is not a dtype"),
        (lambda x: T.prod(x, dtype="float33"), "T.prod: dtype: 'float33' is not a dtype"),
        (lambda x: x.prod(acc_dtype="int33"), "T.prod: acc_dtype: 'int33' is not a dtype"),
        (lambda x: T.mean(x, dtype="float33"), "T.mean: dtype: 'float33' is not a dtype"),
        (lambda x: T.mean(x, acc_dtype="f33"), "T.mean: acc_dtype: 'f33' is not a dtype"),
        (lambda x: T.arange("a"), "cannot use str 'a' in a symbolic expression"),
        (lambda x: T.arange(0, 3, "b"), "cannot use str 'b' in a symbolic expression"),
        (lambda x: theano.scalar.upcast("float33", "int32"), "upcast: 'float33' is not a dtype"),
        (lambda x: theano.scalar.constant(1, dtype="float33"), "constant: dtype: 'float33' is"),
        (lambda x: T.eye(3, dtype="float33"), "T.eye: dtype: 'float33' is not a dtype"),
        (lambda x: T.tri(3, dtype="float33"), "T.tri: dtype: 'float33' is not a dtype"),
        (lambda x: T.topk(x, 1, idx_dtype="int33"), "T.topk: idx_dtype: 'int33' is not a dtype"),
    ],
)
def test_a_dtype_that_is_no_dtype_is_a_dtype_error_at_the_users_line(build, message):
    """Each was NumPy's bare TypeError "data type 'float33' not understood" (``np.dtype`` of
    the user's value), naming neither the call nor the line; every other entry point of the
    layer gives this DTypeError."""
    x = T.matrix("x")
    with pytest.raises(sn.DTypeError, match=message) as info:
        build(x)
    assert "test_accumulation.py" in str(info.value)
