"""Reductions over axes (``sum``, ``mean``, ``max``, ``min``), with NumPy's axis/keepdims."""

from __future__ import annotations

import numpy as np

from symnb.core.op import Op
from symnb.core.types import TensorType
from symnb.core.variable import as_variable
from symnb.ops._axes import normalize_axis
from symnb.ops._dtypes import probe_dtype


class Reduce(Op):
    """Base of reductions: ``axis`` is a sorted tuple of axes, ``keepdims`` keeps them as 1."""

    __props__ = ("axis", "keepdims")
    impl = None
    c_identity: str | None = None  # the kernel's start value, e.g. "0"
    c_combine: str | None = None  # the kernel's accumulate step, e.g. "{acc} + {x}"

    def __init__(self, axis: tuple[int, ...], keepdims: bool = False):
        self.axis, self.keepdims = tuple(axis), bool(keepdims)

    def infer_types(self, x):
        shape = reduced_shape(x.type.shape, self.axis, self.keepdims)
        return [TensorType(probe_dtype(self, self.perform, [x]), shape)]

    def perform(self, x):
        return np.asarray(type(self).impl(x, axis=self.axis, keepdims=self.keepdims))

    def _expanded(self, g):
        """A gradient of the output reshaped to broadcast against the input."""
        from symnb.ops.shape import expand_dims

        return g if self.keepdims else expand_dims(g, self.axis)


def reduced_shape(shape, axis, keepdims):
    if keepdims:
        return tuple(1 if i in axis else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axis)


class Sum(Reduce):
    """Sum of elements over the axes."""

    impl, c_identity, c_combine = np.sum, "0", "{acc} + {x}"

    def grad(self, inputs, outputs, output_grads):
        from symnb.ops.shape import broadcast_like

        return [broadcast_like(self._expanded(output_grads[0]), inputs[0])]


class Mean(Reduce):
    """Arithmetic mean over the axes."""

    impl, c_identity, c_combine = np.mean, "0", "{acc} + {x}"

    def grad(self, inputs, outputs, output_grads):
        from symnb.ops.elemwise import cast
        from symnb.ops.shape import broadcast_like, reduced_size

        (x,), (g,) = inputs, output_grads
        count = cast(reduced_size(x, self.axis), g.type.dtype)
        return [broadcast_like(self._expanded(g) / count, x)]


class _Extremum(Reduce):
    """max/min: the gradient goes to every element equal to the extremum."""

    def grad(self, inputs, outputs, output_grads):
        from symnb.ops.elemwise import cast, equal
        from symnb.ops.shape import broadcast_like

        (x,), (z,), (g,) = inputs, outputs, output_grads
        hit = cast(equal(x, self._expanded(z)), g.type.dtype)
        return [broadcast_like(self._expanded(g), x) * hit]


class Max(_Extremum):
    """Largest element over the axes."""

    impl, c_identity, c_combine = np.max, "-INFINITY", "fmax({acc}, {x})"


class Min(_Extremum):
    """Smallest element over the axes."""

    impl, c_identity, c_combine = np.min, "INFINITY", "fmin({acc}, {x})"


def _reducer(cls):
    def reduce(x, axis=None, keepdims=False):
        x = as_variable(x)
        op = cls(normalize_axis(axis, x.type.ndim, cls.op_name(), x), keepdims)
        return op(x)

    reduce.__name__ = cls.op_name()
    reduce.__doc__ = f"{cls.__doc__} ``axis``: int, tuple or None (all); NumPy semantics."
    return reduce


sum = _reducer(Sum)
mean = _reducer(Mean)
max = _reducer(Max)
min = _reducer(Min)
