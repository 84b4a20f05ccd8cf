"""Choosing the OpenCL device: the first one that can build a kernel, not merely the first one
listed.

A device can be listed and still unable to build: PoCL 3.0 (the build pip's
``pocl-binary-distribution`` ships) names an unknown host CPU "generic" and then rejects it
("unknown target CPU 'generic'"), as on AMD Zen 5. So each candidate builds a one-line probe
program once per process; the first that builds is used, and when none does the error lists
every device with the first line of its build log and says what to install.
"""

from __future__ import annotations

import functools

PROBE = "__kernel void sn_probe(__global float *a) { a[get_global_id(0)] *= 2.0f; }"
FIX = (
    "pip's PoCL 3.0 cannot build for a CPU its LLVM does not know (e.g. AMD Zen 5); install "
    "a newer OpenCL runtime, such as Debian's pocl-opencl-icd (apt-get install "
    "pocl-opencl-icd), and it is found beside pip's"
)


class NoOpenCLDevice(RuntimeError):
    """No OpenCL device of this machine can build a kernel; the message says why for each."""


def candidates(cl) -> list:
    """Every device of every platform, in the order the ICD loader lists them."""
    found = []
    try:
        platforms = cl.get_platforms()
    except cl.Error:  # an ICD loader with no platform installed (PLATFORM_NOT_FOUND_KHR)
        return found
    for platform in platforms:
        try:
            found += platform.get_devices()
        except cl.Error:  # a platform with no device of any type
            continue
    return found


def numbered_devices(cl) -> list[tuple[str, str, object]]:
    """Every device as ("P:D", "platform / device" name, device), P and D numbered as
    ``sn.config.opencl_device = "P:D"`` reads them (a platform with no device has none)."""
    try:
        platforms = cl.get_platforms()
    except cl.Error:  # an ICD loader with no platform installed (PLATFORM_NOT_FOUND_KHR)
        return []
    found = []
    for p, platform in enumerate(platforms):
        try:
            devices = platform.get_devices()
        except cl.Error:  # a platform with no device of any type
            continue
        for d, device in enumerate(devices):
            found.append((f"{p}:{d}", f"{platform.name.strip()} / {device.name.strip()}", device))
    return found


def build_problem(cl, device) -> str | None:
    """None when ``device`` builds the probe program; else the first line of why not."""
    try:
        cl.Program(cl.Context(devices=[device]), PROBE).build()
    except cl.Error as exc:
        lines = [line for line in str(exc).splitlines() if "error" in line.lower()]
        return (lines[-1] if lines else str(exc).splitlines()[0]).strip()
    return None


@functools.cache
def usable_device(cl):
    """The first device that builds the probe (once per process), or NoOpenCLDevice."""
    problems = []
    for device in candidates(cl):
        problem = build_problem(cl, device)
        if problem is None:
            return device
        problems.append(f"{device.name} ({device.platform.version.strip()}): {problem}")
    if not problems:
        raise NoOpenCLDevice(_no_device(cl))
    raise NoOpenCLDevice(
        "no OpenCL device can build kernels:\n  " + "\n  ".join(problems) + f"\n{FIX}"
    )


def _no_device(cl) -> str:
    """Why no device is listed: no platform (install one), or platforms that list none (a
    driver that is installed but found nothing it runs on: installing it again is no fix)."""
    try:
        platforms = [p.name.strip() for p in cl.get_platforms()]
    except cl.Error:
        platforms = []
    if not platforms:
        return "no OpenCL device found; pip install 'symnb[opencl]' (PoCL)"
    many = len(platforms) > 1
    return (
        f"no OpenCL device found: the platform{'s' if many else ''} "
        + ", ".join(repr(p) for p in platforms)
        + (" list" if many else " lists")
        + " no device. The driver is installed but found no device to run on; PoCL "
        "also lists none when it cannot write its cache ($POCL_CACHE_DIR, else "
        "$XDG_CACHE_HOME/pocl or ~/.cache/pocl): check those, or run with POCL_DEBUG=all to "
        "see why"
    )


def usable_context(cl):
    """A context on ``usable_device``."""
    return cl.Context(devices=[usable_device(cl)])
