"""Where in the user's code a variable was created, for error messages.

The first stack frame outside the symnb package is the user's; in a notebook that is a cell,
whose file name IPython makes up and whose lines linecache can still show.
"""

from __future__ import annotations

import linecache
import os
import re
import sys
from dataclasses import dataclass

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_CELL_FILE = re.compile(r"(ipykernel_\d+[/\\]\d+\.py|<ipython-input-(\d+)-)")
#: directories of code that only forwards calls between symnb's own functions (the
#: trampolines a mutation tester wraps each mutated function in: tests/conftest.py adds
#: mutmut's under mutmut): their frames are never the user's line
FORWARDERS: list[str] = []


@dataclass(frozen=True)
class SourceLoc:
    """A file (or notebook cell) and a line number."""

    filename: str
    lineno: int

    @property
    def code(self) -> str:
        return linecache.getline(self.filename, self.lineno).strip()

    @property
    def in_notebook(self) -> bool:
        return bool(_CELL_FILE.search(self.filename))

    def __str__(self) -> str:
        place = "notebook cell" if self.in_notebook else self.filename
        code = self.code
        text = f"{place}, line {self.lineno}" + (f": {code}" if code else "")
        return text + _cell_label(self.filename) if self.in_notebook else text


def _cell_label(filename: str) -> str:
    """``  (In[5])``: the cell's execution count, when IPython knows it."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    namer = getattr(getattr(shell, "compile", None), "format_code_name", None)
    label = namer(filename) if namer is not None else None
    return f"  ({label[1]})" if label else ""


def user_frame(skip_dirs: tuple[str, ...] = ()):
    """The innermost frame that is not symnb's own code (nor in skip_dirs), or None."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith((_PACKAGE_DIR, *FORWARDERS, *skip_dirs)):
            return frame
        frame = frame.f_back
    return None


def user_location(skip_dirs: tuple[str, ...] = ()) -> SourceLoc | None:
    """The file and line of :func:`user_frame`."""
    frame = user_frame(skip_dirs)
    return None if frame is None else SourceLoc(frame.f_code.co_filename, frame.f_lineno)
