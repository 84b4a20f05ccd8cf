"""symnb's version, written once: in pyproject.toml, read from the installed package's metadata
(or from pyproject.toml itself in a source tree that is not installed)."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
UNKNOWN = "0+unknown"


def version() -> str:
    try:
        return metadata.version("symnb")
    except metadata.PackageNotFoundError:  # a checkout on sys.path, never installed
        return _from_pyproject(PYPROJECT)


def _from_pyproject(path: Path) -> str:
    """The ``version`` of the ``[project]`` table (a regular expression, so Python 3.10 needs
    no TOML parser)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return UNKNOWN
    project = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    found = project and re.search(r'^version\s*=\s*"([^"]+)"', project.group(1), re.M)
    return found.group(1) if found else UNKNOWN
