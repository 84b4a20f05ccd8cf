"""``pool.pool_2d`` against a port of Theano's ``Pool.perform`` over small images (1 to 5
rows and columns): every window size and stride from 1 to 3, both ``ignore_border``, every
mode, Theano's padding; image sizes known when the graph is built and not known, values
and gradients."""

import itertools

import numpy as np
import pytest

import symnb as sn
import symnb.compat.theano as theano
import symnb.compat.theano.tensor as T
from symnb.compat.theano.tensor.signal import pool

MODES = ["max", "sum", "average_inc_pad", "average_exc_pad"]
SIZES = range(1, 6)
#: (window, stride) of one axis: each pair of a 3x3 grid, the other axis a different one
PAIRS = list(itertools.product((1, 2, 3), (1, 2, 3)))
GEOMETRIES = [((w0, w1), (s0, s1)) for (w0, s0), (w1, s1) in zip(PAIRS, PAIRS[4:] + PAIRS[:4])]


def theano_out_shape(rows, cols, ws, st, ignore_border, pad):
    """Theano's ``Pool.out_shape`` of one image."""

    def count(n, w, s):
        if ignore_border:
            return n // s if w == s else max((n - w) // s + 1, 0)
        return (n - 1) // s + 1 if s >= w else max(0, (n - 1 - w) // s + 1) + 1

    return count(rows + 2 * pad[0], ws[0], st[0]), count(cols + 2 * pad[1], ws[1], st[1])


def theano_pool(x, ws, st, ignore_border, pad, mode):
    """Theano's ``Pool.perform`` (N, C, rows, cols): the output of x's dtype (an integer
    average truncated toward zero as it is stored, a sum wrapped)."""
    rows, cols = x.shape[-2] + 2 * pad[0], x.shape[-1] + 2 * pad[1]
    y = np.zeros(x.shape[:2] + (rows, cols), x.dtype)
    y[:, :, pad[0] : rows - pad[0], pad[1] : cols - pad[1]] = x
    out_rows, out_cols = theano_out_shape(*x.shape[-2:], ws, st, ignore_border, pad)
    z = np.empty(x.shape[:2] + (out_rows, out_cols), x.dtype)
    func = {"max": np.max, "sum": np.sum}.get(mode, np.average)
    inc_pad = mode == "average_inc_pad"
    for r in range(out_rows):
        row_st, row_end = r * st[0], min(r * st[0] + ws[0], rows)
        if not inc_pad:
            row_st, row_end = max(row_st, pad[0]), min(row_end, x.shape[-2] + pad[0])
        for c in range(out_cols):
            col_st, col_end = c * st[1], min(c * st[1] + ws[1], cols)
            if not inc_pad:
                col_st, col_end = max(col_st, pad[1]), min(col_end, x.shape[-1] + pad[1])
            for n, k in np.ndindex(*x.shape[:2]):
                region = y[n, k, row_st:row_end, col_st:col_end]  # stored as NumPy 1's did
                z[n, k, r, c] = np.asarray(func(region)).astype(z.dtype)
    return z


def pads(ws, ignore_border):
    """Theano's paddings for this window: none without ignore_border, each below ws."""
    if not ignore_border:
        return [(0, 0)]
    return sorted({(0, 0), (min(1, ws[0] - 1), 0), (0, ws[1] - 1)})


def numeric_grad(x, proj, *pool_args, eps=1e-6):
    """Central differences of ``sum(theano_pool(x, *pool_args) * proj)``."""
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = np.sum((theano_pool(up, *pool_args) - theano_pool(down, *pool_args)) * proj)
    return g / (2 * eps)


