"""Reductions over axes (``sum``, ``prod``, ``var``, ``argmax``, ``logsumexp``, ...) with NumPy's
axis/keepdims, and the cumulative ``cumsum``/``cumprod`` along one axis; ``sum``, ``prod``,
``mean``, ``cumsum`` and ``cumprod`` take NumPy's ``dtype``."""

from __future__ import annotations

import numbers

import numpy as np

from symnb.core.dims import format_shape
from symnb.core.op import Op, _at_user_line
from symnb.core.shapes import warnings as shape_warnings
from symnb.core.types import TensorType, as_dtype
from symnb.core.variable import as_variable
from symnb.errors import ArgumentError, DTypeError, ShapeError
from symnb.ops._axes import CountedAxes, keepdims_flag, no_out, normalize_axis, one_axis
from symnb.ops._dtypes import probe_dtype
from symnb.ops.broadcast import (  # noqa: F401 - Reduce and Sum are re-exported
    Reduce,
    Sum,
    broadcast_like,
    reduced_shape,
    reducer,
)
from symnb.ops.broadcast import sum as _sum
from symnb.ops.elemwise import cast, equal, exp, greater, maximum, sqrt, true_div, where
from symnb.ops.layout import flatten, flip
from symnb.ops.numpy_api import numpy_keywords
from symnb.ops.shape import reduced_size


class Mean(Reduce):
    """Arithmetic mean over the axes."""

    impl, kind = np.mean, "sum"

    def grad(self, inputs, outputs, output_grads):
        (x,), (g,) = inputs, output_grads
        count = cast(reduced_size(x, self.axis), g.type.dtype)
        return [broadcast_like(self._expanded(g) / count, x)]


class _Extremum(Reduce):
    """max/min: the gradient is shared equally by the elements equal to the extremum (JAX's
    and PyTorch's ``amax`` rule). Where the ties come from one value repeated (``repeat``,
    ``tile``, a broadcast), their shares add up to that value's gradient, as the numerical
    gradient says; giving each tie the whole gradient (Theano's rule) counted it again per
    copy (docs/autodiff.md)."""

    def grad(self, inputs, outputs, output_grads):
        (x,), (z,), (g,) = inputs, outputs, output_grads
        hit = cast(equal(x, self._expanded(z)), g.type.dtype)
        ties = sum(hit, axis=self.axis, keepdims=True)
        return [broadcast_like(self._expanded(g), x) * hit / ties]

    def infer_types(self, x):
        refuse_empty_axes(self, x, self.axis)
        return super().infer_types(x)

    def result_shape(self, shape):
        """The result's shape, or NumPy's error where a reduced axis has length 0."""
        for a in self.axis:  # (a loop: this module's any and min are the reductions)
            if shape[a] == 0:
                raise ValueError(
                    f"zero-size array to reduction operation {self.op_name()} which has no "
                    f"identity (axis {a} of an array of shape {format_shape(shape)})"
                )
        return super().result_shape(shape)


def refuse_empty_axes(op, x, axes) -> None:
    """max/min/argmax/argmin have no value over nothing: where a reduced axis is known to
    have length 0 (a fixed 0 in x's type) NumPy raises on every call ("zero-size array to
    reduction operation maximum which has no identity", "attempt to get argmax of an empty
    sequence"), so the build refuses it with a ShapeError. A named or unknown length may be
    nonzero and is left to run time."""
    for axis in axes:
        if x.type.shape[axis] == 0 and isinstance(x.type.shape[axis], int):
            over = "all axes" if len(axes) == x.type.ndim > 1 else f"axis {axis}"
            raise ShapeError(
                f"{op.op_name()} over {over} of {x.describe()}: axis {axis} has length 0, "
                f"and the {op.op_name()} of a zero-size array has no value (NumPy raises on "
                "every call)"
            )


class Max(_Extremum):
    """Largest element over the axes."""

    impl, kind = np.max, "max"


class Min(_Extremum):
    """Smallest element over the axes."""

    impl, kind = np.min, "min"


class Prod(Reduce):
    """Product of elements over the axes; its gradient is exact when some elements are 0."""

    impl, kind = np.prod, "prod"

    def grad(self, inputs, outputs, output_grads):
        (x,), (g,) = inputs, output_grads
        return [self._expanded(g) * product_of_others(x, self.axis)]


