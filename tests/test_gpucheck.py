"""``python -m symnb.gpucheck``: SKIP and exit 0 without a GPU; on PoCL (backend "opencl", the
small sizes) every case agrees with backend "py" and its transfers are counted; on the
stand-in CUDA driver (kernels do not run: their outputs stay zero) the comparison reports
the difference instead of passing it."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from symnb import gpucheck
from symnb.backends.cuda import runtime as cuda_runtime
from tests.helpers import cuda_problem, opencl_problem

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_without_a_gpu_it_says_skip_and_exits_0():
    if cuda_problem() is None:
        pytest.skip("a CUDA GPU is present")
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "symnb.gpucheck"],
        env=env,
        text=True,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("SKIP cuda: no device to run on here (DeviceError: ")
    assert "gpucheck: done" in done.stdout


def test_an_unknown_backend_is_refused():
    with pytest.raises(SystemExit):
        gpucheck.main(["vulkan"])


@pytest.mark.skipif(opencl_problem() is not None, reason=f"no OpenCL device: {opencl_problem()}")
def test_every_case_agrees_with_py_on_pocl():
    lines = []
    status = gpucheck.run_check(["opencl"], gpucheck.SMALL, out=lines.append)
    rows = [line for line in lines if line.startswith("  ")]
    assert status == 0, "\n".join(lines)
    assert [row.split()[0] for row in rows] == [
        "fused",
        "reductions",
        "matmul",
        "MLP",
        "conv+pool",
        "scan",
    ]
    assert all(" ok (" in row for row in rows), "\n".join(lines)
    fused = rows[0]
    assert "a call: 3 uploads (59 KiB)" in fused  # x, y, z: 3 x 5000 float32


def test_on_the_standin_driver_wrong_values_are_reported(monkeypatch, tmp_path):
    from tests.backends.cuda_standin import StandInDriver, use

    monkeypatch.setattr(gpucheck.sn.config, "compiledir", str(tmp_path))
    driver = use(monkeypatch, StandInDriver())
    lines = []
    try:
        status = gpucheck.run_check(["cuda"], gpucheck.SMALL, out=lines.append)
    finally:
        cuda_runtime._runtime.cache_clear()
    assert status == 1
    assert lines[0].startswith("cuda: CUDA on Stand-in H200 (CUDA device 0), driver CUDA 13.0, ")
    assert lines[0].endswith(", sm_90, products: the tiled kernel")
    fused = next(line for line in lines if line.startswith("  fused map"))
    assert "DIFFERS" in fused and "a call: 3 uploads (59 KiB)" in fused, "\n".join(lines)
    assert len([line for line in lines if line.startswith("  ")]) == len(gpucheck.CASES)
    assert driver.count("cuLaunchKernel") > 0


def test_compare_and_counting():
    ok, error = gpucheck.compare([np.ones(3)], [np.ones(3) * (1 + 1e-4)])
    assert ok and error < 2e-4
    assert gpucheck.compare([np.zeros(3)], [np.ones(3)]) == (False, 1.0)
    assert gpucheck.compare([np.ones(2)], [np.ones(3)])[0] is False

    class Runtime:
        def alloc(self, nbytes):
            return bytearray(nbytes)

        def upload(self, array):
            return self.alloc(array.nbytes)

        def write(self, buffer, array):
            pass

        def download(self, buffer, nbytes):
            return np.zeros(nbytes, np.uint8)

        def read(self, buffer, nbytes):
            return self.download(buffer, nbytes)

    runtime = Runtime()
    with gpucheck.counting(runtime) as counts:
        runtime.upload(np.ones(4))
        runtime.alloc(16)
        runtime.download(None, 8)
        runtime.write(None, np.ones(2))  # into a pooled buffer: an upload too
        runtime.read(None, 4)  # queued: a download, counted once
    assert counts == {
        "upload": 2,
        "upload bytes": 48,
        "alloc": 1,
        "alloc bytes": 16,
        "download": 2,
        "download bytes": 12,
    }
    assert "upload" not in vars(runtime)  # restored
