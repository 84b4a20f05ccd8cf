"""Reductions and cumulative ops against NumPy/SciPy: axis forms, keepdims, dtypes, 0-d and
empty inputs, stability of logsumexp, and gradients (including zeros in prod/cumprod)."""

import warnings

import numpy as np
import pytest
import scipy.special

import symnb as sn
from symnb.errors import ArgumentError
from tests.helpers import check, random_array, reference_backend
from tests.helpers import run as run_on


def _var_ddof1(a, axis=None, keepdims=False):
    return np.var(a, axis=axis, keepdims=keepdims, ddof=1)


def _sn_var_ddof1(x, axis=None, keepdims=False):
    return sn.var(x, axis=axis, keepdims=keepdims, ddof=1)


def _std_ddof_half(a, axis=None, keepdims=False):
    return np.std(a, axis=axis, keepdims=keepdims, ddof=0.5)


def _sn_std_ddof_half(x, axis=None, keepdims=False):
    return sn.std(x, axis=axis, keepdims=keepdims, ddof=0.5)


def _logsumexp_reference(a, axis=None, keepdims=False):
    """SciPy's, except on empty arrays (which SciPy 1.17 cannot reduce): log(0) = -inf."""
    if np.size(a) == 0:
        with np.errstate(divide="ignore"):
            return np.log(np.sum(np.exp(a), axis=axis, keepdims=keepdims))
    return scipy.special.logsumexp(a, axis=axis, keepdims=keepdims)


# name -> (symbolic, reference, dtypes to try)
REDUCTIONS = {
    "prod": (sn.prod, np.prod, ["float64", "float32", "int32", "uint8", "bool"]),
    "var": (sn.var, np.var, ["float64", "float32", "int16"]),
    "var_ddof1": (_sn_var_ddof1, _var_ddof1, ["float64", "int64"]),
    "std": (sn.std, np.std, ["float64", "float32", "int8"]),
    "std_ddof_half": (_sn_std_ddof_half, _std_ddof_half, ["float64", "float32"]),
    "all": (sn.all, np.all, ["bool", "float32", "int64"]),
    "any": (sn.any, np.any, ["bool", "float64", "int8"]),
    "logsumexp": (sn.logsumexp, _logsumexp_reference, ["float64", "float32", "int32"]),
}
AXES = [None, -1, (0, 2), (-1, 0), ()]


def _values(rng, shape, dtype):
    """random_array, with some zeros so all/any/prod see both cases."""
    a = random_array(rng, shape, dtype)
    if a.size and np.dtype(dtype).kind != "b":
        a.flat[:: max(a.size // 3, 1)] = 0
    return a


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(name, axis, keepdims, rng, backend):
    op, ref, dtypes = REDUCTIONS[name]
    for dtype in dtypes:
        a = _values(rng, (2, 3, 4), dtype)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)  # ddof=1 over no axes: nan
            got = run_on(lambda x: op(x, axis=axis, keepdims=keepdims), a, backend=backend)
            want = np.asarray(ref(a, axis=axis, keepdims=keepdims))
        check(got, want, rtol={np.float32: 1e-5}.get(want.dtype.type, 1e-10))


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_of_0d_and_empty(name, backend):
    op, ref, _ = REDUCTIONS[name]
    cases = [(np.array(1.5), {}), (np.zeros((0, 3)), {"axis": 0}), (np.zeros((0, 3)), {"axis": 1})]
    cases.append((np.zeros((0, 3)), {}))
    for a, kwargs in cases:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)  # var/std of nothing: nan
            want = np.asarray(ref(a, **kwargs))
            got = run_on(lambda x, kw=kwargs: op(x, **kw), a, backend=backend)
        check(got, want)


@pytest.mark.parametrize("op,ref", [(sn.argmax, np.argmax), (sn.argmin, np.argmin)])
@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "int8"])
def test_argmax_argmin_match_numpy(op, ref, axis, keepdims, dtype, rng, backend):
    a = random_array(rng, (3, 5), dtype)  # small ints and bools: ties go to the first
    check(
        run_on(lambda x: op(x, axis=axis, keepdims=keepdims), a, backend=backend),
        ref(a, axis=axis, keepdims=keepdims).astype(np.int64),
    )


