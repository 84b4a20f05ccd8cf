"""Convolution and pooling on backend "c": windows as strided views, im2col as a copy kernel,
the contraction as one ``?gemm`` (the plan's BLAS step).

A window of a padded input is a strided view (a plan ``View`` of kind "windows": no copy, no
Python call). The forward convolution copies that view into a C-ordered column matrix
``cols`` (C*kh*kw, N*out_h*out_w) with a copy kernel of the kernel description (a map whose
input has the windows' strides), multiplies it by the filters as one gemm, and views the
(O, N, out_h, out_w) product as NCHW; the next kernel reads that layout through strides. The
filter gradient is one gemm of the output gradient (transposed to (O, N*out_h*out_w) by a
copy kernel) with ``cols``, never on OpenBLAS's threads (runner.c splits a large one between
OpenMP threads). The input gradient is one gemm giving the
window gradients; with stride 1 they are computed over a grid with zero margins and summed
back into place by a reduction kernel over shifted reads (a View of kind "strided"), with
other strides NumPy's strided adds (``scatter_windows``: kh*kw of them). Pools of at most
MAX_WINDOW elements are map kernels over their output reading each window element as a
strided view (larger ones a reduction over the windows view); the max-pool gradient of
windows that tile the input is two maps: each window's first maximum, then the gradient
routed to it. With groups, the contraction is NumPy's batched matmul (one BLAS call per
group). Padding is a NumPy step (a zeroed array and one copy), shown in ``f.kernels``.
Device linkers, whose arrays have no offset, keep the reduction pools and the NumPy col2im.

Every step's fallback computes the same value with NumPy, so a layout the runner declines still
gives the right answer. Ops whose dtype, sizes or parameters this plan does not take (integer
or mixed dtypes, sizes not fixed by the types) raise Unsupported: the op's reference runs.
"""

from __future__ import annotations

import dataclasses
import functools
import sys

import numpy as np

from symnb.backends.c import blas
from symnb.backends.c.listing import KernelInfo
from symnb.backends.execute import strided_geometry, view_at, windows_view
from symnb.backends.kernels.build import Builder, fixed_size
from symnb.backends.kernels.ir import Contract, Kernel, Load, Map, Operand, Reduce, Unsupported
from symnb.backends.plan import Gemm, Library, View
from symnb.backends.planner import Planners
from symnb.core.types import TensorType
from symnb.core.variable import Variable
from symnb.ops.conv import (
    AvgPool2d,
    AvgPool2dGrad,
    Conv2d,
    Conv2dGradFilters,
    Conv2dGradInput,
    MaxPool2d,
    MaxPool2dGrad,
    scatter_windows,
)

WINDOWED = Planners()
#: the canonical axes of a windows view: (N, C, out_h, out_w, kh, kw)
N, C, OUT_H, OUT_W, KH, KW = range(6)
COLUMNS = (C, KH, KW, N, OUT_H, OUT_W)  # im2col's order: rows (c, i, j), columns (n, y, x)
#: pooling reduces the window axes; with the output's last axis innermost, each pass of the
#: kernel combines a row of outputs with one window element (rows of kw elements would each
#: cost as much to start as to run)
POOLED = (N, C, KH, KW, OUT_H, OUT_W)
#: the max-pool gradient's space: the input itself when the windows tile it exactly
TILED = (N, C, OUT_H, KH, OUT_W, KW)
FLOATS = ("float32", "float64")
#: the dtype of a position inside a pooling window
POSITION = "int32"


