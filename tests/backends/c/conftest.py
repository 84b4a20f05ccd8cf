"""Every test here needs a C compiler (they skip, saying so, without one), and may take a
private compile directory (the suite already avoids ~/.cache)."""

import pytest

import symnb as sn
from symnb.backends import compiledir as cdir
from symnb.backends.c import cache, compiler
from symnb.backends.c.compiler import find_compiler


@pytest.fixture(autouse=True)
def _needs_a_compiler():
    if find_compiler() is None:
        pytest.skip("no C compiler (cc, gcc or clang): the C backend cannot build kernels")


@pytest.fixture
def compiledir(tmp_path, monkeypatch):
    """An empty kernel cache, memory layer included, for this test only."""
    monkeypatch.setattr(sn.config, "compiledir", str(tmp_path / "compiledir"))
    monkeypatch.setattr(cache, "_loaded", {})
    return tmp_path / "compiledir"


@pytest.fixture
def fresh_cache(monkeypatch):
    """Each test checks its directory afresh and loads libraries from disk."""
    monkeypatch.setattr(cache, "_verified", {})
    monkeypatch.setattr(cache, "_libraries", {})
    monkeypatch.setattr(compiler, "_flags", {})
    cdir.forget()
    yield
    cdir.forget()
