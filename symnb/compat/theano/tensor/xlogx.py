"""``theano.tensor.xlogx``: ``xlogx(x) = x log x`` and ``xlogy0(x, y) = x log y``, both 0
where x is 0 (an entropy's and a cross-entropy's terms: ``0 log 0`` is 0, not NaN). The log
reads 1 where x is 0, so the gradient there is finite too."""

from __future__ import annotations

from symnb import ops as sn
from symnb.core.variable import as_variable


def xlogx(x):
    """x log x, 0 where x is 0."""
    x = as_variable(x)
    return x * sn.log(sn.where(sn.equal(x, 0), 1, x))


def xlogy0(x, y):
    """x log y, 0 where x is 0 (whatever y is there)."""
    x, y = as_variable(x), as_variable(y)
    return x * sn.log(sn.where(sn.equal(x, 0), 1, y))
