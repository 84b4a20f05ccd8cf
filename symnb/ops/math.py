"""Elementwise transcendental and special functions (SciPy's where NumPy has none).

Each op follows :mod:`symnb.ops.elemwise`: ``impl`` is the NumPy/SciPy reference and decides
the output dtype, ``scalar_op``/``scalar`` the element for kernel backends (ops a dialect cannot
spell, such as ``erfinv`` or ``digamma`` in C, run their reference instead), ``grad_elem`` the
gradient on the broadcast shape.
"""

from __future__ import annotations

import math

import numpy as np

from symnb.core.op import NotDifferentiable
from symnb.ops.elemwise import Elemwise, _Unary, cast, exp, maximum, minimum, sigmoid, sqrt, where
from symnb.ops.elemwise import abs as absolute

_LN2, _LN10, _LOG10_E = math.log(2.0), math.log(10.0), math.log10(math.e)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _special(name: str):
    """``scipy.special.<name>``, imported on first use: importing scipy.special takes about
    0.2 s, which programs that use no special function should not pay at ``import symnb``."""

    def call(*args):
        import scipy.special

        return getattr(scipy.special, name)(*args)

    call.__name__ = call.__qualname__ = name
    return call


# -- exponentials and logarithms -----------------------------------------------------------
class Expm1(_Unary):
    """exp(x) - 1, accurate for small x."""

    impl, scalar_op = staticmethod(np.expm1), "expm1"

    def grad_elem(self, inputs, output, gz):
        # exp(x), not output + 1: for x well below 0 that sum cancels (at x = -30 only 1e-2
        # of exp(x) was left in float64; in float32 it was 0 from x = -17 on)
        return [gz * exp(inputs[0])]


class Log1p(_Unary):
    """log(1 + x), accurate for small x."""

    impl, scalar_op = staticmethod(np.log1p), "log1p"

    def grad_elem(self, inputs, output, gz):
        return [gz / (inputs[0] + 1)]


class Log2(_Unary):
    """Base-2 logarithm."""

    impl, scalar_op = staticmethod(np.log2), "log2"

    def grad_elem(self, inputs, output, gz):
        return [gz / (inputs[0] * _LN2)]


class Log10(_Unary):
    """Base-10 logarithm."""

    impl, scalar_op = staticmethod(np.log10), "log10"

    def grad_elem(self, inputs, output, gz):
        # log10(e) / x, not 1 / (x ln 10): x ln 10 overflows first (float32 from 1.5e38,
        # where the gradient, a subnormal, came out 0)
        return [gz * _LOG10_E / inputs[0]]


class Square(_Unary):
    """x * x (keeps integer dtypes, as ``np.square``)."""

    impl = staticmethod(np.square)

    def scalar(self, k, x):
        return k.mul(k.to(x), k.to(x))

    def grad_elem(self, inputs, output, gz):
        return [gz * 2 * inputs[0]]


class Reciprocal(_Unary):
    """1 / x (integer division for integer dtypes, as ``np.reciprocal``)."""

    impl = staticmethod(np.reciprocal)

    def scalar(self, k, x):
        x = k.to(x)
        if k.dtype.startswith("float"):
            return k.div(k.const(1), x)
        # integer 1/0 traps in C; NumPy's answer for it depends on the dtype and the machine,
        # so it is asked for once, as a constant
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            by_zero = np.reciprocal(np.zeros((), k.dtype)).item()
        return k.where(k.ne(x, k.const(0)), k.div(k.const(1), x), k.literal(by_zero, k.dtype))

    def grad_elem(self, inputs, output, gz):
        return [-gz * output * output]


# -- complex parts -----------------------------------------------------------------------
# Kernels compute real dtypes only (float16 and complex nodes run their NumPy reference,
# symnb/backends/kernels/ir.py), so a kernel element is that of a real x. The gradient rules
# are a real x's: one that would flow through a complex value is refused (docs/autodiff.md).
def _real_part(x):
    """``np.real``, as a new array (NumPy's is a view of x, or x itself when x is real)."""
    return np.array(np.real(x))


