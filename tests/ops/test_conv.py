"""conv2d and the pools against explicit-loop references, their shape errors and gradients."""

import itertools

import numpy as np
import pytest

import symnb as sn
from symnb.ops.conv import MaxPool2dGrad
from tests.helpers import check, tolerance
from tests.helpers import run as run_on


# -- references: one output element at a time, over explicitly padded input ----------------
def explicit_pads(padding, size, kernel, stride, dilation):
    """(before, after) for one axis, from the padding argument as the user gave it."""
    if padding == "valid":
        return (0, 0)
    if padding == "same":
        out = -(-size // stride)
        total = max((out - 1) * stride + dilation * (kernel - 1) + 1 - size, 0)
        return (total // 2, total - total // 2)
    return (padding, padding)


def pad_input(x, padding, kernel, stride, dilation, fill=0.0):
    pads = [
        explicit_pads(p, n, k, s, d)
        for p, n, k, s, d in zip(padding, x.shape[2:], kernel, stride, dilation)
    ]
    return np.pad(x, ((0, 0), (0, 0), *pads), constant_values=fill)


def loop_conv2d(x, w, stride, padding, dilation, groups):
    o_total, per_group, kh, kw = w.shape
    xp = pad_input(x, padding, (kh, kw), stride, dilation)
    out_h = (xp.shape[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    out_w = (xp.shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((x.shape[0], o_total, out_h, out_w), dtype=np.result_type(x, w))
    for n, o, i, j in itertools.product(*map(range, out.shape)):
        first = (o // (o_total // groups)) * per_group
        for c, a, b in itertools.product(range(per_group), range(kh), range(kw)):
            pixel = xp[
                n, first + c, i * stride[0] + a * dilation[0], j * stride[1] + b * dilation[1]
            ]
            out[n, o, i, j] += pixel * w[o, c, a, b]
    return out


def loop_pool(x, kernel, stride, padding, reduce, fill):
    xp = pad_input(x, padding, kernel, stride, (1, 1), fill)
    out_h = (xp.shape[2] - kernel[0]) // stride[0] + 1
    out_w = (xp.shape[3] - kernel[1]) // stride[1] + 1
    out = []
    for n, c, i, j in itertools.product(
        range(x.shape[0]), range(x.shape[1]), range(out_h), range(out_w)
    ):
        r, s = i * stride[0], j * stride[1]
        out.append(reduce(xp[n, c, r : r + kernel[0], s : s + kernel[1]]))
    return np.array(out).reshape(x.shape[:2] + (out_h, out_w))


CONV_GRID = [
    # stride, padding (per axis), dilation, groups
    ((1, 1), ("valid", "valid"), (1, 1), 1),
    ((2, 1), (1, 2), (1, 1), 1),
    ((1, 2), ("same", "same"), (1, 1), 2),
    ((2, 2), ("same", "same"), (2, 1), 1),
    ((1, 1), (0, 1), (2, 2), 2),
    ((3, 2), (2, 0), (1, 3), 4),
    ((1, 1), ("same", "same"), (3, 2), 4),
]


def padding_arg(padding):
    return padding[0] if isinstance(padding[0], str) else padding


@pytest.mark.parametrize("stride,padding,dilation,groups", CONV_GRID)
@pytest.mark.parametrize("shape", [(2, 4, 7, 6), (1, 4, 5, 9)])
def test_conv2d_matches_loops(stride, padding, dilation, groups, shape, rng, backend):
    x = rng.normal(size=shape)
    w = rng.normal(size=(4, 4 // groups, 3, 2))
    want = loop_conv2d(x, w, stride, padding, dilation, groups)

    def conv(a, b):
        return sn.conv2d(a, b, stride, padding_arg(padding), dilation, groups)

    got = run_on(conv, x, w, backend=backend)
    check(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "dtypes", [("float32", "float32"), ("int32", "int32"), ("float32", "float64")]
)
def test_conv2d_dtypes_follow_numpy(dtypes, rng, backend):
    x = rng.integers(-3, 4, size=(1, 2, 5, 5)).astype(dtypes[0])
    w = rng.integers(-3, 4, size=(3, 2, 2, 2)).astype(dtypes[1])
    got = run_on(lambda a, b: sn.conv2d(a, b, padding=1), x, w, backend=backend)
    want = loop_conv2d(x, w, (1, 1), (1, 1), (1, 1), 1).astype(np.result_type(x, w))
    check(got, want, rtol=tolerance(want.dtype))


def test_conv2d_with_named_batch_and_empty_batch(rng, backend):
    x = sn.tensor("x", ("batch", 3, 8, 8))
    w = sn.tensor("w", (5, 3, 3, 3))
    y = sn.conv2d(x, w, stride=2, padding="same")
    assert y.type.shape == ("batch", 5, 4, 4)
    got = sn.function([x, w], y, backend=backend)(np.zeros((0, 3, 8, 8)), np.ones((5, 3, 3, 3)))
    check(got, np.zeros((0, 5, 4, 4)))
    assert sn.conv2d(sn.tensor("u", (2, 3, None, 8)), w).type.shape == (2, 5, None, 6)


ZERO_SIZES = [
    # x's shape (a str: the batch named, given that many images), w's shape, stride, padding
    ((1, 0, 5, 5), (2, 0, 2, 2), 1, "valid"),  # no input channels: zeros
    ((2, 0, 5, 5), (3, 0, 3, 3), 2, "same"),
    ((1, 3, 5, 5), (0, 3, 2, 2), 1, 1),  # no filters: no output channels
    ((0, 3, 5, 5), (4, 3, 2, 2), 2, "valid"),  # no images
    (("batch", 0), (4, 3, 2, 2), 2, "valid"),
    (("batch", 0), (4, 3, 3, 3), 1, "same"),
    ((2, 4, 5, 5), (0, 1, 3, 3), 1, "same"),  # groups of no filters
]


@pytest.mark.parametrize("x_shape,w_shape,stride,padding", ZERO_SIZES)
def test_conv2d_and_its_gradients_of_zero_sizes(x_shape, w_shape, stride, padding, backend):
    """No channels, no filters or no images: zeros or nothing, and gradients of x's and w's
    shapes (all zeros), as the reference gives; the kernel path raised in its reshapes
    ("cannot reshape array of size 0")."""
    rng = np.random.default_rng(0)
    named = isinstance(x_shape[0], str)
    shape = (x_shape[1], 3, 5, 5) if named else x_shape
    x_value, w_value = rng.normal(size=shape), rng.normal(size=w_shape)
    x = sn.tensor("x", ("batch", *shape[1:]) if named else shape)
    w = sn.tensor("w", w_shape)
    groups = 4 if w_shape[1] == 1 else 1
    y = sn.conv2d(x, w, stride, padding, groups=groups)
    weights = sn.tensor("weights", y.type.shape)
    gx, gw = sn.grad(sn.sum(y * weights), [x, w])
    f = sn.function([x, w, weights], [y, gx, gw], backend=backend)
    want = loop_conv2d(x_value, w_value, (stride,) * 2, (padding,) * 2, (1, 1), groups)
    got_y, got_gx, got_gw = f(x_value, w_value, rng.normal(size=want.shape))
    check(got_y, want)
    check(got_gx, np.zeros(shape))
    check(got_gw, np.zeros(w_shape))


@pytest.mark.parametrize("shape", [(0, 2, 4, 4), (1, 0, 4, 4), ("batch", 0)])
@pytest.mark.parametrize("name", ["avg", "max"])
def test_pools_and_their_gradients_of_zero_sizes(shape, name, backend):
    """max_pool2d's gradient reference raised on no images or no channels (a -1 in a
    reshape of an empty array)."""
    pool, reduce, fill = POOLS[name]
    named = isinstance(shape[0], str)
    value = np.zeros((shape[1], 2, 4, 4) if named else shape)
    x = sn.tensor("x", ("batch", 2, 4, 4) if named else shape)
    for kernel, stride, padding in [((2, 2), None, (0, 0)), ((3, 3), (2, 2), (1, 1))]:
        y = pool(x, kernel, stride, padding)
        f = sn.function([x], [y, sn.grad(sn.sum(y), x)], backend=backend)
        got_y, got_gx = f(value)
        check(got_y, loop_pool(value, kernel, stride or kernel, padding, reduce, fill))
        check(got_gx, np.zeros(value.shape))


POOL_GRID = [
    ((2, 2), None, (0, 0)),
    ((3, 3), (1, 1), (1, 1)),
    ((2, 3), (1, 2), (1, 0)),
    ((3, 2), (2, 2), ("same", "same")),
    ((1, 1), (1, 1), (0, 0)),
]
POOLS = {
    "max": (sn.max_pool2d, np.max, -np.inf),
    "avg": (sn.avg_pool2d, np.mean, 0.0),
}


@pytest.mark.parametrize("kernel,stride,padding", POOL_GRID)
@pytest.mark.parametrize("name", sorted(POOLS))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_pools_match_loops(name, kernel, stride, padding, dtype, rng, backend):
    fn, reduce, fill = POOLS[name]
    x = rng.normal(size=(2, 3, 6, 7)).astype(dtype)
    want = loop_pool(x, kernel, stride or kernel, padding, reduce, fill).astype(dtype)
    got = run_on(lambda a: fn(a, kernel, stride, padding_arg(padding)), x, backend=backend)
    check(got, want, atol=1e-6 if dtype == "float32" else 0.0)


def test_pool_dtypes_on_integers(backend):
    x = np.arange(32, dtype="int16").reshape(1, 2, 4, 4)
    check(
        run_on(lambda a: sn.max_pool2d(a, 2), x, backend=backend),
        loop_pool(x, (2, 2), (2, 2), (0, 0), np.max, 0).astype("int16"),
    )
    check(
        run_on(lambda a: sn.avg_pool2d(a, 2), x, backend=backend),
        loop_pool(x, (2, 2), (2, 2), (0, 0), np.mean, 0),
    )


ERRORS = [
    (
        lambda x, w: sn.conv2d(x, w, dilation=3),
        r"output height would be -1: .* = \(5 \+ 0 - 3\*\(3-1\) - 1\)//1 \+ 1 = -1",
    ),
    (
        lambda x, w: sn.conv2d(x, sn.tensor("k", (1, 1, 7, 1))),
        r"output height would be -1: .* = \(5 \+ 0 - 1\*\(7-1\) - 1\)//1 \+ 1 = -1",
    ),
    (
        lambda x, w: sn.conv2d(x, sn.tensor("w2", (2, 2, 3, 3))),
        "'x'.* has 1 channels .* take 2 per group x groups=1 = 2",
    ),
    (
        lambda x, w: sn.conv2d(
            sn.tensor("y", (1, 4, 5, 5)), sn.tensor("w3", (3, 2, 1, 1)), groups=2
        ),
        "3 outputs, not divisible by groups=2",
    ),
    (lambda x, w: sn.conv2d(x[0], w), "must be 4-d"),
    (
        lambda x, w: sn.max_pool2d(x, (2, 6)),
        r"output width would be 0: .* = \(5 \+ 0 - 1\*\(6-1\) - 1\)//6 \+ 1 = 0",
    ),
    (lambda x, w: sn.avg_pool2d(x, (2, 2), padding=-1), "non-negative"),
    (lambda x, w: sn.conv2d(x, w, stride=0), "positive int"),
]


@pytest.mark.parametrize("build,message", ERRORS)
def test_conv_errors_report_the_arithmetic(build, message):
    x, w = sn.tensor("x", (1, 1, 5, 5)), sn.tensor("w", (1, 1, 3, 3))
    with pytest.raises((sn.ShapeError, ValueError), match=message):
        build(x, w)


RUNTIME_ERRORS = [
    (
        lambda x, w: sn.conv2d(x, w),
        (1, 2, 2, 5),
        r"conv2d: the output height would be 0: .* = \(2 \+ 0 - 1\*\(3-1\) - 1\)//1 \+ 1 = 0; "
        r"the input of shape \(1, 2, 2, 5\) with the filters of shape \(3, 2, 3, 3\) is too "
        r"small for a 3-wide window",
    ),
    (
        lambda x, w: sn.conv2d(x, w[:, :1], groups=2),
        (1, 2, 5, 5),
        r"conv2d: the filters of shape \(3, 1, 3, 3\) have 3 outputs, not divisible by groups=2",
    ),
    (
        lambda x, w: sn.conv2d(x, w),
        (1, 3, 5, 5),
        r"the input of shape \(1, 3, 5, 5\) has 3 channels \(axis 1\) but the filters of shape "
        r"\(3, 2, 3, 3\) take 2 per group x groups=1 = 2",
    ),
    (
        lambda x, w: sn.max_pool2d(x, 3),
        (1, 2, 5, 2),
        r"max_pool2d: the output width would be 0: .* = \(2 \+ 0 - 1\*\(3-1\) - 1\)//3 \+ 1 = 0; "
        r"the input of shape \(1, 2, 5, 2\) is too small for a 3-wide window",
    ),
    (
        lambda x, w: sn.avg_pool2d(x, (4, 2), padding=1),
        (1, 2, 1, 5),
        r"avg_pool2d: the output height would be 0: .* = \(1 \+ 2 - 1\*\(4-1\) - 1\)//4 \+ 1 = 0",
    ),
    (  # a gradient op alone (forward's check did not run): the same rule
        lambda x, w: MaxPool2dGrad((3, 3), (1, 1), ((0, 0), (0, 0)))(x, x),
        (1, 2, 2, 5),
        r"max_pool2d_grad: the output height would be 0: .* the input of shape \(1, 2, 2, 5\)",
    ),
]


@pytest.mark.parametrize("build, x_shape, message", RUNTIME_ERRORS)
def test_conv_errors_of_sizes_known_only_at_run_time(build, x_shape, message, backend):
    """Dims unknown in the graph (Theano's tensor4, shared filters): the build-time rule runs
    on the call's sizes and says the same, not NumPy's "window shape cannot be larger than
    input array shape" or "cannot reshape array of size 27"."""
    x = sn.tensor("x", (None, None, None, None))
    w = sn.tensor("w", (None, None, 3, 3))
    f = sn.function([x, w], build(x, w) * 1 + 0 * sn.sum(w), backend=backend)
    with pytest.raises(sn.SymnbError, match=message) as caught:
        f(np.ones(x_shape), np.ones((3, 2, 3, 3)))
    assert isinstance(caught.value.__cause__ or caught.value, sn.ShapeError)
    assert "test_conv.py" in str(caught.value)  # the line that built the node


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_max_pool_refuses_complex_when_built(dtype, rng):
    """A maximum needs an order: refused at the user's line (every call failed with NumPy's
    "Invalid integer data type 'c'."); the average of complex numbers is NumPy's."""
    z = sn.tensor("z", shape=(1, 1, 4, 4), dtype=dtype)
    with pytest.raises(sn.DTypeError, match=r"max_pool2d: input 'z' \(complex.* is complex") as e:
        sn.max_pool2d(z, 2)
    assert f"test_conv.py, line {e.tb.tb_lineno}" in str(e.value)
    a = (rng.normal(size=(1, 1, 4, 4)) + 1j * rng.normal(size=(1, 1, 4, 4))).astype(dtype)
    got = sn.function([z], sn.avg_pool2d(z, 2), backend="py")(a)
    np.testing.assert_allclose(got, a.reshape(1, 1, 2, 2, 2, 2).mean(axis=(3, 5)), rtol=1e-6)
    # the hint is code that runs (it said "x.real" before variables had .real)
    assert "pool abs(x) (the magnitudes) or x.real (the real parts)" in str(e.value)
    pooled = [sn.max_pool2d(abs(z), 2), sn.max_pool2d(z.real, 2)]
    magnitudes, reals = sn.function([z], pooled, backend="py")(a)
    for got, part in ((magnitudes, np.abs(a)), (reals, a.real)):
        np.testing.assert_allclose(got, part.reshape(1, 1, 2, 2, 2, 2).max(axis=(3, 5)))


CONV_GRADS = [
    ((1, 1), "valid", (1, 1), 1),
    ((2, 1), (1, 0), (1, 2), 2),
    ((2, 2), "same", (1, 1), 1),
]


@pytest.mark.parametrize("stride,padding,dilation,groups", CONV_GRADS)
def test_conv2d_gradients(stride, padding, dilation, groups, rng):
    x, w = rng.normal(size=(1, 2, 5, 4)), rng.normal(size=(2, 2 // groups, 2, 2))
    sn.check_grad(lambda a, b: sn.conv2d(a, b, stride, padding, dilation, groups), [x, w])


def test_conv2d_second_order_through_its_gradient_ops(rng):
    """The gradient ops are differentiable: a gradient of a gradient checks out."""
    x, w = rng.normal(size=(1, 2, 4, 4)), rng.normal(size=(2, 2, 2, 2))

    def gradient_of_input(a, b):
        cost = sn.sum(sn.conv2d(a, b, padding=1) ** 2)
        return sn.grad(cost, a)

    sn.check_grad(gradient_of_input, [x, w])


@pytest.mark.parametrize(
    "kernel,stride,padding", [((2, 2), None, 0), ((3, 2), (1, 2), (1, 1)), ((2, 2), 1, "same")]
)
@pytest.mark.parametrize("name", sorted(POOLS))
def test_pool_gradients(name, kernel, stride, padding, rng):
    fn = POOLS[name][0]
    x = rng.permutation(40).reshape(1, 2, 4, 5) / 7.0  # distinct values: no ties in the max
    sn.check_grad(lambda a: fn(a, kernel, stride, padding), [x])


def test_avg_pool_second_order(rng):
    x = rng.normal(size=(1, 1, 4, 4))
    sn.check_grad(lambda a: sn.grad(sn.sum(sn.avg_pool2d(a, 2, 1) ** 2), a), [x])


@pytest.mark.parametrize("pool", [sn.max_pool2d, sn.avg_pool2d])
def test_pool_padding_as_wide_as_the_window_is_refused(pool, rng):
    """Padding 2 around a 2-wide window made windows of padding only: -inf from max_pool2d,
    0 from avg_pool2d. Padding below the window (Theano's ``pad < ws``) still works."""
    im = sn.tensor("im", shape=(1, 1, 4, 4))
    for padding, axis in [(2, "height"), ((0, 3), "width"), (((0, 2), (0, 0)), "height")]:
        with pytest.raises(sn.ShapeError, match=f"padding .* on the {axis} axis") as caught:
            pool(im, 2, padding=padding)  # the line named
        message = str(caught.value)
        assert "'im' (float64(1, 1, 4, 4))" in message and "2-wide window" in message
        assert f"test_conv.py, line {caught.tb.tb_lineno}" in message
    x = rng.normal(size=(1, 2, 5, 5))
    fn, reduce, fill = POOLS["max" if pool is sn.max_pool2d else "avg"]
    got = run_on(lambda a: pool(a, 3, 1, 2), x)  # padding 2 < window 3: every window is real
    np.testing.assert_allclose(got, loop_pool(x, (3, 3), (1, 1), (2, 2), reduce, fill))
    assert np.isfinite(got).all()


@pytest.mark.parametrize(
    "build, error, message",
    [
        (lambda x: sn.max_pool2d(x, 2.5), sn.ShapeTypeError, "kernel_size is a positive int"),
        (lambda x: sn.max_pool2d(x, True), sn.ShapeTypeError, "not True"),
        (lambda x: sn.max_pool2d(x, 2, stride=0), sn.ShapeError, "stride must be a positive"),
        (lambda x: sn.avg_pool2d(x, (2, "a")), sn.ShapeTypeError, r"not \(2, 'a'\)"),
        (lambda x: sn.avg_pool2d(x, 2, padding=-1), sn.ShapeError, "non-negative ints, not -1"),
        (lambda x: sn.avg_pool2d(x, 2, padding=1.5), sn.ShapeTypeError, "not 1.5"),
        (lambda x: sn.conv2d(x, x, stride=True), sn.ShapeTypeError, "stride is a positive int"),
        (lambda x: sn.conv2d(x, x, groups=0), sn.ShapeError, "groups must be a positive int"),
        (lambda x: sn.conv2d(x, x, dilation=(1, 1, 1)), sn.ShapeTypeError, "dilation is"),
    ],
)
def test_window_arguments_are_shape_errors_naming_the_input(build, error, message):
    x = sn.tensor("x", shape=(1, 1, 5, 5))
    with pytest.raises(error, match=message) as caught:
        build(x)
    assert "of 'x' (float64(1, 1, 5, 5))" in str(caught.value)
    assert f"test_conv.py, line {build.__code__.co_firstlineno}" in str(caught.value)
