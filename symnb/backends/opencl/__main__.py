"""``python -m symnb.backends.opencl``: which OpenCL device symnb would use; exit 1 when none
can build a kernel (the message says why for each device and what to install)."""

import sys

from symnb.backends.opencl.device import NoOpenCLDevice, usable_device
from symnb.backends.opencl.launch import pyopencl

try:
    chosen = usable_device(pyopencl())
except (ImportError, NoOpenCLDevice) as exc:
    print(f"symnb: {exc}", file=sys.stderr)
    sys.exit(1)
print(f"symnb: OpenCL kernels build on {chosen.name} ({chosen.platform.version.strip()})")
