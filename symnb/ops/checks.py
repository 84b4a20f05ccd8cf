"""Shape rules only the values decide, checked when the function runs: ``x`` unchanged, or
a ShapeError that says what was asked (the rule is checked when the graph is built wherever
the types already tell)."""

from __future__ import annotations

import numpy as np

from symnb.core.dims import format_shape
from symnb.core.op import Op
from symnb.core.variable import Variable, as_variable
from symnb.errors import CheckedShapeError, DTypeError, ShapeError


class AtMost(Op):
    """x unchanged where the integer scalar ``count`` is at most ``limit``; else a
    ShapeError: ``what`` followed by both numbers."""

    dtype_rule = "x's dtype"
    __props__ = ("what",)

    def __init__(self, what: str):
        self.what = str(what)

    def infer_types(self, x, count, limit):
        for var in (count, limit):
            if var.type.ndim != 0 or var.type.dtype.kind not in "iu":
                raise DTypeError(f"at_most: an integer scalar, not {var.describe()}")
        return [x.type]

    def perform(self, x, count, limit):
        if int(count) > int(limit):
            raise ShapeError(f"{self.what} ({int(count)} > {int(limit)})")
        return np.array(x, copy=True)

    def grad(self, inputs, outputs, output_grads):
        return [output_grads[0], None, None]


def at_most(x, count, limit, what: str) -> Variable:
    """``x``, once ``count <= limit`` is checked when the function runs (``what`` says what
    failed otherwise)."""
    x = as_variable(x)
    return AtMost(what)(x, as_variable(count), as_variable(limit))


class SameShape(Op):
    """x unchanged where its shape is ``like``'s when the function runs; else a ShapeError:
    ``what`` followed by both shapes. For a value that must not broadcast (an eval point
    and its ``wrt``) whose dims are unknown when the graph is built; backends plan it as a
    view, so a call whose shapes match pays nothing."""

    dtype_rule = "x's dtype"
    __props__ = ("what",)

    def __init__(self, what: str):
        self.what = str(what)

    def infer_types(self, x, like):
        if x.type.ndim != like.type.ndim:
            raise ShapeError(f"{self.what}: {x.type.ndim} axes, not {like.type.ndim}")
        return [x.type]

    def perform(self, x, like):
        if np.shape(x) != np.shape(like):
            shapes = f"{format_shape(np.shape(x))}, not {format_shape(np.shape(like))}"
            raise CheckedShapeError(f"{self.what} ({shapes}, when the function ran)")
        return np.asarray(x)

    def grad(self, inputs, outputs, output_grads):
        return [output_grads[0], None]


def same_shape(x, like, what: str) -> Variable:
    """``x``, once its shape is checked to be ``like``'s when the function runs (``what``
    names ``x`` in the error); no check where both shapes are fixed and equal."""
    x, like = as_variable(x), as_variable(like)
    fixed = all(isinstance(d, int) for d in x.type.shape + like.type.shape)
    if fixed and x.type.shape == like.type.shape:
        return x
    return SameShape(what)(x, like)
