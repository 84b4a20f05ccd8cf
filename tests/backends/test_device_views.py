"""Slices, concatenations and reshapes to sizes given as inputs run on the device (plan
``Layout`` steps, symnb/backends/device/layouts.py): a view of the source or copies within
the device at byte offsets, never a trip through the host. On PoCL (backend "opencl") and
backend "cuda" on the stand-in driver (test_cuda_residency.py), each equals backend "py" on
random inputs of several shapes and dtypes, and those the device can express run there (no
NumPy step of theirs runs); the others (a reversed slice, pieces of other dtypes) run their
reference and still equal "py"."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from symnb.backends.device import execute as device_execute
from symnb.backends.device import layouts
from symnb.backends.device.runtime import DeviceArray
from symnb.backends.plan import Layout
from tests.helpers import opencl_problem

try:  # backend "cuda" on a stand-in driver (skipped without cuda-python's enums)
    from tests.backends.test_cuda_residency import stand_in  # noqa: F401 - a fixture
except pytest.skip.Exception:
    stand_in = None

pytestmark = pytest.mark.skipif(opencl_problem() is not None, reason=str(opencl_problem()))


@pytest.fixture(params=["opencl", "cuda"], name="backend")
def device_backend(request):
    """Backend "opencl" on PoCL, then "cuda" on the stand-in driver (test_device_pad_pool.py
    imports it too; a module using it imports ``stand_in`` as well)."""
    if request.param == "cuda":
        if stand_in is None:
            pytest.skip("no cuda-python for the stand-in driver")
        request.getfixturevalue("stand_in")
    return request.param


class HostRuns(list):
    """The nodes of layout steps (``fallbacks``) whose NumPy reference ran on the host."""

    def __init__(self):
        super().__init__()
        self.fallbacks: set = set()


@pytest.fixture
def on_host(monkeypatch) -> HostRuns:
    """The layout steps of device arrays whose NumPy reference runs (on the host) from now
    on."""
    ran = HostRuns()
    run_host = device_execute.run_host

    def spy(call, step, slots):
        if step in ran.fallbacks and any(isinstance(slots[i], DeviceArray) for i in step.ins):
            ran.append(step.node)  # (a layout of host values, a shape's, runs there)
        return run_host(call, step, slots)

    monkeypatch.setattr(device_execute, "run_host", spy)
    return ran


def layout_steps(f) -> list[Layout]:
    return [s for s in f.linker.plan.steps if isinstance(s, Layout)]


def check(inputs, output, args, backend, on_host, device=True):
    """``output`` of ``inputs`` on ``backend`` equals backend "py" (twice: the second call
    reuses what the first one built); with ``device``, no layout step ran on the host."""
    f = sn.function(inputs, output, backend=backend)
    reference = sn.function(inputs, output, backend="py")
    steps = layout_steps(f)
    assert steps, f.linker.plan
    on_host.fallbacks.update(s.fallback for s in steps)
    want = np.asarray(reference(*args))
    for _ in range(2):
        got = np.asarray(f(*args))
        assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
        np.testing.assert_array_equal(got, want)
    if device:
        assert not on_host, on_host
    return f


def _array(rng, shape, dtype):
    return (rng.normal(size=shape) * 10).astype(dtype)


# -- slices --------------------------------------------------------------------------------------
SLICES = {
    "[:n]": (lambda x, a, b: x[:a], True),
    "[:-1]": (lambda x, a, b: x[:-1], True),
    "[1:]": (lambda x, a, b: x[1:], True),
    "[a:b]": (lambda x, a, b: x[a:b], True),
    "[a:b:2]": (lambda x, a, b: x[a:b:2], True),
    "[a]": (lambda x, a, b: x[a], True),
    "[1:-1, ::2]": (lambda x, a, b: x[1:-1, ::2], True),
    "[:, 1]": (lambda x, a, b: x[:, 1], True),
    "[None, -2:, a:]": (lambda x, a, b: x[None, -2:, a:], True),
    "[..., 0]": (lambda x, a, b: x[..., 0], True),
    "[3:1] (empty)": (lambda x, a, b: x[3:1], True),
    "[::-1] (the host)": (lambda x, a, b: x[::-1], False),
}
BOUNDS = [(2, 4), (-3, -1), (0, 100), (-100, 1), (3, 3), (1, 0)]


@pytest.mark.parametrize("case", SLICES)
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_slices_equal_backend_py(case, dtype, backend, on_host, rng):
    fn, device = SLICES[case]
    x = sn.tensor("x", shape=(None, None, None), dtype=dtype)
    a, b = sn.scalar("a", dtype="int64"), sn.scalar("b", dtype="int64")
    out = fn(x * 2, a, b) * 3  # made by a kernel, read by one: the slice between them
    for shape in [(5, 4, 3), (1, 3, 2), (6, 2, 1)]:
        for lo, hi in BOUNDS:
            if case == "[a]":
                lo = max(-shape[0], min(lo, shape[0] - 1))  # (out of range: a test below)
            args = [_array(rng, shape, dtype), np.int64(lo), np.int64(hi)]
            check([x, a, b], out, args, backend, on_host, device)


def test_an_index_out_of_range_raises_the_references_error(backend, rng):
    x = sn.tensor("x", shape=(None, 2), dtype="float32")
    a = sn.scalar("a", dtype="int64")
    f = sn.function([x, a], (x * 2)[a] * 3, backend=backend)
    assert layout_steps(f)
    with pytest.raises(Exception, match="out of bounds"):
        f(np.ones((3, 2), "float32"), np.int64(3))
    np.testing.assert_array_equal(f(np.ones((3, 2), "float32"), np.int64(-3)), [6, 6])


def test_a_slice_at_the_start_is_a_view_and_one_past_it_a_copy(backend, on_host, rng):
    """``x[:n]`` reads its source's buffer; ``x[1:]`` is one copy within the device."""
    x = sn.tensor("x", shape=(None, 3), dtype="float32")
    seen = {}

    def spy(step, arrays, ints, dense):
        seen[step.node.op.spec] = (arrays[0], sliced(step, arrays, ints, dense))
        return seen[step.node.op.spec][1]

    sliced = layouts.LAYOUTS["slice"]
    layouts.LAYOUTS["slice"] = spy
    try:
        args = [_array(rng, (4, 3), "float32")]
        check([x], (x * 2)[:2] * 3, args, backend, on_host)
        check([x], (x * 2)[1:] * 3, args, backend, on_host)
    finally:
        layouts.LAYOUTS["slice"] = sliced
    (src0, head), (src1, tail) = seen.values()
    assert head.buffer is src0.buffer and tail.buffer is not src1.buffer


