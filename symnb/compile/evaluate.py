"""``x.eval({...})``: compile a variable as a function of the values given and call it once.

Keys are the input variables, or their names (``(x + 1).eval({"x": 2.0})``), which must name
exactly one input of the graph; ``Variable.eval`` reaches this through the "eval" hook."""

from __future__ import annotations

from collections.abc import Mapping

from symnb.compile.function import function
from symnb.core.graph import leaves
from symnb.core.source import at_user_line
from symnb.core.variable import Variable, describe_value
from symnb.errors import ArgumentError, GraphError


def evaluate(var: Variable, inputs: dict, backend: str):
    if not isinstance(inputs, Mapping):  # (a list was read as its values' keys, an int failed)
        raise at_user_line(
            ArgumentError(
                f"eval of {var.describe()}: inputs is a dict {{input variable or its name: "
                f"value}}, not {describe_value(inputs)}"
            )
        )
    keys = [_resolve(var, key) for key in inputs]
    return function(keys, var, backend=backend)(*inputs.values())


def _resolve(var: Variable, key):
    """``key`` itself when it is a variable; else the one leaf of var's graph so named."""
    if isinstance(key, Variable) or not isinstance(key, str):
        return key  # sn.function says what is wrong with a key that is neither
    named = [leaf for leaf in leaves([var]) if leaf.name == key]
    if len(named) == 1:
        return named[0]
    names = sorted({leaf.name for leaf in leaves([var]) if leaf.name})
    how = "names no input of" if not named else f"names {len(named)} inputs of"
    raise GraphError(f"eval: {key!r} {how} {var.describe()}; its named inputs: {names}")
