"""``theano.tensor.nlinalg``: matrix functions on symnb's linear algebra ops; reading one
symnb has no op for is an error saying what to write instead."""

from __future__ import annotations

import functools

from symnb import ops as sn
from symnb.compat.theano.missing import missing_names
from symnb.compat.theano.tensor import basic as T

matrix_inverse, det, trace, svd = sn.inv, sn.det, sn.trace, sn.svd
extract_diag, alloc_diag, diag = sn.diag, sn.diag, sn.diag
matrix_power = sn.matrix_power


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
