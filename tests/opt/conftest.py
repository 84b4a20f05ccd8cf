"""Every rewrite test runs with the graph verifier on after each phase."""

import pytest

import symnb as sn


@pytest.fixture(autouse=True)
def verify_rewrites():
    before = sn.config.verify_rewrites
    sn.config.verify_rewrites = True
    yield
    sn.config.verify_rewrites = before
