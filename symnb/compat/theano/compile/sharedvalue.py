"""``theano.compile.sharedvalue``: ``shared`` and ``SharedVariable`` (symnb's)."""

from __future__ import annotations

from symnb.compat.theano.tensor.var import TensorSharedVariable, shape_of
from symnb.core.array_kinds import lends_memory
from symnb.core.op import _at_user_line
from symnb.core.source import assigned_target, user_span
from symnb.core.variable import SharedVariable, array_of
from symnb.errors import ArgumentError, ShapeError


def shared(
    value, name=None, strict=False, allow_downcast=None, borrow=False, broadcastable=None, **kwargs
) -> SharedVariable:
    """``theano.shared``: a value kept between calls. Its dims are unknown to the graph
    (``set_value`` may change them) except those ``broadcastable`` marks, which are 1. Its
    dtype is the value's; ``set_value`` converts a value of another dtype by Theano's rule
    with ``strict`` and ``allow_downcast`` (``tensor/var.py:theano_filter``)."""
    if kwargs:
        raise _at_user_line(ArgumentError(f"shared: unexpected arguments {sorted(kwargs)}"))
    # read once, as sn.shared reads it (a torch tensor that requires grad detached with a
    # note, a ragged list a ShapeError naming the variable), for its number of dims
    label = name if name is not None else assigned_target(user_span())
    array = array_of(value, None, "shared", label)
    pattern = (False,) * array.ndim if broadcastable is None else tuple(broadcastable)
    if len(pattern) != array.ndim:
        raise _at_user_line(
            ShapeError(f"shared: broadcastable {pattern} does not fit a {array.ndim}-d value")
        )
    # the array read is kept as it is where it is the caller's memory (borrow=True), else
    # copied (a list, a resolved torch view: no one else holds it, so it is not lent)
    borrow = borrow and lends_memory(value, array)
    var = TensorSharedVariable(array, name=name, shape=shape_of(pattern), borrow=borrow)
    var.strict, var.allow_downcast = bool(strict), allow_downcast
    return var
