"""Picking along one axis with NumPy's semantics: ``np.take`` (written as an index, with its
"raise", "wrap" and "clip" modes) and ``np.take_along_axis`` with its gradient,
``IncAlongAxis``."""

from __future__ import annotations

import numbers

import numpy as np

from symnb.core.dims import DimMismatch, broadcast_dims
from symnb.core.op import Op, _at_user_line, located_call
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import ArgumentError, ShapeError, ShapeIndexError
from symnb.ops._axes import CountedAxes, one_axis
from symnb.ops.elemwise import cast, clip, maximum, mod
from symnb.ops.index import (
    as_index_variable,
    check_integer,
    fit_value_gradient,
    getitem,
    known_size,
    zeros_like,
)
from symnb.ops.shape import reshape
from symnb.ops.shape import shape as shape_of


class TakeAlongAxis(CountedAxes, Op):
    """``np.take_along_axis(x, indices, axis)``: indices has x's rank; other axes broadcast."""

    family = "index"  # (docs/ops.md lists it with indexing)
    __props__ = ("axis",)
    dtype_rule = "the dtype of x"

    def __init__(self, axis):
        self.axis = axis

    def infer_types(self, x, indices):
        return [x.type.with_shape(_along_axis_shape(self, x, indices))]

    def perform(self, x, indices):
        return np.take_along_axis(np.asarray(x), np.asarray(indices), axis=self.axis)

    def grad(self, inputs, outputs, output_grads):
        x, indices = inputs
        zeros = zeros_like(x, output_grads[0].type.dtype)
        return [IncAlongAxis(self.axis)(zeros, indices, output_grads[0]), None]


class IncAlongAxis(CountedAxes, Op):
    """x with ``g`` added at ``take_along_axis`` positions (repeats accumulate); the
    gradient of take_along_axis."""

    family = "index"  # (docs/ops.md lists it with indexing)
    __props__ = ("axis",)
    dtype_rule = "the dtype of x"

    def __init__(self, axis):
        self.axis = axis

    def __str__(self):
        """Spelled by its own name, which its in-place variant's builds on."""
        return f"inc_along_axis[axis={self.axis!r}]"

    __repr__ = __str__

    def infer_types(self, x, indices, v):
        _along_axis_shape(self, x, indices)
        return [x.type]

    def perform(self, x, indices, v):
        return self.update(np.array(x), indices, v)

    def update(self, out, indices, v):
        """``out`` (an array this op may write) with v added at the indices along the axis."""
        indices = np.asarray(indices)
        shape = np.broadcast_shapes(_with_axis(out.shape, self.axis, 1), indices.shape)
        key = _along_axis_key(np.broadcast_to(indices, shape), self.axis, out.shape)
        np.add.at(out, key, np.asarray(v).astype(out.dtype, copy=False))
        return out

    def grad(self, inputs, outputs, output_grads):
        x, indices, v = inputs
        (g,) = output_grads
        return [g, None, fit_value_gradient(TakeAlongAxis(self.axis)(g, indices), v)]


def _with_axis(shape, axis, size):
    return shape[:axis] + (size,) + shape[axis + 1 :]


def _along_axis_key(indices, axis, x_shape):
    """The fancy index that picks ``indices`` along ``axis`` and every position elsewhere
    (position 0 on axes where x has length 1 and was broadcast)."""
    grids = np.indices(indices.shape, sparse=True)
    return tuple(indices if k == axis else grid * (x_shape[k] != 1) for k, grid in enumerate(grids))


def _along_axis_shape(op, x, indices):
    check_integer(indices, f"{op}: the indices")
    if indices.type.ndim != x.type.ndim:
        raise ShapeError(
            f"{op}: indices {indices.describe()} must have the rank of {x.describe()} "
            f"({x.type.ndim}), not {indices.type.ndim}"
        )
    out = []
    for axis, (a, b) in enumerate(zip(x.type.shape, indices.type.shape)):
        if axis == op.axis:
            out.append(b)
            continue
        try:
            out.append(broadcast_dims(a, b))
        except DimMismatch:
            raise ShapeError(
                f"{op}: indices {indices.describe()} do not broadcast against {x.describe()} "
                f"on axis {axis} ({a} vs {b})"
            ) from None
    return tuple(out)