@pytest.mark.parametrize(
    "axis, error, message",
    [
        (1.5, sn.ShapeTypeError, "sum: axis is an int, a tuple of ints or None, not 1.5"),
        ((0, "a"), sn.ShapeTypeError, "sum: an axis is an int, not 'a' \\(for 'x'"),
        (True, sn.ShapeTypeError, "sum: axis is an int, a tuple of ints or None, not True"),
        ((0, -2), sn.ShapeError, r"sum: repeated axis in \(0, -2\)"),
        (2, sn.ShapeError, "sum: axis 2 is out of range for 'x'"),
    ],
)
def test_a_bad_axis_is_refused_at_the_users_line(axis, error, message):
    x = sn.tensor("x", shape=(3, 4))
    with pytest.raises(error, match=message) as caught:
        sn.sum(x, axis=axis)  # the line named
    assert f"test_reductions.py, line {caught.tb.tb_lineno}" in str(caught.value)


@pytest.mark.parametrize(
    "build",
    [
        lambda x, np_: x.sum(axis=5),
        lambda x, np_: x.swapaxes(0, 7),
        lambda x, np_: x.transpose(0, 2),
        lambda x, np_: x.argmax(axis=3),
        lambda x, np_: np_.take(x, [0], axis=2),
        lambda x, np_: np_.expand_dims(x, 5),
        lambda x, np_: np_.stack([x, x], axis=4),
        lambda x, np_: np_.concatenate([x, x], axis=3),
    ],
)
def test_an_axis_out_of_range_is_an_index_error_as_numpys_axis_error(build):
    """NumPy's AxisError is both an IndexError and a ValueError; symnb's error for the same
    axis was a ShapeError, a ValueError only, which ``except IndexError`` missed. A repeated
    axis stays a ValueError only, as NumPy's."""
    with pytest.raises(IndexError):
        build(np.ones((3, 4)), np)
    with pytest.raises(IndexError) as info:
        build(sn.tensor("x", (3, 4), "float64"), sn)
    assert isinstance(info.value, sn.ShapeIndexError) and isinstance(info.value, ValueError)
    assert "is out of range" in str(info.value) and "test_reductions.py" in str(info.value)
    with pytest.raises(sn.ShapeError, match="repeated axis") as info:
        sn.tensor("x", (3, 4), "float64").sum(axis=(0, 0))
    assert not isinstance(info.value, IndexError)


def test_argmax_refuses_a_tuple_axis_and_has_no_gradient():
    x = sn.tensor("x", shape=(3, 4))
    with pytest.raises(sn.ShapeTypeError, match="argmax: axis is one int or None"):
        sn.argmax(x, axis=(0, 1))
    with pytest.raises(sn.ShapeError, match="argmin: axis 2 is out of range for 'x'"):
        sn.argmin(x, axis=2)
    assert sn.argmax(x).owner.op.differentiable is False
    assert sn.argmax(x, axis=0).type.shape == (4,) and sn.argmax(x).type.shape == ()


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda x: sn.max(x, axis=1), r"max over axis 1 of 'x' \(float64\(3, 0\)\): axis 1 has"),
        (lambda x: sn.min(x), r"min over all axes of 'x' \(float64\(3, 0\)\): axis 1 has"),
        (lambda x: sn.argmax(x, axis=1), r"argmax over axis 1 of 'x' \(float64\(3, 0\)\)"),
        (lambda x: sn.argmin(x, keepdims=True), r"argmin over all axes of 'x'"),
        (lambda x: x.max(axis=(0, 1), keepdims=True), r"max over all axes of 'x'"),
    ],
    ids=["max-axis", "min-all", "argmax-axis", "argmin-all", "max-method"],
)
def test_a_max_over_an_axis_known_to_be_empty_is_refused_at_build(build, message):
    """NumPy raises on every call of a max/min/argmax/argmin over a zero-length axis (no
    identity); a length fixed at 0 in the type was accepted and then failed at every call."""
    x = sn.tensor("x", shape=(3, 0), dtype="float64")
    with pytest.raises(sn.ShapeError, match=message) as caught:
        build(x)
    assert "length 0" in str(caught.value) and "zero-size" in str(caught.value)
    assert "test_reductions.py, line" in str(caught.value)


