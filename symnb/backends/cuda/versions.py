"""Which CUDA versions work together: the driver runs CUDA up to its own version, and code
that NVRTC or cuda-python of a newer major version makes or calls needs a newer driver
(``version_problem``). The ``cuda12`` and ``cuda13`` extras install matching builds."""

from __future__ import annotations

#: the oldest Linux driver of each CUDA major version (NVIDIA's release notes)
MIN_DRIVER = {12: "525.60", 13: "580.65"}
#: what the extra of each CUDA major version installs (pyproject.toml), to uninstall
WHEELS = {
    13: "cuda-python cuda-bindings cuda-toolkit nvidia-cuda-nvrtc nvidia-cublas",
    12: "cuda-python cuda-bindings cuda-toolkit nvidia-cuda-nvrtc-cu12 nvidia-cublas-cu12",
}


def dotted(version) -> str:
    return ".".join(str(part) for part in version)


def driver_cuda(found: int) -> tuple[int, int]:
    """(major, minor) of ``cuDriverGetVersion``'s number (12040 is CUDA 12.4)."""
    return found // 1000, found % 1000 // 10


def bindings_version() -> tuple[int, ...] | None:
    """cuda-python's (cuda-bindings') version, None where it does not say."""
    try:
        import cuda.bindings as bindings
    except ImportError:
        return None
    found = getattr(bindings, "__version__", "")
    parts = [int(p) for p in found.split(".")[:2] if p.isdigit()]
    return tuple(parts) or None


def version_problem(driver, nvrtc, bindings) -> str | None:
    """Why NVRTC's (major, minor) ``nvrtc`` and cuda-python's ``bindings`` (None: not used)
    cannot run on a driver of CUDA version ``driver`` (the newest it runs), or None. Code
    from a newer NVRTC of the driver's major version runs (CUDA's minor-version
    compatibility, for machine code); a newer major version needs a newer driver."""
    needed = max(nvrtc[0], bindings[0] if bindings else 0)
    have = dotted(driver)
    if driver[0] < 12:
        return (
            f"the NVIDIA driver here runs CUDA {have}; symnb needs a CUDA 12 driver "
            f"({MIN_DRIVER[12]} or newer) or a CUDA 13 one ({MIN_DRIVER[13]} or newer): "
            "update the driver"
        )
    if driver[0] >= needed:
        return None
    bound = "" if bindings is None else f" and cuda-python {dotted(bindings)}"
    return (
        f"the NVIDIA driver here runs CUDA {have} at most, but NVRTC {dotted(nvrtc)}"
        f"{bound} are CUDA {needed}, which needs a driver of "
        f"{MIN_DRIVER.get(needed, 'a newer version')} or newer: install the CUDA "
        f"{driver[0]} builds of cuda-python, NVRTC and cuBLAS in place of them, "
        f"{replace(needed, driver[0])}, or update the driver"
    )


def replace(installed: int, wanted: int) -> str:
    """The commands that swap CUDA ``installed``'s wheels for CUDA ``wanted``'s: with both
    NVRTC wheels present, cuda.pathfinder may load the newer library for the older bindings."""
    wheels = WHEELS.get(installed, "cuda-python cuda-bindings cuda-toolkit")
    return f"pip uninstall -y {wheels} && pip install 'symnb[cuda{wanted}]'"
