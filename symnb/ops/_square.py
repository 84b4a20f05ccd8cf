"""What the np.linalg ops share: the base of the ops on stacks of matrices, and the small
matrix helpers their gradient rules are written with (batch axes first, as in NumPy)."""

from __future__ import annotations

import numpy as np

from symnb.core.dims import DimMismatch, format_dim, unify
from symnb.core.op import Op
from symnb.core.variable import Constant
from symnb.errors import DTypeError, ShapeError
from symnb.ops._dtypes import probe_dtype
from symnb.ops.broadcast import broadcast_like
from symnb.ops.layout import tril
from symnb.ops.reduce import sum as sum_
from symnb.ops.shape import DimShuffle, expand_dims


class _SquareOp(Op):
    """Ops on stacks of square matrices (the last two axes)."""

    dtype_rule = "float64 for integer input, else the input's float dtype (np.linalg's rule)"

    def _matrix_dims(self, a) -> tuple:
        """The last two dims of a stack of non-boolean matrices (else a clear error)."""
        if a.type.ndim < 2:
            raise ShapeError(f"{self}: {a.describe()} has {a.type.ndim} dims; a matrix is needed")
        if a.type.dtype.kind == "b":
            raise DTypeError(f"{self}: {a.describe()} is boolean; cast it first")
        return a.type.shape[-2:]

    def _square(self, a):
        m, n = self._matrix_dims(a)
        try:
            return unify(m, n)
        except DimMismatch:
            raise ShapeError(
                f"{self}: {a.describe()} is not square: its last two dims are "
                f"{format_dim(m)} and {format_dim(n)}"
            ) from None

    def _dtype(self, a):
        return probe_dtype(self, np.linalg.inv, [a])


def real_dtype(dtype) -> np.dtype:
    """The real dtype of a complex one (complex128 -> float64), a real one itself: singular
    values and ``slogdet``'s log|det| are real, also of a complex matrix."""
    return np.empty(0, dtype).real.dtype


def swap_last(v):
    """Each matrix of a stack transposed."""
    n = v.type.ndim
    return DimShuffle(tuple(range(n - 2)) + (n - 1, n - 2))(v)


def eye_like(m):
    """Identity matrices shaped like the stack of square matrices ``m``, in its dtype (built
    from its shape alone: no gradient flows to m)."""
    ones = broadcast_like(Constant(1, dtype=m.type.dtype), m)
    return tril(ones) - tril(ones, -1)


def diag_embed(v, eye):
    """The vectors ``v`` (..., k) as diagonal matrices (``eye`` is the (..., k, k) identity)."""
    return eye * expand_dims(v, -2)


def diag_part(m, eye):
    """The diagonals of the matrices ``m``."""
    return sum_(m * eye, axis=-1)