class Steps:
    """The steps one node becomes, over temporaries of its own (each with a slot); every
    step's fallback computes its value with NumPy."""

    def __init__(self, linker, node):
        self.linker, self.node, self.steps = linker, node, []
        self.dtype = node.outputs[0].type.dtype

    def temp(self, name: str, shape: tuple) -> Variable:
        return Variable(TensorType(self.dtype, shape), name=name)

    def slot(self, var) -> int:
        return self.linker._slot_or_new(var)

    def fallback(self, fn, ins, out, kind="library") -> Library:
        ins = tuple(self.slot(v) for v in ins)
        return Library(fn, ins, (self.slot(out),), (out.type.dtype,), self.node, kind)

    def note(self, kind: str, reason: str, source=None) -> None:
        self.linker.kernels.append(KernelInfo(kind, self.node, source, reason))

    def library(self, fn, ins, out, reason: str, kind: str = "library") -> Variable:
        self.steps.append(self.fallback(fn, ins, out, kind))
        self.note(kind, reason)
        return out

    def view(self, how, src, out, reference, axes=(), target=()) -> Variable:
        fallback = self.fallback(reference, [src], out)
        step = View(how, self.slot(src), None, fallback.outs[0], tuple(axes), tuple(target),
                    self.node, fallback)  # fmt: skip
        self.steps.append(step)
        self.note("view", f"{how} view (no copy)")
        return out

    def reshape(self, src, out, shape) -> Variable:
        """``src`` viewed as ``shape`` (ints; -1 the rest)."""
        reference = functools.partial(_reshaped, shape=shape)
        return self.view("reshape", src, out, reference, target=shape)

    def transpose(self, src, out, axes) -> Variable:
        return self.view("axes", src, out, functools.partial(np.transpose, axes=axes), axes)

    def strided(self, src, like, out, target) -> Variable:
        """A "strided" view of ``src`` (see the plan's View), its batch from ``like``."""
        fallback = self.fallback(functools.partial(strided_view, target=target), [src, like], out)
        step = View("strided", self.slot(src), self.slot(like), fallback.outs[0], (),
                    tuple(target), self.node, fallback)  # fmt: skip
        self.steps.append(step)
        self.note("view", "shifted reads (strided view, no copy)")
        return out

    def windows(self, src, out, geometry, order) -> Variable:
        reference = functools.partial(windows_view, geometry=geometry, order=order)
        return self.view("windows", src, out, reference, order, geometry)

    def kernel(self, kernel, src, out, absent=(), note="") -> Variable:
        fallback = self.fallback(functools.partial(_kernel_reference, kernel.body), [src], out)
        return self.launch(kernel, [src], out, fallback, note, absent)

    def launch(self, kernel, ins, out, fallback, note, absent=()) -> Variable:
        """``kernel`` over ``ins`` into ``out`` (lacking the ``absent`` axes of the space);
        an input is a variable or (variable, the axes of the space it lacks)."""
        source = self.linker.dialect.render(kernel)
        outs = [(out, out.type.dtype, absent, False)]
        empty = "decline" if isinstance(kernel.body, (Reduce, Contract)) else "skip"
        ins = [v if isinstance(v, tuple) else (v, ()) for v in ins]
        step = self.linker.launch(self.node, source, ins, outs, None, empty, fallback,
                                  kernel)  # fmt: skip
        self.steps.append(step)
        self.note("kernel", note, source)
        return out

    def contract(self, left, right, out, groups, note) -> Variable:
        """``out`` (m..., n...) = the sum over the k axes of ``left`` (m..., k...) times
        ``right`` (k..., n...), ``groups`` = how many axes m, k and n have: one packed product
        kernel (``render/contract.py``) reading both through their strides."""
        gm, gk, gn = groups
        dtype = self.dtype.name
        b = Builder(self.linker.dialect)
        b.inputs += [Operand(dtype), Operand(dtype)]
        b.input_vars += [left, right]  # two operands even when one variable
        lv, rv = b.emit(Load(0, dtype)), b.emit(Load(1, dtype))
        columns = fixed_size(right.type.shape[gk:])
        body = Contract(b.mul(lv, rv), lv, rv, dtype, groups, columns)
        space = left.type.shape + right.type.shape[gk:]
        kernel = Kernel(tuple(b.inputs), (Operand(dtype),), tuple(b.values), body,
                        fixed_size(space))  # fmt: skip
        fallback = self.fallback(functools.partial(np.tensordot, axes=gk), [left, right], out)
        nd = gm + gk + gn
        ins = [(left, tuple(range(gm + gk, nd))), (right, tuple(range(gm)))]
        return self.launch(kernel, ins, out, fallback, note, tuple(range(gm, gm + gk)))

    def copy(self, src, out) -> Variable:
        """``src`` (any strides) copied into a new C-ordered array by a map kernel."""
        b = Builder(self.linker.dialect)
        value = b.variable(src)
        kernel = Kernel(tuple(b.inputs), (Operand(self.dtype.name),), tuple(b.values),
                        Map(((0, value),)), fixed_size(src.type.shape))  # fmt: skip
        return self.kernel(kernel, src, out, note="copy kernel: windows into columns")

    def reduce(self, src, out, kind: str, mean: bool, acc=None) -> Variable:
        """``kind`` of ``src``'s axes 2 and 3 by a reduction kernel (a sum in float64 unless
        ``acc`` says otherwise)."""
        b = Builder(self.linker.dialect)
        acc = acc or ("float64" if kind == "sum" else self.dtype.name)
        value = b.convert(b.variable(src), acc)
        body = Reduce(value, kind, acc, mean)
        kernel = Kernel(tuple(b.inputs), (Operand(self.dtype.name),), tuple(b.values), body,
                        fixed_size(src.type.shape))  # fmt: skip
        return self.kernel(kernel, src, out, (2, 3), note=f"{kind} over each window")

    def product(self, a, b, out, groups: int, trans_a=False, trans_b=False,
                serial=False) -> Variable:  # fmt: skip
        """``a @ b`` (each transposed when asked), one gemm (on one BLAS thread when
        ``serial``); per group with groups."""
        if groups > 1:
            reference = functools.partial(grouped_product, groups=groups, trans_a=trans_a,
                                          trans_b=trans_b)  # fmt: skip
            return self.library(reference, [a, b], out, "NumPy's batched matmul, one BLAS call "
                                "per group", kind="blas")  # fmt: skip
        if trans_a:
            a = self.transpose(a, self.temp("a.T", (None, None)), (1, 0))
        if trans_b:
            b = self.transpose(b, self.temp("b.T", (None, None)), (1, 0))
        step = self.linker.product_step(self, a, b, out)
        serial = serial and isinstance(step, Gemm)  # a device's product is a kernel
        self.steps.append(dataclasses.replace(step, serial=True) if serial else step)
        return out


