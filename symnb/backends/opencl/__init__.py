"""OpenCL: the kernel description rendered as OpenCL C (dialect.py), built and run through
pyopencl (runtime.py: the device runtime interface of symnb/backends/device/runtime.py) on the
device ``sn.config.opencl_device`` chooses (device.py: by default the first that builds a
kernel); ``backend="opencl"`` is the device linker on it (linker.py), and launch.py runs single
kernel descriptions (the tests' suite of kernels)."""
