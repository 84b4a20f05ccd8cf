"""``theano.compile.sharedvalue``: ``shared`` and ``SharedVariable`` (symnb's)."""

from __future__ import annotations

import numpy as np

from symnb.compat.theano.tensor.var import TensorSharedVariable, shape_of
from symnb.core.op import _at_user_line
from symnb.core.variable import SharedVariable


def shared(
    value, name=None, strict=False, allow_downcast=None, borrow=False, broadcastable=None, **kwargs
) -> SharedVariable:
    """``theano.shared``: a value kept between calls. Its dims are unknown to the graph
    (``set_value`` may change them) except those ``broadcastable`` marks, which are 1. Its
    dtype is the value's; ``set_value`` converts a value of another dtype by Theano's rule
    with ``strict`` and ``allow_downcast`` (``tensor/var.py:theano_filter``)."""
    if kwargs:
        raise _at_user_line(TypeError(f"shared: unexpected arguments {sorted(kwargs)}"))
    array = np.asarray(value)
    pattern = (False,) * array.ndim if broadcastable is None else tuple(broadcastable)
    if len(pattern) != array.ndim:
        raise _at_user_line(
            ValueError(f"shared: broadcastable {pattern} does not fit a {array.ndim}-d value")
        )
    var = TensorSharedVariable(value, name=name, shape=shape_of(pattern), borrow=borrow)
    var.strict, var.allow_downcast = bool(strict), allow_downcast
    return var
