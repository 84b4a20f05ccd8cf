"""Elementwise ops: NumPy broadcasting, NumPy dtype rules, a gradient and a kernel expression.

Each op is a small class: ``impl`` is its NumPy reference, ``c`` its scalar expression for
kernel backends (``{0}``, ``{1}`` are the operands), ``grad_elem`` its gradient on the
broadcast shape (the base class sums it back to each input's shape).
"""

from __future__ import annotations

import numpy as np

from symnb.core.dims import DimMismatch, broadcast_dims, format_dim
from symnb.core.op import Op
from symnb.core.shapes import hints as shape_hints
from symnb.core.shapes import warnings as shape_warnings
from symnb.core.types import TensorType, as_dtype
from symnb.core.variable import Variable, as_variable
from symnb.errors import ShapeError
from symnb.ops._dtypes import probe_dtype
from symnb.ops.broadcast import sum_to_like


def broadcast_shapes(op, inputs: list[Variable]) -> tuple:
    """NumPy's broadcast of the inputs' shapes; a ShapeError names the clashing axis."""
    ndim = max(v.type.ndim for v in inputs)
    padded = [(1,) * (ndim - v.type.ndim) + v.type.shape for v in inputs]
    out = []
    for axis in range(ndim):
        dim = padded[0][axis]
        for other in padded[1:]:
            try:
                dim = broadcast_dims(dim, other[axis])
            except DimMismatch as exc:
                raise ShapeError(_broadcast_message(op, inputs, axis - ndim, exc)) from None
        out.append(dim)
    shape_warnings.broadcast_hook(op, inputs, tuple(out))
    return tuple(out)


def _broadcast_message(op, inputs, axis, exc) -> str:
    operands = " and ".join(v.describe() for v in inputs)
    return (
        f"{op}: cannot broadcast {operands}: axis {axis} is {format_dim(exc.a)} in one "
        f"and {format_dim(exc.b)} in the other (sizes must be equal, or one of them 1)"
    ) + shape_hints.broadcast_hint(inputs, exc.a, exc.b)


class Elemwise(Op):
    """Base of elementwise ops; subclasses set ``nin``, ``impl``, ``c`` and ``grad_elem``."""

    nin = 2
    impl = None
    c: str | None = None

    def infer_types(self, *inputs):
        if len(inputs) != self.nin:
            raise TypeError(f"{self} takes {self.nin} inputs, got {len(inputs)}")
        shape = broadcast_shapes(self, inputs)
        return [TensorType(self.out_dtype(inputs), shape)]

    def out_dtype(self, inputs):
        return probe_dtype(self, self.impl, inputs)

    def perform(self, *arrays):
        return self.impl(*arrays)

    def grad(self, inputs, outputs, output_grads):
        grads = self.grad_elem(inputs, outputs[0], output_grads[0])
        fit = fit_dtype if self.nin == 1 else fit_gradient  # one input: nothing is broadcast
        return [None if g is None else fit(g, x) for g, x in zip(grads, inputs)]

    def grad_elem(self, inputs, output, gz):
        """Gradients on the broadcast shape, one per input (None: no gradient flows)."""
        raise NotImplementedError


class _Unary(Elemwise):
    nin = 1


class _Logical(Elemwise):
    """Comparisons and bitwise logic: integer or boolean outputs, no gradient."""

    differentiable = False

    def grad_elem(self, inputs, output, gz):
        return [None] * len(inputs)


# -- arithmetic ----------------------------------------------------------------------------
class Add(Elemwise):
    """x + y."""

    impl, c = staticmethod(np.add), "({0} + {1})"

    def grad_elem(self, inputs, output, gz):
        return [gz, gz]


class Sub(Elemwise):
    """x - y."""

    impl, c = staticmethod(np.subtract), "({0} - {1})"

    def grad_elem(self, inputs, output, gz):
        return [gz, -gz]


class Mul(Elemwise):
    """x * y."""

    impl, c = staticmethod(np.multiply), "({0} * {1})"

    def grad_elem(self, inputs, output, gz):
        x, y = inputs
        return [gz * y, gz * x]


class TrueDiv(Elemwise):
    """x / y (integers divide to floats, as in NumPy)."""

    impl, c = staticmethod(np.true_divide), "({0} / {1})"

    def grad_elem(self, inputs, output, gz):
        x, y = inputs
        return [gz / y, -gz * output / y]


class FloorDiv(Elemwise):
    """x // y, rounding toward minus infinity; its gradient is zero almost everywhere."""

    impl, c = staticmethod(np.floor_divide), "floor_div({0}, {1})"

    def grad_elem(self, inputs, output, gz):
        return [gz * 0, gz * 0]


class Mod(Elemwise):
    """x % y with the sign of y (Python's and NumPy's rule)."""

    impl, c = staticmethod(np.mod), "py_mod({0}, {1})"

    def grad_elem(self, inputs, output, gz):
        x, y = inputs
        return [gz, -gz * floor_div(x, y)]


