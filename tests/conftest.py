"""Fixtures: a seeded random generator, and the backend each op test runs on."""

import numpy as np
import pytest

from tests.helpers import available_backends


@pytest.fixture(scope="session", autouse=True)
def _private_compiledir(tmp_path_factory):
    """Compiled kernels go to a temporary directory, never to the user's cache."""
    import symnb as sn

    before = sn.config.compiledir
    sn.config.compiledir = str(tmp_path_factory.mktemp("compiledir"))
    yield sn.config.compiledir
    sn.config.compiledir = before


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture(params=available_backends())
def backend(request):
    """Each test that takes ``backend`` runs once per available backend."""
    return request.param
