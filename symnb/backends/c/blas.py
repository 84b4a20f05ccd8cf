"""``gemm`` (beta * z + alpha * x @ y) as one BLAS call, with the scale and add folded in.

SciPy's ``sgemm``/``dgemm`` take Fortran-ordered matrices. A C-ordered product C = X @ Y is
computed as C^T = Y^T @ X^T, whose operands are Fortran-ordered views of the same memory (or,
for inputs that are transposed views already, the arrays with the transpose flag), so nothing
is copied; C is written into z's buffer when the node is in-place and z can hold it.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import blas

from symnb.backends.c.steps import LibraryStep

GEMM = {np.dtype("float32"): blas.sgemm, np.dtype("float64"): blas.dgemm}


def _fortran_operand(a: np.ndarray):
    """(array, trans) such that op(array) == a.T with array Fortran-ordered, or None."""
    if a.T.flags.f_contiguous:
        return a.T, 0
    if a.flags.f_contiguous:
        return a, 1
    return None


class GemmStep(LibraryStep):
    """One ``?gemm`` call; shapes or layouts it cannot take run the op's reference."""

    kind = "blas"

    def __call__(self, slots: list) -> None:
        z, alpha, x, y, beta = [slots[i] for i in self.ins]
        result = self._folded(z, alpha, x, y, beta)
        if result is None:
            return super().__call__(slots)
        slots[self.outs[0]] = result

    def _folded(self, z, alpha, x, y, beta):
        dtype = self.dtypes[0]
        shape = (x.shape[0], y.shape[1]) if x.ndim == 2 and y.ndim == 2 else None
        a, b = _fortran_operand(y), _fortran_operand(x)
        if shape is None or a is None or b is None or np.ndim(z) > 2 or x.shape[1] != y.shape[0]:
            return None
        c = self._accumulator(z, shape, dtype)
        if c is None:
            return None
        out = GEMM[dtype](alpha, a[0], b[0], beta=beta, c=c.T, trans_a=a[1], trans_b=b[1],
                          overwrite_c=True)  # fmt: skip
        return out.T

    def _accumulator(self, z, shape, dtype):
        """z itself when in-place and it fits, else a fresh C-ordered copy of z broadcast."""
        if np.shape(z) != shape and np.broadcast_shapes(np.shape(z), shape) != shape:
            return None
        if getattr(self.node.op, "inplace", False) and np.shape(z) == shape:
            if z.flags.c_contiguous and z.flags.writeable and z.dtype == dtype:
                return z
        c = np.empty(shape, dtype)
        c[...] = z
        return c
