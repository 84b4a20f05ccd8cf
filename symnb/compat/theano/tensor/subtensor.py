"""``theano.tensor.subtensor``: ``set_subtensor``, ``inc_subtensor`` and the
``advanced_*subtensor1`` ops (a vector of rows) with Theano's signatures. symnb's own
functions also take ``(x, index, v)``, so Theano's third positional argument, ``inplace``,
would be read as the value there: these keep Theano's meaning."""

from __future__ import annotations

import numbers

import numpy as np

from symnb import ops as sn
from symnb.core.op import _at_user_line
from symnb.core.variable import Variable, as_variable
from symnb.errors import ArgumentError, DTypeError, ShapeError
from symnb.ops.index import AdvancedSubtensor, Subtensor


def set_subtensor(x, y, inplace=False, tolerate_inplace_aliasing=False) -> Variable:
    """The tensor that ``x = a[index]`` indexes, with ``a[index] = y``. ``inplace`` and
    ``tolerate_inplace_aliasing`` are accepted and change nothing: symnb's in-place rewrites
    decide where a result is written."""
    return _update(x, y, True, inplace=inplace, tolerate_inplace_aliasing=tolerate_inplace_aliasing)


def inc_subtensor(
    x, y, inplace=False, set_instead_of_inc=False, tolerate_inplace_aliasing=False
) -> Variable:
    """The tensor that ``x = a[index]`` indexes, with ``a[index] += y`` (repeated indices
    accumulate), or ``= y`` with ``set_instead_of_inc``; the in-place flags change nothing."""
    _check_flag("inc_subtensor", "set_instead_of_inc", set_instead_of_inc)
    return _update(
        x,
        y,
        bool(set_instead_of_inc),
        inplace=inplace,
        tolerate_inplace_aliasing=tolerate_inplace_aliasing,
    )


def _update(x, y, set_instead: bool, **flags) -> Variable:
    name = "set_subtensor" if set_instead else "inc_subtensor"
    for flag, value in flags.items():
        _check_flag(name, flag, value)
    x, y = as_variable(x), as_variable(y)
    if x.owner is None or not isinstance(x.owner.op, (Subtensor, AdvancedSubtensor)):
        raise _at_user_line(
            ArgumentError(
                f"{name}: x must be the result of a subtensor (a[index]), not {x.describe()}"
            )
        )
    if y.type.ndim > x.type.ndim:  # Theano's rule; NumPy's setitem would drop leading 1s
        raise ShapeError(
            f"{name}: {y.describe()} has more dims than the subtensor {x.describe()} it would "
            f"{'set' if set_instead else 'increment'}"
        )
    return sn.set_subtensor(x, y) if set_instead else sn.inc_subtensor(x, y)


def _check_flag(name, flag, value):
    """A flag is a bool: a tensor there is symnb's ``(x, index, v)`` form written to Theano."""
    if not isinstance(value, (numbers.Integral, np.bool_)):
        shown = value.describe() if isinstance(value, Variable) else repr(value)
        raise _at_user_line(
            ArgumentError(
                f"{name}: {flag} is a bool, not {shown}; Theano's signature is {name}(x[index], "
                f"y, inplace=False, ...); symnb's own symnb.{name}(x, index, v) takes the "
                "index second"
            )
        )


def advanced_subtensor1(x, ilist) -> Variable:
    """``x[ilist]``: the rows of x at an integer vector (Theano's ``AdvancedSubtensor1()``)."""
    x, ilist = _rows("advanced_subtensor1", x, ilist)
    return x[ilist]


def advanced_inc_subtensor1(x, y, ilist) -> Variable:
    """x with ``y`` added at rows ``ilist`` (repeated rows accumulate); Theano's argument
    order, value before index."""
    x, ilist = _rows("advanced_inc_subtensor1", x, ilist, y)
    return sn.inc_subtensor(x, ilist, y)


def advanced_set_subtensor1(x, y, ilist) -> Variable:
    """x with rows ``ilist`` set to ``y``; Theano's argument order, value before index."""
    x, ilist = _rows("advanced_set_subtensor1", x, ilist, y)
    return sn.set_subtensor(x, ilist, y)


def _rows(name, x, ilist, y=None):
    """x and ilist checked as Theano's AdvancedSubtensor1 checks them: an integer vector
    indexing a tensor of rank >= 1, and a value of no more dims than x."""
    x, ilist = as_variable(x), as_variable(ilist)
    if ilist.type.dtype.kind not in "iu":
        raise _at_user_line(DTypeError(f"{name}: ilist must be integers, not {ilist.describe()}"))
    if ilist.type.ndim != 1 or x.type.ndim == 0:
        what = f"ilist {ilist.describe()} is not a vector" if x.type.ndim else "x is 0-d"
        raise _at_user_line(
            ShapeError(f"{name}: {what}; it picks rows of a tensor x ({x.describe()}) by a vector")
        )
    if y is not None and as_variable(y).type.ndim > x.type.ndim:
        raise _at_user_line(
            ShapeError(f"{name}: y {as_variable(y).describe()} has more dims than x {x.describe()}")
        )
    return x, ilist
