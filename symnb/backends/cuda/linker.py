"""Backend "cuda": the device linker (symnb/backends/device/linker.py) on the CUDA device
``sn.config.cuda_device`` (0 by default),
through NVIDIA's cuda-python (NVRTC for the kernels, the driver API for the rest)."""

from __future__ import annotations

from symnb.backends.cuda.runtime import cuda_runtime
from symnb.backends.device.linker import DeviceLinker
from symnb.config import config


class CUDALinker(DeviceLinker):
    name = "cuda"

    @classmethod
    def make_runtime(cls):
        return cuda_runtime(config.cuda_device)
