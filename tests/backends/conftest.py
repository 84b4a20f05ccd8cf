"""The OpenCL context the dialect tests launch kernels in: the first device that can build one.

Without a usable device they skip with the reason, unless ``SYMNB_REQUIRE_OPENCL=1`` (set by
``.ci/run``, which installs an OpenCL runtime that builds on the machine), where they fail.
"""

import os

import pytest


@pytest.fixture(scope="session")
def opencl_context(tmp_path_factory):
    cl = pytest.importorskip("pyopencl", reason="pip install 'symnb[opencl]' (pyopencl, PoCL)")
    from symnb.backends.opencl.device import NoOpenCLDevice, usable_context

    os.environ.setdefault("POCL_CACHE_DIR", str(tmp_path_factory.mktemp("pocl")))
    try:
        return usable_context(cl)
    except NoOpenCLDevice as exc:
        if os.environ.get("SYMNB_REQUIRE_OPENCL") == "1":
            pytest.fail(str(exc))
        pytest.skip(str(exc))
