"""Ops that take complex values give NumPy's complex results (and real ones where NumPy's
are real), on every backend: a stabilised formula written for floats (``abs``, ``max``) must
not drop the phase."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from tests.helpers import named_backends

BACKENDS = named_backends("py", "c")
Z = np.array([-2 + 0j, -1j, 0.5 + 1j, 30 - 2j, -30 + 0.5j])


def _z(ndim=1):
    return sn.tensor("z", shape=(None,) * ndim, dtype="complex128")


@pytest.mark.parametrize("backend", BACKENDS)
def test_sigmoid_of_complex_values_is_numpys_logistic_function(backend):
    z = _z()
    got = sn.function([z], sn.sigmoid(z), backend=backend)(Z)
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, 1 / (1 + np.exp(-Z)), rtol=1e-12)
    far = np.array([-800 + 1j, 800 - 2j])  # 1 / (1 + exp(800)) is 0, not NaN
    np.testing.assert_allclose(sn.function([z], sn.sigmoid(z), backend=backend)(far), [0, 1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_logsumexp_of_complex_values_keeps_the_imaginary_part(backend):
    z = _z(2)
    rows = np.stack([Z, Z[::-1] + 1j])
    want = np.log(np.sum(np.exp(rows), axis=1))
    written = sn.log(sn.sum(sn.exp(z), axis=1))  # rewritten to logsumexp
    for got in sn.function([z], [sn.logsumexp(z, axis=1), written], backend=backend)(rows):
        assert got.dtype == np.complex128
        np.testing.assert_allclose(got, want, rtol=1e-12)
