"""``theano.gradient`` (and ``T.grad``): symnb's reverse mode under Theano's signature."""

from __future__ import annotations

import numpy as np

from symnb.compat.theano.folded import reading
from symnb.compat.theano.gradient_rules import THEANO_REVERSE, theano_grad, theano_rules
from symnb.compat.theano.gradient_verify import verify_grad
from symnb.control.jacobian import check_expression as _check_expression
from symnb.control.jacobian import hessian_by, jacobian_by
from symnb.core.graph import ancestors, clone_graph, leaves, with_own_effects
from symnb.core.op import NotDifferentiable, _at_user_line, located_call
from symnb.core.source import warn_at_user
from symnb.core.variable import Variable, as_variable, describe_value
from symnb.errors import ArgumentError, SymnbError
from symnb.grad import Rop as _Rop
from symnb.grad.errors import (
    DISCONNECTED_HINT,
    DisconnectedInputError,
    DisconnectedInputWarning,
    NotDifferentiableError,
)
from symnb.grad.reverse import DISCONNECTED, check_option, known_items, lop_points
from symnb.ops.broadcast import zeros_like
from symnb.ops.markers import GradScale, disconnected_grad, grad_clip, grad_scale_by, zero_grad

__all__ = [
    "DisconnectedInputError",
    "DisconnectedType",
    "Lop",
    "Rop",
    "consider_constant",
    "disconnected_grad",
    "grad",
    "grad_clip",
    "grad_not_implemented",
    "grad_scale",
    "grad_undefined",
    "hessian",
    "jacobian",
    "subgraph_grad",
    "verify_grad",
    "zero_grad",
]


def grad_undefined(op, x_pos, x, comment=""):
    """Theano's marker, returned by an op's ``grad`` for an input that has no gradient: symnb's
    is a ``NotDifferentiable`` in that input's place, which ``T.grad`` raises as a
    NotDifferentiableError naming the op and the path, if a gradient must flow through it
    (as Theano raised ``NullTypeGradError``)."""
    return NotDifferentiable(
        f"its gradient with respect to input {x_pos} is undefined"
        + (f": {comment}" if comment else "")
    )


def grad_not_implemented(op, x_pos, x, comment=""):
    """Like :func:`grad_undefined`, for a gradient that exists but is not written."""
    return NotDifferentiable(
        f"its gradient with respect to input {x_pos} is not implemented"
        + (f": {comment}" if comment else "")
    )


class DisconnectedType:
    """Theano's type of a disconnected gradient: ``DisconnectedType()()`` is what an op's
    ``grad`` returned for an input the outputs do not depend on. symnb's rules return None
    there (no gradient flows), so calling a DisconnectedType gives None."""

    def __call__(self, name=None):
        return None

    def __eq__(self, other):
        return type(other) is DisconnectedType

    def __hash__(self):
        return hash(DisconnectedType)


#: Theano's ``return_disconnected`` spellings
RETURN_DISCONNECTED = {"zero": "zero", "None": "none", "none": "none", "Disconnected": "none"}
#: Theano's ``null_gradients`` values
NULL_GRADIENTS = ("raise", "return_zero")
consider_constant = zero_grad  # Theano's older name for the marker


def _as_called(call: str, argument: str, compute, *args, **kwargs):
    """``compute(*args, **kwargs)`` with a disconnected input reported in the words of the
    Theano call made (``T.grad: ... pass disconnected_inputs='ignore'``): sn.grad's own hint
    (``disconnected=``) is a TypeError when followed here. Its errors (symnb's, and those
    that name ``sn.grad``) are raised again at the user's line, in Theano's names."""
    token = DISCONNECTED_HINT.set((call, argument))
    try:
        with theano_rules():
            return compute(*args, **kwargs)
    except (SymnbError, ValueError, TypeError) as exc:
        if isinstance(exc, SymnbError) or str(exc).startswith("sn."):
            raise _at_user_line(exc) from None
        raise
    finally:
        DISCONNECTED_HINT.reset(token)