def test_a_max_over_a_non_empty_or_unknown_axis_still_builds(backend):
    """Only a reduced axis fixed at 0 is refused: a max along the other axis of an empty
    array is NumPy's empty result, and a named or unknown length is left to run time."""
    a = np.zeros((0, 3))
    check(run_on(lambda x: sn.max(x, axis=1), a, backend=backend), np.zeros(0))
    check(run_on(lambda x: sn.argmin(x, axis=1), a, backend=backend), np.zeros(0, np.int64))
    check(run_on(lambda x: sn.min(x, axis=()), a, backend=backend), a)
    y = sn.tensor("y", shape=("n", None), dtype="float64")
    assert sn.max(y, axis=1).type.shape == ("n",) and sn.argmax(y).type.shape == ()


def test_reduction_static_shapes_keep_named_dims():
    x = sn.tensor("x", shape=("batch", None, 5))
    assert sn.var(x, axis=1).type.shape == ("batch", 5)
    assert sn.prod(x, axis=-1, keepdims=True).type.shape == ("batch", None, 1)
    assert sn.logsumexp(x, axis=(0, 2)).type.shape == (None,)
    assert sn.any(x).type.shape == () and sn.any(x).dtype == np.bool_
    assert sn.cumsum(x, axis=1).type.shape == ("batch", None, 5)
    assert sn.cumsum(x).type.shape == (sn.flatten(x).type.shape[0],)


def test_logsumexp_is_stable(backend):
    a = np.array([[1000.0, 1000.0], [-1000.0, -1000.0], [-np.inf, -np.inf], [np.inf, 0.0]])
    got = run_on(lambda x: sn.logsumexp(x, axis=1), a, backend=backend)
    want = np.array([1000 + np.log(2), -1000 + np.log(2), -np.inf, np.inf])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    f32 = np.array([88.0, 89.0, 90.0], dtype="float32")
    check(run_on(sn.logsumexp, f32, backend=backend), scipy.special.logsumexp(f32))


@pytest.mark.parametrize("op,ref", [(sn.cumsum, np.cumsum), (sn.cumprod, np.cumprod)])
@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("dtype", ["float64", "int8", "bool"])
def test_cumulative_ops_match_numpy(op, ref, axis, dtype, rng, backend):
    a = random_array(rng, (3, 4), dtype)
    check(run_on(lambda x: op(x, axis=axis), a, backend=backend), ref(a, axis=axis))
    empty = np.zeros((0, 2), dtype)
    check(run_on(lambda x: op(x, axis=axis), empty, backend=backend), ref(empty, axis=axis))


def test_cumulative_of_0d_flattens(backend):
    a = np.array(2.5)
    check(run_on(sn.cumsum, a, backend=backend), np.cumsum(a))
    with pytest.raises(sn.ShapeError, match="cumprod: axis 0 is out of range"):
        sn.cumprod(sn.scalar("s"), axis=0)
    # a 0-d value has no axes: the message said "which has 0 dims (valid: 0..-1)"
    with pytest.raises(sn.ShapeError) as info:
        sn.sum(sn.scalar("s"), axis=0)
    assert "sum: axis 0 is out of range for 's' (float64()), which is 0-d: it has no axes " in str(
        info.value
    )
    assert "(use axis=None)" in str(info.value) and "valid" not in str(info.value)
    with pytest.raises(sn.ShapeTypeError, match="cumsum: axis is one int or None"):
        sn.cumsum(sn.matrix("m"), axis=(0, 1))


# name -> (symnb's call, NumPy's) with an axis NumPy reads through __index__
INDEX_AXES = {
    "sum": (lambda x, ax: sn.sum(x, axis=ax), lambda a, ax: np.sum(a, axis=ax)),
    "mean tuple": (
        lambda x, ax: sn.mean(x, axis=(ax, np.int8(0))),
        lambda a, ax: np.mean(a, axis=(ax, np.int8(0))),
    ),
    "max": (lambda x, ax: sn.max(x, ax), lambda a, ax: np.max(a, ax)),
    "var method": (lambda x, ax: x.var(ax, ddof=1), lambda a, ax: a.var(ax, ddof=1)),
    "np.std": (lambda x, ax: np.std(x, ax), lambda a, ax: np.std(a, ax)),
    "any": (lambda x, ax: sn.any(x > 0, ax), lambda a, ax: np.any(a > 0, ax)),
    "logsumexp": (
        lambda x, ax: sn.logsumexp(x, ax),
        lambda a, ax: scipy.special.logsumexp(a, int(ax)),
    ),
    "argmax": (lambda x, ax: sn.argmax(x, ax), lambda a, ax: np.argmax(a, ax)),
    "cumsum": (lambda x, ax: sn.cumsum(x, ax), lambda a, ax: np.cumsum(a, ax)),
    "sort": (lambda x, ax: sn.sort(x, ax), lambda a, ax: np.sort(a, ax)),
    "flip": (lambda x, ax: sn.flip(x, ax), lambda a, ax: np.flip(a, ax)),
    "concatenate": (
        lambda x, ax: sn.concatenate([x, x], ax),
        lambda a, ax: np.concatenate([a, a], ax),
    ),
    "stack": (lambda x, ax: sn.stack([x, x], ax), lambda a, ax: np.stack([a, a], ax)),
    "swapaxes": (lambda x, ax: sn.swapaxes(x, ax, 0), lambda a, ax: np.swapaxes(a, ax, 0)),
}


