"""BLAS-style fused linear algebra that the specialize rewrites produce.

``gemm(z, alpha, x, y, beta) = beta * z + alpha * (x @ y)`` for matrices ``x`` and ``y``; ``z``
broadcasts against the product (a bias vector is fine). Its NumPy reference computes exactly
that expression, so replacing ``z + alpha * (x @ y)`` by a gemm changes no value; a kernel
backend hands it to a BLAS ``?gemm`` call. ``Gemm(inplace=True)`` writes the result into
``z``'s buffer when the shapes and dtype allow (``destroy_map`` tells the backend).
"""

from __future__ import annotations

import numpy as np

from symnb.core.op import Op
from symnb.core.shapes.broadcast import broadcast_shapes
from symnb.core.types import TensorType
from symnb.core.variable import Variable
from symnb.errors import DTypeError, ShapeError

FLOATS = ("float32", "float64")


class Gemm(Op):
    """beta * z + alpha * (x @ y): one BLAS call in kernel backends."""

    __props__ = ("inplace",)
    dtype_rule = "z's dtype; every operand float32 or float64 alike"

    def __init__(self, inplace: bool = False):
        self.inplace = bool(inplace)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def infer_types(self, z, alpha, x, y, beta):
        dtype = z.type.dtype
        for v in (z, alpha, x, y, beta):
            if v.type.dtype != dtype or dtype.name not in FLOATS:
                raise DTypeError(
                    f"{self}: every operand must be {dtype.name} float32/64, got {v.describe()}"
                )
        if x.type.ndim != 2 or y.type.ndim != 2 or alpha.type.ndim or beta.type.ndim:
            raise ShapeError(
                f"{self}: x and y must be matrices, alpha and beta scalars; got "
                f"{x.describe()}, {y.describe()}"
            )
        product = Variable(TensorType(dtype, (x.type.shape[0], y.type.shape[1])), name="x @ y")
        return [TensorType(dtype, broadcast_shapes(self, [z, product]))]

    def perform(self, z, alpha, x, y, beta):
        product = np.matmul(x, y)
        if self.inplace and _writable_like(z, product):
            z *= beta
            z += alpha * product
            return z
        return beta * z + alpha * product

    def __str__(self):
        return "gemm_inplace" if self.inplace else "gemm"


def _writable_like(z, product) -> bool:
    """z can hold the result: a writable array of the result's shape and dtype."""
    return (
        isinstance(z, np.ndarray)
        and z.flags.writeable
        and z.shape == np.broadcast_shapes(z.shape, product.shape)
        and z.dtype == product.dtype
    )


gemm = Gemm()
gemm_inplace = Gemm(inplace=True)
