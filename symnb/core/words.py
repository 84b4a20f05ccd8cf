"""Numbers in messages, as a reader says them: ``1 input``, ``2 inputs``."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, in the plural unless ``n`` is 1 (``plural`` where adding an s is
    wrong: ``counted(2, "shared", "shared")``)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
