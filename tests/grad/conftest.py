"""Gradient tests compile on the NumPy reference backend unless a test names a backend:
they test symbolic rules, and the op tests already compare the backends' values."""

import pytest

from tests.helpers import reference_backend


@pytest.fixture(autouse=True)
def _on_the_reference_backend():
    with reference_backend():
        yield
