"""Sums and broadcasts that map a value between a broadcast shape and its own: ``Sum`` (with
its base ``Reduce``), ``BroadcastLike`` and ``SumToLike``, and the helpers every broadcasting
gradient uses (``sum_to_like``, ``broadcast_like``).

They sit below :mod:`~symnb.ops.elemwise` and :mod:`~symnb.ops.reduce`, which both build on
them: an elementwise gradient is summed back to its input's shape, and a sum's gradient is
broadcast back out, so the two families never import each other in a circle. ``Alloc`` (a
value broadcast to a shape known at run time) and ``zeros_like`` sit here too: below
:mod:`~symnb.ops.join`, whose split fills missing gradients with zeros, and below
:mod:`~symnb.ops.creation`, which stacks shape entries with join. In the op catalogue ``Sum``
is listed with the reductions, ``Alloc`` with creation and the ``*Like`` ops with the shape
ops (their ``family``).
"""

from __future__ import annotations

import numpy as np

from symnb.core.dims import DimMismatch, broadcast_dims, format_shape, unify
from symnb.core.op import Op
from symnb.core.types import TensorType, dtype_arg
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import ShapeError
from symnb.ops._axes import CountedAxes, keepdims_flag, no_out, normalize_axis
from symnb.ops._dtypes import probe_dtype
from symnb.ops.shape import _LikeOp, expand_dims
from symnb.ops.shape import shape as shape_of


class Reduce(CountedAxes, Op):
    """Base of reductions: ``axis`` is a sorted tuple of axes, ``keepdims`` keeps them as 1."""

    __props__ = ("axis", "keepdims")
    sorted_axes = True
    impl = None
    kind: str | None = None  # the kernel description's reduction (sum, prod, max, min, all, any)

    def __init__(self, axis: tuple[int, ...], keepdims: bool = False):
        self.axis, self.keepdims = tuple(axis), bool(keepdims)

    def infer_types(self, x):
        shape = reduced_shape(x.type.shape, self.axis, self.keepdims)
        return [TensorType(probe_dtype(self, self.perform, [x]), shape)]

    def perform(self, x):
        return np.asarray(type(self).impl(x, axis=self.axis, keepdims=self.keepdims))

    def result_shape(self, shape):
        """The result's shape for an input of ``shape`` (``ResultShape``)."""
        return reduced_shape(shape, self.axis, self.keepdims)

    def _expanded(self, g):
        """A gradient of the output reshaped to broadcast against the input."""
        return g if self.keepdims else expand_dims(g, self.axis)


def reduced_shape(shape, axis, keepdims):
    if keepdims:
        return tuple(1 if i in axis else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axis)


class Sum(Reduce):
    """Sum of elements over the axes."""

    family = "reduce"
    impl, kind = np.sum, "sum"

    def grad(self, inputs, outputs, output_grads):
        return [broadcast_like(self._expanded(output_grads[0]), inputs[0])]


class BroadcastLike(_LikeOp):
    """g broadcast to like's runtime shape."""

    family = "shape"

    def perform(self, g, like):
        return np.broadcast_to(g, np.shape(like)).copy()

    def grad(self, inputs, outputs, output_grads):
        return [sum_to_like(output_grads[0], inputs[0]), None]


class SumToLike(_LikeOp):
    """g summed over the axes where like is broadcast (leading axes, and length-1 axes)."""

    family = "shape"

    def perform(self, g, like):
        shape = np.shape(like)
        lead = np.ndim(g) - len(shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1
        )
        return np.sum(g, axis=axes).reshape(shape) if axes else np.asarray(g)

    def grad(self, inputs, outputs, output_grads):
        return [broadcast_like(output_grads[0], inputs[0]), None]