def grad(
    cost,
    wrt,
    consider_constant=None,
    disconnected_inputs="raise",
    add_names=True,
    known_grads=None,
    return_disconnected="zero",
    null_gradients="raise",
):
    """``T.grad``: d cost / d wrt, by Theano's rules. ``consider_constant`` lists variables
    that gradients do not flow through to what they are computed from (one that is also a
    ``wrt`` still gets its own gradient); ``disconnected_inputs`` is "raise", "warn" or
    "ignore". A ``known_grads`` entry is its variable's whole gradient, as in Theano (the
    cost's contribution is not added; one for the cost replaces its 1). An integer ``wrt``
    is differentiated as Theano did (gradient_rules.py). With ``add_names`` a gradient of a
    named cost with respect to a named ``wrt`` is named ``(dcost/dx)``, as Theano named it;
    ``null_gradients="return_zero"`` gives zeros for each ``wrt`` a gradient reaches
    through an undefined one (an op without a gradient, ``grad_undefined``), as Theano's
    NullType gradients did; "raise" raises the NotDifferentiableError naming the op."""
    if return_disconnected not in RETURN_DISCONNECTED:
        raise _at_user_line(
            ArgumentError(
                f"T.grad: return_disconnected must be one of {sorted(RETURN_DISCONNECTED)}, "
                f"not {return_disconnected!r}"
            )
        )
    located_call(check_option, "disconnected_inputs", disconnected_inputs, DISCONNECTED, "T.grad")
    located_call(check_option, "null_gradients", null_gradients, NULL_GRADIENTS, "T.grad")
    targets = _wrt_list(wrt, "T.grad")
    if cost is not None and not isinstance(cost, Variable):
        raise _at_user_line(
            ArgumentError(
                "T.grad: cost must be a symbolic variable (or None, with known_grads), not "
                f"{describe_value(cost)}"
            )
        )
    given_cost, given_targets, known = cost, targets, known_grads
    impure: dict = {}
    if consider_constant is not None:
        cost, targets, known_grads = _constant_through(
            cost, targets, consider_constant, known_grads, "T.grad", impure
        )
    returned = RETURN_DISCONNECTED[return_disconnected]
    args = (cost, known_grads, disconnected_inputs, returned)
    try:
        results = _grads_of(targets, *args)
    except NotDifferentiableError:
        if null_gradients == "raise":
            raise
        results = [_grad_or_zeros(target, *args) for target in targets]
    results = _as_theano_read(cost, targets, with_own_effects(results, impure))
    if add_names:
        results = _named(given_cost, given_targets, results, known)
    if isinstance(wrt, tuple):
        return tuple(results)
    return results if isinstance(wrt, list) else results[0]


def _grads_of(targets: list, cost, known_grads, disconnected: str, returned: str) -> list:
    return _as_called(
        "T.grad",
        "disconnected_inputs",
        theano_grad,
        cost,
        targets,
        known_grads,
        disconnected,
        returned,
    )


def _grad_or_zeros(target: Variable, *args):
    """``target``'s gradient alone, or zeros like it where it is undefined (``null_gradients=
    "return_zero"``): Theano's NullType reached each ``wrt`` with a path from the cost
    through an undefined gradient (a sum holding a NullType term was one), which is where
    the gradient of that ``wrt`` alone raises."""
    try:
        return _grads_of([target], *args)[0]
    except NotDifferentiableError:
        return zeros_like(target)


