"""Elementwise math against NumPy/SciPy: values, dtypes, broadcasting, 0-d and empty inputs,
numerical stability at the tails, and gradients against finite differences."""

import itertools
import math

import numpy as np
import pytest
import scipy.special

import symnb as sn
from tests.helpers import check, reference_backend
from tests.helpers import run as run_on


def _softplus_reference(a):
    """log(1 + e**a) in float64, in exp's dtype (an independent spelling of softplus)."""
    return np.log1p(np.exp(np.asarray(a, dtype=np.float64))).astype(np.exp(a).dtype)


# name -> (symbolic op, reference, (low, high) of the inputs drawn)
UNARY = {
    "expm1": (sn.expm1, np.expm1, (-2, 2)),
    "log1p": (sn.log1p, np.log1p, (0, 3)),
    "log2": (sn.log2, np.log2, (1, 4)),
    "log10": (sn.log10, np.log10, (1, 4)),
    "square": (sn.square, np.square, (-3, 3)),
    "reciprocal": (sn.reciprocal, np.reciprocal, (1, 4)),
    "tan": (sn.tan, np.tan, (-1, 1)),
    "arcsin": (sn.arcsin, np.arcsin, (-1, 1)),
    "arccos": (sn.arccos, np.arccos, (-1, 1)),
    "arctan": (sn.arctan, np.arctan, (-3, 3)),
    "sinh": (sn.sinh, np.sinh, (-2, 2)),
    "cosh": (sn.cosh, np.cosh, (-2, 2)),
    "arcsinh": (sn.arcsinh, np.arcsinh, (-3, 3)),
    "erf": (sn.erf, scipy.special.erf, (-2, 2)),
    "erfc": (sn.erfc, scipy.special.erfc, (-2, 2)),
    "erfcx": (sn.erfcx, scipy.special.erfcx, (-3, 8)),
    "erfinv": (sn.erfinv, scipy.special.erfinv, (-0.9, 0.9)),
    "erfcinv": (sn.erfcinv, scipy.special.erfcinv, (0.1, 1.9)),
    "gamma": (sn.gamma, scipy.special.gamma, (1, 4)),
    "gammaln": (sn.gammaln, scipy.special.gammaln, (1, 6)),
    "digamma": (sn.digamma, scipy.special.psi, (1, 4)),
    "softplus": (sn.softplus, _softplus_reference, (-4, 4)),
    "relu": (sn.relu, lambda a: np.where(a > 0, a, 0).astype(np.maximum(a, 0).dtype), (-3, 3)),
    "floor": (sn.floor, np.floor, (-3, 3)),
    "ceil": (sn.ceil, np.ceil, (-3, 3)),
    "trunc": (sn.trunc, np.trunc, (-3, 3)),
    "round": (sn.round, np.round, (-3, 3)),
    "conj": (sn.conj, np.conjugate, (-3, 3)),
    "real": (sn.real, np.real, (-3, 3)),
    "imag": (sn.imag, np.imag, (-3, 3)),
}
BINARY = {
    "arctan2": (sn.arctan2, np.arctan2, (-2, 2)),
    "logaddexp": (sn.logaddexp, np.logaddexp, (-3, 3)),
    "maximum": (sn.maximum, np.maximum, (-3, 3)),
    "minimum": (sn.minimum, np.minimum, (-3, 3)),
}
# (shape, dtype) pairs: every shape and every dtype appears, without their full product
CASES = [
    ((3, 4), "float64"),
    ((3, 4), "float32"),
    ((2, 1, 3), "float16"),
    ((), "float64"),
    ((0,), "int8"),
    ((4,), "int64"),
]
PAIR_CASES = [
    (((3, 4), (4,)), ("float64", "float64")),
    (((2, 1, 3), (4, 1)), ("float32", "int8")),
    (((), (3,)), ("int32", "int64")),
    (((0, 2), (2,)), ("float16", "uint8")),
    (((3, 1), (1, 3)), ("float32", "float64")),
]


