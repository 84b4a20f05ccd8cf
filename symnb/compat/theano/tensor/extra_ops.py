"""``theano.tensor.extra_ops``: the few of its functions course code uses, on symnb's ops."""

from __future__ import annotations

from symnb import ops as sn
from symnb.compat.theano.configparser import resolve_dtype
from symnb.compat.theano.tensor.basic import squeeze  # noqa: F401 - Theano's, quiet
from symnb.core.variable import as_variable

cumsum, cumprod, repeat = sn.cumsum, sn.cumprod, sn.repeat


def to_one_hot(y, nb_class, dtype=None):
    """One-hot rows of ``nb_class`` (an int or an integer scalar variable) for integer labels
    ``y`` (floatX unless ``dtype``)."""
    return sn.one_hot(as_variable(y), nb_class, dtype=resolve_dtype(dtype or "floatX"))