# -- concatenate ----------------------------------------------------------------------------------
JOINS = {
    "2 pieces, axis 0": ([(2, 3), (4, 3)], 0),
    "3 pieces, axis 0": ([(1, 2, 2), (3, 2, 2), (2, 2, 2)], 0),
    "an empty piece, axis 0": ([(2, 3), (0, 3), (1, 3)], 0),
    "2 pieces, axis 1": ([(3, 2), (3, 4)], 1),
    "3 pieces, axis 1": ([(2, 1, 3), (2, 4, 3), (2, 2, 3)], 1),
    "3 pieces, axis -1": ([(2, 3, 1), (2, 3, 2), (2, 3, 3)], -1),
}


@pytest.mark.parametrize("case", JOINS)
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_concatenate_equals_backend_py(case, dtype, backend, on_host, rng):
    shapes, axis = JOINS[case]
    xs = [sn.tensor(f"x{i}", shape=(None,) * len(s), dtype=dtype) for i, s in enumerate(shapes)]
    out = sn.concatenate([x * 2 for x in xs], axis=axis) + 1
    check(xs, out, [_array(rng, s, dtype) for s in shapes], backend, on_host)


def test_concatenate_of_a_transposed_piece_and_an_input(backend, on_host, rng):
    """A strided piece is made C-ordered on the device first; a piece straight from the
    host goes up as the concatenation's operand."""
    x = sn.tensor("x", shape=(3, None), dtype="float32")
    y = sn.tensor("y", shape=(None, 3), dtype="float32")
    out = sn.concatenate([(x * 2).T, y, sn.exp(y)], axis=0) * 3
    args = [_array(rng, (3, 2), "float32"), _array(rng, (4, 3), "float32") / 10]
    f = sn.function([x, y], out, backend=backend)
    reference = sn.function([x, y], out, backend="py")
    np.testing.assert_allclose(f(*args), reference(*args), rtol=1e-6)
    assert layout_steps(f)


def test_concatenate_of_other_dtypes_runs_its_reference(backend, on_host, rng):
    x = sn.tensor("x", shape=(None, 2), dtype="float32")
    y = sn.tensor("y", shape=(None, 2), dtype="int64")
    out = sn.concatenate([x * 2, y * 3], axis=0)
    args = [_array(rng, (2, 2), "float32"), _array(rng, (3, 2), "int64")]
    check([x, y], out, args, backend, on_host, device=False)


