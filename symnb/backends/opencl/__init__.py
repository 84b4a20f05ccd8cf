"""OpenCL: the kernel description rendered as OpenCL C (dialect.py), launched with pyopencl
(launch.py) on the first device that can build a kernel (device.py). Every kernel kind renders
(elementwise, reductions, row kernels); ``backend="opencl"`` (a linker with buffers kept on
the device) is not built yet."""
