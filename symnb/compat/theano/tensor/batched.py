"""``T.batched_dot`` and ``T.batched_tensordot``: ``out[i] = dot(a[i], b[i])`` (and
``tensordot(a[i], b[i], axes)``) along a shared first, batch, axis, for every rank.

Theano's rule, followed here: a vector (one number per batch) scales the other operand;
otherwise a's last axis meets b's axis ``max(1, b.ndim - 2)`` (``np.dot`` of each pair:
a matrix b[i] gives its rows, a 3-d or higher b[i] its second-to-last axis). Each case is a
batched matrix product of the operands moved and reshaped to 3-d, so its gradient is
matmul's. The batch sizes must be equal, as Theano's BatchedDot required: a batch of 1 does
not broadcast (matmul would stretch it), a ShapeError when the graph is built where the types
tell, else when the function runs (``HasShape``: b checked against a's lengths); so must the
sizes of the axes summed together, whose errors name the call and the operands (matmul's
would name its 3-d reshapes).
"""

from __future__ import annotations

import numpy as np

from symnb import ops as sn
from symnb.core.dims import DimMismatch, format_dim, is_int, unify
from symnb.core.op import _at_user_line
from symnb.core.variable import Variable, as_variable, describe_value
from symnb.errors import ArgumentError, ShapeError, ShapeTypeError
from symnb.ops._axes import as_axis
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
        b = _same_lengths(a, b, [], _DOT)
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
    y = _same_lengths(x, y, list(zip(summed_x, summed_y)), call)
    free_x = [k for k in range(1, x.type.ndim) if k not in summed_x]
    free_y = [k for k in range(1, y.type.ndim) if k not in summed_y]
    x3 = _as_3d(sn.transpose(x, [0, *free_x, *summed_x]), len(free_x), len(summed_x))
    y3 = _as_3d(sn.transpose(y, [0, *summed_y, *free_y]), len(summed_y), len(free_y))
    out = sn.matmul(x3, y3)
    sizes = [sn.shape(x)[0], *(sn.shape(x)[k] for k in free_x), *(sn.shape(y)[k] for k in free_y)]
    return sn.reshape(out, sizes)


def _same_lengths(x: Variable, y: Variable, pairs: list, call) -> Variable:
    """y, once its axis 0 (the batch) is checked to have x's length, and each axis j of y
    that of the axis i of x it is summed with (``pairs`` of (i, j)): a ShapeError naming the
    call, both operands and the axes where the types tell they differ, else (where they do
    not show them equal) one check when the function runs, of y against x's lengths."""
    name, (x_name, y_name), formula = call
    pairs = [(0, 0), *pairs]
    for i, j in pairs:
        try:
            unify(x.type.shape[i], y.type.shape[j])
        except DimMismatch:
            raise _at_user_line(ShapeError(_clash(x, i, y, j, name, formula))) from None
    loose = [
        (i, j) for i, j in pairs if x.type.shape[i] is None or x.type.shape[i] != y.type.shape[j]
    ]
    if not loose:  # one fixed size or one name each: the types tell
        return y
    lx = x.message_name() or x_name
    ly = y.message_name() or y_name
    clauses = [
        f"axis {j}{' (the batch)' if j == 0 else ''} of {y.describe() if k == 0 else repr(ly)} "
        f"{'must have the length' if k == 0 else 'that'} of axis {i} of "
        f"{x.describe() if k == 0 else repr(lx)}{'' if j == 0 else ' (summed together)'}"
        for k, (i, j) in enumerate(loose)
    ]
    ones = "; a batch of 1 does not broadcast" if loose[0] == (0, 0) else ""
    what = f"{name}: {', and '.join(clauses)} (out[i] is {formula}{ones})"
    shape = [None] * y.type.ndim
    for i, j in loose:
        shape[j] = f"{lx}.shape[{i}]"
    names = tuple((shape[j], k, None) for k, (_, j) in enumerate(loose))
    lengths = [sn.shape(x)[i] for i, _ in loose]
    return HasShape(what, tuple(shape), names)(y, *lengths)


