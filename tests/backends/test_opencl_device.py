"""The OpenCL device is the first that builds a kernel; when none does, the error says why for
each device and what to install (symnb/backends/opencl/device.py), on a stand-in pyopencl."""

import pytest

from symnb.backends.opencl import device as chooser


class FakeError(Exception):
    pass


def fake_cl(builds: dict):
    """A stand-in for pyopencl whose devices build or fail as ``builds`` says (name -> log)."""

    class Platform:
        version = "OpenCL 3.0 Fake 1.0 "
        name = "Fake Platform "

        def get_devices(self):
            return [Device(name) for name in builds]

    class Device:
        platform = Platform()

        def __init__(self, name):
            self.name = name

    class Program:
        def __init__(self, context, source):
            assert "sn_probe" in source
            self.device = context.devices[0]

        def build(self):
            log = builds[self.device.name]
            if log is not None:
                raise FakeError(f"clBuildProgram failed\n\nerror: {log}\nbuild failed")
            return self

    class Context:
        def __init__(self, devices):
            self.devices = devices

    class Module:
        Error = FakeError

    module = Module()
    module.Program, module.Context = Program, Context

    def get_platforms():
        return [Platform()]

    module.get_platforms = get_platforms
    return module


def test_the_first_device_that_builds_is_chosen():
    cl = fake_cl({"old-pocl": "unknown target CPU 'generic'", "new-pocl": None})
    assert chooser.usable_device(cl).name == "new-pocl"
    assert chooser.usable_context(cl).devices[0].name == "new-pocl"


def test_no_device_that_builds_names_each_and_the_fix():
    cl = fake_cl({"a": "unknown target CPU 'generic'", "b": "out of resources"})
    with pytest.raises(chooser.NoOpenCLDevice) as info:
        chooser.usable_device(cl)
    message = str(info.value)
    assert "a (OpenCL 3.0 Fake 1.0): error: unknown target CPU 'generic'" in message
    assert "b (OpenCL 3.0 Fake 1.0): error: out of resources" in message
    assert "pocl-opencl-icd" in message


def test_a_platform_that_lists_no_device_is_no_reinstall():
    """A driver that is installed but lists no device: installing PoCL again is no fix."""
    with pytest.raises(chooser.NoOpenCLDevice) as info:
        chooser.usable_device(fake_cl({}))
    message = str(info.value)
    assert "no OpenCL device found: the platform 'Fake Platform' lists no device" in message
    assert "POCL_CACHE_DIR" in message and "pip install" not in message


def test_an_icd_loader_without_any_platform_is_no_device():
    cl = fake_cl({})

    def no_platform():
        raise cl.Error("clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR")

    cl.get_platforms = no_platform
    with pytest.raises(chooser.NoOpenCLDevice, match="no OpenCL device found; pip install"):
        chooser.usable_device(cl)
