"""backend="cuda"'s pieces that need no GPU: the cuBLAS call's arguments (emulated in NumPy
as cuBLAS would read memory), finding cuBLAS, choosing the launcher, the pycuda runtime's
calls against a stand-in for ``pycuda.driver``, and the tiled product kernel compiling with
NVRTC. None of this shows that cuBLAS or pycuda run on hardware."""

from __future__ import annotations

import types

import numpy as np
import pytest

import symnb as sn
from symnb.backends.cuda import cublas
from symnb.backends.cuda.cublas import OP_N, gemm_call, plain_product
from symnb.backends.cuda.dialect import CUDADialect
from symnb.backends.cuda.runtime import LAUNCHERS, choose_launcher
from symnb.backends.device.runtime import DeviceError, DeviceOutOfMemory
from symnb.backends.kernels.lowering import lower


def stored(array, op, rows, cols, ld, stride, batch):
    """op(the matrix cuBLAS reads from ``array``'s memory): column-major, (rows x cols) for
    op N and (cols x rows) for op T, with leading dimension ``ld``."""
    r, c = (rows, cols) if op == OP_N else (cols, rows)
    size = array.itemsize
    matrix = np.lib.stride_tricks.as_strided(array, (batch, r, c), (stride * size, size, ld * size))
    return matrix if op == OP_N else matrix.transpose(0, 2, 1)


def emulate(call, x, y) -> np.ndarray:
    """What one ``?gemmStridedBatched`` with ``call`` computes from x's and y's memory, read
    back row-major (the column-major (n x m) result is the row-major (m x n) one)."""
    a = stored(y, call.op_a, call.m, call.k, call.lda, call.stride_a, call.batch)
    b = stored(x, call.op_b, call.k, call.n, call.ldb, call.stride_b, call.batch)
    return (a @ b).transpose(0, 2, 1)


def layouts(rng):
    """(x, y) pairs: row-major, transposed views, a stack, a broadcast stack."""
    a = rng.standard_normal((5, 7))
    b = rng.standard_normal((7, 3))
    s = rng.standard_normal((4, 5, 7))
    t = rng.standard_normal((4, 7, 3))
    return [
        (a, b),
        (np.asfortranarray(a), b),
        (a, np.asfortranarray(b)),
        (rng.standard_normal((7, 5)).T, rng.standard_normal((3, 7)).T),
        (s, t),
        (a, t),
        (s, b),
        (a[:1], b),
        (a[:, :1], b[:1]),
    ]


def test_gemm_arguments_compute_the_product_as_cublas_reads_memory(rng):
    for x, y in layouts(rng):
        want = np.matmul(x, y)
        out = np.empty(want.shape)
        call = gemm_call(x, y, out)
        assert call is not None, (x.shape, x.strides, y.strides)
        assert call.ldc == want.shape[-1] and call.batch == (want.shape[0] if want.ndim == 3 else 1)
        got = emulate(call, x, y)
        np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-12)


def test_layouts_cublas_cannot_take_are_left_to_the_kernel(rng):
    a, b = rng.standard_normal((6, 8)), rng.standard_normal((8, 3))
    out = np.empty((6, 3))
    assert gemm_call(a[:, ::2], b[::2], out) is None  # no unit stride
    assert gemm_call(a, b, np.empty((3, 6)).T) is None  # the output must be C-ordered
    deep = rng.standard_normal((2, 2, 6, 8))
    assert gemm_call(deep, b, np.empty((2, 2, 6, 3))) is None  # two batch axes
    assert gemm_call(a[:, 1:], b[1:], out) is not None  # a leading dimension past the row


def test_only_a_plain_product_goes_to_cublas():
    x, y = sn.matrix("x", dtype="float32"), sn.matrix("y", dtype="float32")
    assert plain_product(lower((x @ y).owner, CUDADialect()).kernel)
    assert not plain_product(lower(sn.exp(x).owner, CUDADialect()).kernel)


def test_finding_cublas_asks_the_loader_nvrtc_uses():
    def missing(name):
        raise RuntimeError(f"{name} not found")

    assert cublas.find_cublas(missing) is None
    found = cublas.find_cublas(lambda name: types.SimpleNamespace(abs_path=f"/lib/lib{name}.so"))
    assert found == "/lib/libcublas.so"


