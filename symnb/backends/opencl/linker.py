"""Backend "opencl": the device linker (symnb/backends/device/linker.py) on the OpenCL
device ``sn.config.opencl_device`` chooses (by default the first that builds a kernel)."""

from __future__ import annotations

from symnb.backends.device.linker import DeviceLinker
from symnb.backends.opencl.runtime import current_runtime


class OpenCLLinker(DeviceLinker):
    name = "opencl"

    @classmethod
    def make_runtime(cls):
        return current_runtime()