def gemm_step(steps: Steps, a, b, out) -> Gemm:
    """``out = a @ b`` of two matrices as one ``?gemm`` (backend "c"'s ``product_step``)."""
    ref = blas.gemm_ref(steps.dtype)
    fallback = steps.fallback(np.matmul, [a, b], out, kind="blas")
    step = Gemm(None, None, steps.slot(a), steps.slot(b), None, fallback.outs[0], steps.dtype,
                False, ref, steps.node, fallback)  # fmt: skip
    steps.note("blas", blas.describe(ref))
    return step


# -- NumPy references of the intermediate steps --------------------------------------------------
def window_ranks(kh, kw):
    """Each window element's position in the window, over the max-pool gradient's space."""
    return np.arange(kh * kw, dtype=POSITION).reshape(1, 1, 1, kh, 1, kw)


def strided_view(src, like, target):
    """A "strided" view by NumPy (the fallback when runner.c declines one)."""
    return view_at(src, *strided_geometry(target, src, like))


def _reshaped(a, shape):
    return np.reshape(a, shape)


def _kernel_reference(body, x):
    if isinstance(body, Map):
        return np.ascontiguousarray(x)
    reduce = {"max": np.max, "sum": np.mean if body.mean else np.sum}[body.kind]
    return reduce(x, axis=(2, 3))


