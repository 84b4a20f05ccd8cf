"""The CUDA C dialect: the shared renderer's GPU form with CUDA's names, for NVRTC.

Threads and blocks come from ``threadIdx``/``blockIdx``, row reductions meet in
``__shared__`` memory between ``__syncthreads()``, and the fixed-width types and the
INFINITY/NAN constants are declared here (NVRTC has no standard headers). The kernel is
``extern "C" sn_kernel(a, p0, ..., status)``: the launch ABI's arguments in device memory (a
reduction's also a scratch buffer before ``status``: ``device/runtime.py: launch_kernel``).
"""

from __future__ import annotations

from symnb.backends.render.base import Renderer
from symnb.backends.render.source import render
from symnb.backends.schedule import gpu

PREAMBLE = """typedef signed char int8_t; typedef short int16_t; typedef int int32_t;
typedef long long int64_t; typedef unsigned char uint8_t; typedef unsigned short uint16_t;
typedef unsigned int uint32_t; typedef unsigned long long uint64_t;
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fffffff)
"""


class CUDADialect(Renderer):
    """CUDA C++ as NVRTC compiles it; ``render`` returns one program with ``sn_kernel``."""

    name = "CUDA C"
    model = "grid"
    helper_qualifier = "static __device__ inline"
    space = ""
    global_id = "((int64_t)blockIdx.x * blockDim.x + threadIdx.x)"
    global_size = "((int64_t)gridDim.x * blockDim.x)"
    group_id, group_count, local_id = "blockIdx.x", "gridDim.x", "threadIdx.x"
    barrier = "__syncthreads()"

    def render(self, kernel, schedule=None) -> str:
        """The kernel's program as ``schedule`` lays it out (the GPU schedule's when None)."""
        return render(kernel, schedule or gpu.schedule(kernel, self), self)

    def preamble(self, *kernels) -> str:
        return PREAMBLE

    def entry_signature(self, nops: int) -> str:
        params = ", ".join(f"char *p{k}" for k in range(nops))
        return f'extern "C" __global__ void sn_kernel(const int64_t *a, {params}, int *status)'

    def local_array(self, ctype: str, name: str, size: str) -> str:
        return f"    __shared__ {ctype} {name}[{size}];"
