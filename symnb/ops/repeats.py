"""``repeat``, ``tile`` and ``roll`` whose counts and shifts are ints or variables.

Ints build one layout op (``Repeat``, ``Tile``, ``Roll`` in ``layout.py``). A count known
only at run time (``sn.repeat(h0, x.shape[0], axis=0)``, the RNN idiom) is built from ops
every backend has, as Theano builds it: a new axis beside the stretched one, broadcast to the
count and merged by a reshape. A count per element and a symbolic shift gather along the
axis (``take``). The gradients are those ops' own.
"""

from __future__ import annotations

import numbers

import numpy as np

from symnb.core.op import Op, _at_user_line
from symnb.core.types import TensorType
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import DTypeError, ShapeError, ShapeTypeError
from symnb.ops._axes import axis_entries, one_axis
from symnb.ops.checks import in_domain
from symnb.ops.creation import arange, broadcast_to
from symnb.ops.elemwise import cast, maximum, mod
from symnb.ops.index import getitem
from symnb.ops.join import stack
from symnb.ops.layout import Repeat, Roll, Tile, flatten
from symnb.ops.shape import expand_dims, reshape, reshape_like, shape
from symnb.ops.take import take


class RepeatIndices(Op):
    """``np.repeat(arange(n), counts)``: where each of the ``n`` elements of a repeated axis
    lands, for counts known only at run time (one per element, or one for all)."""

    dtype_rule = "int64"
    differentiable = False
    family = "layout"

    def infer_types(self, counts, n):
        return [TensorType("int64", (None,))]

    def perform(self, counts, n):
        counts, n = np.asarray(counts), int(n)
        if counts.shape not in ((n,), (1,)):
            raise ValueError(
                f"repeat: {counts.size} counts for an axis of {n} elements; give one count "
                "per element, or one for all"
            )
        if counts.size and counts.min() < 0:
            raise ValueError(f"repeat: counts must be >= 0, got {counts.min()}")
        return np.repeat(np.arange(n, dtype=np.int64), np.broadcast_to(counts, (n,)))

    def grad(self, inputs, outputs, output_grads):
        return [None, None]


# -- public functions ----------------------------------------------------------------------
def repeat(x, repeats, axis=None) -> Variable:
    """Repeat each element ``repeats`` times along ``axis`` (None: of the flattened array), as
    ``np.repeat``: ``repeats`` is an int, an integer scalar variable (``x.shape[0]``) or one
    count per element (a list, an array or an integer vector variable; one count serves all)."""
    x = as_variable(x)
    if axis is None:
        x, axis = flatten(x), 0
    axis = one_axis(axis, x.type.ndim, "repeat", x)
    counts = _counts(repeats, "repeat", "repeats")
    if isinstance(counts, np.ndarray) and counts.size == 1:
        counts = int(counts[0])
    if isinstance(counts, int):
        if counts < 0:
            raise _at_user_line(ShapeError(f"repeat: repeats must be >= 0, not {repeats}"))
        return Repeat(counts, axis)(x)
    if isinstance(counts, np.ndarray):
        return _repeat_each(x, counts, axis)
    if counts.type.ndim == 0:
        return _stretch(x, {axis: counts}, before=False)
    if counts.type.shape[0] == 1:
        return _stretch(x, {axis: getitem(counts, 0)}, before=False)
    return take(x, RepeatIndices()(counts, _size_var(x, axis)), axis)


def tile(x, reps) -> Variable:
    """The array repeated ``reps`` times per axis, as ``np.tile`` (reps and axes aligned
    right); each rep is an int or an integer scalar variable, ``reps`` may also be an integer
    vector variable of known length."""
    x = as_variable(x)
    reps = _rep_list(reps, "tile", "reps")
    if any(isinstance(r, int) and r < 0 for r in reps):
        raise _at_user_line(ShapeError(f"tile: reps must be >= 0, not {tuple(reps)}"))
    if len(reps) > x.type.ndim:
        x = expand_dims(x, tuple(range(len(reps) - x.type.ndim)))
    reps = [1] * (x.type.ndim - len(reps)) + reps
    if all(isinstance(r, int) for r in reps):
        return Tile(tuple(reps))(x)
    return _stretch(x, {i: r for i, r in enumerate(reps) if not _is_int(r, 1)}, before=True)