def test_the_launcher_is_the_first_installed_or_the_one_chosen():
    assert choose_launcher("", lambda name: True) == "cuda-python"
    assert choose_launcher("", lambda name: name == "pycuda") == "pycuda"
    assert choose_launcher("", lambda name: False) == "cuda-python"  # its error says why
    assert choose_launcher("pycuda", lambda name: False) == "pycuda"
    with pytest.raises(DeviceError, match="cuda_launcher = 'cupy'.*cuda-python, pycuda"):
        choose_launcher("cupy", lambda name: True)
    assert LAUNCHERS == ("cuda-python", "pycuda")


class FakeDriver(types.SimpleNamespace):
    """Records what the pycuda runtime asks of ``pycuda.driver``."""

    class Error(Exception):
        pass

    class MemoryError(Exception):
        pass

    def __init__(self):
        super().__init__(calls=[], memory={})
        driver = self

        class Device:
            def __init__(self, ordinal):
                driver.calls.append(("Device", ordinal))

            def name(self):
                return "Fake GPU"

            def compute_capability(self):
                return (7, 5)

            def retain_primary_context(self):
                return types.SimpleNamespace(
                    push=lambda: driver.calls.append(("push",)),
                    pop=lambda: driver.calls.append(("pop",)),
                )

        self.Device = Device
        self.Context = types.SimpleNamespace(synchronize=lambda: self.calls.append(("sync",)))

    def init(self):
        self.calls.append(("init",))

    def get_driver_version(self):
        return 13000

    def module_from_buffer(self, cubin):
        self.calls.append(("module", cubin[:4]))
        return types.SimpleNamespace(get_function=lambda name: ("function", name))

    def mem_alloc(self, nbytes):
        if nbytes > 1 << 30:
            raise self.MemoryError("out of memory")
        buffer = object()
        self.memory[id(buffer)] = np.zeros(nbytes, np.uint8)
        return buffer

    def memcpy_htod(self, buffer, array):
        self.memory[id(buffer)][: array.nbytes] = array.view(np.uint8).ravel()

    def memcpy_dtoh(self, host, buffer):
        host[:] = self.memory[id(buffer)][: host.nbytes]


def test_pycuda_runtime_packs_its_calls_like_pycuda_takes_them():
    from symnb.backends.cuda.pycuda_runtime import PyCUDARuntime

    pytest.importorskip("cuda.bindings.nvrtc", reason="pip install 'symnb[cuda]' for NVRTC")
    drv = FakeDriver()
    runtime = PyCUDARuntime(0, drv=drv)
    assert runtime.arch == "sm_75" and "Fake GPU" in runtime.device_name
    array = runtime.to_device(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(array.to_host(), np.arange(6.0).reshape(2, 3))
    x = sn.matrix("x", dtype="float32")
    source = CUDADialect().render(lower(sn.exp(x).owner, CUDADialect()).kernel)
    (kernel,) = runtime.build(source, ["sn_kernel"])
    assert kernel == ("function", "sn_kernel") and ("module", b"\x7fELF") in drv.calls
    launched = []
    runtime.launch(lambda *args, **sizes: launched.append((args, sizes)), 3, 64, ["a", "b"])
    assert launched == [(("a", "b"), {"block": (64, 1, 1), "grid": (3, 1, 1)})]
    with pytest.raises(DeviceOutOfMemory, match="Fake GPU.*could not allocate 2,147,483,648"):
        runtime.alloc(1 << 31)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_tiled_products_compile_with_nvrtc(dtype):
    pytest.importorskip("cuda.bindings.nvrtc", reason="pip install 'symnb[cuda]' for NVRTC")
    from symnb.backends.cuda.nvrtc import compile_ptx

    s = sn.tensor("s", shape=(None, None, None), dtype=dtype)
    y = sn.matrix("y", dtype=dtype)
    source = CUDADialect().render(lower((s @ y).owner, CUDADialect()).kernel)
    assert "__shared__" in source and "__syncthreads()" in source
    for arch in ("compute_75", "compute_90"):
        assert b".entry sn_kernel" in compile_ptx(source, arch)


def test_pycuda_runtime_pushes_its_context_once_in_each_thread():
    import threading

    from symnb.backends.cuda.pycuda_runtime import PyCUDARuntime

    pytest.importorskip("cuda.bindings.nvrtc", reason="pip install 'symnb[cuda]' for NVRTC")
    drv = FakeDriver()
    runtime = PyCUDARuntime(0, drv=drv)
    runtime.alloc(8)
    worker = threading.Thread(target=lambda: [runtime.alloc(8), runtime.synchronize()])
    worker.start()
    worker.join()
    assert drv.calls.count(("push",)) == 2  # the first thread's, then the worker's
    runtime.close()
    assert drv.calls[-1] == ("pop",)