def draw(rng, shape, dtype, low, high):
    """Random values in [low, high] (integers inside it for integer dtypes)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        low = max(math.ceil(low), 0) if dtype.kind == "u" else math.ceil(low)
        return rng.integers(low, math.floor(high) + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def tolerance(dtype):
    """Elementwise results may differ from the reference by an ulp or two."""
    return {np.float16: 4e-3, np.float32: 2e-6}.get(np.dtype(dtype).type, 1e-12)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape,dtype", CASES)
def test_unary_math_matches_numpy(name, shape, dtype, rng, backend):
    op, ref, (low, high) = UNARY[name]
    a = draw(rng, shape, dtype, low, high)
    with np.errstate(all="ignore"):
        want = np.asarray(ref(a))
    check(run_on(op, a, backend=backend), want, rtol=tolerance(want.dtype), atol=1e-12)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes,dtypes", PAIR_CASES)
def test_binary_math_matches_numpy_with_broadcasting(name, shapes, dtypes, rng, backend):
    op, ref, (low, high) = BINARY[name]
    a, b = (draw(rng, s, d, low, high) for s, d in zip(shapes, dtypes))
    want = np.asarray(ref(a, b))
    check(run_on(op, a, b, backend=backend), want, rtol=tolerance(want.dtype))


@pytest.mark.parametrize("shapes", [((3, 4), (4,), (3, 1)), ((), (2, 3), ()), ((0, 2), (), (2,))])
@pytest.mark.parametrize(
    "dtypes", [("float64",) * 3, ("float32", "int8", "float64"), ("int64",) * 3]
)
def test_clip_and_where_match_numpy(shapes, dtypes, rng, backend):
    x, lo, hi = (draw(rng, s, d, -3, 3) for s, d in zip(shapes, dtypes))
    lo, hi = np.minimum(lo, -1).astype(lo.dtype), np.maximum(hi, 1).astype(hi.dtype)
    check(run_on(sn.clip, x, lo, hi, backend=backend), np.clip(x, lo, hi))
    cond = x > 0
    check(run_on(sn.where, cond, lo, hi, backend=backend), np.where(cond, lo, hi))
    check(run_on(sn.switch, x, lo, hi, backend=backend), np.where(x, lo, hi))


def test_clip_with_one_bound_and_scalars(rng, backend):
    a = draw(rng, (5,), "float32", -3, 3)
    check(run_on(lambda x: sn.clip(x, None, 1.0), a, backend=backend), np.clip(a, None, 1.0))
    check(run_on(lambda x: sn.clip(x, -1, None), a, backend=backend), np.clip(a, -1, None))
    check(run_on(lambda x: x.clip(-0.5, 0.5), a, backend=backend), a.clip(-0.5, 0.5))
    # both None: x, as NumPy 2's np.clip (a copy of x); it was a ValueError naming no line
    for both_none in (
        lambda x: sn.clip(x, None, None),
        lambda x: np.clip(x, None, None),
        lambda x: x.clip(),
        lambda x: sn.clip(x, min=None, max=None),
    ):
        got = run_on(both_none, a, backend=backend)
        assert got.dtype == np.float32 and got.shape == (5,)
        check(got, np.clip(a, None, None))
    v = sn.tensor("v", shape=(None, 3), dtype="int8")
    assert sn.clip(v, None, None) is v and np.clip(v, None, None) is v


CLIP_OF_A_NUMBER = {
    "int below an int8 bound": (lambda a: np.clip(2, a, None), "int8"),
    "float below a float32 bound": (lambda a: np.clip(2.5, a, None), "float32"),
    "int beyond int8": (lambda a: np.clip(300, a, None), "int8"),
    "float above a float32 bound": (lambda a: np.clip(0.1, None, a), "float32"),
    "both bounds": (lambda a: np.clip(2.5, a, a + 1), "float32"),
    "method of the bound": (lambda a: a.clip(2, None) + np.clip(-7, a, 100), "int8"),
}


@pytest.mark.parametrize("case", list(CLIP_OF_A_NUMBER))
def test_clip_of_a_python_number_makes_it_an_array_as_numpy(case, backend):
    """np.clip(2, x8, None): NumPy makes the clipped number an int64 array (a float a
    float64 one), only the bounds are weak. The number was weak: int8, float32, and
    np.clip(300, x8, None) a DTypeError where NumPy gives [300, 300, 300]."""
    call, dtype = CLIP_OF_A_NUMBER[case]
    values = np.array([1, -3, 5], dtype)
    want = call(values)
    got = run_on(call, values, backend=backend)
    assert got.dtype == want.dtype and got.dtype == (np.int64 if dtype == "int8" else np.float64)
    np.testing.assert_array_equal(got, want)
    x = sn.tensor("x", shape=(3,), dtype=dtype)  # sn.clip as np.clip
    assert sn.clip(2, x, None).dtype == sn.clip(2, None, x).dtype == np.result_type(2, want)


def _scalar_bound_clip(x, lo, hi):
    """np.clip element by element with scalar bounds (its loop that keeps x on a tie)."""
    return np.array([np.clip(np.array([a]), b, c)[0] for a, b, c in zip(x, lo, hi)])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_clip_keeps_x_on_a_tie_with_a_bound(dtype, backend):
    """x equal to a bound is x, signed zero included, with scalar and with array bounds,
    NaN anywhere gives NaN and hi wins when lo > hi (np.clip's loop for scalar bounds). The
    kernels' minimum(maximum(x, lo), hi) gave the bound on a tie (clip(-0.0, 0, 1) was +0.0),
    as np.clip's loop for array bounds does."""
    x = sn.tensor("x", shape=(2,), dtype=dtype)
    xv = np.array([-0.0, 0.0], dtype)
    for lo, hi in ((0.0, 1.0), (-1.0, -0.0), (-0.0, 0.0)):
        got = sn.function([x], sn.clip(x, lo, hi), backend=backend)(xv)
        assert np.signbit(got).tolist() == [True, False], (lo, hi, got)
    values = [-0.0, 0.0, 1.0, -1.0, np.nan]
    xv, lov, hiv = (np.array(v, dtype) for v in zip(*itertools.product(values, repeat=3)))
    v, lo, hi = (sn.tensor(n, shape=(125,), dtype=dtype) for n in ("x", "lo", "hi"))
    got = sn.function([v, lo, hi], sn.clip(v, lo, hi), backend=backend)(xv, lov, hiv)
    want = _scalar_bound_clip(xv, lov, hiv)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "bool"])
