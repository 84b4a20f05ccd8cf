"""Kernels whose types fix a small size leave out threads and streaming stores (less C to
compile), and compute the same as kernels of unknown size."""

from __future__ import annotations

import numpy as np

import symnb as sn
from symnb.backends.c.dialect import CDialect
from symnb.backends.kernels.lowering import lower


def _source(out):
    kernel = lower(out.owner, CDialect()).kernel
    return kernel, CDialect().render(kernel)


def test_a_small_fixed_size_has_no_threads_or_streaming_stores():
    x = sn.tensor("x", shape=(256, 512), dtype="float32")
    kernel, source = _source(sn.exp(x) * 2)
    assert kernel.size == 256 * 512
    assert "omp parallel" not in source and "sn_stream_copy" not in source


def test_an_unknown_or_large_size_keeps_both():
    for x in (sn.matrix("x", dtype="float32"), sn.tensor("x", shape=(4096, 4096))):
        kernel, source = _source(sn.exp(x) * 2)
        assert "omp parallel" in source and "sn_stream_copy" in source


def test_reductions_of_a_small_fixed_size_have_no_threads():
    x = sn.tensor("x", shape=(64, 10))
    out = sn.sum(x, axis=1)
    kernel = lower(out.owner, CDialect()).kernel
    assert kernel.size == 640
    assert "omp parallel" not in CDialect().render(kernel)


def test_fixed_and_unknown_sizes_compute_the_same():
    rng = np.random.default_rng(0)
    value = rng.standard_normal((300, 7))
    fixed, free = sn.tensor("x", shape=(300, 7)), sn.matrix("x")
    results = []
    for x in (fixed, free):
        f = sn.function([x], [sn.tanh(x) * 3 - 1, sn.max(sn.exp(x), axis=0)], backend="c")
        results.append(f(value))
    for got, want in zip(results[0], results[1]):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(results[0][0], np.tanh(value) * 3 - 1, rtol=1e-12)