# -- reshape to sizes given as inputs --------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_reshape_to_given_sizes_equals_backend_py(dtype, backend, on_host, rng):
    x = sn.tensor("x", shape=(None, None, None), dtype=dtype)
    n = sn.scalar("n", dtype="int64")
    y = x * 2
    cases = [
        sn.reshape(y, (-1, y.shape[-1])),
        sn.reshape(y, (y.shape[0], -1)),
        sn.reshape(y, (n, -1)),
        sn.reshape(y.dimshuffle(2, 0, 1), (y.shape[2], -1)),  # strided: made dense first
    ]
    for out in cases:
        for shape in [(2, 3, 4), (1, 5, 1), (3, 1, 2)]:
            args = [_array(rng, shape, dtype), np.int64(shape[0])]
            check([x, n], out * 3, args, backend, on_host)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_a_reshape_of_a_transposed_array_to_fixed_sizes_stays_on_the_device(
    dtype, backend, monkeypatch, rng
):
    """The shared "reshape" view of a strided device array: made C-ordered by the copy
    kernel on the device, then viewed (it ran its reference on host copies)."""
    ran = []
    run_host = device_execute.run_host

    def spy(call, step, slots):
        ran.append(step.node)
        return run_host(call, step, slots)

    monkeypatch.setattr(device_execute, "run_host", spy)
    x = sn.tensor("x", shape=(3, 4), dtype=dtype)
    out = sn.reshape((x * 2).T, (2, 6)) * 3
    f = sn.function([x], out, backend=backend)
    args = [_array(rng, (3, 4), dtype)]
    for _ in range(2):
        np.testing.assert_array_equal(f(*args), sn.function([x], out, backend="py")(*args))
    assert not ran, ran


def test_a_reshape_that_does_not_fit_raises_the_references_error(backend, rng):
    x = sn.tensor("x", shape=(None, None), dtype="float32")
    n = sn.scalar("n", dtype="int64")
    f = sn.function([x, n], sn.reshape(x * 2, (n, -1)) * 3, backend=backend)
    assert layout_steps(f)
    with pytest.raises(Exception, match="reshape"):
        f(_array(rng, (3, 5), "float32"), np.int64(4))
    np.testing.assert_array_equal(f(np.ones((3, 4), "float32"), np.int64(2)), np.full((2, 6), 6))


# -- strided arrays made C-ordered on the device, every dtype -------------------------------------
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
DTYPES += ["float16", "float32", "float64", "complex64", "complex128"]
STRIDED = {  # symnb's expression of x and y, NumPy's, the inputs' shape
    "broadcast, reshaped": (
        lambda x, y: sn.reshape(sn.broadcast_to(x[0], (2, 4)), (-1,)),
        lambda v, w: np.reshape(np.broadcast_to(v[0], (2, 4)), (-1,)),
        (3, 4),
    ),
    "a kernel's result transposed, reshaped": (  # (an input is transposed on the host)
        lambda x, y: sn.reshape(sn.maximum(x, y).T, (-1,)),
        lambda v, w: np.maximum(v, w).T.reshape(-1),
        (3, 4),
    ),
    "a kernel's result with moved axes, reshaped": (
        lambda x, y: sn.reshape(sn.maximum(x, y).dimshuffle(2, 0, 1), (4, -1)),
        lambda v, w: np.maximum(v, w).transpose(2, 0, 1).reshape(4, -1),
        (2, 3, 4),
    ),
    "a kernel's result transposed, concatenated": (
        lambda x, y: sn.concatenate([sn.maximum(x, y).T, y.T], axis=0),
        lambda v, w: np.concatenate([np.maximum(v, w).T, w.T], axis=0),
        (3, 4),
    ),
}


@pytest.mark.parametrize("case", STRIDED)
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_strided_view_of_any_dtype_is_made_dense_and_equals_numpy(case, dtype, backend, rng):
    """The copy kernel that makes a broadcast or transposed array C-ordered (``dense``) takes
    every dtype (it was ``+x``, which refuses bool); float16 and complex, which kernels do not
    compute, are copied on the host and still come back as device arrays to view."""
    fn, numpy_fn, shape = STRIDED[case]
    x, y = (sn.tensor(name, shape=shape, dtype=dtype) for name in "xy")
    values = [(rng.normal(size=shape) * 10).astype(dtype) for _ in "xy"]
    want = numpy_fn(*values)
    f = sn.function([x, y], fn(x, y), backend=backend)
    for _ in range(2):
        got = np.asarray(f(*values))
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want)
