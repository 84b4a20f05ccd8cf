"""Dimensions of a symbolic shape: a fixed int, a named size such as ``"batch"``, or unknown.

This module is the only place that interprets a dim, so richer dims (arithmetic of names)
extend it without touching the ops. A name means the same size everywhere in a graph.
"""

from __future__ import annotations

import numbers

Dim = int | str | None


class DimMismatch(Exception):
    """Two dims that must be equal provably differ; ops turn this into a ShapeError."""

    def __init__(self, a: Dim, b: Dim):
        super().__init__(f"{format_dim(a)} != {format_dim(b)}")
        self.a, self.b = a, b


def normalize_dim(d) -> Dim:
    """Accept what users write for a dim (int, numpy int, str, None) and reject the rest."""
    if d is None or isinstance(d, str):
        if isinstance(d, str) and not d.isidentifier():
            raise ValueError(f"a named dim must be an identifier, not {d!r}")
        return d
    if isinstance(d, numbers.Integral) and not isinstance(d, bool):
        if d < 0:
            raise ValueError(f"a dim cannot be negative, got {d}")
        return int(d)
    raise TypeError(f"a dim is an int, a name (str) or None, not {d!r}")


def normalize_shape(shape) -> tuple[Dim, ...]:
    if isinstance(shape, (str, numbers.Integral)) or shape is None:
        shape = (shape,)
    return tuple(normalize_dim(d) for d in shape)


def is_known(d: Dim) -> bool:
    """True for a fixed size."""
    return isinstance(d, int)


def format_dim(d: Dim) -> str:
    return "?" if d is None else str(d)


def format_shape(shape) -> str:
    inner = ", ".join(format_dim(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def unify(a: Dim, b: Dim) -> Dim:
    """The dim that both a and b can be; raise DimMismatch where they provably differ."""
    if a == b:
        return a
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, str) and isinstance(b, int) or isinstance(a, int) and isinstance(b, str):
        return a if isinstance(a, int) else b  # the name is pinned to the size
    raise DimMismatch(a, b)


def broadcast_dims(a: Dim, b: Dim) -> Dim:
    """NumPy broadcasting of one axis; raise DimMismatch when neither side can stretch."""
    if a == 1:
        return b
    if b == 1:
        return a
    if a is None or b is None:
        return b if a is None else a
    return unify(a, b)


def product(dims) -> Dim:
    """Number of elements, when every dim is fixed; None otherwise."""
    total = 1
    for d in dims:
        if not isinstance(d, int):
            return None
        total *= d
    return total


def matches_value(d: Dim, size: int) -> bool:
    """Does a concrete size fit the dim (named and unknown dims fit anything)?"""
    return not isinstance(d, int) or d == size
