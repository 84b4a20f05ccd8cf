"""``theano.tensor.slinalg``: ``cholesky`` and ``solve`` on symnb's ops; reading one symnb
has no op for is an error saying what to write instead."""

from __future__ import annotations

from symnb import ops as sn
from symnb.compat.theano.missing import missing_names
from symnb.core.variable import as_variable


def cholesky(x, lower=True):
    """The lower Cholesky factor L (``L @ L.T = a``) of the symmetric a whose lower triangle
    x holds; ``lower=False``: the upper factor U (``U.T @ U = a``) of the a whose UPPER
    triangle x holds, as Theano's ``scipy.linalg.cholesky(x, lower)``. Only that triangle
    is read (the other may hold anything), so the gradient lives on it."""
    x = as_variable(x)
    if lower:
        return sn.cholesky(x)
    return _swap_last(sn.cholesky(_swap_last(x)))  # U = L(a).T, a read off x.T's lower triangle


def _swap_last(x):
    return sn.swapaxes(x, -1, -2)


def solve(a, b):
    """x with a @ x = b."""
    return sn.solve(a, b)


#: Theano's slinalg functions that symnb has no op for, each with what to write instead
_MISSING = {
    "solve_triangular": "solve(T.tril(a), b) (T.triu(a) for lower=False): solve reads all of "
    "a, solve_triangular only its triangle",
    "eigvalsh": "np.linalg.eigvalsh (or scipy.linalg.eigvalsh) on the value",
}


__getattr__ = missing_names(
    "theano.tensor.slinalg",
    "it has cholesky and solve",
    _MISSING,
    "symnb's ops (symnb.ops, docs/ops.md) or the value in NumPy",
)
