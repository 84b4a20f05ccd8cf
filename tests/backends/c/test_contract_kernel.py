"""The CPU form of a ``Contract`` kernel (symnb/backends/render/contract.py and contract.h):
a packed, register-tiled product over groups of axes, each operand read through its own
strides. Every case is compared with NumPy's einsum of the same operands: groups of one to
three axes per m, k and n, batch axes, sizes around the micro-kernel's block and the packing
blocks, inner lengths split between threads, transposed, reversed, strided, broadcast and
misaligned operands, computed operand values, float32 and float64."""

import ctypes
import mmap

import numpy as np
import pytest

from symnb.backends.c import cache
from symnb.backends.c.dialect import CDialect
from symnb.backends.c.runner import exports_helpers
from symnb.backends.execute import KERNEL_TYPE, ffi
from symnb.backends.kernels.build import Builder
from symnb.backends.kernels.ir import Contract, Kernel, Load, Operand
from tests.helpers import needs_c

pytestmark = needs_c

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def contract_kernel(dtype, groups, batch=0, left=None, right=None, in_dtypes=None):
    """A Contract kernel over (batch..., m..., k..., n...): output = sum over k of
    left(x) * right(y), ``left``/``right`` building a value from the load (default: the load
    itself), converted to ``dtype``."""
    in_dtypes = in_dtypes or (dtype, dtype)
    b = Builder(CDialect())
    b.inputs += [Operand(in_dtypes[0]), Operand(in_dtypes[1])]
    b.input_vars += [object(), object()]
    lv, rv = b.emit(Load(0, in_dtypes[0])), b.emit(Load(1, in_dtypes[1]))
    lv = b.convert(left(b, lv) if left else lv, dtype)
    rv = b.convert(right(b, rv) if right else rv, dtype)
    body = Contract(b.op("mul", lv, rv), lv, rv, dtype, groups)
    return Kernel(tuple(b.inputs), (Operand(dtype),), tuple(b.values), body, None)


def compiled(kernel):
    exports_helpers()  # kernels may call the runner's helpers: load it first
    return ffi.cast(KERNEL_TYPE, cache.load(CDialect().render(kernel)))


def call(fn, x, y, groups, batch, dtype):
    """Runs the kernel over x (batch, m, k) and y (batch, k, n) axes, through their strides
    (broadcast to the space: 0 along the axes they lack); returns the output and the code."""
    gm, gk, gn = groups
    nb = batch
    space = x.shape[: nb + gm + gk] + y.shape[nb + gk :]
    nd = len(space)
    xs = np.broadcast_to(x.reshape(x.shape + (1,) * gn), space)
    ys = np.broadcast_to(y.reshape(y.shape[:nb] + (1,) * gm + y.shape[nb:]), space)
    out = np.empty(space[: nb + gm] + space[nb + gm + gk :], dtype)
    out_strides = list(out.strides[: nb + gm]) + [0] * gk + list(out.strides[nb + gm :])
    args = [nd, *space, *xs.strides, *ys.strides, *out_strides, out.size]
    pointers = ffi.new("char *[]", [ffi.cast("char *", a.ctypes.data) for a in (x, y, out)])
    code = fn(ffi.new("int64_t[]", args), pointers)
    return out, code


def reference(x, y, groups, batch, dtype, left=np.asarray, right=np.asarray):
    gm, gk, gn = groups
    letters = iter(LETTERS)
    bs, ms, ks, ns = ("".join(next(letters) for _ in range(g)) for g in (batch, gm, gk, gn))
    spec = f"{bs}{ms}{ks},{bs}{ks}{ns}->{bs}{ms}{ns}"
    return np.einsum(spec, left(x).astype("float64"), right(y).astype("float64")).astype(dtype)


def layout(a, how, rng):
    """``a``'s values in another memory layout (same shape)."""
    if how == "C":
        return np.ascontiguousarray(a)
    if how == "F":
        return np.asfortranarray(a)
    if how == "reversed":  # negative strides on every axis
        flipped = np.ascontiguousarray(a[tuple(slice(None, None, -1) for _ in a.shape)])
        return flipped[tuple(slice(None, None, -1) for _ in a.shape)]
    if how == "every other":
        wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        wide[..., ::2] = a
        return wide[..., ::2]
    if how == "misaligned":  # one element past an aligned start
        flat = np.empty(a.size + 1, a.dtype)
        out = flat[1:].reshape(a.shape)
        out[...] = a
        return out
    raise ValueError(how)


TOLERANCE = {"float32": 2e-5, "float64": 1e-12}


