"""The singular value decomposition (``np.linalg.svd``) and its gradient.

The gradient of the reduced factors is Townsend's (2016, "Differentiating the singular value
decomposition"), with F_ij = 1 / (s_j**2 - s_i**2) off the diagonal: it assumes distinct
singular values (F is infinite where two are equal, as in JAX and PyTorch), and the parts of U
and Vh outside the span of the other factor divide by the singular values (nonzero ones). A
function of the singular values alone (norms, ``compute_uv=False``) has the first derivative
``U diag(g) Vh`` everywhere; its second derivatives go through U and Vh, so they need distinct
singular values too.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from symnb.core.dims import DimMismatch, unify
from symnb.core.op import NotDifferentiable
from symnb.core.types import TensorType
from symnb.core.variable import as_variable
from symnb.ops._square import _SquareOp, diag_embed, eye_like, real_dtype, swap_last
from symnb.ops.checks import at_most
from symnb.ops.elemwise import where
from symnb.ops.shape import expand_dims, shape


class _SvdBase(_SquareOp):
    """Shapes of ``np.linalg.svd`` on stacks of (M, N) matrices, K = min(M, N)."""

    def _dims(self, a):
        m, n = self._matrix_dims(a)
        k = min(m, n) if isinstance(m, int) and isinstance(n, int) else (m if m == n else None)
        return a.type.shape[:-2], m, n, k


class SingularValues(_SvdBase):
    """``np.linalg.svd(a, compute_uv=False)``: the singular values, largest first (their
    second derivatives assume they are distinct)."""

    def infer_types(self, a):
        batch, _, _, k = self._dims(a)
        return [TensorType(real_dtype(self._dtype(a)), batch + (k,))]

    def perform(self, a):
        return np.linalg.svd(a, compute_uv=False)

    def grad(self, inputs, outputs, output_grads):
        u, _, vh = Svd(False)(inputs[0])
        return [u @ (expand_dims(output_grads[0], -1) * vh)]  # U diag(g) Vh


class Svd(_SvdBase):
    """``np.linalg.svd``: (U, S, Vh) with ``a = U @ diag(S) @ Vh``. The gradient through U
    and Vh assumes distinct singular values; with ``full_matrices`` it exists only where the
    factors are square (the extra columns of U or rows of Vh are not unique): checked when the
    function runs where the dims do not tell when the graph is built."""

    __props__ = ("full_matrices",)
    nout = 3

    def __init__(self, full_matrices=True):
        self.full_matrices = bool(full_matrices)

    def infer_types(self, a):
        batch, m, n, k = self._dims(a)
        dtype = self._dtype(a)
        u_cols, vh_rows = (m, n) if self.full_matrices else (k, k)
        return [
            TensorType(dtype, batch + (m, u_cols)),
            TensorType(real_dtype(dtype), batch + (k,)),
            TensorType(dtype, batch + (vh_rows, n)),
        ]

    def perform(self, a):
        u, s, vh = np.linalg.svd(a, full_matrices=self.full_matrices)
        return u, s, vh

    def grad(self, inputs, outputs, output_grads):
        (a,), (u, s, vh), (g_u, g_s, g_vh) = inputs, outputs, output_grads
        _, m, n, k = self._dims(a)
        u_square, vh_square = _known_equal(k, m), _known_equal(k, n)  # K == M, K == N
        if not self.full_matrices or (u_square and vh_square):
            return [_svd_grad(u, s, vh, g_u, g_s, g_vh, u_square, vh_square)]
        if g_u is None and g_vh is None:  # S alone: U diag(g) Vh with the reduced factors
            u, _, vh = Svd(False)(a)
            return [_svd_grad(u, s, vh, g_u, g_s, g_vh, u_square, vh_square)]
        if not _may_be_equal(m, n):  # more than K columns/rows of U or Vh
            return [
                NotDifferentiable(
                    "svd: U and Vh of full_matrices=True are not unique for a non-square "
                    f"matrix ({a.describe()}); pass full_matrices=False for their gradient"
                )
            ]
        # not known to be square: the square matrix's gradient, from U and Vh once each
        # matrix is checked to be square when the function runs (every product with gU or gVh
        # reads them, so none runs before the check)
        u, vh = _square_when_run(u, a), _square_when_run(vh, a)
        return [_svd_grad(u, s, vh, g_u, g_s, g_vh, True, True)]


def _square_when_run(v, a):
    """v, once each matrix of ``a`` is checked to be square when the function runs (the
    gradient through U and Vh of full_matrices=True exists for square matrices only)."""
    rows, cols = shape(a)[-2], shape(a)[-1]

    def what(more, fewer):
        return (
            f"svd: U and Vh of full_matrices=True have no gradient for a non-square matrix, and "
            f"{a.describe()} had more {more} than {fewer} when the function ran; pass "
            "full_matrices=False for their gradient"
        )

    return at_most(
        at_most(v, rows, cols, what("rows", "columns")), cols, rows, what("columns", "rows")
    )


def _may_be_equal(a, b) -> bool:
    """Two dims that may be one size when the function runs (not fixed or named apart)."""
    try:
        unify(a, b)
    except DimMismatch:
        return False
    return True


def _known_equal(a, b) -> bool:
    """Two dims known to be equal when the graph is built (unknown dims are not)."""
    return a is not None and a == b


def _svd_grad(u, s, vh, g_u, g_s, g_vh, u_square, vh_square):
    """Townsend's gradient of the reduced SVD: U [(F o (U'gU - gU'U)) S + diag(gS) +
    S (F o (V'gV - gV'V))] Vh, plus (I - UU') gU S^-1 Vh and U S^-1 gVh (I - VV') where U or
    Vh is not square (' is the transpose)."""
    eye = eye_like(expand_dims(s, -1) * expand_dims(s, -2))
    inner = None if g_s is None else diag_embed(g_s, eye)
    if g_u is not None or g_vh is not None:
        squares = s * s
        gaps = expand_dims(squares, -2) - expand_dims(squares, -1)  # s_j**2 - s_i**2
        f = where(eye, 0, 1 / where(eye, 1, gaps))
    rows, cols = expand_dims(s, -1), expand_dims(s, -2)
    if g_u is not None:
        u_g = swap_last(u) @ g_u
        inner = _plus(inner, f * (u_g - swap_last(u_g)) * cols)
    if g_vh is not None:
        v_g = vh @ swap_last(g_vh)  # V' gV
        inner = _plus(inner, rows * (f * (v_g - swap_last(v_g))))
    out = None if inner is None else u @ inner @ vh
    if g_u is not None and not u_square:
        out = _plus(out, ((g_u - u @ (swap_last(u) @ g_u)) / cols) @ vh)
    if g_vh is not None and not vh_square:
        out = _plus(out, u @ ((g_vh - (g_vh @ swap_last(vh)) @ vh) / rows))
    return out


def _plus(total, term):
    return term if total is None else total + term


#: ``np.linalg.svd``'s result (NumPy 2): ``svd(x).S``
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])


def svd(a, full_matrices=True, compute_uv=True):
    """``np.linalg.svd``: an :data:`SVDResult` ``(U, S, Vh)``, or only S when ``compute_uv``
    is False. The gradients through U and Vh assume distinct singular values."""
    a = as_variable(a)
    if not compute_uv:
        return SingularValues()(a)
    u, s, vh = Svd(full_matrices)(a)
    return SVDResult(u, s, vh)