@pytest.mark.parametrize("case", list(INDEX_AXES))
def test_an_axis_numpy_reads_through_index_is_taken(case, backend):
    """NumPy takes any integer axis through ``__index__``: a 0-d int array (``np.array(1)``,
    as ``a.ndim - 1`` computed with NumPy gives one) was a ShapeTypeError "axis is an int, a
    tuple of ints or None, not array(1)" in every reducer and axis function."""
    build, reference = INDEX_AXES[case]
    a = np.linspace(-2.0, 3.0, 12).reshape(3, 4)
    x = sn.tensor("x", shape=(None, 4))
    axes = [np.array(1), np.array(-1, np.int8), np.int64(1)]
    got = sn.function([x], [build(x, ax) for ax in axes], backend=backend)(a)
    for value, ax in zip(got, axes):
        check(value, reference(a, ax))


def test_an_axis_that_is_no_integer_is_still_refused():
    x = sn.tensor("x", shape=(None, 4))
    for axis in [np.array(1.0), np.array(True), np.array([1]), True]:
        with pytest.raises(sn.ShapeTypeError, match=r"sum: axis is an int, a tuple of ints"):
            sn.sum(x, axis=axis)
    with pytest.raises(sn.ShapeTypeError, match=r"sort: axis is one int or None, not array\(1\.\)"):
        sn.sort(x, np.array(1.0))


def test_var_and_std_keep_a_float_ddof(backend):
    """NumPy divides by N - ddof for any real ddof; it was truncated to an int (0.5 -> 0)."""
    a = np.array([4.0, 5.0, 7.0])
    check(run_on(lambda x: sn.var(x, ddof=0.5), a, backend=backend), np.var(a, ddof=0.5))
    check(run_on(lambda x: x.std(ddof=1.5), a, backend=backend), np.std(a, ddof=1.5))
    check(run_on(lambda x: x.var(ddof=np.float32(2.0)), a, backend=backend), np.var(a, ddof=2))
    # the gradient divides by N - ddof too: d var / dx = 2 (x - mean) / (N - ddof)
    x = sn.vector("x", dtype="float32")
    g = sn.function([x], sn.grad(sn.var(x, ddof=0.5), x), backend=backend)(a.astype("float32"))
    check(g, (2 * (a - a.mean()) / 2.5).astype("float32"))


@pytest.mark.parametrize("ddof", [True, "1", None, 1j, np.array([1])])
def test_var_refuses_a_ddof_that_is_not_a_real_number(ddof):
    with pytest.raises(TypeError, match=r"var: ddof must be a real number, not") as info:
        sn.var(sn.vector("x"), ddof=ddof)
    assert "test_reductions.py" in str(info.value)


def test_std_refuses_a_non_finite_ddof():
    with pytest.raises(ValueError, match=r"std: ddof must be finite, not nan"):
        sn.std(sn.vector("x"), ddof=float("nan"))


def test_method_sugar_for_reductions(rng, backend):
    a = random_array(rng, (3, 4), "float64")
    check(run_on(lambda x: x.prod(axis=0), a, backend=backend), a.prod(axis=0))
    check(run_on(lambda x: x.var(ddof=1), a, backend=backend), a.var(ddof=1))
    check(
        run_on(lambda x: x.std(axis=-1, keepdims=True), a, backend=backend),
        a.std(-1, keepdims=True),
    )
    check(run_on(lambda x: (x > 1).all(axis=1), a, backend=backend), (a > 1).all(axis=1))
    check(run_on(lambda x: (x > 1).any(), a, backend=backend), (a > 1).any())
    check(run_on(lambda x: x.argmax(axis=1), a, backend=backend), a.argmax(axis=1))
    check(run_on(lambda x: x.argmin(), a, backend=backend), np.int64(a.argmin()))
    check(run_on(lambda x: x.cumsum(axis=0), a, backend=backend), a.cumsum(axis=0))
    check(run_on(lambda x: x.cumprod(), a, backend=backend), a.cumprod())


