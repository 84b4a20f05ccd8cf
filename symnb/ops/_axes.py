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
            raise _at_user_line(
                ShapeError(
                    f"{op}: axis {a} is out of range for {var.describe()}, which has {ndim} "
                    f"dim{'s' if ndim != 1 else ''} (valid: {-ndim}..{ndim - 1})"
                )
            )
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise _at_user_line(ShapeError(f"{op}: repeated axis in {axis!r}"))
    return tuple(sorted(out))
