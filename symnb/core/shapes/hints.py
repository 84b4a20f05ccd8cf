"""One-line hints appended to shape errors where a common fix exists.

Each function returns ``"\\n  hint: ..."`` or ``""``; a hint only names a fix that would make
the shapes fit for sure (it never relies on pinning a name to a size).
"""

from __future__ import annotations

from symnb.core.dims import is_symbolic


def _hint(text: str) -> str:
    return f"\n  hint: {text}"


def _label(var) -> str:
    return var.message_name() or "the operand"


def names_hint(a, b) -> str:
    """Two different symbolic sizes required to be equal."""
    if not (is_symbolic(a) and is_symbolic(b)):
        return ""
    return _hint(
        f"'{a}' and '{b}' are different named dims, so symnb takes them to be different "
        "sizes; if the axes are swapped, transpose one operand; if they are one size, "
        "give them one name"
    )


def broadcast_hint(inputs, a, b) -> str:
    """Why two operands do not broadcast, when the usual fix is clear."""
    if len(inputs) == 2:
        x, y = inputs
        for hint in (_transposed(x, y), _missing_axis(x, y) or _missing_axis(y, x)):
            if hint:
                return hint
    return names_hint(a, b)


def _transposed(x, y) -> str:
    xs, ys = x.type.shape, y.type.shape
    if len(xs) == len(ys) == 2 and xs != ys and xs == ys[::-1] and None not in xs:
        return _hint(f"did you mean {_label(y)}.T?")
    return ""


def _missing_axis(low, high) -> str:
    """low (1-d) matches a leading axis of high: it needs trailing axes to line up."""
    if low.type.ndim != 1 or high.type.ndim < 2:
        return ""
    (d,) = low.type.shape
    for axis, other in enumerate(high.type.shape[:-1]):
        if d is not None and d == other:
            trailing = high.type.ndim - 1 - axis
            axes = "-1" if trailing == 1 else str(tuple(range(-trailing, 0)))
            return _hint(
                f"to line {_label(low)} up with axis {axis} of {_label(high)}, add "
                f"trailing axes: expand_dims({_label(low)}, {axes})"
            )
    return ""


def permutation_hint(axes, ndim: int) -> str:
    """A transpose whose axes are not a permutation."""
    if len(axes) != ndim:
        return _hint(f"give one axis per dim ({ndim}), each once, e.g. {tuple(range(ndim))[::-1]}")
    return _hint("each axis must appear exactly once")


def division_hint(value) -> str:
    """A size or index made with ``/``, which divides into a float even for integers (``8 /
    2`` is 4.0, ``x.shape[0] / 2`` a float64 scalar)."""
    integral_float = isinstance(value, float) and value.is_integer()
    owner = getattr(value, "owner", None)
    if not integral_float and (owner is None or owner.op.op_name() != "true_div"):
        return ""
    return _hint(
        "/ divides into a float even for integers; use // for a size or an index (x.shape[0] // 2)"
    )
