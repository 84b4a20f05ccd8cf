"""Generated kernels have defined behaviour in every dialect, and their special values are the
reference's (issue #35): integer arithmetic wraps through unsigned types (PoCL folded
``x + 1 > x`` to true), float -> integer conversions go through defined helpers, and
``log_softmax``, ``maximum``/``minimum`` of signed zeros, ``x ** 0.5``, ``x // nan`` and
``gammaln`` of subnormals agree with NumPy/SciPy on every backend."""

import math
import warnings

import numpy as np
import pytest
import scipy.special

import symnb as sn
from symnb.backends.c.dialect import CDialect
from tests.helpers import check

SIGNED = ["int8", "int16", "int32", "int64"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]


def quiet(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args)


def run(build, *arrays, backend, optimize="fast"):
    xs = [sn.tensor(f"x{i}", shape=a.shape, dtype=a.dtype) for i, a in enumerate(arrays)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = sn.function(xs, build(*xs), backend=backend, optimize=optimize)
    return quiet(f, *arrays)


# -- integers wrap as NumPy's do ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", SIGNED + UNSIGNED)
def test_integer_arithmetic_wraps_at_the_extremes(dtype, backend):
    info = np.iinfo(dtype)
    a = np.array([info.max, info.min, info.max - 1, 0, 1, -1 if info.min else 7], dtype)
    one = np.array(1, dtype)
    outs = [
        (lambda x: (x + 1) > x, lambda v: (v + one) > v),
        (lambda x: (x - 1) < x, lambda v: (v - one) < v),
        (lambda x: x * x, lambda v: v * v),
        (lambda x: -x, lambda v: -v),
        (lambda x: x * 3 + x, lambda v: v * np.array(3, dtype) + v),
    ]
    for build, reference in outs:
        check(run(build, a, backend=backend), quiet(reference, a))


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint64"])
def test_integer_sums_and_products_wrap(dtype, backend):
    info = np.iinfo(dtype)
    a = np.array([[info.max, info.max, 3], [info.min, -1 if info.min else 2, 5]], dtype)
    for name in ("sum", "prod"):
        got = run(getattr(sn, name), a, backend=backend)
        check(got, quiet(getattr(np, name), a))
        got = run(getattr(sn, name), a.T.copy(), backend=backend)  # one row per output
        check(got, quiet(getattr(np, name), a.T.copy()))


def test_kernels_spell_signed_arithmetic_unsigned():
    x = sn.vector("x", dtype="int32")
    f = sn.function([x], (x + 1) * x - x, backend="c")
    source = "\n".join(k.source for k in f.kernels)
    assert "(uint32_t)" in source
    assert not any(f"{op} v" in source for op in ("+", "*")), source  # every one wrapped


# -- float -> integer conversions ----------------------------------------------------------------
FLOATS = np.array(
    [
        300.7,
        -300.2,
        1e6,
        -129.5,
        127.9,
        2.5e9,
        -2.5e9,
        1e12,
        -1e12,
        1e19,
        2e19,
        -1e19,
        3e38,
        np.nan,
        np.inf,
        -np.inf,
        -0.5,
        0.0,
    ]
)


def x86_conversion(values: np.ndarray, dtype: str) -> np.ndarray:
    """What NumPy 2.4's loops give on x86-64: NaN and out-of-range values give the minimum of
    int32 (int64); 8- and 16-bit targets keep the low bits of the int32 conversion, uint32 of
    the int64 conversion; NaN -> uint64 is 2**63."""
    target = np.dtype(dtype)

    def convert(v: float, bits: int) -> int:
        limit = 2.0 ** (bits - 1)
        return int(v) if -limit < v < limit else -(2 ** (bits - 1))

    out = []
    for v in values.tolist():
        if dtype == "uint64" and v != v:
            out.append(2**63)
        elif dtype == "uint64" and v >= 0:
            out.append(int(v) if v < 2.0**64 else 0)
        elif target.itemsize == 8 or dtype == "uint32":
            out.append(convert(v, 64) % 2 ** (8 * target.itemsize))
        else:
            out.append(convert(v, 32) % 2 ** (8 * target.itemsize))
    return np.array(out, dtype=np.uint64).astype(dtype)


@pytest.mark.parametrize("source", ["float64", "float32"])
@pytest.mark.parametrize("target", SIGNED + UNSIGNED)
def test_float_to_integer_conversions_are_defined(source, target, backend):
    values = quiet(FLOATS.astype, source)
    want = x86_conversion(values.astype("float64"), target)
    inside = np.abs(values.astype("float64")) < 2.0**31  # NumPy defines these: they agree
    np.testing.assert_array_equal(quiet(values.astype, target)[inside], want[inside])
    if backend == "py":
        return  # NumPy's own loops differ out of range (docs/reliability.md)
    check(run(lambda x: sn.cast(x, target), values, backend=backend), want)
    fused = run(lambda x: sn.cast(x * 1.0 + 0.0, target), values, backend=backend)
    check(fused, want)


@pytest.mark.parametrize("target", ["int8", "int16", "uint8"])
def test_a_clip_before_a_narrowing_conversion_is_kept(target, backend):
    info = np.iinfo(target)
    values = FLOATS[~np.isnan(FLOATS)]
    got = run(lambda x: sn.cast(sn.clip(x, info.min, info.max), target), values, backend=backend)
    check(got, np.clip(values, info.min, info.max).astype(target))


def test_the_conversion_helpers_compile_in_every_dialect():
    source = CDialect()
    source.convert("v0", "int8", "float64")
    assert "sn_to_i32_float64" in source.helpers


# -- special values ----------------------------------------------------------------------------
def test_log_softmax_of_an_infinite_row_is_scipys(backend):
    rows = np.array([[1.0, np.inf], [-np.inf, -np.inf], [np.inf, np.inf], [1.0, -np.inf]])
    got = run(lambda x: sn.log_softmax(x, axis=-1), rows, backend=backend)
    check(got, quiet(scipy.special.log_softmax, rows, -1))
    assert got[0, 0] == -np.inf and np.isnan(got[0, 1])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_maximum_and_minimum_of_signed_zeros_are_numpys(dtype, backend):
    a = np.array([0.0, -0.0, 0.0, -0.0, np.nan, 1.0], dtype)
    b = np.array([-0.0, 0.0, 0.0, -0.0, 1.0, np.nan], dtype)
    for op in ("maximum", "minimum"):
        got = run(getattr(sn, op), a, b, backend=backend)
        want = getattr(np, op)(a, b)
        check(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want)), (op, got, want)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_square_root_power_of_special_values(dtype, backend):
    a = np.array([-np.inf, -0.0, -8.0, np.inf, 4.0, np.nan], dtype)
    got = run(lambda x: x**0.5, a, backend=backend)
    want = quiet(np.power, a, 0.5)
    check(got, want)
    assert np.array_equal(np.signbit(got[~np.isnan(want)]), np.signbit(want[~np.isnan(want)]))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_floor_division_by_a_nan_constant(dtype, backend):
    a = np.array([1.0, -2.0, 0.0, np.inf, np.nan], dtype)
    for build, reference in (
        (lambda x: x // np.nan, lambda v: v // np.array(np.nan, dtype)),
        (lambda x: np.nan // (x + 1), lambda v: np.array(np.nan, dtype) // (v + 1)),
        (lambda x: x % np.nan, lambda v: v % np.array(np.nan, dtype)),
    ):
        check(run(build, a, backend=backend), quiet(reference, a))


def test_gammaln_of_subnormals_agrees_between_backends(backend):
    a = np.array([5e-324, -5e-324, 1e-310, 5.562684646268003e-309, 2e-308, 0.0, 1e-45, 3.5])
    got = run(sn.gammaln, a, backend=backend)
    want = np.where(np.abs(a) < 1e-300, -np.log(np.abs(a)), quiet(scipy.special.gammaln, a))
    want[a == 0] = np.inf
    check(got, want)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gamma_keeps_its_sign_where_it_underflows(dtype, backend):
    """gamma(x) at a negative x in (-n - 1, -n) has the sign (-1)**(n + 1), its underflowed
    zero too: PoCL's tgamma gave +0.0 (so 1/gamma(x) was +inf) at -200.5, and SciPy's
    reference -0.0 for every x below -2**31, whatever the interval."""
    values = [-200.5, -201.5, -822.25, -823.25, -40.5, -41.5, -0.5, -1.5, -2.5, 3.5]
    if dtype == "float64":
        values += [-2147483649.5, -2147483650.5, -12680160067701.582, -1e15 - 0.5]
    a = np.array(values, dtype)
    negative = np.array([v < 0 and math.floor(v) % 2 == 1 for v in values])
    got = run(sn.gamma, a, backend=backend)
    assert got.dtype == a.dtype
    assert np.array_equal(np.signbit(got), negative), (a[np.signbit(got) != negative], got)
    check(got[a > -100], quiet(scipy.special.gamma, a[a > -100]))
    assert (got[a < -1000] == 0).all()
    flipped = run(lambda x: sn.reciprocal(sn.gamma(x)), a[a < -100], backend=backend)
    np.testing.assert_array_equal(flipped, np.where(negative[a < -100], -np.inf, np.inf))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_zero_and_minus_zero_constants_stay_apart_in_one_kernel(dtype, backend):
    """``-0.0 == 0.0`` in Python, so the kernel builder kept one of the two literals: the
    angle of (-0.0, -1) next to a relu's 0 was +pi (NumPy's -pi), ``1 / (x * -0.0)`` next
    to ``x * 0.0`` +inf."""
    x = np.array([-1.0, -1.0, 2.0], dtype)
    y = np.array([-5.0, 5.0, -1.0], dtype)
    zero, minus = np.array(0.0, dtype), np.array(-0.0, dtype)

    def angle(mod, a, b):
        return mod.maximum(b, zero) + mod.arctan2(mod.where(b > 0, zero, minus), a)

    got = run(lambda a, b: angle(sn, a, b), x, y, backend=backend)
    check(got, quiet(angle, np, x, y))
    assert got[0] < 0  # -pi
    pos = np.array([1.0, 2.0], dtype)
    got = run(lambda a: a * zero + 1 / (a * minus), pos, backend=backend)
    np.testing.assert_array_equal(got, [-np.inf, -np.inf])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_tanh_saturates_to_exactly_one(dtype, backend):
    """float32 tanh is +-1 at the infinities and from |x| > 9.02 on (PoCL's builtin gave
    1 - 2**-24, so a saturated unit's gradient ``1 - y*y`` was 1.2e-7, not 0). Between 9.02
    and 10 NumPy's own float32 tanh is 1 - 2**-24 on some machines (this one's SIMD loop),
    where glibc's and the kernels' are 1: an ulp, which ``check`` allows."""
    a = np.array([-np.inf, -1000.0, -20.0, -10.5, 10.5, 20.0, 1000.0, np.inf, np.nan, -0.0], dtype)
    got = run(sn.tanh, a, backend=backend)
    want = np.tanh(a)
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    xs = sn.vector("x", dtype=dtype)
    grad = sn.function([xs], sn.grad(sn.sum(sn.tanh(xs)), xs), backend=backend)
    saturated = np.array([-np.inf, -1000.0, -20.0, 20.0, 1000.0, np.inf], dtype)
    assert np.all(np.abs(quiet(grad, saturated)) < 1e-15), quiet(grad, saturated)
    middle = np.linspace(-9.9, 9.9, 199).astype(dtype)
    check(run(sn.tanh, middle, backend=backend), np.tanh(middle))
