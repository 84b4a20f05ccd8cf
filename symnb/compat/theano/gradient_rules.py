"""``T.grad``'s rules where Theano's differ from ``sn.grad``'s: integer variables, and
``known_grads``, each the whole gradient of its variable (``grad_known_final``: the cost
sends it nothing more, and a known gradient of the cost replaces its 1) where ``sn.grad``
adds them to what the cost sends. ``T.Lop``, ``T.jacobian`` and ``T.hessian`` are built on
them (``TheanoReverse``), as Theano built its own on its ``grad``.

``sn.grad`` keeps integers out of differentiation. Theano differentiated with respect to them
as if they were continuous wherever they enter a float result (``theano.grad(c, z)`` of
``c = y + z`` is 1 for an ``lscalar`` z; the gradient with respect to an integer input of
``dot(X, W)`` is the same as for a float one), and gave zeros (floatX) through results that
are integers (``z * 2``, ``argmax``); the gradient of an integer cost with respect to itself
is 1. Here each elementwise op, reduction or product that reads an integer ``wrt`` into a
float result reads ``cast(wrt, result dtype)`` instead (the value is the same: the op
converted it so), and the gradients reaching those casts are summed. Through other ops
(indices, labels) an integer gets no gradient: Theano called those disconnected or raised.

And an op's gradient is Theano 1.0's where its values differ from symnb's rule
(``THEANO_RULES``, given to every pass the layer starts: ``theano_rules``): ``x ** y``'s with
respect to y is 0 wherever x is 0.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from symnb.config import config
from symnb.control.jacobian import Reverse
from symnb.core.graph import ancestors, note_impure, with_own_effects
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import ShapeTypeError
from symnb.grad.reverse import LAYER_RULES, check_wrt, feeds, report_disconnected, zeros_like
from symnb.grad.reverse import grad_known_final as _grad
from symnb.ops.broadcast import Reduce
from symnb.ops.creation import ones_like
from symnb.ops.elemwise import Elemwise, Pow, Where, add, cast, equal, fit_gradient, where
from symnb.ops.linalg import Matmul, Tensordot

#: ops every input of which is a value (not an index, a shape or a label)
VALUE_OPS = (Elemwise, Reduce, Matmul, Tensordot)


def theano_grad(
    cost,
    targets: list,
    known_grads,
    disconnected: str,
    return_disconnected: str,
    names=None,
    call=None,
):
    """One gradient per target, by Theano's rules for integer targets and costs; ``names``
    and ``call`` as ``grad_known_final``'s (``T.Lop``'s eval points)."""
    if (cost is None or cost.type.is_float) and all(t.type.is_float for t in targets):
        return _grad(
            cost,
            targets,
            known_grads=known_grads,
            disconnected=disconnected,
            return_disconnected=return_disconnected,
            names=names,
            call=call,
        )
    if cost is not None and cost.type.ndim != 0:
        raise ShapeTypeError(f"sn.grad: the cost must be a scalar (0-d), got {cost.describe()}")
    known = list(known_grads.items()) if isinstance(known_grads, dict) else known_grads or []
    given = {id(var): g for var, g in known}
    connected = _feeding(([cost] if cost is not None else []) + [var for var, _ in known])
    ints = [t for t in targets if not t.type.is_float and id(t) not in given and t is not cost]
    found = _float_paths(cost, known, targets, ints, names)
    results = []
    for t in targets:
        if id(t) in given and not t.type.is_float:
            results.append(as_variable(given[id(t)]))  # Theano: a known gradient is final
        elif t is cost and not t.type.is_float:
            results.append(ones_like(t, dtype=_float_of(t)))
        else:
            parts = [g for g in found.get(id(t), []) if g is not None]
            results.append(_total(t, parts, id(t) in connected, disconnected, return_disconnected))
    return results


class TheanoReverse(Reverse):
    """The passes ``T.jacobian`` and ``T.hessian`` are built from: Theano built them from
    its ``grad``, so an integer ``wrt`` is differentiated as if continuous there too (a
    complex one is refused, as ``T.grad`` refuses it)."""

    def check_wrt(self, var: Variable, call: str) -> None:
        if var.type.is_float:
            check_wrt(var, call)

    def grad(self, cost, targets: list, disconnected: str, return_disconnected: str) -> list:
        return theano_grad(cost, targets, None, disconnected, return_disconnected)

    def lop(self, f: Variable, targets: list, point) -> list:
        return theano_grad(None, targets, [(f, point)], "ignore", "zero")

    def dtype(self, var: Variable):
        return _float_of(var)


THEANO_REVERSE = TheanoReverse()


def _float_paths(cost, known: list, targets: list, ints: list, names=None) -> dict[int, list]:
    """The gradients reaching each target along float values: per target id, a list (None
    where nothing reached)."""
    floating = [k for k, (var, _) in enumerate(known) if var.type.is_float]
    float_known = [known[k] for k in floating]
    float_names = None if names is None else [names[k] for k in floating]
    float_cost = cost if cost is not None and cost.type.is_float else None
    seeds = ([float_cost] if float_cost is not None else []) + [var for var, _ in float_known]
    if not seeds:
        return {}
    floats = [t for t in targets if t.type.is_float]
    impure: dict = {}
    copies, casts = _with_value_casts(seeds + floats, ints, impure)
    new_cost = copies[0] if float_cost is not None else None
    new_known = list(
        zip(copies[len(seeds) - len(float_known) : len(seeds)], (g for _, g in float_known))
    )
    float_wrt = copies[len(seeds) :]
    wrt = float_wrt + [c for z in ints for c in casts[id(z)]]
    grads = _grad(
        new_cost,
        wrt,
        known_grads=new_known or None,
        disconnected="ignore",
        return_disconnected="none",
        names=float_names,
    )
    # the copy's prints and draws: the originals
    grads = iter(with_own_effects(list(grads), impure))
    found = {id(t): [next(grads)] for t in floats}
    for z in ints:
        found[id(z)] = [next(grads) for _ in casts[id(z)]]
    return found


def _total(t: Variable, parts: list, connected: bool, disconnected: str, return_disconnected: str):
    """The sum of a target's gradients; zeros when none reached it along an integer path,
    the disconnected report when it is not among the cost's inputs at all."""
    if parts:
        total = parts[0]
        for part in parts[1:]:
            total = add(total, part)
        return total
    if not connected:
        report_disconnected(t, disconnected, return_disconnected)
        if return_disconnected == "none":
            return None
    return cast(zeros_like(t), _float_of(t))