def test_float_predicates_match_numpy(dtype, backend):
    values = np.array([0.0, -1.5, np.inf, -np.inf, np.nan, 2.0])
    with np.errstate(invalid="ignore"):
        a = values.astype(dtype) if np.dtype(dtype).kind == "f" else np.arange(6).astype(dtype)
    for op, ref in [(sn.isnan, np.isnan), (sn.isinf, np.isinf), (sn.isfinite, np.isfinite)]:
        check(run_on(op, a, backend=backend), ref(a))


def test_rounding_halves_go_to_even_like_numpy(backend):
    a = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4999, -0.0])
    for op, ref in [(sn.round, np.round), (sn.floor, np.floor), (sn.ceil, np.ceil)]:
        check(run_on(op, a, backend=backend), ref(a))
    check(run_on(sn.trunc, a, backend=backend), np.trunc(a))


def test_maximum_and_minimum_propagate_nan(backend):
    a, b = np.array([np.nan, 1.0, 2.0]), np.array([0.0, np.nan, 1.0])
    check(run_on(sn.maximum, a, b, backend=backend), np.maximum(a, b))
    check(run_on(sn.minimum, a, b, backend=backend), np.minimum(a, b))
    check(run_on(sn.relu, a, backend=backend), np.array([np.nan, 1.0, 2.0]))