class Pow(Elemwise):
    """x ** y."""

    impl, c = staticmethod(np.power), "pow({0}, {1})"

    def grad_elem(self, inputs, output, gz):
        x, y = inputs
        return [gz * y * x ** (y - 1), gz * output * log(x)]


class Neg(_Unary):
    """-x."""

    impl, c = staticmethod(np.negative), "(-{0})"

    def grad_elem(self, inputs, output, gz):
        return [-gz]


class Pos(_Unary):
    """+x."""

    impl, c = staticmethod(np.positive), "(+{0})"

    def grad_elem(self, inputs, output, gz):
        return [gz]


class Abs(_Unary):
    """|x|."""

    impl, c = staticmethod(np.absolute), "fabs({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz * sign(inputs[0])]


class Sign(_Unary):
    """-1, 0 or 1; its gradient is zero."""

    impl, c = staticmethod(np.sign), "sign({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz * 0]


# -- transcendental ------------------------------------------------------------------------
class Exp(_Unary):
    """e ** x."""

    impl, c = staticmethod(np.exp), "exp({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz * output]


class Log(_Unary):
    """Natural logarithm."""

    impl, c = staticmethod(np.log), "log({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz / inputs[0]]


class Sqrt(_Unary):
    """Square root."""

    impl, c = staticmethod(np.sqrt), "sqrt({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz * 0.5 / output]


class Tanh(_Unary):
    """Hyperbolic tangent."""

    impl, c = staticmethod(np.tanh), "tanh({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz * (1 - output * output)]


def _sigmoid(x):
    """Logistic function, accurate at both tails (no overflow in exp)."""
    x = np.asarray(x)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(np.result_type(e), copy=False)


class Sigmoid(_Unary):
    """1 / (1 + exp(-x))."""

    impl, c = staticmethod(_sigmoid), "sigmoid({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz * output * (1 - output)]


class Sin(_Unary):
    """Sine."""

    impl, c = staticmethod(np.sin), "sin({0})"

    def grad_elem(self, inputs, output, gz):
        return [gz * cos(inputs[0])]


class Cos(_Unary):
    """Cosine."""

    impl, c = staticmethod(np.cos), "cos({0})"

    def grad_elem(self, inputs, output, gz):
        return [-gz * sin(inputs[0])]


# -- rounding (gradients are zero almost everywhere) ---------------------------------------
class _Rounding(_Unary):
    def grad_elem(self, inputs, output, gz):
        return [gz * 0]


class Floor(_Rounding):
    """Largest integer <= x."""

    impl, c = staticmethod(np.floor), "floor({0})"


class Ceil(_Rounding):
    """Smallest integer >= x."""

    impl, c = staticmethod(np.ceil), "ceil({0})"


class Trunc(_Rounding):
    """x rounded toward zero."""

    impl, c = staticmethod(np.trunc), "trunc({0})"


class Round(_Rounding):
    """x rounded to the nearest integer, halves to even (``np.round``; C's ``rint``)."""

    impl, c = staticmethod(np.round), "rint({0})"


# -- selection ------------------------------------------------------------------------------
class Maximum(Elemwise):
    """Elementwise larger of x and y; NaN wins, as in NumPy. Ties send the gradient to x."""

    impl = staticmethod(np.maximum)
    c = "(({0} >= {1} || {0} != {0}) ? {0} : {1})"

    def grad_elem(self, inputs, output, gz):
        x, y = inputs
        return [gz * (x >= y), gz * (x < y)]


class Minimum(Elemwise):
    """Elementwise smaller of x and y; NaN wins, as in NumPy. Ties send the gradient to x."""

    impl = staticmethod(np.minimum)
    c = "(({0} <= {1} || {0} != {0}) ? {0} : {1})"

    def grad_elem(self, inputs, output, gz):
        x, y = inputs
        return [gz * (x <= y), gz * (x > y)]


def _relu(x):
    return np.maximum(x, 0)


class Relu(_Unary):
    """max(x, 0); the gradient at 0 is taken as 0."""

    impl, c = staticmethod(_relu), "(({0} > 0 || {0} != {0}) ? {0} : 0)"

    def grad_elem(self, inputs, output, gz):
        return [gz * (inputs[0] > 0)]


class Clip(Elemwise):
    """x limited to [lo, hi] (``np.clip``); the gradient flows to whichever bound is active."""

    dtype_rule = "NumPy's promotion of x, lo and hi (``np.clip``)"
    nin = 3
    impl = staticmethod(np.clip)
    c = "({0} < {1} ? {1} : ({0} > {2} ? {2} : {0}))"

    def grad_elem(self, inputs, output, gz):
        x, lo, hi = inputs
        at_hi = (x > hi) | (lo > hi)  # np.clip is minimum(maximum(x, lo), hi)
        return [gz * ((x >= lo) & (x <= hi)), gz * ((x < lo) & (lo <= hi)), gz * at_hi]


