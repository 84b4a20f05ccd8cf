"""``T.stack``, ``T.stacklists`` and ``T.join`` with the arguments Theano 1.0 took: the axis
by position or by name, the older ``T.stack(a, b, c)``, and a constant symbolic axis."""

from __future__ import annotations

import numbers

import numpy as np

from symnb import ops as sn
from symnb.compat.theano.tensor.constants import NotScalarConstantError, get_scalar_constant_value
from symnb.compat.theano.upcasting import number_dtype
from symnb.core.op import _at_user_line
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import ArgumentError, ShapeTypeError


def stack(*tensors, **kwargs) -> Variable:
    """``T.stack(tensors, axis=0)`` (the axis also by position: ``T.stack([a, b], 1)``; both
    by name: ``T.stack(tensors=[a, b], axis=1)``), or Theano's older ``T.stack(a, b, c)``.
    Scalars stack into a vector whatever the axis, as in Theano. A Python number among them
    is the constant Theano's ``as_tensor_variable`` made of it (``number_dtype``: an int the
    smallest int that holds it, a float floatX), so ``T.stack([fscalar, 1.])`` is float32 and
    ``T.stack([iscalar, 1])`` int32, not NumPy's int64/float64."""
    items, axis = _stack_arguments(tensors, kwargs)
    if not items:
        raise _at_user_line(ArgumentError("T.stack: tensors is empty; give at least one tensor"))
    items = [_as_tensor(t) for t in items]
    if all(t.type.ndim == 0 for t in items):
        axis = 0
    return sn.stack(items, axis=axis)


def _as_tensor(item) -> Variable:
    """A tensor to stack: a Python number becomes a constant of Theano's dtype for it."""
    if isinstance(item, (bool, numbers.Number)) and not isinstance(item, np.generic):
        return Constant(item, dtype=number_dtype(item))
    return as_variable(item)


def _stack_arguments(tensors: tuple, kwargs: dict) -> tuple[list, int]:
    """(tensors, axis) from the ways Theano 1.0's ``stack`` took them."""
    kwargs = dict(kwargs)
    if "tensors" in kwargs:
        if tensors:
            raise _at_user_line(
                ArgumentError("T.stack: tensors given both by position and by name")
            )
        items, axis = kwargs.pop("tensors"), kwargs.pop("axis", 0)
    elif tensors and isinstance(tensors[0], (list, tuple)):
        if len(tensors) > 2:
            raise _at_user_line(
                ArgumentError(f"T.stack(tensors, axis): {len(tensors)} arguments given, at most 2")
            )
        items = tensors[0]
        axis = tensors[1] if len(tensors) == 2 else kwargs.pop("axis", 0)
    else:
        items, axis = tensors, kwargs.pop("axis", 0)
    if kwargs:
        raise _at_user_line(ArgumentError(f"T.stack: unexpected arguments {sorted(kwargs)}"))
    return list(items), constant_int(axis, "stack", "axis")


def stacklists(arg) -> Variable:
    """``T.stacklists([[a, b], [c, d]])``: nested lists of tensors (or scalars) stacked into
    one tensor with the lists' nesting as its first dims."""
    if isinstance(arg, (list, tuple)):
        return stack([stacklists(item) for item in arg])
    return arg


def join(axis, *tensors) -> Variable:
    """``T.join(axis, a, b, ...)``: ``concatenate`` with the axis first; a symbolic axis must
    be a constant (``T.constant(1)``, or arithmetic of constants)."""
    return sn.concatenate(list(tensors), axis=constant_int(axis, "join", "axis"))


def constant_int(value, call: str, what: str) -> int:
    """An int argument that Theano also took as a symbolic scalar: it must be known now."""
    if isinstance(value, Variable):
        if value.type.ndim != 0 or value.type.dtype.kind not in "iu":
            raise _at_user_line(
                ShapeTypeError(
                    f"T.{call}: {what} must be an integer scalar, not {value.describe()}"
                )
            )
        try:
            value = get_scalar_constant_value(value)
        except NotScalarConstantError:
            raise _at_user_line(
                NotImplementedError(
                    f"T.{call}: the {what} {value.describe()} is computed when the function "
                    "runs, but symnb needs it when the graph is built (the result's shape "
                    f"depends on it): pass an int, or choose between T.{call} calls with ifelse"
                )
            ) from None
    number = np.asarray(value)
    if number.ndim != 0 or number.dtype.kind not in "iu":
        raise _at_user_line(ShapeTypeError(f"T.{call}: {what} must be an int, not {value!r}"))
    return int(number)