def grouped_product(a, b, groups, trans_a=False, trans_b=False):
    """Per group g: ``a[g] @ b[g]``, a and b split by rows into ``groups`` blocks (each
    block transposed first when asked); the products stacked by rows."""
    a = a.reshape(groups, a.shape[0] // groups, -1)
    b = b.reshape(groups, b.shape[0] // groups, -1)
    a = a.transpose(0, 2, 1) if trans_a else a
    b = b.transpose(0, 2, 1) if trans_b else b
    out = np.matmul(a, b)
    return out.reshape(groups * out.shape[1], out.shape[2])


def padded(x, pads, fill, out=None):
    """x with ((top, bottom), (left, right)) of ``fill`` around its last two axes; into
    ``out`` when it has the shape and dtype and its margins already hold the fill."""
    (top, bottom), (left, right) = pads
    n, c, h, w = x.shape
    shape = (n, c, h + top + bottom, w + left + right)
    if out is None or out.shape != shape or out.dtype != x.dtype:
        out = np.full(shape, fill, x.dtype)
    out[:, :, top : top + h, left : left + w] = x
    return out


class Padding:
    """The padding step's callable: ``padded`` into the array it made last time when nothing
    else holds it any more, whose margins still hold the fill, so only the interior is copied.
    A new array each call cost page faults and a write of all of it (W8b's output gradient:
    12.8 MB, about 1.4 ms on one thread, where the copy alone is a third of it)."""

    __name__ = "padded"

    def __init__(self, pads, fill):
        self.pads, self.fill, self.last = pads, fill, None

    def __call__(self, x):
        last = self.last  # references: self.last, this name, getrefcount's argument
        reusable = last is not None and sys.getrefcount(last) == 3
        out = padded(x, self.pads, self.fill, last if reusable else None)
        self.last = out
        return out


def col2im(dcols, x_shape, axes, pads):
    """The window gradients (C*kh*kw, N*out_h*out_w) added back into an input of x_shape."""
    n, c = x_shape[:2]
    (ah, aw) = axes
    parts = dcols.reshape(c, ah.kernel, aw.kernel, n, -1)
    out_w = _out(x_shape[3], aw, pads[1])
    grads = parts.reshape(parts.shape[:4] + (-1, out_w)).transpose(3, 0, 4, 5, 1, 2)
    return scatter_windows(grads, tuple(x_shape), axes)


def _out(size, axis, pads) -> int:
    return (size + pads[0] + pads[1] - axis.dilation * (axis.kernel - 1) - 1) // axis.stride + 1


# -- the ops -----------------------------------------------------------------------------------
def _fixed(*shapes) -> None:
    for shape in shapes:
        if not all(isinstance(d, int) for d in shape[1:]):
            raise Unsupported("sizes other than the batch must be fixed for the kernel path")


def _float(node) -> None:
    dtypes = {v.type.dtype.name for v in (*node.inputs, *node.outputs)}
    if len(dtypes) != 1 or not dtypes <= set(FLOATS):
        raise Unsupported(f"{'/'.join(sorted(dtypes))}: the kernel path takes float32 or "
                          "float64 operands of one dtype")  # fmt: skip


def _padded(steps, x, pads, fill=0.0):
    """x with ``pads`` ((top, bottom), (left, right)) of ``fill`` around its last two axes
    (a NumPy step), or x itself without padding."""
    if not any(p for side in pads for p in side):
        return x
    shape = x.type.shape[:2] + tuple(n + a + b for n, (a, b) in zip(x.type.shape[2:], pads))
    return steps.library(Padding(pads, fill), [x], steps.temp("padded", shape), "padding (NumPy)")


def _windows_of(steps, x, axes, order):
    """The windows of x (padded as the op asks) as a view, its axes in ``order`` (of N, C,
    OUT_H, OUT_W, KH, KW)."""
    pads = tuple(ax.pads(n) for ax, n in zip(axes, x.type.shape[2:]))
    sizes = (x.type.shape[0], x.type.shape[1],
             *(_out(n, ax, p) for n, ax, p in zip(x.type.shape[2:], axes, pads)),
             axes[0].kernel, axes[1].kernel)  # fmt: skip
    shape = tuple(sizes[a] for a in order)
    source = _padded(steps, x, pads)
    return steps.windows(source, steps.temp("windows", shape), _window_geometry(axes), order)


def _flat_windows(steps, source, like, kernel, dilation):
    """Stride 1: the windows of ``source`` (N, C, H, W, padded) over a flat grid, as a view
    (C, kh, kw, N, P): output (y, x) is at p = y*W + x, and every tap reads source element
    p + i*dh*W + j*dw of its plane, so the view's last axis runs over P = (out_h-1)*W +
    out_w consecutive elements (the columns x >= out_w between rows compute values nobody
    reads). Long runs pack as copies: 7-8% more multiply-adds, far less packing."""
    n, c, height, width = source.type.shape
    (kh, kw), (dh, dw) = kernel, dilation
    out_h, out_w = height - dh * (kh - 1), width - dw * (kw - 1)
    span = (out_h - 1) * width + out_w
    planes = steps.reshape(source, steps.temp("planes", (n, c, height * width)),
                           (-2, c, height * width))  # fmt: skip
    coefficients = (0, 1, 0, 0, 0, dh * width, 0, 0, dw, 1, 0, 0, 0, 0, 1)
    target = (5, c, kh, kw, -2, span, *coefficients, 0, 0, 0)
    view = steps.strided(planes, like, steps.temp("flat windows", (c, kh, kw, n, span)), target)
    return view, (out_h, out_w, width)


def _unflattened(steps, product, like, grid, out) -> Variable:
    """The (O, N, P) product of flat windows as NCHW ``out``: (O, N, out_h, out_w) read at
    p = y*W + x, then moved."""
    o, n = product.type.shape[:2]
    out_h, out_w, width = grid
    target = (4, o, -2, out_h, out_w, 1, 0, 0, 0, 1, 0, 0, 0, width, 0, 0, 1, 0, 0, 0)
    image = steps.strided(product, like, steps.temp("image", (o, n, out_h, out_w)), target)
    return steps.transpose(image, out, (1, 0, 2, 3))


def packs(linker, op) -> bool:
    """Whether the convolution's products are packed product kernels reading the windows
    (CPU loops, no groups): no im2col matrix, no col2im."""
    return linker.dialect.model == "loops" and op.groups == 1


def _columns(steps, x, kernel_shape, geometry_axes, fill=0.0):
    """x padded as the op asks, then its windows as the C-ordered column matrix."""
    key = ("cols", id(x), tuple(kernel_shape), steps.node.op.params())
    memo = steps.linker.planned
    if key in memo:
        return memo[key]
    pads = tuple(ax.pads(n) for ax, n in zip(geometry_axes, x.type.shape[2:]))
    source = _padded(steps, x, pads, fill)
    geometry = _window_geometry(geometry_axes)
    out = [_out(n, ax, p) for n, ax, p in zip(x.type.shape[2:], geometry_axes, pads)]
    c, (kh, kw) = x.type.shape[1], kernel_shape
    shape = (c, kh, kw, x.type.shape[0], *out)
    view = steps.windows(source, steps.temp("windows", shape), geometry, COLUMNS)
    cols = steps.copy(view, steps.temp("cols", shape))
    flat = steps.reshape(cols, steps.temp("cols2", (c * kh * kw, None)), (c * kh * kw, -1))
    memo[key] = flat
    return flat


def _window_geometry(axes) -> tuple:
    (ah, aw) = axes
    return (ah.kernel, aw.kernel, ah.stride, aw.stride, ah.dilation, aw.dilation, 0, 0)


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


@WINDOWED.register(Conv2d)
def _conv2d(linker, node) -> tuple:
    x, w = node.inputs
    (out,) = node.outputs
    _float(node)
    _fixed(x.type.shape, (None, *w.type.shape), out.type.shape)
    op, steps = node.op, Steps(linker, node)
    o, _, kh, kw = w.type.shape
    if packs(linker, op) and tuple(op.stride) == (1, 1):
        axes = op._geometry(w.type.shape)
        source = _padded(steps, x, tuple(ax.pads(n) for ax, n in zip(axes, x.type.shape[2:])))
        windows, grid = _flat_windows(steps, source, x, (kh, kw), op.dilation)
        product = steps.temp("w * windows", (o, *windows.type.shape[3:]))
        steps.contract(w, windows, product, (1, 3, 2), "filters times windows (packed, "
                       "no im2col copy)")  # fmt: skip
        _unflattened(steps, product, x, grid, out)
        return tuple(steps.steps)
    if packs(linker, op):
        windows = _windows_of(steps, x, op._geometry(w.type.shape), COLUMNS)
        product = steps.temp("w * windows", (o, *windows.type.shape[3:]))
        steps.contract(w, windows, product, (1, 3, 3), "filters times windows (packed, "
                       "no im2col copy)")  # fmt: skip
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


@WINDOWED.register(Conv2dGradFilters)
def _conv2d_grad_filters(linker, node) -> tuple:
    """One gemm of the output gradient's rows with the columns, never on OpenBLAS's threads
    (``serial``): its inner length (N*out_h*out_w, W8b 36864) dwarfs its rows and columns (O,
    C*kh*kw: 64, 288), which are all OpenBLAS splits between threads, and the threads meet at
    every block of the inner length; on the shared 2-core machine a thread descheduled there
    stalls the other (W8b's product: 15 ms on one thread, 40 ms-1 s on two under load).
    runner.c splits one of 2^28 multiply-adds or more between OpenMP threads by blocks of
    columns instead, which meet once."""
    x, g, like = node.inputs
    (out,) = node.outputs
    _float(node)
    _fixed(x.type.shape, g.type.shape, (None, *out.type.shape))
    op, steps = node.op, Steps(linker, node)
    o, per_group, kh, kw = out.type.shape
    if packs(linker, op):
        # the windows on the left: both operands run along the sum (N, out_h, out_w), and a
        # left panel packs such runs as copies; the output gradient, on the right, is the
        # smaller of the two to transpose while packing
        windows = _windows_of(steps, x, op._geometry(out.type.shape), COLUMNS)
        n, _, h, w = g.type.shape
        columns = steps.transpose(g, steps.temp("g moved", (n, h, w, o)), (0, 2, 3, 1))
        product = steps.temp("windows * g", (per_group, kh, kw, o))
        steps.contract(windows, columns, product, (3, 3, 1), "windows times the output "
                       "gradient (packed, no im2col copy)")  # fmt: skip
        steps.transpose(product, out, (3, 0, 1, 2))
        return tuple(steps.steps)
    cols = _columns(steps, x, (kh, kw), op._geometry(out.type.shape))
    rows = _output_rows(steps, g)
    flat = steps.temp("dw2", (o, per_group * kh * kw))
    steps.product(rows, cols, flat, op.groups, trans_b=True, serial=True)
    steps.reshape(flat, out, out.type.shape)
    return tuple(steps.steps)


@WINDOWED.register(Conv2dGradInput)
def _conv2d_grad_input(linker, node) -> tuple:
    w, g, like = node.inputs
    (out,) = node.outputs
    _float(node)
    _fixed((None, *w.type.shape), g.type.shape, out.type.shape)
    op, steps = node.op, Steps(linker, node)
    if packs(linker, op) and _full_correlation(steps, w, g, out):
        return tuple(steps.steps)
    if tuple(op.stride) == (1, 1) and linker.offset_views:
        _shifted_grad_input(steps, w, g, out)
        return tuple(steps.steps)
    o, per_group, kh, kw = w.type.shape
    channels = out.type.shape[1]
    dcols = steps.temp("dcols", (channels * kh * kw, None))
    if packs(linker, op):
        # the window gradients (C, kh, kw, N, out_h, out_w) as one packed product of the
        # filters and the output gradient, both read through their strides
        taps = steps.transpose(w, steps.temp("w moved", (per_group, kh, kw, o)), (1, 2, 3, 0))
        n, _, h, width = g.type.shape
        rows = steps.transpose(g, steps.temp("g.T", (o, n, h, width)), (1, 0, 2, 3))
        grads = steps.temp("window gradients", (per_group, kh, kw, n, h, width))
        steps.contract(taps, rows, grads, (3, 1, 3), "filters times the output gradient "
                       "(packed)")  # fmt: skip
        steps.reshape(grads, dcols, (channels * kh * kw, -1))
    else:
        rows = _output_rows(steps, g)
        filters = steps.reshape(w, steps.temp("w2", (o, None)), (o, -1))
        steps.product(filters, rows, dcols, op.groups, trans_a=True)
    axes = op._geometry(w.type.shape)
    pads = tuple(ax.pads(n) for ax, n in zip(axes, out.type.shape[2:]))
    fn = functools.partial(_col2im_of, x_shape=out.type.shape[1:], axes=axes, pads=pads)
    steps.library(fn, [dcols, g], out, "window gradients added into place (NumPy's "
                  "strided adds, kh*kw of them)")  # fmt: skip
    return tuple(steps.steps)


def _full_correlation(steps, w, g, out) -> bool:
    """Stride 1: the input gradient is the output gradient, padded by the filter's span less
    the input's padding, correlated with the filters flipped and transposed (C, O, kh, kw):
    one packed product over its windows, no window gradients and no col2im. False (nothing
    planned) for other strides, or padding wider than the span."""
    op, (o, c, kh, kw) = steps.node.op, w.type.shape
    axes = op._geometry(w.type.shape)
    height, width = out.type.shape[2:]
    pads = []
    for ax, n in zip(axes, (height, width)):
        span = ax.dilation * (ax.kernel - 1)
        before, after = ax.pads(n)
        pads.append((span - before, span - after))
    if tuple(op.stride) != (1, 1) or min(p for side in pads for p in side) < 0:
        return False
    coefficients = (0, 1, 0, 0, 1, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, -1)
    flipped = steps.strided(w, w, steps.temp("w flipped", (c, o, kh, kw)),
                            (4, c, o, kh, kw, *coefficients, 0, 0, kh - 1, kw - 1))  # fmt: skip
    source = _padded(steps, g, tuple(pads))
    windows, grid = _flat_windows(steps, source, g, (kh, kw), op.dilation)
    product = steps.temp("w * windows", (c, *windows.type.shape[3:]))
    steps.contract(flipped, windows, product, (1, 3, 2), "flipped filters times the output "
                   "gradient's windows (packed, no col2im)")  # fmt: skip
    _unflattened(steps, product, g, grid, out)
    return True


def _shifted_grad_input(steps, w, g, out) -> None:
    """Stride 1: col2im as a reduction kernel, no scatter. The output gradient is laid out on
    a grid with zero margins (``shifted_rows``), so that the window gradients ``D = w2.T @ G``
    hold a zero wherever a window position falls outside the output; then the input pixel
    (y, x) is the sum over the window offsets (i, j) of D at (y - i*dh, x - j*dw), a fixed
    shift per offset: one strided view of D over (N, C, kh, kw, H, W) and a sum kernel over
    (kh, kw). The margins add about (kh-1)/oh + (kw-1)/ow to the product (W8b: 17%)."""
    op, (o, _, kh, kw) = steps.node.op, w.type.shape
    layout = shifted_layout(op, w.type.shape, out.type.shape[2:], g.type.shape[2:])
    lead, (hp, wp), (top, left) = layout
    rows = steps.library(functools.partial(shifted_rows, grid=(hp, wp), lead=lead), [g],
                         steps.temp("g grid", (o, None)), "output gradient on a grid with "
                         "zero margins (NumPy)")  # fmt: skip
    filters = steps.reshape(w, steps.temp("w2", (o, None)), (o, -1))
    channels, height, width = out.type.shape[1:]
    dcols = steps.temp("dcols", (channels * kh * kw, None))
    steps.product(filters, rows, dcols, op.groups, trans_a=True)
    planes = steps.reshape(dcols, steps.temp("dcols3", (channels, kh * kw, None)),
                           (channels, kh * kw, -1))  # fmt: skip
    dh, dw = op.dilation
    coefficients = ((0, 0, hp * wp), (1, 0, 0), (0, kw, -dh * wp), (0, 1, -dw), (0, 0, wp),
                    (0, 0, 1))  # fmt: skip
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


@WINDOWED.register(MaxPool2d, AvgPool2d)
def _pool(linker, node) -> tuple:
    (x,), (out,) = node.inputs, node.outputs
    _float(node)
    _fixed(x.type.shape, out.type.shape)
    op, steps = node.op, Steps(linker, node)
    axes = op._geometry()
    pads = tuple(ax.pads(n) for ax, n in zip(axes, x.type.shape[2:]))
    is_max = isinstance(op, MaxPool2d)
    source = x
    if any(p for side in pads for p in side):
        shape = x.type.shape[:2] + tuple(n + a + b for n, (a, b) in zip(x.type.shape[2:], pads))
        fill = -np.inf if is_max else 0.0
        source = steps.library(
            Padding(pads, fill), [x], steps.temp("padded", shape), "padding (NumPy)"
        )
    if op.kernel[0] * op.kernel[1] <= MAX_WINDOW and linker.offset_views:
        elements = _window_elements(steps, source, x, op.kernel, op.stride, out.type.shape)
        fallback = steps.fallback(functools.partial(type(op).perform, op), [x], out)
        kernel = _pool_kernel(linker.dialect, elements, is_max, steps.dtype.name)
        steps.launch(kernel, elements, out, fallback, f"{op.op_name()} over each window")
        return tuple(steps.steps)
    shape = out.type.shape[:2] + tuple(op.kernel) + out.type.shape[2:]
    view = steps.windows(source, steps.temp("windows", shape), _window_geometry(axes), POOLED)
    steps.reduce(view, out, "max" if is_max else "sum", mean=not is_max)
    return tuple(steps.steps)


def _window_elements(steps, source, batch, kernel, stride, out_shape) -> list:
    """Element (a, b) of every window of ``source``, one "strided" view (N, C, out_h, out_w)
    each (``batch``'s axis 0 gives N): a map over the windows reads them as kh*kw operands,
    its rows as long as the output's (a reduction over the window axes would run kh*kw
    times more, shorter rows: W8b's 2x2 max-pool 8.1 -> 1.5 ms)."""
    (kh, kw), (sh, sw) = kernel, stride
    channels, out_h, out_w = out_shape[1:]
    coefficients = (1, 0, 0, 0, 0, 1, 0, 0, 0, 0, sh, 0, 0, 0, 0, sw)
    return [
        steps.strided(source, batch, steps.temp(f"x[{a},{b}]", out_shape),
                      (4, -2, channels, out_h, out_w, *coefficients, 0, 0, a, b))
        for a in range(kh) for b in range(kw)
    ]  # fmt: skip


def _pool_kernel(dialect, elements, is_max: bool, dtype: str) -> Kernel:
    """The maximum of ``elements``, or their mean (summed in float64)."""
    b = Builder(dialect)
    values = [b.variable(v) for v in elements]
    if is_max:
        result = values[0]
        for value in values[1:]:
            result = b.maximum(result, value)
    else:
        result = b.convert(values[0], "float64")
        for value in values[1:]:
            result = b.add(result, b.convert(value, "float64"))
        result = b.convert(b.div(result, b.literal(len(values), "float64")), dtype)
    return Kernel(tuple(b.inputs), (Operand(dtype),), tuple(b.values), Map(((0, result),)),
                  fixed_size(elements[0].type.shape))  # fmt: skip


#: windows larger than this give the max-pool gradient's first kernel too many operands
MAX_WINDOW = 16


@WINDOWED.register(MaxPool2dGrad)
def _max_pool_grad(linker, node) -> tuple:
    """Where the windows tile the input exactly (stride = kernel, no padding), the gradient is
    two map kernels. The first runs over the pooled output: it reads the kh*kw elements of each
    window (one strided view each) and stores the position of the window's first maximum (NaN
    counting as the maximum, as np.argmax does). The second runs over the input seen as (N, C,
    out_h, kh, out_w, kw): an element takes its window's gradient where its position is the
    stored one. One pass over the windows instead of every element re-reading its window and
    ranking it against the others (W8b: 15 ms -> about 2 ms)."""
    (x, g), (out,) = node.inputs, node.outputs
    steps, spread = _tiled_gradient(linker, node, x, g)
    (kh, kw), (n, c, height, width) = node.op.kernel, x.type.shape
    oh, ow = height // kh, width // kw
    tile = (n, c, oh, 1, ow, 1)
    elements = [
        steps.windows(x, steps.temp(f"x[{a},{b}]", tile), (1, 1, kh, kw, 1, 1, a, b), TILED)
        for a in range(kh) for b in range(kw)
    ]  # fmt: skip
    first = Variable(TensorType(np.dtype(POSITION), tile), name="first max")
    fallback = steps.fallback(functools.partial(first_max_positions, kh=kh, kw=kw), [x], first)
    kernel = _first_max_kernel(linker.dialect, elements)
    steps.launch(kernel, elements, first, fallback, "each window's first maximum")
    ranks = Variable(TensorType(np.dtype(POSITION), (1, 1, 1, kh, 1, kw)), name="ranks")
    steps.library(functools.partial(window_ranks, kh, kw), [], ranks, "window positions")
    grads = steps.temp("dx tiles", (n, c, oh, kh, ow, kw))
    fallback = steps.fallback(functools.partial(_first_max_reference, kh=kh, kw=kw),
                              [x, g], grads)  # fmt: skip
    kernel = _route_kernel(linker.dialect, first, ranks, spread)
    steps.launch(kernel, [first, ranks, spread], grads, fallback,
                 "each element's gradient: its window's, at the first maximum")  # fmt: skip
    steps.reshape(grads, out, (-1, c, height, width))
    return tuple(steps.steps)


@WINDOWED.register(AvgPool2dGrad)
def _avg_pool_grad(linker, node) -> tuple:
    """Where the windows tile the input exactly, each element's gradient is its window's
    divided by the window's size: one map over the input seen as (N, C, out_h, kh, out_w,
    kw), the output gradient broadcast over each window."""
    (g, like), (out,) = node.inputs, node.outputs
    steps, spread = _tiled_gradient(linker, node, like, g)
    (kh, kw), (n, c, height, width) = node.op.kernel, like.type.shape
    oh, ow = height // kh, width // kw
    sizes = steps.temp("window size", (1, 1, 1, kh, 1, kw))  # spans the window axes
    steps.library(functools.partial(np.full, (1, 1, 1, kh, 1, kw), kh * kw, steps.dtype), [],
                  sizes, "window sizes")  # fmt: skip
    b = Builder(linker.dialect)
    dtype = steps.dtype.name
    result = b.div(b.variable(spread), b.variable(sizes))
    grads = steps.temp("dx tiles", (n, c, oh, kh, ow, kw))
    kernel = Kernel(tuple(b.inputs), (Operand(dtype),), tuple(b.values), Map(((0, result),)),
                    fixed_size(grads.type.shape))  # fmt: skip
    fallback = steps.fallback(functools.partial(_spread_reference, op=node.op), [g, like], grads)
    steps.launch(kernel, [spread, sizes], grads, fallback,
                 "each window's gradient over its elements")  # fmt: skip
    steps.reshape(grads, out, (-1, c, height, width))
    return tuple(steps.steps)


def _tiled_gradient(linker, node, x, g) -> tuple:
    """What both pool gradients over tiling windows start with: the checks, their steps, and
    the output gradient g seen as (N, C, out_h, 1, out_w, 1), one value per window."""
    _float(node)
    _fixed(x.type.shape, g.type.shape)
    _check_tiling(node.op, x.type.shape[2:])
    steps, (kh, kw) = Steps(linker, node), node.op.kernel
    n, c, height, width = x.type.shape
    tile = steps.temp("g tiles", (n, c, height // kh, 1, width // kw, 1))
    return steps, steps.transpose(g, tile, (0, 1, 2, -1, 3, -1))


def _spread_reference(g, like, op):
    n, c, h, w = like.shape
    (kh, kw) = op.kernel
    return op.perform(g, like).reshape(n, c, h // kh, kh, w // kw, kw)


def _check_tiling(op, sizes) -> None:
    (kh, kw), (height, width) = op.kernel, sizes
    pads = [ax.pads(n) for ax, n in zip(op._geometry(), sizes)]
    if tuple(op.stride) != (kh, kw) or any(a or b for a, b in pads) or height % kh or width % kw:
        raise Unsupported(
            "a kernel when the windows tile the input exactly (stride = kernel, no "
            "padding, sizes divisible); otherwise the NumPy reference runs"
        )
    if kh * kw > MAX_WINDOW:
        raise Unsupported(f"windows of more than {MAX_WINDOW} elements run the NumPy reference")


def _first_max_kernel(dialect, elements) -> Kernel:
    """The position of the first maximum among ``elements`` (NaN counting as the maximum):
    the count of elements before the first that is the maximum, added up without a select
    (selects became jumps that the random positions of maxima mispredict)."""
    b = Builder(dialect)
    values = [b.variable(v) for v in elements]
    peak = values[0]
    for value in values[1:]:
        peak = b.maximum(peak, value)
    position, missed = b.literal(0, POSITION), None
    for value in values[:-1]:
        miss = b.op("not", b.bit_or(b.eq(value, peak), b.ne(value, value)))
        missed = miss if missed is None else b.bit_and(missed, miss)
        position = b.add(position, b.convert(missed, POSITION))
    return Kernel(tuple(b.inputs), (Operand(POSITION),), tuple(b.values),
                  Map(((0, position),)), fixed_size(elements[0].type.shape))  # fmt: skip


def _route_kernel(dialect, first, ranks, spread) -> Kernel:
    """Each element's gradient: its window's where its rank is the window's first maximum.
    A product with the hit (0 or 1), as the reference computes it, not a select: the C
    compiler made the select a jump, which the random positions of maxima mispredict."""
    b = Builder(dialect)
    dtype = spread.type.dtype.name
    hit = b.convert(b.eq(b.variable(first), b.variable(ranks)), dtype)
    result = b.mul(hit, b.variable(spread))
    n, c, oh, _, ow, _ = first.type.shape
    kh, kw = ranks.type.shape[3], ranks.type.shape[5]
    return Kernel(tuple(b.inputs), (Operand(dtype),), tuple(b.values), Map(((0, result),)),
                  fixed_size((n, c, oh, kh, ow, kw)))  # fmt: skip


def first_max_positions(x, kh, kw):
    """The first kernel's value from NumPy: each window's np.argmax, as (N, C, oh, 1, ow, 1)."""
    n, c, h, w = x.shape
    tiles = x.reshape(n, c, h // kh, kh, w // kw, kw).transpose(0, 1, 2, 4, 3, 5)
    first = np.argmax(tiles.reshape(n, c, h // kh, w // kw, kh * kw), axis=-1)
    return first.astype(POSITION).reshape(n, c, h // kh, 1, w // kw, 1)


def _first_max_reference(x, g, kh, kw):
    """The gradient tiles the kernel computes, from the op's NumPy reference."""
    op = MaxPool2dGrad((kh, kw), (kh, kw), ((0, 0), (0, 0)))
    n, c, h, w = x.shape
    return op.perform(x, g).reshape(n, c, h // kh, kh, w // kw, kw)
