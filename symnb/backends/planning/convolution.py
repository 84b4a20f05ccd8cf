"""Convolution as kernels: windows as strided views, each product one packed product kernel
reading them (``Contract``, symnb/backends/render/contract.py) on the CPU, or im2col's copy
and the linker's product (a device's tiled kernel, cuBLAS) elsewhere.

A window of a padded input is a strided view (a plan ``View``: no copy, no Python call). On the
CPU (``packs``), with one group:

- the forward convolution is the filters (O; C, kh, kw) times the windows (C, kh, kw; N,
  out_h, out_w): at stride 1 the windows of a flat grid (``_flat_windows``: each image's
  outputs a run of consecutive elements, read in place by the product), the (O, N, ...)
  product then viewed as NCHW;
- the filter gradient is the windows times the output gradient moved to (N, out_h, out_w; O),
  its long inner length split between threads;
- the input gradient at stride 1 is the output gradient, padded by the filter's span, as
  flat windows, times the filters flipped and transposed (a full correlation: no window
  gradients, no col2im); at other strides the window gradients (C, kh, kw; N, out_h, out_w)
  are one product, added into place by NumPy's strided adds (``scatter_windows``).

Elsewhere (device linkers, groups) the windows are copied into a C-ordered column matrix by
a copy kernel and multiplied by the linker's product step, the input gradient's window
gradients summed back by a reduction over shifted reads (stride 1) or NumPy. With groups the
products are NumPy's batched matmul. Padding is a NumPy step (``Padding``), shown in
``f.kernels``. Device linkers, whose arrays have no offset, keep the NumPy col2im. The steps'
builder and what pooling shares are in windowed.py.

"""

from __future__ import annotations

import functools

import numpy as np

from symnb.backends.kernels.ir import Map, Unsupported
from symnb.backends.planner import PLANS
from symnb.backends.planning.windowed import (
    COLUMNS,
    FLOATS,
    FlatPadding,
    Steps,
    fixed_sizes,
    float_operands,
    out_size,
    padded_source,
    pads_of,
    window_geometry,
)
from symnb.backends.schedule import cpu
from symnb.core.variable import Variable
from symnb.ops.broadcast import Sum, SumToLike
from symnb.ops.conv import Conv2d, Conv2dGradFilters, Conv2dGradInput, scatter_windows
from symnb.ops.reduce import Mean


def col2im(dcols, x_shape, axes, pads):
    """The window gradients (C*kh*kw, N*out_h*out_w) added back into an input of x_shape
    (every size spelled out: a -1 cannot be inferred from an empty batch)."""
    n, c = x_shape[:2]
    (ah, aw) = axes
    out_h, out_w = (out_size(size, ax, p) for size, ax, p in zip(x_shape[2:], axes, pads))
    grads = dcols.reshape(c, ah.kernel, aw.kernel, n, out_h, out_w).transpose(3, 0, 4, 5, 1, 2)
    return scatter_windows(grads, tuple(x_shape), axes)


def _windows_of(steps, x, axes, order):
    """The windows of x (padded as the op asks) as a view, its axes in ``order`` (of N, C,
    OUT_H, OUT_W, KH, KW)."""
    pads = pads_of(axes, x.type.shape[2:])
    sizes = (
        x.type.shape[0],
        x.type.shape[1],
        *(out_size(n, ax, p) for n, ax, p in zip(x.type.shape[2:], axes, pads)),
        axes[0].kernel,
        axes[1].kernel,
    )
    shape = tuple(sizes[a] for a in order)
    source = padded_source(steps, x, pads)
    return steps.windows(source, steps.temp("windows", shape), window_geometry(axes), order)


