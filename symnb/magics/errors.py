"""symnb's errors in a cell: a short styled message naming the cell line, not a wall of
traceback; the full traceback stays one click away (an HTML ``<details>``).

IPython's custom exception handler replaces the traceback report, so the handler sends the
kernel's error message itself, holding only symnb's message (a few lines): a notebook run by
nbconvert or nbclient then fails with the exception's name and message (``CellExecutionError``
carries them), and the frontend shows them under the card.

ShapeWarnings shown in a kernel become a compact card too (a one-line summary naming the cell
line, the message and how to silence that category behind a click), not stderr text citing
the kernel's temporary file. The warnings filters decide, as always, which are shown; one
an "error" filter raises is an error card, as a SymnbError is (its message names the line).
"""

from __future__ import annotations

import re
import traceback
import warnings

from symnb.core.source import SourceLoc
from symnb.errors import ShapeWarning, SymnbError
from symnb.viz.cards import Html, error_html, warning_html

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def short_traceback(etype, value) -> list[str]:
    """What the kernel reports instead of a traceback: ``ShapeError: message`` (every line)."""
    return f"{etype.__name__}: {value}".splitlines() or [etype.__name__]


def show_symnb_error(shell, etype, value, tb, tb_offset=None):
    """IPython custom exception handler: display the card, then report the error."""
    from IPython.display import display

    full = "".join(traceback.format_exception(etype, value, tb))
    display(Html(error_html(value, _ANSI.sub("", full)), f"{etype.__name__}: {value}"))
    stb = short_traceback(etype, value)
    if getattr(shell, "kernel", None) is not None:  # a kernel: clients want the error message
        shell._showtraceback(etype, value, stb)
    return stb


class _WarningCards:
    """A ``warnings.showwarning`` that displays ShapeWarnings as cards, others as before."""

    def __init__(self, previous):
        self.previous = previous

    def __call__(self, message, category, filename, lineno, file=None, line=None):
        if file is not None or not issubclass(category, ShapeWarning):
            return self.previous(message, category, filename, lineno, file, line)
        from IPython.display import display

        where = SourceLoc(filename, lineno)
        text = f"{category.__name__}: {message}\n  at {where}"
        display(Html(warning_html(message, category, str(where)), text))


#: what is shown as a card: symnb's errors, and ShapeWarnings raised by an "error" filter
CARDED = (SymnbError, ShapeWarning)


def install(shell) -> None:
    shell.set_custom_exc(CARDED, show_symnb_error)
    if not isinstance(warnings.showwarning, _WarningCards):
        warnings.showwarning = _WarningCards(warnings.showwarning)


def uninstall(shell) -> None:
    """Undo :func:`install`: IPython's own traceback for symnb's errors, warnings as before
    (a handler another extension set since is left alone)."""
    if shell.custom_exceptions == CARDED:
        shell.set_custom_exc((), None)
    if isinstance(warnings.showwarning, _WarningCards):
        warnings.showwarning = warnings.showwarning.previous
