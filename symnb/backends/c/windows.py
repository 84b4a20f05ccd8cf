"""Convolution and pooling on backend "c": windows as strided views, im2col as a copy kernel,
the contraction as one ``?gemm`` (the plan's BLAS step).

A window of a padded input is a strided view (a plan ``View`` of kind "windows": no copy, no
Python call). The forward convolution copies that view into a C-ordered column matrix
``cols`` (C*kh*kw, N*out_h*out_w) with a copy kernel of the kernel description (a map whose
input has the windows' strides), multiplies it by the filters as one gemm, and views the
(O, N, out_h, out_w) product as NCHW; the next kernel reads that layout through strides. The
filter gradient is one gemm of the output gradient (transposed to (O, N*out_h*out_w) by a
copy kernel) with ``cols``; the input gradient is one gemm giving the window gradients, added
back into place by NumPy's strided adds (``scatter_windows``: kh*kw of them). Max and average
pooling are reduction kernels over the windows view. With groups, the contraction is NumPy's
batched matmul (one BLAS call per group). Padding is a NumPy step (a zeroed array and one
copy), shown in ``f.kernels``.

Every step's fallback computes the same value with NumPy, so a layout the runner declines still
gives the right answer. Ops whose dtype, sizes or parameters this plan does not take (integer
or mixed dtypes, sizes not fixed by the types) raise Unsupported: the op's reference runs.
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.lib.stride_tricks import as_strided

from symnb.backends.c import blas
from symnb.backends.c.listing import KernelInfo
from symnb.backends.kernels.build import Builder, fixed_size
from symnb.backends.kernels.ir import Kernel, Map, Operand, Reduce, Unsupported
from symnb.backends.plan import Gemm, Library, View
from symnb.backends.planner import Planners
from symnb.core.types import TensorType
from symnb.core.variable import Variable
from symnb.ops.conv import (
    AvgPool2d,
    Conv2d,
    Conv2dGradFilters,
    Conv2dGradInput,
    MaxPool2d,
    scatter_windows,
)

WINDOWED = Planners()
#: the canonical axes of a windows view: (N, C, out_h, out_w, kh, kw)
N, C, OUT_H, OUT_W, KH, KW = range(6)
COLUMNS = (C, KH, KW, N, OUT_H, OUT_W)  # im2col's order: rows (c, i, j), columns (n, y, x)
POOLED = (N, C, OUT_H, OUT_W, KH, KW)  # pooling reduces the last two
FLOATS = ("float32", "float64")


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

    def _fallback(self, fn, ins, out, kind="library") -> Library:
        ins = tuple(self.slot(v) for v in ins)
        return Library(fn, ins, (self.slot(out),), (out.type.dtype,), self.node, kind)

    def _note(self, kind: str, reason: str, source=None) -> None:
        self.linker.kernels.append(KernelInfo(kind, self.node, source, reason))

    def library(self, fn, ins, out, reason: str, kind: str = "library") -> Variable:
        self.steps.append(self._fallback(fn, ins, out, kind))
        self._note(kind, reason)
        return out

    def view(self, how, src, out, reference, axes=(), target=()) -> Variable:
        fallback = self._fallback(reference, [src], out)
        step = View(how, self.slot(src), None, fallback.outs[0], tuple(axes), tuple(target),
                    self.node, fallback)  # fmt: skip
        self.steps.append(step)
        self._note("view", f"{how} view (no copy)")
        return out

    def reshape(self, src, out, shape) -> Variable:
        """``src`` viewed as ``shape`` (ints; -1 the rest)."""
        reference = functools.partial(_reshaped, shape=shape)
        return self.view("reshape", src, out, reference, target=shape)

    def transpose(self, src, out, axes) -> Variable:
        return self.view("axes", src, out, functools.partial(np.transpose, axes=axes), axes)

    def windows(self, src, out, geometry, order) -> Variable:
        reference = functools.partial(windows_view, geometry=geometry, order=order)
        return self.view("windows", src, out, reference, order, geometry)

    def kernel(self, kernel, src, out, absent=(), note="") -> Variable:
        source = self.linker.dialect.render(kernel)
        fallback = self._fallback(functools.partial(_kernel_reference, kernel.body), [src], out)
        outs = [(out, self.dtype, absent, False)]
        empty = "decline" if isinstance(kernel.body, Reduce) else "skip"
        step = self.linker.launch(self.node, source, [(src, ())], outs, None, empty, fallback)
        self.steps.append(step)
        self._note("kernel", note, source)
        return out

    def copy(self, src, out) -> Variable:
        """``src`` (any strides) copied into a new C-ordered array by a map kernel."""
        b = Builder(self.linker.dialect)
        value = b.variable(src)
        kernel = Kernel(tuple(b.inputs), (Operand(self.dtype.name),), tuple(b.values),
                        Map(((0, value),)), fixed_size(src.type.shape))  # fmt: skip
        return self.kernel(kernel, src, out, note="copy kernel: windows into columns")

    def reduce(self, src, out, kind: str, mean: bool) -> Variable:
        """``kind`` of ``src``'s last two axes by a reduction kernel."""
        b = Builder(self.linker.dialect)
        acc = "float64" if kind == "sum" else self.dtype.name
        value = b.convert(b.variable(src), acc)
        body = Reduce(value, kind, acc, mean)
        kernel = Kernel(tuple(b.inputs), (Operand(self.dtype.name),), tuple(b.values), body,
                        fixed_size(src.type.shape))  # fmt: skip
        return self.kernel(kernel, src, out, (4, 5), note=f"{kind} over each window")

    def product(self, a, b, out, groups: int, trans_a=False, trans_b=False) -> Variable:
        """``a @ b`` (each transposed when asked), one gemm; per group with groups."""
        if groups > 1:
            reference = functools.partial(grouped_product, groups=groups, trans_a=trans_a,
                                          trans_b=trans_b)  # fmt: skip
            return self.library(reference, [a, b], out, "NumPy's batched matmul, one BLAS call "
                                "per group", kind="blas")  # fmt: skip
        if trans_a:
            a = self.transpose(a, self.temp("a.T", (None, None)), (1, 0))
        if trans_b:
            b = self.transpose(b, self.temp("b.T", (None, None)), (1, 0))
        ref = blas.gemm_ref(self.dtype)
        fallback = self._fallback(np.matmul, [a, b], out, kind="blas")
        step = Gemm(None, None, self.slot(a), self.slot(b), None, fallback.outs[0], self.dtype,
                    False, ref, self.node, fallback)  # fmt: skip
        self.steps.append(step)
        self._note("blas", blas.describe(ref))
        return out


