"""Reductions that keep the innermost axis (bias gradients: ``d.sum(0)``) run a vectorised loop
when every operand is unit-strided along it, a strided one otherwise: both equal NumPy."""

import re

import numpy as np
import pytest

import symnb as sn


def layouts(a):
    """Contiguous (flat loop), column-strided and reversed-column (strided loop) views."""
    wide = np.repeat(a, 2, axis=1)
    return {"contiguous": a, "strided": wide[:, ::2], "reversed": a[:, ::-1].copy()[:, ::-1]}


@pytest.mark.parametrize("layout", ["contiguous", "strided", "reversed"])
@pytest.mark.parametrize(
    "name, dtype",
    [("sum", "float32"), ("sum", "int8"), ("max", "float64"), ("prod", "float64")],
)
def test_reducing_the_outer_axis_matches_numpy(layout, name, dtype):
    rng = np.random.default_rng(0)
    a = rng.uniform(-2, 2, (37, 45)).astype(dtype)
    if dtype == "float64":
        a[3, 7] = np.nan
    x = sn.matrix("x", dtype=dtype)
    f = sn.function([x], getattr(sn, name)(x, axis=0), backend="c")
    view = layouts(a)[layout]
    got, want = f(view), getattr(np, name)(view, axis=0)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)  # row by row, in NumPy's order
    assert "sn_scatter_flat" in f.kernels[0].source


def test_a_fused_producer_reads_flat_too():
    rng = np.random.default_rng(1)
    a, b = rng.random((64, 33)), rng.random(33)
    x, y = sn.matrix("x"), sn.vector("y")
    f = sn.function([x, y], sn.sum(x * y + 1, axis=0), backend="c")
    np.testing.assert_allclose(f(a, b), (a * b + 1).sum(axis=0), rtol=1e-14)
    np.testing.assert_allclose(f(a[:, ::-1], b), (a[:, ::-1] * b + 1).sum(axis=0), rtol=1e-14)


