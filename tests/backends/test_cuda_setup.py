"""Starting backend "cuda" without a GPU: the driver is a stand-in that records calls and fails
where told (tests/backends/cuda_standin.py); NVRTC is the real one. Each setup failure is a
DeviceError naming the device and the fix; the driver's and NVRTC's versions are compared; the
context is made current in whichever thread calls; a kernel that faults is named under
``sn.config.cuda_debug_sync``; pycuda's context is popped at exit."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import symnb as sn
from symnb.backends.c.dialect import CDialect
from symnb.backends.cuda import nvrtc
from symnb.backends.cuda import runtime as cuda_runtime
from symnb.backends.cuda.linker import CUDALinker
from symnb.backends.cuda.runtime import CUDARuntime, cuda_problem
from symnb.backends.cuda.versions import version_problem
from symnb.backends.device.runtime import (
    DeviceArray,
    DeviceError,
    DeviceOutOfMemory,
    bucket_of,
    grid_of,
)
from symnb.backends.execute import RuntimeValueFailure
from symnb.backends.kernels.lowering import lower
from symnb.backends.schedule import gpu
from symnb.backends.schedule.base import DeviceFacts
from symnb.errors import CompileError
from tests.backends.cuda_standin import StandInDriver, install_pycuda, use

pytest.importorskip("cuda.bindings.nvrtc", reason="pip install 'symnb[cuda13]' for NVRTC")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def standin(monkeypatch, tmp_path):
    """``standin(**options)``: backend "cuda" starts on a StandInDriver made with them (and a
    compile directory of the test's own)."""
    monkeypatch.setattr(sn.config, "compiledir", str(tmp_path / "cache"))

    def start(**options):
        return use(monkeypatch, StandInDriver(**options))

    yield start
    cuda_runtime._runtime.cache_clear()


# -- versions -------------------------------------------------------------------------------------
def test_a_cuda_13_build_on_a_cuda_12_driver_is_told_to_install_cuda12():
    problem = version_problem((12, 4), (13, 5), (13, 4))
    assert "runs CUDA 12.4 at most" in problem and "NVRTC 13.5 and cuda-python 13.4" in problem
    assert "580.65 or newer" in problem and "pip install 'symnb[cuda12]'" in problem
    assert "pip uninstall -y cuda-python cuda-bindings cuda-toolkit nvidia-cuda-nvrtc " in problem
    assert version_problem((13, 0), (13, 5), (13, 4)) is None  # minor versions: compatible
    assert version_problem((12, 9), (12, 9), (12, 9)) is None
    assert version_problem((13, 1), (12, 9), (12, 9)) is None  # a newer driver runs older code
    assert "update the driver" in version_problem((11, 8), (12, 9), None)


def test_the_runtime_compares_the_drivers_version_with_nvrtcs(standin, monkeypatch):
    monkeypatch.setattr(nvrtc, "version", lambda: (13, 5))
    standin(version=12040)
    with pytest.raises(DeviceError) as info:
        cuda_runtime.cuda_runtime()
    message = str(info.value)
    assert "Stand-in H200 (CUDA device 0)" in message and "symnb[cuda12]" in message
    assert "runs CUDA 12.4" in message
    standin(version=13010)
    assert cuda_runtime.cuda_runtime().driver_version == (13, 1)


def test_compile_options_follow_nvrtcs_version():
    assert nvrtc.fast_compile_options(nvrtc_version=(12, 8)) == ()
    assert nvrtc.fast_compile_options(nvrtc_version=(12, 9)) == ("--Ofast-compile=min",)
    assert nvrtc.fast_compile_options("max", (13, 0)) == ("--Ofast-compile=max",)
    source = textwrap.dedent("""
        extern "C" __global__ void sn_kernel(float *x) { x[threadIdx.x] *= 2.0f; }
    """)
    assert b".entry sn_kernel" in nvrtc.compile_ptx(
        source, "compute_75", nvrtc.fast_compile_options()
    )


def test_a_gpu_newer_than_nvrtc_gets_ptx_for_the_newest_architecture_it_knows():
    known = (75, 80, 86, 89, 90, 100, 120)
    assert nvrtc.target(90, known) == ("sm_90", "CUBIN")
    assert nvrtc.target(130, known) == ("compute_120", "PTX")
    assert nvrtc.target(87, known) == ("compute_86", "PTX")
    fix = r"not sm_60: install the CUDA 12 build, pip install 'symnb\[cuda12\]'"
    with pytest.raises(
        nvrtc.ArchitectureTooOld, match=f"NVRTC 13.0 builds for sm_75 and newer, {fix}"
    ):
        nvrtc.target(60, known, (13, 0))
    with pytest.raises(nvrtc.ArchitectureTooOld, match="not sm_35: use backend 'c' or 'opencl'"):
        nvrtc.target(35, (50, 60), (12, 9))


def test_the_schedule_reads_the_devices_multiprocessors_and_limits(standin):
    standin()
    runtime = cuda_runtime.cuda_runtime()
    assert runtime.facts == DeviceFacts(max_group=1024, local_bytes=49152, compute_units=132)
    x = sn.vector("x", dtype="float32")
    kernel = lower(sn.exp(x).owner, CDialect()).kernel
    # a map launches 256-item groups, GROUPS_PER_UNIT per multiprocessor at most
    assert grid_of(kernel, (10**8,), 10**8, runtime.facts) == (132 * gpu.GROUPS_PER_UNIT, 256)


def test_the_runtime_loads_ptx_on_a_gpu_nvrtc_does_not_know(standin):
    newest = max(nvrtc.supported_archs())
    driver = standin(capability=(newest // 10 + 1, 0))
    x = sn.vector("x", dtype="float32")
    sn.function([x], sn.exp(x), backend="cuda")
    (code,) = driver.modules
    assert b".entry sn_kernel_0" in code and f".target sm_{newest}".encode() in code


def test_a_gpu_older_than_nvrtc_knows_is_a_device_error_naming_the_fix(standin):
    standin(capability=(3, 5))
    with pytest.raises(DeviceError, match=r"Stand-in H200 .*sm_35.*(symnb\[cuda12\]|'opencl')"):
        cuda_runtime.cuda_runtime()


# -- every setup failure is a DeviceError ---------------------------------------------------------
@pytest.mark.parametrize(
    "options,expected",
    [
        (dict(fail={"cuInit": "CUDA_ERROR_NO_DEVICE"}), "no CUDA GPU is visible.*CUDA_VISIBLE"),
        (dict(fail={"cuInit": "CUDA_ERROR_INSUFFICIENT_DRIVER"}), r"symnb\[cuda12\]"),
        (
            dict(fail={"cuInit": "CUDA_ERROR_NOT_INITIALIZED"}),
            "CUDA device 0: cuInit returned CUDA_ERROR_NOT_INITIALIZED; check that nvidia-smi",
        ),
        (dict(devices=0), "cuDeviceGet returned CUDA_ERROR_INVALID_DEVICE.*no such CUDA device"),
        (
            dict(fail={"cuDevicePrimaryCtxRetain": "CUDA_ERROR_DEVICE_UNAVAILABLE"}),
            "Stand-in H200.*exclusive-process.*nvidia-smi -c DEFAULT",
        ),
        (
            dict(fail={"cuDevicePrimaryCtxRetain": "CUDA_ERROR_OUT_OF_MEMORY"}),
            "Stand-in H200.*memory is full",
        ),
        (
            dict(fail={"cuCtxSetCurrent": "CUDA_ERROR_INVALID_CONTEXT"}),
            "Stand-in H200.*cuCtxSetCurrent returned CUDA_ERROR_INVALID_CONTEXT.*nvidia-smi",
        ),
        (
            dict(missing={"cuDevicePrimaryCtxRetain"}),
            r"Stand-in H200.*cuDevicePrimaryCtxRetain is not found.*older than cuda-python.*"
            r"symnb\[cuda12\]",
        ),
        (dict(missing={"cuDriverGetVersion"}), r"CUDA device 0.*older than cuda-python"),
    ],
)
def test_every_setup_failure_is_a_device_error_naming_the_device_and_fix(
    standin, options, expected
):
    standin(**options)
    x = sn.vector("x", dtype="float32")
    with pytest.raises(DeviceError, match=expected):
        sn.function([x], x * 2, backend="cuda")
    assert expected.split(".*")[0].replace("\\", "") in cuda_problem()  # the tests' skip reason


def test_no_libcuda_at_all_says_to_install_the_driver(standin, monkeypatch):
    driver = standin()

    def no_library(flags):
        raise RuntimeError(
            '"cuda" is an NVIDIA driver library and can only be found via system '
            "search. Ensure the NVIDIA display driver is installed."
        )

    monkeypatch.setattr(driver, "cuInit", no_library)
    with pytest.raises(DeviceError, match="no CUDA driver on this machine.*install NVIDIA's"):
        cuda_runtime.cuda_runtime()


def test_nvrtc_missing_is_a_device_error(standin, monkeypatch):
    standin()

    def missing():
        raise ImportError(f"compiling CUDA kernels needs NVRTC: {nvrtc.INSTALL}")

    monkeypatch.setattr(nvrtc, "version", missing)
    with pytest.raises(DeviceError, match=r"Stand-in H200.*needs NVRTC: pip install 'symnb\["):
        cuda_runtime.cuda_runtime()


def test_every_nvrtc_result_is_checked(monkeypatch):
    real = nvrtc.nvrtc()

    class Failing:
        def __getattr__(self, name):
            return getattr(real, name)

        def nvrtcGetPTXSize(self, program):  # noqa: N802
            return real.nvrtcResult.NVRTC_ERROR_INVALID_PROGRAM, 0

    monkeypatch.setattr(nvrtc, "nvrtc", Failing)
    source = 'extern "C" __global__ void sn_kernel(float *x) { x[0] = 1.0f; }'
    with pytest.raises(CompileError, match="nvrtcGetPTXSize failed: NVRTC_ERROR_INVALID_PROG"):
        nvrtc.compile_ptx(source)


# -- threads --------------------------------------------------------------------------------------
def test_calls_from_other_threads_make_the_context_current_there(standin):
    driver = standin()
    x = sn.vector("x", dtype="float32")
    f = sn.function([x], sn.exp(x) * 2, backend="cuda")
    made_in = threading.get_ident()
    with ThreadPoolExecutor(2) as pool:
        threads = list(
            pool.map(lambda _: (f(np.ones(5, "float32")), threading.get_ident())[1], range(4))
        )
        moved, mover = pool.submit(
            lambda: (f.linker.runtime.to_device(np.arange(3.0)).to_host(), threading.get_ident())
        ).result()
    np.testing.assert_array_equal(moved, np.arange(3.0))
    workers = set(threads) - {made_in}
    assert workers and workers <= driver.threads("cuLaunchKernel")
    # the copy may run on a worker the calls did not reach: it makes the context current too
    workers.add(mover)
    assert workers <= driver.threads("cuCtxSetCurrent")  # made current in each worker...
    assert driver.count("cuCtxSetCurrent") == 1 + len(workers)  # ...once
    assert isinstance(f.linker.runtime.to_device(np.ones(2)), DeviceArray)


# -- a kernel that faults ----------------------------------------------------------------------
def test_debug_sync_names_the_node_whose_kernel_faulted(standin, monkeypatch):
    x = sn.vector("x", dtype="float32")
    y = sn.exp(x)
    z = sn.log(y + 1)  # the faulting kernel: the second launch
    standin(fault_at_launch=1)
    f = sn.function([x], [z, sn.sum(x * x)], backend="cuda", optimize="none")
    with pytest.raises(DeviceError, match=r"ILLEGAL_ADDRESS.*cuda_debug_sync = True"):
        f(np.ones(3, "float32"))  # found by a later copy: no node to name
    monkeypatch.setattr(sn.config, "cuda_debug_sync", True)
    standin(fault_at_launch=1)
    f = sn.function([x], [z, sn.sum(x * x)], backend="cuda", optimize="none")
    with pytest.raises(DeviceError) as info:
        f(np.ones(3, "float32"))
    message = str(info.value)
    assert "cuCtxSynchronize after the launch returned CUDA_ERROR_ILLEGAL_ADDRESS" in message
    assert "test_cuda_setup.py" in message  # the user's line of the node


# -- out of memory ------------------------------------------------------------------------------
def test_out_of_memory_names_the_op_its_line_and_the_bytes_asked_for(standin):
    driver = standin()
    x = sn.vector("x", dtype="float32")
    outer = x[:, None] * x[None, :]
    f = sn.function([x], outer, backend="cuda")
    f(np.ones(4, "float32"))  # a block for the pool to hand back before asking again
    n = 3 << 16  # 144 GiB of float32, more than the stand-in's 16 GiB
    with pytest.raises(DeviceOutOfMemory) as info:
        f(np.ones(n, "float32"))
    message, block = str(info.value), bucket_of(n * n * 4)
    assert message.startswith("mul(") and "CUDA device Stand-in H200" in message
    assert f"allocate {n * n * 4:,} bytes (its pool's block: {block:,}; cuMemAlloc " in message
    assert "CUDA_ERROR_OUT_OF_MEMORY" in message and "use smaller batches" in message
    assert "test_cuda_setup.py" in message and "outer = x[:, None] * x[None, :]" in message
    assert driver.count("cuMemFree") >= 1  # the free blocks went back before it asked again


def test_sizes_no_int64_holds_are_refused_by_the_shared_device_code(standin):
    """As on OpenCL (test_opencl_backend.py): a fill too big to exist is NumPy's error on the
    alloc, as on backend "c"; a result too big to exist a DeviceOutOfMemory with its true byte
    count, the driver never asked. Before, the int64 product of the shape wrapped: 0 bytes
    (then a raw OverflowError in launch_args) or 206,158,430,208 bytes asked of cuMemAlloc."""
    driver = standin()
    n, m = sn.scalar("n", dtype="int64"), sn.scalar("m", dtype="int64")
    x = sn.vector("x", dtype="float32")
    fill = sn.exp(sn.alloc(x, n, m))
    outer = sn.alloc(x, n, 1) * sn.alloc(x, 1, m)
    f = sn.function([x, n, m], fill, backend="cuda")
    g = sn.function([x, n, m], outer, backend="cuda")
    for sizes in [(2**32, 2**32), (2**33, 2**31 + 3)]:
        args = (np.ones(1, "float32"), np.int64(sizes[0]), np.int64(sizes[1]))
        with pytest.raises(RuntimeValueFailure) as info:
            f(*args)
        assert str(info.value).startswith("alloc[") and "array is too big" in str(info.value)
        assert "fill = sn.exp(sn.alloc(x, n, m))" in str(info.value)
        asked = driver.count("cuMemAlloc")
        with pytest.raises(DeviceOutOfMemory) as info:
            g(*args)
        nbytes = sizes[0] * sizes[1] * 4
        assert info.value.nbytes == nbytes and driver.count("cuMemAlloc") == asked
        message = str(info.value)
        assert message.startswith("mul(") and "CUDA device Stand-in H200" in message
        assert f"allocate {nbytes:,} bytes (past the {2**63 - 1:,} bytes an array" in message
        assert "outer = sn.alloc(x, n, 1) * sn.alloc(x, 1, m)" in message
    assert g(np.ones(1, "float32"), 2, 3).shape == (2, 3)  # (the stand-in runs no kernel)


# -- pycuda ---------------------------------------------------------------------------------------
PYCUDA_PROGRAM = """
import numpy as np, symnb as sn
from symnb.backends.cuda import cublas
cublas.find_cublas = lambda loader=None: None
sn.config.cuda_launcher = "pycuda"
from symnb.backends.cuda.runtime import cuda_runtime
runtime = cuda_runtime()
print(runtime.device_name, runtime.arch)
print(runtime.to_device(np.arange(4.0)).to_host())
x = sn.vector("x", dtype="float32")
print(len(sn.function([x], sn.exp(x), backend="cuda").kernels))
"""


def test_pycuda_pops_its_context_at_exit(tmp_path):
    install_pycuda(tmp_path)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]),
        SYMNB_COMPILEDIR=str(tmp_path / "cache"),
        STANDIN_PYCUDA_REPORT="1",
    )
    done = subprocess.run(
        [sys.executable, "-c", PYCUDA_PROGRAM], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "Stand-in T4 (CUDA device 0, pycuda) sm_75" in done.stdout
    assert "[0. 1. 2. 3.]" in done.stdout
    assert "clean exit after init push alloc module" in done.stderr
    assert done.stderr.rstrip().endswith(" pop")


def test_pycuda_without_nvrtc_is_a_device_error(tmp_path, monkeypatch):
    from symnb.backends.cuda.pycuda_runtime import PyCUDARuntime

    install_pycuda(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))

    def missing():
        raise ImportError("compiling CUDA kernels needs NVRTC: pip install 'symnb[cuda12]'")

    monkeypatch.setattr(nvrtc, "version", missing)
    with pytest.raises(DeviceError, match=r"'pycuda'.*NVRTC compiles them.*symnb\[cuda12\]"):
        PyCUDARuntime(0)
    sys.modules.pop("pycuda.driver", None)
    sys.modules.pop("pycuda", None)