TAKE_MODES = ("raise", "wrap", "clip")


def take(x, indices, axis=None, mode="raise") -> Variable:
    """``np.take``: elements along ``axis`` (of the flattened x when ``axis`` is None), with
    NumPy's ``mode``: "raise" (an index out of range is an error, a negative one counts from
    the end), "wrap" (each index taken modulo the axis's length) or "clip" (each index
    limited to [0, length - 1], so a negative one reads the first element); the gradient
    goes to the element each wrapped or clipped index read."""
    x = as_variable(x)
    if not isinstance(mode, str) or mode not in TAKE_MODES:
        raise _at_user_line(
            ArgumentError(
                f"take of {x.describe()}: mode={mode!r} is not a mode; give one of "
                + ", ".join(map(repr, TAKE_MODES))
            )
        )
    indices = _take_indices(indices, x)
    if axis is None:
        x, axis = (reshape(x, (-1,)) if x.type.ndim != 1 else x), 0
    else:
        axis = one_axis(axis, x.type.ndim, "take", x)
    if mode != "raise":
        indices = located_call(_in_range, x, axis, indices, mode)
    return getitem(x, (slice(None),) * axis + (indices,))


def _in_range(x, axis, indices, mode):
    """take's indices wrapped or clipped into x's axis: computed now where the length and
    the indices are known, else in the graph (an index into an empty axis stays an error)."""
    if not isinstance(indices, int):
        check_integer(indices, f"take of {x.describe()}: the indices")  # never truncated
    n = x.type.shape[axis]
    count = 1 if isinstance(indices, int) else known_size(indices.type.shape)
    if n == 0 and count:  # (constant or computed: their number is known either way)
        what = indices if isinstance(indices, int) else indices.describe()
        raise ShapeIndexError(
            f"take(mode={mode!r}) from axis {axis} of {x.describe()}: the axis is empty, so "
            f"no index reads an element ({count} given: {what})"
        )
    known = isinstance(indices, int) or isinstance(indices, Constant)
    if known and isinstance(n, int):
        if n == 0:
            return indices  # (no index: nothing to read)
        value = indices if isinstance(indices, int) else indices.value
        if isinstance(value, int):
            return value % n if mode == "wrap" else min(max(value, 0), n - 1)
        value = np.asarray(value, dtype=np.int64)
        return Constant(np.mod(value, n) if mode == "wrap" else np.clip(value, 0, n - 1))
    indices = cast(indices if isinstance(indices, Variable) else Constant(indices), "int64")
    length = getitem(shape_of(x), axis)
    if mode == "wrap":
        return mod(indices, maximum(length, 1))  # an empty axis: 0, then out of range
    return clip(indices, 0, length - 1)


def _take_indices(indices, x):
    """np.take's indices are integers: bools are 0 and 1 there, never a mask as in
    ``x[mask]``; a slice or None is no index (NumPy refuses them too)."""
    if isinstance(indices, numbers.Integral) and not isinstance(indices, bool):
        return int(indices)
    var = located_call(as_index_variable, indices, x)
    return cast(var, "int64") if var.type.dtype.kind == "b" else var


def take_along_axis(x, indices, axis) -> Variable:
    """``np.take_along_axis``: pick along ``axis`` with indices of x's rank; ``axis=None``
    picks from the flattened x with a vector of indices (NumPy's, as for sort)."""
    x, indices = as_variable(x), as_variable(indices)
    if axis is None and indices.type.ndim != 1:
        why = f"with axis=None (x flattened) indices are a vector, not {indices.describe()}"
        raise _at_user_line(ShapeError(f"take_along_axis of {x.describe()}: {why}"))
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = one_axis(axis, x.type.ndim, "take_along_axis", x)
    return TakeAlongAxis(axis)(x, indices)
