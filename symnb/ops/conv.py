"""2-D convolution and pooling on NCHW tensors (filters OIHW), with their gradients.

The NumPy references gather every window as a strided view (im2col without a copy) and
contract it with the filters (``np.einsum``, BLAS underneath). Gradients are ops of their own
that scatter window gradients back, one kernel position at a time, and are themselves
differentiable where the math allows: the input gradient of a convolution is linear in the
filters and the output gradient, so its gradients are a convolution and a filter gradient.

Padding is ``"valid"`` (none), ``"same"`` (output size ``ceil(size / stride)``, the extra
pixel going after, as TensorFlow does; equal to PyTorch's for stride 1), an int, a pair
``(ph, pw)`` or explicit ``((top, bottom), (left, right))``. Pools count padded positions in
averages (``count_include_pad``) and never pick them as maxima; their padding on a side is
below the window size (Theano's ``pad < ws``), so no window holds padding only.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from symnb.core.dims import DimMismatch, format_dim, is_int, unify, window_output
from symnb.core.op import Op, _at_user_line
from symnb.core.types import TensorType
from symnb.core.variable import Variable, as_variable
from symnb.errors import DTypeError, ShapeError, ShapeTypeError
from symnb.ops._dtypes import probe_dtype
from symnb.ops.broadcast import zeros_like
from symnb.ops.elemwise import input_gradient

# -- geometry --------------------------------------------------------------------------------


def positive_pair(value, what, where) -> tuple[int, int]:
    """A positive int or a pair of them, as a pair; ``where`` (the op and its input) names
    the call in the error: a ShapeTypeError for a float, a bool or a string, a ShapeError
    for a size below 1."""
    pair = (value, value) if is_int(value) else value
    if not isinstance(pair, (tuple, list)) or len(pair) != 2 or not all(map(is_int, pair)):
        raise _at_user_line(
            ShapeTypeError(f"{where}: {what} is a positive int or a pair of them, not {value!r}")
        )
    if min(pair) < 1:
        raise _at_user_line(
            ShapeError(f"{where}: {what} must be a positive int or a pair of them, not {value!r}")
        )
    return int(pair[0]), int(pair[1])


def normalize_padding(padding, where="padding"):
    """``"valid"``, ``"same"`` or ``((top, bottom), (left, right))`` of non-negative ints."""
    if isinstance(padding, str) and padding in ("valid", "same"):
        return padding
    if is_int(padding):
        padding = (padding, padding)
    sides = ()
    if isinstance(padding, (tuple, list)):
        sides = tuple((p, p) if is_int(p) else p for p in padding)
    flat = [v for side in sides if isinstance(side, (tuple, list)) for v in side]
    if len(sides) != 2 or len(flat) != 4 or not all(map(is_int, flat)):
        raise _at_user_line(
            ShapeTypeError(
                f"{where}: padding must be 'valid', 'same', an int, (ph, pw) or ((top, "
                f"bottom), (left, right)) of non-negative ints, not {padding!r}"
            )
        )
    if min(flat) < 0:
        raise _at_user_line(
            ShapeError(f"{where}: padding must be of non-negative ints, not {padding!r}")
        )
    return tuple((int(a), int(b)) for a, b in sides)


def pads_for(padding, size, kernel, stride, dilation) -> tuple[int, int]:
    """(before, after) padding of one spatial axis of ``size`` (known at run time)."""
    if padding == "valid":
        return (0, 0)
    span = dilation * (kernel - 1) + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + span - size, 0)
    return (total // 2, total - total // 2)


def out_size(size, kernel, stride, dilation, pads) -> int:
    return (size + pads[0] + pads[1] - dilation * (kernel - 1) - 1) // stride + 1


class _Axis:
    """One spatial axis of a windowed op: its name in messages and its window parameters."""

    def __init__(self, name, kernel, stride, dilation, padding):
        self.name, self.kernel, self.stride, self.dilation = name, kernel, stride, dilation
        self.padding = padding  # "valid", "same" or (before, after)

    def pads(self, size):
        """(before, after) padding for an input of this size."""
        if isinstance(self.padding, tuple):
            return self.padding
        return pads_for(self.padding, size, self.kernel, self.stride, self.dilation)

    def static_out(self, op, size, described):
        """The output size, None when the input size is not fixed; ShapeError when < 1 (also
        at run time, on the actual size: ``_check_windows``)."""
        if not isinstance(size, int):
            return window_output(size, self.kernel, self.stride, self.dilation, self.padding)
        pads = self.pads(size)
        out = out_size(size, self.kernel, self.stride, self.dilation, pads)
        if out < 1:
            raise ShapeError(
                f"{op.op_name()}: the output {self.name} would be {out}: "
                f"(size + pad - dilation*(k-1) - 1)//stride + 1 = ({size} + "
                f"{pads[0] + pads[1]} - {self.dilation}*({self.kernel}-1) - 1)//{self.stride} "
                f"+ 1 = {out}; {described} is too small "
                f"for a {self.kernel}-wide window (dilation {self.dilation}, padding {pads})"
            )
        return out


def _axes(op, kernel):
    padding = op.padding
    sides = (padding, padding) if isinstance(padding, str) else padding
    return [
        _Axis(name, k, s, d, p)
        for name, k, s, d, p in zip(("height", "width"), kernel, op.stride, op.dilation, sides)
    ]


def windows(x, axes, fill=0):
    """Every window of x's last two axes: shape ``(N, C, out_h, out_w, kh, kw)`` (a view)."""
    x = np.asarray(x)
    pads = [ax.pads(n) for ax, n in zip(axes, x.shape[2:])]
    if any(pads[0] + pads[1]):
        x = np.pad(x, ((0, 0), (0, 0)) + tuple(pads), constant_values=fill)
    span = tuple(ax.dilation * (ax.kernel - 1) + 1 for ax in axes)
    view = sliding_window_view(x, span, axis=(2, 3))
    sh, sw = (ax.stride for ax in axes)
    dh, dw = (ax.dilation for ax in axes)
    return view[:, :, ::sh, ::sw, ::dh, ::dw]


