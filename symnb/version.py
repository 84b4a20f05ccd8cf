"""symnb's version, written once: in pyproject.toml, read from the pyproject.toml next to the
running package (a source tree: a checkout, installed in place or not) or else from the
installed package's metadata."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
UNKNOWN = "0+unknown"


def version() -> str:
    """The version of the package that runs: a source tree's own pyproject.toml says it
    (where another symnb is installed, its metadata is that one's), an installed package's
    metadata (its directory has no pyproject.toml of symnb's beside it)."""
    if _from_pyproject(PYPROJECT, "name") == "symnb":
        return _from_pyproject(PYPROJECT)
    try:
        return metadata.version("symnb")
    except metadata.PackageNotFoundError:
        return UNKNOWN


def _from_pyproject(path: Path, key: str = "version") -> str:
    """The ``version`` (or another string ``key``) of the ``[project]`` table (a regular
    expression, so Python 3.10 needs no TOML parser)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return UNKNOWN
    project = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    found = project and re.search(rf'^{key}\s*=\s*"([^"]+)"', project.group(1), re.M)
    return found.group(1) if found else UNKNOWN