def test_pycuda_on_an_old_driver_is_told_which_extra(tmp_path, monkeypatch):
    from symnb.backends.cuda.pycuda_runtime import PyCUDARuntime

    install_pycuda(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("STANDIN_DRIVER_VERSION", "12020")
    monkeypatch.setattr(nvrtc, "version", lambda: (13, 0))
    try:
        with pytest.raises(DeviceError, match=r"pycuda.*CUDA 12.2 at most.*symnb\[cuda12\]"):
            PyCUDARuntime(0)
    finally:
        sys.modules.pop("pycuda.driver", None)
        sys.modules.pop("pycuda", None)


def test_the_runtime_is_made_with_the_standin(standin):
    runtime = CUDARuntime(0, cu=StandInDriver(name="Other GPU"))
    assert runtime.device_name == "Other GPU (CUDA device 0)" and runtime.arch == "sm_90"


def test_a_forked_child_is_told_to_spawn(standin, monkeypatch):
    standin()
    x = sn.vector("x", dtype="float32")
    f = sn.function([x], x * 2, backend="cuda")
    parent = os.getpid()
    monkeypatch.setattr(os, "getpid", lambda: parent + 1)
    with pytest.raises(DeviceError, match=f"CUDA was opened in process {parent}.*'spawn'"):
        f(np.ones(2, "float32"))


def test_a_cublas_failure_is_a_device_error_naming_the_node(standin, monkeypatch):
    from symnb.backends.cuda import cublas

    standin()
    x = sn.matrix("x", dtype="float32")
    W = sn.shared(np.ones((3, 2), "float32"), name="W")
    f = sn.function([x], x @ W, backend="cuda")

    def failing(runtime, kernel, arrays, out, address):
        cublas.CuBLAS.check(13, "cublasSgemmStridedBatched")  # CUBLAS_STATUS_EXECUTION_FAILED

    monkeypatch.setattr(cublas, "product", failing)
    with pytest.raises(
        DeviceError,
        match=r"Stand-in H200.*cublasSgemmStridedBatched returned "
        r"cuBLAS status 13\n  built at .*test_cuda_setup.py",
    ):
        f(np.ones((4, 3), "float32"))


def test_backend_cuda_runs_on_the_device_config_cuda_device_names(standin, monkeypatch):
    standin(devices=2)
    monkeypatch.setattr(sn.config, "cuda_device", 1)
    assert CUDALinker.make_runtime().ordinal == 1
    monkeypatch.setattr(sn.config, "cuda_device", 0)
    assert CUDALinker.make_runtime().ordinal == 0
    with pytest.raises(ValueError, match="cuda_device must be a device number"):
        sn.config.cuda_device = -1
