"""What a compiled function keeps to be built again (``pickle``, ``copy.copy``,
``copy.deepcopy``): its arguments as its own copies, never the caller's list, dict or array,
so that editing one after compiling changes nothing a copy of the function computes."""

from __future__ import annotations

from symnb.core.variable import Variable


def own_outputs(structure, out_vars: list):
    """The outputs in the structure the caller gave (one variable, a list, tuple or dict of
    them), rebuilt from the checked variables (an array given as an output is its Constant)."""
    return structure(list(out_vars))


def own_option(value):
    """An option's list (``no_default_updates``' shared variables) or dict of lists
    (``optimize={"include": [...]}``) as a copy of its own; anything else as it is."""
    if isinstance(value, dict):
        return {key: own_option(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return list(value)
    return value


def variables_in(built_from) -> list[Variable]:
    """The variables in what a function was built from (lists, tuples and dicts of them)."""
    found, stack = [], [built_from]
    while stack:
        item = stack.pop()
        if isinstance(item, Variable):
            found.append(item)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
    return found
