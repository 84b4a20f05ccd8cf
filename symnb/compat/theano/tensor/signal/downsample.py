"""``theano.tensor.signal.downsample.max_pool_2d``: Theano's older pooling entry point."""

from __future__ import annotations

from symnb.compat.theano.tensor.signal.pool import pool_2d
from symnb.core.variable import Variable


def max_pool_2d(input, ds, ignore_border=None, st=None, padding=(0, 0), mode="max") -> Variable:  # noqa: A002
    """``pool_2d`` with the old argument names (``ds`` the window, ``st`` the stride)."""
    return pool_2d(input, ws=ds, ignore_border=ignore_border, stride=st, pad=padding, mode=mode)
