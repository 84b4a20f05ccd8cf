"""Theano's strict rebuild of a graph over ``givens`` or ``theano.clone``'s ``replace``
(``rebuild_strict=True``, ``strict=True``): a replacement must convert to its key's type
(``TensorType.filter_variable``, whose ``convert_variable`` takes the same dtype only), so
a variable given must have its key's dtype, and a dim the key's type knows to be 1
(broadcastable) must be known to be 1 in the replacement's type too."""

from __future__ import annotations

import numpy as np

from symnb.core.op import _at_user_line
from symnb.core.variable import Variable
from symnb.errors import DTypeError, ShapeTypeError


def refuse_looser_replacements(pairs: list, what: str, loosen: str) -> None:
    """A DTypeError or a ShapeTypeError (TypeErrors, as Theano's), with Theano's words, at
    the user's line for the first ``(key, replacement)`` of the user's ``pairs`` (their
    givens as ``as_given_pairs`` gives them, before ``check_givens`` fits them) where the
    replacement is a variable of another dtype that a cast would hold (an ``ivector`` for a
    ``dvector``, which ``sn.function`` would cast; a lossy one is ``check_givens``'
    DTypeError, naming what widens it; ``loosen``, ``rebuild_strict=False``, takes both),
    or whose type does not know a dim to be 1 where the key's does (a matrix given for a
    row: Theano's types know no other sizes; another fixed size of a symnb type is checked
    when the function runs, as in ``sn.function``).
    Replacements that are no variables (numbers, arrays) are fitted by ``check_givens``,
    whose errors also cover keys that are no variables and ranks that differ."""
    for key, value in pairs:
        if not (isinstance(key, Variable) and isinstance(value, Variable)):
            continue
        name = value.name or "value"  # (in the code a hint writes)
        cannot = (
            f"{what}: {key.describe()} cannot take {value.describe()}: Cannot convert Type "
            f"{theano_type(value.type)} (of Variable {value.name or value.describe()}) into "
            f"Type {theano_type(key.type)}. You can try to manually convert {name} into a "
            f"{theano_type(key.type)}"
        )
        if value.type.dtype != key.type.dtype and np.can_cast(
            value.type.dtype, key.type.dtype, "safe"
        ):  # (a lossy one: check_givens names what widens it)
            raise _at_user_line(
                DTypeError(
                    f"{cannot}: T.cast({name}, {key.type.dtype.name!r}) converts it (with "
                    f"{loosen} the graph is built again over the {value.type.dtype.name} {name})"
                )
            )
        want, got = key.type.shape, value.type.shape
        if len(want) != len(got):
            continue
        loose = [str(i) for i, (w, g) in enumerate(zip(want, got)) if w == 1 and g != 1]
        if not loose:
            continue
        dims = ", ".join(loose)
        raise _at_user_line(
            ShapeTypeError(
                f"{cannot}: T.addbroadcast(value, {dims}) marks dims {dims} of length 1 (checked "
                "when the function runs)"
            )
        )


def theano_type(type_) -> str:
    """A type as Theano wrote it: ``TensorType(float64, (True, False))``."""
    return f"TensorType({type_.dtype.name}, {type_.broadcastable})"
