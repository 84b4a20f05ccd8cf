"""OpenCL: the kernel IR rendered as OpenCL C (dialect.py) and launched with pyopencl
(launch.py). Elementwise kernels only so far; ``backend="opencl"`` (a linker with buffers kept
on the device) is not built yet."""
