"""Compiling CUDA C with NVRTC (NVIDIA's runtime compiler, from the ``cuda`` extra).

NVRTC needs no GPU and no driver: kernels compile to PTX for a virtual architecture on any
machine, which is how the tests check every kernel the op suite generates. Loading and
launching need the driver (``backend="cuda"``).
"""

from __future__ import annotations

from symnb.errors import CompileError, numbered

INSTALL = "pip install 'symnb[cuda]' (NVIDIA's cuda-python with the NVRTC wheel)"


def nvrtc():
    """The NVRTC bindings, or an ImportError saying what to install."""
    try:
        from cuda.bindings import nvrtc as bindings
    except ImportError as exc:
        raise ImportError(f"compiling CUDA kernels needs NVRTC: {INSTALL}") from exc
    try:
        bindings.nvrtcVersion()  # the bindings load libnvrtc on their first call
    except RuntimeError as exc:  # cuda.pathfinder's DynamicLibNotFoundError
        raise ImportError(
            f"compiling CUDA kernels needs NVRTC's library ({exc}): {INSTALL}"
        ) from exc
    return bindings


def compile_ptx(source: str, arch: str = "compute_75", options: tuple[str, ...] = ()) -> bytes:
    """PTX of ``source`` for the virtual architecture ``arch``; CompileError with NVRTC's log
    and the numbered source when it does not compile. ``options`` are more NVRTC options
    (tests/backends/test_suite_kernels.py passes ``--Ofast-compile``)."""
    return _compile(source, arch, "PTX", options)


def compile_cubin(source: str, arch: str) -> bytes:
    """Machine code of ``source`` for the real architecture ``arch`` (``sm_90``): what the
    driver loads without JIT-compiling PTX, which an older driver may not read."""
    return _compile(source, arch, "CUBIN")


def _compile(source: str, arch: str, kind: str, more: tuple[str, ...] = ()) -> bytes:
    api = nvrtc()
    _, program = api.nvrtcCreateProgram(source.encode(), b"symnb.cu", 0, [], [])
    try:
        options = [f"--gpu-architecture={arch}".encode(), *(o.encode() for o in more)]
        (result,) = api.nvrtcCompileProgram(program, len(options), options)
        if result != api.nvrtcResult.NVRTC_SUCCESS:
            raise CompileError(
                f"NVRTC failed on a kernel for {arch} {' '.join(more)}\n"
                f"log:\n{_log(api, program)}\n"
                f"source:\n{numbered(source)}"
            )
        _, size = getattr(api, f"nvrtcGet{kind}Size")(program)
        code = b" " * size
        getattr(api, f"nvrtcGet{kind}")(program, code)
        return code
    finally:
        api.nvrtcDestroyProgram(program)


def _log(api, program) -> str:
    _, size = api.nvrtcGetProgramLogSize(program)
    log = b" " * size
    api.nvrtcGetProgramLog(program, log)
    return log.decode(errors="replace").strip()
