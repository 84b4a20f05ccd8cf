"""Theano's strict rebuild of a graph over ``givens`` or ``theano.clone``'s ``replace``
(``rebuild_strict=True``, ``strict=True``): a replacement must convert to its key's type
(``TensorType.filter_variable``), so a dim the key's type knows to be 1 (broadcastable) must
be known to be 1 in the replacement's type too."""

from __future__ import annotations

from symnb.core.op import _at_user_line
from symnb.errors import ShapeTypeError


def refuse_looser_replacements(pairs, what: str) -> None:
    """A ShapeTypeError (a TypeError, as Theano's), with Theano's words, at the user's line
    for the first ``(key, replacement)`` whose replacement's type does not know a dim to be
    1 where the key's does (a matrix given for a row: Theano's types know no other sizes;
    another fixed size of a symnb type is checked when the function runs, as in
    ``sn.function``)."""
    for key, value in pairs.items() if isinstance(pairs, dict) else pairs:
        want, got = key.type.shape, value.type.shape
        if len(want) != len(got):
            continue
        loose = [str(i) for i, (w, g) in enumerate(zip(want, got)) if w == 1 and g != 1]
        if not loose:
            continue
        dims = ", ".join(loose)
        name = value.name or value.describe()
        raise _at_user_line(
            ShapeTypeError(
                f"{what}: {key.describe()} cannot take {value.describe()}: Cannot convert Type "
                f"{theano_type(value.type)} (of Variable {name}) into Type "
                f"{theano_type(key.type)}. You can try to manually convert {name} into a "
                f"{theano_type(key.type)}: T.addbroadcast(value, {dims}) marks dims {dims} of "
                "length 1 (checked when the function runs)"
            )
        )


def theano_type(type_) -> str:
    """A type as Theano wrote it: ``TensorType(float64, (True, False))``."""
    return f"TensorType({type_.dtype.name}, {type_.broadcastable})"
