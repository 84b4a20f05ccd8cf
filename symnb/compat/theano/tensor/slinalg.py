"""``theano.tensor.slinalg``: ``cholesky`` and ``solve`` on symnb's ops."""

from __future__ import annotations

from symnb import ops as sn
from symnb.core.variable import as_variable


def cholesky(x, lower=True):
    """The lower Cholesky factor (``lower=False``: its transpose, the upper one)."""
    factor = sn.cholesky(as_variable(x))
    return factor if lower else sn.transpose(factor)


def solve(a, b):
    """x with a @ x = b."""
    return sn.solve(a, b)
