"""``sn.jacobian`` and ``sn.hessian``, built from reverse passes.

Row ``k`` of a Jacobian is the vector-Jacobian product with the ``k``-th one-hot tensor. Of an
expression whose shape is fixed when the graph is built, the rows are stacked along each of
its axes (``sn.stack``; a sum of one-hot outer products, as before, cost O(size^2) per row:
an (800,) expression's Jacobian took 137 ms a call against 0.8 ms by the scan); one reverse
pass is built per element, which suits the small Jacobians and Hessians of teaching and
testing.

An expression whose shape is known only when the function runs gets its rows from a scan
over its flattened elements instead (``sn.scan``; the forward work, the same for every row,
moves out of the loop), so ``jacobian`` and ``hessian`` work for symbolic shapes too. That
scan is why this module sits in symnb.control, above symnb.grad, whose reverse passes it uses.
"""

from __future__ import annotations

import numpy as np

from symnb.control.scan_build import scan
from symnb.core.graph import ancestors, with_own_effects
from symnb.core.variable import Constant, Variable
from symnb.errors import ArgumentError, DTypeError
from symnb.grad.formulas import with_stable_ops
from symnb.grad.reverse import (
    DISCONNECTED,
    RETURN_DISCONNECTED,
    Lop,
    check_option,
    check_wrt,
    feeds,
    grad,
    report_disconnected,
    tag_remaining,
    uid_mark,
    variable_list,
    zeros_like,
)
from symnb.ops.creation import arange, zeros
from symnb.ops.elemwise import cast, equal
from symnb.ops.index import getitem
from symnb.ops.join import stack
from symnb.ops.layout import flatten
from symnb.ops.shape import expand_dims, reshape, shape


class Reverse:
    """The reverse passes a Jacobian or a Hessian is built from: ``sn.grad``'s and
    ``sn.Lop``'s, which refuse integer and boolean ``wrt``. The Theano layer builds them from
    its own (``symnb.compat.theano.gradient_rules.TheanoReverse``: an integer ``wrt`` is
    differentiated as if continuous, as Theano's ``jacobian`` and ``hessian``, built from its
    ``grad``, did)."""

    def check_wrt(self, var: Variable, call: str) -> None:
        """Refuse a ``wrt`` these passes have no derivative for, naming ``call``."""
        check_wrt(var, call)

    def grad(self, cost, targets: list, disconnected: str, return_disconnected: str) -> list:
        return grad(cost, targets, None, disconnected, return_disconnected)

    def lop(self, f: Variable, targets: list, point) -> list:
        """``point`` times d f / d target, per target (zeros where nothing reaches it)."""
        return Lop(f, targets, point, "ignore")

    def dtype(self, var: Variable):
        """The dtype of a derivative with respect to ``var``."""
        return var.type.dtype


SN_REVERSE = Reverse()


def jacobian(expr, wrt, disconnected="raise", return_disconnected="zero"):
    """d expr / d wrt, shaped ``expr.shape + wrt.shape`` (one result per ``wrt``).

    A fixed shape builds one reverse pass per element; a symbolic one, a scan over the
    elements (see the module docstring). The options behave as in ``sn.grad``.
    """
    return jacobian_by(SN_REVERSE, expr, wrt, disconnected, return_disconnected)


def hessian(cost, wrt, disconnected="raise", return_disconnected="zero"):
    """Second derivatives of the scalar ``cost``: ``wrt.shape + wrt.shape`` per ``wrt``.

    Each ``wrt``'s gradient becomes a Jacobian's expression (a scan when its shape is
    symbolic).
    """
    return hessian_by(SN_REVERSE, cost, wrt, disconnected, return_disconnected)


def jacobian_by(reverse: Reverse, expr, wrt, disconnected="raise", return_disconnected="zero"):
    """``jacobian`` built from the passes of ``reverse``."""
    check_expression(expr, "sn.jacobian", "expression")
    if not expr.type.is_float:  # of every shape, as sn.grad's cost and sn.Rop's f
        raise DTypeError(
            f"sn.jacobian: the expression {expr.describe()} is not a float; it has no derivative"
        )
    check_option("disconnected", disconnected, DISCONNECTED)
    check_option("return_disconnected", return_disconnected, RETURN_DISCONNECTED)
    targets, single = variable_list(wrt, "wrt")
    for var in targets:
        reverse.check_wrt(var, "sn.jacobian")
    shape = expr.type.shape
    first = uid_mark()
    impure: dict = {}  # the prints and draws of the rebuilt formulas' copy: the originals
    rows = (reverse, targets, disconnected, return_disconnected)
    if not shape:
        result = reverse.grad(expr, targets, disconnected, return_disconnected)
    elif not all(isinstance(d, int) for d in shape):
        # its formulas rebuilt as their ops once, not by each row's Lop (in the scan's body)
        expr = with_stable_ops(expr, targets, impure)
        result = _scanned_rows(expr, *rows)
    else:
        expr = with_stable_ops(expr, targets, impure)
        result = _stacked_rows(expr, shape, *rows)
    result = with_own_effects(result, impure)
    tag_remaining([r for r in result if r is not None], first)
    return result[0] if single else result


