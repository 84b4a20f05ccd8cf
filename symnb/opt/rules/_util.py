"""Small questions rules ask about variables: constant values, users, types that fit."""

from __future__ import annotations

import numpy as np

from symnb.core.dims import shapes_unify
from symnb.core.graph import OUTPUT
from symnb.core.variable import Constant, Variable
from symnb.ops.elemwise import Elemwise
from symnb.ops.shape import DimShuffle, ResultShape, Shape


def constant_value(var: Variable):
    """The value of a constant as an array, or None for anything else."""
    return var.value if isinstance(var, Constant) else None


def is_filled_with(var: Variable, number) -> bool:
    """A constant whose every element equals ``number``."""
    value = constant_value(var)
    return value is not None and value.size > 0 and bool(np.all(value == number))


def has_sign_bit(var: Variable) -> bool:
    """A constant with a negative element or part: ``-0.0`` equals 0 but ``x - (-0.0)`` is
    ``x + 0.0``, which turns ``-0.0`` into ``+0.0``; a zero rule asks this as well."""
    value = constant_value(var)
    if value is None or value.dtype.kind not in "iufc":
        return False
    return bool(np.signbit(value.real).any() or np.signbit(value.imag).any())


def is_complex(var: Variable) -> bool:
    return var.type.dtype.kind == "c"


def only_user(graph, var: Variable, node) -> bool:
    """``node`` is the only user of ``var`` (and var is not a graph output)."""
    users = graph.clients.get(var, [])
    return len(users) == 1 and users[0][0] is node


def does_not_stretch(small: Variable, big: Variable) -> bool:
    """Broadcasting ``small`` against ``big`` cannot enlarge ``big`` (small's dims are 1s)."""
    return small.type.ndim <= big.type.ndim and all(d == 1 for d in small.type.shape)


def fits(old: Variable, new: Variable) -> bool:
    """``new`` has ``old``'s dtype and rank, and no dim provably differs."""
    return old.type.dtype == new.type.dtype and shapes_unify(old.type.shape, new.type.shape)


def same_static_shape(a: Variable, b: Variable) -> bool:
    """Both shapes are fully known ints and equal."""
    return a.type.shape == b.type.shape and all(isinstance(d, int) for d in a.type.shape)


def is_pure(op) -> bool:
    """An op whose result depends only on its inputs (random ops set ``pure = False``)."""
    return op.pure


def shape_source(var: Variable) -> Variable:
    """The value ``var``'s shape is read off without computing ``var``: down through
    elementwise ops, the operand of their result's shape (of its rank, every other operand's
    dims 1s, so nothing broadcasts it larger), and through ops whose result has their first
    input's shape (``keeps_shape``: a sort, a ``print_value``, which then neither runs nor
    prints); ``var`` itself where there is none."""
    while var.owner is not None:
        if var.owner.op.keeps_shape:
            var = var.owner.inputs[0]
            continue
        if not isinstance(var.owner.op, Elemwise):
            break
        node, out = var.owner, var
        keeper = None
        for k, a in enumerate(node.inputs):
            others = node.inputs[:k] + node.inputs[k + 1 :]
            if a.type.ndim == out.type.ndim and all(does_not_stretch(b, a) for b in others):
                keeper = a
                break
        if keeper is None:
            break
        var = keeper
    return var


#: ops whose result is a view of their input: a shape computed through them alone saves
#: nothing (a transpose costs no more than its shape)
VIEWS = (DimShuffle,)


def computed_shape(graph, var: Variable) -> Variable | None:
    """An int64 vector of ``var``'s runtime shape, computed from the shapes of the values
    its op reads (``ResultShape``, by the op's ``result_shape``) without computing ``var``:
    down through the ops that define ``result_shape`` and that only they read, and through
    elementwise ops (``shape_source``), to values computed anyway or leaves, whose shape is
    read. None where ``var``'s op defines no ``result_shape``, or only views do (a
    transpose's shape is no cheaper than the transpose)."""
    vector, computes = _shape_vector(graph, var, top=True)
    return vector if computes else None


def _shape_vector(graph, var: Variable, top: bool) -> tuple[Variable, bool]:
    """(var's shape vector, whether it skips an op that computes)."""
    var = shape_source(var)
    node = var.owner
    users = graph.clients.get(var, [])
    if (
        node is None
        or not hasattr(node.op, "result_shape")
        or len(node.outputs) != 1
        or not top
        and (len(users) != 1 or users[0][0] == OUTPUT)  # computed anyway: its shape is free
    ):
        return _built(graph, Shape(), [var]), False
    shapes, computes = [], not isinstance(node.op, VIEWS)
    for x in node.inputs:
        vector, skips = _shape_vector(graph, x, top=False)
        shapes.append(vector)
        computes = computes or skips
    out = _built(graph, ResultShape(node.op, var.type.ndim), shapes)
    out.source = var.source  # (a shape error when the function runs names var's line)
    if var.source is not None:
        out.owner.tag["source"] = var.source  # (kept by the engine's _inherit_sources)
    return out, computes


def _built(graph, op, inputs) -> Variable:
    """op applied to inputs: the graph's node where it has one (a gradient reads the shape
    of one value in several places), else a new one."""
    for user, _ in graph.clients.get(inputs[0], []):
        if user != OUTPUT and user.op == op and all(a is b for a, b in zip(user.inputs, inputs)):
            return user.outputs[0]
    return op(*inputs)