class Alloc(Op):
    """``value`` broadcast to a shape known at run time (Theano's ``alloc``, NumPy's
    ``broadcast_to``); ``dims`` is the static shape of the result."""

    functions = (
        "alloc",
        "broadcast_to",
        "zeros",
        "ones",
        "full",
        "zeros_like",
        "ones_like",
        "full_like",
    )
    dtype_rule = "the value's dtype; zeros/ones: ``dtype`` or config.floatX; *_like: x's"
    family = "creation"
    __props__ = ("dims",)

    def __init__(self, dims):
        self.dims = tuple(dims)

    def infer_types(self, value, shape):
        lead = len(self.dims) - value.type.ndim
        if lead < 0:
            raise ShapeError(
                f"broadcast_to: {value.describe()} has more dims than the target shape "
                f"{format_shape(self.dims)}"
            )
        out = list(self.dims)
        for axis, d in enumerate(value.type.shape):
            out[lead + axis] = self._fit(value, lead + axis, d)
        return [TensorType(value.type.dtype, tuple(out))]

    def _fit(self, value, axis, d):
        """The output dim at ``axis``, where the value's dim is d (1 stretches). Where the
        target's size is unknown, d is the result only when d is never 1: a named d may be 1
        and stretch to any size (``broadcast_dims``)."""
        if d == 1:
            return self.dims[axis]
        try:
            if self.dims[axis] is None:
                return broadcast_dims(None, d)
            return unify(self.dims[axis], d)
        except DimMismatch:
            raise ShapeError(
                f"broadcast_to: cannot broadcast {value.describe()} to "
                f"{format_shape(self.dims)}: axis {axis} is {d}, not 1 or {self.dims[axis]}"
            ) from None

    def perform(self, value, shape):
        """A new array filled by broadcasting (4x faster than copying ``broadcast_to``'s
        view: 600 x 10 zeros in 5 us, not 20)."""
        value = np.asarray(value)
        dims = tuple(int(n) for n in shape)
        if value.ndim > len(dims):
            np.broadcast_to(value, dims)  # raises NumPy's error for this case
        out = np.empty(dims, value.dtype)
        out[...] = value
        return out

    def grad(self, inputs, outputs, output_grads):
        return [sum_to_like(output_grads[0], inputs[0]), None]


# -- functions -----------------------------------------------------------------------------
def reducer(cls, numpy_out=False):
    """The public function of a reduction class: ``f(x, axis=None, keepdims=False)``, or with
    ``numpy_out`` NumPy's ``f(x, axis=None, out=None, keepdims=False)`` (``np.max``'s order),
    so that NumPy's positional arguments mean what they mean there."""

    def reduce(x, axis=None, keepdims=False):
        x = as_variable(x)
        name = cls.op_name()
        flag = keepdims_flag(keepdims, name, x)
        return cls(normalize_axis(axis, x.type.ndim, name, x), flag)(x)

    def numpy_reduce(x, axis=None, out=None, keepdims=False):
        no_out(out, cls.op_name(), as_variable(x))
        return reduce(x, axis, keepdims)

    public = numpy_reduce if numpy_out else reduce
    public.__name__ = cls.op_name()
    public.__doc__ = f"{cls.__doc__} ``axis``: int, tuple or None (all); NumPy semantics."
    return public


sum = reducer(Sum)


def broadcast_like(g, like) -> Variable:
    if g.type.shape == like.type.shape:
        return g
    return BroadcastLike()(g, like)


def sum_axes_keep(g, axes) -> Variable:
    return sum(g, axis=axes, keepdims=True) if axes else g


def sum_to_like(g, like) -> Variable:
    """g (broadcast shape) summed back to like's shape; static where shapes allow it."""
    lead = g.type.ndim - like.type.ndim
    if lead:
        g = sum(g, axis=tuple(range(lead)))
    pairs = list(zip(g.type.shape, like.type.shape))
    g = sum_axes_keep(g, tuple(i for i, (a, b) in enumerate(pairs) if b == 1 and a != 1))
    if all(a == b or b == 1 for a, b in pairs) and None not in like.type.shape:
        return g
    if all(a == b and a is not None for a, b in zip(g.type.shape, like.type.shape)):
        return g
    return SumToLike()(g, like)


def full_like(x, fill_value, dtype=None) -> Variable:
    """An array of ``fill_value`` with x's shape and (unless given) x's dtype."""
    return _filled_like(x, fill_value, dtype, "full_like")


def _filled_like(x, fill_value, dtype, what: str) -> Variable:
    x = as_variable(x)
    dtype = dtype_arg(dtype, f"{what} of {x.describe()}", x.type.dtype)
    value = Constant(fill_value, dtype=dtype, casting="unsafe")  # (as np.full_like casts it)
    dims = x.type.shape
    if all(isinstance(d, int) for d in dims):
        return Alloc(dims)(value, Constant(np.array(dims, dtype=np.int64)))
    return Alloc(dims)(value, shape_of(x))


def zeros_like(x, dtype=None) -> Variable:
    """Zeros with x's shape and (unless given) x's dtype."""
    return _filled_like(x, 0, dtype, "zeros_like")


def ones_like(x, dtype=None) -> Variable:
    """Ones with x's shape and (unless given) x's dtype."""
    return _filled_like(x, 1, dtype, "ones_like")


def is_filled(var: Variable, number) -> bool:
    """``var`` is an array every element of which equals ``number``, known at build: a
    constant, or an ``alloc`` of one (what ``zeros_like`` builds). Rules and the scan
    gradient ask it of zeros that a gradient starts from."""
    owner = var.owner
    if owner is not None and isinstance(owner.op, Alloc):
        var = owner.inputs[0]
    if not isinstance(var, Constant):
        return False
    return var.value.size > 0 and bool(np.all(var.value == number))
