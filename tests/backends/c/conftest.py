"""A private compile directory per test that needs one (the suite already avoids ~/.cache)."""

import pytest

import symnb as sn
from symnb.backends.c import cache


@pytest.fixture
def compiledir(tmp_path, monkeypatch):
    """An empty kernel cache, memory layer included, for this test only."""
    monkeypatch.setattr(sn.config, "compiledir", str(tmp_path / "compiledir"))
    monkeypatch.setattr(cache, "_loaded", {})
    return tmp_path / "compiledir"
