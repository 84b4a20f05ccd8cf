"""Theano's functions that pick elements: ``nonzero`` (and ``flatnonzero``,
``nonzero_values``), ``diagonal`` for any two axes, ``argmax``/``argmin``/
``max_and_argmax`` over several axes, ``sort``/``argsort`` with Theano's arguments, and
``topk``/``argtopk``/``topk_and_argtopk`` built on them."""

from __future__ import annotations

import numpy as np

from symnb import ops as sn
from symnb.compat.theano.configparser import theano_dtype
from symnb.compat.theano.tensor.reductions import _axis
from symnb.core.dims import is_int
from symnb.core.op import _at_user_line
from symnb.core.variable import Variable, as_variable
from symnb.errors import DTypeError, ShapeError
from symnb.ops._axes import diagonal_offset, normalize_axis, one_axis
from symnb.ops.checks import at_most


def nonzero(a, return_matrix=False):
    """``T.nonzero``: a tuple of int64 index vectors, one per dim, of the nonzero elements
    in row-major order (NumPy's); with ``return_matrix=True`` the same as an
    (ndim, count) matrix. Their length is known when the function runs."""
    a = as_variable(a)
    if a.type.ndim == 0:
        raise _at_user_line(ShapeError(f"T.nonzero: {a.describe()} is 0-d; give an array"))
    rest = flatnonzero(a)
    shape = sn.shape(a)
    coords = []
    for axis in range(a.type.ndim - 1, 0, -1):
        coords.append(sn.mod(rest, shape[axis]))
        rest = sn.floor_div(rest, shape[axis])
    coords = [rest, *reversed(coords)]
    return sn.stack(coords) if return_matrix else tuple(coords)


def flatnonzero(a) -> Variable:
    """``T.flatnonzero``: the int64 positions of the nonzero elements of ``a.flatten()``."""
    a = as_variable(a)
    if a.type.ndim == 0:
        raise _at_user_line(ShapeError(f"T.flatnonzero: {a.describe()} is 0-d; give an array"))
    flat = sn.flatten(a)
    return sn.arange(sn.shape(flat)[0])[sn.not_equal(flat, 0)]


def nonzero_values(a) -> Variable:
    """``T.nonzero_values``: the nonzero elements of ``a.flatten()``."""
    flat = sn.flatten(as_variable(a))
    return flat[sn.not_equal(flat, 0)]


def diagonal(a, offset=0, axis1=0, axis2=1) -> Variable:
    """``T.diagonal`` (NumPy's ``diagonal``): the ``offset`` diagonal over ``axis1`` and
    ``axis2``, as the last axis of the result."""
    a = as_variable(a)
    if a.type.ndim < 2:
        raise _at_user_line(ShapeError(f"T.diagonal: {a.describe()} has fewer than 2 dims"))
    a1 = one_axis(_axis(axis1), a.type.ndim, "T.diagonal", a, "axis1")
    a2 = one_axis(_axis(axis2), a.type.ndim, "T.diagonal", a, "axis2")
    if a1 == a2:
        raise _at_user_line(ShapeError(f"T.diagonal: axis1 and axis2 are both axis {a1}"))
    offset = diagonal_offset(offset, "T.diagonal", "offset", a)
    if a.type.ndim == 2 and (a1, a2) == (0, 1):
        return sn.diag(a, offset)
    rest = [k for k in range(a.type.ndim) if k not in (a1, a2)]
    moved = sn.transpose(a, [*rest, a1, a2])
    shape = sn.shape(a)
    rows, cols = shape[a1] - max(-offset, 0), shape[a2] - max(offset, 0)
    steps = sn.arange(sn.maximum(sn.minimum(rows, cols), 0))
    index = (slice(None),) * len(rest) + (steps + max(-offset, 0), steps + max(offset, 0))
    return moved[index]


def argmax(x, axis=None, keepdims=False) -> Variable:
    """``T.argmax``: ``axis`` may also be several axes, whose elements are then numbered in
    row-major order (Theano's rule)."""
    return _arg_extremum(sn.argmax, x, axis, keepdims)


def argmin(x, axis=None, keepdims=False) -> Variable:
    """``T.argmin``, with several axes as ``argmax``."""
    return _arg_extremum(sn.argmin, x, axis, keepdims)


def max_and_argmax(a, axis=None, keepdims=False) -> list[Variable]:
    """``[max(a, axis), argmax(a, axis)]`` (``axis`` one axis, several, or None)."""
    a = as_variable(a)
    axes = reduced_axes(a, axis, "max_and_argmax")
    return [sn.max(a, axis=axes, keepdims=keepdims), argmax(a, axis, keepdims)]


def reduced_axes(x: Variable, axis, call: str) -> tuple[int, ...] | None:
    """The axes ``T.max``/``T.min``/``T.argmax``/``T.argmin``/``max_and_argmax`` reduce, as
    Theano's ``max_and_argmax`` read them (all five went through it): None for None, else
    ``_axes``' sorted distinct axes, an empty list or tuple meaning every axis (Theano's
    ``if len(axis) == 0: axis = list(range(a.type.ndim))``; NumPy's ``axis=()`` reduces
    none)."""
    if axis is None:
        return None
    return tuple(_axes(x, axis, call)) or tuple(range(x.type.ndim))


