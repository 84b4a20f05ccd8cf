"""``T.batched_dot`` and ``T.batched_tensordot``: ``out[i] = dot(a[i], b[i])`` (and
``tensordot(a[i], b[i], axes)``) along a shared first, batch, axis, for every rank.

Theano's rule, followed here: a vector (one number per batch) scales the other operand;
otherwise a's last axis meets b's axis ``max(1, b.ndim - 2)`` (``np.dot`` of each pair:
a matrix b[i] gives its rows, a 3-d or higher b[i] its second-to-last axis). Each case is a
batched matrix product of the operands moved and reshaped to 3-d, so its gradient is
matmul's. The batch sizes must be equal, as Theano's BatchedDot required: a batch of 1 does
not broadcast (matmul would stretch it), a ShapeError when the graph is built where the types
tell, else when the function runs (``HasShape``: b checked against a's size).
"""

from __future__ import annotations

import numpy as np

from symnb import ops as sn
from symnb.core.dims import DimMismatch, format_dim, unify
from symnb.core.op import _at_user_line
from symnb.core.variable import Variable, as_variable
from symnb.errors import ShapeError
from symnb.ops.checks import HasShape


def batched_dot(a, b) -> Variable:
    """``batched_dot(a, b)[i] == dot(a[i], b[i])`` for every rank (Theano 1.0's rule)."""
    a, b = as_variable(a), as_variable(b)
    for name, x in (("a", a), ("b", b)):
        if x.type.ndim == 0:
            raise _at_user_line(
                ShapeError(f"T.batched_dot: {name} {x.describe()} has no batch axis")
            )
    if a.type.ndim == 1 or b.type.ndim == 1:
        b = _same_batch(a, b, _DOT)
        if a.type.ndim == 1:
            return sn.dimshuffle(a, 0, *["x"] * (b.type.ndim - 1)) * b
        return a * sn.dimshuffle(b, 0, *["x"] * (a.type.ndim - 1))
    return _contract(a, b, [a.type.ndim - 1], [max(1, b.type.ndim - 2)], _DOT)


def batched_tensordot(x, y, axes=2) -> Variable:
    """``tensordot(x[i], y[i], axes)`` stacked along the batch axis: ``axes`` an int (x's
    last ``axes`` axes with y's first ``axes`` after the batch axis) or a pair of axis lists
    (counted with the batch axis, which they may not contain)."""
    x, y = as_variable(x), as_variable(y)
    summed_x, summed_y = _summed_axes(x, y, axes)
    return _contract(x, y, summed_x, summed_y, _TENSORDOT)


#: (the call, its operands' names, what it computes) as the messages say them
_DOT = ("T.batched_dot", ("a", "b"), "dot(a[i], b[i])")
_TENSORDOT = ("T.batched_tensordot", ("x", "y"), "tensordot(x[i], y[i], axes)")


def _contract(x: Variable, y: Variable, summed_x: list, summed_y: list, call) -> Variable:
    """x's axes summed_x with y's summed_y for each pair x[i], y[i], as one matmul of the
    operands moved and reshaped to (batch, rows, cols)."""
    y = _same_batch(x, y, call)
    free_x = [k for k in range(1, x.type.ndim) if k not in summed_x]
    free_y = [k for k in range(1, y.type.ndim) if k not in summed_y]
    x3 = _as_3d(sn.transpose(x, [0, *free_x, *summed_x]), len(free_x), len(summed_x))
    y3 = _as_3d(sn.transpose(y, [0, *summed_y, *free_y]), len(summed_y), len(free_y))
    out = sn.matmul(x3, y3)
    sizes = [sn.shape(x)[0], *(sn.shape(x)[k] for k in free_x), *(sn.shape(y)[k] for k in free_y)]
    return sn.reshape(out, sizes)


def _same_batch(x: Variable, y: Variable, call) -> Variable:
    """y, once its batch axis is checked to have x's size: a ShapeError naming the call and
    both operands where the types tell they differ, else (where they do not show them equal)
    a check when the function runs, y's axis 0 against x's length."""
    name, (x_name, _), formula = call
    dx, dy = x.type.shape[0], y.type.shape[0]
    try:
        unify(dx, dy)
    except DimMismatch:
        raise _at_user_line(
            ShapeError(
                f"{name}: axis 0 (the batch) of {x.describe()} has size {format_dim(dx)} but "
                f"axis 0 of {y.describe()} has size {format_dim(dy)}: out[i] is {formula}, so "
                "the batch sizes must be equal (a batch of 1 does not broadcast, as in "
                "Theano's BatchedDot)"
            )
        ) from None
    if dx == dy and dx is not None:  # one fixed size or one name: the types tell
        return y
    length = f"{x.label or x.assigned_name() or x_name}.shape[0]"
    what = (
        f"{name}: axis 0 (the batch) of {y.describe()} must have the length of axis 0 of "
        f"{x.describe()} (out[i] is {formula}; a batch of 1 does not broadcast)"
    )
    shape = (length,) + (None,) * (y.type.ndim - 1)
    return HasShape(what, shape, ((length, 0, None),))(y, sn.shape(x)[0])


def _as_3d(v: Variable, first: int, second: int) -> Variable:
    """v (batch, then ``first`` axes, then ``second`` axes) as (batch, rows, cols)."""
    shape = sn.shape(v)
    rows = _product([shape[1 + k] for k in range(first)])
    cols = _product([shape[1 + first + k] for k in range(second)])
    return sn.reshape(v, [shape[0], rows, cols])


def _product(sizes: list):
    out = 1
    for size in sizes:
        out = size if isinstance(out, int) and out == 1 else out * size
    return out


def _summed_axes(x: Variable, y: Variable, axes) -> tuple[list, list]:
    """The summed axes of x and y, checked as Theano's ``_tensordot_as_dot`` did."""
    if np.isscalar(axes):
        n = int(axes)
        for name, v in (("x", x), ("y", y)):
            if n >= v.type.ndim:
                raise _at_user_line(
                    ShapeError(
                        f"T.batched_tensordot: axes={n} would sum over the batch axis of "
                        f"{name} {v.describe()}"
                    )
                )
        return list(range(x.type.ndim - n, x.type.ndim)), list(range(1, n + 1))
    if len(axes) != 2:
        raise _at_user_line(
            ValueError(f"T.batched_tensordot: axes is an int or a pair of lists, not {axes!r}")
        )
    pairs = []
    for name, v, spec in (("x", x, axes[0]), ("y", y, axes[1])):
        listed = [int(spec)] if np.isscalar(spec) else [int(k) for k in spec]
        listed = [k + v.type.ndim if k < 0 else k for k in listed]
        if any(k <= 0 or k >= v.type.ndim for k in listed):
            raise _at_user_line(
                ShapeError(
                    f"T.batched_tensordot: axes {listed} of {name} {v.describe()} must lie "
                    f"in 1..{v.type.ndim - 1} (axis 0 is the batch)"
                )
            )
        pairs.append(listed)
    if len(pairs[0]) != len(pairs[1]):
        raise _at_user_line(
            ValueError(f"T.batched_tensordot: {pairs[0]} and {pairs[1]} differ in length")
        )
    return pairs[0], pairs[1]