def _wrt_list(wrt, call: str) -> list:
    """``wrt`` as a list of variables, or Theano's TypeError (an ArgumentError here) naming
    what is not one: a set has no order to return the gradients in."""
    if isinstance(wrt, (set, frozenset)):
        raise _at_user_line(
            ArgumentError(
                f"{call}: wrt must not be a set ({describe_value(wrt)}): a set has no order "
                "to return the gradients in; give a list or a tuple"
            )
        )
    targets = list(wrt) if isinstance(wrt, (list, tuple)) else [wrt]
    for k, var in enumerate(targets):
        if not isinstance(var, Variable):
            where = f"wrt[{k}]" if isinstance(wrt, (list, tuple)) else "wrt"
            raise _at_user_line(
                ArgumentError(
                    f"{call}: {where} must be a symbolic variable, not {describe_value(var)}"
                )
            )
    return targets


def _named(cost, targets: list, results: list, known_grads) -> list:
    """The gradients named ``(dcost/dx)`` where the cost and the ``wrt`` have names, as
    Theano's ``grad`` named those it computed (``add_names``); a known gradient, and a
    variable of the user's graph that a gradient is, keep their own names."""
    if not isinstance(cost, Variable) or cost.name is None:
        return results
    known = {id(var) for var, _ in _known_pairs(known_grads)}
    graph = {id(v) for v in leaves([cost])} | {id(cost)}
    graph |= {id(o) for node in ancestors([cost]) for o in node.outputs}
    for target, result in zip(targets, results, strict=True):
        if (
            isinstance(result, Variable)
            and target.name is not None
            and result.name is None
            and id(target) not in known
            and id(result) not in graph
        ):
            result.name = f"(d{cost.name}/d{target.name})"
    return results


def _known_pairs(known_grads) -> list:
    """``known_grads`` as (variable, gradient) pairs (``sn.grad``'s reading of them); [] where
    they are malformed, which the gradient call itself reports."""
    try:
        return known_items(known_grads)
    except ArgumentError:
        return []


def _as_theano_read(cost, targets: list, results: list) -> list:
    """The gradients, each noted as reading what Theano's graph of it read (``folded.py``):
    the cost, which Theano's seed ``fill(cost, 1)`` read, where the cost depends on its wrt
    (the gradient of ``3 * s`` is a constant here); a disconnected wrt's zeros read it."""
    if not isinstance(cost, Variable):
        return results
    graph = {id(v) for v in leaves([cost])} | {id(cost)}
    graph |= {id(o) for node in ancestors([cost]) for o in node.outputs}
    return [
        reading(result, cost if id(target) in graph else target)
        for target, result in zip(targets, results, strict=True)
    ]


def _format_as(given, result):
    """``result`` (a list for a list or tuple, else one value) as a tuple where ``given`` was
    one, Theano's ``format_as``."""
    return tuple(result) if isinstance(given, tuple) else result


def _constant_through(cost, wrt, constants, known_grads=None, call="T.grad", impure=None):
    """The cost with each of ``constants`` behind a ``disconnected_grad`` marker, and the wrt
    and ``known_grads`` keys that the cost's copy computes from: a wrt (or key) that is one
    of the constants is its marker, so it gets the gradient that reaches it (Theano's
    ``consider_constant`` stops the gradient below the variable, not at it: ``grad(x + y,
    x, consider_constant=[x])`` is 1). What the cost reaches only through them is
    disconnected, as in Theano, where such a variable "is not a function of anything" (the
    ops ``consider_constant``/``zero_grad`` stay connected). The cost may be None (known
    gradients alone) or a list (``T.Lop``'s f); the copies keep that form, and
    ``known_grads`` its (a dict, or a list of pairs). ``impure`` (a dict) gets the copies
    of the impure nodes (prints, random draws), which the gradients built from the copy
    read as the originals (``with_own_effects``), as Theano built no second cost."""
    constants = _constant_list(constants, call)
    if not constants:
        return cost, wrt, known_grads
    single = not isinstance(wrt, (list, tuple))
    targets = [wrt] if single else list(wrt)
    costs = list(cost) if isinstance(cost, (list, tuple)) else [cost]
    outputs = [c for c in costs if isinstance(c, Variable)]
    known = _known_pairs(known_grads)
    replace = {v: disconnected_grad(v) for v in constants}
    marked = {id(old): new for old, new in replace.items()}
    inner = [
        v
        for v in [*targets, *(var for var, _ in known)]
        if isinstance(v, Variable) and v.owner is not None and id(v) not in marked
    ]
    copies = clone_graph([*outputs, *inner], replace, impure=impure) if outputs or inner else []
    swap = {id(old): new for old, new in zip(inner, copies[len(outputs) :])}
    swap.update(marked)
    made = iter(copies[: len(outputs)])
    costs = [next(made) if isinstance(c, Variable) else c for c in costs]
    targets = [swap.get(id(v), v) for v in targets]
    pairs = [(swap.get(id(var), var), g) for var, g in known]
    if isinstance(known_grads, dict):
        known_grads = dict(pairs)
    elif known:
        known_grads = pairs
    new_cost = costs if isinstance(cost, (list, tuple)) else costs[0]
    return new_cost, targets[0] if single else targets, known_grads