def _imag_part(x):
    """``np.imag``, as a new writable array (NumPy's is a view, read-only zeros of a real x)."""
    return np.array(np.imag(x))


class Conj(_Unary):
    """The complex conjugate (``np.conjugate``); a real x's is x (bool becomes int8, as
    NumPy's)."""

    impl = staticmethod(np.conjugate)

    def scalar(self, k, x):
        return k.to(x)

    def grad_elem(self, inputs, output, gz):
        return [gz]


class Real(_Unary):
    """The real part (``np.real``): float32 of complex64, float64 of complex128; a real x
    itself."""

    impl = staticmethod(_real_part)

    def scalar(self, k, x):
        return k.to(x)

    def grad_elem(self, inputs, output, gz):
        return [gz]


class Imag(_Unary):
    """The imaginary part (``np.imag``): float32 of complex64, float64 of complex128; zeros of
    x's dtype for a real x (no gradient flows through them)."""

    impl = staticmethod(_imag_part)

    def scalar(self, k, x):
        return k.const(0)

    def grad_elem(self, inputs, output, gz):
        return [None]


def _softplus(x):
    """log(1 + exp(x)) without overflow: ``logaddexp(0, x)`` is exact at both tails."""
    return np.logaddexp(0, x)


class Softplus(_Unary):
    """log(1 + exp(x)), finite for every finite x; exp's dtype rule."""

    impl = staticmethod(_softplus)

    def scalar(self, k, x):
        x = k.to(x)
        return k.add(k.maximum(x, k.const(0)), k.log1p(k.exp(k.neg(k.abs(x)))))

    def grad_elem(self, inputs, output, gz):
        return [gz * sigmoid(inputs[0])]


class Logaddexp(Elemwise):
    """log(exp(x) + exp(y)) without overflow or underflow. Its partials are sigmoid(x - y)
    and sigmoid(y - x): 1 and 0 against an infinite operand, NaN where both are the same
    infinity (the limit depends on the path) or either is NaN."""

    impl = staticmethod(np.logaddexp)

    def scalar(self, k, x, y):
        x, y = k.to(x), k.to(y)
        apart = k.add(k.maximum(x, y), k.log1p(k.exp(k.neg(k.abs(k.sub(x, y))))))
        # equal operands first: that also keeps logaddexp(inf, inf) = inf and (-inf, -inf) = -inf
        return k.where(k.eq(x, y), k.add(x, k.const(_LN2)), apart)

    def grad_elem(self, inputs, output, gz):
        # not exp(x - output): that reads the rounded output, whose ulp at large |x| is the
        # error (5% in float64 at 1e15), and is NaN at (inf, finite)
        x, y = inputs
        return [gz * sigmoid(x - y), gz * sigmoid(y - x)]


# -- trigonometric and hyperbolic ----------------------------------------------------------
class Tan(_Unary):
    """Tangent."""

    impl, scalar_op = staticmethod(np.tan), "tan"

    def grad_elem(self, inputs, output, gz):
        return [gz * (1 + output * output)]


def _sqrt_one_minus_square(x):
    """sqrt(1 - x^2) as sqrt((1 - x) (1 + x)): x * x rounds before the subtraction, which
    near |x| = 1 leaves few digits (1e-7 off at 1 - x = 1e-10 in float64)."""
    return sqrt((1 - x) * (1 + x))


class Arcsin(_Unary):
    """Inverse sine, on [-1, 1]."""

    impl, scalar_op = staticmethod(np.arcsin), "asin"

    def grad_elem(self, inputs, output, gz):
        x = inputs[0]
        return [gz / _sqrt_one_minus_square(x)]


class Arccos(_Unary):
    """Inverse cosine, on [-1, 1]."""

    impl, scalar_op = staticmethod(np.arccos), "acos"

    def grad_elem(self, inputs, output, gz):
        x = inputs[0]
        return [-gz / _sqrt_one_minus_square(x)]