def test_softplus_and_logaddexp_do_not_overflow(backend):
    a = np.array([-1000.0, -40.0, 0.0, 40.0, 1000.0])
    out = run_on(sn.softplus, a, backend=backend)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, [0.0, math.exp(-40), math.log(2), 40.0, 1000.0], rtol=1e-12)
    big = np.array([1000.0, -1000.0, 5.0])
    out = run_on(sn.logaddexp, big, big, backend=backend)
    np.testing.assert_allclose(out, big + math.log(2), rtol=1e-12)
    f32 = np.array([80.0, -80.0], dtype="float32")
    check(run_on(sn.softplus, f32, backend=backend), np.array([80.0, 1.8048514e-35], "float32"))


def test_integer_inputs_give_numpy_float_dtypes():
    for dtype, want in [("int8", "float16"), ("int32", "float64"), ("uint8", "float16")]:
        v = sn.vector("v", dtype=dtype)
        assert sn.log1p(v).dtype == np.log1p(np.ones(1, dtype)).dtype == want
        assert sn.softplus(v).dtype == want
    v = sn.vector("v", dtype="int8")
    assert sn.erf(v).dtype == scipy.special.erf(np.ones(1, "int8")).dtype
    assert sn.square(v).dtype == np.int8 and sn.floor(v).dtype == np.floor(np.ones(1, "i1")).dtype


def test_elementwise_errors_name_the_op_and_shapes():
    x, y = sn.tensor("x", shape=(3, 4)), sn.tensor("y", shape=(5,))
    with pytest.raises(sn.ShapeError, match=r"where.*'x' \(float64\(3, 4\)\).*'y'"):
        sn.where(x > 0, x, y)
    with pytest.raises(sn.ShapeError, match="arctan2.*axis -1 is 4"):
        sn.arctan2(x, y)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_erfcx_is_finite_and_accurate_where_exp_and_erfc_fail(dtype, backend):
    """``exp(x^2) erfc(x)`` is 0 * inf past x = 27 (9.4 in float32); erfcx is about
    1 / (x sqrt(pi)) there, and SciPy's on both sides of the kernel's split at 5, out to the
    extremes and the infinities: to 4 ulps in float32 (the kernel computes in float64), 1e-14
    in float64 (below the split exp(x^2) carries the rounding of x^2, up to 25 ulps)."""
    big = np.finfo(dtype).max
    a = np.array(
        [-26, -9, -2.5, -1e-3, 0, 0.5, 4.999, 5, 5.001, 9, 9.5, 27, 30, 1e5, 1e15, big, np.inf],
        dtype,
    )
    a = np.concatenate([a, np.linspace(-8, 40, 997, dtype=dtype)])
    want = scipy.special.erfcx(a)
    got = run_on(sn.erfcx, a, backend=backend)
    assert got.dtype == want.dtype
    rtol = 1e-14 if dtype == "float64" else 4 * np.finfo(dtype).eps
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)
    assert np.isnan(run_on(sn.erfcx, np.array([np.nan], dtype), backend=backend)).all()
    assert run_on(sn.erfcx, np.array([-np.inf], dtype), backend=backend)[0] == np.inf


def test_erfcx_gradient_is_2x_erfcx_minus_2_over_sqrt_pi():
    x = sn.tensor("x", shape=(None,), dtype="float64")
    a = np.array([-3.0, -0.5, 0.0, 1.0, 4.9, 5.1, 30.0, 1e4])
    got = sn.grad(sn.sum(sn.erfcx(x)), x).eval({x: a})
    want = 2 * a * scipy.special.erfcx(a) - 2 / np.sqrt(np.pi)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    sn.check_grad(sn.erfcx, [np.array([-2.0, 0.3, 4.5, 5.5, 12.0])])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_expm1_gradient_is_exp_to_the_last_digits_far_below_zero(dtype, backend):
    """expm1's gradient is exp(x); ``expm1(x) + 1`` cancels for x well below 0."""
    x = sn.tensor("x", shape=(None,), dtype=dtype)
    a = np.array([-80.0, -30.0, -17.0, -3.0, -1e-8, 0.0, 2.5, 40.0], dtype)
    got = sn.function([x], sn.grad(sn.sum(sn.expm1(x)), x), backend=backend)(a)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, np.exp(a), rtol=1e-14 if dtype == "float64" else 1e-6)