def hessian_by(reverse: Reverse, cost, wrt, disconnected="raise", return_disconnected="zero"):
    """``hessian`` built from the passes of ``reverse``."""
    check_expression(cost, "sn.hessian", "cost")
    targets, single = variable_list(wrt, "wrt")
    for var in targets:
        reverse.check_wrt(var, "sn.hessian")
    grads = reverse.grad(cost, targets, disconnected, return_disconnected)
    result = [
        None if g is None else jacobian_by(reverse, g, x, "ignore") for g, x in zip(grads, targets)
    ]
    return result[0] if single else result


def check_expression(value, call: str, what: str) -> None:
    """``value`` (the argument ``what`` of ``call``) is one symbolic variable: a list or
    tuple of expressions was an AttributeError from inside (Theano asserted "tensor.jacobian
    expects a Variable as `expression`")."""
    if isinstance(value, Variable):
        return
    several = isinstance(value, (list, tuple))
    instead = f"; call {call} once per {what}" if several else ""
    raise ArgumentError(
        f"{call}: `{what}` must be one symbolic variable, not "
        f"{type(value).__name__} {value!r}{instead}"
    )


def _scanned_rows(expr, reverse, targets, disconnected, return_disconnected) -> list:
    """Row ``k`` of each Jacobian from a scan over ``k``: ``Lop`` with the ``k``-th one-hot
    vector of the flattened expression; the rows are then shaped ``expr.shape + wrt.shape``."""
    flat = flatten(expr)
    size = getitem(shape(flat), 0)
    connected = _connected(expr, targets)
    for var, ok in zip(targets, connected):
        if not ok:
            report_disconnected(var, disconnected, return_disconnected)
    live = list({id(var): var for var, ok in zip(targets, connected) if ok}.values())

    def row(k):
        one_hot = cast(equal(arange(size), k), expr.type.dtype)
        return reverse.lop(flat, live, one_hot)

    rows, _ = scan(row, sequences=arange(size)) if live else ([], None)
    rows = rows if isinstance(rows, list) else [rows]
    found = {id(var): r for var, r in zip(live, rows)}
    out = []
    for var in targets:
        r = found.get(id(var))
        if r is None and return_disconnected == "none":
            out.append(None)
            continue
        dims = _dims(expr) + _dims(var)
        out.append(zeros(dims, reverse.dtype(var)) if r is None else reshape(r, dims))
    return out


def _dims(var) -> list:
    """The lengths of var's axes: its fixed dims as ints, the others read off its value (a
    disconnected ``wrt`` of fixed shape is not read: the function needs no value of it)."""
    dims = var.type.shape
    return [d if isinstance(d, int) else getitem(shape(var), i) for i, d in enumerate(dims)]


def _stacked_rows(expr, shape, reverse, targets, disconnected, return_disconnected) -> list:
    """The rows ``Lop(expr, wrt, e_k)``, stacked, for every ``wrt`` the expression depends on."""
    connected = _connected(expr, targets)
    for var, ok in zip(targets, connected):
        if not ok:
            report_disconnected(var, disconnected, return_disconnected)
    # one block per distinct wrt: one listed twice (a tied weight) gets its block twice,
    # as sn.grad gives its gradient twice, not a running sum fed by both entries
    live = list({id(var): var for var, ok in zip(targets, connected) if ok}.values())
    rows_of: dict[int, list] = {id(var): [] for var in live}
    shape_size = int(np.prod(shape))
    for k in range(shape_size):
        rows = reverse.lop(expr, live, _one_hot(shape, k, expr.type.dtype)) if live else []
        for var, row in zip(live, rows):
            rows_of[id(var)].append(row)
    totals = {id(var): _placed(rows_of[id(var)], shape) if shape_size else None for var in live}
    return [_answer(var, totals, shape, return_disconnected, reverse) for var in targets]


def _placed(rows: list, shape: tuple) -> Variable:
    """The rows, in C order over ``shape``, as one array of ``shape + row shape``: stacked
    along each axis of ``shape`` in turn."""
    if not shape:
        return rows[0]
    step = len(rows) // shape[0]
    parts = [_placed(rows[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]
    return stack(parts, axis=0)


def _connected(expr, targets) -> list[bool]:
    """Whether expr depends on each target (through anything but sn.disconnected_grad)."""
    upstream = feeds([(expr, None)], ancestors([expr]))
    return [id(var) in upstream for var in targets]


def _one_hot(shape, k, dtype) -> Constant:
    e = np.zeros(int(np.prod(shape)), dtype)
    e[k] = 1
    return Constant(e.reshape(shape))


def _answer(var, totals, shape, return_disconnected, reverse):
    if totals.get(id(var)) is not None:
        return totals[id(var)]
    if id(var) not in totals and return_disconnected == "none":
        return None
    dtype = reverse.dtype(var)
    zero = zeros_like(var)
    zero = zero if zero.type.dtype == dtype else cast(zero, dtype)
    return expand_dims(zero, tuple(range(len(shape)))) + Constant(
        np.zeros(shape + (1,) * var.type.ndim, dtype)
    )
