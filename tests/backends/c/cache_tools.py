"""What the compile-cache tests share: a small function to compile, the library it lands in,
and loading it from disk again (the fixture ``fresh_cache`` is in conftest.py)."""

from __future__ import annotations

import errno
import os

import numpy as np

import symnb as sn
from symnb.backends.c import cache


def build(scale=2.0):
    x = sn.vector("x")
    return sn.function([x], sn.exp(x) * scale + 1, backend="c")


def works(f, scale=2.0):
    x = np.linspace(0, 1, 5)
    np.testing.assert_allclose(f(x), np.exp(x) * scale + 1)


def library(compiledir):
    (lib,) = (compiledir / "c").glob("lib-*.so")
    return lib


def reload_from_disk():
    cache._loaded.clear()
    cache._verified.clear()
    cache._libraries.clear()


def failing_creates(monkeypatch, hit, code=errno.ENOSPC):
    """``os.open`` failing with ``code`` (ENOSPC: a full disk; EACCES: a refused write, a
    PermissionError) for each file it creates where ``hit(path)``; other opens as usual."""
    real = os.open

    def opening(path, flags, *args, **kwargs):
        if flags & os.O_CREAT and hit(str(path)):
            raise OSError(code, os.strerror(code), path)
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", opening)
