"""Axis arguments the way NumPy takes them (int, tuple, negative, None), checked at build."""

from __future__ import annotations

import numbers

from symnb.core.op import _at_user_line
from symnb.errors import ShapeError


def normalize_axis(axis, ndim: int, op, var) -> tuple[int, ...]:
    """A sorted tuple of non-negative axes; ``None`` means all of them."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, numbers.Integral):
        axes = (axis,)
    elif isinstance(axis, (tuple, list)):
        axes = tuple(axis)
    else:
        raise _at_user_line(
            TypeError(f"{op}: axis is an int, a tuple of ints or None, not {axis!r}")
        )
    out = []
    for a in axes:
        if not isinstance(a, numbers.Integral) or isinstance(a, bool):
            raise _at_user_line(TypeError(f"{op}: an axis is an int, not {a!r}"))
        if not -ndim <= a < ndim:
            raise _at_user_line(ShapeError(_out_of_range(op, a, ndim, var)))
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise _at_user_line(ShapeError(f"{op}: repeated axis in {axis!r}"))
    return tuple(sorted(out))


def _out_of_range(op, axis, ndim: int, var) -> str:
    """The message for an axis past ``ndim``: a 0-d value has no axes at all (no range)."""
    message = f"{op}: axis {axis} is out of range for {var.describe()}, "
    if ndim == 0:
        return message + "which is 0-d: it has no axes (use axis=None)"
    return message + f"which has {ndim} dim{'s' if ndim != 1 else ''} (valid: {-ndim}..{ndim - 1})"
