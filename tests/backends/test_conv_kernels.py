"""conv2d, its gradients and the pools on backend "c"'s kernel path
(backends/planning/convolution.py, pools.py): windows views, the packed product kernels
(``Contract``) reading them, the pooling kernels; against the explicit-loop references of
tests/ops/test_conv.py, checking which steps the plan holds and that its product kernels ran
(not their NumPy fallbacks). Each product's form (packed, or im2col's copy and a gemm) is the
CPU schedule's rule (``cpu.packed_product``): the tests of the packed path force it
(``packed_everywhere``), those at the end check the rule's choice and both forms' values."""

import dataclasses
import itertools

import numpy as np
import pytest

import symnb as sn
from symnb.backends import execute
from symnb.backends.c import cache, runner
from symnb.backends.kernels.ir import Contract
from symnb.backends.plan import Launch, Library, View
from symnb.backends.planning.windowed import FlatPadding, Padding
from symnb.backends.schedule import cpu
from symnb.ops.conv import (
    AvgPool2d,
    AvgPool2dGrad,
    Conv2d,
    Conv2dGradFilters,
    Conv2dGradInput,
    MaxPool2d,
    MaxPool2dGrad,
)
from tests.helpers import check, needs_c
from tests.ops.test_conv import CONV_GRID, loop_conv2d, loop_pool, pad_input, padding_arg

pytestmark = needs_c

#: the schedule's rule, kept before ``packed_everywhere`` replaces it
RULE = cpu.packed_product


@pytest.fixture(autouse=True)
def packed_everywhere(monkeypatch):
    """Every convolution product a packed product kernel (the path most tests here check,
    at shapes the rule would give to BLAS); ``monkeypatch.setattr(cpu, "packed_product",
    RULE)`` restores the rule."""
    monkeypatch.setattr(cpu, "packed_product", lambda m, k, n: True)