def _with_own_effects(result, impure: dict):
    """``with_own_effects`` of one result or a list of them (sn.jacobian's and sn.Lop's)."""
    if isinstance(result, (list, tuple)):
        return with_own_effects(list(result), impure)
    return with_own_effects([result], impure)[0]


def _constant_list(constants, call: str) -> list:
    """``consider_constant`` as a list of variables, or an ArgumentError naming what is not
    one (Theano's TypeErrors: "consider_constant must be an iterable collection", "Elements
    of consider_constant must be variables")."""
    if isinstance(constants, Variable) or not isinstance(constants, (list, tuple, set)):
        raise _at_user_line(
            ArgumentError(
                f"{call}: consider_constant must be a list of symbolic variables, not "
                f"{describe_value(constants)}"
            )
        )
    constants = list(constants)
    for k, var in enumerate(constants):
        if not isinstance(var, Variable):
            raise _at_user_line(
                ArgumentError(
                    f"{call}: consider_constant[{k}] must be a symbolic variable, not "
                    f"{describe_value(var)}"
                )
            )
    return constants


def jacobian(expression, wrt, consider_constant=None, disconnected_inputs="raise"):
    """``T.jacobian``: one Jacobian per ``wrt`` (a tuple for a tuple), its rows ``T.grad``'s,
    as Theano built them (an integer ``wrt`` is differentiated as if continuous)."""
    _check_expression(expression, "T.jacobian", "expression")
    return _derivative(
        "T.jacobian", jacobian_by, expression, wrt, consider_constant, disconnected_inputs
    )


def hessian(cost, wrt, consider_constant=None, disconnected_inputs="raise"):
    """``T.hessian``: one Hessian per ``wrt`` (a tuple for a tuple), from ``T.grad``'s rules
    as ``T.jacobian``."""
    _check_expression(cost, "T.hessian", "cost")
    return _derivative("T.hessian", hessian_by, cost, wrt, consider_constant, disconnected_inputs)


def _derivative(call: str, build, expression, wrt, consider_constant, disconnected: str):
    """``build`` (control/jacobian.py's ``jacobian_by`` or ``hessian_by``) by Theano's
    rules, with ``consider_constant`` stopping gradients and the expression's own prints
    and draws read, not their copies'; shaped as ``wrt`` was given."""
    given = wrt
    located_call(check_option, "disconnected_inputs", disconnected, DISCONNECTED, call)
    impure: dict = {}
    if consider_constant is not None:
        expression, wrt, _ = _constant_through(
            expression, wrt, consider_constant, call=call, impure=impure
        )
    result = _as_called(
        call,
        "disconnected_inputs",
        build,
        THEANO_REVERSE,
        expression,
        wrt,
        disconnected=disconnected,
    )
    return _format_as(given, _with_own_effects(result, impure))


