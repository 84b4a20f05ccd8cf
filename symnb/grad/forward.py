"""Forward mode: ``sn.Rop``, the Jacobian-vector product, built from two reverse passes.

For a cotangent ``u`` shaped like ``f``, ``Lop(f, x, u) = J^T u`` is linear in ``u``, so the
gradient of ``<J^T u, v>`` with respect to ``u`` is ``J v``, whatever ``u`` is. The first
pass uses a placeholder ``u``; the second differentiates with respect to it, and any leftover
mention of ``u`` (there is none for the ops whose rules are linear in the output gradient) is
replaced by zeros, so the result depends only on the forward graph and ``v``.

``grad_clip``'s rule is not linear (it clips the output gradient), and a marker that changes
only the backward pass has the tangent of the function it computes, the identity: so the passes
differentiate ``grad_clip`` and ``grad_scale`` (``backward_only`` ops) as the identity, also in
the step of a scan in ``f`` (``AS_IDENTITY_FORWARD``, which every walk the passes start reads).
They run on ``f`` itself: a copy of ``f`` without the markers would compute its nodes above
them again, a ``print_value`` printing twice per call and a random draw drawn twice (impure
nodes are never merged). ``zero_grad`` keeps its rule (a zero tangent, as JAX's
``stop_gradient`` and Theano's ``ZeroGrad.R_op``) and so does ``disconnected_grad`` (no
tangent, as Theano's ``DisconnectedGrad.R_op``).
"""

from __future__ import annotations

from symnb.core.graph import ancestors, leaves, substitute
from symnb.core.op import _at_user_line
from symnb.core.source import warn_at_user
from symnb.core.variable import Variable, as_variable
from symnb.errors import ArgumentError, DTypeError, ShapeError
from symnb.grad.errors import DISCONNECTED_HINT, DisconnectedInputError, DisconnectedInputWarning
from symnb.grad.points import checked_points
from symnb.grad.reverse import (
    AS_IDENTITY_FORWARD,
    DISCONNECTED,
    RETURN_DISCONNECTED,
    Lop,
    Placeholder,
    check_option,
    check_wrt,
    grad,
    uid_mark,
    variable_list,
    zeros_like,
)
from symnb.ops.elemwise import cast
from symnb.ops.reduce import sum as sum_


def Rop(f, wrt, eval_points, disconnected="raise", return_disconnected="zero"):  # noqa: N802
    """Jacobian-vector product: d f / d wrt applied to ``eval_points`` (shaped like ``wrt``).

    ``f`` and ``wrt`` are a variable each or lists; ``eval_points`` has one entry per
    ``wrt``. The result has one entry per ``f``, shaped like it (Theano's ``Rop``).
    """
    check_option("disconnected", disconnected, DISCONNECTED, "sn.Rop")
    check_option("return_disconnected", return_disconnected, RETURN_DISCONNECTED, "sn.Rop")
    outputs, single = variable_list(f, "f")
    targets, _ = variable_list(wrt, "wrt")
    for x in targets:  # in Rop's words: its passes are internal
        check_wrt(x, "sn.Rop", "tangent")
    points, given = _tangents(targets, eval_points)
    for out in outputs:
        if not out.type.is_float:
            raise DTypeError(f"Rop: {out.describe()} is not a float; it has no derivative")
    first = uid_mark()
    cotangents = [Placeholder(out.type, name=f"cotangent{i}") for i, out in enumerate(outputs)]
    as_identity = AS_IDENTITY_FORWARD.set(True)
    try:
        vjp = Lop(outputs, targets, cotangents, "ignore", return_disconnected="none")
        for x, g in zip(targets, vjp):
            if g is None:
                _report_disconnected(x, disconnected)
        pairing = [sum_(g * v) for g, v in zip(vjp, points) if g is not None]
        if not pairing:
            return _none_or_zeros(outputs, single, return_disconnected)
        jvp = grad(_total(pairing), cotangents, disconnected="ignore")
    finally:
        AS_IDENTITY_FORWARD.reset(as_identity)
    jvp = _without_placeholders(jvp, cotangents, outputs)
    for i, (x, v) in enumerate(zip(targets, given)):
        jvp = checked_points(jvp, [(v, x)], f"Rop: eval point {i}")
    _point_at_forward_nodes(jvp, first)
    return jvp[0] if single else jvp


def _report_disconnected(var: Variable, disconnected: str):
    """Rop's words for a ``wrt`` that ``f`` does not depend on: its tangent adds nothing."""
    if disconnected == "ignore":
        return
    call, argument = DISCONNECTED_HINT.get()  # a layer over Rop names its own call
    call = "sn.Rop" if call == "sn.grad" else call
    message = (
        f"{call}: f does not depend on {var.describe()} (it is disconnected from f, or "
        "connected only through sn.disconnected_grad), so its eval point adds nothing; pass "
        f"{argument}='ignore' or 'warn' to take its tangent as zero"
    )
    if disconnected == "raise":  # sn.Rop's names even where the user's code also uses T
        raise _at_user_line(DisconnectedInputError(message), spell=call != "sn.Rop")
    warn_at_user(message, DisconnectedInputWarning)


def _tangents(targets, eval_points) -> tuple[list[Variable], list[Variable]]:
    """The eval points, one per ``wrt``, in its dtype, and as given (as variables)."""
    points, _ = variable_list(eval_points, "eval_points")
    if len(points) != len(targets):
        raise ArgumentError(
            f"Rop: {len(targets)} wrt but {len(points)} eval_points; give one eval point per "
            "wrt, shaped like it"
        )
    fitted, given = [], []
    for i, (x, v) in enumerate(zip(targets, points)):
        v = as_variable(v)
        given.append(v)
        clash = [
            k
            for k, (a, b) in enumerate(zip(v.type.shape, x.type.shape))
            if isinstance(a, int) and isinstance(b, int) and a != b
        ]
        if v.type.ndim != x.type.ndim:
            clash = []
        if v.type.ndim != x.type.ndim or clash:
            # a tangent is not broadcast: the pairing with J^T u would sum its extra rows
            if clash:
                k = clash[0]
                what = f"axis {k} has {v.type.shape[k]}, not {x.type.shape[k]}"
            else:
                what = f"{v.type.ndim} axes, not {x.type.ndim}"
            raise ShapeError(
                f"Rop: eval point {i} {_point(v)} does not fit {x.describe()} ({what}); an "
                "eval point has the shape of its wrt"
            )
        fitted.append(cast(v, x.type.dtype))
    return fitted, given


def _point(v: Variable) -> str:
    return v.describe().replace("an unnamed variable (", "(")


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