def product_of_others(x, axis):
    """For each element, the product of the other elements of its slice (no division by 0).

    Where the value is 0 because the slice holds other zeros, it is written as those zeros
    times the rest (``zeros_sum``, 0 in value) so that its own derivative, the Hessian of
    ``prod``, still reaches them: exact at any zeros up to second derivatives."""
    is_zero = equal(x, 0)
    nonzero = where(is_zero, 1, x)
    prod_nonzero = Prod(axis, True)(nonzero)
    zeros = Sum(axis, True)(is_zero)
    zeros_sum = Sum(axis, True)(where(is_zero, x, 0))
    at_zero = where(equal(zeros, 1), 1, where(equal(zeros, 2), zeros_sum - x, 0))
    off_zero = where(equal(zeros, 0), 1, where(equal(zeros, 1), zeros_sum, 0)) / nonzero
    return where(is_zero, at_zero, off_zero) * prod_nonzero


class _Moment(Reduce):
    """var/std: ``ddof`` is NumPy's delta degrees of freedom (divide by N - ddof), any finite
    real number, as NumPy takes it."""

    __props__ = ("axis", "keepdims", "ddof")

    def __init__(self, axis, keepdims=False, ddof=0):
        super().__init__(axis, keepdims)
        self.ddof = _ddof(ddof, type(self).op_name())

    def perform(self, x):
        impl = type(self).impl
        return np.asarray(impl(x, axis=self.axis, keepdims=self.keepdims, ddof=self.ddof))

    def _centered_over_dof(self, x, g):
        """(x - mean) / (N - ddof), in the gradient's dtype."""
        dof = cast(reduced_size(x, self.axis), g.type.dtype) - self.ddof
        return (x - Mean(self.axis, True)(x)) / dof


