"""``T.get_scalar_constant_value``: the number a symbolic scalar is known to hold when the
graph is built, which Theano code reads to choose shapes and axes (``T.join``'s axis)."""

from __future__ import annotations

import numpy as np

from symnb.core.graph import ancestors
from symnb.core.op import _at_user_line
from symnb.core.variable import Constant, Variable
from symnb.errors import SymnbError
from symnb.ops.broadcast import Alloc, BroadcastLike
from symnb.ops.elemwise import Elemwise
from symnb.ops.shape import DimShuffle, Shape, size_dim

#: ops whose output is their first input's values broadcast or moved: filled with one value
#: when that input is (Theano looked through Alloc, DimShuffle and fill/second)
_FILLS = (Alloc, BroadcastLike, DimShuffle)


class NotScalarConstantError(SymnbError, ValueError):
    """``T.NotScalarConstantError``: the variable's value is not known before the function
    runs (it depends on an input, a shared variable or a random draw), or is not a scalar."""


class EmptyConstantError(NotScalarConstantError):
    """``T.EmptyConstantError``: the constant is an empty array."""


def get_scalar_constant_value(v, elemwise=True, only_process_constants=False, max_recur=10):
    """The scalar value (a 0-d array) of ``v``: a number, a one-element array, a constant, a
    graph computed from constants and static sizes only (``T.constant(2) * 3``,
    ``x.shape[1]`` of a dim the type fixes), which is computed now with each op's NumPy
    reference, or, as in Theano, a tensor filled with one known value whatever its shape:
    ``T.alloc(3., n, n)``, ``T.zeros_like(x)``, ``T.fill(x, 2.)``, their dimshuffles and
    elementwise results (``T.ones_like(x) * 2``), the zero gradient through an ``argmax``.
    Anything else raises ``NotScalarConstantError``. ``elemwise`` and ``max_recur`` are
    accepted (the whole graph is followed)."""
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
    """var's value when the graph alone decides it (or the one value it is filled with, a
    0-d array, where its shape is known only when the function runs), else None."""
    values: dict[int, np.ndarray] = {}
    filled: dict[int, np.ndarray] = {}  # the variables filled with one value (0-d arrays)
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
            continue
        ones = [
            _one_value(v) if v is not None else filled.get(id(x))
            for x, v in zip(node.inputs, inputs)
        ]
        one = _filled_with(node, ones)
        if one is not None:
            filled[id(node.outputs[0])] = one
    if isinstance(var, Constant):
        return np.asarray(var.value)
    found = values.get(id(var))
    return found if found is not None else filled.get(id(var))


def _one_value(value: np.ndarray):
    """A known value of one element as a 0-d array (it fills any shape), else None."""
    return value.reshape(()) if value.size == 1 else None


def _filled_with(node, ones: list):
    """The one value that fills node's output, from the one values filling its inputs
    (None where unknown), or None: a fill or move of its first input, or an elementwise
    op of inputs filled each with one value."""
    out = node.outputs[0]
    if isinstance(node.op, _FILLS) and ones[0] is not None:
        return ones[0].astype(out.type.dtype)
    if not isinstance(node.op, Elemwise) or len(node.outputs) != 1 or not node.inputs:
        return None
    if any(one is None for one in ones) or not node.op.pure:
        return None
    try:
        with np.errstate(all="ignore"):
            result = np.asarray(node.op.perform(*ones))
    except Exception:  # noqa: BLE001 - a failure means "not known now"; the run reports it
        return None
    return result.astype(out.type.dtype).reshape(()) if result.size == 1 else None


def _node_values(node, inputs: list):
    """The node's outputs computed now, or None when an input is unknown (a shape is known
    when its type fixes every dim, ``x.shape[i]`` when the type fixes dim i)."""
    if isinstance(node.op, Shape):
        dims = node.inputs[0].type.shape
        if all(isinstance(d, int) for d in dims):
            return [np.array(dims, dtype=node.outputs[0].type.dtype)]
        return None
    if not node.inputs or any(x is None for x in inputs) or not node.op.pure:
        size = size_dim(node.outputs[0]) if len(node.outputs) == 1 else None
        return [np.asarray(size, dtype=node.outputs[0].type.dtype)] if type(size) is int else None
    try:
        with np.errstate(all="ignore"):
            result = node.op.perform(*inputs)
    except Exception:  # noqa: BLE001 - a failure means "not known now"; the run reports it
        return None
    results = (result,) if len(node.outputs) == 1 else tuple(result)
    return [np.asarray(r) for r in results]
