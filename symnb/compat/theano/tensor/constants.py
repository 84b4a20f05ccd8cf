"""``T.get_scalar_constant_value``: the number a symbolic scalar is known to hold when the
graph is built, which Theano code reads to choose shapes and axes (``T.join``'s axis)."""

from __future__ import annotations

import numpy as np

from symnb.core.graph import ancestors
from symnb.core.op import _at_user_line
from symnb.core.variable import Constant, Variable
from symnb.errors import SymnbError
from symnb.ops.shape import Shape, size_dim


class NotScalarConstantError(SymnbError, ValueError):
    """``T.NotScalarConstantError``: the variable's value is not known before the function
    runs (it depends on an input, a shared variable or a random draw), or is not a scalar."""


class EmptyConstantError(NotScalarConstantError):
    """``T.EmptyConstantError``: the constant is an empty array."""


def get_scalar_constant_value(v, elemwise=True, only_process_constants=False, max_recur=10):
    """The scalar value (a 0-d array) of ``v``: a number, a one-element array, a constant, or
    a graph computed from constants and static sizes only (``T.constant(2) * 3``,
    ``x.shape[1]`` of a dim the type fixes), which is computed now with each op's NumPy
    reference. Anything else raises ``NotScalarConstantError``. ``elemwise`` and
    ``max_recur`` are accepted (the whole graph is followed)."""
    if isinstance(v, (bool, int, float, np.number, np.bool_)):
        return np.asarray(v)
    if isinstance(v, np.ndarray):
        return _scalar(v, "the array")
    if not isinstance(v, Variable):
        raise _at_user_line(NotScalarConstantError(f"{v!r} is not a tensor or a number"))
    if isinstance(v, Constant) or not only_process_constants:
        value = _static_value(v)
        if value is not None:
            return _scalar(value, v.describe())
    raise _at_user_line(
        NotScalarConstantError(
            f"{v.describe()} is not a constant: its value depends on what the function is "
            "given when it runs"
        )
    )


def _scalar(value: np.ndarray, what: str) -> np.ndarray:
    value = np.asarray(value)
    if value.ndim and value.size == 0:
        raise _at_user_line(EmptyConstantError(f"{what} is an empty constant"))
    if value.size != 1:
        raise _at_user_line(
            NotScalarConstantError(f"{what} holds {value.size} values, not one scalar")
        )
    return value.copy()


def _static_value(var: Variable):
    """var's value when the graph alone decides it, else None."""
    values: dict[int, np.ndarray] = {}
    for node in ancestors([var]):
        inputs = []
        for x in node.inputs:
            known = values.get(id(x))
            if known is None and isinstance(x, Constant):
                known = np.asarray(x.value)
            inputs.append(known)
        outputs = _node_values(node, inputs)
        if outputs is not None:
            values.update((id(o), r) for o, r in zip(node.outputs, outputs))
    if isinstance(var, Constant):
        return np.asarray(var.value)
    return values.get(id(var))


def _node_values(node, inputs: list):
    """The node's outputs computed now, or None when an input is unknown (a shape is known
    when its type fixes every dim, ``x.shape[i]`` when the type fixes dim i)."""
    if isinstance(node.op, Shape):
        dims = node.inputs[0].type.shape
        if all(isinstance(d, int) for d in dims):
            return [np.array(dims, dtype=node.outputs[0].type.dtype)]
        return None
    if not node.inputs or any(x is None for x in inputs) or not getattr(node.op, "pure", True):
        size = size_dim(node.outputs[0]) if len(node.outputs) == 1 else None
        return [np.asarray(size, dtype=node.outputs[0].type.dtype)] if type(size) is int else None
    try:
        with np.errstate(all="ignore"):
            result = node.op.perform(*inputs)
    except Exception:  # noqa: BLE001 - a failure means "not known now"; the run reports it
        return None
    results = (result,) if len(node.outputs) == 1 else tuple(result)
    return [np.asarray(r) for r in results]