def _ddof(value, op):
    """``ddof`` as a Python int or float: a float such as 0.5 is kept (truncating it changed
    the result); a bool, a string or a non-finite number is refused (a NaN would make the op
    unequal to itself)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _at_user_line(ArgumentError(f"{op}: ddof must be a real number, not {value!r}"))
    if not np.isfinite(value):
        raise _at_user_line(ArgumentError(f"{op}: ddof must be finite, not {value!r}"))
    return int(value) if isinstance(value, numbers.Integral) else float(value)


class Var(_Moment):
    """Variance over the axes."""

    impl = np.var

    def grad(self, inputs, outputs, output_grads):
        (x,), (g,) = inputs, output_grads
        return [self._expanded(g) * 2 * self._centered_over_dof(x, g)]


class Std(_Moment):
    """Standard deviation over the axes."""

    impl = np.std

    def grad(self, inputs, outputs, output_grads):
        (x,), (z,), (g,) = inputs, outputs, output_grads
        return [self._expanded(g) * self._centered_over_dof(x, g) / self._expanded(z)]


class _Boolean(Reduce):
    """all/any: boolean results, no gradient."""

    dtype_rule = "bool"
    differentiable = False

    def grad(self, inputs, outputs, output_grads):
        return [None]


class All(_Boolean):
    """True where every element over the axes is nonzero."""

    impl, kind = np.all, "all"


class Any(_Boolean):
    """True where some element over the axes is nonzero."""

    impl, kind = np.any, "any"


def _logsumexp(x, axis, keepdims):
    """log(sum(exp(x))) shifted by the max, so it neither overflows nor underflows.

    The dtype is SciPy's: float and complex inputs keep theirs, others give float64 (a
    complex one is shifted by the max of its real part: its phase is kept).
    """
    x = np.asarray(x)
    x = x if x.dtype.kind in "fc" else x.astype(np.float64)
    shift = np.max(x.real, axis=axis, keepdims=True, initial=-np.inf)
    shift = np.where(np.isfinite(shift), shift, 0).astype(x.dtype)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - shift), axis=axis, keepdims=True)) + shift
    return out if keepdims else np.squeeze(out, axis=axis)


class Logsumexp(Reduce):
    """log(sum(exp(x))) over the axes, computed stably (``scipy.special.logsumexp``)."""

    dtype_rule = "x's float or complex dtype; float64 for integers and bools (SciPy's rule)"
    impl = staticmethod(_logsumexp)

    def grad(self, inputs, outputs, output_grads):
        (x,), (z,), (g,) = inputs, outputs, output_grads
        return [self._expanded(g) * exp(x - self._expanded(z))]


class _ArgExtremum(CountedAxes, Op):
    """argmax/argmin: int64 indices along one axis, or into the flattened array (axis None)."""

    dtype_rule = "int64"
    __props__ = ("axis", "keepdims")
    differentiable = False
    impl = None

    def __init__(self, axis: int | None, keepdims: bool = False):
        self.axis, self.keepdims = axis, bool(keepdims)

    def infer_types(self, x):
        shape_warnings.axis_hook(self, x, self.axis)
        axes = tuple(range(x.type.ndim)) if self.axis is None else (self.axis,)
        refuse_empty_axes(self, x, axes)
        return [TensorType("int64", reduced_shape(x.type.shape, axes, self.keepdims))]

    def perform(self, x):
        out = type(self).impl(x, axis=self.axis, keepdims=self.keepdims)
        return np.asarray(out, dtype=np.int64)

    def grad(self, inputs, outputs, output_grads):
        return [None]


class Argmax(_ArgExtremum):
    """Index of the largest element (the first one on ties)."""

    impl = staticmethod(np.argmax)


class Argmin(_ArgExtremum):
    """Index of the smallest element (the first one on ties)."""

    impl = staticmethod(np.argmin)


class _Cumulative(CountedAxes, Op):
    """cumsum/cumprod along one axis (the public functions flatten for ``axis=None``)."""

    dtype_rule = "NumPy's for the same cumsum/cumprod (small ints widen to int64)"
    __props__ = ("axis",)
    impl = None

    def __init__(self, axis: int):
        self.axis = int(axis)

    def infer_types(self, x):
        return [x.type.with_dtype(probe_dtype(self, self.perform, [x]))]

    def perform(self, x):
        return np.asarray(type(self).impl(x, axis=self.axis))

    def _reverse_cumsum(self, g):
        """Sums from each position to the end of the axis: the adjoint of cumsum."""
        return flip(Cumsum(self.axis)(flip(g, self.axis)), self.axis)


class Cumsum(_Cumulative):
    """Running sum along the axis."""

    impl = staticmethod(np.cumsum)

    def grad(self, inputs, outputs, output_grads):
        return [self._reverse_cumsum(output_grads[0])]


class Cumprod(_Cumulative):
    """Running product along the axis; its gradient is exact when elements are 0."""

    impl = staticmethod(np.cumprod)

    def grad(self, inputs, outputs, output_grads):
        """Past the first zero every term holds that zero: written as the zero times the
        gradient of the running product without it, so that second derivatives reach it."""
        (x,), (z,), (g,) = inputs, outputs, output_grads
        is_zero = equal(x, 0)
        zeros_so_far = Cumsum(self.axis)(is_zero)
        first_zero = is_zero & equal(zeros_so_far, 1)
        without_it = where(first_zero, 1, x)
        first_order = self._first_order(without_it, Cumprod(self.axis)(without_it), g)
        the_zero = Sum((self.axis,), True)(where(first_zero, x, 0))
        past_it = greater(zeros_so_far, 0) & ~first_zero
        return [where(past_it, the_zero * first_order, self._first_order(x, z, g))]

    def _first_order(self, x, z, g):
        """The gradient, exact in value at any zeros (0 past the first zero)."""
        is_zero = equal(x, 0)
        zeros_so_far = Cumsum(self.axis)(is_zero)
        before_zero = equal(zeros_so_far, 0)
        first_zero = is_zero & equal(zeros_so_far, 1)
        plain = self._reverse_cumsum(g * z) / where(before_zero, x, 1)
        skip_first_zero = Cumprod(self.axis)(where(first_zero, 1, x))
        at_zero = where(first_zero, self._reverse_cumsum(g * skip_first_zero), 0)
        return where(before_zero, plain, at_zero)


_mean = reducer(Mean)
max = reducer(Max, numpy_out=True)
min = reducer(Min, numpy_out=True)
_prod = reducer(Prod)
all = reducer(All, numpy_out=True)
any = reducer(Any, numpy_out=True)
logsumexp = reducer(Logsumexp)


# -- NumPy's dtype= ------------------------------------------------------------------------
def _in_dtype(reduce, x, dtype, **kwargs):
    """``reduce`` with NumPy's ``dtype``: the elements converted to it first, the result in
    it (an int8 sum wraps in int8; floats summed as ints are truncated first). Integer sums
    and products run in int64 and are converted back, which agrees with NumPy's narrower
    arithmetic modulo 2**bits."""
    x = as_variable(x)
    if dtype is None:
        return reduce(x, **kwargs)
    dtype = _target_dtype(reduce.__name__.lstrip("_"), x, dtype)
    return cast(reduce(cast(x, dtype), **kwargs), dtype)


def _target_dtype(name, x, dtype):
    try:
        return as_dtype(dtype)
    except TypeError as exc:
        message = f"{name}: dtype={dtype!r} for {x.describe()}: {exc}"
        raise _at_user_line(DTypeError(message)) from None


def sum(x, axis=None, dtype=None, out=None, keepdims=False):  # noqa: A001 - NumPy's name
    """Sum of elements over the axes, in NumPy's argument order. ``axis``: int, tuple or None
    (all); ``dtype``: NumPy's (the elements converted to it, the sum in it)."""
    no_out(out, "sum", as_variable(x))
    return _in_dtype(_sum, x, dtype, axis=axis, keepdims=keepdims)