def loop_conv2d_grads(x, w, g, stride, padding, dilation, groups):
    """The gradients of sum(conv2d(x, w) * g) by the explicit loops: each output element's
    gradient goes to the input pixel and filter tap that made it."""
    o_total, per_group, kh, kw = w.shape
    xp = pad_input(x, padding, (kh, kw), stride, dilation)
    dxp, dw = np.zeros_like(xp), np.zeros_like(w)
    for n, o, i, j in itertools.product(*map(range, g.shape)):
        first = (o // (o_total // groups)) * per_group
        for c, a, b in itertools.product(range(per_group), range(kh), range(kw)):
            r, s = i * stride[0] + a * dilation[0], j * stride[1] + b * dilation[1]
            dw[o, c, a, b] += g[n, o, i, j] * xp[n, first + c, r, s]
            dxp[n, first + c, r, s] += g[n, o, i, j] * w[o, c, a, b]
    top = (xp.shape[2] - x.shape[2]) and _before(padding[0], x.shape[2], kh, stride[0], dilation[0])
    left = (xp.shape[3] - x.shape[3]) and _before(
        padding[1], x.shape[3], kw, stride[1], dilation[1]
    )
    return dxp[:, :, top : top + x.shape[2], left : left + x.shape[3]], dw


def _before(padding, size, kernel, stride, dilation):
    if padding == "same":
        out = -(-size // stride)
        return max((out - 1) * stride + dilation * (kernel - 1) + 1 - size, 0) // 2
    return padding


def kinds_for(f, op_class) -> list[str]:
    """The kinds of the plan's steps that compute nodes of ``op_class``."""
    return [type(s).__name__ for s in f.linker.plan.steps if isinstance(s.node.op, op_class)]


def products_for(f, op_class) -> list:
    """The plan's product kernels (``Contract`` launches) computing nodes of ``op_class``."""
    return [
        s
        for s in f.linker.plan.steps
        if isinstance(s, Launch)
        and isinstance(s.kernel.description.body, Contract)
        and isinstance(s.node.op, op_class)
    ]


def products_ran(f, args, monkeypatch) -> bool:
    """Runs the plan step by step (the Python executor, the same kernels) and says whether
    every product kernel computed its result, none of them handing over to its fallback."""
    fallbacks = {
        id(s.fallback) for s in products_for(f, (Conv2d, Conv2dGradFilters, Conv2dGradInput))
    }
    ran = []
    original = execute.run_library

    def tracked(step, slots):
        ran.append(id(step) in fallbacks)
        return original(step, slots)

    with monkeypatch.context() as patch:
        patch.setattr(execute, "run_library", tracked)
        execute.run(f.linker.plan, list(args))
    return not any(ran)


def compiled_conv(x, w, stride, padding, dilation, groups):
    """loss = sum(conv2d(x, w) * g) and its gradients for x and w, on backend "c"."""
    xs, ws = sn.tensor("x", x.shape, dtype=x.dtype), sn.tensor("w", w.shape, dtype=w.dtype)
    y = sn.conv2d(xs, ws, stride, padding_arg(padding), dilation, groups)
    gs = sn.tensor("g", y.type.shape, dtype=y.type.dtype)
    dx, dw = sn.grad(sn.sum(y * gs), [xs, ws])
    return sn.function([xs, ws, gs], [y, dx, dw], backend="c")


@pytest.mark.parametrize("stride,padding,dilation,groups", CONV_GRID)
def test_conv2d_and_gradients_on_the_kernel_path(
    stride, padding, dilation, groups, rng, monkeypatch
):
    x, w = rng.normal(size=(2, 4, 7, 6)), rng.normal(size=(4, 4 // groups, 3, 2))
    want = loop_conv2d(x, w, stride, padding, dilation, groups)
    g = rng.normal(size=want.shape)
    f = compiled_conv(x, w, stride, padding, dilation, groups)
    y, dx, dw = f(x, w, g)
    want_dx, want_dw = loop_conv2d_grads(x, w, g, stride, padding, dilation, groups)
    check(y, want, rtol=1e-10, atol=1e-12)
    check(dx, want_dx, rtol=1e-10, atol=1e-12)
    check(dw, want_dw, rtol=1e-10, atol=1e-12)
    if groups > 1:  # NumPy's batched matmul, one BLAS call per group
        for op_class in (Conv2d, Conv2dGradFilters, Conv2dGradInput):
            assert "grouped_product" in library_calls(f, op_class)
        return
    for op_class in (Conv2d, Conv2dGradFilters, Conv2dGradInput):
        assert len(products_for(f, op_class)) == 1
    assert products_ran(f, [x, w, g], monkeypatch)
    flat = stride == (1, 1)  # stride 1: flat windows, the input gradient a correlation
    assert ("strided" in views_for(f, Conv2d)) == flat
    assert ("windows" in views_for(f, Conv2d)) != flat
    assert ("_col2im_of" in library_calls(f, Conv2dGradInput)) != flat


def views_for(f, op_class) -> list[str]:
    return [
        s.how
        for s in f.linker.plan.steps
        if isinstance(s, View) and isinstance(s.node.op, op_class)
    ]


def library_calls(f, op_class) -> list[str]:
    steps = [s for s in f.linker.plan.steps if isinstance(s, Library)]
    return [getattr(s.fn, "func", s.fn).__name__ for s in steps if isinstance(s.node.op, op_class)]


@pytest.mark.parametrize("groups", [1, 2])
def test_stride_one_input_gradient_reads_zeros_outside_the_output(groups, rng):
    """Stride 1 at W8b's shapes in small, for each padding (some wider than the filter's span):
    one group, the correlation of the padded output gradient (a padding wider than the span
    leaves it to the shifted sum); two, col2im as a sum kernel over shifted reads, every read
    outside the output gradient landing on a zero of the grid's margins. float32 against the
    loops."""
    for padding in [("valid", "valid"), (2, 0), ("same", "same"), (0, 3)]:
        x = rng.normal(size=(3, 4, 6, 5)).astype("float32")
        w = rng.normal(size=(4, 4 // groups, 3, 3)).astype("float32")
        f = compiled_conv(x, w, (1, 1), padding, (1, 1), groups)
        g = rng.normal(size=loop_conv2d(x, w, (1, 1), padding, (1, 1), groups).shape)
        _, dx, _ = f(x, w, g.astype("float32"))
        want_dx, _ = loop_conv2d_grads(x, w, g, (1, 1), padding, (1, 1), groups)
        check(dx, want_dx, rtol=1e-4, atol=1e-4)
        assert "strided" in views_for(f, Conv2dGradInput)
        wide = padding == (0, 3)  # 3 > the span of 2
        assert bool(products_for(f, Conv2dGradInput)) == (groups == 1 and not wide)


@pytest.mark.parametrize("kernel,dilation", [((3, 3), (1, 1)), ((4, 2), (1, 2)), ((2, 3), (2, 1))])
@pytest.mark.parametrize("padding", [(1, 1), (2, 0), (0, 3), ((1, 2), (0, 2)), ("same", "same")])
def test_flat_padded_planes_share_their_zero_margins(padding, kernel, dilation, rng, monkeypatch):
    """Stride 1, one group: the forward convolution and the input gradient read flat windows
    of planes whose rows share their zero margins (``FlatPadding``): symmetric, one-sided,
    uneven and wider-than-the-filter paddings, dilated, against the loops; the products ran
    (no fallback), and a full correlation has no junk columns (its pitch is out_w)."""
    x = rng.normal(size=(2, 3, 6, 7)).astype("float32")
    w = rng.normal(size=(4, 3, *kernel)).astype("float32")
    if isinstance(padding[0], tuple):  # ((top, bottom), (left, right)): pad x by hand
        (top, bottom), (left, right) = padding
        x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
        padding = (0, 0)
    want = loop_conv2d(x, w, (1, 1), padding, dilation, 1)
    g = rng.normal(size=want.shape).astype("float32")
    f = compiled_conv(x, w, (1, 1), padding, dilation, 1)
    y, dx, dw = f(x, w, g)
    want_dx, want_dw = loop_conv2d_grads(x, w, g, (1, 1), padding, dilation, 1)
    check(y, want, rtol=1e-4, atol=1e-4)
    check(dx, want_dx, rtol=1e-4, atol=1e-4)
    check(dw, want_dw, rtol=1e-4, atol=1e-4)
    assert products_ran(f, [x, w, g], monkeypatch)
    reach = dilation[1] * (kernel[1] - 1)
    for step in f.linker.plan.steps:
        if isinstance(step, Library) and isinstance(step.fn, FlatPadding):
            (_, _), (left, right) = step.fn.pads
            width = (g if isinstance(step.node.op, Conv2dGradInput) else x).shape[3]
            assert step.fn.pitch - width == max(left, right, left + right - reach)
            out_w = width + left + right - reach  # no junk column past the margins' sharing
            assert step.fn.pitch - out_w == max(reach - left, reach - right, 0)


def test_the_padded_planes_copy_falls_back_into_the_planes(rng):
    """The copy of x into the padded planes is a kernel writing through the interior view
    (``Launch.into``); where it declines, its fallback writes the same interior: the values
    stay right through both executors. ``FlatPadding`` alone gives np.pad's values."""
    x = rng.normal(size=(2, 3, 5, 6)).astype("float32")
    w = rng.normal(size=(4, 3, 3, 3)).astype("float32")
    f = compiled_conv(x, w, (1, 1), (1, 2), (1, 1), 1)
    g = rng.normal(size=loop_conv2d(x, w, (1, 1), (1, 2), (1, 1), 1).shape).astype("float32")
    want = [np.array(v) for v in f(x, w, g)]
    f(x + 1, w, g + 1)  # the planes now hold other values: the fallback must write them
    copies = [s for s in f.linker.plan.steps if isinstance(s, Launch) and s.into is not None]
    assert len(copies) == 2  # the forward's input, the input gradient's output gradient
    (declines,) = cache.load_many(
        [
            "#include <stdint.h>\nint sn_kernel(int64_t *a, char **p) "
            "{ (void)a; (void)p; return 1; }\n"
        ]
    )
    ref = type(copies[0].kernel)("declines", None)
    ref.load(None, declines)
    steps = tuple(
        dataclasses.replace(s, kernel=ref) if s in copies else s for s in f.linker.plan.steps
    )
    plan = dataclasses.replace(f.linker.plan, steps=steps)
    for got in (execute.run(plan, [x, w, g]), list(runner.schedule(plan)(x, w, g))):
        for a, b in zip(got, want, strict=True):
            check(a, b, rtol=1e-6, atol=1e-6)
    padding = FlatPadding(((1, 2), (2, 1)), 8, 8 * 8 + 1, "float32")
    planes = padding(x)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 2), (2, 0)))  # the right margin: the next row's
    np.testing.assert_array_equal(planes[:, :, : 8 * 8].reshape(2, 3, 8, 8), padded)
    assert not planes[:, :, 8 * 8 :].any()


def _into_nodes(f) -> list:
    """The op names of the launches writing into padded planes."""
    return [
        s.node.op.op_name()
        for s in f.linker.plan.steps
        if isinstance(s, Launch) and s.into is not None
    ]


def test_a_map_feeding_a_padded_convolution_writes_into_its_planes(rng, monkeypatch):
    """The masked output gradients that only convolutions read (the input gradient's full
    correlation, padded; the filter gradient, through any strides) are written straight into
    the padded planes (no copy kernel), the values still the loops' (and the Python
    executor's); relu(x), which the ReLU's gradient reads too, a result that is also a graph
    output, or one padded two ways keep the copy."""
    x = rng.normal(size=(2, 3, 7, 8)).astype("float32")
    w = rng.normal(size=(4, 3, 3, 3)).astype("float32")
    xs, ws = sn.tensor("x", x.shape, "float32"), sn.tensor("w", w.shape, "float32")
    h = sn.relu(xs)
    y = sn.conv2d(h, ws, padding="same")
    z = sn.conv2d(sn.relu(y), sn.tensor("v", (4, 4, 3, 3), "float32"), padding="valid")
    v = rng.normal(size=(4, 4, 3, 3)).astype("float32")
    loss = sn.sum(z * z)
    inputs = [xs, ws, z.owner.inputs[1]]
    f = sn.function(inputs, [loss, *sn.grad(loss, [xs, ws])], backend="c")
    want = sn.function(inputs, [loss, *sn.grad(loss, [xs, ws])], backend="py")(x, w, v)
    for got in (f(x, w, v), execute.run(f.linker.plan, [x, w, v])):
        for a, b in zip(got, want, strict=True):
            check(a, b, rtol=2e-4, atol=2e-4)
    # the masked output gradients of both input gradients: no copy kernel for them
    assert _into_nodes(f) == ["conv2d", "composite", "composite"]
    assert products_ran(f, [x, w, v], monkeypatch)
    # relu(x) also returned: the planes are reused from call to call, so a copy is made
    g = sn.function([xs, ws], [h, sn.conv2d(h, ws, padding="same")], backend="c")
    got_h, got_y = g(x, w)
    check(got_h, np.maximum(x, 0), atol=0)
    check(
        got_y,
        loop_conv2d(np.maximum(x, 0), w, (1, 1), ("same", "same"), (1, 1), 1),
        rtol=1e-4,
        atol=1e-4,
    )
    assert _into_nodes(g) == ["conv2d"]  # the convolution's own copy kernel
    # two paddings of one map: each convolution copies it into planes of its own
    two = sn.function(
        [xs, ws], [sn.conv2d(h, ws, padding="same"), sn.conv2d(h, ws, padding=2)], backend="c"
    )
    a, b = two(x, w)
    check(
        a,
        loop_conv2d(np.maximum(x, 0), w, (1, 1), ("same", "same"), (1, 1), 1),
        rtol=1e-4,
        atol=1e-4,
    )
    check(b, loop_conv2d(np.maximum(x, 0), w, (1, 1), (2, 2), (1, 1), 1), rtol=1e-4, atol=1e-4)
    assert _into_nodes(two) == ["conv2d", "conv2d"]


def test_conv2d_plan_is_views_and_one_product_kernel(rng, monkeypatch):
    """Valid padding, one group: no NumPy step and no copy in either the forward convolution
    (the input's planes, their flat windows, the product, the image read back, moved) or the
    filter gradient (the windows and the product); the input gradient pads once."""
    x, w = rng.normal(size=(3, 2, 6, 6)).astype("float32"), rng.normal(size=(5, 2, 3, 3))
    w = w.astype("float32")
    f = compiled_conv(x, w, (1, 1), ("valid", "valid"), (1, 1), 1)
    assert kinds_for(f, Conv2d) == ["View", "View", "Launch", "View", "View"]
    assert views_for(f, Conv2d) == ["reshape", "strided", "strided", "axes"]
    assert kinds_for(f, Conv2dGradFilters) == ["View", "View", "Launch", "View"]
    # the kernel computing the output gradient writes it into the padded planes: the
    # planes' margins are the one NumPy step, no copy kernel
    assert library_calls(f, Conv2dGradInput) == []
    planes = [
        s
        for s in f.linker.plan.steps
        if isinstance(s, Library) and isinstance(getattr(s.fn, "__self__", None), FlatPadding)
    ]
    assert len(planes) == 1
    into = [s for s in f.linker.plan.steps if isinstance(s, Launch) and s.into is not None]
    assert [type(s.node.op) for s in into] != [Conv2dGradInput]
    g = np.ones((3, 5, 4, 4), "float32")
    y, dx, dw = f(x, w, g)
    check(y, loop_conv2d(x, w, (1, 1), ("valid", "valid"), (1, 1), 1), rtol=1e-5, atol=1e-5)
    assert y.dtype == dx.dtype == dw.dtype == np.float32
    assert products_ran(f, [x, w, g], monkeypatch)


@pytest.mark.parametrize(
    "kernel,stride,padding",
    [((2, 2), None, (0, 0)), ((3, 2), (1, 2), (1, 1)), ((3, 3), (2, 2), ("same", "same"))],
)
@pytest.mark.parametrize("name", ["max", "avg"])
def test_pools_are_kernels(name, kernel, stride, padding, rng):
    fn, reduce, fill = {
        "max": (sn.max_pool2d, np.max, -np.inf),
        "avg": (sn.avg_pool2d, np.mean, 0.0),
    }[name]
    x = rng.normal(size=(2, 3, 7, 6))
    xs = sn.tensor("x", x.shape)
    y = fn(xs, kernel, stride, padding_arg(padding))
    g = rng.normal(size=y.type.shape)
    dx = sn.grad(sn.sum(y * g), xs)
    f = sn.function([xs], [y, dx], backend="c")
    got, got_dx = f(x)
    check(got, loop_pool(x, kernel, stride or kernel, padding, reduce, fill), atol=1e-12)
    reference = sn.function([xs], [y, dx], backend="py")(x)
    check(got_dx, reference[1], atol=1e-12)
    launches = [s for s in f.linker.plan.steps if isinstance(s, Launch)]
    assert any(type(s.node.op).__name__ == f"{name.capitalize()}Pool2d" for s in launches)


@pytest.mark.parametrize("name", ["max", "avg"])
def test_pools_of_large_windows_are_reductions(name, rng):
    """Windows of more than MAX_WINDOW elements: a reduction kernel over the windows view
    (a map would take one operand per window element)."""
    fn, reduce, fill = {
        "max": (sn.max_pool2d, np.max, -np.inf),
        "avg": (sn.avg_pool2d, np.mean, 0.0),
    }[name]
    x = rng.normal(size=(2, 3, 11, 10))
    xs = sn.tensor("x", x.shape)
    f = sn.function([xs], fn(xs, 5, 2, 1), backend="c")
    check(f(x), loop_pool(x, (5, 5), (2, 2), (1, 1), reduce, fill), atol=1e-12)
    assert views_for(f, (MaxPool2d, AvgPool2d))[-1] == "windows"


def test_max_pool_keeps_nan_and_float32(rng):
    x = rng.normal(size=(1, 2, 4, 4)).astype("float32")
    x[0, 1, 0, 0] = np.nan
    xs = sn.tensor("x", x.shape, dtype="float32")
    f = sn.function([xs], sn.max_pool2d(xs, 2), backend="c")
    got = f(x)
    assert got.dtype == np.float32 and np.isnan(got[0, 1, 0, 0])
    check(got, loop_pool(x, (2, 2), (2, 2), (0, 0), np.max, -np.inf))
    assert kinds_for(f, MaxPool2d) == ["View"] * 4 + ["Launch"]  # a view per window element


@pytest.mark.parametrize(
    "shape,kernel",
    [
        ((2, 3, 6, 8), 2),
        ((1, 2, 6, 9), 3),
        ((1, 1, 4, 6), (2, 3)),
        ((2, 3, 4, 24), 2),
        ((1, 2, 6, 27), 3),
    ],
)
def test_max_pool_gradient_kernel_picks_the_first_maximum(shape, kernel, rng):
    """Tiling windows: one map kernel; ties (a window of zeros, as after a ReLU) send the
    gradient to the first maximum only, and a NaN counts as the maximum (np.argmax's rule)."""
    x = rng.normal(size=shape)
    x[0, 0, :2, :3] = 0.0
    x[-1, -1, 0, 1] = np.nan
    xs = sn.tensor("x", x.shape)
    y = sn.max_pool2d(xs, kernel)
    g = rng.normal(size=y.type.shape)
    dx = sn.grad(sn.sum(y * g), xs)
    got = sn.function([xs], dx, backend="c")
    want = sn.function([xs], dx, backend="py")(x)
    np.testing.assert_array_equal(got(x), want)
    assert kinds_for(got, MaxPool2dGrad)[-2:] == ["Launch", "View"]
    if y.type.shape[3] >= 8:  # rows along out_w: the windows and the route take steps
        sources = [k.source for k in got.kernels if k.kind == "kernel"]
        assert sum("sn_row_step(n, p" in s for s in sources) >= 2
        for step in got.linker.plan.steps:  # the stepped rows' values: the other executor
            if isinstance(step, Launch):
                step.layouts.clear()
        assert np.array_equal(execute.run(got.linker.plan, [x])[0], want, equal_nan=True)


def test_integer_convolution_runs_its_reference(rng):
    """The kernel path takes floats of one dtype; others keep NumPy's result exactly."""
    x = rng.integers(-3, 4, size=(1, 2, 5, 5)).astype("int32")
    w = rng.integers(-3, 4, size=(3, 2, 2, 2)).astype("int32")
    xs, ws = sn.tensor("x", x.shape, dtype="int32"), sn.tensor("w", w.shape, dtype="int32")
    f = sn.function([xs, ws], sn.conv2d(xs, ws, padding=1), backend="c")
    check(f(x, w), loop_conv2d(x, w, (1, 1), (1, 1), (1, 1), 1).astype("int32"))
    assert kinds_for(f, Conv2d) == ["Library"]
    assert any("float32 or float64" in k.reason for k in f.kernels)


def test_conv2d_kernel_path_with_named_batch(rng):
    """The batch may vary between calls: the steps read it from the arrays."""
    xs, ws = sn.tensor("x", ("batch", 2, 6, 5)), sn.tensor("w", (4, 2, 3, 3))
    f = sn.function([xs, ws], sn.conv2d(xs, ws, padding=1), backend="c")
    w = rng.normal(size=(4, 2, 3, 3))
    for batch in (1, 3):
        x = rng.normal(size=(batch, 2, 6, 5))
        check(f(x, w), loop_conv2d(x, w, (1, 1), (1, 1), (1, 1), 1), rtol=1e-10, atol=1e-12)
    assert len(products_for(f, Conv2d)) == 1
    numpy_steps = [
        getattr(s.fn, "func", s.fn).__name__ for s in f.linker.plan.steps if isinstance(s, Library)
    ]
    assert numpy_steps == ["margins"]  # the only NumPy step: the padded planes


@pytest.mark.parametrize("stride", [(2, 1), (1, 1)])
def test_the_python_executor_runs_the_same_plan(stride, rng):
    """The plan run step by step in Python (f.profile's path: the same kernels, views through
    NumPy) gives what runner.c gives, the "strided" views of stride 1 included."""
    x, w = rng.normal(size=(2, 2, 6, 6)), rng.normal(size=(3, 2, 3, 3))
    f = compiled_conv(x, w, stride, (1, 0), (1, 1), 1)
    g = rng.normal(size=loop_conv2d(x, w, stride, (1, 0), (1, 1), 1).shape)
    direct = f(x, w, g)
    leaves = [x, w, g]
    profiled = execute.run(f.linker.plan, leaves)
    for a, b in zip(direct, profiled):
        check(a, b, rtol=1e-12)
    assert len(products_for(f, (Conv2d, Conv2dGradFilters, Conv2dGradInput))) == 3


def test_strided_geometry_refuses_reads_outside_the_source():
    """A "strided" view's bounds (the Python executor's; runner.c's view_strided checks the
    same): inside the source it is the strides asked for, through the source's own strides;
    a view reaching past either end of the bytes the source spans is refused (then the step's
    NumPy fallback runs)."""
    src, like = np.arange(24.0).reshape(2, 3, 4), np.zeros((2, 5))
    # (nd=2, dims: like's axis 0 and 3; coefficients over src's 3 axes; offsets)
    inside = (2, -2, 3, 1, 0, 0, 0, 0, 1, 0, 0, 1)
    shape, strides, offset = execute.strided_geometry(inside, src, like)
    assert (shape, strides, offset) == ([2, 3], [96, 8], 8)
    view = execute.view_strided(View("strided", 0, 1, 2, (), inside, None, None), src, like)
    np.testing.assert_array_equal(view, [[1, 2, 3], [13, 14, 15]])
    past_end = (2, -2, 3, 1, 0, 0, 0, 0, 1, 0, 2, 2)  # the last read: 2*4 + 2 + 12 + 2 = 24
    assert execute.strided_geometry(past_end, src, like) is None
    before_start = (2, -2, 3, 1, 0, 0, 0, 0, -1, 0, 0, 1)
    assert execute.strided_geometry(before_start, src, like) is None
    every_other = (2, -2, 2, 1, 0, 0, 0, 0, 1, 0, 0, 0)  # [n, k] = src[n, 0, 2k]
    view = execute.view_strided(
        View("strided", 0, 1, 2, (), every_other, None, None), src[:, :, ::2], like
    )
    np.testing.assert_array_equal(view, src[:, 0, ::2])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_avg_pool_gradient_of_tiling_windows_is_a_kernel(dtype, rng):
    """Windows that tile the input: one map spreading each window's gradient over it, equal
    to the reference; overlapping windows keep the reference."""
    x = rng.normal(size=(2, 3, 6, 8)).astype(dtype)
    xs = sn.tensor("x", x.shape, dtype=dtype)
    for kernel, stride, kinds in [
        ((2, 2), None, ["View", "Library", "Launch", "View"]),
        ((3, 2), (1, 2), ["Library"]),
    ]:
        y = sn.avg_pool2d(xs, kernel, stride)
        g = rng.normal(size=y.type.shape).astype(dtype)
        dx = sn.grad(sn.sum(y * g), xs)
        got = sn.function([xs], dx, backend="c")
        want = sn.function([xs], dx, backend="py")(x)
        np.testing.assert_array_equal(got(x), want)
        assert kinds_for(got, AvgPool2dGrad) == kinds


@pytest.mark.parametrize("pool", [sn.max_pool2d, sn.avg_pool2d])
def test_pools_read_a_strided_input_in_place(pool, rng):
    """A pool right after a convolution reads the product's (O, N, out_h, out_w) layout: the
    window elements' strided views go through its strides (runner.c and the Python executor
    alike), with the reference's values."""
    x, w = rng.normal(size=(2, 3, 9, 8)), rng.normal(size=(4, 3, 2, 3))
    xs, ws = sn.tensor("x", x.shape), sn.tensor("w", w.shape)
    y = pool(sn.conv2d(xs, ws), 2, 1)
    f = sn.function([xs, ws], y, backend="c")
    want = sn.function([xs, ws], y, backend="py")(x, w)
    check(f(x, w), want, rtol=1e-12, atol=1e-12)
    check(execute.run(f.linker.plan, [x, w])[0], want, rtol=1e-12, atol=1e-12)
    assert "strided" in views_for(f, (MaxPool2d, AvgPool2d))


def test_padding_reuses_its_array_only_once_nothing_holds_it():
    """The padding step copies into the array it made last time when nothing else holds it
    (its margins still hold the fill); an array the caller still holds is never written."""
    pad = Padding(((1, 2), (0, 1)), -np.inf)
    x = np.arange(24.0).reshape(1, 2, 3, 4)
    held = pad(x)
    again = pad(x + 1)
    assert again is not held
    np.testing.assert_array_equal(held[:, :, 1:4, :4], x)
    address = again.__array_interface__["data"][0]
    del again
    reused = pad(x + 2)
    assert reused.__array_interface__["data"][0] == address
    np.testing.assert_array_equal(reused[:, :, 1:4, :4], x + 2)
    assert np.isneginf(reused[:, :, [0, 4, 5], :]).all() and np.isneginf(reused[..., 4]).all()
    assert reused.shape == (1, 2, 6, 5)


def test_a_map_read_by_a_bias_gradient_still_writes_into_the_planes(rng):
    """A sum over the last two axes (a bias gradient) reads the padded planes' interior in
    blocks of short rows as fast as contiguous data, so an output gradient it reads besides
    the convolutions is written into the planes; a bias broadcast along the rows only, whose
    gradient keeps the last axis, would walk the rows one by one, so there the copy stays.
    Values against the Python backend either way."""
    x = rng.normal(size=(2, 3, 7, 8)).astype("float32")
    w = rng.normal(size=(4, 3, 3, 3)).astype("float32")
    xs, ws = sn.tensor("x", x.shape, "float32"), sn.tensor("w", w.shape, "float32")
    y = sn.relu(sn.conv2d(xs, ws, padding="valid"))  # (2, 4, 5, 6)
    cases = (
        ((1, 4, 1, 1), "composite", "conv2d_grad_input"),
        ((1, 1, 1, 4), "conv2d_grad_input", "composite"),
        ((4,), "conv2d_grad_input", "composite"),
    )
    for bias_shape, into, not_into in cases:
        c = sn.tensor("c", bias_shape, "float32")
        cc = rng.normal(size=bias_shape).astype("float32")
        v = sn.tensor("v", (4, 4, 3, 3), "float32")
        z = sn.conv2d(y, v, padding="valid")
        vv = rng.normal(size=(4, 4, 3, 3)).astype("float32")
        out = z + c
        loss = sn.sum(out * out)
        inputs = [xs, ws, v, c]
        outputs = [loss, *sn.grad(loss, [ws, v, c])]
        f = sn.function(inputs, outputs, backend="c")
        want = sn.function(inputs, outputs, backend="py")(x, w, vv, cc)
        for got in (f(x, w, vv, cc), execute.run(f.linker.plan, [x, w, vv, cc])):
            for a, b in zip(got, want, strict=True):
                check(a, b, rtol=2e-4, atol=2e-4)
        assert into in _into_nodes(f) and not_into not in _into_nodes(f), _into_nodes(f)


def test_a_max_pool_gradient_routes_into_the_convolutions_planes(rng):
    """conv -> relu -> max-pool: with the ReLU's mask moved to the pooled side, the routed
    gradient is what the convolution's input gradient pads (and its filter and bias
    gradients read): the route kernel writes it straight into the padded planes, through
    their (N, C, H/2, 2, W/2, 2) tiles. Values against the Python backend, both executors,
    a second call over planes holding the first call's values."""
    x = rng.normal(size=(2, 3, 10, 12)).astype("float32")
    w1 = rng.normal(size=(4, 3, 3, 3)).astype("float32")
    w2 = rng.normal(size=(5, 4, 3, 3)).astype("float32")
    b2 = rng.normal(size=(5,)).astype("float32")
    xs = sn.tensor("x", x.shape, "float32")
    k1, k2 = sn.tensor("k1", w1.shape, "float32"), sn.tensor("k2", w2.shape, "float32")
    bias = sn.tensor("b2", b2.shape, "float32")
    h1 = sn.relu(sn.conv2d(xs, k1))  # (2, 4, 8, 10)
    h2 = sn.relu(sn.conv2d(h1, k2) + sn.reshape(bias, (1, 5, 1, 1)))  # (2, 5, 6, 8)
    pooled = sn.max_pool2d(h2, 2)  # (2, 5, 3, 4)
    loss = sn.sum(pooled * pooled)
    inputs, outputs = [xs, k1, k2, bias], [loss, *sn.grad(loss, [k1, k2, bias])]
    f = sn.function(inputs, outputs, backend="c")
    want = sn.function(inputs, outputs, backend="py")
    assert "max_pool2d_grad" in _into_nodes(f)
    for scale in (1.0, -0.5):
        args = [x * scale, w1, w2, b2]
        for got in (f(*args), execute.run(f.linker.plan, args)):
            for a, b in zip(got, want(*args), strict=True):
                check(a, b, rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize(
    "shape, kernel", [((2, 3, 6, 8), 2), ((1, 2, 6, 27), 3), ((2, 3, 5, 7), 2)]
)
def test_a_positive_max_pool_gradient_skips_windows_not_above_zero(shape, kernel, rng):
    """``MaxPool2dGrad(positive=True)``: a window whose maximum is not above 0 (all
    negative, all zero, a NaN) passes nothing on, the others as the plain gradient; the
    kernels (first positions past the window where it passes nothing), both executors, and
    the reference of windows that do not tile (5 x 7 by 2) against the definition."""
    x = rng.normal(size=shape)
    x[0, 0, :kernel, :kernel] = -np.abs(x[0, 0, :kernel, :kernel])  # all negative
    x[0, 1, :kernel, :kernel] = 0.0
    x[-1, -1, 0, 1] = np.nan
    xs, g = (
        sn.tensor("x", x.shape),
        rng.normal(size=sn.max_pool2d(sn.tensor("v", shape), kernel).type.shape),
    )
    gs = sn.tensor("g", g.shape)
    op = MaxPool2dGrad((kernel, kernel), (kernel, kernel), ((0, 0), (0, 0)), positive=True)
    plain = MaxPool2dGrad((kernel, kernel), (kernel, kernel), ((0, 0), (0, 0)))
    pooled = sn.function([xs], sn.max_pool2d(xs, kernel), backend="py")(x)
    spread = plain.perform(x, np.where(pooled > 0, g, 0.0))  # nothing from windows <= 0
    f = sn.function([xs, gs], op(xs, gs), backend="c")
    for got in (f(x, g), execute.run(f.linker.plan, [x, g])[0]):
        np.testing.assert_array_equal(got, spread)
    assert op.perform(x, g)[0, 0, :kernel, :kernel].tolist() == [[0.0] * kernel] * kernel


def _forms(f) -> dict:
    """Each convolution op class of f's plan -> "packed" (a product kernel) or "gemm"."""
    forms = {}
    for op_class in (Conv2d, Conv2dGradFilters, Conv2dGradInput):
        gemm = any(
            type(s).__name__ == "Gemm" and isinstance(s.node.op, op_class)
            for s in f.linker.plan.steps
        )
        packed = bool(products_for(f, op_class))
        if gemm or packed:
            assert gemm != packed, op_class
            forms[op_class] = "gemm" if gemm else "packed"
    return forms


@pytest.mark.parametrize(
    "shape,filters,kernel,padding,want",
    [
        # one channel, 3x3: the forward's sum K = 9 and the input gradient's M = 1 to BLAS;
        # the filter gradient's output is 9 x 8 (a long sum into a few tiles): BLAS
        ((2, 1, 12, 12), 8, 3, "valid", ("gemm", "gemm", "gemm")),
        # 16 channels, 3x3, 32 filters: forward K = 144, input gradient M = 16 and K = 288,
        # filter gradient output 144 x 32: all packed
        ((4, 16, 10, 10), 32, 3, "same", ("packed", "packed", "packed")),
        # 8 channels, 3x3, 4 filters: the forward (K = 72, output 4 x 2592) packed; the
        # filter gradient's output 72 x 4 < PACKED_OUTPUT_MIN and the input gradient's
        # K = 4*9 = 36: BLAS
        ((8, 8, 20, 20), 4, 3, "valid", ("packed", "gemm", "gemm")),
    ],
)
def test_the_rule_chooses_each_products_form(
    shape, filters, kernel, padding, want, rng, monkeypatch
):
    """Backend "c" plans each product as ``cpu.packed_product`` says from its (M, K, N) (a
    packed product kernel, or im2col's copy and a gemm; the input gradient's gemm a sum of
    shifted reads), and the values of all three match backend "py"'s on both sides of the
    rule."""
    monkeypatch.setattr(cpu, "packed_product", RULE)
    x = rng.normal(size=shape).astype("float32")
    w = rng.normal(size=(filters, shape[1], kernel, kernel)).astype("float32")
    f = compiled_conv(x, w, (1, 1), (padding, padding), (1, 1), 1)
    n, c, h, w_ = shape
    span = 0 if padding == "same" else kernel - 1
    g = rng.normal(size=(n, filters, h - span, w_ - span)).astype("float32")
    forms = _forms(f)
    assert tuple(forms[c] for c in (Conv2d, Conv2dGradFilters, Conv2dGradInput)) == want
    o, out = filters, g.shape[2] * g.shape[3] * n
    taps = c * kernel * kernel
    assert RULE(o, taps, out) == (want[0] == "packed")
    assert RULE(taps, out, o) == (want[1] == "packed")
    assert RULE(c, o * kernel * kernel, n * h * w_) == (want[2] == "packed")
    xs, ws = sn.tensor("x", x.shape, "float32"), sn.tensor("w", w.shape, "float32")
    y = sn.conv2d(xs, ws, padding=padding)
    gs = sn.tensor("g", y.type.shape, "float32")
    reference = sn.function([xs, ws, gs], [y, *sn.grad(sn.sum(y * gs), [xs, ws])], backend="py")
    for got, expected in zip(f(x, w, g), reference(x, w, g), strict=True):
        check(got, expected, rtol=2e-4, atol=2e-4)


def test_the_rule_in_terms_of_the_products_sizes():
    """Packed from PACKED_ROWS_MIN rows, PACKED_INNER_MIN of inner length and
    PACKED_OUTPUT_MIN output elements, each bound included; BLAS below any of them."""
    rows, inner, output = cpu.PACKED_ROWS_MIN, cpu.PACKED_INNER_MIN, cpu.PACKED_OUTPUT_MIN
    assert RULE(rows, inner, output // rows)
    assert not RULE(rows - 1, inner, 10**5)
    assert not RULE(rows, inner - 1, 10**5)
    assert not RULE(rows, 10**5, output // rows - 1)


@pytest.mark.parametrize("batch_dim", ["batch", None])
@pytest.mark.parametrize("channels,filters", [(1, 8), (16, 32)])
def test_the_rule_with_a_batch_known_only_when_called(
    batch_dim, channels, filters, rng, monkeypatch
):
    """A named or unknown batch (as a course's `sn.tensor("x", ("batch", ...))` gives) is a
    size the rule does not know when compiling: the products are planned all the same, and
    the forward and both gradients match backend "py" for batches of 1 and 5."""
    monkeypatch.setattr(cpu, "packed_product", RULE)
    xs = sn.tensor("x", (batch_dim, channels, 9, 9), "float32")
    ws = sn.tensor("w", (filters, channels, 3, 3), "float32")
    y = sn.conv2d(xs, ws, padding=1)
    outputs = [y, *sn.grad(sn.sum(y * y), [xs, ws])]
    f = sn.function([xs, ws], outputs, backend="c")
    reference = sn.function([xs, ws], outputs, backend="py")
    w = rng.normal(size=(filters, channels, 3, 3)).astype("float32")
    for batch in (1, 5):
        x = rng.normal(size=(batch, channels, 9, 9)).astype("float32")
        for got, expected in zip(f(x, w), reference(x, w), strict=True):
            check(got, expected, rtol=2e-4, atol=2e-3)
    assert _forms(f), "no convolution product was planned"


@pytest.mark.parametrize("rule", ["schedule", "packed"])
@pytest.mark.parametrize(
    "x_dims",
    [(None, 8, None, None), ("batch", 8, 9, None), (2, 8, None, 9), (None, None, 9, 9)],
)
@pytest.mark.parametrize(
    "stride,padding,dilation", [(1, 1, 1), (1, 2, 2), (2, 1, 1), (1, "same", 1)]
)
def test_sizes_unknown_when_compiling_run_the_reference(
    rule, x_dims, stride, padding, dilation, rng, monkeypatch
):
    """Sizes other than the batch unknown when compiling (batch, channels, height, width):
    the convolutions run their reference, no padded planes are laid out for them (their
    padding needs the sizes; a map feeding them used to crash the planner), and the forward
    and both gradients match backend "py"."""
    if rule == "schedule":
        monkeypatch.setattr(cpu, "packed_product", RULE)
    xs = sn.tensor("x", x_dims, "float32")
    ws = sn.tensor("w", (8, 8, 3, 3), "float32")
    y = sn.conv2d(sn.tanh(xs), ws, stride=stride, padding=padding, dilation=dilation)
    outputs = [y, *sn.grad(sn.sum(y**2), [xs, ws])]
    f = sn.function([xs, ws], outputs, backend="c")
    reference = sn.function([xs, ws], outputs, backend="py")
    x = rng.normal(size=(2, 8, 9, 9)).astype("float32")
    w = rng.normal(size=(8, 8, 3, 3)).astype("float32")
    for got, expected in zip(f(x, w), reference(x, w), strict=True):
        check(got, expected, rtol=2e-4, atol=2e-3)