def _float_of(var: Variable) -> str:
    """Theano's dtype for a gradient of ``var``: its own if float, else floatX."""
    return var.type.dtype.name if var.type.is_float else config.floatX


def _feeding(outputs: list) -> set[int]:
    """Ids of the outputs and every variable they are computed from other than through
    ``disconnected_grad`` (``sn.grad``'s connectedness: ``reverse.feeds``)."""
    return feeds([(v, None) for v in outputs], ancestors(outputs))


def _with_value_casts(outputs: list, ints: list, impure: dict):
    """Copies of ``outputs`` in which every value op that reads one of ``ints`` into a float
    result reads its cast to that dtype, and the casts made per int; ``impure`` gets the
    copies of impure nodes (``core.graph.note_impure``)."""
    int_ids = {id(z) for z in ints}
    memo: dict[int, Variable] = {}
    casts: dict[int, list] = {id(z): [] for z in ints}
    for node in ancestors(outputs):
        inputs = [memo.get(id(x), x) for x in node.inputs]
        slots = _value_slots(node, int_ids)
        if slots:
            dtype = node.outputs[0].type.dtype
            for k in slots:
                inputs[k] = cast(inputs[k], dtype)
                casts[id(node.inputs[k])].append(inputs[k])
            made = node.op(*inputs)
            made = made if isinstance(made, list) else [made]
            new = [
                m if m.type.dtype == o.type.dtype else cast(m, o.type.dtype)
                for m, o in zip(made, node.outputs)
            ]
        elif any(a is not b for a, b in zip(inputs, node.inputs)):
            copy = node.clone_with(inputs)
            note_impure(node, copy, impure)
            new = copy.outputs
        else:
            continue
        memo.update((id(o), n) for o, n in zip(node.outputs, new))
    return [memo.get(id(o), o) for o in outputs], casts


def _value_slots(node, int_ids: set) -> list[int]:
    """The input positions of ``node`` that hold one of the integer targets as a value
    entering a float result (a condition of ``where`` is no value)."""
    op = node.op
    if not isinstance(op, VALUE_OPS) or not op.differentiable or not op.pure:
        return []
    if not all(o.type.is_float for o in node.outputs):
        return []
    return [
        k
        for k, x in enumerate(node.inputs)
        if id(x) in int_ids and not (isinstance(op, Where) and k == 0)
    ]


def _pow_rule(op: Pow, needed: list, inputs: list, outputs: list, output_grads: list) -> list:
    """Theano 1.0's ``Pow`` gradient (``Pow.L_op``, theano/scalar/basic.py): with respect to
    y, ``switch(eq(x, 0), 0, gz * log(x) * x ** y)``, 0 wherever x is 0 (symnb's is JAX's,
    NaN at x = 0 and y < 0, where the value is inf), gz inside the switch as in Theano, so
    that an infinite gz there (``log(x ** y)``) gives 0 too; the factor is switched to 0
    there as well, so that ``T.Rop``'s second pass (the derivative in gz) is 0 there, as
    Theano's R_op, ``L_op(ones) * v``. With respect to x symnb's rule (0 at x = y = 0, where
    Theano's was NaN: docs/theano.md)."""
    grads = op.grad_wrt([i for i in needed if i != 1], inputs, outputs, output_grads)
    if 1 in needed:
        (x, y), output = inputs, outputs[0]
        part = output * op.log_base(x, output)
        if isinstance(x, Constant) and np.all(x.value != 0):
            grads[1] = fit_gradient(output_grads[0] * part, y)
        else:
            zero = equal(x, 0)
            part = where(zero, 0, output_grads[0] * where(zero, 0, part))
            grads[1] = fit_gradient(part, y)
    return grads


#: Theano 1.0's gradient rules where its values differ from symnb's, per op class
THEANO_RULES = {Pow: _pow_rule}


@contextmanager
def theano_rules() -> Iterator[None]:
    """Every gradient built inside uses ``THEANO_RULES`` (``T.grad``, ``T.Rop``, ``T.Lop``,
    ``T.jacobian``, ``T.hessian``, ``verify_grad``; a scan's inner gradient too)."""
    token = LAYER_RULES.set(THEANO_RULES)
    try:
        yield
    finally:
        LAYER_RULES.reset(token)
