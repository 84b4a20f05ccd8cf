"""symnb's errors in a cell: a short styled message naming the cell line, not a wall of
traceback; the full traceback stays one click away (an HTML ``<details>``)."""

from __future__ import annotations

import re
import traceback

from symnb.errors import SymnbError
from symnb.viz.cards import Html, error_html

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def show_symnb_error(shell, etype, value, tb, tb_offset=None):
    """IPython custom exception handler: display the card (IPython then prints no traceback)."""
    from IPython.display import display

    full = "".join(traceback.format_exception(etype, value, tb))
    display(Html(error_html(value, _ANSI.sub("", full)), f"{etype.__name__}: {value}"))
    return [f"{etype.__name__}: {str(value).splitlines()[0]}"]


def install(shell) -> None:
    shell.set_custom_exc((SymnbError,), show_symnb_error)


def uninstall(shell) -> None:
    shell.set_custom_exc((), None)
