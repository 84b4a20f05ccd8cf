"""``gemm`` (beta * z + alpha * x @ y): NumPy's BLAS for the product, scale and add in place.

SciPy's ``?gemm`` would fold alpha and beta into the BLAS call, but SciPy ships its own
OpenBLAS with its own thread pool: alternating it with NumPy's (every ``matmul``) made the W3
training step 3-4x slower here (two pools spinning on two cores). So the product uses NumPy's
BLAS and the scale and add run in place on the accumulator, which is z's own buffer when the
node is in-place (``gemm_inplace``) and z can hold the result, and no other temporary.
"""

from __future__ import annotations

import numpy as np

from symnb.backends.c.steps import LibraryStep


class GemmStep(LibraryStep):
    """``np.matmul`` then in-place ``*= beta`` and ``+= alpha * product``."""

    kind = "blas"

    def run(self, z, alpha, x, y, beta):
        result = self._folded(z, alpha, x, y, beta)
        return super().run(z, alpha, x, y, beta) if result is None else result

    def _folded(self, z, alpha, x, y, beta):
        if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[0] or np.ndim(z) > 2:
            return None
        shape = (x.shape[0], y.shape[1])
        if np.broadcast_shapes(np.shape(z), shape) != shape:
            return None
        product = np.matmul(x, y)
        if alpha != 1:
            product *= alpha
        c = self._accumulator(z, shape, product.dtype)
        if beta == 0:
            return product
        if beta != 1:
            c *= beta
        c += product
        return c

    def _accumulator(self, z, shape, dtype):
        """z itself when the node is in-place and z can hold the result, else a copy."""
        if getattr(self.node.op, "inplace", False) and np.shape(z) == shape:
            if z.flags.writeable and z.dtype == dtype:
                return z
        c = np.empty(shape, dtype)
        c[...] = z
        return c