def roll(x, shift, axis=None) -> Variable:
    """Shift elements by ``shift`` along ``axis``, wrapping around, as ``np.roll``; a shift is
    an int or an integer scalar variable (or a vector variable of one per axis)."""
    x = as_variable(x)
    if axis is None:
        shifts = _rep_list(shift, "roll", "shift", length=1)
        if len(shifts) != 1:
            raise _at_user_line(ShapeError(f"roll: {len(shifts)} shifts for axis=None; give one"))
        s = shifts[0]
        if isinstance(s, int):
            return Roll(s, None)(x)
        return reshape_like(_roll_axis(flatten(x), s, 0), x)
    if isinstance(axis, np.ndarray) and axis.ndim == 1 and axis.dtype.kind in "iu":
        axis = axis.tolist()  # (np.roll takes an array of axes; the reductions do not)
    axes = axis_entries(axis, "roll", x)
    shifts = _rep_list(shift, "roll", "shift", length=len(axes))
    if len(shifts) == 1 and len(axes) > 1:
        shifts *= len(axes)
    if len(shifts) != len(axes):
        raise _at_user_line(ShapeError(f"roll: {len(shifts)} shifts for {len(axes)} axes"))
    axes = [one_axis(a, x.type.ndim, "roll", x) for a in axes]  # may repeat
    fixed = [(s, a) for s, a in zip(shifts, axes) if isinstance(s, int)]
    if fixed:
        x = Roll(tuple(s for s, _ in fixed), tuple(a for _, a in fixed))(x)
    for s, a in zip(shifts, axes):
        if not isinstance(s, int):
            x = _roll_axis(x, s, a)
    return x


# -- building blocks -----------------------------------------------------------------------
def _stretch(x, counts: dict, before: bool) -> Variable:
    """x with each axis i in ``counts`` stretched ``counts[i]`` times: a new axis of that size
    next to it (before it: whole copies, ``tile``; after it: each element, ``repeat``),
    broadcast, then merged with it by a reshape. Sizes known statically stay static."""
    new_axes, sizes, target = [], [], []
    for i in range(x.type.ndim):
        d = _size(x, i)
        if i not in counts:
            sizes.append(d)
            target.append(d)
            continue
        c = checked = counts[i]
        if isinstance(c, Variable):  # a count known when the function runs: checked then
            checked = in_domain(c, "repeat: repeats" if not before else "tile: reps", "count")
        new_axes.append(len(sizes) + (0 if before else 1))
        sizes += [checked, d] if before else [d, checked]
        target.append(_times(d, c))  # c itself: its dim (x.shape[0] is "T") names the result's
    return reshape(broadcast_to(expand_dims(x, tuple(new_axes)), sizes), target)


def _repeat_each(x, counts: np.ndarray, axis: int) -> Variable:
    """``np.repeat`` with a constant count per element: a gather with constant indices where
    the axis length is known (the result's length is then known too), else with indices that
    check the length at run time."""
    if (counts < 0).any():
        raise _at_user_line(ShapeError(f"repeat: counts must be >= 0, not {counts.tolist()}"))
    n = x.type.shape[axis]
    if isinstance(n, int) and n != counts.size:
        raise _at_user_line(
            ShapeError(
                f"repeat: {counts.size} counts for axis {axis} of {x.describe()}, which has "
                f"{n} elements; give one count per element, or one for all"
            )
        )
    if isinstance(n, int):
        return take(x, Constant(np.repeat(np.arange(n, dtype=np.int64), counts)), axis)
    return take(x, RepeatIndices()(Constant(counts), _size_var(x, axis)), axis)


