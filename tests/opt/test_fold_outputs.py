"""Constant folding of an op with several outputs keeps each output (found by mutation
testing: no test folded one, and folding every op as if it had one output went unseen)."""

import numpy as np

import symnb as sn
from tests.opt.util import assert_same_values


def test_an_op_with_two_outputs_folds_into_two_constants():
    a = np.array([[2.0, 1.0], [0.5, -3.0]])
    x = sn.scalar("x")
    sign, logdet = sn.slogdet(sn.constant(a))
    f = assert_same_values([x], [sign * x, logdet + x], [1.5], {"include": ["constant_folding"]})
    assert f.rewrites.counts().get("constant_fold", 0) >= 1
    want_sign, want_log = np.linalg.slogdet(a)
    np.testing.assert_allclose(f(1.5), [want_sign * 1.5, want_log + 1.5], rtol=1e-15)


def test_a_result_the_types_show_too_large_to_fold_is_not_computed_to_compile():
    """Folding drops a result of more than MAX_FOLDED_ELEMENTS elements: where the types
    show its size it is not computed (the (T, 1000, 1000) zeros of a gradient took their
    memory to compile, and again in each phase folding runs)."""
    import tracemalloc

    x = sn.tensor("x", shape=(2000, 2000), dtype="float64")  # 32 MB
    tracemalloc.start()
    try:
        f = sn.function([x], sn.zeros((2000, 2000)) + x, backend="py")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, f"compiling took {peak / 2**20:.0f} MB"
    assert "constant_fold" not in f.rewrites.counts()
    np.testing.assert_array_equal(f(np.ones((2000, 2000)))[:2, :2], np.ones((2, 2)))
