"""``theano.tensor.nlinalg``: matrix functions on symnb's linear algebra ops."""

from __future__ import annotations

import functools

from symnb import ops as sn

matrix_inverse, det, trace, svd = sn.inv, sn.det, sn.trace, sn.svd
extract_diag, alloc_diag, diag = sn.diag, sn.diag, sn.diag


def matrix_dot(*args):
    """``a.dot(b).dot(c)...`` of any number of matrices."""
    return functools.reduce(sn.dot, args)