def _flat_windows(steps, x, like, pads, kernel, dilation):
    """Stride 1: the windows of x (N, C, H, W) padded by ``pads`` over a flat grid, as a view
    (C, kh, kw, N, P): the planes' rows are ``pitch`` apart (``_flat_planes``), output (y, x)
    is at p = y*pitch + x, and every tap reads plane element p + i*dh*pitch + j*dw, so the
    view's last axis runs over P = (out_h-1)*pitch + out_w consecutive elements (the columns
    x >= out_w between rows compute values nobody reads). Long runs are read in place: 0-8%
    more multiply-adds, no packing. Returns the view and (out_h, out_w, pitch)."""
    n, c, height, width = x.type.shape
    (kh, kw), (dh, dw) = kernel, dilation
    (top, bottom), (left, right) = pads
    out_h = height + top + bottom - dh * (kh - 1)
    out_w = width + left + right - dw * (kw - 1)
    planes, pitch = _flat_planes(steps, x, pads, dw * (kw - 1))
    span = (out_h - 1) * pitch + out_w
    coefficients = (0, 1, 0, 0, 0, dh * pitch, 0, 0, dw, 1, 0, 0, 0, 0, 1)
    target = (5, c, kh, kw, -2, span, *coefficients, 0, 0, 0)
    view = steps.strided(planes, like, steps.temp("flat windows", (c, kh, kw, n, span)), target)
    return view, (out_h, out_w, pitch)


def _flat_planes(steps, x, pads, reach) -> tuple:
    """x's planes (N, C, length) for flat windows whose taps reach ``reach`` columns right of
    their output, and the pitch of their rows: x itself unpadded, else ``FlatPadding``'s
    layout, whose rows share their zero margins. The kernel computing x may have written it
    there already (``output_planes``); else a copy kernel writes it through the interior's
    view (``Launch.into``) on every thread, where NumPy's copy ran on one."""
    n, c, height, width = x.type.shape
    (top, bottom), (left, right) = pads
    if not (top or bottom or left or right):
        return steps.reshape(
            x, steps.temp("planes", (n, c, height * width)), (-2, c, height * width)
        ), width
    placed = steps.linker.planned.get(_planes_key(x, pads, reach))
    if placed is not None:
        return placed
    padding = flat_padding(x.type.shape, pads, reach, x.type.dtype)
    planes, interior = _planes_steps(steps, padding, x.type.shape, [x])
    copied = steps.temp("x in the planes", x.type.shape)
    fallback = steps.fallback(np.array, [x], copied)
    steps.launch(
        steps.copy_kernel(x),
        [x],
        copied,
        fallback,
        "x copied into the padded planes (on every thread)",
        into=interior,
    )
    return planes, padding.pitch


def _planes_key(x, pads, reach) -> tuple:
    """The linker's memo key of x's padded planes (``linker.planned``): (planes, pitch)."""
    return ("planes", id(x), pads, reach)


def flat_padding(shape, pads, reach, dtype) -> FlatPadding:
    """The padded planes of an x of ``shape`` for flat windows reaching ``reach`` columns:
    gap = max(left, right), wider only where the padding outgrows the windows (so that out_w
    <= pitch), and each plane ending with the zeros its last row's windows read past it."""
    _, _, height, width = shape
    (top, bottom), (left, right) = pads
    pitch = width + max(left, right, left + right - reach)
    length = (top + height + bottom) * pitch + left + right - (pitch - width)
    return FlatPadding(pads, pitch, length, dtype)


def _planes_steps(steps, padding, shape, sources) -> tuple:
    """The margins step (N and C from the broadcast of ``sources``) and the view of the
    planes' interior, of ``shape``: (planes, interior)."""
    planes = _margins(steps, padding, shape, sources)
    return planes, planes_view(steps, planes, padding, shape)


def _margins(steps, padding, shape, sources):
    """The padded planes of an x of ``shape``, margins zero (N and C from ``sources``)."""
    return steps.library(
        padding.margins,
        sources,
        steps.temp("padded planes", (*shape[:2], padding.length)),
        "padded planes: zero margins, kept from call to call",
    )


