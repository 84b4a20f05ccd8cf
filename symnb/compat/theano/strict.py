"""Theano's strict rebuild of a graph over ``givens`` or ``theano.clone``'s ``replace``
(``rebuild_strict=True``, ``strict=True``): a replacement must convert to its key's type
(``TensorType.filter_variable``), so a dim the key's type knows (broadcastable, of length 1;
here any fixed size) must be known to be that size in the replacement's type too."""

from __future__ import annotations

from symnb.core.op import _at_user_line
from symnb.errors import ShapeTypeError


def refuse_looser_replacements(pairs, what: str) -> None:
    """A ShapeTypeError (a TypeError, as Theano's), with Theano's words, at the user's line
    for the first ``(key, replacement)`` whose replacement's type leaves a fixed dim of the
    key's unknown or another size (a matrix given for a row)."""
    for key, value in pairs.items() if isinstance(pairs, dict) else pairs:
        want, got = key.type.shape, value.type.shape
        loose = [i for i, (w, g) in enumerate(zip(want, got)) if isinstance(w, int) and w != g]
        if not loose or len(want) != len(got):
            continue
        dims = ", ".join(map(str, loose))
        ones = all(want[i] == 1 for i in loose)
        fix = (
            f"T.addbroadcast(value, {dims}) marks dims {dims} of length 1 (checked when "
            "the function runs)"
            if ones
            else f"T.specify_shape(value, {_fixed(want)}) checks its shape when the function runs"
        )
        name = value.name or value.describe()
        raise _at_user_line(
            ShapeTypeError(
                f"{what}: {key.describe()} cannot take {value.describe()}: Cannot convert Type "
                f"{_theano_type(value.type)} (of Variable {name}) into Type "
                f"{_theano_type(key.type)}. You can try to manually convert {name} into a "
                f"{_theano_type(key.type)}: {fix}"
            )
        )


def _fixed(shape) -> str:
    return "(" + ", ".join(str(d) if isinstance(d, int) else "?" for d in shape) + ")"


def _theano_type(type_) -> str:
    """A type as Theano wrote it: ``TensorType(float64, (True, False))``."""
    return f"TensorType({type_.dtype.name}, {type_.broadcastable})"