def _clash(x: Variable, i: int, y: Variable, j: int, name: str, formula: str) -> str:
    """The message for axis i of x and axis j of y, whose sizes differ when the graph is
    built: the batch axes, or axes summed together."""
    dx, dy = format_dim(x.type.shape[i]), format_dim(y.type.shape[j])
    if i == 0:
        return (
            f"{name}: axis 0 (the batch) of {x.describe()} has size {dx} but axis 0 of "
            f"{y.describe()} has size {dy}: out[i] is {formula}, so the batch sizes must be "
            "equal (a batch of 1 does not broadcast, as in Theano's BatchedDot)"
        )
    return (
        f"{name}: axis {i} of {x.describe()} has size {dx} but the axis {j} of {y.describe()} "
        f"it is summed with has size {dy} (out[i] is {formula})"
    )


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
    """The summed axes of x and y, checked as Theano's ``_tensordot_as_dot`` did: a count
    (an int, 0 or more) or a pair of an axis or a list of axes each (negative ones count from
    the end), never the batch axis, each axis once."""
    pair = _entries(axes)
    if pair is None:
        n = as_axis(axes)
        if not is_int(n):
            raise _at_user_line(
                ArgumentError(
                    "T.batched_tensordot: axes is an int (x's last n axes with y's first n "
                    "after the batch axis) or a pair (axes of x, axes of y), not "
                    f"{describe_value(axes)}"
                )
            )
        if n < 0:
            raise _at_user_line(
                ShapeError(
                    f"T.batched_tensordot: axes={n} is a count of axes to sum, 0 or more (x "
                    f"{x.describe()}, y {y.describe()}); a pair of lists names axes from the end"
                )
            )
        for name, v in (("x", x), ("y", y)):
            if n >= v.type.ndim:
                raise _at_user_line(
                    ShapeError(
                        f"T.batched_tensordot: axes={n} would sum over the batch axis of "
                        f"{name} {v.describe()}"
                    )
                )
        return list(range(x.type.ndim - n, x.type.ndim)), list(range(1, n + 1))
    if len(pair) != 2:
        raise _at_user_line(
            ArgumentError(
                "T.batched_tensordot: axes is an int or a pair (axes of x, axes of y), not "
                f"{describe_value(axes)}"
            )
        )
    pairs = [_listed(name, v, spec) for name, v, spec in (("x", x, pair[0]), ("y", y, pair[1]))]
    if len(pairs[0]) != len(pairs[1]):
        raise _at_user_line(
            ShapeError(
                f"T.batched_tensordot: {len(pairs[0])} axes of x {pairs[0]} but "
                f"{len(pairs[1])} of y {pairs[1]}; each axis of x pairs with one of y"
            )
        )
    return pairs[0], pairs[1]


def _entries(value) -> tuple | None:
    """The entries of a list, tuple or array (not 0-d), else None."""
    if isinstance(value, (list, tuple)) or isinstance(value, np.ndarray) and value.ndim:
        return tuple(value)
    return None


def _listed(name: str, v: Variable, spec) -> list:
    """One operand's summed axes (``spec`` one axis or a sequence), counted from 0 and
    checked: ints, none the batch axis, each once."""
    entries = _entries(spec)
    listed = [as_axis(k) for k in ((spec,) if entries is None else entries)]
    for k in listed:
        if not is_int(k):
            raise _at_user_line(
                ShapeTypeError(
                    f"T.batched_tensordot: an axis of {name} {v.describe()} is an int, not "
                    f"{describe_value(k)} (in axes {spec!r})"
                )
            )
    listed = [k + v.type.ndim if k < 0 else k for k in listed]
    if any(k <= 0 or k >= v.type.ndim for k in listed):
        raise _at_user_line(
            ShapeError(
                f"T.batched_tensordot: axes {listed} of {name} {v.describe()} must lie "
                f"in 1..{v.type.ndim - 1} (axis 0 is the batch)"
            )
        )
    for k in listed:
        if listed.count(k) > 1:
            raise _at_user_line(
                ShapeError(
                    f"T.batched_tensordot: axis {k} of {name} {v.describe()} is summed twice "
                    f"(its axes {spec!r}); each axis pairs with one axis of the other operand"
                )
            )
    return listed
