"""``python -m symnb.backends.opencl``: every OpenCL device of this machine, numbered as
``sn.config.opencl_device = "P:D"`` reads them, each with whether it builds kernels, and the
one backend "opencl" runs on: the one ``sn.config.opencl_device`` (``SYMNB_FLAGS=
opencl_device=...``) selects, as ``opencl/runtime.py`` chooses it. Exit 1, saying why, when
there is none to run on: pyopencl or every device missing, a setting that names no device,
or a selected device that cannot build kernels."""

from __future__ import annotations

import sys

from symnb.config import config


def main() -> int:
    from symnb.backends.opencl.device import FIX, build_problem, numbered_devices
    from symnb.backends.opencl.launch import pyopencl
    from symnb.backends.opencl.runtime import DeviceError, opencl_runtime

    try:
        cl = pyopencl()
    except ImportError as exc:
        print(f"symnb: {exc}", file=sys.stderr)
        return 1
    devices = numbered_devices(cl)
    problems = {number: build_problem(cl, device) for number, _, device in devices}
    print(f'symnb: OpenCL devices ({len(devices)}; sn.config.opencl_device = "P:D" picks one):')
    for number, name, device in devices:
        problem = problems[number]
        builds = "builds kernels" if problem is None else f"does not build kernels: {problem}"
        print(f"  {number}  {name} ({device.platform.version.strip()}): {builds}")
    setting = f"sn.config.opencl_device = {config.opencl_device!r}"
    if not config.opencl_device:
        setting += " (the first device that builds kernels)"
    try:
        chosen = opencl_runtime(config.opencl_device).device
    except DeviceError as exc:
        print(f"symnb: {exc}", file=sys.stderr)  # (it names the setting and the devices)
        return 1
    number, name = next((n, m) for n, m, device in devices if device == chosen)
    if problems[number] is not None:
        print(
            f"symnb: {setting} selects {number} {name}, which does not build kernels "
            f"({problems[number]}); choose another device. {FIX}",
            file=sys.stderr,
        )
        return 1
    print(f'symnb: {setting}: backend "opencl" runs on {number} {name}')
    return 0


if __name__ == "__main__":
    sys.exit(main())
