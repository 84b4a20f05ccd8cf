"""``theano.tensor.nlinalg``: matrix functions on symnb's linear algebra ops; reading one
symnb has no op for is an error saying what to write instead."""

from __future__ import annotations

import functools

from symnb import ops as sn
from symnb.compat.theano.missing import missing_names
from symnb.compat.theano.tensor import basic as T
from symnb.core.op import _at_user_line
from symnb.core.variable import as_variable
from symnb.errors import ShapeError

matrix_inverse, det, trace, svd = sn.inv, sn.det, sn.trace, sn.svd
diag = sn.diag  # a vector gives a matrix, a matrix its diagonal (Theano's nlinalg.diag)
matrix_power = sn.matrix_power


def alloc_diag(x):
    """Theano's ``AllocDiag``: the square matrix with the vector x on its diagonal; x of
    another rank is refused, as in Theano (``diag`` takes a vector or a matrix)."""
    return sn.diag(_of_rank(x, 1, "alloc_diag"))


def extract_diag(x):
    """Theano's ``ExtractDiag``: the diagonal of the matrix x, a vector; x of another rank
    is refused, as in Theano (``diag`` takes a vector or a matrix)."""
    return sn.diag(_of_rank(x, 2, "extract_diag"))


#: each of the two: the rank it takes, and the other, which takes the other rank
_RANKS = {"alloc_diag": ("a vector", "extract_diag"), "extract_diag": ("a matrix", "alloc_diag")}


def _of_rank(x, ndim: int, name: str):
    """x, where it has ``ndim`` dims (Theano's AllocDiag and ExtractDiag raise TypeError
    for another rank); else a ShapeError at the user's line naming the function and x."""
    x = as_variable(x)
    if x.type.ndim != ndim:
        what, other = _RANKS[name]
        hint = (
            f"\n  hint: T.nlinalg.{other}(x) takes {_RANKS[other][0]}, T.nlinalg.diag(x) either"
            if x.type.ndim in (1, 2)
            else ""
        )
        message = f"T.nlinalg.{name}: x must be {what}, as in Theano, not {x.describe()}"
        raise _at_user_line(ShapeError(message + hint))
    return x


def matrix_dot(*args):
    """``T.dot(T.dot(a, b), c)...`` of any number of arguments, as Theano 1.0 folds it
    (``T.dot`` is ``np.dot`` for every rank)."""
    return functools.reduce(T.dot, args)


#: Theano's nlinalg functions that symnb has no op for, each with what to write instead
_MISSING = {
    "eig": "np.linalg.eig on the value",
    "eigh": "np.linalg.eigh on the value",
    "qr": "np.linalg.qr on the value",
    "pinv": "matrix_inverse(A.T.dot(A)).dot(A.T) for a matrix of full column rank (svd's "
    "factors otherwise), or np.linalg.pinv on the value",
    "lstsq": "slinalg.solve(A.T.dot(A), A.T.dot(b)) for full column rank, or np.linalg.lstsq "
    "on the value",
}


__getattr__ = missing_names(
    "theano.tensor.nlinalg",
    "it has matrix_inverse, det, trace, svd, diag, extract_diag, alloc_diag, matrix_dot and "
    "matrix_power",
    _MISSING,
    "symnb's ops (symnb.ops, docs/ops.md) or the value in NumPy",
)