def Rop(f, wrt, eval_points, disconnected_outputs="raise", return_disconnected="zero"):  # noqa: N802
    """``T.Rop``: the Jacobian of f with respect to wrt times ``eval_points``, one product
    per f (a tuple for a tuple), by Theano 1.0's rules: tangents go forward from the ``wrt``
    that f uses (one it does not use adds nothing), every other leaf's tangent is zero, and
    ``disconnected_outputs`` concerns an output with no tangent at all (:func:`_tangentless`);
    ``return_disconnected`` says what such an output gets."""
    for name, value, allowed in [
        ("disconnected_outputs", disconnected_outputs, DISCONNECTED),
        ("return_disconnected", return_disconnected, tuple(RETURN_DISCONNECTED)),
    ]:
        located_call(check_option, name, value, allowed, "T.Rop")
    result = _as_called(
        "T.Rop", "disconnected_outputs", _Rop, f, wrt, eval_points, disconnected="ignore"
    )
    outputs = list(f) if isinstance(f, (list, tuple)) else [f]
    results = list(result) if isinstance(f, (list, tuple)) else [result]
    targets = list(wrt) if isinstance(wrt, (list, tuple)) else [wrt]
    for i, out in enumerate(outputs):
        if _tangentless(out, targets):
            _report_output(i, out, disconnected_outputs, return_disconnected)
            if RETURN_DISCONNECTED[return_disconnected] == "none":
                results[i] = None
    return _format_as(f, results if isinstance(f, (list, tuple)) else results[0])


def _tangentless(out: Variable, targets: list) -> bool:
    """Whether Theano's ``Rop`` finds no tangent for ``out``: its R-ops give an input that is
    a ``wrt`` its eval point and any other leaf (input, shared variable, constant) zeros, and
    ``disconnected_grad``'s R-op gives none; so an output has none only when it is itself a
    leaf that is not a ``wrt``, or it reaches no leaf and no ``wrt`` but through
    ``disconnected_grad`` (``T.Rop(T.sin(x), z, v)`` is zeros, ``T.Rop(x, z, v)`` has none)."""
    wanted = {id(t) for t in targets}
    stack, seen = [out], set()
    while stack:
        var = stack.pop()
        if id(var) in wanted or (var.owner is None and var is not out):
            return False
        if id(var) in seen or var.owner is None:
            continue
        seen.add(id(var))
        if not getattr(var.owner.op, "disconnects_gradient", False):
            stack.extend(var.owner.inputs)
    return True


def _report_output(i: int, out: Variable, disconnected_outputs: str, return_disconnected: str):
    """Theano's ``disconnected_outputs`` for an output with no tangent, in the layer's words."""
    if disconnected_outputs == "ignore":
        return
    answer = "zeros" if RETURN_DISCONNECTED[return_disconnected] == "zero" else "None"
    why = (
        "an input, shared variable or constant that is not one of wrt"
        if out.owner is None
        else "computed from wrt and from the graph's inputs only through "
        "theano.gradient.disconnected_grad"
    )
    message = (
        f"T.Rop: output {i}, {out.describe()}, has no tangent: it is {why}; pass "
        f"disconnected_outputs='ignore' or 'warn' to get {answer} for it"
    )
    if disconnected_outputs == "raise":
        raise _at_user_line(DisconnectedInputError(message))
    warn_at_user(message, DisconnectedInputWarning)


