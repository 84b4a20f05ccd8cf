"""Linear algebra: ``matmul`` (with NumPy's 1-D and batch rules) and ``dot``."""

from __future__ import annotations

import numpy as np

from symnb.core.dims import DimMismatch, format_dim, unify
from symnb.core.op import Op
from symnb.core.types import TensorType
from symnb.core.variable import as_variable
from symnb.errors import DTypeError, ShapeError
from symnb.ops._dtypes import probe_dtype
from symnb.ops.elemwise import broadcast_shapes
from symnb.shapes import warnings as shape_warnings


class Matmul(Op):
    """``x @ y``: matrix product over the last two axes, broadcasting the batch axes."""

    def infer_types(self, x, y):
        for v in (x, y):
            if v.type.ndim == 0:
                raise ShapeError(f"matmul: {v.describe()} is 0-d; use * for scalars")
            if v.type.dtype.kind == "b":
                raise DTypeError(f"matmul: {v.describe()} is boolean; cast it first")
        xs, ys = x.type.shape, y.type.shape
        k_x, k_y = xs[-1], ys[-2] if len(ys) > 1 else ys[0]
        try:
            unify(k_x, k_y)
        except DimMismatch:
            raise ShapeError(_inner_message(x, y)) from None
        shape_warnings.pinned_hook(self, x, -1, y, -2 if len(ys) > 1 else 0)
        batch = broadcast_shapes(self, [_batch_of(x), _batch_of(y)])
        shape = batch + xs[-2:-1] + (ys[-1:] if len(ys) > 1 else ())
        return [TensorType(probe_dtype(self, np.matmul, [x, y]), shape)]

    def perform(self, x, y):
        return np.matmul(x, y)

    def grad(self, inputs, outputs, output_grads):
        from symnb.ops.shape import expand_dims, fit_gradient, squeeze

        (x, y), (g,) = inputs, output_grads
        x2 = expand_dims(x, 0) if x.type.ndim == 1 else x
        y2 = expand_dims(y, -1) if y.type.ndim == 1 else y
        g2 = expand_dims(g, -2) if x.type.ndim == 1 else g
        g2 = expand_dims(g2, -1) if y.type.ndim == 1 else g2
        gx, gy = g2 @ _swap_last(y2), _swap_last(x2) @ g2
        gx = squeeze(gx, -2) if x.type.ndim == 1 else gx
        gy = squeeze(gy, -1) if y.type.ndim == 1 else gy
        return [fit_gradient(gx, x), fit_gradient(gy, y)]


def _batch_of(v):
    from symnb.core.variable import Variable

    stub = Variable(v.type.with_shape(v.type.shape[:-2]), name=v.name)
    return stub


def _swap_last(v):
    from symnb.ops.shape import DimShuffle

    n = v.type.ndim
    return DimShuffle(tuple(range(n - 2)) + (n - 1, n - 2))(v)


def _inner_message(x, y) -> str:
    kx = x.type.shape[-1]
    ky = y.type.shape[-2] if y.type.ndim > 1 else y.type.shape[0]
    message = (
        f"matmul: inner dims differ: {x.describe()} @ {y.describe()}: "
        f"{format_dim(kx)} (last axis of the left) != {format_dim(ky)} "
        f"({'second-to-last' if y.type.ndim > 1 else 'only'} axis of the right)"
    )
    if y.type.ndim == 2 and _fits(kx, y.type.shape[-1]):
        message += f"\n  hint: did you mean {y.name or 'the right operand'}.T?"
    elif x.type.ndim == 2 and _fits(x.type.shape[-2], ky):
        message += f"\n  hint: did you mean {x.name or 'the left operand'}.T?"
    return message


def _fits(a, b) -> bool:
    try:
        return unify(a, b) is not None
    except DimMismatch:
        return False


matmul = Matmul()


def dot(x, y):
    """NumPy's ``dot`` for vectors and matrices (a matrix product); a scalar scales."""
    from symnb.ops.elemwise import mul

    x, y = as_variable(x), as_variable(y)
    if x.type.ndim == 0 or y.type.ndim == 0:
        return mul(x, y)
    if x.type.ndim > 2 or y.type.ndim > 2:
        raise ShapeError(
            f"dot of {x.describe()} and {y.describe()}: use matmul (batched) or tensordot"
        )
    return matmul(x, y)