class Where(Elemwise):
    """``where(cond, x, y)``: x where cond is true (nonzero), else y; Theano's ``switch``."""

    functions = ("where", "switch")
    dtype_rule = "NumPy's promotion of x and y; cond may have any dtype"
    nin = 3
    impl, c = staticmethod(np.where), "({0} ? {1} : {2})"

    def grad_elem(self, inputs, output, gz):
        cond = inputs[0]
        return [None, where(cond, gz, 0), where(cond, 0, gz)]


# -- comparisons and logic -----------------------------------------------------------------
class Less(_Logical):
    """x < y."""

    impl, c = staticmethod(np.less), "({0} < {1})"


class LessEqual(_Logical):
    """x <= y."""

    impl, c = staticmethod(np.less_equal), "({0} <= {1})"


class Greater(_Logical):
    """x > y."""

    impl, c = staticmethod(np.greater), "({0} > {1})"


class GreaterEqual(_Logical):
    """x >= y."""

    impl, c = staticmethod(np.greater_equal), "({0} >= {1})"


class Equal(_Logical):
    """x == y."""

    impl, c = staticmethod(np.equal), "({0} == {1})"


class NotEqual(_Logical):
    """x != y."""

    impl, c = staticmethod(np.not_equal), "({0} != {1})"


class BitwiseAnd(_Logical):
    """x & y (logical and on booleans)."""

    impl, c = staticmethod(np.bitwise_and), "({0} & {1})"


class BitwiseOr(_Logical):
    """x | y (logical or on booleans)."""

    impl, c = staticmethod(np.bitwise_or), "({0} | {1})"


class BitwiseXor(_Logical):
    """x ^ y."""

    impl, c = staticmethod(np.bitwise_xor), "({0} ^ {1})"


class Invert(_Logical):
    """~x (logical not on booleans)."""

    nin = 1
    impl, c = staticmethod(np.invert), "invert({0})"


class IsNan(_Logical):
    """x is NaN (false for integers)."""

    name = "isnan"
    nin = 1
    impl, c = staticmethod(np.isnan), "isnan({0})"


class IsInf(_Logical):
    """x is +inf or -inf."""

    name = "isinf"
    nin = 1
    impl, c = staticmethod(np.isinf), "isinf({0})"


class IsFinite(_Logical):
    """x is neither infinite nor NaN."""

    name = "isfinite"
    nin = 1
    impl, c = staticmethod(np.isfinite), "isfinite({0})"


# -- dtype ---------------------------------------------------------------------------------
class Cast(Elemwise):
    """Convert to another dtype (``x.astype``)."""

    __props__ = ("dtype",)
    nin = 1

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype).name
        self.c = f"(({self.dtype}){{0}})"

    def out_dtype(self, inputs):
        return np.dtype(self.dtype)

    def perform(self, x):
        return np.asarray(x).astype(self.dtype)

    def grad_elem(self, inputs, output, gz):
        return [gz if inputs[0].type.is_float else None]


# The op instances are the public functions: ``sn.exp(x)``, ``sn.add(x, y)``.
add, sub, mul, true_div, floor_div, mod, pow = (
    Add(),
    Sub(),
    Mul(),
    TrueDiv(),
    FloorDiv(),
    Mod(),
    Pow(),
)
neg, pos, abs, sign = Neg(), Pos(), Abs(), Sign()
exp, log, sqrt, tanh, sigmoid, sin, cos = Exp(), Log(), Sqrt(), Tanh(), Sigmoid(), Sin(), Cos()
less, less_equal, greater, greater_equal = Less(), LessEqual(), Greater(), GreaterEqual()
equal, not_equal = Equal(), NotEqual()
bitwise_and, bitwise_or, bitwise_xor, invert = BitwiseAnd(), BitwiseOr(), BitwiseXor(), Invert()
divide = true_div
floor, ceil, trunc, round = Floor(), Ceil(), Trunc(), Round()
maximum, minimum, relu, where = Maximum(), Minimum(), Relu(), Where()
switch = where
isnan, isinf, isfinite = IsNan(), IsInf(), IsFinite()


def clip(x, a_min, a_max) -> Variable:
    """x limited to [a_min, a_max]; either bound may be None (but not both), as ``np.clip``."""
    if a_min is None and a_max is None:
        raise ValueError("clip: give a_min, a_max or both (both are None)")
    if a_min is None:
        return minimum(x, a_max)
    if a_max is None:
        return maximum(x, a_min)
    return Clip()(x, a_min, a_max)


def cast(x, dtype) -> Variable:
    """``x`` converted to ``dtype`` (a no-op when it already has it)."""
    x = as_variable(x)
    dtype = as_dtype(dtype)
    return x if x.type.dtype == dtype else Cast(dtype)(x)


def fit_gradient(g, x) -> Variable:
    """A gradient on a broadcast shape, summed to x's shape and cast to x's dtype."""
    return fit_dtype(sum_to_like(g, x), x)


def fit_dtype(g, x) -> Variable:
    """g cast to x's dtype when x is a float of another precision."""
    return cast(g, x.type.dtype) if x.type.is_float and g.type.dtype != x.type.dtype else g
