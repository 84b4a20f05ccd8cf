"""Sorting along an axis: ``sort`` (differentiable: the gradient follows the permutation)
and ``argsort`` (integer indices, no gradient). ``axis=None`` sorts the flattened array."""

from __future__ import annotations

import numpy as np

from symnb.core.op import Op, _at_user_line
from symnb.core.types import TensorType
from symnb.core.variable import Variable, as_variable
from symnb.errors import ArgumentError
from symnb.ops._axes import CountedAxes, one_axis
from symnb.ops.layout import flatten
from symnb.ops.shape import _LikeOp

# One algorithm for the forward sort and for the permutation its gradient replays, so ties
# are broken the same way in both.
_KIND = "stable"


class Sort(CountedAxes, Op):
    """The elements sorted along ``axis`` (ascending; NaNs last, as in NumPy)."""

    dtype_rule = "x's dtype"
    __props__ = ("axis",)
    keeps_shape = True  # (not run for its shape alone: shape_source)

    def __init__(self, axis: int):
        self.axis = int(axis)

    def infer_types(self, x):
        return [x.type]

    def perform(self, x):
        return np.sort(x, axis=self.axis, kind=_KIND)

    def grad(self, inputs, outputs, output_grads):
        return [_Unsort(self.axis)(output_grads[0], inputs[0])]


class Argsort(CountedAxes, Op):
    """The int64 indices that sort x along ``axis``; no gradient (it is piecewise constant)."""

    dtype_rule = "int64"
    __props__ = ("axis",)
    differentiable = False
    keeps_shape = True

    def __init__(self, axis: int):
        self.axis = int(axis)

    def infer_types(self, x):
        return [TensorType("int64", x.type.shape)]

    def perform(self, x):
        return np.argsort(x, axis=self.axis, kind=_KIND).astype(np.int64, copy=False)

    def grad(self, inputs, outputs, output_grads):
        return [None]


class _Unsort(CountedAxes, _LikeOp):
    """The gradient of Sort: g (in sorted order) sent back to where each element came from."""

    __props__ = ("axis",)

    def __init__(self, axis):
        self.axis = axis

    def perform(self, g, like):
        order = np.argsort(like, axis=self.axis, kind=_KIND)
        out = np.empty_like(g)
        np.put_along_axis(out, order, g, axis=self.axis)
        return out

    def grad(self, inputs, outputs, output_grads):
        return [_SortLike(self.axis)(output_grads[0], inputs[1]), None]


class _SortLike(CountedAxes, _LikeOp):
    """g permuted the way sorting ``like`` permutes it (the adjoint of _Unsort)."""

    __props__ = ("axis",)

    def __init__(self, axis):
        self.axis = axis

    def perform(self, g, like):
        order = np.argsort(like, axis=self.axis, kind=_KIND)
        return np.take_along_axis(g, order, axis=self.axis)

    def grad(self, inputs, outputs, output_grads):
        return [_Unsort(self.axis)(output_grads[0], inputs[1]), None]


#: NumPy's sort kinds: each gives the same sorted values; symnb's stable order of ties is
#: one NumPy's unstable kinds may give too
KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _along_axis(cls, x, axis, kind=None, stable=None):
    x = as_variable(x)
    _check_kind(cls.op_name(), x, kind, stable)
    if axis is None:
        x, axis = flatten(x), 0
    return cls(one_axis(axis, x.type.ndim, cls.op_name(), x, or_none=True))(x)


def _check_kind(op: str, x: Variable, kind, stable) -> None:
    """NumPy 2's ``kind``/``stable``: one of ``KINDS``, and a bool or None (not a truthy
    value: ``stable=1``), not both given (NumPy refuses that too)."""
    kind_ok = kind is None or isinstance(kind, str) and kind in KINDS
    stable_ok = stable is None or isinstance(stable, (bool, np.bool_))
    if kind_ok and stable_ok and (kind is None or stable is None):
        return
    if not kind_ok:
        asked = f"kind={kind!r}; NumPy's kinds are {', '.join(map(repr, KINDS[1:]))}"
    elif not stable_ok:
        asked = f"stable={stable!r}; stable is True, False or None"
    else:
        asked = f"kind={kind!r} and stable={stable!r}; give one of them, as NumPy asks"
    raise _at_user_line(
        ArgumentError(
            f"{op} of {x.describe()}: {asked} (symnb's sort is always stable: ties keep "
            "their order)"
        )
    )


def sort(x, axis=-1, kind=None, *, stable=None) -> Variable:
    """x sorted along ``axis`` (None: the flattened array), as ``np.sort``. Always a stable
    sort, whatever ``kind`` or ``stable`` ask (NumPy's kinds give the same values)."""
    return _along_axis(Sort, x, axis, kind, stable)


def argsort(x, axis=-1, kind=None, *, stable=None) -> Variable:
    """Indices that sort x along ``axis`` (None: the flattened array), as ``np.argsort``.
    Always stable: equal elements keep their order, as with ``kind="stable"`` (an order
    NumPy's other kinds may give too)."""
    return _along_axis(Argsort, x, axis, kind, stable)