def check(got, want, dtype):
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype] * scale)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "m, k, n",
    [
        (1, 1, 1),
        (7, 5, 3),
        (8, 576, 48),
        (9, 577, 49),
        (5, 288, 17),
        (6, 289, 1537),
        (47, 97, 95),
        (64, 500, 130),
        (200, 40, 1000),
        (20, 4000, 20),
        (3, 2000, 300),
        (24, 20000, 24),
        (9, 3000, 8),
        (16, 30000, 16),
    ],
)
def test_products_of_matrices_match_numpy(dtype, m, k, n):
    """Sizes on either side of the micro-kernel's block (8 x 48 floats), of the packing
    blocks' steps (576 floats, 288 doubles) and columns (1536 floats), and long inner lengths
    (24 x 20000 x 24: split between threads, each adding a partial result); operands in
    every layout, among them
    both running along the sum (dot products for a result of one vector of columns: 9 x 8,
    16 x 16, the latter split between threads too)."""
    rng = np.random.default_rng(m * 1000 + k + n)
    fn = compiled(contract_kernel(dtype, (1, 1, 1)))
    x = rng.standard_normal((m, k)).astype(dtype)
    y = rng.standard_normal((k, n)).astype(dtype)
    # ("C", "F"): both operands run along the sum, as dot products when the result is small
    for how_x, how_y in [
        ("C", "C"),
        ("F", "reversed"),
        ("misaligned", "every other"),
        ("reversed", "F"),
        ("C", "F"),
        ("misaligned", "F"),
    ]:
        out, code = call(fn, layout(x, how_x, rng), layout(y, how_y, rng), (1, 1, 1), 0, dtype)
        assert code == 0
        check(out, reference(x, y, (1, 1, 1), 0, dtype), dtype)


@pytest.mark.parametrize(
    "groups, x_shape, y_shape",
    [
        ((1, 3, 3), (5, 3, 2, 4), (3, 2, 4, 6, 7, 9)),  # a convolution's filters x windows
        ((3, 3, 1), (3, 2, 4, 6, 7, 9), (6, 7, 9, 5)),  # its filter gradient
        ((3, 1, 3), (3, 2, 4, 5), (5, 6, 7, 9)),  # window gradients
        ((2, 2, 2), (4, 6, 7, 5), (7, 5, 9, 11)),
    ],
)
def test_groups_of_axes_match_numpy(groups, x_shape, y_shape):
    rng = np.random.default_rng(len(x_shape) * 10 + len(y_shape))
    fn = compiled(contract_kernel("float32", groups))
    x = rng.standard_normal(x_shape).astype("float32")
    y = rng.standard_normal(y_shape).astype("float32")
    for how in ["C", "F", "reversed"]:
        out, code = call(fn, layout(x, how, rng), layout(y, how, rng), groups, 0, "float32")
        assert code == 0
        check(out, reference(x, y, groups, 0, "float32"), "float32")


def test_windows_of_an_image_as_the_right_operand():
    """A strided view of an image read as (C, kh, kw; N, out_h, out_w): runs of out_w
    consecutive elements, rows of panels straddling them, the last reads at the image's end."""
    rng = np.random.default_rng(2)
    image = rng.standard_normal((5, 3, 11, 13)).astype("float32")
    n, c, h, w = image.shape
    oh, ow = h - 2, w - 2
    s = image.strides
    windows = np.lib.stride_tricks.as_strided(
        image, (c, 3, 3, n, oh, ow), (s[1], s[2], s[3], s[0], s[2], s[3])
    )
    filters = rng.standard_normal((4, c, 3, 3)).astype("float32")
    fn = compiled(contract_kernel("float32", (1, 3, 3)))
    out, code = call(fn, filters, windows, (1, 3, 3), 0, "float32")
    assert code == 0
    check(out, reference(filters, windows, (1, 3, 3), 0, "float32"), "float32")


def guarded(values, at_end: bool):
    """A copy of ``values`` whose first byte follows an unreadable page, or whose last byte
    precedes one (``at_end``): a read past the array's bytes is a crash, not a wrong value."""
    page, nbytes = mmap.PAGESIZE, values.nbytes
    inner = (nbytes + page - 1) // page * page
    buffer = mmap.mmap(-1, inner + 2 * page)
    start = ctypes.addressof(ctypes.c_char.from_buffer(buffer))
    libc = ctypes.CDLL(None)
    for guard in (start, start + page + inner):
        assert libc.mprotect(ctypes.c_void_p(guard), page, 0) == 0  # PROT_NONE
    offset = page + (inner - nbytes if at_end else 0)
    out = np.frombuffer(buffer, values.dtype, values.size, offset).reshape(values.shape)
    out[...] = values
    return out


