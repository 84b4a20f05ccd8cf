"""Settings from text such as ``SYMNB_FLAGS="backend=py,optimize=stable,cc=clang"``.

Each ``key=value`` sets one field of a settings dataclass (``sn.config``); the value is parsed
by the field's declared type (str, int, float, bool; ``int | None`` also takes ``none``), so a
typo is an error that lists the keys there are, never a setting silently ignored.
"""

from __future__ import annotations

import dataclasses
import typing

from symnb.core.source import pinned
from symnb.errors import SymnbError

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off", "")


class FlagError(SymnbError, ValueError):
    """A flag that names no setting, or a value its setting cannot take."""


def parse(
    text: str, source: str, form: str = "key=value", example: str = "backend=py,optimize=stable"
) -> dict[str, str]:
    """``"a=1, b=x"`` -> ``{"a": "1", "b": "x"}``; empty items are skipped. ``form`` and
    ``example`` word the error for an item that is not a pair (Theano's flags say name=value)."""
    pairs: dict[str, str] = {}
    for item in text.split(","):
        key, sep, value = item.strip().partition("=")
        if not key and not sep:
            continue
        if not sep or not key.strip():
            raise FlagError(
                f"{source}: {item.strip()!r} is not {form} (items are separated "
                f"by commas, e.g. {example})"
            )
        pairs[key.strip()] = value.strip()
    return pairs


def settable(settings) -> dict[str, type]:
    """The fields flags may set, with their types (callables and the like are left out)."""
    hints = typing.get_type_hints(type(settings))
    return {
        f.name: hints[f.name] for f in dataclasses.fields(settings) if hints[f.name] in CONVERTERS
    }


def apply(settings, text: str, source: str) -> None:
    """Set the fields named in ``text`` (``source`` names where it came from in errors);
    nothing is set unless every flag is valid."""
    fields = settable(settings)
    values = {}
    for key, raw in parse(text, source).items():
        if key not in fields:
            raise FlagError(
                f"{source}: unknown setting {key!r}; the settings are {', '.join(sorted(fields))}"
            )
        values[key] = _convert(raw, fields[key], f"{source}: {key}")
    # a value the setting refuses is no line of the user's: its error names none (the first
    # frame outside symnb would be the import machinery's)
    with pinned(None):
        for key, value in values.items():
            try:
                setattr(settings, key, value)
            except ValueError as exc:
                raise FlagError(f"{source}: {exc}") from None


def _convert(raw: str, kind: type, label: str):
    if kind is bool:
        if raw.lower() in TRUE + FALSE:
            return raw.lower() in TRUE
        raise FlagError(f"{label} takes true or false (1/0, yes/no, on/off), not {raw!r}")
    try:
        return CONVERTERS[kind](raw)
    except ValueError:
        raise FlagError(f"{label} takes {NOUNS[kind]}, not {raw!r}") from None


def _optional_int(raw: str) -> int | None:
    """A number, or None for "" or "none" (a field whose None means "decide for me")."""
    return None if raw.lower() in ("", "none") else int(raw)


CONVERTERS = {str: str, int: int, float: float, bool: bool, int | None: _optional_int}
NOUNS = {int: "an integer", float: "a number", int | None: "an integer or none"}