def test_isnan_has_no_gradient():
    x = sn.vector("x")
    assert sn.isnan(x).owner.op.differentiable is False
    assert sn.where(x > 0, x, 0.0).owner.op.differentiable is True


# -- gradients (float64, inside each function's domain) -------------------------------------
def check_grad(fn, inputs):
    """sn.check_grad on the NumPy reference backend (see tests.helpers.reference_backend)."""
    with reference_backend():
        sn.check_grad(fn, inputs)


GRAD_UNARY = dict(UNARY)
GRAD_UNARY["arcsin"] = (sn.arcsin, None, (-0.8, 0.8))
GRAD_UNARY["arccos"] = (sn.arccos, None, (-0.8, 0.8))
GRAD_UNARY["relu"] = (sn.relu, None, (0.1, 2))
for _name in ("round", "floor", "ceil", "trunc"):  # zero gradients, away from the jumps
    GRAD_UNARY[_name] = (UNARY[_name][0], None, (0.1, 0.4))


@pytest.mark.parametrize("name", sorted(GRAD_UNARY))
def test_unary_math_gradients(name, rng):
    op, _, (low, high) = GRAD_UNARY[name]
    check_grad(op, [draw(rng, (2, 3), "float64", low, high)])


def test_relu_gradient_on_both_sides(rng):
    a = np.array([-2.0, -0.5, 0.5, 2.0])
    check_grad(sn.relu, [a])


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_math_gradients_with_broadcasting(name, rng):
    op, _, (low, high) = BINARY[name]
    a, b = draw(rng, (3, 4), "float64", low, high), draw(rng, (4,), "float64", low, high)
    a[np.abs(a - b) < 0.05] += 0.2  # maximum/minimum: keep away from ties
    check_grad(op, [a, b])


def test_clip_and_where_gradients(rng):
    x = np.array([[-2.0, -0.3, 0.2, 1.7], [0.9, -1.2, 0.4, 2.5]])
    lo, hi = np.array([-1.0, -0.5, -0.1, -1.0]), np.array([[1.0], [0.5]])
    check_grad(sn.clip, [x, lo, hi])
    check_grad(lambda c, a, b: sn.where(c, a, b), [x > 0, x, draw(rng, (4,), "float64", 0, 1)])


def test_erfcinv_is_scipys_in_its_tails_with_its_gradient(backend):
    """erfc's inverse where erfinv(1 - x) has lost x to the rounding of 1 - x (inf at
    1e-17, 4e-7 off at 1e-12), its ends and outside its domain too; the gradient is
    -sqrt(pi)/2 exp(erfcinv(x)^2)."""
    for dtype in ("float64", "float32"):
        a = np.array([1e-300, 1e-17, 1e-12, 1e-5, 0.5, 1.0, 1.5, 2.0, 0.0, -1.0, 3.0, np.nan])
        a = a.astype(dtype)
        with np.errstate(all="ignore"):
            want = scipy.special.erfcinv(a)
        check(run_on(sn.erfcinv, a, backend=backend), want)
    a = np.array([1e-17, 1e-12, 0.3, 1.0, 1.7])
    x = sn.vector("x")
    got = sn.function([x], sn.grad(sn.sum(sn.erfcinv(x)), x), backend=backend)(a)
    want = -math.sqrt(math.pi) / 2 * np.exp(scipy.special.erfcinv(a) ** 2)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_special_function_gradients_keep_their_second_input_fixed(rng):
    check_grad(lambda a: sn.gammaln(a) + sn.digamma(a), [draw(rng, (4,), "float64", 1, 5)])


