"""Axis arguments the way NumPy takes them (int, tuple, negative, None), checked at build."""

from __future__ import annotations

import numbers

from symnb.errors import ShapeError


def normalize_axis(axis, ndim: int, op, var) -> tuple[int, ...]:
    """A sorted tuple of non-negative axes; ``None`` means all of them."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
    out = []
    for a in axes:
        if not isinstance(a, numbers.Integral) or isinstance(a, bool):
            raise TypeError(f"{op}: an axis is an int, not {a!r}")
        if not -ndim <= a < ndim:
            raise ShapeError(
                f"{op}: axis {a} is out of range for {var.describe()}, which has {ndim} "
                f"dim{'s' if ndim != 1 else ''} (valid: {-ndim}..{ndim - 1})"
            )
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ShapeError(f"{op}: repeated axis in {axis!r}")
    return tuple(sorted(out))
