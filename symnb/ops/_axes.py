"""Axis arguments the way NumPy takes them (int, tuple, negative, None), checked at build."""

from __future__ import annotations

from symnb.core.dims import is_int
from symnb.core.op import _at_user_line
from symnb.errors import ShapeError, ShapeTypeError


def normalize_axis(axis, ndim: int, op, var) -> tuple[int, ...]:
    """A sorted tuple of non-negative axes; ``None`` means all of them."""
    if axis is None:
        return tuple(range(ndim))
    if is_int(axis):
        axes = (axis,)
    elif isinstance(axis, (tuple, list)):
        axes = tuple(axis)
    else:
        raise _at_user_line(
            ShapeTypeError(
                f"{op}: axis is an int, a tuple of ints or None, not {axis!r} "
                f"(for {var.describe()})"
            )
        )
    out = []
    for a in axes:
        if not is_int(a):
            raise _at_user_line(
                ShapeTypeError(f"{op}: an axis is an int, not {a!r} (for {var.describe()})")
            )
        if not -ndim <= a < ndim:
            raise _at_user_line(ShapeError(_out_of_range(op, a, ndim, var)))
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise _at_user_line(ShapeError(f"{op}: repeated axis in {axis!r} (for {var.describe()})"))
    return tuple(sorted(out))


def _out_of_range(op, axis, ndim: int, var) -> str:
    """The message for an axis past ``ndim``: a 0-d value has no axes at all (no range)."""
    message = f"{op}: axis {axis} is out of range for {var.describe()}, "
    if ndim == 0:
        return message + "which is 0-d: it has no axes (use axis=None)"
    return message + f"which has {ndim} dim{'s' if ndim != 1 else ''} (valid: {-ndim}..{ndim - 1})"


def one_axis(axis, ndim: int, op, var, what: str = "axis", or_none: bool = False) -> int:
    """One non-negative axis, for ops that take one int (``argmax``, ``softmax``, ``sort``):
    a tuple, a float or a bool there is a ShapeTypeError naming the op and the variable
    (``or_none``: the op also takes None, which its caller has handled)."""
    if not is_int(axis):
        takes = "one int or None" if or_none else "one int"
        raise _at_user_line(
            ShapeTypeError(f"{op}: {what} is {takes}, not {axis!r} (for {var.describe()})")
        )
    (a,) = normalize_axis(axis, ndim, op, var)
    return a
