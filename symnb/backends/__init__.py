"""Backends turn an optimised graph into a callable; ``py`` runs each op's NumPy reference."""

from __future__ import annotations

from symnb.backends.py import PyLinker

LINKERS = {"py": PyLinker}
PLANNED = ("c", "opencl", "cuda")


def get_linker(name: str):
    """The linker class for a backend name, or a clear error listing what exists."""
    if name in LINKERS:
        return LINKERS[name]
    if name in PLANNED:
        raise NotImplementedError(
            f"backend {name!r} is not available in this version of symnb; use backend='py'"
        )
    raise ValueError(f"unknown backend {name!r}; choose one of {sorted(LINKERS)}")
