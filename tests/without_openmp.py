"""``pytest -p tests.without_openmp``: the suite with ``sn.config.openmp = False``, as a
compiler without OpenMP runs it (Apple's clang); ``.ci/run``'s clang run without OpenMP."""

import symnb as sn


def pytest_configure(config):
    sn.config.openmp = False
