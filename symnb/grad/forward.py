"""Forward mode: ``sn.Rop``, the Jacobian-vector product, built from two reverse passes.

For a cotangent ``u`` shaped like ``f``, ``Lop(f, x, u) = J^T u`` is linear in ``u``, so the
gradient of ``<J^T u, v>`` with respect to ``u`` is ``J v``, whatever ``u`` is. The first
pass uses a placeholder ``u``; the second differentiates with respect to it, and any leftover
mention of ``u`` (there is none for the ops whose rules are linear in the output gradient) is
replaced by zeros, so the result depends only on the forward graph and ``v``.
"""

from __future__ import annotations

from symnb.core.graph import ancestors, leaves
from symnb.core.variable import Variable, as_variable
from symnb.errors import DTypeError, ShapeError
from symnb.grad.reverse import Lop, grad, uid_mark, variable_list, zeros_like
from symnb.ops.elemwise import cast
from symnb.ops.reduce import sum as sum_


def Rop(f, wrt, eval_points, disconnected="raise", return_disconnected="zero"):  # noqa: N802
    """Jacobian-vector product: d f / d wrt applied to ``eval_points`` (shaped like ``wrt``).

    ``f`` and ``wrt`` are a variable each or lists; ``eval_points`` has one entry per
    ``wrt``. The result has one entry per ``f``, shaped like it (Theano's ``Rop``).
    """
    outputs, single = variable_list(f, "f")
    targets, _ = variable_list(wrt, "wrt")
    points = _tangents(targets, eval_points)
    for out in outputs:
        if not out.type.is_float:
            raise DTypeError(f"Rop: {out.describe()} is not a float; it has no derivative")
    first = uid_mark()
    cotangents = [Variable(out.type, name=f"cotangent{i}") for i, out in enumerate(outputs)]
    vjp = Lop(outputs, targets, cotangents, disconnected, return_disconnected="none")
    pairing = [sum_(g * v) for g, v in zip(vjp, points) if g is not None]
    if not pairing:
        return _none_or_zeros(outputs, single, return_disconnected)
    jvp = grad(_total(pairing), cotangents, disconnected="ignore")
    jvp = _without_placeholders(jvp, cotangents, outputs)
    _point_at_forward_nodes(jvp, first)
    return jvp[0] if single else jvp


def _tangents(targets, eval_points) -> list[Variable]:
    """The eval points, one per ``wrt``, in its dtype."""
    points, _ = variable_list(eval_points, "eval_points")
    if len(points) != len(targets):
        raise ValueError(f"Rop: {len(targets)} wrt but {len(points)} eval_points")
    fitted = []
    for x, v in zip(targets, points):
        v = as_variable(v)
        if v.type.ndim != x.type.ndim:
            raise ShapeError(f"Rop: the eval point {v.describe()} does not fit {x.describe()}")
        fitted.append(cast(v, x.type.dtype))
    return fitted


def _total(terms: list[Variable]) -> Variable:
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


def _none_or_zeros(outputs, single, return_disconnected):
    result = [None if return_disconnected == "none" else zeros_like(o) for o in outputs]
    return result[0] if single else result


def _without_placeholders(jvp, cotangents, outputs) -> list[Variable]:
    """The products with any mention of a placeholder cotangent replaced by zeros."""
    used = {id(v) for v in leaves(jvp)}
    replace = {u: zeros_like(out) for u, out in zip(cotangents, outputs) if id(u) in used}
    return substitute(jvp, replace) if replace else jvp


def substitute(outputs: list[Variable], replace: dict) -> list[Variable]:
    """``outputs`` with ``replace`` applied, cloning only the nodes that change."""
    memo = {id(old): new for old, new in replace.items()}
    for node in ancestors(outputs):
        if any(id(x) in memo for x in node.inputs):
            new = node.clone_with([memo.get(id(x), x) for x in node.inputs])
            memo.update((id(old), var) for old, var in zip(node.outputs, new.outputs))
    return [memo.get(id(out), out) for out in outputs]


def _point_at_forward_nodes(jvp, first_uid):
    """Nodes of the second pass differentiate backward nodes; name the forward node instead.

    Nodes Rop builds itself (the pairing with the eval points) differentiate nothing: None.
    """
    for node in ancestors(jvp):
        if node.outputs[0].uid < first_uid:
            continue
        source = node.tag.get("grad_of")
        if source is not None and source.outputs[0].uid >= first_uid:
            source = source.tag.get("grad_of")  # a first-pass node: what it differentiates
        node.tag["grad_of"] = source