class Arctan(_Unary):
    """Inverse tangent."""

    impl, scalar_op = staticmethod(np.arctan), "atan"

    def grad_elem(self, inputs, output, gz):
        x = inputs[0]
        return [gz / (1 + x * x)]


class Arctan2(Elemwise):
    """Angle of the point (x, y): ``arctan2(y, x)``, quadrant-aware."""

    impl, scalar_op = staticmethod(np.arctan2), "atan2"

    def grad_elem(self, inputs, output, gz):
        # divided by s = max(|x|, |y|) first: x * x + y * y overflows (a gradient of 0) past
        # 1e154 in float64 and underflows (inf) below 1e-162; s is 1 where it is 0, inf or
        # NaN, which keeps the values there (NaN at (0, 0), 0 or NaN at infinities). The
        # scaled r2 = xs^2 + ys^2 (in [1, 2]) divides before s does: r2 * s overflows past
        # max / 2 (float32 at (3e38, 3e38), where the gradient is a subnormal, not 0)
        y, x = inputs
        s = maximum(absolute(x), absolute(y))
        s = where((s > 0) & (s < math.inf), s, 1)
        xs, ys = x / s, y / s
        r2 = xs * xs + ys * ys
        return [gz * xs / r2 / s, -gz * ys / r2 / s]


class Sinh(_Unary):
    """Hyperbolic sine."""

    impl, scalar_op = staticmethod(np.sinh), "sinh"

    def grad_elem(self, inputs, output, gz):
        return [gz * cosh(inputs[0])]


class Cosh(_Unary):
    """Hyperbolic cosine."""

    impl, scalar_op = staticmethod(np.cosh), "cosh"

    def grad_elem(self, inputs, output, gz):
        return [gz * sinh(inputs[0])]


class Arcsinh(_Unary):
    """Inverse hyperbolic sine."""

    impl, scalar_op = staticmethod(np.arcsinh), "asinh"

    def grad_elem(self, inputs, output, gz):
        # past |x| = 1 as u / sqrt(1 + u^2), u = 1/|x|: x * x overflows (a gradient of 0)
        # past 1.3e154 in float64, 1.8e19 in float32
        ax = absolute(inputs[0])
        u, small = 1 / maximum(ax, 1), minimum(ax, 1)  # each branch finite on the other's side
        return [gz * where(ax > 1, u / sqrt(1 + u * u), 1 / sqrt(small * small + 1))]


# -- special functions (SciPy's dtype rules) -----------------------------------------------
class Erf(_Unary):
    """The error function."""

    impl, scalar_op = staticmethod(_special("erf")), "erf"

    def grad_elem(self, inputs, output, gz):
        x = inputs[0]
        return [gz * _TWO_OVER_SQRT_PI * exp(-(x * x))]


class Erfc(_Unary):
    """1 - erf(x), accurate where erf is close to 1."""

    impl, scalar_op = staticmethod(_special("erfc")), "erfc"

    def grad_elem(self, inputs, output, gz):
        x = inputs[0]
        return [-gz * _TWO_OVER_SQRT_PI * exp(-(x * x))]


#: below it erfcx is exp(x^2) erfc(x) (SciPy's own formula for x < 0); from it on the
#: continued fraction, whose 16 terms are exact to an ulp of float64 there
_ERFCX_SPLIT, _ERFCX_TERMS = 5.0, 16


#: where erfcx's gradient switches to the fraction: 2 x^2 ulps of the output are lost below
#: it (5e-15 in float64 at 5; float32's 1e-6 at 3, where 16 terms are exact to 2e-10)
_ERFCX_GRAD_SPLIT = {"float64": _ERFCX_SPLIT, None: 3.0}


def _erfcx_grad_tail(x):
    """erfcx'(x) = 2 x erfcx(x) - 2/sqrt(pi) without the cancellation: with erfcx =
    1 / (sqrt(pi) F), F = x + (1/2) / G and G = x + (2/2) / (x + (3/2) / ...), it is
    -1 / (sqrt(pi) F G) (divided in turn: F G overflows for x past 1e154)."""
    g = x
    for n in range(_ERFCX_TERMS, 1, -1):
        g = x + (n / 2) / g
    f = x + 0.5 / g
    return -(1 / math.sqrt(math.pi)) / f / g


