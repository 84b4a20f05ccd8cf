"""Fixtures: a seeded random generator, and the backend each op test runs on."""

import numpy as np
import pytest

from tests.helpers import available_backends


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture(params=available_backends())
def backend(request):
    """Each test that takes ``backend`` runs once per available backend."""
    return request.param
