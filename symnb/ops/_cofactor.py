"""det's second derivative in NumPy: ``CofactorGrad``'s reference (symnb/ops/linalg.py).

For the cofactor matrix C(a) = det(a) inv(a)^T, the derivative applied to W is
``det (<W, B> B - B W^T B)``, B = inv(a)^T: one inverse, cheap. Near a singular matrix its
two terms, each ~ det |B|^2, cancel, so it loses ``eps * cond(a)`` of its accuracy; there
the SVD's form (no division, exact at singular matrices) is used instead.
"""

from __future__ import annotations

import numpy as np


def cofactor_derivative(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """d C(a) applied to ``w`` (det's Hessian times ``w``), for stacks of square matrices."""
    with np.errstate(all="ignore"):
        try:
            inv = np.linalg.inv(a)
        except np.linalg.LinAlgError:  # an exactly singular matrix
            inv = None
        if inv is not None and _well_conditioned(a, inv):
            b = np.swapaxes(inv, -1, -2)
            det = np.linalg.det(a)[..., None, None]
            inner = np.sum(w * b, axis=(-2, -1), keepdims=True)
            return det * (inner * b - b @ np.swapaxes(w, -1, -2) @ b)
    return _from_svd(a, w)


def _well_conditioned(a, inv) -> bool:
    """Whether every matrix's 1-norm condition number keeps sqrt(eps) of accuracy."""
    cond = _norm1(a) * _norm1(inv)
    limit = 1 / np.sqrt(np.finfo(np.result_type(a, np.float32)).eps)
    return bool(np.all(np.isfinite(inv)) and np.all(cond < limit))


def _norm1(m):
    return np.max(np.sum(np.abs(m), axis=-2), axis=-1)


def _from_svd(a, w):
    """With a = U diag(s) Vh and W~ = U^T W Vh^T: sign * U [diag(Q diag(W~)) - Q o W~^T] Vh,
    Q_ij the product of the singular values other than s_i and s_j (0 for i = j), sign =
    det(U Vh): the second-order terms of det(diag(s) + W~)."""
    u, s, vh = np.linalg.svd(a)
    sign = np.sign(np.linalg.det(u @ vh))[..., None, None]
    n = s.shape[-1]
    eye = np.eye(n, dtype=bool)
    rows = np.where(eye, 1, s[..., None, :])  # row i: s with s_i replaced by 1
    ones = np.ones(rows.shape[:-1] + (1,), rows.dtype)
    before = np.cumprod(np.concatenate([ones, rows[..., :-1]], -1), -1)
    after = np.cumprod(np.concatenate([ones, rows[..., :0:-1]], -1), -1)[..., ::-1]
    q = np.where(eye, 0, before * after)  # the product of row i without its element j
    w_t = np.swapaxes(u, -1, -2) @ w @ np.swapaxes(vh, -1, -2)
    diagonal = np.einsum("...ij,...j->...i", q, np.diagonal(w_t, 0, -2, -1))
    inner = diagonal[..., None] * eye - q * np.swapaxes(w_t, -1, -2)
    return sign * (u @ inner @ vh)