@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_reducing_the_inner_axes_takes_the_flat_row_by_the_inputs_strides(layout):
    """A bias gradient of NCHW data (sum over axes 0, 2, 3): the reduced axis is innermost,
    where the output's stride is 0, so the vectorised row is chosen by the inputs' strides
    alone (it never was while the output's stride was tested too: 5x slower than NumPy)."""
    x = sn.tensor("x", shape=(None, 6, 5, 7), dtype="float32")
    f = sn.function([x], sn.sum(x, axis=(0, 2, 3), keepdims=True), backend="c")
    (kernel,) = [k for k in f.kernels if k.kind == "kernel"]
    assert "sn_row_fn row = (st[0][nd - 1] == 4) ? sn_row_flat : sn_row;" in kernel.source
    a = np.random.default_rng(1).uniform(-2, 2, (4, 6, 5, 14)).astype("float32")
    a = a[..., ::2] if layout == "strided" else a[..., :7].copy()
    want = a.astype(np.float64).sum(axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(f(a), want, rtol=1e-6)


PERMUTED = {
    "transposed": lambda a: a.transpose(2, 1, 0),
    "rolled": lambda a: a.transpose(1, 2, 0),
    "reversed-transposed": lambda a: a[::-1, :, ::-2].transpose(2, 0, 1),
}


@pytest.mark.parametrize("view", sorted(PERMUTED))
@pytest.mark.parametrize("axis", [0, 1, 2, (0, 1), (0, 2), (1, 2), None])
@pytest.mark.parametrize(
    "name, dtype", [("sum", "float64"), ("max", "float32"), ("mean", "float64"), ("prod", "int64")]
)
def test_reductions_of_permuted_views_match_numpy(view, axis, name, dtype):
    """A reduction visits its index space in any order: the axis the input steps along most
    closely goes innermost (``sn_reduce_axis``), a transposed input's unit-stride axis among
    them, whether it is reduced or kept; every axis choice gives NumPy's values."""
    rng = np.random.default_rng(3)
    a = rng.uniform(-2, 2, (9, 11, 26))
    a = (a * 3).astype(dtype) if dtype == "int64" else a.astype(dtype)
    if name == "max":
        a[4, 5, 6] = np.nan
    v = PERMUTED[view](a)
    x = sn.tensor("x", shape=(None,) * 3, dtype=dtype)
    f = sn.function(
        [x], getattr(sn, name)(sn.cos(x) * 3 if name == "prod" else x, axis=axis), backend="c"
    )
    source = np.cos(v) * 3 if name == "prod" else v
    want = getattr(np, name)(source.astype(np.float64) if name == "prod" else source, axis=axis)
    np.testing.assert_allclose(f(v), want, rtol=1e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("width", [1, 7, 24, 63, 64])
@pytest.mark.parametrize("name, dtype", [("sum", "float64"), ("mean", "float32"), ("sum", "int32")])
def test_short_rows_of_padded_planes_sum_in_blocks(width, name, dtype):
    """Sums over a padded plane's interior (rows shorter than SN_BLOCK_N, the last two axes
    reduced) go through ``sn_block_flat``: rows added column by column, then across; equal
    to NumPy with the producer fused, over the axes a bias gradient sums."""
    rng = np.random.default_rng(width)
    planes = rng.uniform(-2, 2, (3, 4, 9, width + 3))
    planes = (planes * 4).astype(dtype) if dtype == "int32" else planes.astype(dtype)
    interior = planes[:, :, 1:8, 1 : width + 1]  # rows of `width` in a pitch of width + 3
    x = sn.tensor("x", shape=(None,) * 4, dtype=dtype)
    reduce_ = getattr(sn, name)
    outputs = [reduce_(x * 2 + 1, axis=(0, 2, 3)), reduce_(x, axis=(2, 3), keepdims=True)]
    f = sn.function([x], outputs, backend="c")
    reductions = [k.source for k in f.kernels if k.kind == "kernel" and "sn_row_flat" in k.source]
    assert reductions and all("sn_block_flat(n, m, p, st, nd - 1);" in s for s in reductions)
    values = interior.astype(np.float64)
    reduce = getattr(np, name)
    want = [reduce(values * 2 + 1, axis=(0, 2, 3)), reduce(values, axis=(2, 3), keepdims=True)]
    for got, expected in zip(f(interior), want):
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-5 if dtype == "float32" else 1e-12)


def test_only_sums_that_may_have_short_reduced_rows_compile_the_block_loop():
    """The schedule gives ``sn_block_flat`` to the sums that may need it (``short_rows``); the
    others compile without it (compile time is paid per kernel)."""
    x, t = sn.matrix("x", dtype="float32"), sn.tensor("t", (2, 3, 5, 100), "float32")
    u = sn.tensor("u", (2, 3, 5, 24), "float32")
    cases = [
        (x, sn.sum(x, axis=0), False),
        (x, sn.sum(x), True),
        (u, sn.max(u, axis=(2, 3)), False),
        (t, sn.sum(t, axis=(2, 3)), False),
        (u, sn.mean(u, axis=(0, 2, 3)), True),
    ]
    for v, out, blocks in cases:
        f = sn.function([v], out, backend="c")
        (source,) = [k.source for k in f.kernels if k.kind == "kernel"]
        assert ("sn_block_flat" in source) == blocks, out


BIG = 1 << 21  # past PARALLEL_MIN: reductions whose rows share outputs split between threads


@pytest.mark.parametrize(
    "shape, view, axis, name, dtype",
    [
        ((2048, 1100), np.s_[:, :1000], None, "sum", "float64"),  # one output for every row
        ((BIG // 64, 64), np.s_[:], 0, "sum", "int64"),  # the innermost axis kept: scatter rows
        ((BIG // 64, 70), np.s_[:, 3:67], None, "max", "float32"),  # a NaN in thread 2's share
        ((32, 16, 64, 64), np.s_[:], (0, 2, 3), "mean", "float64"),  # a bias gradient's axes
        ((64, 16, 64, 26), np.s_[..., 1:25], (0, 2, 3), "sum", "float32"),  # in blocks
        ((BIG // 8, 8), np.s_[:], 1, "prod", "float64"),
    ],  # distinct outputs: no copies
)
def test_large_reductions_sharing_outputs_add_per_piece_copies(shape, view, axis, name, dtype):
    """Each piece of the rows (cut by the sizes) is reduced into its own copy of the output,
    and the copies are added up in piece order: NumPy's values, the same on every call
    (tests/backends/c/test_threaded_paths.py: on every team too)."""
    rng = np.random.default_rng(7)
    a = rng.uniform(0.5, 1.5, shape)
    a = ((a * 100).astype(dtype) if dtype == "int64" else a.astype(dtype))[view]
    if name == "max":
        a[-1, -3] = np.nan
    x = sn.tensor("x", shape=(None,) * len(shape), dtype=dtype)
    f = sn.function([x], getattr(sn, name)(x, axis=axis), backend="c")
    (source,) = [k.source for k in f.kernels if k.kind == "kernel"]
    assert re.search(r"const \w+ \*part = parts", source)
    want = getattr(np, name)(a.astype(np.float64) if dtype != "int64" else a, axis=axis)
    got = f(a)
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == "float32" else 1e-9)
    np.testing.assert_array_equal(f(a), got)
