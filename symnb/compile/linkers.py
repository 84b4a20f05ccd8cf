"""The linkers ``sn.function`` can hand a graph to: a backend's, or check mode's."""

from __future__ import annotations

from symnb.backends import get_linker as backend_linker
from symnb.compile.checkmode import CHECK, CheckLinker


def get_linker(name: str):
    """The linker class for a backend name ("check": check mode's), or a clear error."""
    return CheckLinker if name == CHECK else backend_linker(name)