def planes_view(steps, planes, padding, shape, tile=(1, 1), out=None) -> Variable:
    """The view step of the planes' interior, an x of ``shape``, split into ``tile`` blocks
    (``_interior_place``): into ``out``, or a new temporary."""
    if out is None:
        n, c, height, width = shape
        (th, tw) = tile
        tiles = (height // th, th, width // tw, tw) if tile != (1, 1) else (height, width)
        out = steps.temp("planes' interior", (n, c, *tiles))
    return steps.strided(planes, planes, out, _interior_place(padding, shape, tile))


def _interior_place(padding, shape, tile=(1, 1)) -> tuple:
    """The "strided" view (``View`` target) of the planes' interior, an x of ``shape``: (N,
    C, H, W), or with ``tile`` (th, tw) its rows and columns split into blocks, (N, C, H/th,
    th, W/tw, tw) (a max-pool gradient's tiles)."""
    _, c, height, width = shape
    (top, _), (left, _) = padding.pads
    (th, tw), pitch = tile, padding.pitch
    if tile == (1, 1):
        dims, steps = (height, width), (pitch, 1)
    else:
        dims, steps = (height // th, th, width // tw, tw), (th * pitch, pitch, tw, 1)
    plane_axes = [(0, 0, step) for step in steps]
    return (
        2 + len(dims),
        -2,
        c,
        *dims,
        1,
        0,
        0,
        0,
        1,
        0,
        *[v for a in plane_axes for v in a],
        0,
        0,
        top * pitch + left,
    )


def planes_for(linker, steps, x, sources) -> tuple | None:
    """Where x (a 4-d float result, not a graph output) is read only by convolutions and
    sums over its rows (``_reads_planes_fast``), the convolutions those that pad it through
    the same padded planes (a stride-1 convolution's input or output gradient): the planes'
    margins step (appended to ``steps``, N and C from ``sources``), left for the
    convolutions to find (``linker.planned``), so that the kernel computing x writes it into
    their interior (``Launch.into``) instead of a copy kernel doing it after; (planes,
    padding). None where that does not apply (another reader; several layouts)."""
    dtype = x.type.dtype
    if x.type.ndim != 4 or dtype.name not in FLOATS or id(x) in linker.outputs:
        return None
    clients = linker.graph.clients.get(x, [])
    if not all(_reads_planes_fast(c) for c, _ in clients):
        return None  # another reader: an elementwise map would walk rows of 24 one by one
    wanted = {_planes_wanted(linker, client, i) for client, i in clients}
    wanted.discard(None)
    if len(wanted) != 1:
        return None
    ((pads, reach),) = wanted
    padding = flat_padding(x.type.shape, pads, reach, dtype)
    planes = _margins(steps, padding, x.type.shape, sources)
    linker.planned[_planes_key(x, pads, reach)] = (planes, padding.pitch)
    return planes, padding


def output_planes(linker, node, lowered) -> tuple:
    """(steps, into) for a map kernel whose output x the convolutions read through padded
    planes (``planes_for``): the planes' margins and their interior's view, which the kernel
    writes x into; ((), None) where that does not apply (also: several outputs, absent
    axes)."""
    if not isinstance(lowered.kernel.body, Map) or len(lowered.outputs) != 1:
        return (), None
    x, absent, keep = lowered.outputs[0]
    if absent or keep or any(a for _, a in lowered.inputs):
        return (), None
    steps = Steps(linker, node)
    found = planes_for(linker, steps, x, [v for v, _ in lowered.inputs])
    if found is None:
        return (), None
    planes, padding = found
    interior = planes_view(steps, planes, padding, x.type.shape)
    return tuple(steps.steps), interior


#: the readers of a result that take it through any strides at full speed (product kernels)
CONVOLUTION_OPS = (Conv2d, Conv2dGradFilters, Conv2dGradInput)


def _reads_planes_fast(client) -> bool:
    """Whether ``client`` reads a padded plane's interior (rows shorter than their pitch) at
    about the speed of contiguous data: a product kernel, or a sum over the last two axes (a
    bias gradient), which adds the short rows in blocks (``ReduceWriter.block``)."""
    op = getattr(client, "op", None)
    if isinstance(op, CONVOLUTION_OPS):
        return True
    ndim = client.inputs[0].type.ndim
    if isinstance(op, (Sum, Mean)):
        return {ndim - 2, ndim - 1} <= set(op.axis)
    if isinstance(op, SumToLike):  # its result broadcasts back: aligned to the right
        like = client.inputs[1].type.shape
        return ((1, 1) + tuple(like))[-2:] == (1, 1)
    return False


def _planes_wanted(linker, client, i) -> tuple | None:
    """(pads, reach) of the padded planes through which ``client`` reads its input i, or None:
    a stride-1 convolution with one group whose product is packed (``packed``) reading its
    input x (padded as the op asks) or its output gradient (padded for the full
    correlation)."""
    op = getattr(client, "op", None)
    if not isinstance(op, (Conv2d, Conv2dGradInput)) or not packs(linker, op):
        return None
    if tuple(op.stride) != (1, 1) or not _planned_as_kernels(client):
        return None
    if isinstance(op, Conv2d) and i == 0:
        x, w = client.inputs
        axes = op._geometry(w.type.shape)
        pads = pads_of(axes, x.type.shape[2:])
        sizes = product_sizes(op, x.type.shape, w.type.shape, "forward")
    elif isinstance(op, Conv2dGradInput) and i == 1:
        w, _, _ = client.inputs
        shape = client.outputs[0].type.shape
        pads = _correlation_pads(op, w.type.shape, shape[2:])
        sizes = product_sizes(op, shape, w.type.shape, "input")
    else:
        return None
    if not packed(linker, op, sizes):
        return None  # im2col's copy and a gemm: no windows of padded planes
    if pads is None or not any(p for side in pads for p in side):
        return None
    return pads, op.dilation[1] * (w.type.shape[3] - 1)


def _planned_as_kernels(node) -> bool:
    """Whether the node's sizes let its plan take the kernel path (``fixed_sizes``): planes
    for a convolution that runs its reference would be unused, and their padding cannot be
    laid out from unknown sizes."""
    try:
        fixed_sizes(*_sizes_to_fix(node))
    except Unsupported:
        return False
    return True


def _sizes_to_fix(node) -> tuple:
    """The shapes whose sizes but the batch a convolution's plan needs fixed: input,
    filters, output gradient and result, as each plan checks them."""
    (out,) = node.outputs
    if isinstance(node.op, Conv2d):
        x, w = node.inputs
        return x.type.shape, (None, *w.type.shape), out.type.shape
    if isinstance(node.op, Conv2dGradFilters):
        x, g, _ = node.inputs
        return x.type.shape, g.type.shape, (None, *out.type.shape)
    w, g, _ = node.inputs
    return (None, *w.type.shape), g.type.shape, out.type.shape


def _unflattened(steps, product, like, grid, out) -> Variable:
    """The (O, N, P) product of flat windows as NCHW ``out``: (O, N, out_h, out_w) read at
    p = y*pitch + x, then moved."""
    o, n = product.type.shape[:2]
    out_h, out_w, width = grid
    target = (4, o, -2, out_h, out_w, 1, 0, 0, 0, 1, 0, 0, 0, width, 0, 0, 1, 0, 0, 0)
    image = steps.strided(product, like, steps.temp("image", (o, n, out_h, out_w)), target)
    return steps.transpose(image, out, (1, 0, 2, 3))


def packs(linker, op) -> bool:
    """Whether the convolution's products may be packed product kernels reading the windows
    (CPU loops, no groups): no im2col matrix, no col2im. Each product then chooses between
    that and im2col's copy with a BLAS gemm (``packed``)."""
    return linker.dialect.model == "loops" and op.groups == 1


def packed(linker, op, mkn) -> bool:
    """Whether the product (M, K, N = ``mkn``) of a convolution ``op`` is a packed product
    kernel reading the windows in place, rather than a copy laid out for a BLAS gemm: where
    it ``packs``, by the CPU schedule's rule (``cpu.packed_product``)."""
    return packs(linker, op) and cpu.packed_product(*mkn)


def product_sizes(op, x_shape, w_shape, kind) -> tuple:
    """(M, K, N) of a convolution's packed product: ``kind`` "forward" (filters times
    windows), "filters" (the filter gradient: windows times the output gradient) or "input"
    (the input gradient as the full correlation: M = C, K = O*kh*kw, N = the input's
    pixels). A size not known when compiling (a named or unknown batch) is None."""
    n, c = (_known(d) for d in x_shape[:2])
    o, _, kh, kw = (_known(d) for d in w_shape)
    spatial = [_known(d) for d in x_shape[2:]]
    if None in spatial:
        pixels = image = None
    else:
        axes = op._geometry(w_shape)
        pads = pads_of(axes, spatial)
        pixels = _times(n, *(out_size(s, ax, p) for s, ax, p in zip(spatial, axes, pads)))
        image = _times(n, *spatial)
    taps = _times(c, kh, kw)
    if kind == "forward":
        return o, taps, pixels
    if kind == "filters":
        return taps, pixels, o
    return c, _times(o, kh, kw), image


def _known(d) -> int | None:
    return d if isinstance(d, int) else None


def _times(*sizes) -> int | None:
    """The product of the sizes, None when one is not known."""
    return None if None in sizes else int(np.prod(sizes, dtype=np.int64))


def _columns(steps, x, kernel_shape, geometry_axes, fill=0.0):
    """x padded as the op asks, then its windows as the C-ordered column matrix."""
    key = ("cols", id(x), tuple(kernel_shape), steps.node.op.params())
    memo = steps.linker.planned
    if key in memo:
        return memo[key]
    pads = pads_of(geometry_axes, x.type.shape[2:])
    source = padded_source(steps, x, pads, fill)
    geometry = window_geometry(geometry_axes)
    out = [out_size(n, ax, p) for n, ax, p in zip(x.type.shape[2:], geometry_axes, pads)]
    c, (kh, kw) = x.type.shape[1], kernel_shape
    shape = (c, kh, kw, x.type.shape[0], *out)
    view = steps.windows(source, steps.temp("windows", shape), geometry, COLUMNS)
    cols = steps.copy(view, steps.temp("cols", shape))
    flat = steps.reshape(cols, steps.temp("cols2", (c * kh * kw, None)), (c * kh * kw, -1))
    memo[key] = flat
    return flat


def _output_rows(steps, g):
    """The output gradient (N, O, out_h, out_w) as a C-ordered (O, N*out_h*out_w)."""
    key = ("grad rows", id(g))
    memo = steps.linker.planned
    if key in memo:
        return memo[key]
    n, o, h, w = g.type.shape
    moved = steps.transpose(g, steps.temp("g.T", (o, n, h, w)), (1, 0, 2, 3))
    rows = steps.copy(moved, steps.temp("g rows", (o, n, h, w)))
    memo[key] = steps.reshape(rows, steps.temp("g2", (o, None)), (o, -1))
    return memo[key]


@PLANS.register(Conv2d)
def _conv2d(linker, node) -> tuple:
    x, w = node.inputs
    (out,) = node.outputs
    float_operands(node)
    fixed_sizes(*_sizes_to_fix(node))
    op, steps = node.op, Steps(linker, node)
    o, _, kh, kw = w.type.shape
    in_place = packed(linker, op, product_sizes(op, x.type.shape, w.type.shape, "forward"))
    if in_place and tuple(op.stride) == (1, 1):
        axes = op._geometry(w.type.shape)
        pads = pads_of(axes, x.type.shape[2:])
        windows, grid = _flat_windows(steps, x, x, pads, (kh, kw), op.dilation)
        product = steps.temp("w * windows", (o, *windows.type.shape[3:]))
        steps.contract(
            w, windows, product, (1, 3, 2), "filters times windows (packed, no im2col copy)"
        )
        _unflattened(steps, product, x, grid, out)
        return tuple(steps.steps)
    if in_place:
        windows = _windows_of(steps, x, op._geometry(w.type.shape), COLUMNS)
        product = steps.temp("w * windows", (o, *windows.type.shape[3:]))
        steps.contract(
            w, windows, product, (1, 3, 3), "filters times windows (packed, no im2col copy)"
        )
        steps.transpose(product, out, (1, 0, 2, 3))
        return tuple(steps.steps)
    cols = _columns(steps, x, (kh, kw), op._geometry(w.type.shape))
    filters = steps.reshape(w, steps.temp("w2", (o, None)), (o, -1))
    product = steps.product(filters, cols, steps.temp("w2 @ cols", (o, None)), op.groups)
    _, _, out_h, out_w = out.type.shape
    shape = (o, out.type.shape[0], out_h, out_w)
    image = steps.reshape(product, steps.temp("y", shape), (o, -1, out_h, out_w))
    steps.transpose(image, out, (1, 0, 2, 3))
    return tuple(steps.steps)


@PLANS.register(Conv2dGradFilters)
def _conv2d_grad_filters(linker, node) -> tuple:
    """The windows (C, kh, kw; N, out_h, out_w) times the output gradient moved to (N, out_h,
    out_w; O): one packed product, its inner length N*out_h*out_w (tens of thousands) split between
    threads, each adding a partial result. The windows go on the left, read in place (they run
    along the sum); the output gradient on the right, the smaller of the two to transpose while
    packing (or, with few filters and taps, both read as dot products). Without the packed
    product (devices, groups): im2col's columns and one product with the gradient's rows."""
    x, g, like = node.inputs
    (out,) = node.outputs
    float_operands(node)
    fixed_sizes(*_sizes_to_fix(node))
    op, steps = node.op, Steps(linker, node)
    o, per_group, kh, kw = out.type.shape
    if packed(linker, op, product_sizes(op, x.type.shape, out.type.shape, "filters")):
        windows = _windows_of(steps, x, op._geometry(out.type.shape), COLUMNS)
        n, _, h, w = g.type.shape
        columns = steps.transpose(g, steps.temp("g moved", (n, h, w, o)), (0, 2, 3, 1))
        product = steps.temp("windows * g", (per_group, kh, kw, o))
        steps.contract(
            windows,
            columns,
            product,
            (3, 3, 1),
            "windows times the output gradient (packed, no im2col copy)",
        )
        steps.transpose(product, out, (3, 0, 1, 2))
        return tuple(steps.steps)
    cols = _columns(steps, x, (kh, kw), op._geometry(out.type.shape))
    rows = _output_rows(steps, g)
    flat = steps.temp("dw2", (o, per_group * kh * kw))
    steps.product(rows, cols, flat, op.groups, trans_b=True)
    steps.reshape(flat, out, out.type.shape)
    return tuple(steps.steps)


@PLANS.register(Conv2dGradInput)
def _conv2d_grad_input(linker, node) -> tuple:
    w, g, like = node.inputs
    (out,) = node.outputs
    float_operands(node)
    fixed_sizes(*_sizes_to_fix(node))
    op, steps = node.op, Steps(linker, node)
    in_place = packed(linker, op, product_sizes(op, out.type.shape, w.type.shape, "input"))
    if in_place and _full_correlation(steps, w, g, out):
        return tuple(steps.steps)
    if tuple(op.stride) == (1, 1) and linker.can("offset_views"):
        _shifted_grad_input(steps, w, g, out)
        return tuple(steps.steps)
    o, per_group, kh, kw = w.type.shape
    channels = out.type.shape[1]
    dcols = steps.temp("dcols", (channels * kh * kw, None))
    if in_place:
        # the window gradients (C, kh, kw, N, out_h, out_w) as one packed product of the
        # filters and the output gradient, both read through their strides
        taps = steps.transpose(w, steps.temp("w moved", (per_group, kh, kw, o)), (1, 2, 3, 0))
        n, _, h, width = g.type.shape
        rows = steps.transpose(g, steps.temp("g.T", (o, n, h, width)), (1, 0, 2, 3))
        grads = steps.temp("window gradients", (per_group, kh, kw, n, h, width))
        steps.contract(taps, rows, grads, (3, 1, 3), "filters times the output gradient (packed)")
        steps.reshape(grads, dcols, (channels * kh * kw, -1))
    else:
        rows = _output_rows(steps, g)
        filters = steps.reshape(w, steps.temp("w2", (o, None)), (o, -1))
        steps.product(filters, rows, dcols, op.groups, trans_a=True)
    axes = op._geometry(w.type.shape)
    pads = pads_of(axes, out.type.shape[2:])
    fn = functools.partial(_col2im_of, x_shape=out.type.shape[1:], axes=axes, pads=pads)
    steps.library(
        fn,
        [dcols, g],
        out,
        "window gradients added into place (NumPy's strided adds, kh*kw of them)",
    )
    return tuple(steps.steps)


def _full_correlation(steps, w, g, out) -> bool:
    """Stride 1: the input gradient is the output gradient, padded by the filter's span less
    the input's padding, correlated with the filters flipped and transposed (C, O, kh, kw):
    one packed product over its windows, no window gradients and no col2im. False (nothing
    planned) for other strides, or padding wider than the span."""
    op, (o, c, kh, kw) = steps.node.op, w.type.shape
    pads = _correlation_pads(op, w.type.shape, out.type.shape[2:])
    if tuple(op.stride) != (1, 1) or pads is None:
        return False
    coefficients = (0, 1, 0, 0, 1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, -1)
    flipped = steps.strided(
        w,
        w,
        steps.temp("w flipped", (c, o, kh, kw)),
        (4, c, o, kh, kw, *coefficients, 0, 0, kh - 1, kw - 1),
    )
    windows, grid = _flat_windows(steps, g, g, pads, (kh, kw), op.dilation)
    product = steps.temp("w * windows", (c, *windows.type.shape[3:]))
    steps.contract(
        flipped,
        windows,
        product,
        (1, 3, 2),
        "flipped filters times the output gradient's windows (packed, no col2im)",
    )
    _unflattened(steps, product, g, grid, out)
    return True


def _correlation_pads(op, w_shape, sizes) -> tuple | None:
    """The output gradient's padding for the full correlation: the filter's span less the
    input's padding, per axis; None where the input's padding is wider than the span."""
    pads = []
    for ax, n in zip(op._geometry(w_shape), sizes):
        span = ax.dilation * (ax.kernel - 1)
        before, after = ax.pads(n)
        pads.append((span - before, span - after))
    return None if min(p for side in pads for p in side) < 0 else tuple(pads)


def _shifted_grad_input(steps, w, g, out) -> None:
    """Stride 1: col2im as a reduction kernel, no scatter. The output gradient is laid out on
    a grid with zero margins (``shifted_rows``), so that the window gradients ``D = w2.T @ G``
    hold a zero wherever a window position falls outside the output; then the input pixel
    (y, x) is the sum over the window offsets (i, j) of D at (y - i*dh, x - j*dw), a fixed
    shift per offset: one strided view of D over (N, C, kh, kw, H, W) and a sum kernel over
    (kh, kw). The margins add about (kh-1)/oh + (kw-1)/ow to the product."""
    op, (o, _, kh, kw) = steps.node.op, w.type.shape
    layout = shifted_layout(op, w.type.shape, out.type.shape[2:], g.type.shape[2:])
    lead, (hp, wp), (top, left) = layout
    rows = steps.library(
        functools.partial(shifted_rows, grid=(hp, wp), lead=lead),
        [g],
        steps.temp("g grid", (o, None)),
        "output gradient on a grid with zero margins (NumPy)",
    )
    filters = steps.reshape(w, steps.temp("w2", (o, None)), (o, -1))
    channels, height, width = out.type.shape[1:]
    dcols = steps.temp("dcols", (channels * kh * kw, None))
    steps.product(filters, rows, dcols, op.groups, trans_a=True)
    planes = steps.reshape(
        dcols, steps.temp("dcols3", (channels, kh * kw, None)), (channels, kh * kw, -1)
    )
    dh, dw = op.dilation
    coefficients = (
        (0, 0, hp * wp),
        (1, 0, 0),
        (0, kw, -dh * wp),
        (0, 1, -dw),
        (0, 0, wp),
        (0, 0, 1),
    )
    dims = (-2, channels, kh, kw, height, width)  # -2: the batch, g's axis 0
    target = (6, *dims, *(c for row in coefficients for c in row), 0, 0, lead + top * wp + left)
    shape = (g.type.shape[0], channels, kh, kw, height, width)
    shifted = steps.strided(planes, g, steps.temp("shifted", shape), target)
    steps.reduce(shifted, out, "sum", mean=False, acc=steps.dtype.name)


def shifted_layout(op, w_shape, sizes, out_sizes) -> tuple:
    """(lead, (grid h, grid w), (top, left)) of ``shifted_rows``' grid: each image an out_h x
    out_w block with margins after it wide enough that every shifted read outside the output
    lands on a zero (a read left of column 0 wraps into the row before's margin), ``lead``
    zeros before the first image for the reads above it; (top, left) the input's padding."""
    axes = op._geometry(w_shape)
    margins, pads = [], []
    for ax, n in zip(axes, sizes):
        before, after = ax.pads(n)
        span = ax.dilation * (ax.kernel - 1)
        margins.append(max(span - before, span - after, 0))
        pads.append(before)
    (mh, mw), (oh, ow) = margins, out_sizes
    wp = ow + mw
    return mh * wp + mw, (oh + mh, wp), tuple(pads)


def shifted_rows(g, grid, lead):
    """The output gradient (N, O, oh, ow) as (O, lead + N*grid h*grid w): each image at the
    top left of its grid block, zeros elsewhere."""
    n, o, oh, ow = g.shape
    out = np.zeros((o, lead + n * grid[0] * grid[1]), g.dtype)
    out[:, lead:].reshape(o, n, *grid)[:, :, :oh, :ow] = g.transpose(1, 0, 2, 3)
    return out


def _col2im_of(dcols, g, x_shape, axes, pads):
    return col2im(dcols, (g.shape[0], *x_shape), axes, pads)
