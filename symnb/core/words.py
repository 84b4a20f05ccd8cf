"""Numbers and names in messages and displays, as a reader says and sees them: ``1 input``,
``2 inputs``; a name's newline written ``\\n``."""

from __future__ import annotations

import unicodedata


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, in the plural unless ``n`` is 1 (``plural`` where adding an s is
    wrong: ``counted(2, "shared", "shared")``)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def printable(text: str, keep: str = "", visible: bool = False) -> str:
    """``text`` with control characters (``\\x01``, ``\\x0b``, which SVG, being XML, cannot
    hold) written as their escapes (``\\x01``), but those in ``keep``. ``visible``: every
    character that Python's ``repr`` would not print as itself too, so that nothing prints as
    a blank other than a space or as nothing at all (a tab ``\\t``, a no-break space
    ``\\xa0``, a zero-width space ``\\u200b``): where two names must read apart (formulas)."""
    return "".join(
        c
        if c in keep or (c.isprintable() if visible else unicodedata.category(c) != "Cc")
        else repr(c)[1:-1]
        for c in text
    )