def scatter_windows(cols, x_shape, axes):
    """The adjoint of :func:`windows`: add each window's values back where they came from."""
    pads = [ax.pads(n) for ax, n in zip(axes, x_shape[2:])]
    height, width = (n + p[0] + p[1] for n, p in zip(x_shape[2:], pads))
    out = np.zeros(x_shape[:2] + (height, width), dtype=cols.dtype)
    n_h, n_w = cols.shape[2:4]
    (ah, aw) = axes
    for i in range(ah.kernel):
        for j in range(aw.kernel):
            rows = slice(i * ah.dilation, i * ah.dilation + ah.stride * (n_h - 1) + 1, ah.stride)
            cols_ = slice(j * aw.dilation, j * aw.dilation + aw.stride * (n_w - 1) + 1, aw.stride)
            out[:, :, rows, cols_] += cols[..., i, j]
    return out[:, :, pads[0][0] : pads[0][0] + x_shape[2], pads[1][0] : pads[1][0] + x_shape[3]]


def _check_windows(op, axes, shape, described):
    """The build-time rule on the sizes a call brings (dims unknown in the graph): a window
    larger than the padded input is a ShapeError naming both, not NumPy's message."""
    for ax, n in zip(axes, shape[2:]):
        ax.static_out(op, int(n), described)


def _check_rank(op, var, what):
    if var.type.ndim != 4:
        raise ShapeError(f"{op}: {what} {var.describe()} must be 4-d ({_LAYOUT[what]})")
    if var.type.dtype.kind == "b":
        raise DTypeError(f"{op}: {what} {var.describe()} is boolean; cast it first")


_LAYOUT = {"input": "batch, channels, height, width", "filters": "out, in/groups, kh, kw"}