def Lop(f, wrt, eval_points, consider_constant=None, disconnected_inputs="raise"):  # noqa: N802
    """``T.Lop``: ``eval_points`` times the Jacobian of f with respect to wrt, one product
    per wrt (a tuple for a tuple). As Theano 1.0's, it is ``T.grad(None, wrt,
    known_grads=OrderedDict(zip(f, eval_points)))``: each eval point is its f's whole
    gradient (what another f sends back through it is not added; an f listed twice keeps its
    last point), and an integer ``wrt`` is differentiated as ``T.grad`` does."""
    given = wrt
    located_call(check_option, "disconnected_inputs", disconnected_inputs, DISCONNECTED, "T.Lop")
    targets = _wrt_list(wrt, "T.Lop")
    pairs, names = located_call(lop_points, f, eval_points)
    at: dict[int, int] = {}  # Theano's OrderedDict(zip(f, eval_points)): an f's last point,
    for k, (var, _) in enumerate(pairs):  # in the place of its first
        at[id(var)] = k
    kept = list(at.values())
    known = [pairs[k] for k in kept]
    impure: dict = {}
    if consider_constant is not None:
        _, targets, known = _constant_through(
            None, targets, consider_constant, known, "T.Lop", impure
        )
    results = _as_called(
        "T.Lop",
        "disconnected_inputs",
        theano_grad,
        None,
        targets,
        known,
        disconnected_inputs,
        "zero",
        [names[k] for k in kept],
        "sn.Lop",
    )
    results = with_own_effects(results, impure)
    return _format_as(given, results if isinstance(given, (list, tuple)) else results[0])


def subgraph_grad(wrt, end, start=None, cost=None, details=False):
    """``theano.gradient.subgraph_grad``, Theano 1.0's: the gradients with respect to ``wrt``
    and ``end`` (lists of variables) of ``cost`` and of the known gradients ``start`` (a
    dict ``{variable: its gradient}``), the gradient stopped at ``end`` (its
    ``consider_constant``), for backpropagating a graph one part at a time: ``(wrt_grads,
    end_grads)``, and with ``details`` also the gradients of ``start`` and of ``cost``
    apart (None where not given). As in Theano, each is ``T.grad`` with
    ``disconnected_inputs='ignore'`` (zeros for what is not reached), and where both are
    given the two gradients are added."""
    _subgraph_args(wrt, end, start, cost)
    params = list({id(v): v for v in [*wrt, *end]}.values())
    start_grads = cost_grads = None
    if start is not None:
        start_grads = grad(
            None, params, known_grads=start, consider_constant=end, disconnected_inputs="ignore"
        )
    if cost is not None:
        cost_grads = grad(cost, params, consider_constant=end, disconnected_inputs="ignore")
    grads = start_grads if cost is None else cost_grads
    if start is not None and cost is not None:
        grads = [a + b for a, b in zip(start_grads, cost_grads, strict=True)]
    found = {id(v): g for v, g in zip(params, grads, strict=True)}
    wrt_grads, end_grads = [found[id(v)] for v in wrt], [found[id(v)] for v in end]
    if details:
        return wrt_grads, end_grads, start_grads, cost_grads
    return wrt_grads, end_grads


def _subgraph_args(wrt, end, start, cost) -> None:
    """``subgraph_grad``'s arguments as Theano asserted them, an ArgumentError naming the
    one that is not."""
    problem = None
    if cost is None and start is None:
        problem = "give cost, start (known gradients) or both"
    elif not isinstance(wrt, list) or not isinstance(end, list):
        which = "wrt" if not isinstance(wrt, list) else "end"
        value = wrt if which == "wrt" else end
        problem = f"{which} must be a list of variables, not {describe_value(value)}"
    elif start is not None and not isinstance(start, dict):
        problem = f"start must be a dict {{variable: its gradient}}, not {describe_value(start)}"
    else:
        for name, values in (("wrt", wrt), ("end", end)):
            for k, var in enumerate(values):
                if not isinstance(var, Variable):
                    problem = f"{name}[{k}] must be a symbolic variable, not {describe_value(var)}"
                    break
            if problem:
                break
    if problem:
        raise _at_user_line(ArgumentError(f"subgraph_grad: {problem}"))


def grad_scale(x, multiplier):
    """``theano.gradient.grad_scale``: ``x`` forward (its value and dtype), its gradient
    times ``multiplier``, a number, an array or a variable (``GradScale``, or
    ``GradScaleBy`` with the multiplier as an input)."""
    x = as_variable(x)
    if not isinstance(multiplier, Variable) and np.ndim(multiplier) == 0:
        return GradScale(multiplier)(x)
    return grad_scale_by(x, multiplier)