def _arg_extremum(find, x, axis, keepdims) -> Variable:
    x = as_variable(x)
    axes = reduced_axes(x, axis, find.__name__)
    if axes is None or len(axes) == x.type.ndim:  # all of them: the flattened index
        return find(x, axis=None, keepdims=keepdims)
    if len(axes) == 1:
        return find(x, axis=axes[0], keepdims=keepdims)
    kept = [k for k in range(x.type.ndim) if k not in axes]
    moved = sn.transpose(x, [*kept, *axes])
    shape = sn.shape(x)
    merged = sn.reshape(moved, [*(shape[k] for k in kept), -1])
    out = find(merged, axis=-1)
    if keepdims:
        out = sn.expand_dims(out, tuple(axes))
    return out


def _axes(x: Variable, axis, call: str) -> list[int]:
    """Theano's ``check_and_normalize_axes``: sorted distinct axes, negatives counted from
    the end first, so ``[-2, 0]`` of a matrix is axis 0 once (an int, a list or a tuple)."""
    axis = _axis(axis)  # (a NumPy array or a constant tensor: its ints)
    listed = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    ndim = x.type.ndim
    # counted from 0 where in range; the others are left for normalize_axis's errors
    listed = [int(k) % ndim if is_int(k) and -ndim <= k < ndim else k for k in listed]
    return list(normalize_axis(list(dict.fromkeys(listed)), ndim, f"T.{call}", x))


def sort(a, axis=-1, kind="quicksort", order=None) -> Variable:
    """``T.sort``: ``kind`` one of NumPy's (``sn.sort``'s ``KINDS``, which Theano's
    ``SortOp`` handed to ``np.sort``; the values are the same for every kind); ``axis=None``
    sorts the flattened tensor, and ``axis`` may be a constant integer tensor, as Theano's
    ``SortOp`` took one."""
    _no_order(order, "sort")
    return sn.sort(a, axis=_axis(axis), kind=kind)


def argsort(a, axis=-1, kind="quicksort", order=None) -> Variable:
    """``T.argsort``: ``kind`` and ``axis`` as for ``sort`` (ties keep their order)."""
    _no_order(order, "argsort")
    return sn.argsort(a, axis=_axis(axis), kind=kind)


def _no_order(order, call: str) -> None:
    if order is not None:
        raise _at_user_line(
            NotImplementedError(f"T.{call}: order= sorts structured arrays, which symnb has not")
        )


def topk(x, kth, axis=-1, sorted=True, idx_dtype="int64") -> Variable:  # noqa: A002
    """``T.topk``: the ``kth`` largest elements of x along ``axis`` (None: the flattened
    x), the ``|kth|`` smallest for a negative ``kth``, in descending order (what Theano's
    ``sorted=True`` promised, docs/theano.md); ``kth`` an int or an integer scalar variable,
    not 0 and at most the axis's length. The gradient goes to the elements picked."""
    return _topk(x, kth, axis, sorted, idx_dtype, "topk")[0]


def argtopk(x, kth, axis=-1, sorted=True, idx_dtype="int64") -> Variable:  # noqa: A002
    """``T.argtopk``: the indices along ``axis`` of ``topk``'s elements, in its order, of
    dtype ``idx_dtype``."""
    return _topk(x, kth, axis, sorted, idx_dtype, "argtopk")[1]


def topk_and_argtopk(x, kth, axis=-1, sorted=True, idx_dtype="int64") -> tuple:  # noqa: A002
    """``T.topk_and_argtopk``: ``(topk(...), argtopk(...))``."""
    return _topk(x, kth, axis, sorted, idx_dtype, "topk_and_argtopk")


def _topk(x, kth, axis, sorted_, idx_dtype, call: str) -> tuple:  # noqa: ARG001 - any order
    """Values and indices of Theano's topk, from a descending argsort (argsort flipped) and
    ``take_along_axis``: the first ``kth`` of it, or its last ``|kth|`` for a negative
    ``kth``. ``sorted=False`` left the order unspecified (NumPy's partition): it is the same."""
    x = as_variable(x)
    if x.type.ndim == 0:
        raise _at_user_line(ShapeError(f"T.{call}: {x.describe()} is 0-d; give an array"))
    if axis is None:
        x, axis = sn.flatten(x), 0
    axis = one_axis(_axis(axis), x.type.ndim, f"T.{call}", x)
    dtype = theano_dtype(idx_dtype, f"T.{call}: idx_dtype")
    if dtype.kind not in "iu":
        raise _at_user_line(
            DTypeError(f"T.{call}: idx_dtype is an integer dtype, not {idx_dtype!r}")
        )
    order = sn.flip(sn.argsort(x, axis=axis), axis=axis)  # descending
    before = (slice(None),) * axis
    n = x.type.shape[axis]
    if isinstance(kth, (int, np.integer)) and not isinstance(kth, bool):
        k = int(kth)
        if k == 0 or (isinstance(n, int) and abs(k) > n):
            why = "must not be 0" if k == 0 else f"is more than the {n} along axis {axis}"
            raise _at_user_line(ShapeError(f"T.{call}: kth={k} of {x.describe()} {why}"))
        picked = order[(*before, slice(None, k) if k > 0 else slice(k, None))]
    else:
        k = as_variable(kth)
        if k.type.ndim != 0 or k.type.dtype.kind not in "iu":
            raise _at_user_line(
                DTypeError(f"T.{call}: kth is an int or an integer scalar, not {k.describe()}")
            )
        length = sn.shape(x)[axis]
        size = sn.abs(k)
        what = f"T.{call}: |kth| of {x.describe()}"
        order = at_most(order, 1, size, f"{what} must not be 0")
        order = at_most(order, size, length, f"{what} is more than the length of axis {axis}")
        start = sn.where(k > 0, 0, length + k)
        stop = sn.where(k > 0, k, length)
        picked = order[(*before, slice(start, stop))]
    values = sn.take_along_axis(x, picked, axis=axis)
    return values, sn.cast(picked, dtype.name)