class Erfcx(_Unary):
    """The scaled complementary error function ``exp(x^2) erfc(x)``: finite (about
    ``1 / (x sqrt(pi))``) for large x, where erfc underflows and exp(x^2) overflows."""

    impl = staticmethod(_special("erfcx"))

    def scalar(self, k, x):
        """Computed in float64 (float32's exp(x^2) is ulps off and overflows by x = 9.4):
        ``exp(x^2) erfc(x)`` below the split, Laplace's continued fraction
        ``1 / (sqrt(pi) (x + (1/2) / (x + (2/2) / (x + ...))))`` from it."""
        x = k.convert(x, "float64")

        def lit(value):
            return k.literal(value, "float64")

        direct = k.mul(k.exp(k.mul(x, x)), k.erfc(x))
        fraction = x
        for n in range(_ERFCX_TERMS, 0, -1):
            fraction = k.add(x, k.div(lit(n / 2), fraction))
        tail = k.div(lit(1 / math.sqrt(math.pi)), fraction)
        return k.where(k.lt(x, lit(_ERFCX_SPLIT)), direct, tail)

    def grad_elem(self, inputs, output, gz):
        """``2 x erfcx(x) - 2/sqrt(pi)`` cancels as x grows (all digits gone in float64 by
        x = 1e8): from a split on, the continued fraction's own form of it (float64, as
        ``scalar``)."""
        x = inputs[0]
        split = _ERFCX_GRAD_SPLIT.get(str(output.dtype), _ERFCX_GRAD_SPLIT[None])
        direct = 2 * x * output - _TWO_OVER_SQRT_PI
        tail = cast(_erfcx_grad_tail(cast(maximum(x, split), "float64")), output.dtype)
        return [gz * where(x < split, direct, tail)]


class Erfinv(_Unary):
    """Inverse of erf, on (-1, 1)."""

    impl, scalar_op = staticmethod(_special("erfinv")), "erfinv"

    def grad_elem(self, inputs, output, gz):
        return [gz / (_TWO_OVER_SQRT_PI * exp(-(output * output)))]


class Erfcinv(_Unary):
    """Inverse of erfc, on (0, 2), accurate in its tails, where ``erfinv(1 - x)`` loses x
    to the rounding of 1 - x (inf below x = 1.1e-16). No kernel dialect spells it: it runs
    its reference."""

    impl, scalar_op = staticmethod(_special("erfcinv")), "erfcinv"

    def grad_elem(self, inputs, output, gz):
        return [-gz / (_TWO_OVER_SQRT_PI * exp(-(output * output)))]


def _gamma_sign(x):
    """The sign gamma(x) has at a negative x in (-n - 1, -n): (-1)**(n + 1), -1 where floor(x)
    is odd (a float that large is an integer, a pole, from 2**52 on)."""
    return np.where(np.fmod(np.floor(x), 2) != 0, -1.0, 1.0)


def _gamma(x):
    """SciPy's gamma, except for the sign of the zero it underflows to at x < -2**31: SciPy's
    (Cephes') parity test of floor(x) goes through a C int there, so every such zero is -0.0;
    gamma's sign alternates between poles all the way, as C's tgamma has it."""
    result = _special("gamma")(x)
    x = np.asarray(x)
    if x.dtype != np.float64:  # (no other dtype holds a non-integer below -2**31)
        return result
    zero = (result == 0) & (x < -(2.0**31))
    if np.any(zero):
        result = np.where(zero, np.copysign(0.0, _gamma_sign(x)).astype(result.dtype), result)
    return result


