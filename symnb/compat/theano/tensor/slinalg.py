"""``theano.tensor.slinalg``: ``cholesky`` and ``solve`` on symnb's ops; reading one symnb
has no op for is an error saying what to write instead."""

from __future__ import annotations

from symnb import ops as sn
from symnb.compat.theano.missing import missing_names
from symnb.core.variable import as_variable


def cholesky(x, lower=True):
    """The lower Cholesky factor (``lower=False``: its transpose, the upper one)."""
    factor = sn.cholesky(as_variable(x))
    return factor if lower else sn.transpose(factor)


def solve(a, b):
    """x with a @ x = b."""
    return sn.solve(a, b)


#: Theano's slinalg functions that symnb has no op for, each with what to write instead
_MISSING = {
    "solve_triangular": "solve(a, b), which takes a triangular a too",
    "eigvalsh": "np.linalg.eigvalsh (or scipy.linalg.eigvalsh) on the value",
}


__getattr__ = missing_names(
    "theano.tensor.slinalg",
    "it has cholesky and solve",
    _MISSING,
    "symnb's ops (symnb.ops, docs/ops.md) or the value in NumPy",
)
