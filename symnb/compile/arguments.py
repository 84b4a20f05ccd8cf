"""What ``sn.function`` accepts as its ``inputs`` and ``outputs`` arguments: inputs are one
variable or a list or tuple of distinct leaf variables that are neither shared nor constant
(in the order the call takes their values); outputs are one variable or a flat list, tuple or
dict of them, and the call's results come back in the same structure."""

from __future__ import annotations

from collections.abc import Iterator, Set

from symnb.core.dims import unordered
from symnb.core.op import _at_user_line
from symnb.core.variable import Constant, SharedVariable, Variable, as_variable, check_name
from symnb.errors import ArgumentError, GraphError


def check_inputs(inputs) -> list[Variable]:
    """The inputs as a list, each checked; a GraphError at the user's line names a bad one."""
    inputs = [inputs] if isinstance(inputs, Variable) else _input_list(inputs)
    for i, var in enumerate(inputs):
        if not isinstance(var, Variable):
            raise _at_user_line(GraphError(f"input {i} is {var!r}, not a symbolic variable"))
        if isinstance(var, SharedVariable):
            raise _at_user_line(
                GraphError(
                    f"input {i} {var.describe()} is a shared variable, which a function reads "
                    "itself (its current value); to give it other values, make an input of its "
                    f"type and pass givens={{{var.name or 'shared'}: that_input}}"
                )
            )
        if isinstance(var, Constant) or var.owner is not None:
            kind = "computed from other variables" if var.owner is not None else "a constant"
            raise _at_user_line(
                GraphError(
                    f"input {i} {var.describe()} is {kind}; inputs are variables made by "
                    "sn.tensor/sn.matrix/..."
                )
            )
        if any(var is other for other in inputs[:i]):
            raise _at_user_line(GraphError(f"{var.describe_as('input')} is listed twice"))
        try:  # (``x.name = 7``: checked when the variable was made; a keyword names it)
            check_name(var.name, var.type)
        except ArgumentError as exc:
            raise _at_user_line(ArgumentError(f"input {i} {var.describe()}: {exc}")) from None
    return inputs


def _input_list(inputs) -> list:
    """A list or tuple of inputs as a list. Anything else is an ArgumentError at the user's
    line (Theano 1.0 took a list only): a set, whose iteration order would bind the call's
    values to other inputs than the user wrote, a dict, None, a number, and an iterator (a
    generator: ``list(...)`` of it is the order it gives)."""
    if isinstance(inputs, (list, tuple)):
        return list(inputs)
    if isinstance(inputs, Set):
        why = f"{unordered(inputs)}: its order is arbitrary (values would go to other inputs)"
    elif unordered(inputs):
        why = unordered(inputs)
    else:
        why = f"{inputs!r} ({type(inputs).__name__})"
        if isinstance(inputs, Iterator):
            why += "; write list(...) of it"
    raise _at_user_line(
        ArgumentError(
            "sn.function: inputs are a list or tuple of variables (or one variable), in the "
            f"order the call takes their values; not {why}"
        )
    )


def single_output(results):
    """The structure of a function of one output (not a list of one): that output."""
    return results[0]


def _one_output(key, value):
    """An item of a list or dict of outputs as a variable; a nested container of variables is
    refused (it would be read as a constant array of them; one of numbers is a constant)."""
    if isinstance(value, (list, tuple, dict)) and _holds_variables(value):
        raise _at_user_line(
            GraphError(
                f"output {key!r} is a {type(value).__name__}: outputs are one variable, or a "
                "flat list, tuple or dict of variables; list the inner variables as outputs of "
                "their own"
            )
        )
    return as_variable(value)


def _holds_variables(value) -> bool:
    items = value.values() if isinstance(value, dict) else value
    return any(
        isinstance(v, Variable) or (isinstance(v, (list, tuple, dict)) and _holds_variables(v))
        for v in items
    )


def flatten_outputs(outputs):
    """The output variables in order, and a function that rebuilds the user's structure."""
    if isinstance(outputs, dict):
        keys = list(outputs)
        return (lambda r: dict(zip(keys, r))), [_one_output(k, v) for k, v in outputs.items()]
    if isinstance(outputs, (list, tuple)):
        kind = type(outputs)  # a named tuple (sn.svd's SVDResult) is rebuilt by field
        rebuild = kind._make if hasattr(kind, "_fields") else kind
        return (lambda r: rebuild(r)), [_one_output(i, v) for i, v in enumerate(outputs)]
    if outputs is None:
        return (lambda r: None), []
    return single_output, [as_variable(outputs)]


def ambiguous_keyword(key: str, names: list) -> str:
    """Why the keyword ``key`` binds no input where several inputs have that name ("inputs 0
    and 2 are both named 'x'..."), else ""."""
    places = [str(i) for i, name in enumerate(names) if name == key]
    if len(places) < 2:
        return ""
    return (
        f"inputs {', '.join(places[:-1])} and {places[-1]} are "
        f"{'both' if len(places) == 2 else 'all'} named {key!r}, so the keyword {key}=... "
        "is ambiguous; pass them by position"
    )
