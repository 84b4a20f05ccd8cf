"""Theano names the layer has no op for: a module's ``__getattr__`` that says what to write
instead (``theano.tensor.nlinalg.eigh``...), so a course program stops at its own line with
an alternative, not a bare AttributeError, also where it imports the name
(``from theano.tensor.nlinalg import eigh``)."""

from __future__ import annotations

import dis
import sys

from symnb.errors import SymnbError

_IMPORT_FROM = dis.opmap["IMPORT_FROM"]


class MissingNameError(SymnbError, AttributeError):
    """A Theano name the layer does not have, read as an attribute (``T.nlinalg.eigh``): an
    AttributeError, so ``hasattr`` and ``getattr(module, name, default)`` answer as usual; the
    message says what to write instead."""


class MissingImportError(SymnbError, ImportError):
    """The same name imported (``from theano.tensor.nlinalg import eigh``), with the same
    message: Python replaces an AttributeError raised by a module's ``__getattr__`` during
    ``from ... import`` with its own bare "cannot import name", dropping the hint (no cause
    is chained), so the import gets this ImportError instead. (No class can be both: the two
    builtins' layouts conflict.)"""


def missing(name: str, message: str, depth: int = 1) -> Exception:
    """The error for ``name``, which the layer lacks, with ``message`` (what to write
    instead): a MissingImportError when the code ``depth`` frames above the caller (the
    module ``__getattr__``'s caller: 1) is executing ``from module import name``, else a
    MissingNameError."""
    if _importing_from(sys._getframe(depth + 1)):
        return MissingImportError(message, name=name)
    return MissingNameError(message)


def _importing_from(frame) -> bool:
    """Whether ``frame`` is at an ``IMPORT_FROM`` instruction (``from m import name`` reads
    the name by ``getattr`` from there; Python 3.10 to 3.13 keep ``f_lasti`` at it)."""
    try:
        code, at = frame.f_code.co_code, frame.f_lasti
    except AttributeError:  # (an implementation without them: the attribute's error)
        return False
    return 0 <= at < len(code) and code[at] == _IMPORT_FROM


def missing_names(module: str, has: str, instead: dict[str, str], default: str):
    """A module ``__getattr__``: reading a name of ``module`` the layer lacks is an
    AttributeError naming it, what the module ``has`` and what to write (``instead[name]``,
    else ``default``), an ImportError with that message where the name is imported
    (``missing``); dunder names stay plain AttributeErrors (import machinery, pickle)."""

    def __getattr__(name):  # noqa: N807 - the module protocol's name
        if name.startswith("__"):
            raise AttributeError(name)
        raise missing(
            name,
            f"{module}.{name} is not in symnb's Theano layer ({has}); use "
            f"{instead.get(name, default)}",
        )

    return __getattr__