# -- convolution -------------------------------------------------------------------------
class _ConvBase(Op):
    """Shared parameters of the convolution and its two gradients."""

    __props__ = ("stride", "padding", "dilation", "groups")

    def __init__(self, stride=(1, 1), padding="valid", dilation=(1, 1), groups=1):
        self.stride, self.dilation = tuple(stride), tuple(dilation)
        self.padding, self.groups = padding, int(groups)

    def _geometry(self, w_shape):
        return _axes(self, w_shape[2:])

    def _cols(self, x, w_shape):
        """Windows of x, split by group: ``(N, G, C/G, out_h, out_w, kh, kw)``."""
        cols = windows(x, self._geometry(w_shape))
        n, c = cols.shape[:2]
        return cols.reshape((n, self.groups, c // self.groups) + cols.shape[2:])

    def _check_channels(self, c, per_group, o, x_said, w_said):
        """Filters whose outputs split into the groups and whose inputs per group times the
        groups are the input's channels, from the types (unknown dims pass) or the arrays
        (``x_said``/``w_said`` name them in the message)."""
        if isinstance(o, int) and o % self.groups:
            raise ShapeError(
                f"conv2d: {w_said} have {o} outputs, not divisible by groups={self.groups}"
            )
        expected = per_group * self.groups if isinstance(per_group, int) else None
        try:
            unify(c, expected)
        except DimMismatch:
            raise ShapeError(
                f"conv2d: {x_said} has {format_dim(c)} channels (axis 1) but {w_said} take "
                f"{per_group} per group x groups={self.groups} = {expected}"
            ) from None

    def _check_arrays(self, x_shape, w_shape):
        """What ``Conv2d.infer_types`` checks, on the shapes a call brings (the dims unknown
        in the graph: Theano's tensor4, shared filters)."""
        x_said, w_said = f"the input of shape {x_shape}", f"the filters of shape {w_shape}"
        self._check_channels(x_shape[1], w_shape[1], w_shape[0], x_said, w_said)
        described = f"{x_said} with {w_said}"
        _check_windows(self, self._geometry(w_shape), x_shape, described)

    def _grouped_filters(self, w):
        o = w.shape[0]
        return w.reshape((self.groups, o // self.groups) + w.shape[1:])

    def _grouped_output(self, g):
        n, o = g.shape[:2]
        return g.reshape((n, self.groups, o // self.groups) + g.shape[2:])


class Conv2d(_ConvBase):
    """Cross-correlation of NCHW input with OIHW filters (the deep-learning "convolution")."""

    dtype_rule = "NumPy's promotion of input and filters (as np.matmul; bool is refused)"

    def infer_types(self, x, w):
        _check_rank(self, x, "input")
        _check_rank(self, w, "filters")
        c, per_group, o = x.type.shape[1], w.type.shape[1], w.type.shape[0]
        self._check_channels(
            c, per_group, o, x.describe_as("input"), w.describe_as("filters", "the unnamed filters")
        )
        spatial = self._spatial(x, w)
        dtype = probe_dtype(self, np.matmul, [x, w])
        return [TensorType(dtype, (x.type.shape[0], w.type.shape[0]) + spatial)]

    def _spatial(self, x, w):
        kernel = w.type.shape[2:]
        if not all(isinstance(k, int) for k in kernel):
            raise ShapeError(f"conv2d: the kernel size of {w.describe()} must be fixed")
        filters = w.describe_as("filters", "the unnamed filters")
        described = f"{x.describe_as('input')} with {filters}"
        axes = self._geometry(w.type.shape)
        return tuple(ax.static_out(self, n, described) for ax, n in zip(axes, x.type.shape[2:]))

    def perform(self, x, w):
        x, w = np.asarray(x), np.asarray(w)
        self._check_arrays(x.shape, w.shape)
        cols = self._cols(x, w.shape)
        out = np.einsum("ngchwij,gocij->ngohw", cols, self._grouped_filters(w), optimize=True)
        n, g, o = out.shape[:3]
        return out.reshape((n, g * o) + out.shape[3:])

    def result_shape(self, x_shape, w_shape):
        """The result's shape for an input and filters of these shapes (``ResultShape``),
        or the error ``perform`` raises for them."""
        self._check_arrays(x_shape, w_shape)
        axes = self._geometry(w_shape)
        spatial = tuple(
            out_size(n, ax.kernel, ax.stride, ax.dilation, ax.pads(n))
            for ax, n in zip(axes, x_shape[2:])
        )
        return (x_shape[0], w_shape[0]) + spatial

    def grad(self, inputs, outputs, output_grads):
        (x, w), (g,) = inputs, output_grads
        params = self.params()
        return [
            input_gradient(Conv2dGradInput(*params)(w, g, x), x),
            input_gradient(Conv2dGradFilters(*params)(x, g, w), w),
        ]


class Conv2dGradInput(_ConvBase):
    """The gradient of conv2d with respect to its input, from the filters and the output's
    gradient (``like`` gives the input's shape)."""

    dtype_rule = "NumPy's promotion of filters and output gradient"

    def infer_types(self, w, g, like):
        return [TensorType(probe_dtype(self, np.matmul, [w, g]), like.type.shape)]

    def perform(self, w, g, like):
        self._check_arrays(np.shape(like), np.shape(w))
        grouped_g, grouped_w = self._grouped_output(g), self._grouped_filters(w)
        dcols = np.einsum("ngohw,gocij->ngchwij", grouped_g, grouped_w, optimize=True)
        n, groups, c = dcols.shape[:3]
        dcols = dcols.reshape((n, groups * c) + dcols.shape[3:])
        return scatter_windows(dcols, np.shape(like), self._geometry(w.shape))

    def grad(self, inputs, outputs, output_grads):
        (w, g, _), (u,) = inputs, output_grads
        params = self.params()
        return [
            input_gradient(Conv2dGradFilters(*params)(u, g, w), w),
            input_gradient(Conv2d(*params)(u, w), g),
            None,
        ]


class Conv2dGradFilters(_ConvBase):
    """The gradient of conv2d with respect to its filters, from the input and the output's
    gradient (``like`` gives the filters' shape)."""

    dtype_rule = "NumPy's promotion of input and output gradient"

    def infer_types(self, x, g, like):
        return [TensorType(probe_dtype(self, np.matmul, [x, g]), like.type.shape)]

    def perform(self, x, g, like):
        """One batched matmul per kernel offset (i, j), of the output gradient with that
        offset's window values: kh*kw small GEMMs instead of one einsum over a 7-d view, which
        copied more (docs/benchmarks.md, "Measurements behind the code")."""
        shape = np.shape(like)
        self._check_arrays(np.shape(x), shape)
        cols = self._cols(x, shape)  # (N, G, C/G, out_h, out_w, kh, kw), a view
        n, groups, per_group, out_h, out_w, kh, kw = cols.shape
        grads = self._grouped_output(g)  # (N, G, O/G, out_h, out_w)
        outs, count = grads.shape[2], n * out_h * out_w
        rows = np.ascontiguousarray(grads.transpose(1, 2, 0, 3, 4)).reshape(groups, outs, count)
        dw = np.empty((groups, outs, per_group, kh, kw), np.result_type(x, g))
        for i in range(kh):
            for j in range(kw):
                window = np.ascontiguousarray(cols[..., i, j].transpose(1, 2, 0, 3, 4))
                dw[..., i, j] = rows @ window.reshape(groups, per_group, count).transpose(0, 2, 1)
        return dw.reshape(shape)

    def grad(self, inputs, outputs, output_grads):
        (x, g, _), (v,) = inputs, output_grads
        params = self.params()
        return [
            input_gradient(Conv2dGradInput(*params)(v, g, x), x),
            input_gradient(Conv2d(*params)(x, v), g),
            None,
        ]


def conv2d(x, filters, stride=1, padding="valid", dilation=1, groups=1) -> Variable:
    """2-D cross-correlation: x is (N, C, H, W), filters (O, C/groups, kh, kw).

    ``stride`` and ``dilation``: int or (h, w); ``padding``: "valid", "same", int, (ph, pw)
    or ((top, bottom), (left, right)); ``groups`` splits channels into independent groups.
    """
    x = as_variable(x)
    where = f"conv2d of {x.describe()}"
    if not is_int(groups):
        raise _at_user_line(ShapeTypeError(f"{where}: groups is a positive int, not {groups!r}"))
    if groups < 1:
        raise _at_user_line(ShapeError(f"{where}: groups must be a positive int, not {groups}"))
    stride = positive_pair(stride, "stride", where)
    dilation = positive_pair(dilation, "dilation", where)
    op = Conv2d(stride, normalize_padding(padding, where), dilation, groups)
    return op(x, as_variable(filters))


# -- pooling -------------------------------------------------------------------------------
class _Pool(Op):
    """Pools over windows of the last two axes of NCHW input."""

    __props__ = ("kernel", "stride", "padding")
    dilation = (1, 1)

    def __init__(self, kernel, stride, padding):
        self.kernel, self.stride, self.padding = tuple(kernel), tuple(stride), padding

    def _geometry(self):
        return _axes(self, self.kernel)

    def _geometry_of(self, x):
        """The window geometry, once the build-time rule holds on the sizes of the array
        ``x`` (dims unknown in the graph)."""
        axes = self._geometry()
        _check_windows(self, axes, np.shape(x), f"the input of shape {np.shape(x)}")
        return axes

    def _check_padding(self, x):
        """Padding on a side as wide as the window would make windows that hold padding
        only (-inf for max, 0 for the average): refused. Narrower padding is allowed, as
        Theano's ``pool_2d`` allows any ``pad < ws`` (PyTorch's rule, ``pad <= k // 2``,
        is stricter)."""
        if isinstance(self.padding, str):
            return  # "same" pads less than the window on each side
        for axis, k, sides in zip(("height", "width"), self.kernel, self.padding):
            if max(sides) >= k:
                raise ShapeError(
                    f"{self.op_name()} of {x.describe()}: padding {sides} on the {axis} axis "
                    f"is not smaller than the {k}-wide window, so some windows would hold "
                    f"padding only; padding must be at most kernel_size - 1 ({k - 1}) a side"
                )

    def infer_types(self, x):
        _check_rank(self, x, "input")
        self._check_padding(x)
        described = x.describe_as("input")
        spatial = tuple(
            ax.static_out(self, n, described) for ax, n in zip(self._geometry(), x.type.shape[2:])
        )
        return [TensorType(self._dtype(x), x.type.shape[:2] + spatial)]


class MaxPool2d(_Pool):
    """The maximum of each window (padding never wins; a side's padding is below the
    window size, so no window holds padding only)."""

    dtype_rule = "the dtype of x (bool and complex are refused)"

    def _dtype(self, x):
        _check_ordered(self, x)
        return x.type.dtype

    def perform(self, x):
        axes = self._geometry_of(x)
        return np.max(windows(x, axes, _lowest(np.asarray(x).dtype)), axis=(-2, -1))

    def grad(self, inputs, outputs, output_grads):
        return [MaxPool2dGrad(*self.params())(inputs[0], output_grads[0])]


def _flat_windows(cols):
    """Windows (N, C, out_h, out_w, kh, kw) as (N, C, out_h, out_w, kh*kw); the size spelled
    out, as a -1 cannot be inferred from no images or no channels."""
    return cols.reshape(cols.shape[:4] + (cols.shape[4] * cols.shape[5],))


def _check_ordered(op, x):
    """A maximum needs an order, which complex numbers lack (and a window's padding needs a
    lowest value): refused when built, as PyTorch's max pooling refuses them."""
    if x.type.dtype.kind == "c":
        raise DTypeError(
            f"{op.op_name()}: {x.describe_as('input')} is complex, which has no order; "
            "pool abs(x) (the magnitudes) or x.real (the real parts)"
        )


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


class MaxPool2dGrad(_Pool):
    """The gradient of max_pool2d: each window's gradient goes to its (first) maximum.
    ``positive``: only windows whose maximum is above 0 pass theirs on (a ReLU's gradient
    before the pool folded in: the rewrite ``relu_mask_through_max_pool``). Linear in g, so
    its own gradient is :class:`MaxPool2dPick` of the cotangent (which makes ``sn.Rop`` and
    Hessian-vector products through max pooling); the maxima's places do not move under a
    small change of x, so x gets a zero gradient."""

    __props__ = (*_Pool.__props__, "positive")
    dtype_rule = "the dtype of g"

    def __init__(self, kernel, stride, padding, positive=False):
        super().__init__(kernel, stride, padding)
        self.positive = bool(positive)

    def infer_types(self, x, g):
        return [TensorType(g.type.dtype, x.type.shape)]

    def perform(self, x, g):
        axes = self._geometry_of(x)
        cols = windows(x, axes, _lowest(np.asarray(x).dtype))
        flat = _flat_windows(cols)
        hit = np.arange(flat.shape[-1]) == np.argmax(flat, axis=-1)[..., None]
        if self.positive:  # a NaN maximum is not above 0
            hit &= (np.max(flat, axis=-1) > 0)[..., None]
        dcols = (hit * np.asarray(g)[..., None]).reshape(cols.shape).astype(g.dtype)
        return scatter_windows(dcols, np.shape(x), axes)

    def grad(self, inputs, outputs, output_grads):
        (x, _), (u,) = inputs, output_grads
        return [zeros_like(x), MaxPool2dPick(*self.params())(x, u)]


class MaxPool2dPick(_Pool):
    """Each window's value of u (x's shape) at the place of x's (first) maximum there, 0 for
    a window ``positive`` drops: the adjoint of :class:`MaxPool2dGrad` in g, its gradient."""

    __props__ = (*_Pool.__props__, "positive")
    dtype_rule = "the dtype of u"

    def __init__(self, kernel, stride, padding, positive=False):
        super().__init__(kernel, stride, padding)
        self.positive = bool(positive)

    def _dtype(self, x):
        _check_ordered(self, x)
        return x.type.dtype

    def infer_types(self, x, u):
        (pooled,) = _Pool.infer_types(self, x)
        return [TensorType(u.type.dtype, pooled.shape)]

    def perform(self, x, u):
        axes = self._geometry_of(x)
        cols = windows(x, axes, _lowest(np.asarray(x).dtype))
        flat = _flat_windows(cols)
        first = np.argmax(flat, axis=-1)[..., None]
        picked = np.take_along_axis(windows(u, axes).reshape(flat.shape), first, -1)[..., 0]
        if self.positive:  # a NaN maximum is not above 0
            picked = picked * (np.max(flat, axis=-1) > 0)
        return picked.astype(np.asarray(u).dtype, copy=False)

    def grad(self, inputs, outputs, output_grads):
        (x, _), (v,) = inputs, output_grads
        return [zeros_like(x), MaxPool2dGrad(*self.params())(x, v)]


class AvgPool2d(_Pool):
    """The mean of each window, padded positions counted as zeros (a side's padding is below
    the window size)."""

    dtype_rule = "the dtype np.mean gives (float64 for integers)"

    def _dtype(self, x):
        return probe_dtype(self, np.mean, [x])

    def perform(self, x):
        return np.mean(windows(x, self._geometry_of(x)), axis=(-2, -1))

    def grad(self, inputs, outputs, output_grads):
        (x,), (g,) = inputs, output_grads
        return [input_gradient(AvgPool2dGrad(*self.params())(g, x), x)]


class AvgPool2dGrad(_Pool):
    """The gradient of avg_pool2d: each window's gradient spread evenly over the window
    (``like`` gives the input's shape)."""

    dtype_rule = "the dtype of g"

    def infer_types(self, g, like):
        return [TensorType(g.type.dtype, like.type.shape)]

    def perform(self, g, like):
        g = np.asarray(g) / np.asarray(self.kernel[0] * self.kernel[1], dtype=g.dtype)
        dcols = np.broadcast_to(g[..., None, None], g.shape + self.kernel)
        return scatter_windows(dcols, np.shape(like), self._geometry_of(like))

    def grad(self, inputs, outputs, output_grads):
        return [AvgPool2d(*self.params())(output_grads[0]), None]


def _pool(cls, x, kernel_size, stride, padding):
    x = as_variable(x)
    where = f"{cls.op_name()} of {x.describe()}"
    kernel = positive_pair(kernel_size, "kernel_size", where)
    stride = kernel if stride is None else positive_pair(stride, "stride", where)
    return cls(kernel, stride, normalize_padding(padding, where))(x)


def max_pool2d(x, kernel_size, stride=None, padding=0) -> Variable:
    """Max over ``kernel_size`` windows of NCHW x; ``stride`` defaults to the kernel size;
    ``padding`` on each side is at most ``kernel_size - 1``."""
    return _pool(MaxPool2d, x, kernel_size, stride, padding)


def avg_pool2d(x, kernel_size, stride=None, padding=0) -> Variable:
    """Mean over ``kernel_size`` windows of NCHW x (padding counts as zeros, at most
    ``kernel_size - 1`` a side); ``stride`` defaults to the kernel size."""
    return _pool(AvgPool2d, x, kernel_size, stride, padding)
