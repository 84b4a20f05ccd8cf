"""``updates=`` and ``givens=`` as the user wrote them -> lists of pairs.

``updates`` is a dict ``{W: W - lr * g}`` or a list of pairs ``[(W, W - lr * g)]``. The
usual slips (one pair not in a list, ``updates=(W, W - lr * g)``; the new values without the
variables, ``updates=[W - lr * g]``; a pair of three) get an error that says "updates", shows
the expected form with the user's own variable names, and points at the user's line.
``givens`` (``{x: data[i:j]}`` or pairs) gets the same checks of its form.
"""

from __future__ import annotations

from symnb.core.op import _at_user_line
from symnb.core.variable import SharedVariable, Variable, describe_value
from symnb.errors import GraphError

FORM = "give a list of (shared variable, new value) pairs or a dict {shared variable: new value}"


def as_update_pairs(updates) -> list[tuple]:
    """The pairs of ``updates``; a GraphError at the user's line for any other form."""
    if updates is None:
        return []
    if isinstance(updates, dict):
        return list(updates.items())
    if isinstance(updates, Variable):
        raise _error(f"updates={_name(updates)} is one value, not a pair", [updates])
    if _is_single_pair(updates):
        shared, value = updates
        raise _error(
            f"updates=({_name(shared)}, {_name(value)}) is a single pair, not a list of pairs",
            [updates],
        )
    try:
        items = list(updates)
    except TypeError:
        raise _error(f"updates is {describe_value(updates)}", []) from None
    for index, item in enumerate(items):
        if isinstance(item, Variable):
            raise _error(
                f"updates[{index}] is the value {_name(item)} alone, without the "
                "shared variable it replaces",
                items,
            )
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise _error(f"updates[{index}] is {_short(item)}, not a pair", items)
    return [tuple(item) for item in items]


GIVENS_FORM = "give a dict {variable: replacement} or a list of (variable, replacement) pairs"


def as_given_pairs(givens, argument: str = "givens") -> list[tuple]:
    """The pairs of ``givens``; a GraphError at the user's line for any other form (what
    each key is, is checked by the caller). ``argument``: how the messages name it
    (``theano.clone``'s is ``replace``)."""
    if givens is None:
        return []
    if isinstance(givens, dict):
        return list(givens.items())
    if isinstance(givens, Variable):
        raise _given_error(f"{argument}={_name(givens)} is one variable, not a pair")
    if (
        isinstance(givens, (tuple, list))
        and len(givens) == 2
        and isinstance(givens[0], Variable)
        and not isinstance(givens[1], (tuple, list))
    ):
        raise _given_error(f"{argument}={_short(givens)} is a single pair, not a list of pairs")
    neither = f"{argument}={_short(givens)} is neither a dict nor pairs"
    if isinstance(givens, (str, bytes)):
        raise _given_error(neither)
    try:
        items = list(givens)
    except TypeError:
        raise _given_error(neither) from None
    for index, item in enumerate(items):
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise _given_error(f"{argument}[{index}] is {_short(item)}, not a pair")
    return [tuple(item) for item in items]


def _given_error(what: str) -> GraphError:
    return _at_user_line(GraphError(f"{what}: {GIVENS_FORM}"))


def _is_single_pair(updates) -> bool:
    return (
        isinstance(updates, (tuple, list))
        and len(updates) == 2
        and isinstance(updates[0], SharedVariable)
        and not isinstance(updates[1], (tuple, list))
    )


def _error(what: str, items: list) -> GraphError:
    example = _example(items)
    return _at_user_line(GraphError(f"{what}: {FORM}, e.g. updates=[{example}]"))


def _example(items: list) -> str:
    """``(W, W - lr * g)`` with the user's first shared variable's name where there is one."""
    shared = next((_shared_in(i) for i in items if _shared_in(i) is not None), None)
    name = (shared.label or shared.assigned_name()) if shared is not None else None
    name = name or "W"
    return f"({name}, {name} - lr * g)"


def _shared_in(item):
    """The shared variable an update's value (or pair) is about: the first one it reads."""
    if isinstance(item, SharedVariable):
        return item
    if isinstance(item, (tuple, list)):
        found = [_shared_in(v) for v in item if isinstance(v, Variable)]
        return next((f for f in found if f is not None), None)
    if isinstance(item, Variable) and item.owner is not None:
        stack, seen = list(item.owner.inputs), set()
        while stack:
            var = stack.pop()
            if isinstance(var, SharedVariable):
                return var
            if var.owner is not None and id(var) not in seen:
                seen.add(id(var))
                stack.extend(var.owner.inputs)
    return None


def _name(var) -> str:
    """How the message writes a variable: its name, the Python name it was made with, or
    what it is."""
    if not isinstance(var, Variable):
        return _short(var)
    found = var.label or var.assigned_name()
    if found:
        return found
    where = "" if var.source is None else f" built at line {var.source.lineno}"
    return f"<the {var.type.dtype.name} expression{where}>"


def _short(value) -> str:
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_name(v) for v in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
