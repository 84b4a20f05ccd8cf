"""Matrix products, convolution and pooling on backend "opencl" (PoCL): the tiled product
kernel (``Contract``) against NumPy for sizes that are not multiples of the tile, transposed,
batched and repeated operands, float32 and float64; the convolution's steps on the device with
the host steps shown; and the graph display's placement of nodes and transfers."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from symnb.backends.kernels.ir import Contract
from symnb.backends.plan import Launch, Library
from symnb.ops.conv import Conv2d, Conv2dGradFilters, Conv2dGradInput, MaxPool2d
from symnb.ops.linalg import Matmul
from tests.helpers import opencl_problem

pytestmark = pytest.mark.skipif(opencl_problem() is not None, reason=str(opencl_problem()))


def products(f) -> list:
    """The plan's launches of the tiled product kernel."""
    launches = [s for s in f.linker.plan.steps if isinstance(s, Launch)]
    return [s for s in launches if isinstance(s.kernel.description.body, Contract)]


@pytest.mark.parametrize("dtype, rtol", [("float32", 2e-5), ("float64", 1e-12)])
def test_tiled_products_match_numpy(dtype, rtol):
    rng = np.random.default_rng(3)
    x, y = sn.matrix("x", dtype=dtype), sn.matrix("y", dtype=dtype)
    s = sn.tensor("s", shape=(None, None, None), dtype=dtype)
    outs = [x @ y, x.T @ x, s @ y, s @ s.transpose(0, 2, 1)]
    f = sn.function([x, y, s], outs, backend="opencl")
    assert len(products(f)) == 4, f.linker.plan
    assert not any(
        isinstance(st, Library) and isinstance(st.node.op, Matmul) for st in f.linker.plan.steps
    )
    assert sum("in tiles through local memory" in k.reason for k in f.kernels) == 4
    for m, k, n, b in [(70, 33, 65, 2), (1, 17, 3, 1), (129, 64, 64, 3)]:
        xv = rng.standard_normal((m, k)).astype(dtype)
        yv = rng.standard_normal((k, n)).astype(dtype)
        sv = rng.standard_normal((b, 5, k)).astype(dtype)
        got = f(xv, yv, sv)
        wants = [xv @ yv, xv.T @ xv, sv @ yv, sv @ sv.transpose(0, 2, 1)]
        for g, w in zip(got, wants):
            assert g.dtype == np.dtype(dtype) and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * 10)


def test_gemm_and_the_mlp_gradient_products_run_on_the_device(rng):
    x, W = sn.matrix("x"), sn.shared(rng.standard_normal((6, 4)), name="W")
    z = sn.matrix("z")
    loss = sn.sum(sn.tanh(x @ W) * z)
    gW, gx = sn.grad(loss, [W, x])
    f = sn.function([x, z], [0.5 * (x @ W) - z, gW, gx], backend="opencl")
    assert len(products(f)) >= 3
    xv, zv = rng.standard_normal((9, 6)), rng.standard_normal((9, 4))
    Wv = W.get_value()
    h = np.tanh(xv @ Wv)
    got = f(xv, zv)
    np.testing.assert_allclose(got[0], 0.5 * (xv @ Wv) - zv, rtol=1e-12)
    np.testing.assert_allclose(got[1], xv.T @ ((1 - h**2) * zv), rtol=1e-11)
    np.testing.assert_allclose(got[2], ((1 - h**2) * zv) @ Wv.T, rtol=1e-11)


def conv_function(xs, ws, padding):
    x = sn.tensor("x", xs, dtype="float32")
    w = sn.tensor("w", ws, dtype="float32")
    y = sn.conv2d(x, w, (1, 1), padding)
    p = sn.max_pool2d(y, (2, 2))
    q = sn.avg_pool2d(y, (2, 2), stride=(1, 1))
    loss = sn.sum(p * p) + sn.sum(q)
    dx, dw = sn.grad(loss, [x, w])
    return [x, w], [y, p, q, dx, dw]


def test_convolution_and_pooling_run_their_products_on_the_device():
    rng = np.random.default_rng(5)
    xs, ws = (2, 3, 7, 8), (4, 3, 3, 3)
    xv = rng.standard_normal(xs).astype("float32")
    wv = rng.standard_normal(ws).astype("float32")
    for padding in (0, 1):
        inputs, outs = conv_function(xs, ws, padding)
        on_cl = sn.function(inputs, outs, backend="opencl")
        want = sn.function(inputs, outs, backend="py")(xv, wv)
        for got, ref in zip(on_cl(xv, wv), want):
            np.testing.assert_allclose(got, ref, rtol=2e-4, atol=2e-4)
        steps = on_cl.linker.plan.steps
        for op in (Conv2d, Conv2dGradFilters, Conv2dGradInput):
            assert any(s in products(on_cl) for s in steps if isinstance(s.node.op, op)), op
        pools = [s for s in steps if isinstance(s.node.op, MaxPool2d)]
        assert pools and all(not isinstance(s, Library) for s in pools)
        listing = repr(on_cl.kernels)
        assert "window gradients added into place" in listing  # col2im: NumPy on the host
        assert "padding (NumPy)" not in listing  # the device's pad kernel (windows.py)
        assert ("hand-written pad kernel" in listing) == (padding == 1)


def test_graph_display_shows_placement_and_transfers():
    from symnb.viz.graphs import picture

    x = sn.matrix("x")
    W = sn.shared(np.ones((3, 2)), name="W")
    f = sn.function([x], sn.sort(sn.exp(x @ W), axis=1) * 2, backend="opencl")
    place = f.linker.placement()
    kinds = {
        type(n.op).__name__: place.sides[id(n)] for n in f.graph.toposort() if id(n) in place.sides
    }
    assert kinds["Matmul"] == "device" and kinds["Sort"] == "host"
    dot = picture(f).dot()
    assert dot.count("on-device") >= 2 and dot.count("on-host") == 1
    # x to the device; exp(x @ W) to the host for sort; sort's result back; the result home
    assert dot.count('class="transfer to-device"') == 2, dot
    assert dot.count('class="transfer to-host"') == 2, dot
    assert "⇢ device" in dot and "copies across the bus" in picture(f).html()
    plain = picture(sn.function([x], sn.exp(x), backend="py")).dot()
    assert "transfer" not in plain and "on-device" not in plain