def test_digamma_and_polygamma_have_every_derivative(rng):
    """trigamma's gradient is polygamma(2, x), polygamma(n, x)'s polygamma(n + 1, x): the
    Hessian of digamma (NotDifferentiableError before) and further orders, against SciPy."""
    xv = draw(rng, (4,), "float64", 0.5, 5)

    def build(x):
        hess = sn.hessian(sn.sum(sn.digamma(x)), x)
        third = sn.grad(sn.sum(sn.grad(sn.sum(sn.trigamma(x)), x)), x)
        return [hess, third, sn.polygamma(3, x)]

    got = run_on(build, xv)
    x = sn.tensor("x", shape=(4,), dtype="float64")
    np.testing.assert_allclose(got[0], np.diag(scipy.special.polygamma(2, xv)), rtol=1e-12)
    np.testing.assert_allclose(got[1], scipy.special.polygamma(3, xv), rtol=1e-12)
    np.testing.assert_allclose(got[2], scipy.special.polygamma(3, xv), rtol=1e-12)
    check_grad(lambda a: sn.grad(sn.sum(sn.digamma(a)), a), [xv])
    check_grad(lambda a: sn.polygamma(2, a), [xv])
    n = sn.tensor("n", shape=(), dtype="float64")
    with pytest.raises(sn.NotDifferentiableError, match="order n is an integer"):
        sn.grad(sn.sum(sn.polygamma(n, x)), n)


