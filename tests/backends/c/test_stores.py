"""Streaming (non-temporal) stores in flat elementwise kernels with outputs of 16 MiB or more:
the same values as NumPy at every alignment, length and dtype, and only in elementwise kernels.
"""

import numpy as np
import pytest

import symnb as sn
from symnb.backends.c import stores
from symnb.backends.execute import ffi, kernel_function
from symnb.backends.schedule import cpu

STREAMED = cpu.STREAM_MIN_BYTES


def function(build, dtype, backend="c"):
    xs = [sn.vector(k, dtype=dtype) for k in "xy"]
    return sn.function(xs, build(*xs), backend=backend)


def close(got, want):
    """Vector exp (libmvec) and NumPy's differ by a few ulp (docs/c_backend.md)."""
    np.testing.assert_allclose(got, want, rtol=4e-7)


def call_into(f, out: np.ndarray, *arrays) -> None:
    """Run f's only kernel on ``arrays`` with ``out`` as the output buffer (any alignment)."""
    operands = (*arrays, out)
    args = [
        1,
        out.size,
        *(a.strides[0] for a in operands),
    ]  # the launch ABI (symnb/backends/render/runtime.py)
    ptrs = [ffi.cast("char *", a.ctypes.data) for a in operands]
    fn = kernel_function(f.linker.steps[0].kernel)
    assert fn(ffi.new("int64_t[]", args), ffi.new("char *[]", ptrs)) == 0


@pytest.mark.parametrize(
    "name, dtype, build",
    [
        ("axpy", "float64", lambda x, y: 2 * x + 3 * y - x * y),
        ("exp", "float32", lambda x, y: sn.exp(-x * x) + y),
        ("wrap", "int8", lambda x, y: x * y + 1),
    ],
)
@pytest.mark.parametrize("offset", [0, 1, 5])
def test_large_outputs_match_numpy_at_any_alignment(name, dtype, build, offset):
    itemsize = np.dtype(dtype).itemsize
    n = STREAMED // itemsize + 77  # a tail shorter than a block after the aligned part
    rng = np.random.default_rng(offset)
    x = rng.integers(-3, 4, n).astype(dtype) if dtype == "int8" else rng.random(n, dtype=dtype)
    y = rng.integers(-3, 4, n).astype(dtype) if dtype == "int8" else rng.random(n, dtype=dtype)
    f = function(build, dtype)
    want = function(build, dtype, "py")(x, y)
    same = np.testing.assert_array_equal if "exp" not in name else close
    same(f(x, y), want)
    buffer = np.full(n + 8, 99, dtype)
    out = buffer[offset : offset + n]  # head elements before the first 64-byte line
    call_into(f, out, x, y)
    same(out, want)
    assert (buffer[:offset] == 99).all() and (buffer[offset + n :] == 99).all()


@pytest.mark.parametrize("offset", [0, 3])
def test_w1b_four_inputs_on_two_threads(offset):
    """The staging buffer is written as floats and streamed out as vector lines: a line type
    without may_alias let GCC -O3 read the buffer before the values were stored (one line in
    eight came out wrong); -O2 happened to keep the order, so the source is checked too."""
    # on threads, and at least STREAM_MIN_BYTES of float32 output: streamed
    n = max(cpu.PARALLEL_MIN, cpu.STREAM_MIN_BYTES // 4) + 77
    arrays = [np.random.default_rng(k).random(n, dtype=np.float32) for k in range(4)]
    xs = [sn.vector(k, dtype="float32") for k in "xyzw"]
    f = sn.function(xs, 2 * xs[0] + 3 * xs[1] - xs[2] * xs[3], backend="c")
    x, y, z, w = arrays
    want = 2 * x + 3 * y - z * w
    np.testing.assert_array_equal(f(*arrays), want)
    assert "vector_size(64), __may_alias__" in stores.STREAM_COPY
    buffer = np.zeros(n + 8, np.float32)
    out = buffer[offset : offset + n]
    call_into(f, out, *arrays)
    np.testing.assert_array_equal(out, want)


def test_small_outputs_keep_normal_stores_and_the_same_values():
    x = np.arange(1000.0)
    f = function(lambda a, b: a * b + 1, "float64")
    np.testing.assert_array_equal(f(x, x), x * x + 1)
    assert f"{STREAMED}" in f.kernels[0].source  # the size test is in the kernel


def test_only_elementwise_kernels_carry_the_streaming_copy():
    x = sn.matrix("x")
    f = sn.function([x], [sn.exp(x) + 1, sn.max(x, axis=1)], backend="c")
    streams = {k.ops: "sn_flat_stream" in k.source for k in f.kernels if k.kind == "kernel"}
    assert streams == {"composite[exp+add]": True, "max[axis=(1,), keepdims=False]": False}
