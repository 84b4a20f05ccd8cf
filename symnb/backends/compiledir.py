"""Where compiled code is cached: ``sn.config.compiledir``, else ``~/.cache/symnb``."""

from __future__ import annotations

import os

from symnb.config import config


def compiledir() -> str:
    """``sn.config.compiledir``, or ``~/.cache/symnb`` (``$XDG_CACHE_HOME/symnb``)."""
    if config.compiledir:
        return config.compiledir
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "symnb")


def kernel_dir() -> str:
    """The C kernels' layer of the cache."""
    return os.path.join(compiledir(), "c")
