"""The machine line: CPU, cores, BLAS and its threads, compiler and library versions."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess

import numpy as np


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def blas_pools() -> list[dict]:
    """NumPy's BLAS (and any OpenMP pool) as threadpoolctl reports them."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return [{"api": "unknown", "note": "threadpoolctl not installed"}]
    return [
        {
            "api": pool.get("internal_api"),
            "version": pool.get("version"),
            "threads": pool.get("num_threads"),
            "kernels": pool.get("architecture"),
            "library": os.path.basename(pool.get("filepath", "")),
        }
        for pool in threadpool_info()
    ]


#: environment variables that choose a BLAS's kernels or threads for the whole process
_THREAD_VARIABLES = ("OPENBLAS_", "OMP_", "MKL_", "GOTO_", "BLIS_", "VECLIB_")


def thread_environment() -> dict:
    """The variables of this process's environment that set BLAS kernels and thread pools
    (``OPENBLAS_CORETYPE=Haswell`` runs AVX2 kernels on an AVX-512 CPU: half the float32
    product throughput, for NumPy's BLAS and so for symnb and PyTensor, not JAX or torch)."""
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith(_THREAD_VARIABLES)}


def compiler_version() -> str:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        return "none"
    done = subprocess.run([compiler, "--version"], capture_output=True, text=True, check=False)
    return (done.stdout.splitlines() or ["?"])[0]


def describe(peer_versions: dict) -> dict:
    """Everything the machine line shows, as data for the JSON file."""
    return {
        "cpu": cpu_model(),
        "cores": usable_cores(),
        "blas": blas_pools(),
        "environment": thread_environment(),
        "compiler": compiler_version(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "peers": peer_versions,
    }


def line(info: dict) -> str:
    """One line a reader can paste next to the numbers."""
    blas = ", ".join(
        f"{p.get('api')} {p.get('version') or ''}"
        + (f" ({p['kernels']} kernels)" if p.get("kernels") else "")
        + f" x{p.get('threads')}"
        for p in info["blas"]
    ).replace("  ", " ")
    peers = ", ".join(f"{name} {version}" for name, version in info["peers"].items())
    environment = " ".join(f"{k}={v}" for k, v in info.get("environment", {}).items())
    return (
        f"{info['cpu']}, {info['cores']} cores; BLAS: {blas or 'none found'}"
        + (f" (environment: {environment})" if environment else "")
        + "; "
        f"cc: {info['compiler']}; Python {info['python']}, NumPy {info['numpy']}; {peers}"
    )