def prod(x, axis=None, dtype=None, out=None, keepdims=False):
    """Product of elements over the axes, in NumPy's argument order. ``axis``: int, tuple or
    None (all); ``dtype``: NumPy's (the elements converted to it, the product in it)."""
    no_out(out, "prod", as_variable(x))
    return _in_dtype(_prod, x, dtype, axis=axis, keepdims=keepdims)


def mean(x, axis=None, dtype=None, out=None, keepdims=False):
    """Arithmetic mean over the axes, in NumPy's argument order. ``axis``: int, tuple or None
    (all); ``dtype``: NumPy's (the elements converted to it, the mean in it; for an integer
    dtype the sum in it divided by the count and truncated, as NumPy does; float16 given as
    the dtype is summed in float16, as NumPy does, where float16 elements alone are summed in
    float32)."""
    x = as_variable(x)
    no_out(out, "mean", x)
    target = None if dtype is None else _target_dtype("mean", x, dtype)
    if target is None or target.kind in "fc" and target != np.float16:
        return _in_dtype(_mean, x, dtype, axis=axis, keepdims=keepdims)
    total = sum(x, axis=axis, keepdims=keepdims, dtype=dtype)
    count = reduced_size(x, normalize_axis(axis, x.type.ndim, "mean", x))
    return cast(true_div(total, count), total.type.dtype)