@pytest.mark.parametrize("ignore_border", [False, True])
@pytest.mark.parametrize("ws, st", GEOMETRIES)
def test_pool_2d_of_unknown_size_matches_theanos_perform(ws, st, ignore_border, rng):
    """One graph per mode over every image size 1..5 x 1..5 given at run time: the window
    count and values are Theano's (an empty output where ``ignore_border`` leaves no
    window), and so is the gradient (Theano's perform is piecewise
    linear: central differences of it are its gradient)."""
    x = T.tensor4("x")
    for mode, pad in itertools.product(MODES, pads(ws, ignore_border)):
        out = pool.pool_2d(x, ws=ws, stride=st, ignore_border=ignore_border, pad=pad, mode=mode)
        proj = T.tensor4("proj")
        f = theano.function([x, proj], [out, T.grad(T.sum(out * proj), x)], mode="FAST_COMPILE")
        for rows, cols in itertools.product(SIZES, SIZES):
            shape = theano_out_shape(rows, cols, ws, st, ignore_border, pad)
            a = rng.normal(size=(2, 1, rows, cols))
            p = rng.normal(size=(2, 1) + shape)
            got, grad = f(a, p)
            want = theano_pool(a, ws, st, ignore_border, pad, mode)
            where = f"{mode} pad={pad} image {rows}x{cols}"
            assert got.shape == want.shape, where
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14, err_msg=where)
            expected = numeric_grad(a, p, ws, st, ignore_border, pad, mode)
            np.testing.assert_allclose(grad, expected, rtol=1e-6, atol=1e-8, err_msg=where)


@pytest.mark.parametrize("ignore_border", [False, True])
@pytest.mark.parametrize("ws, st", [((3, 2), (1, 1)), ((3, 3), (2, 1)), ((2, 3), (3, 2))])
@pytest.mark.parametrize("mode", MODES)
def test_pool_2d_of_known_size_matches_theanos_perform(mode, ws, st, ignore_border, rng):
    """Images of sizes fixed in the graph, smaller than the window included: one clipped
    window without ignore_border, Theano's empty output with it; sn.check_grad agrees."""
    for rows, cols in [(1, 1), (2, 1), (1, 4), (2, 2), (3, 5), (5, 4)]:
        for pad in pads(ws, ignore_border):
            a = rng.normal(size=(2, 1, rows, cols))

            def pooled(v, pad=pad):
                return pool.pool_2d(v, ws, ignore_border, st, pad, mode)

            x = T.TensorType("float64", (False,) * 4, shape=a.shape)("x")
            out = pooled(x)
            want = theano_pool(a, ws, st, ignore_border, pad, mode)
            assert out.type.shape == want.shape, (rows, cols, pad)
            got = theano.function([x], out, mode="FAST_COMPILE")(a)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
            if want.size:
                sn.check_grad(pooled, [a])


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
def test_pool_2d_of_integers_keeps_their_dtype_as_theano(dtype, mode, rng):
    """Theano's ``Pool.make_node`` gives x's dtype in every mode: sums wrap as that dtype
    (int8 windows of 100s), averages are truncated toward zero (-2.5 is -2), also over the
    real elements only and over partial windows; sizes fixed in the graph and not."""
    info = np.iinfo(dtype)
    a = rng.integers(max(info.min, -1000), min(info.max, 1000), (2, 1, 5, 4), endpoint=True)
    a = a.astype(dtype)
    a[0, 0, :2, :2] = [[100, 101], [102, 103]] if info.max < 1000 else [[-7, 0], [-2, -1]]
    for (ws, st), ignore_border, pool_mode in itertools.product(
        [((2, 2), (2, 2)), ((3, 2), (1, 2)), ((2, 3), (3, 1))], [False, True], MODES
    ):
        for pad in pads(ws, ignore_border):
            want = theano_pool(a, ws, st, ignore_border, pad, pool_mode)
            for shape in (None, a.shape):  # unknown, fixed in the graph
                x = T.TensorType(dtype, (False,) * 4, shape=shape)("x")
                out = pool.pool_2d(x, ws, ignore_border, st, pad, pool_mode)
                got = theano.function([x], out, mode=mode)(a)
                where = f"{pool_mode} ws={ws} st={st} pad={pad} {ignore_border} {shape}"
                assert out.dtype == got.dtype == dtype, where
                np.testing.assert_array_equal(got, want, err_msg=where)


