"""What the planners of convolution and pooling share: ``Steps``, the steps one node becomes
(views, kernels, products, NumPy steps, each over temporaries of its own), the canonical axes
of windows, padding, and the checks of what the kernel path takes.

Every step's fallback computes the same value with NumPy, so a layout the runner declines still
gives the right answer. Ops whose dtype, sizes or parameters a plan does not take (integer or
mixed dtypes, sizes not fixed by the types) raise Unsupported: the op's reference runs.
"""

from __future__ import annotations

import functools
import sys

import numpy as np

from symnb.backends.execute import strided_geometry, view_at, windows_view
from symnb.backends.kernels.build import Builder, fixed_size
from symnb.backends.kernels.ir import Contract, Kernel, Map, Operand, Reduce, Unsupported
from symnb.backends.kernels.lowering import product_kernel
from symnb.backends.listing import KernelInfo
from symnb.backends.plan import Layout, Library, View, promised_shape
from symnb.core.types import TensorType
from symnb.core.variable import Variable

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
        shapes = (promised_shape(out),)
        return Library(fn, ins, (self.slot(out),), (out.type.dtype,), self.node, kind, shapes)

    def note(self, kind: str, reason: str, source=None) -> None:
        self.linker.kernels.append(KernelInfo(kind, self.node, source, reason))

    def library(self, fn, ins, out, reason: str, kind: str = "library") -> Variable:
        self.steps.append(self.fallback(fn, ins, out, kind))
        self.note(kind, reason)
        return out

    def pad(self, x, pads, fill=0.0) -> Variable:
        """x with ``pads`` ((top, bottom), (left, right)) of ``fill`` around its last two
        axes: a device's pad kernel where the linker has one (``"window_kernels"``: a
        ``Layout`` step, symnb/backends/device/windows.py), else a NumPy step."""
        shape = x.type.shape[:2] + tuple(n + a + b for n, (a, b) in zip(x.type.shape[2:], pads))
        out = self.temp("padded", shape)
        if not self.linker.can("window_kernels"):
            return self.library(Padding(pads, fill), [x], out, "padding (NumPy)")
        fallback = self.fallback(Padding(pads, fill), [x], out)
        params = (tuple(map(tuple, pads)), fill)
        step = Layout("pad", (self.slot(x),), (), fallback.outs[0], params, self.node, fallback)
        self.steps.append(step)
        self.linker.window_kernel(self.node, "pad", "pad", x.type.dtype, fill)
        return out

    def view(self, how, src, out, reference, axes=(), target=()) -> Variable:
        fallback = self.fallback(reference, [src], out)
        step = View(
            how,
            self.slot(src),
            None,
            fallback.outs[0],
            tuple(axes),
            tuple(target),
            self.node,
            fallback,
        )
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
        step = View(
            "strided",
            self.slot(src),
            self.slot(like),
            fallback.outs[0],
            (),
            tuple(target),
            self.node,
            fallback,
        )
        self.steps.append(step)
        self.note("view", "shifted reads (strided view, no copy)")
        return out

    def windows(self, src, out, geometry, order) -> Variable:
        reference = functools.partial(windows_view, geometry=geometry, order=order)
        return self.view("windows", src, out, reference, order, geometry)

    def kernel(self, kernel, src, out, absent=(), note="") -> Variable:
        fallback = self.fallback(functools.partial(_kernel_reference, kernel.body), [src], out)
        return self.launch(kernel, [src], out, fallback, note, absent)

    def launch(self, kernel, ins, out, fallback, note, absent=(), into=None) -> Variable:
        """``kernel`` over ``ins`` into ``out`` (lacking the ``absent`` axes of the space);
        an input is a variable or (variable, the axes of the space it lacks); ``into``: the
        variable (a view) whose array ``out`` is written into (the plan's ``Launch.into``)."""
        source = self.linker.render(kernel)
        outs = [(out, out.type.dtype, absent, False)]
        empty = "decline" if isinstance(kernel.body, (Reduce, Contract)) else "skip"
        ins = [v if isinstance(v, tuple) else (v, ()) for v in ins]
        step = self.linker.launch(self.node, source, ins, outs, None, empty, fallback, kernel, into)
        self.steps.append(step)
        self.note("kernel", note, source)
        return out

    def contract(self, left, right, out, groups, note) -> Variable:
        """``out`` (m..., n...) = the sum over the k axes of ``left`` (m..., k...) times
        ``right`` (k..., n...), ``groups`` = how many axes m, k and n have: one packed product
        kernel (``render/contract.py``) reading both through their strides."""
        gm, gk, gn = groups
        space = left.type.shape + right.type.shape[gk:]
        columns = fixed_size(right.type.shape[gk:])
        kernel = product_kernel(left, right, self.dtype.name, space, groups, columns)
        fallback = self.fallback(functools.partial(np.tensordot, axes=gk), [left, right], out)
        nd = gm + gk + gn
        ins = [(left, tuple(range(gm + gk, nd))), (right, tuple(range(gm)))]
        return self.launch(kernel, ins, out, fallback, note, tuple(range(gm, gm + gk)))

    def copy(self, src, out) -> Variable:
        """``src`` (any strides) copied into a new C-ordered array by a map kernel."""
        return self.kernel(
            self.copy_kernel(src), src, out, note="copy kernel: windows into columns"
        )

    def copy_kernel(self, src) -> Kernel:
        """A map kernel whose output is ``src``."""
        b = Builder(self.linker.dialect)
        value = b.variable(src)
        return Kernel(
            tuple(b.inputs),
            (Operand(self.dtype.name),),
            tuple(b.values),
            Map(((0, value),)),
            fixed_size(src.type.shape),
        )

    def reduce(self, src, out, kind: str, mean: bool, acc=None) -> Variable:
        """``kind`` of ``src``'s axes 2 and 3 by a reduction kernel (a sum in float64 unless
        ``acc`` says otherwise)."""
        b = Builder(self.linker.dialect)
        acc = acc or ("float64" if kind == "sum" else self.dtype.name)
        value = b.convert(b.variable(src), acc)
        body = Reduce(value, kind, acc, mean)
        kernel = Kernel(
            tuple(b.inputs),
            (Operand(self.dtype.name),),
            tuple(b.values),
            body,
            fixed_size(src.type.shape),
        )
        return self.kernel(kernel, src, out, (2, 3), note=f"{kind} over each window")

    def product(self, a, b, out, groups: int, trans_a=False, trans_b=False) -> Variable:
        """``a @ b`` (each transposed when asked), one gemm, or a device's product kernel;
        per group with groups."""
        if groups > 1:
            reference = functools.partial(
                grouped_product, groups=groups, trans_a=trans_a, trans_b=trans_b
            )
            return self.library(
                reference,
                [a, b],
                out,
                "NumPy's batched matmul, one BLAS call per group",
                kind="blas",
            )
        if trans_a:
            a = self.transpose(a, self.temp("a.T", (None, None)), (1, 0))
        if trans_b:
            b = self.transpose(b, self.temp("b.T", (None, None)), (1, 0))
        self.steps.append(self.linker.product_step(self, a, b, out))
        return out


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
    A new array each call cost page faults and a write of all of it, three times the copy."""

    __name__ = "padded"

    def __init__(self, pads, fill):
        self.pads, self.fill, self.last = pads, fill, None

    def __call__(self, x):
        out = padded(x, self.pads, self.fill, self.reusable())
        self.last = out
        return out

    def reusable(self):
        """The array made on the last call when nothing else holds it any more, else None."""
        last = self.last  # references: self.last, this name, getrefcount's argument
        return last if last is not None and sys.getrefcount(last) == 3 else None


class FlatPadding(Padding):
    """x (N, C, H, W) zero-padded by ``pads`` for flat windows (convolution.py), as planes
    (N, C, length): rows ``pitch`` = W + gap apart, x's row y at row top + y, column left,
    zeros elsewhere. Where the padded image's columns run past a row's end they read the next
    row's first columns, which are zeros when gap >= right, so a row's right margin and the
    next row's left one share their zeros: the windows' junk columns (pitch - out_w) shrink
    (the stride-1 input gradient's full correlation: none). ``length`` ends each plane with
    the zeros the last row's windows read past it. A plan calls ``margins`` (NumPy, the
    planes kept from call to call) and has x written into their interior: by the kernel that
    computes x (``output_planes`` in convolution.py), else by a copy kernel, on every thread."""

    __name__ = "flat padded"

    def __init__(self, pads, pitch, length, dtype):
        super().__init__(pads, 0.0)
        self.pitch, self.length, self.dtype = pitch, length, np.dtype(dtype)

    def __call__(self, x):
        """The planes holding x (its layout, for tests and displays)."""
        planes = self.margins(x)
        (top, _), (left, _) = self.pads
        n, c, h, w = x.shape
        rows = planes[:, :, top * self.pitch : (top + h) * self.pitch]
        rows.reshape(n, c, h, self.pitch)[:, :, :, left : left + w] = x
        return planes

    def margins(self, *arrays):
        """The planes for the broadcast of ``arrays`` (x, or the inputs of the map computing
        it), their margins zeros and their interior whatever the last call left there: the
        array made last time when nothing else holds it, else a new one."""
        n, c = np.broadcast_shapes(*(np.shape(a) for a in arrays))[:2]
        out = self.reusable()
        if out is None or out.shape != (n, c, self.length):
            out = np.zeros((n, c, self.length), self.dtype)
        self.last = out
        return out


def pads_of(axes, sizes) -> tuple:
    """((top, bottom), (left, right)): the padding the op's window ``axes`` give an input of
    these (height, width)."""
    return tuple(ax.pads(n) for ax, n in zip(axes, sizes))


def out_size(size, axis, pads) -> int:
    return (size + pads[0] + pads[1] - axis.dilation * (axis.kernel - 1) - 1) // axis.stride + 1


# -- the ops -----------------------------------------------------------------------------------
def fixed_sizes(*shapes) -> None:
    """Sizes other than the batch fixed and non-zero: the steps' reshapes infer one size
    from the others (a -1), which an empty array leaves undetermined, and no channels or
    filters is work for the reference (zeros, or nothing), not for kernels."""
    for shape in shapes:
        if not all(isinstance(d, int) for d in shape[1:]):
            raise Unsupported("sizes other than the batch must be fixed for the kernel path")
        if 0 in shape[1:]:
            raise Unsupported(f"a size of 0 in {shape}: the reference computes it")


def float_operands(node) -> None:
    dtypes = {v.type.dtype.name for v in (*node.inputs, *node.outputs)}
    if len(dtypes) != 1 or not dtypes <= set(FLOATS):
        raise Unsupported(
            f"{'/'.join(sorted(dtypes))}: the kernel path takes float32 or "
            "float64 operands of one dtype"
        )


def padded_source(steps, x, pads, fill=0.0):
    """x with ``pads`` ((top, bottom), (left, right)) of ``fill`` around its last two axes
    (``Steps.pad``: a device's kernel, else a NumPy step), or x itself without padding."""
    if not any(p for side in pads for p in side):
        return x
    return steps.pad(x, pads, fill)


def window_geometry(axes) -> tuple:
    (ah, aw) = axes
    return (ah.kernel, aw.kernel, ah.stride, aw.stride, ah.dilation, aw.dilation, 0, 0)