# -- NumPy references of the intermediate steps --------------------------------------------------
def windows_view(x, geometry, order):
    """The windows view runner.c makes (``View`` kind "windows")."""
    kh, kw, sh, sw, dh, dw = geometry
    s_n, s_c, s_h, s_w = x.strides
    out_h = (x.shape[2] - dh * (kh - 1) - 1) // sh + 1
    out_w = (x.shape[3] - dw * (kw - 1) - 1) // sw + 1
    dims = (x.shape[0], x.shape[1], out_h, out_w, kh, kw)
    strides = (s_n, s_c, s_h * sh, s_w * sw, s_h * dh, s_w * dw)
    return as_strided(x, [dims[a] for a in order], [strides[a] for a in order], writeable=False)


def _reshaped(a, shape):
    return np.reshape(a, shape)


def _kernel_reference(body, x):
    if isinstance(body, Map):
        return np.ascontiguousarray(x)
    reduce = {"max": np.max, "sum": np.mean if body.mean else np.sum}[body.kind]
    return reduce(x, axis=(-2, -1))


def grouped_product(a, b, groups, trans_a=False, trans_b=False):
    """Per group g: ``a[g] @ b[g]``, a and b split by rows into ``groups`` blocks (each
    block transposed first when asked); the products stacked by rows."""
    a = a.reshape(groups, a.shape[0] // groups, -1)
    b = b.reshape(groups, b.shape[0] // groups, -1)
    a = a.transpose(0, 2, 1) if trans_a else a
    b = b.transpose(0, 2, 1) if trans_b else b
    out = np.matmul(a, b)
    return out.reshape(groups * out.shape[1], out.shape[2])


def padded(x, pads, fill):
    """x with ((top, bottom), (left, right)) of ``fill`` around its last two axes."""
    (top, bottom), (left, right) = pads
    n, c, h, w = x.shape
    out = np.full((n, c, h + top + bottom, w + left + right), fill, x.dtype)
    out[:, :, top : top + h, left : left + w] = x
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


def _columns(steps, x, kernel_shape, geometry_axes, fill=0.0):
    """x padded as the op asks, then its windows as the C-ordered column matrix."""
    key = ("cols", id(x), tuple(kernel_shape), steps.node.op.params())
    memo = steps.linker.planned
    if key in memo:
        return memo[key]
    pads = tuple(ax.pads(n) for ax, n in zip(geometry_axes, x.type.shape[2:]))
    source = x
    if any(p for side in pads for p in side):
        shape = x.type.shape[:2] + tuple(n + a + b for n, (a, b) in zip(x.type.shape[2:], pads))
        fn = functools.partial(padded, pads=pads, fill=fill)
        source = steps.library(fn, [x], steps.temp("padded", shape), "padding (NumPy)")
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
    return (ah.kernel, aw.kernel, ah.stride, aw.stride, ah.dilation, aw.dilation)


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
    x, g, like = node.inputs
    (out,) = node.outputs
    _float(node)
    _fixed(x.type.shape, g.type.shape, (None, *out.type.shape))
    op, steps = node.op, Steps(linker, node)
    o, per_group, kh, kw = out.type.shape
    cols = _columns(steps, x, (kh, kw), op._geometry(out.type.shape))
    rows = _output_rows(steps, g)
    flat = steps.temp("dw2", (o, per_group * kh * kw))
    steps.product(rows, cols, flat, op.groups, trans_b=True)
    steps.reshape(flat, out, out.type.shape)
    return tuple(steps.steps)


@WINDOWED.register(Conv2dGradInput)
def _conv2d_grad_input(linker, node) -> tuple:
    w, g, like = node.inputs
    (out,) = node.outputs
    _float(node)
    _fixed((None, *w.type.shape), g.type.shape, out.type.shape)
    op, steps = node.op, Steps(linker, node)
    o, per_group, kh, kw = w.type.shape
    rows = _output_rows(steps, g)
    filters = steps.reshape(w, steps.temp("w2", (o, None)), (o, -1))
    channels = out.type.shape[1]
    dcols = steps.temp("dcols", (channels * kh * kw, None))
    steps.product(filters, rows, dcols, op.groups, trans_a=True)
    axes = op._geometry(w.type.shape)
    pads = tuple(ax.pads(n) for ax, n in zip(axes, out.type.shape[2:]))
    fn = functools.partial(_col2im_of, x_shape=out.type.shape[1:], axes=axes, pads=pads)
    steps.library(fn, [dcols, g], out, "window gradients added into place (NumPy's "
                  "strided adds, kh*kw of them)")  # fmt: skip
    return tuple(steps.steps)


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
        fn = functools.partial(padded, pads=pads, fill=-np.inf if is_max else 0.0)
        source = steps.library(fn, [x], steps.temp("padded", shape), "padding (NumPy)")
    shape = out.type.shape + tuple(op.kernel)
    view = steps.windows(source, steps.temp("windows", shape), _window_geometry(axes), POOLED)
    steps.reduce(view, out, "max" if is_max else "sum", mean=not is_max)
    return tuple(steps.steps)
