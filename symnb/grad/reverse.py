"""Reverse accumulation: ``sn.grad`` and ``sn.Lop`` as one walk over the graph, newest first.

A gradient is an ordinary graph built from each op's own ``grad`` rule. The walk keeps, for
every variable, the list of gradient contributions its users sent; the list is summed once,
when the walk reaches the node that made the variable (all its users come later in the
topological order, so by then every contribution is in). A variable with no contribution has
a zero gradient that is never built as a node; only a requested input that is connected to
the cost, but receives nothing, gets an explicit zero.

Gradients flow only through floating-point variables: integer and boolean values (indices,
comparisons, shapes) pass no gradient, so the ops that make them are never asked for one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar

import numpy as np

from symnb.core import variable as _variable
from symnb.core.graph import OUTPUT, ancestors, with_own_effects
from symnb.core.lazy import LazyChoice, Regions, has_lazy, regions
from symnb.core.op import Apply, NotDifferentiable
from symnb.core.shapes import warnings as shape_warnings
from symnb.core.source import pinned, user_location, warn_at_user
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import ArgumentError, DTypeError, ShapeError, ShapeTypeError
from symnb.grad.errors import (
    DISCONNECTED_HINT,
    DisconnectedInputError,
    DisconnectedInputWarning,
    NotDifferentiableError,
)
from symnb.grad.formulas import outputs_with_stable_ops, with_stable_ops
from symnb.grad.points import checked_points, zeros_read_off
from symnb.ops.broadcast import broadcast_like
from symnb.ops.broadcast import zeros_like as zeros_of
from symnb.ops.elemwise import add, cast, fit_gradient

DISCONNECTED = ("raise", "warn", "ignore")
RETURN_DISCONNECTED = ("zero", "none")

#: the gradient rules that a layer over ``sn.grad`` gives op classes in place of their own
#: while it differentiates (the Theano layer: Theano 1.0's, where its values differ from
#: symnb's), so that every pass it starts uses them, a scan's inner gradient and ``Rop``'s
#: two passes included: ``rule(op, needed, inputs, outputs, output_grads)``, answering as
#: ``op.grad_wrt``
LAYER_RULES: ContextVar[Mapping[type, Callable] | None] = ContextVar("layer_rules", default=None)
#: True while ``sn.Rop`` builds its two passes: an op that computes the identity of its first
#: input and changes only what the reverse pass sends back (``backward_only``: grad_clip,
#: grad_scale) is differentiated as the identity, in every walk its rules start too (a
#: scan's step). Forward mode sees what such an op computes, and the passes run on ``f``
#: itself, whose nodes (a print, a random draw) are not copied (symnb/grad/forward.py).
AS_IDENTITY_FORWARD: ContextVar[bool] = ContextVar("as_identity_forward", default=False)


def grad(cost, wrt, known_grads=None, disconnected="raise", return_disconnected="zero"):
    """Gradient of the scalar ``cost`` with respect to ``wrt`` (a variable or a list).

    ``known_grads``: ``{variable: its gradient}`` to start from (with or instead of the cost).
    ``disconnected``: what to do for a ``wrt`` the cost does not depend on ("raise", "warn"
    or "ignore"); ``return_disconnected``: what such an input gets ("zero" or "none").
    Returns one gradient per ``wrt``, each with that input's dtype and shape.
    """
    return _reverse(cost, wrt, known_grads, disconnected, return_disconnected, final=False)


#: how a run-time or build-time shape error names a known gradient (``sn.grad``'s)
KNOWN_GRADIENT = "sn.grad: the known gradient"


def grad_known_final(
    cost,
    wrt,
    known_grads=None,
    disconnected="raise",
    return_disconnected="zero",
    names=None,
    call=None,
):
    """``grad`` with Theano's rule for ``known_grads`` (the Theano layer's ``T.grad`` and
    ``T.Lop``): a known gradient is the whole gradient of its variable, to which the cost and
    the other known gradients send nothing more (Theano's ``grad`` puts them in its table of
    gradients first and computes only those not in it), and a known gradient of the cost
    replaces the cost's 1. ``names``: how errors name each known gradient, and ``call``
    the call a refused ``wrt`` is reported in (``T.Lop``'s eval points, ``sn.Lop``)."""
    return _reverse(cost, wrt, known_grads, disconnected, return_disconnected, True, names, call)


def _reverse(
    cost, wrt, known_grads, disconnected, return_disconnected, final: bool, names=None, call=None
):
    """The reverse pass; ``names``: how errors name each known gradient (``sn.Lop``'s eval
    points), else ``KNOWN_GRADIENT``; ``call``: the call a refused ``wrt`` is reported in
    (``sn.Lop``), else ``sn.grad``."""
    check_option("disconnected", disconnected, DISCONNECTED)
    check_option("return_disconnected", return_disconnected, RETURN_DISCONNECTED)
    targets, single = variable_list(wrt, "wrt")
    for var in targets:
        check_wrt(var, call or "sn.grad")
    first = uid_mark()
    # every gradient node is from the user's grad line; the user saw the warnings of the
    # graph differentiated
    with pinned(user_location()), shape_warnings.quiet():
        # each given gradient made a variable once: the one the walk starts from is the one
        # checked when the function runs (an array made a constant twice was not checked)
        known = [(var, as_variable(g)) for var, g in known_items(known_grads)]
        names = names or [KNOWN_GRADIENT] * len(known)
        impure: dict = {}  # the prints and draws of the rebuilt formulas' copy: the originals
        seeds = _seeds(cost, known, targets, final, names, impure)
        if final and cost is not None and any(var is seeds[0][0] for var, _ in seeds[1:]):
            seeds = seeds[1:]  # a known gradient of the cost replaces its 1
        walk = ReverseWalk(seeds, targets, final={id(var) for var, _ in seeds} if final else ())
        results = [walk.result(var, disconnected, return_disconnected) for var in targets]
        results = with_own_effects(results, impure)
        for (var, g), name in zip(known, names):
            if not isinstance(g, Placeholder):  # known to fit
                results = checked_points(results, [(g, var)], name)
    tag_remaining([r for r in results if r is not None], first)
    return results[0] if single else results


def Lop(f, wrt, eval_points, disconnected="raise", return_disconnected="zero"):  # noqa: N802
    """Vector-Jacobian product: ``eval_points`` (shaped like ``f``) times d f / d wrt.

    ``f`` and ``eval_points`` are a variable each or equal-length lists; the result has one
    entry per ``wrt``, shaped like it (Theano's ``Lop``).
    """
    known, names = lop_points(f, eval_points)
    return _reverse(None, wrt, known, disconnected, return_disconnected, False, names, "sn.Lop")


def lop_points(f, eval_points) -> tuple[list[tuple], list[str]]:
    """``Lop``'s ``f`` and ``eval_points`` as (expression, eval point) pairs, the known
    gradients its pass starts from, and how errors name each point."""
    outputs, _ = variable_list(f, "f")
    points, _ = variable_list(eval_points, "eval_points")
    if len(outputs) != len(points):
        raise ArgumentError(f"Lop: {len(outputs)} expressions but {len(points)} eval_points")
    return list(zip(outputs, points)), [f"Lop: eval point {i}" for i in range(len(points))]


# -- arguments ------------------------------------------------------------------------------
def check_option(name, value, allowed, call="sn.grad"):
    if value not in allowed:
        raise ArgumentError(f"{call}: {name}={value!r}; use one of {', '.join(map(repr, allowed))}")


def variable_list(value, what) -> tuple[list, bool]:
    """A list of variables, and whether a single one was given."""
    if isinstance(value, (list, tuple)):
        return [_variable_arg(v, what) for v in value], False
    return [_variable_arg(value, what)], True


def _variable_arg(value, what):
    if isinstance(value, Variable):
        return value
    if what == "eval_points":
        return as_variable(value)
    raise ArgumentError(
        f"sn.grad: {what} must be symbolic variables, not {type(value).__name__} {value!r}"
    )


def check_wrt(var: Variable, call: str = "sn.grad", what: str = "gradient"):
    """Only real float variables have a gradient (complex ones: ``refuse_complex``). The
    refusal names the call the user made (``sn.Rop``, ``sn.jacobian``...) and what it takes
    (``sn.Rop``: a tangent)."""
    if var.type.dtype.kind == "c":
        raise refuse_complex(var, "with respect to", call=call)
    if not var.type.is_float:
        raise DTypeError(
            f"{call}: cannot differentiate with respect to {var.describe()}: integer and "
            f"boolean variables are kept out of differentiation (no {what} is defined for "
            f"them); make it a float variable if you need its {what}"
        )


def refuse_complex(var: Variable, how: str, made: str = "", call: str = "sn.grad") -> DTypeError:
    """The ops' gradient rules multiply by f'(z) where the convention of PyTorch (grad =
    dL/dx + i dL/dy) needs conj(f'(z)): until each rule is verified on complex values, a
    gradient that would go through one is refused rather than silently wrong."""
    return DTypeError(
        f"{call}: cannot differentiate {how} {var.describe()}{made}: it is complex, and symnb's "
        "gradients of complex values are not verified (docs/autodiff.md); hold the real and "
        "imaginary parts in real float variables and differentiate with respect to those"
    )


def _seeds(cost, known, targets, final, names, impure: dict) -> list[tuple[Variable, Variable]]:
    """(variable, starting gradient) pairs: the cost with 1, then the known gradients
    (``known``: (variable, given gradient) pairs, each gradient a variable; ``names``: how a
    shape error names each). ``impure`` gets the copies of impure nodes that rebuilding
    the formulas made (``with_stable_ops``).

    Formulas are differentiated as their ops (symnb/grad/formulas.py) above a cost alone,
    and above known gradients alone that add up (``sn.Lop``, and ``sn.Rop`` and
    ``sn.jacobian`` through it): a walk from both a cost and known gradients may start below
    a formula of the cost, and a final known gradient (the Theano layer's) must stop what
    reaches its variable, so those are differentiated as written."""
    pairs = []
    if cost is not None:
        cost = _check_cost(cost)
        if not known:
            cost = with_stable_ops(cost, targets, impure)
        pairs.append((cost, Constant(1, dtype=cost.type.dtype)))
    starts = [var for var, _ in known]
    if cost is None and not final and starts:
        starts = outputs_with_stable_ops(starts, targets, impure)
    for (var, g), start, name in zip(known, starts, names):
        pairs.append((start, _fit_known(var, g, name)))
    if not pairs:
        raise ArgumentError("sn.grad: give a cost, or known_grads to start from")
    return pairs


def known_items(known_grads) -> list[tuple]:
    """``known_grads`` as ``(variable, gradient)`` pairs: from a dict, or a list or tuple of
    pairs (``sn.Lop``'s); None is none. Anything else, or a key that is not a variable, is an
    ArgumentError saying so."""
    if isinstance(known_grads, dict):
        items = list(known_grads.items())
    elif known_grads is None:
        items = []
    elif isinstance(known_grads, (list, tuple)) and all(
        isinstance(pair, (list, tuple)) and len(pair) == 2 for pair in known_grads
    ):
        items = [tuple(pair) for pair in known_grads]
    else:
        raise ArgumentError(
            "sn.grad: known_grads is a dict {variable: its gradient} or a list of (variable, "
            f"gradient) pairs, not {known_grads!r}"
        )
    for var, _ in items:
        if not isinstance(var, Variable):
            raise ArgumentError(f"sn.grad: known_grads keys must be variables, not {var!r}")
    return items


def _check_cost(cost) -> Variable:
    if not isinstance(cost, Variable):
        raise ArgumentError(f"sn.grad: the cost must be a symbolic variable, not {cost!r}")
    if cost.type.ndim != 0:  # (a TypeError too, as Theano's "cost must be a scalar.")
        raise ShapeTypeError(
            f"sn.grad: the cost must be a scalar (0-d), got {cost.describe()}; reduce it "
            "(sn.sum, sn.mean), or use sn.Lop / sn.jacobian for non-scalar expressions"
        )
    if not cost.type.is_float:
        raise DTypeError(f"sn.grad: the cost {cost.describe()} is not a float; it has no gradient")
    return cost


def _fit_known(var: Variable, g: Variable, name: str = KNOWN_GRADIENT) -> Variable:
    """A given gradient in ``var``'s dtype; a 0-d one is broadcast to ``var``'s shape, any
    other has ``var``'s (``checked_points``: where dims are unknown, when the function
    runs)."""
    if g.type.ndim == 0 and var.type.ndim:
        g = broadcast_like(g, var)
    clash = any(
        isinstance(a, int) and isinstance(b, int) and a != b
        for a, b in zip(g.type.shape, var.type.shape)
    )
    if g.type.ndim != var.type.ndim or clash:
        desc = g.describe().replace("an unnamed variable (", "(")  # as checked_points'
        raise ShapeError(f"{name} {desc} does not fit {var.describe()}")
    return cast(g, var.type.dtype) if var.type.is_float else g


class Placeholder(Variable):
    """A stand-in gradient of ``var``'s own type (``sn.Rop``'s first pass starts from one
    per output, then replaces it): known to fit, so never checked when the function runs."""


# -- the walk -------------------------------------------------------------------------------
class ReverseWalk:
    """One backward pass from the seeds, collecting every gradient that reaches ``wrt``."""

    def __init__(self, seeds: list[tuple[Variable, Variable]], wrt: list[Variable], final=()):
        self.wrt = wrt
        #: ids of the seeds whose gradient is final (``grad_known_final``): no rule is asked
        #: for a contribution to them
        self.final = set(final)
        order = ancestors([var for var, _ in seeds])
        self.order = order
        self.reach = _depends_on(wrt, order)
        #: where an ifelse is differentiated: the region of each forward node, so that the
        #: backward of a branch runs under the branch's condition (``_kept_under``)
        self.regions = _walk_regions(order, seeds) if has_lazy(order) else None
        self.upstream = feeds(seeds, order)
        #: ids of the values on a path the gradient can flow along, from the seeds back to
        #: ``wrt``: the complex ones among them are refused
        self.flows = gradient_flows(seeds, wrt, order)
        self.contributions: dict[int, list[Variable]] = {}
        self.totals: dict[int, Variable | None] = {}
        self.via: dict[int, Apply] = {}
        for node in order:
            for var in node.outputs:
                if var.type.dtype.kind == "c" and id(var) in self.flows:
                    made = f", the {node.op.op_name()}" + (
                        f" at {var.source}" if var.source else ""
                    )
                    raise refuse_complex(var, "through", made)
        for var, g in seeds:
            self._add(var, g, None)
        for node in reversed(order):
            self._backprop(node)

    # -- accumulation ---------------------------------------------------------------------
    def _add(self, var: Variable, g: Variable, node: Apply | None):
        if not var.type.is_float:
            return  # integer and boolean values pass no gradient
        first = uid_mark()
        fitted = _fitted(g, var)
        if self.regions is not None and node is not None:
            fitted = self._kept_under(fitted, var, node)
        tag_new_nodes([fitted], first, node)
        self.contributions.setdefault(id(var), []).append(fitted)
        if node is not None:
            self.via.setdefault(id(var), node)

    def _kept_under(self, g: Variable, var: Variable, node: Apply) -> Variable:
        """``node``'s contribution ``g`` to its input ``var``, kept under each ifelse side
        that holds ``node`` but not ``var`` (innermost first): ``ifelse(cond, g, 0)``. A node
        only a branch reads receives a zero gradient when the branch is not taken, and its
        contribution is then zero too, but computing it could fail (an index out of range,
        shapes that the branch's guard rules out) or give NaN (a zero times an infinite
        derivative); under the condition it is never computed."""
        found = self.regions
        around = set(found.chain(found.of(var.owner))) if var.owner is not None else {None}
        guards = found.guards(found.of(node))
        outside = [(lazy, side) for lazy, side in guards if (id(lazy), side) not in around]
        return _kept_to_sides(g, outside, lambda: zeros_of(var))

    def total(self, var: Variable) -> Variable | None:
        """The summed gradient of ``var`` (None: zero), built once."""
        key = id(var)
        if key not in self.totals:
            parts = self.contributions.get(key, [])
            self.totals[key] = _sum_parts(parts, var.owner) if parts else None
        return self.totals[key]

    def _backprop(self, node: Apply):
        needed = []  # (loops and map: comprehensions would make a cell of self each node)
        for i, x in enumerate(node.inputs):
            if self._needs(x) and id(x) not in self.final:
                needed.append(i)
        if not needed:
            return
        output_grads = list(map(self.total, node.outputs))
        if all(g is None for g in output_grads):
            return
        grads = self._rule_or_side_grads(node, output_grads, needed)
        for i in needed:
            g = grads[i]
            if isinstance(g, NotDifferentiable):
                raise self._not_differentiable(node, node.inputs[i], str(g))
            if g is not None:
                self._add(node.inputs[i], g, node)

    def _rule_or_side_grads(self, node: Apply, output_grads: list, needed: list[int]) -> list:
        """The op's rule; but an ifelse's side value that only its side reads receives the
        output's gradient itself, not the rule's ``ifelse(cond, g, zeros_like(value))``: all
        that reads it runs under the condition (``_kept_under``), where the two are equal,
        and the zeros would read the value's shape, so compute it, whatever the condition."""
        if self.regions is None or not isinstance(node.op, LazyChoice):
            return self._apply_rule(node, output_grads, needed)
        inside = [i for i in needed if self._only_on_its_side(node, i)]
        rest = [i for i in needed if i not in inside]
        grads = self._apply_rule(node, output_grads, rest) if rest else [None] * len(node.inputs)
        for i in inside:
            grads[i] = output_grads[node.op.output_of(i)]
        return grads

    def _only_on_its_side(self, node: Apply, i: int) -> bool:
        side, owner = node.op.side_of(i), node.inputs[i].owner
        if side is None or owner is None:
            return False
        found = self.regions  # (a node computed in another ifelse on the same condition too)
        return found.under(found.of(owner), (id(node.op.condition(node)), side))

    def _needs(self, var: Variable) -> bool:
        return var.type.is_float and id(var) in self.reach and id(var) in self.upstream

    def _apply_rule(self, node: Apply, output_grads: list, needed: list[int]) -> list:
        """The op's gradient rule, its new nodes tagged with ``grad_of = node``; the
        identity's for a ``backward_only`` op in ``sn.Rop``'s passes (``AS_IDENTITY_FORWARD``)."""
        if node.op.backward_only and AS_IDENTITY_FORWARD.get():
            return [output_grads[0]] + [None] * (len(node.inputs) - 1)
        first = uid_mark()
        if not node.op.differentiable:
            raise self._not_differentiable(node, node.inputs[needed[0]], "")
        try:
            inputs, outputs = list(node.inputs), list(node.outputs)
            rule = (LAYER_RULES.get() or {}).get(type(node.op))
            if rule is not None:
                grads = rule(node.op, needed, inputs, outputs, output_grads)
            else:
                grads = node.op.grad_wrt(needed, inputs, outputs, output_grads)
        except NotDifferentiable as exc:
            raise self._not_differentiable(node, node.inputs[needed[0]], str(exc)) from None
        tag_new_nodes([g for g in grads if isinstance(g, Variable)], first, node)
        _check_rule(node, grads)
        return list(grads)

    # -- answers --------------------------------------------------------------------------
    def result(self, var: Variable, disconnected: str, return_disconnected: str):
        g = self.total(var)
        if g is not None:
            return self._result_under_its_sides(g, var)
        if id(var) not in self.upstream:
            report_disconnected(var, disconnected, return_disconnected)
            if return_disconnected == "none":
                return None
        return zeros_like(var)

    def _result_under_its_sides(self, g: Variable, var: Variable) -> Variable:
        """The gradient of a requested ``var`` that only an ifelse's side reads, kept under
        that side (and those around it): zero where the side is not taken, as the cost does
        not depend on ``var`` then. Within the side the walk sends such values gradients
        that are exact only there (``_rule_or_side_grads``); a result is read outside."""
        if self.regions is None or var.owner is None:
            return g
        guards = self.regions.guards(self.regions.of(var.owner))
        return _kept_to_sides(g, guards, lambda: self._zeros_outside_sides(var))

    def _zeros_outside_sides(self, var: Variable) -> Variable:
        """Zeros shaped like ``var``, a value only a side computes, for where the side is not
        taken: their lengths read off values every call computes (the inputs, and nodes
        outside every side), so that ``var`` is not computed for its shape; where no such
        values give its shape, ``zeros_like(var)``, which reads it."""
        if all(isinstance(d, int) for d in var.type.shape):
            return zeros_like(var)
        found = self.regions
        computed = set()
        for node in self.order:
            computed.update(id(x) for x in node.inputs if x.owner is None)
            if not found.guards(found.of(node)):
                computed.update(id(o) for o in node.outputs)
        zero = zeros_read_off(var, computed)
        return zeros_like(var) if zero is None else zero

    def _not_differentiable(self, node: Apply, x: Variable, reason: str):
        path = " <- ".join(_show(v) for v in self._path_to_cost(node) + self._path_to_wrt(x))
        where = node.outputs[0].source
        return NotDifferentiableError(
            f"sn.grad: {node.op.op_name()} is not differentiable, and the gradient must flow "
            f"through it to {x.describe()}"
            + (f" ({reason})" if reason else "")
            + f"\n  path from the cost: {path}"
            + (f"\n  {node.op.op_name()} was applied at {where}" if where else "")
        )

    def _path_to_cost(self, node: Apply) -> list[Variable]:
        """Variables from the cost down to an output of ``node``, following the gradient."""
        out = next(o for o in node.outputs if self.contributions.get(id(o)))
        path = [out]
        while id(path[-1]) in self.via:
            user = self.via[id(path[-1])]
            path.append(next(o for o in user.outputs if self.contributions.get(id(o))))
        return path[::-1]

    def _path_to_wrt(self, var: Variable) -> list[Variable]:
        """Variables from ``var`` down to a requested input."""
        path = [var]
        while not any(path[-1] is w for w in self.wrt):
            path.append(next(x for x in path[-1].owner.inputs if id(x) in self.reach))
        return path


def _check_rule(node: Apply, grads) -> None:
    """An op's gradient rule returns one entry per input, and nothing for an input that is
    not float: a gradient in an integer input's slot is one meant for another input (a rule
    that gave them in the wrong order would otherwise lose it silently)."""
    if len(grads) != len(node.inputs):
        raise TypeError(
            f"{node.op.op_name()}.grad returned {len(grads)} gradients for "
            f"{len(node.inputs)} inputs"
        )
    for x, g in zip(node.inputs, grads):
        if isinstance(g, Variable) and not x.type.is_float and g.type.is_float:
            raise TypeError(
                f"{node.op.op_name()}.grad returned a {g.type} gradient for "
                f"{x.describe_as('input')}, which is not a float: gradients are in the wrong "
                "order"
            )


def _kept_to_sides(g: Variable, guards: list, zero) -> Variable:
    """``g`` under each ``(lazy node, side)`` of ``guards``, innermost first:
    ``ifelse(cond, g, 0)``, the zero (``zero()``, built once) where a side is not taken."""
    if not guards:
        return g
    other = zero()
    for lazy, side in guards:
        g = lazy.op.kept_to_side(lazy, side, g, other)
    return g


def _walk_regions(order: list[Apply], seeds) -> Regions:
    """The regions (symnb/core/lazy.py) of the nodes the seeds are computed from, the seeds
    being the outputs."""
    clients: dict[int, list] = {}
    for node in order:
        for i, x in enumerate(node.inputs):
            clients.setdefault(id(x), []).append((node, i))
    for var, _ in seeds:
        clients.setdefault(id(var), []).append((OUTPUT, 0))
    return regions(order, lambda var: clients.get(id(var), ()))


def _depends_on(wrt: list[Variable], order: list[Apply]) -> set[int]:
    """Ids of the variables computed from ``wrt`` (forward over the topological order)."""
    reach = {id(v) for v in wrt}
    for node in order:
        if not _blocks(node) and any(id(x) in reach for x in node.inputs):
            reach.update(id(o) for o in node.outputs)
    return reach


def feeds(seeds, order: list[Apply]) -> set[int]:
    """Ids of the variables the seeds are computed from (backward over the order)."""
    upstream = {id(var) for var, _ in seeds}
    for node in reversed(order):
        if not _blocks(node) and any(id(o) in upstream for o in node.outputs):
            upstream.update(id(x) for x in node.inputs)
    return upstream


def gradient_flows(seeds, wrt: list[Variable], order: list[Apply]) -> set[int]:
    """Ids of the values on a path along which a gradient can flow from the seeds back to
    ``wrt``: float (or complex) values only, as integer and boolean ones (comparisons,
    masks, indices) pass none, and not through a node that stops it (``sn.zero_grad``,
    ``sn.disconnected_grad``). Narrower than ``reach`` and ``feeds``, which follow every
    input, to tell a value connected to the cost from a disconnected one."""

    def passes(node: Apply) -> bool:
        return not (getattr(node.op, "stops_gradient", False) or _blocks(node))

    ahead = {id(v) for v in wrt}  # computed from wrt along such paths
    for node in order:
        if passes(node) and any(x.type.is_float and id(x) in ahead for x in node.inputs):
            ahead.update(id(o) for o in node.outputs if o.type.is_float)
    back = {id(var) for var, _ in seeds if var.type.is_float}  # the seeds read them so
    for node in reversed(order):
        if passes(node) and any(o.type.is_float and id(o) in back for o in node.outputs):
            back.update(id(x) for x in node.inputs if x.type.is_float)
    return ahead & back


def _blocks(node: Apply) -> bool:
    """Nodes through which inputs count as disconnected (``sn.disconnected_grad``)."""
    return getattr(node.op, "disconnects_gradient", False)


def _fitted(g: Variable, var: Variable) -> Variable:
    """``g`` summed over broadcast axes and cast, where its type shows it does not fit ``var``."""
    gs, vs = g.type.shape, var.type.shape
    stretched = len(gs) != len(vs) or any(b == 1 and a != 1 for a, b in zip(gs, vs))
    if stretched or g.type.dtype != var.type.dtype:
        return fit_gradient(g, var)
    return g


def _sum_parts(parts: list[Variable], forward: Apply | None) -> Variable:
    """The sum of a variable's gradient contributions; its adds belong to ``forward``."""
    total = parts[0]
    for part in parts[1:]:
        total = add(total, part)
        total.owner.tag.setdefault("grad_of", forward)
    return total


def uid_mark() -> int:
    """A uid below that of every variable made from now on (uids only grow)."""
    return next(_variable._ids)


def tag_new_nodes(outputs: list[Variable], first_uid: int, forward: Apply | None):
    """Set ``tag["grad_of"]`` on the nodes behind ``outputs`` made since ``first_uid``."""
    stack = list(outputs)
    while stack:
        var = stack.pop()
        node = var.owner
        if node is None or var.uid < first_uid or "grad_of" in node.tag:
            continue
        node.tag["grad_of"] = forward
        stack.extend(node.inputs)


def tag_remaining(outputs: list[Variable], first_uid: int):
    """``grad_of = None`` on the nodes made since ``first_uid`` that no rule claimed
    (the cast of a known gradient, an explicit zero): every gradient node is tagged."""
    stack, seen = [v.owner for v in outputs if v.owner is not None], set()
    while stack:  # only the new nodes: the inputs of an older node are older still
        node = stack.pop()
        if id(node) in seen or node.outputs[0].uid < first_uid:
            continue
        seen.add(id(node))
        node.tag.setdefault("grad_of", None)
        stack.extend([v.owner for v in node.inputs if v.owner is not None])


def zeros_like(var: Variable) -> Variable:
    """An explicit zero gradient for ``var``: a constant when its shape is fixed."""
    if all(isinstance(d, int) for d in var.type.shape):
        return Constant(np.zeros(var.type.shape, var.type.dtype))
    zero = broadcast_like(Constant(0, dtype=var.type.dtype), var)
    zero.owner.tag["grad_of"] = None
    return zero


def report_disconnected(var: Variable, disconnected: str, return_disconnected: str):
    if disconnected == "ignore":
        return
    answer = "zeros" if return_disconnected == "zero" else "None"
    call, argument = DISCONNECTED_HINT.get()
    message = (
        f"{call}: the cost does not depend on {var.describe()} (it is disconnected from the "
        f"cost, or connected only through sn.disconnected_grad); pass {argument}='ignore' "
        f"or 'warn' to get {answer} for it"
    )
    if disconnected == "raise":
        raise DisconnectedInputError(message)
    # at the grad line (pinned by grad), or the first frame outside symnb
    warn_at_user(message, DisconnectedInputWarning, stacklevel=3)


def _show(var: Variable) -> str:
    """How a path step names a variable: its name, or the op that made it."""
    if var.name:
        return repr(var.name)
    if var.owner is not None:
        return var.owner.op.op_name()
    return var.describe()