def test_window_larger_than_the_image_is_one_clipped_window_on_every_backend():
    """The hunter's case: a 2x2 image, 3x3 windows, stride 1 (Theano: its maximum)."""
    x = T.tensor4("x")
    a = np.arange(4.0).reshape(1, 1, 2, 2)
    for mode in ("FAST_RUN", "FAST_COMPILE"):
        got = theano.function([x], pool.pool_2d(x, (3, 3), False, (1, 1)), mode=mode)(a)
        assert got.shape == (1, 1, 1, 1) and got[0, 0, 0, 0] == 3.0


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_image_smaller_than_the_window_at_run_time_gives_theanos_empty_output(mode):
    """ignore_border=True: ``max(0, (size + 2 pad - ws) // stride + 1)`` windows (Theano 1.0's
    ``Pool.out_shape``), zero where the image is smaller than the window, as where its size
    is fixed in the graph; an image that fits still pools, in the same function."""
    x = T.tensor4("x")
    for kwargs in ({}, {"stride": (1, 2)}, {"stride": (2, 1), "pad": (1, 0)}):
        out = pool.pool_2d(x, (3, 3), ignore_border=True, **kwargs)
        f = theano.function([x], [out, T.grad(T.sum(out), x)], mode=mode)
        for rows, cols in [(2, 2), (4, 2), (2, 5), (3, 3), (5, 4)]:
            a = np.arange(2.0 * rows * cols).reshape(1, 2, rows, cols)
            pad = kwargs.get("pad", (0, 0))
            want = theano_pool(a, (3, 3), kwargs.get("stride", (3, 3)), True, pad, "max")
            got, grad = f(a)
            assert got.shape == want.shape, (kwargs, rows, cols)
            np.testing.assert_array_equal(got, want)
            assert grad.shape == a.shape and (want.size or not grad.any())


def test_padding_as_large_as_the_window_is_refused():
    x = T.tensor4("x")
    with pytest.raises(ValueError, match=r"pad \(2, 0\) must be smaller than ws \(2, 2\)"):
        pool.pool_2d(x, ws=(2, 2), ignore_border=True, pad=(2, 0))


@pytest.mark.parametrize(
    ("kwargs", "what", "shown"),
    [
        ({"ws": T.ivector("w")}, "ws", r"'w' \(int32\(\?,\)\)"),
        ({"ws": (T.iscalar("r"), 2)}, "ws", r"\('r' \(int32\(\)\), 2\)"),
        ({"ws": (2, 2), "stride": T.ivector("s")}, "stride", r"'s' \(int32\(\?,\)\)"),
        ({"ws": (2, 2), "pad": (T.iscalar("p"), 0)}, "pad", r"\('p' \(int32\(\)\), 0\)"),
    ],
)
def test_a_symbolic_window_stride_or_padding_is_refused_saying_what_to_write(kwargs, what, shown):
    """Theano 1.0 took an int vector; symnb's pools fix them in the graph. It was the generic
    "cannot iterate over symbolic 'ws'", whose hint (index ws[0], ws[1]) was refused too."""
    x = T.tensor4("x")
    message = rf"pool_2d: {what} must be ints known when the graph is built, not {shown}: "
    with pytest.raises(sn.ArgumentError, match=message + rf".*write {what}=\(") as info:
        pool.pool_2d(x, ignore_border=True, **kwargs)
    assert "test_pool.py" in str(info.value) and "cannot iterate" not in str(info.value)


def test_window_of_constants_pools_and_other_values_are_refused():
    x = T.tensor4("x")
    a = np.arange(16.0).reshape(1, 1, 4, 4)
    out = pool.pool_2d(x, T.constant([2, 2]), ignore_border=True, stride=T.constant(2))
    got = theano.function([x], out)(a)
    np.testing.assert_array_equal(got, a.reshape(1, 1, 2, 2, 2, 2).max(axis=(3, 5)))
    for ws, shown in [(2.0, r"2.0 \(float\)"), ((2,), r"\(2,\)"), ((True, 2), r"\(True, 2\)")]:
        with pytest.raises(sn.ArgumentError, match=rf"ws must be a pair of ints, not {shown}"):
            pool.pool_2d(x, ws, ignore_border=True)
