"""The linkers ``sn.function`` can hand a graph to: a backend's, check mode's, or a debugging
mode's running on a backend (``mode="debug"``/``"nanguard"``, debugmode.py)."""

from __future__ import annotations

from symnb.backends import get_linker as backend_linker
from symnb.compile.checkmode import CHECK, CheckLinker
from symnb.compile.debugmode import mode_linker
from symnb.opt.select import plan


def get_linker(name: str, mode: str | None = None):
    """The linker class for a backend name ("check": check mode's), or for a debugging mode on
    that backend; a clear error for unknown names."""
    if mode is not None:
        backend_linker(name)  # an unknown backend fails here, naming the choices
        return mode_linker(mode, name)
    return CheckLinker if name == CHECK else backend_linker(name)


def check_choices(backend, optimize, mode) -> None:
    """Refuse an unknown backend, ``optimize`` or mode as a compile does, compiling nothing:
    check mode uses none of them, yet a program must not pass it with a typo that stops its
    real run."""
    if backend:  # (None or "": ``sn.config.backend``, checked when it was set)
        backend_linker(backend)
    if mode is not None:
        mode_linker(mode, backend)
    if optimize is not None:
        plan(optimize)