@pytest.mark.parametrize("at_end", [False, True])
def test_reads_stay_inside_the_operands_bytes(at_end):
    """Vector reads of runs (plain loads blended into a panel) stop at the operand's ends,
    where they read masked: operands against unreadable pages at either end."""
    rng = np.random.default_rng(8)
    fn = compiled(contract_kernel("float32", (1, 3, 3)))
    image = guarded(rng.standard_normal((3, 2, 9, 7)).astype("float32"), at_end)
    n, c, h, w = image.shape
    s = image.strides
    windows = np.lib.stride_tricks.as_strided(
        image, (c, 3, 3, n, h - 2, w - 2), (s[1], s[2], s[3], s[0], s[2], s[3])
    )
    filters = guarded(rng.standard_normal((5, c, 3, 3)).astype("float32"), at_end)
    out, code = call(fn, filters, windows, (1, 3, 3), 0, "float32")
    assert code == 0
    check(out, reference(filters, windows, (1, 3, 3), 0, "float32"), "float32")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batch_axes_and_broadcast_operands(dtype):
    """Batch axes, an operand broadcast along a batch axis and along m (stride 0)."""
    rng = np.random.default_rng(3)
    fn = compiled(contract_kernel(dtype, (1, 1, 1), batch=2))
    x = rng.standard_normal((2, 3, 50, 70)).astype(dtype)
    y = rng.standard_normal((2, 3, 70, 60)).astype(dtype)
    out, code = call(fn, x, y, (1, 1, 1), 2, dtype)
    assert code == 0
    check(out, reference(x, y, (1, 1, 1), 2, dtype), dtype)
    shared = np.broadcast_to(rng.standard_normal((1, 1, 70, 60)).astype(dtype), y.shape)
    out, _ = call(fn, x, shared, (1, 1, 1), 2, dtype)
    check(out, reference(x, shared, (1, 1, 1), 2, dtype), dtype)
    row = np.broadcast_to(rng.standard_normal((2, 3, 1, 70)).astype(dtype), x.shape)
    out, _ = call(fn, row, y, (1, 1, 1), 2, dtype)
    check(out, reference(row, y, (1, 1, 1), 2, dtype), dtype)


def test_computed_operand_values_are_packed_as_computed():
    """``left`` = 2x - 1 and ``right`` a float32 operand converted to the float64 the product
    accumulates in: the packing evaluates them (no plain copies), the right value by whole
    panels of consecutive columns, by runs of them, and column by column (transposed)."""
    rng = np.random.default_rng(4)
    kernel = contract_kernel(
        "float64",
        (1, 1, 1),
        left=lambda b, v: b.op(
            "sub", b.op("mul", v, b.literal(2.0, "float64")), b.literal(1.0, "float64")
        ),
        in_dtypes=("float64", "float32"),
    )
    fn = compiled(kernel)
    x = rng.standard_normal((33, 300))
    y = rng.standard_normal((300, 77)).astype("float32")
    want = reference(x, y, (1, 1, 1), 0, "float64", left=lambda a: 2 * a - 1)
    for how in ["C", "every other", "F"]:
        out, code = call(fn, x, layout(y, how, rng), (1, 1, 1), 0, "float64")
        assert code == 0
        np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-10)


def test_special_values_stay_in_their_outputs():
    """inf and NaN reach exactly the outputs whose sums include them (the broadcast of a left
    element into a vector must not turn 0 * inf elsewhere into NaN)."""
    x = np.ones((9, 5), "float32")
    y = np.ones((5, 50), "float32")
    y[2, 7] = np.inf
    x[4, 3] = np.nan
    fn = compiled(contract_kernel("float32", (1, 1, 1)))
    out, _ = call(fn, x, y, (1, 1, 1), 0, "float32")
    with np.errstate(invalid="ignore"):
        want = x.astype("float64") @ y.astype("float64")
    np.testing.assert_array_equal(out, want.astype("float32"))


def test_an_output_not_laid_out_in_rows_is_declined():
    """The product writes C-ordered rows; an output given other strides makes it decline
    (the step's fallback then runs)."""
    fn = compiled(contract_kernel("float32", (1, 1, 1)))
    x, y = np.ones((4, 3), "float32"), np.ones((3, 5), "float32")
    out = np.empty((5, 4), "float32").T
    args = [3, 4, 3, 5, 12, 4, 0, 0, 20, 4, 4, 0, 20, 20]
    pointers = ffi.new("char *[]", [ffi.cast("char *", a.ctypes.data) for a in (x, y, out)])
    assert fn(ffi.new("int64_t[]", args), pointers) != 0