def _roll_axis(x, s: Variable, axis: int) -> Variable:
    """``np.roll`` along one axis by a shift known at run time: element j of the result is
    element ``(j - s) mod n`` of x (``n`` at least 1, so an empty axis divides by nothing)."""
    n = _size(x, axis)
    positions = arange(n) - cast(s, "int64")
    return take(x, mod(positions, maximum(n, 1) if isinstance(n, Variable) else max(n, 1)), axis)


def _size(x, i):
    """x's dim i: an int where it is fixed, else ``x.shape[i]`` (which knows a named dim)."""
    d = x.type.shape[i]
    return d if isinstance(d, int) else getitem(shape(x), i)


def _size_var(x, i) -> Variable:
    d = _size(x, i)
    return d if isinstance(d, Variable) else Constant(np.int64(d))


def _times(d, c):
    """d * c as a size: an int when both are, else an int64 scalar variable."""
    if isinstance(d, int) and isinstance(c, int):
        return d * c
    if _is_int(d, 1) or _is_int(c, 1):
        return c if _is_int(d, 1) else d
    return cast(d, "int64") * cast(c, "int64")


def _is_int(value, n: int) -> bool:
    return isinstance(value, int) and value == n


def _counts(value, op: str, what: str):
    """An int, a 1-d int array (constant counts) or an integer scalar or vector variable."""
    if isinstance(value, Variable) and not isinstance(value, Constant):
        _check_integer(value, op, what, ndims=(0, 1))
        return value
    if isinstance(value, (list, tuple)) and any(isinstance(v, Variable) for v in value):
        return stack([_scalar_var(v, op, what) for v in value])
    array = np.asarray(value.value if isinstance(value, Constant) else value)
    if array.dtype.kind not in "iu" or array.ndim > 1 or isinstance(value, bool):
        raise _at_user_line(
            ShapeTypeError(
                f"{op}: {what} must be an int, integers or an integer variable (scalar or "
                f"vector), not {value!r}"
            )
        )
    return int(array) if array.ndim == 0 else array.astype(np.int64)


def _rep_list(value, op: str, what: str, length=None) -> list:
    """One int or integer scalar variable per entry (tile's reps, roll's shifts)."""
    if isinstance(value, (list, tuple)):
        return [_one_count(v, op, what) for v in value]
    counts = _counts(value, op, what)
    if isinstance(counts, int):
        return [counts]
    if isinstance(counts, np.ndarray):
        return [int(c) for c in counts]
    if counts.type.ndim == 0:
        return [counts]
    n = counts.type.shape[0]
    if not isinstance(n, int):
        per_axis = "" if length is None else f", one per axis: {length}"
        raise _at_user_line(
            ShapeError(
                f"{op}: the length of {what} {counts.describe()} must be known statically "
                f"(or give a tuple of sizes{per_axis})"
            )
        )
    return [getitem(counts, i) for i in range(n)]


def _one_count(v, op: str, what: str):
    """An int, or an integer scalar variable (a constant one as its int)."""
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return int(v)
    if isinstance(v, Constant) and v.type.ndim == 0 and v.type.dtype.kind in "iu":
        return int(v.value)
    if not isinstance(v, Variable):
        raise _at_user_line(ShapeTypeError(f"{op}: an entry of {what} is an int, not {v!r}"))
    _check_integer(v, op, what, ndims=(0,))
    return v


def _scalar_var(v, op: str, what: str) -> Variable:
    v = _one_count(v, op, what)
    return Constant(np.int64(v)) if isinstance(v, int) else cast(v, "int64")


def _check_integer(var: Variable, op: str, what: str, ndims) -> None:
    if var.type.dtype.kind not in "iu" or var.type.ndim not in ndims:
        kinds = " or ".join(("scalar", "vector")[n] for n in ndims)
        raise _at_user_line(
            DTypeError(f"{op}: {what} must be an integer {kinds}, not {var.describe()}")
        )
