"""The OpenCL runtime the dialect tests launch kernels on: backend="opencl"'s own (the first
device that can build a kernel), so a kernel the op suite built there is not built again.

Without a usable device they skip with the reason, unless ``SYMNB_REQUIRE_OPENCL=1`` (set by
``.ci/run``, which installs an OpenCL runtime that builds on the machine), where they fail.
"""

import os

import pytest


@pytest.fixture(scope="session")
def opencl_runtime(tmp_path_factory):
    pytest.importorskip("pyopencl", reason="pip install 'symnb[opencl]' (pyopencl, PoCL)")
    from symnb.backends.device.runtime import DeviceError
    from symnb.backends.opencl.runtime import current_runtime

    os.environ.setdefault("POCL_CACHE_DIR", str(tmp_path_factory.mktemp("pocl")))
    try:
        return current_runtime()
    except DeviceError as exc:
        if os.environ.get("SYMNB_REQUIRE_OPENCL") == "1":
            pytest.fail(str(exc))
        pytest.skip(str(exc))