class Gamma(_Unary):
    """The gamma function (``tgamma`` in C), with its sign on each interval of negative x where
    it underflows too: -0.0 on (-201, -200), so 1/gamma(x) is -inf there."""

    impl = staticmethod(_gamma)

    def scalar(self, k, x):
        """``tgamma`` with the sign of a negative x's interval: PoCL's tgamma (and glibc's at
        some large |x|) gives +0.0 where |gamma(x)| underflows, whose reciprocal is then +inf
        where it is -inf (x in (-201, -200): -0.0)."""
        x = k.to(x)
        value = k.tgamma(x)
        odd = k.ne(k.fmod(k.floor(x), k.const(2)), k.const(0))
        sign = k.where(odd, k.const(-1), k.const(1))
        return k.where(k.lt(x, k.const(0)), k.copysign(value, sign), value)

    def grad_elem(self, inputs, output, gz):
        return [gz * output * digamma(inputs[0])]


def _gammaln(x):
    """SciPy's gammaln, except for the nonzero x where 1/x overflows (subnormal float64):
    SciPy gives inf there, C's lgamma (and the truth, to double precision) ``-log|x|``."""
    result = _special("gammaln")(x)
    if np.asarray(x).dtype != np.float64:
        return result
    tiny = (np.abs(x) <= np.finfo(np.float64).tiny) & (x != 0)
    if np.any(tiny):
        result = np.where(tiny, -np.log(np.abs(x, where=tiny, out=np.ones_like(x))), result)
    return result


class Gammaln(_Unary):
    """log |gamma(x)|, finite where gamma overflows."""

    impl = staticmethod(_gammaln)

    def scalar(self, k, x):
        """C's lgamma(-inf) is +inf; the reference's (|gamma| -> 0 there) is -inf."""
        x = k.to(x)
        return k.where(k.eq(x, k.literal(-math.inf, k.dtype)), x, k.lgamma(x))

    def grad_elem(self, inputs, output, gz):
        return [gz * digamma(inputs[0])]


class Digamma(_Unary):
    """psi(x), the derivative of gammaln."""

    functions = ("digamma", "psi")
    impl, scalar_op = staticmethod(_special("psi")), "digamma"

    def grad_elem(self, inputs, output, gz):
        return [gz * trigamma(inputs[0])]


def _trigamma(x):
    import scipy.special

    return scipy.special.polygamma(1, x)


class Trigamma(_Unary):
    """psi'(x), the derivative of digamma (``polygamma(1, x)``)."""

    impl, scalar_op = staticmethod(_trigamma), "trigamma"

    def grad_elem(self, inputs, output, gz):
        return [gz * polygamma(2, inputs[0])]


class Polygamma(Elemwise):
    """``scipy.special.polygamma(n, x)``: the n-th derivative of digamma (n a non-negative
    integer; NaN for others, as SciPy). No kernel dialect spells it: it runs its reference."""

    dtype_rule = "SciPy's: float64 (float32 x included)"
    impl, scalar_op = staticmethod(_special("polygamma")), "polygamma"

    def grad_input(self, i, inputs, output, gz):
        n, x = inputs
        if i == 0:
            raise NotDifferentiable("the order n is an integer: it has no derivative")
        return gz * polygamma(n + 1, x)


expm1, log1p, log2, log10 = Expm1(), Log1p(), Log2(), Log10()
square, reciprocal, softplus, logaddexp = Square(), Reciprocal(), Softplus(), Logaddexp()
tan, arcsin, arccos, arctan, arctan2 = Tan(), Arcsin(), Arccos(), Arctan(), Arctan2()
sinh, cosh, arcsinh = Sinh(), Cosh(), Arcsinh()
erf, erfc, erfcx, erfinv, erfcinv = Erf(), Erfc(), Erfcx(), Erfinv(), Erfcinv()
gamma, gammaln, digamma, trigamma = Gamma(), Gammaln(), Digamma(), Trigamma()
psi = digamma
conj, real, imag = Conj(), Real(), Imag()
conjugate = conj


def polygamma(n, x):
    """``scipy.special.polygamma(n, x)``: the n-th derivative of digamma (``polygamma(0, x)``
    is digamma, ``polygamma(1, x)`` trigamma)."""
    return Polygamma()(n, x)