# -- gradient accuracy at the extremes (against closed forms / mpmath) ----------------------
def grad_on(op, backend, *arrays):
    """The gradients of sum(op(*arrays)) with respect to each array, run on ``backend``."""
    xs = [sn.tensor(f"x{i}", shape=(None,), dtype=a.dtype) for i, a in enumerate(arrays)]
    grads = sn.grad(sn.sum(op(*xs)), xs)
    return sn.function(xs, grads, backend=backend)(*arrays)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_erfcx_gradient_does_not_cancel_for_large_x(dtype, backend):
    """2 x erfcx(x) - 2/sqrt(pi) cancelled: 0 in float64 from x = 1e8, 27% off in float32 at
    1e3; the true value is about -1 / (sqrt(pi) x^2)."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 120
    a = np.array([-2.0, 0.5, 2.9, 3.1, 4.9, 5.1, 30.0, 1e3, 1e4, 1e8, 1e15, 1e20], dtype)

    def ref(v):
        v = mp.mpf(float(v))
        return float(2 * v * mp.exp(v * v) * mp.erfc(v) - 2 / mp.sqrt(mp.pi))

    want = np.array([ref(v) for v in a]).astype(dtype)
    [got] = grad_on(sn.erfcx, backend, a)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-13 if dtype == "float64" else 4e-6, atol=0)
    with np.errstate(invalid="ignore"):  # the unused branch's inf * 0
        [edge] = grad_on(sn.erfcx, backend, np.array([np.inf, np.nan], dtype))
    assert edge[0] == 0 and np.isnan(edge[1])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_arctan2_gradient_neither_overflows_nor_underflows(dtype, backend):
    """The partials divided by x^2 + y^2, which overflowed (0) or underflowed (inf)."""
    v = np.array([1e160, 1e-160, 1e-300, 1.0] if dtype == "float64" else [1e20, 1e-20, 1.0], dtype)
    ga, gb = grad_on(sn.arctan2, backend, v, 2 * v)  # d/da atan2(a, 2a) = 0.4/a, d/db -0.2/a
    rtol = 1e-14 if dtype == "float64" else 1e-6
    np.testing.assert_allclose(ga, 0.4 / v.astype(float), rtol=rtol)
    np.testing.assert_allclose(gb, -0.2 / v.astype(float), rtol=rtol)
    zero = np.zeros(1, dtype)
    with np.errstate(invalid="ignore"):  # 0/0 at the origin, as before
        assert all(np.isnan(g).all() for g in grad_on(sn.arctan2, backend, zero, zero))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_log10_and_arctan2_gradients_near_the_largest_float_are_subnormals(dtype, backend):
    """1 / (x ln 10) and the arctan2 partials' r2 * s overflowed before the division, so the
    gradients at x = 3e38 in float32 (1e308 in float64), subnormals, were 0."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 50
    big = [3e38, 3.4e38, 1.6e38] if dtype == "float32" else [1e308, 1.7e308, 8e307]
    a = np.array([*big, 2.0, 1e-30], dtype)
    b = np.array([*big[::-1], 3.0, 1e-30], dtype)

    def exact(fn, *arrays):
        return np.array([float(fn(*map(mp.mpf, map(float, v)))) for v in zip(*arrays)], dtype)

    tiny = np.finfo(dtype).tiny
    rtol = 1e-15 if dtype == "float64" else 1e-7
    atol = tiny * np.finfo(dtype).eps  # an ulp of the subnormals
    [got] = grad_on(sn.log10, backend, a)
    want = exact(lambda x: 1 / (x * mp.log(10)), a)
    assert (0 < want[:3]).all() and (want[:3] < tiny).all()
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    gy, gx = grad_on(sn.arctan2, backend, b, a)  # d/dy atan2(y, x) = x / r2, d/dx -y / r2
    np.testing.assert_allclose(gy, exact(lambda y, x: x / (x * x + y * y), b, a), rtol, atol)
    np.testing.assert_allclose(gx, exact(lambda y, x: -y / (x * x + y * y), b, a), rtol, atol)
    assert (gy[:3] > 0).all() and (gx[:3] < 0).all()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_arcsinh_gradient_past_the_square_root_of_the_largest_float(dtype, backend):
    """1/sqrt(x*x + 1) was 0 where x*x overflows; the truth is about 1/|x|."""
    a = np.array([1e160, -1e300, 0.5, -2.0] if dtype == "float64" else [1e20, -1e30, 0.5, -2.0])
    a = a.astype(dtype)
    with np.errstate(over="ignore"):
        want = 1 / np.sqrt(np.longdouble(a) ** 2 + 1)
    [got] = grad_on(sn.arcsinh, backend, a)
    np.testing.assert_allclose(got, want.astype(float), rtol=1e-15 if dtype == "float64" else 1e-7)
    [edge] = grad_on(sn.arcsinh, backend, np.array([np.inf, -np.inf, np.nan], dtype))
    np.testing.assert_array_equal(edge, [0, 0, np.nan])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_logaddexp_gradient_is_sigmoid_of_the_difference(dtype, backend):
    """exp(x - out) read the rounded output (5% off at 1e15 in float64, 0.49985 for x == y
    in float32) and was NaN at (inf, 0)."""
    base = np.array([1e15, 1e8] if dtype == "float64" else [1e5, 1e3])
    x = np.repeat(base, 3) * np.tile([1, 1, -1], len(base))
    y = x + np.tile([0.0, 0.5, 2.0], len(base))
    x, y = x.astype(dtype), y.astype(dtype)
    d = x.astype(float) - y.astype(float)
    gx, gy = grad_on(sn.logaddexp, backend, x, y)
    rtol = 1e-15 if dtype == "float64" else 1e-7
    np.testing.assert_allclose(gx, 1 / (1 + np.exp(-d)), rtol=rtol)
    np.testing.assert_allclose(gy, 1 / (1 + np.exp(d)), rtol=rtol)
    inf = np.inf
    with np.errstate(invalid="ignore"):
        gx, gy = grad_on(sn.logaddexp, backend, *np.array([[inf, -inf, inf], [0, 0, inf]], dtype))
    np.testing.assert_array_equal(gx, [1, 0, np.nan])
    np.testing.assert_array_equal(gy, [0, 1, np.nan])


def test_arcsin_and_arccos_gradients_near_one(backend):
    """1/sqrt(1 - x*x) lost digits near |x| = 1 (1e-7 off at 1 - x = 1e-10)."""
    a = 1 - np.random.default_rng(0).uniform(1e-11, 1e-9, 50)
    a = np.concatenate([a, -a])
    ld = np.longdouble(a)
    want = (1 / np.sqrt((1 - ld) * (1 + ld))).astype(float)
    [got] = grad_on(sn.arcsin, backend, a)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    [got] = grad_on(sn.arccos, backend, a)
    np.testing.assert_allclose(got, -want, rtol=1e-13)