def _moment(cls):
    name = cls.op_name()

    def run(x, axis, keepdims, ddof):
        flag = keepdims_flag(keepdims, name, x)
        return cls(normalize_axis(axis, x.type.ndim, name, x), flag, ddof)(x)

    @numpy_keywords
    def moment(x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        x = as_variable(x)
        no_out(out, name, x)
        target = None if dtype is None else _target_dtype(name, x, dtype)
        if target is not None and not _converts_first(x.type.dtype, target):
            return _moment_in(cls, x, target, axis, keepdims, ddof)
        return _in_dtype(run, x, dtype, axis=axis, keepdims=keepdims, ddof=ddof)

    run.__name__ = moment.__name__ = name
    moment.__doc__ = (
        f"{cls.__doc__} In NumPy's argument order: ``axis``: int, tuple or None; ``dtype``: "
        "NumPy's, in NumPy's steps (the mean summed in it, the deviations ``x - mean`` in the "
        "promotion of x's dtype and it, the squares summed in it, the result in it; an "
        "integer or bool dtype so truncates the mean and the quotient and wraps the squares); "
        "``ddof`` as in NumPy (NumPy 2's ``correction=`` too)."
    )
    return moment


def _converts_first(x_dtype, dtype: np.dtype) -> bool:
    """Whether NumPy's var/std of x with ``dtype`` are those of x converted to ``dtype``: a
    float or complex dtype that x's dtype promotes to, where ``x - mean`` converts x to it
    just as the sum of the mean does (float32 x with dtype float64, int16 x with float32)."""
    return dtype.kind in "fc" and np.promote_types(x_dtype, dtype) == dtype


def _moment_in(cls, x, dtype: np.dtype, axis, keepdims, ddof):
    """var/std with a ``dtype`` that x's dtype does not promote to (any integer or bool one,
    or a float or complex one narrower than x's), in NumPy's steps (``_var``/``_std`` of
    numpy/_core/_methods.py): the mean is the sum in ``dtype`` divided by the count and
    converted back (truncated for an integer dtype), the deviations ``x - mean`` take NumPy's
    promotion of the two dtypes (float32 x with dtype float16: float32, int16 x: float32),
    their squares are in it (wrapping for integers; ``re**2 + im**2`` for a complex x), the
    sum of squares is in ``dtype`` and its quotient by ``max(N - ddof, 0)`` converted back;
    std the square root of that. Converting the elements to ``dtype`` first rounded every
    deviation: float32 ``[1000.1, 1000.2, 1000.3, 1000.4]`` with dtype float16 gave 0.125,
    NumPy 0.075. What NumPy refuses is a DTypeError at the user's line: a bool x with dtype
    bool (a boolean subtract), std with an integer or bool dtype and an output of one or more
    dims (NumPy cannot write sqrt's floats into it); and a complex x with a real dtype, where
    NumPy discards the imaginary parts of the mean only and still counts them in the
    deviations, a number that is neither x's variance nor its real parts'."""
    name = cls.op_name()
    ddof = _ddof(ddof, name)
    flag = keepdims_flag(keepdims, name, x)
    axes = normalize_axis(axis, x.type.ndim, name, x)
    given = f"{name}: dtype={dtype.name} for {x.describe()}"
    if x.type.dtype.kind == "c" and dtype.kind != "c":
        raise _at_user_line(
            DTypeError(
                f"{given}: NumPy would discard the imaginary parts in the mean only (a "
                "ComplexWarning) and still count them in the deviations, a number that is "
                f"neither x's {name} nor its real parts'\n  hint: sn.{name}(x) of a complex x is "
                f"already real; for the real parts' {name}, cast x to a real dtype first"
            )
        )
    if dtype.kind == "b" and x.type.dtype.kind == "b":
        raise _at_user_line(
            DTypeError(
                f"{given}: NumPy refuses it (the deviations from the mean would be a boolean "
                f"subtract)\n  hint: sn.{name}(x, dtype='int64') or sn.{name}(x) (float64)"
            )
        )
    out_ndim = x.type.ndim if flag else x.type.ndim - len(axes)
    if cls is Std and dtype.kind in "biu" and out_ndim > 0:
        raise _at_user_line(
            DTypeError(
                f"{given}, axis={axis!r}, keepdims={flag}: NumPy refuses it (sqrt's float "
                f"output cannot be written into the {dtype.name} array of variances); only a "
                "reduction to one number is truncated to the dtype\n  hint: "
                f"sn.sqrt(sn.var(x, axis, dtype='{dtype.name}')) or a float dtype"
            )
        )
    count = reduced_size(x, axes)
    mean = cast(true_div(_in_dtype(_sum, x, dtype, axis=axes, keepdims=True), count), dtype)
    deviation = x - mean
    if x.type.dtype.kind == "c":  # NumPy's fast path: |x - mean|**2 as re**2 + im**2
        square = deviation.real * deviation.real + deviation.imag * deviation.imag
    else:
        square = deviation * deviation
    total = _in_dtype(_sum, square, dtype, axis=axes, keepdims=flag)
    result = cast(true_div(total, maximum(count - ddof, 0)), dtype)
    return cast(sqrt(result), dtype) if cls is Std else result


var = _moment(Var)
std = _moment(Std)


def _argreducer(cls):
    def arg_reduce(x, axis=None, out=None, *, keepdims=False):
        x = as_variable(x)
        no_out(out, cls.op_name(), x)
        flag = keepdims_flag(keepdims, cls.op_name(), x)
        if axis is not None:
            axis = one_axis(axis, x.type.ndim, cls.op_name(), x, or_none=True)
        return cls(axis, flag)(x)

    arg_reduce.__name__ = cls.op_name()
    arg_reduce.__doc__ = f"{cls.__doc__} ``axis``: one int or None (the flattened array)."
    return arg_reduce


argmax = _argreducer(Argmax)
argmin = _argreducer(Argmin)


def _cumulative(cls):
    def run(x, axis):
        if axis is None:
            x, axis = flatten(x), 0
        return cls(one_axis(axis, x.type.ndim, cls.op_name(), x, or_none=True))(x)

    def cumulate(x, axis=None, dtype=None, out=None):
        no_out(out, cls.op_name(), as_variable(x))
        return _in_dtype(run, x, dtype, axis=axis)

    run.__name__ = cumulate.__name__ = cls.op_name()
    cumulate.__doc__ = (
        f"{cls.__doc__} In NumPy's argument order: ``axis=None`` works on the flattened "
        "array; ``dtype``: NumPy's (the elements converted to it, the result in it)."
    )
    return cumulate


cumsum = _cumulative(Cumsum)
cumprod = _cumulative(Cumprod)