DTYPED = ["sum", "mean", "prod", "cumsum", "cumprod"]
TARGETS = ["bool", "int8", "uint8", "int64", "float32", "float64"]


@pytest.mark.parametrize("name", DTYPED)
@pytest.mark.parametrize("source", ["bool", "int8", "float32"])
def test_dtype_argument_is_numpys(name, source, rng, backend):
    """``dtype=`` on the function, the method and NumPy's function: the elements converted
    to it first and the result in it, as NumPy does (int8 sums wrap in int8, floats summed
    as ints are truncated first, an integer mean is truncated)."""
    a = random_array(rng, (3, 5), source)
    if source != "bool":
        a = (a * 37 - 60).astype(source)  # past int8 and uint8 when summed, some negatives
    if source.startswith("float"):
        a = a + np.asarray(0.6, source)  # fractions that an integer dtype truncates
    x = sn.tensor("x", shape=a.shape, dtype=source)
    builds = [
        lambda dtype: getattr(sn, name)(x, axis=1, dtype=dtype),
        lambda dtype: getattr(x, name)(axis=1, dtype=dtype),
        lambda dtype: getattr(np, name)(x, axis=1, dtype=dtype),
    ]
    outputs = [build(dtype) for dtype in TARGETS for build in builds]
    got = sn.function([x], outputs, backend=backend)(a)
    with np.errstate(all="ignore"):
        wants = [getattr(np, name)(a, axis=1, dtype=dtype) for dtype in TARGETS]
    for i, (out, value) in enumerate(zip(outputs, got)):
        want = wants[i // len(builds)]
        assert out.type.dtype == want.dtype, (out, want.dtype)
        if want.dtype.kind in "biu":
            np.testing.assert_array_equal(value, want, err_msg=str(out))
        else:
            check(value, want, rtol=1e-5 if name.endswith("prod") else None)
    whole = getattr(x, name)(dtype="float32")  # axis=None: all of it (cumsum: flattened)
    check(sn.function([x], whole, backend=backend)(a), getattr(a, name)(dtype="float32"))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_cumulative_ops_take_numpys_positional_dtype(name, backend):
    """np.cumsum(a, axis, dtype, out): ``sn.cumsum(x, 1, np.float32)`` passed the dtype as
    the third positional argument NumPy takes (it was a TypeError naming an inner
    function); ``out`` is NumPy's fourth, refused naming the op."""
    a = np.arange(12, dtype=np.int8).reshape(3, 4)
    x = sn.tensor("x", shape=(None, None), dtype="int8")
    outputs = [getattr(sn, name)(x, 1, np.float32), getattr(sn, name)(x, None, "int16")]
    got = sn.function([x], outputs, backend=backend)(a)
    for value, want in zip(
        got, [getattr(np, name)(a, 1, np.float32), getattr(np, name)(a, None, "int16")]
    ):
        assert value.dtype == want.dtype
        np.testing.assert_array_equal(value, want)
    with pytest.raises(ArgumentError, match=rf"{name}\(\.\.\., out=ndarray\) of 'x'"):
        getattr(sn, name)(x, 1, None, np.empty((3, 4)))


def test_mean_with_float16_as_its_dtype_sums_in_float16_as_numpy_does(rng, backend):
    """NumPy sums in float16 where float16 is the dtype given (float32 where it is only the
    elements'): 40000 twos overflow to inf; the mean was 2, and 200 for uint8 rows."""
    cases = [
        (np.full(40000, 2, np.float16), None),
        (rng.integers(180, 220, size=(3, 400)).astype(np.uint8), 1),
        (rng.standard_normal((500, 3)).astype(np.float32) * 10, 0),
    ]
    for a, axis in cases:
        x = sn.tensor("x", shape=a.shape, dtype=a.dtype)
        got = sn.function([x], sn.mean(x, axis=axis, dtype="float16"), backend=backend)(a)
        want = np.mean(a, axis=axis, dtype=np.float16)
        assert got.dtype == np.float16
        np.testing.assert_array_equal(np.asarray(got).view(np.uint16), want.view(np.uint16))


def test_dtype_argument_needs_a_dtype_symnb_computes():
    x = sn.matrix("x")
    with pytest.raises(sn.DTypeError, match=r"mean: dtype='float128' for 'x' .* float128"):
        x.mean(dtype="float128")
    with pytest.raises(
        sn.DTypeError, match=r"cumsum: dtype='nope' for 'x' .*'nope' is not a dtype"
    ):
        sn.cumsum(x, dtype="nope")
    assert x.sum(keepdims=True, dtype=None).type.dtype == "float64"


MOMENT_TARGETS = ["int8", "int16", "int32", "int64", "uint8", "uint64", "bool"]


@pytest.mark.parametrize("source", ["int8", "int16", "bool", "float32"])
def test_var_and_std_with_an_integer_dtype_take_numpys_steps(source, rng, backend):
    """NumPy computes var/std with an integer dtype in that dtype (numpy/_core/_methods.py
    ``_var``): the mean truncated, the squares wrapping, the quotient truncated. symnb took
    the exact float64 variance and truncated it only at the end: var([0, 2, 3],
    dtype=int64) was 1, NumPy's 2 (mean 1, (1 + 1 + 4) // 3)."""
    x = sn.vector("x", dtype="int8")
    got = sn.function([x], [sn.var(x, dtype="int64"), sn.std(x, dtype="int64")], backend=backend)
    data = np.array([0, 2, 3], np.int8)
    assert [(v.dtype, int(v)) for v in got(data)] == [(np.int64, 2), (np.int64, 1)]
    assert np.var(data, dtype=np.int64) == 2
    a = random_array(rng, (4, 5), source)
    if source != "bool":  # int8 squares and sums wrap; floats with fractions, in int8's range
        a = (a * 9 - 4).astype(source) if source == "float32" else (a * 37 - 60).astype(source)
    if source == "float32":
        targets = [t for t in MOMENT_TARGETS if not t.startswith("u")]  # no negatives there
    else:
        targets = MOMENT_TARGETS
    x = sn.tensor("x", shape=a.shape, dtype=source)
    cases = [
        (name, dtype, axis, ddof)
        for name in ("var", "std")
        for dtype in targets
        for axis in (None, 0, 1)
        for ddof in (0, 1)
        if (name, dtype) != ("std", "bool") and not (name == "std" and axis is not None)
        if (source, dtype) != ("bool", "bool")
    ]
    outs = [getattr(sn, n)(x, axis=ax, dtype=d, ddof=dd) for n, d, ax, dd in cases]
    outs.append(x.var(1, "int16", None, 1))  # the method, NumPy's positional order
    cases.append(("var", "int16", 1, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = sn.function([x], outs, backend=backend)(a)
        wants = [getattr(np, n)(a, axis=ax, dtype=d, ddof=dd) for n, d, ax, dd in cases]
    for case, value, want in zip(cases, values, wants):
        assert np.asarray(value).dtype == np.asarray(want).dtype, case
        np.testing.assert_array_equal(value, want, err_msg=str(case))


def test_var_and_std_refuse_what_numpy_refuses_with_an_integer_dtype():
    """NumPy raises for a bool x with dtype bool (boolean subtract) and for std with an
    integer dtype along an axis (sqrt's floats cannot be written into the int array); symnb
    returned a value silently (var of [True, False] with dtype bool was True). A complex x with
    a real dtype, where NumPy drops the imaginary parts from the mean only, is refused too."""
    b = sn.vector("b", dtype="bool")
    with pytest.raises(
        sn.DTypeError, match=r"var: dtype=bool for 'b' \(bool\(\?,\)\): NumPy refuses it"
    ) as info:
        sn.var(b, dtype="bool")
    assert "test_reductions.py" in str(info.value)
    with pytest.raises(sn.DTypeError, match=r"std: dtype=bool for 'b'"):
        b.std(dtype=bool)
    with pytest.raises(TypeError):
        np.var(np.array([True, False]), dtype=bool)
    m = sn.matrix("m", dtype="int16")
    with pytest.raises(
        sn.DTypeError,
        match=r"std: dtype=int64 for 'm' \(int16\(\?, \?\)\), axis=1, keepdims=False: NumPy "
        r"refuses it",
    ):
        sn.std(m, axis=1, dtype="int64")
    with pytest.raises(sn.DTypeError, match=r"keepdims=True: NumPy refuses it"):
        sn.std(m, dtype="int32", keepdims=True)
    with pytest.raises(TypeError, match="Cannot cast ufunc 'sqrt' output"):
        np.std(np.ones((2, 3), np.int16), axis=1, dtype=np.int64)
    assert sn.std(m, axis=(0, 1), dtype="int64").type.shape == ()  # one number: truncated
    assert sn.var(m, axis=1, dtype="int64").type.dtype == "int64"  # var along an axis is fine
    z = sn.vector("z", dtype="complex128")
    for dtype in ("float64", "int64"):
        with pytest.raises(sn.DTypeError, match=rf"var: dtype={dtype} for 'z' \(complex128"):
            sn.var(z, dtype=dtype)
    assert sn.var(z, dtype="complex128").type.dtype == "complex128"


def test_var_and_std_with_a_narrower_float_dtype_take_numpys_steps(backend):
    """With a float or complex dtype that x's dtype does not promote to, NumPy sums the mean
    in the dtype but takes ``x - mean`` in the promotion of both (float32 - float16: float32)
    and converts only the squares to the dtype. symnb converted the elements first, rounding
    every deviation: float32 [1000.1 .. 1000.4] with dtype float16 gave var 0.125 (NumPy
    0.075), and uint32 [4e9, 1, 2] with dtype float16 NaN (inf - inf; NumPy inf)."""
    cases = [
        (np.array([1000.1, 1000.2, 1000.3, 1000.4], np.float32), "float16"),
        (1e8 + np.arange(6.0), "float32"),
        (np.array([3001, 3003, 3005, 3007, 2999], np.int16), "float16"),
        (np.array([4000000000, 1, 2], np.uint32), "float16"),
        (np.array([1e8 + 1j, 1e8 + 3 - 2j, 1e8 - 1j]), "complex64"),
    ]
    for a, dtype in cases:
        x = sn.tensor("x", shape=a.shape, dtype=a.dtype)
        outs = [sn.var(x, dtype=dtype), sn.std(x, dtype=dtype, ddof=1)]
        outs.append(sn.std(sn.stack([x, x]), axis=1, dtype=dtype))  # an axis: fine for floats
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = sn.function([x], outs, backend=backend)(a)
            wants = [np.var(a, dtype=dtype), np.std(a, dtype=dtype, ddof=1)]
            wants.append(np.std(np.stack([a, a]), axis=1, dtype=dtype))
        for value, want in zip(got, wants):
            assert np.asarray(value).dtype == np.asarray(want).dtype, (a.dtype, dtype)
            rtol = 2e-3 if dtype == "float16" else 1e-5  # float16 accumulation order
            np.testing.assert_allclose(value, want, rtol=rtol, err_msg=f"{a.dtype} {dtype}")
    x = sn.vector("x", dtype="float32")
    y = sn.function([x], sn.var(x, dtype="float16"), backend=backend)(
        np.array([1000.1, 1000.2, 1000.3, 1000.4], np.float32)
    )
    assert abs(float(y) - 0.075) < 1e-3  # not 0.125


# -- gradients ---------------------------------------------------------------------------
def check_grad(fn, inputs):
    """sn.check_grad on the NumPy reference backend (see tests.helpers.reference_backend)."""
    with reference_backend():
        sn.check_grad(fn, inputs)


GRADS = {
    "prod": lambda x: sn.prod(x, axis=1),
    "prod_all": sn.prod,
    "prod_tuple_keepdims": lambda x: sn.prod(x, axis=(0, 2), keepdims=True),
    "var": lambda x: sn.var(x, axis=(0, -1)),
    "var_ddof1": lambda x: sn.var(x, axis=1, ddof=1),
    "std": lambda x: sn.std(x, axis=0, keepdims=True),
    "std_all": sn.std,
    "var_ddof_float": lambda x: sn.var(x, axis=(0, 2), ddof=1.5),
    "std_ddof_float": lambda x: sn.std(x, axis=-1, ddof=0.25),
    "logsumexp": lambda x: sn.logsumexp(x, axis=-1),
    "logsumexp_all": sn.logsumexp,
    "cumsum": lambda x: sn.cumsum(x, axis=1),
    "cumsum_flat": sn.cumsum,
    "cumprod": lambda x: sn.cumprod(x, axis=-1),
    "cumprod_flat": sn.cumprod,
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_reduction_gradients(name, rng):
    check_grad(GRADS[name], [rng.uniform(0.5, 1.5, size=(2, 3, 2))])


@pytest.mark.parametrize(
    "name", ["prod", "prod_all", "prod_tuple_keepdims", "cumprod", "cumprod_flat"]
)
def test_product_gradients_are_exact_with_zeros(name, rng):
    a = rng.uniform(0.5, 1.5, size=(2, 3, 2))
    a[0, 1, 0] = 0.0  # one zero in a slice
    a[1, 0, :] = 0.0  # two zeros in a slice
    check_grad(GRADS[name], [a])


@pytest.mark.parametrize(
    "name", ["prod", "prod_all", "prod_tuple_keepdims", "cumprod", "cumprod_flat"]
)
def test_product_second_derivatives_are_exact_with_zeros(name, rng):
    """The gradient's own gradient (a Hessian-vector product) at one, two and three zeros
    in a slice: the terms that are 0 only because of another zero must still vary with it."""
    a = rng.uniform(0.5, 1.5, size=(2, 3, 2))
    a[0, 1, 0] = 0.0  # one zero in a slice
    a[1, 0, :] = 0.0  # two zeros in a slice
    a[1, :, 1] = 0.0  # three along axis 1
    weights = sn.constant(rng.uniform(0.5, 1.5, size=np.shape(GRADS[name](a).eval())))
    check_grad(lambda x: sn.grad(sn.sum(GRADS[name](x) * weights), x), [a])


def test_reductions_without_gradients_are_marked():
    x = sn.matrix("x")
    for out in (sn.all(x), sn.any(x), sn.argmin(x, axis=0), sn.argmax(x)):
        assert out.owner.op.differentiable is False


@pytest.mark.parametrize("axis", [None, 1])
def test_a_float32_mean_overflows_as_its_float32_sum_does(axis, backend):
    """NumPy's float32 mean is the float32 sum divided: inf where the sum passes FLT_MAX,
    on every backend (opencl divided its float64 accumulator first and gave 3e38)."""
    a = np.full((2, 2), 3e38, np.float32)
    with np.errstate(over="ignore"):
        want = np.mean(a, axis=axis)
    assert np.isinf(want).all()
    with np.errstate(over="ignore"):  # backend "py" runs NumPy's reference, which warns
        check(run_on(lambda x: sn.mean(x, axis=axis), a, backend=backend), want)


def _lib(v):
    """NumPy for an array, symnb for a variable: the same call in both."""
    return np if isinstance(v, np.ndarray) else sn


A8 = np.array([[100, 100, 100, 7], [-100, -100, -100, 3]], dtype="int8")


@pytest.mark.parametrize(
    "call",
    [
        lambda v: v.sum(1, "int8"),
        lambda v: v.mean(1, "int8"),
        lambda v: v.prod(1, "int8"),
        lambda v: v.var(0, "float32", None, 1),
        lambda v: v.std(1, "float32", None, 0, True),
        lambda v: v.max(1, None, True),
        lambda v: v.argmin(0, None, keepdims=True),
        lambda v: v.any(1, keepdims=True),
        lambda v: _lib(v).sum(v, 1, np.float32),
        lambda v: _lib(v).mean(v, 0, None, None, True),
        lambda v: _lib(v).var(v, 1, None, None, 1, True),
        lambda v: _lib(v).max(v, 0, None, True),
    ],
)
def test_methods_and_functions_take_numpys_positional_order(call):
    """``x.sum(1, "int8")`` is NumPy's dtype, not keepdims=True (an int64 (2, 1) result)."""
    x = sn.tensor("x", shape=(2, 4), dtype="int8")
    got = sn.function([x], call(x), backend="py")(A8)
    expected = call(A8)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-6)


@pytest.mark.parametrize("name", ["sum", "max", "argmax", "var"])
def test_keepdims_that_is_not_a_bool_is_an_error(name):
    x = sn.tensor("x", shape=(2, 4), dtype="int8")
    with pytest.raises(ArgumentError) as info:
        getattr(sn, name)(x, axis=0, keepdims="no")
    message = str(info.value)
    assert f"{name}: keepdims is True or False, not 'no'" in message
    assert "'x' (int8(2, 4))" in message and "dtype=..." in message
    assert "test_reductions.py, line" in message


def test_out_is_refused_by_name():
    x = sn.tensor("x", shape=(2, 4), dtype="int8")
    with pytest.raises(ArgumentError, match=r"max\(\.\.\., out=ndarray\) of 'x'"):
        x.max(0, np.empty(4))
