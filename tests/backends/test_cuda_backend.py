"""backend="cuda": without a driver the function says what is missing; with one (a GPU
machine) a fused kernel, a reduction and a row kernel run like NumPy and shared values stay on
the device. The NVRTC compile of every kernel the op suite generates is in
test_suite_kernels.py."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from symnb.backends.device.runtime import DeviceArray, DeviceError
from tests.helpers import cuda_problem


def test_without_a_driver_the_error_names_what_is_missing():
    problem = cuda_problem()
    if problem is None:
        pytest.skip("a CUDA driver and GPU are present")
    with pytest.raises(DeviceError, match="cuda") as info:
        x = sn.vector("x")
        sn.function([x], x * 2, backend="cuda")
    assert "driver" in str(info.value) or "cuda-python" in str(info.value)


@pytest.mark.skipif(cuda_problem() is not None, reason=f"no CUDA launch: {cuda_problem()}")
def test_kernels_run_on_the_gpu_like_numpy():
    x, y = sn.matrix("x", dtype="float32"), sn.vector("y", dtype="int64")
    W = sn.shared(np.ones((5, 3), "float32"), name="W")
    out = [sn.exp(x) * 2 - x, sn.sum(x * x, axis=0), sn.softmax(x, axis=1)]
    loss = sn.mean(sn.crossentropy(sn.softmax(x @ W, axis=1), y))
    f = sn.function([x, y], [*out, loss], updates={W: W * 0.5}, backend="cuda")
    xv = np.random.default_rng(0).standard_normal((4, 5)).astype("float32")
    e = np.exp(xv - xv.max(1, keepdims=True))
    got = f(xv, np.array([0, 1, 2, 0]))
    np.testing.assert_allclose(got[0], np.exp(xv) * 2 - xv, rtol=1e-5)
    np.testing.assert_allclose(got[1], np.sum(xv * xv, axis=0), rtol=1e-5)
    np.testing.assert_allclose(got[2], e / e.sum(1, keepdims=True), rtol=1e-5)
    assert isinstance(W.current_value(), DeviceArray)
    np.testing.assert_allclose(W.get_value(), 0.5)
