"""Elementwise transcendental and special functions (SciPy's where NumPy has none).

Each op follows :mod:`symnb.ops.elemwise`: ``impl`` is the NumPy/SciPy reference and decides
the output dtype, ``c`` is the scalar C99 expression for kernel backends, ``grad_elem`` the
gradient on the broadcast shape. ``c`` names outside C99 (``erfinv``, ``digamma``) are helpers a
kernel dialect must supply in its preamble.
"""

from __future__ import annotations

import math

import numpy as np

from symnb.core.op import NotDifferentiable
from symnb.ops.elemwise import Elemwise, _Unary, exp, sigmoid, sqrt

_LN2, _LN10 = math.log(2.0), math.log(10.0)
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

    impl, c = staticmethod(np.expm1), "expm1({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz * (output + 1)]


class Log1p(_Unary):
    """log(1 + x), accurate for small x."""

    impl, c = staticmethod(np.log1p), "log1p({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz / (inputs[0] + 1)]


class Log2(_Unary):
    """Base-2 logarithm."""

    impl, c = staticmethod(np.log2), "log2({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz / (inputs[0] * _LN2)]


class Log10(_Unary):
    """Base-10 logarithm."""

    impl, c = staticmethod(np.log10), "log10({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz / (inputs[0] * _LN10)]


class Square(_Unary):
    """x * x (keeps integer dtypes, as ``np.square``)."""

    impl, c = staticmethod(np.square), "({0} * {0})"

    def grad_elem(self, inputs, output, gz):
        return [gz * 2 * inputs[0]]


class Reciprocal(_Unary):
    """1 / x (integer division for integer dtypes, as ``np.reciprocal``)."""

    impl = staticmethod(np.reciprocal)
    # integer 1/0 would trap in C; going through double gives NumPy's x86 result instead
    c = "({0} != 0 ? 1 / {0} : 1 / ({0} * 1.0))"

    def grad_elem(self, inputs, output, gz):
        return [-gz * output * output]


def _softplus(x):
    """log(1 + exp(x)) without overflow: ``logaddexp(0, x)`` is exact at both tails."""
    return np.logaddexp(0, x)


class Softplus(_Unary):
    """log(1 + exp(x)), finite for every finite x; exp's dtype rule."""

    impl = staticmethod(_softplus)
    c = "(fmax({0}, 0) + log1p(exp(-fabs({0}))))"

    def grad_elem(self, inputs, output, gz):
        return [gz * sigmoid(inputs[0])]


class Logaddexp(Elemwise):
    """log(exp(x) + exp(y)) without overflow or underflow."""

    impl = staticmethod(np.logaddexp)
    # equal operands first: that also keeps logaddexp(inf, inf) = inf and (-inf, -inf) = -inf
    c = "({0} == {1} ? {0} + 0.6931471805599453 : fmax({0}, {1}) + log1p(exp(-fabs({0} - {1}))))"

    def grad_elem(self, inputs, output, gz):
        x, y = inputs
        return [gz * exp(x - output), gz * exp(y - output)]


# -- trigonometric and hyperbolic ----------------------------------------------------------
class Tan(_Unary):
    """Tangent."""

    impl, c = staticmethod(np.tan), "tan({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz * (1 + output * output)]


class Arcsin(_Unary):
    """Inverse sine, on [-1, 1]."""

    impl, c = staticmethod(np.arcsin), "asin({0})"

    def grad_elem(self, inputs, output, gz):
        x = inputs[0]
        return [gz / sqrt(1 - x * x)]


class Arccos(_Unary):
    """Inverse cosine, on [-1, 1]."""

    impl, c = staticmethod(np.arccos), "acos({0})"

    def grad_elem(self, inputs, output, gz):
        x = inputs[0]
        return [-gz / sqrt(1 - x * x)]


class Arctan(_Unary):
    """Inverse tangent."""

    impl, c = staticmethod(np.arctan), "atan({0})"

    def grad_elem(self, inputs, output, gz):
        x = inputs[0]
        return [gz / (1 + x * x)]


class Arctan2(Elemwise):
    """Angle of the point (x, y): ``arctan2(y, x)``, quadrant-aware."""

    impl, c = staticmethod(np.arctan2), "atan2({0}, {1})"

    def grad_elem(self, inputs, output, gz):
        y, x = inputs
        r2 = x * x + y * y
        return [gz * x / r2, -gz * y / r2]


class Sinh(_Unary):
    """Hyperbolic sine."""

    impl, c = staticmethod(np.sinh), "sinh({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz * cosh(inputs[0])]


class Cosh(_Unary):
    """Hyperbolic cosine."""

    impl, c = staticmethod(np.cosh), "cosh({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz * sinh(inputs[0])]


class Arcsinh(_Unary):
    """Inverse hyperbolic sine."""

    impl, c = staticmethod(np.arcsinh), "asinh({0})"

    def grad_elem(self, inputs, output, gz):
        x = inputs[0]
        return [gz / sqrt(x * x + 1)]


# -- special functions (SciPy's dtype rules) -----------------------------------------------
class Erf(_Unary):
    """The error function."""

    impl, c = staticmethod(_special("erf")), "erf({0})"

    def grad_elem(self, inputs, output, gz):
        x = inputs[0]
        return [gz * _TWO_OVER_SQRT_PI * exp(-(x * x))]


class Erfc(_Unary):
    """1 - erf(x), accurate where erf is close to 1."""

    impl, c = staticmethod(_special("erfc")), "erfc({0})"

    def grad_elem(self, inputs, output, gz):
        x = inputs[0]
        return [-gz * _TWO_OVER_SQRT_PI * exp(-(x * x))]


class Erfinv(_Unary):
    """Inverse of erf, on (-1, 1)."""

    impl, c = staticmethod(_special("erfinv")), "erfinv({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz / (_TWO_OVER_SQRT_PI * exp(-(output * output)))]


class Gamma(_Unary):
    """The gamma function (``tgamma`` in C)."""

    impl, c = staticmethod(_special("gamma")), "tgamma({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz * output * digamma(inputs[0])]


class Gammaln(_Unary):
    """log |gamma(x)|, finite where gamma overflows."""

    impl, c = staticmethod(_special("gammaln")), "lgamma({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz * digamma(inputs[0])]


class Digamma(_Unary):
    """psi(x), the derivative of gammaln."""

    functions = ("digamma", "psi")
    impl, c = staticmethod(_special("psi")), "digamma({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz * trigamma(inputs[0])]


def _trigamma(x):
    import scipy.special

    return scipy.special.polygamma(1, x)


class Trigamma(_Unary):
    """psi'(x), the derivative of digamma; its own derivative is not implemented."""

    impl, c = staticmethod(_trigamma), "trigamma({0})"
    differentiable = False

    def grad_elem(self, inputs, output, gz):
        raise NotDifferentiable(
            "trigamma: its gradient (polygamma(2, x)) is not implemented, so digamma has "
            "only a first derivative"
        )


expm1, log1p, log2, log10 = Expm1(), Log1p(), Log2(), Log10()
square, reciprocal, softplus, logaddexp = Square(), Reciprocal(), Softplus(), Logaddexp()
tan, arcsin, arccos, arctan, arctan2 = Tan(), Arcsin(), Arccos(), Arctan(), Arctan2()
sinh, cosh, arcsinh = Sinh(), Cosh(), Arcsinh()
erf, erfc, erfinv = Erf(), Erfc(), Erfinv()
gamma, gammaln, digamma, trigamma = Gamma(), Gammaln(), Digamma(), Trigamma()
psi = digamma
