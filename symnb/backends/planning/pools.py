"""Pooling as kernels: a pool of at most MAX_WINDOW elements is a map over its output reading
each window element as a strided view (a larger one, a reduction over the windows view); the
max-pool gradient of windows that tile the input is two maps, each window's first maximum and
then the gradient routed to it; the average-pool gradient of such windows, one map spreading
each window's gradient over it. Other windows run the op's NumPy reference. Device linkers,
whose arrays have no offset, keep the reduction pools. The steps' builder is windowed.py's.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from symnb.backends.kernels.build import Builder, fixed_size
from symnb.backends.kernels.ir import Kernel, Map, Operand, Unsupported
from symnb.backends.planner import PLANS
from symnb.backends.planning.convolution import planes_for, planes_view
from symnb.backends.planning.windowed import (
    POOLED,
    POSITION,
    TILED,
    Steps,
    fixed_sizes,
    float_operands,
    padded_source,
    pads_of,
    window_geometry,
)
from symnb.core.types import TensorType
from symnb.core.variable import Variable
from symnb.ops.conv import AvgPool2d, AvgPool2dGrad, MaxPool2d, MaxPool2dGrad


# -- NumPy references of the intermediate steps --------------------------------------------------
def window_ranks(kh, kw):
    """Each window element's position in the window, over the max-pool gradient's space."""
    return np.arange(kh * kw, dtype=POSITION).reshape(1, 1, 1, kh, 1, kw)


@PLANS.register(MaxPool2d, AvgPool2d)
def _pool(linker, node) -> tuple:
    (x,), (out,) = node.inputs, node.outputs
    float_operands(node)
    fixed_sizes(x.type.shape, out.type.shape)
    op, steps = node.op, Steps(linker, node)
    axes = op._geometry()
    pads = pads_of(axes, x.type.shape[2:])
    is_max = isinstance(op, MaxPool2d)
    source = padded_source(steps, x, pads, -np.inf if is_max else 0.0)
    if op.kernel[0] * op.kernel[1] <= MAX_WINDOW and linker.can("offset_views"):
        elements = _window_elements(steps, source, x, op.kernel, op.stride, out.type.shape)
        fallback = steps.fallback(functools.partial(type(op).perform, op), [x], out)
        kernel = _pool_kernel(linker.dialect, elements, is_max, steps.dtype.name, op.stride[1])
        steps.launch(kernel, elements, out, fallback, f"{op.op_name()} over each window")
        return tuple(steps.steps)
    shape = out.type.shape[:2] + tuple(op.kernel) + out.type.shape[2:]
    view = steps.windows(source, steps.temp("windows", shape), window_geometry(axes), POOLED)
    steps.reduce(view, out, "max" if is_max else "sum", mean=not is_max)
    return tuple(steps.steps)


def _window_elements(steps, source, batch, kernel, stride, out_shape) -> list:
    """Element (a, b) of every window of ``source``, one "strided" view (N, C, out_h, out_w)
    each (``batch``'s axis 0 gives N): a map over the windows reads them as kh*kw operands,
    its rows as long as the output's (a reduction over the window axes would run kh*kw
    times more, shorter rows: about 5x slower for a 2x2 pool)."""
    (kh, kw), (sh, sw) = kernel, stride
    channels, out_h, out_w = out_shape[1:]
    coefficients = (1, 0, 0, 0, 0, 1, 0, 0, 0, 0, sh, 0, 0, 0, 0, sw)
    return [
        steps.strided(
            source,
            batch,
            steps.temp(f"x[{a},{b}]", out_shape),
            (4, -2, channels, out_h, out_w, *coefficients, 0, 0, a, b),
        )
        for a in range(kh)
        for b in range(kw)
    ]


def _pool_kernel(dialect, elements, is_max: bool, dtype: str, step: int) -> Kernel:
    """The maximum of ``elements`` (window elements ``step`` apart along the output's rows),
    or their mean (summed in float64)."""
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
    return Kernel(
        _stepped(b.inputs, step),
        (Operand(dtype),),
        tuple(b.values),
        Map(((0, result),)),
        fixed_size(elements[0].type.shape),
    )


def _stepped(operands, step: int) -> tuple:
    """The operands, each expecting to take ``step`` elements along the rows."""
    return tuple(dataclasses.replace(op, row_step=step) for op in operands)


#: windows larger than this give the max-pool gradient's first kernel too many operands
MAX_WINDOW = 16


@PLANS.register(MaxPool2dGrad, needs={"offset_views"})
def _max_pool_grad(linker, node) -> tuple:
    """Where the windows tile the input exactly (stride = kernel, no padding), the gradient is
    two map kernels. The first runs over the pooled output: it reads the kh*kw elements of each
    window (one strided view each) and stores the position of the window's first maximum (NaN
    counting as the maximum, as np.argmax does). The second runs over the input seen as (N, C,
    out_h, kh, out_w, kw): an element takes its window's gradient where its position is the
    stored one. One pass over the windows instead of every element re-reading its window and
    ranking it against the others (about 7x faster)."""
    (x, g), (out,) = node.inputs, node.outputs
    steps, spread = _tiled_gradient(linker, node, x, g)
    (kh, kw), (n, c, height, width) = node.op.kernel, x.type.shape
    oh, ow = height // kh, width // kw
    tile = (n, c, oh, 1, ow, 1)
    elements = [
        steps.windows(x, steps.temp(f"x[{a},{b}]", tile), (1, 1, kh, kw, 1, 1, a, b), TILED)
        for a in range(kh)
        for b in range(kw)
    ]
    first = Variable(TensorType(np.dtype(POSITION), tile), name="first max")
    positive = node.op.positive
    fallback = steps.fallback(
        functools.partial(first_max_positions, kh=kh, kw=kw, positive=positive), [x], first
    )
    kernel = _first_max_kernel(linker.dialect, elements, kw, positive)
    steps.launch(kernel, elements, first, fallback, "each window's first maximum")
    ranks = Variable(TensorType(np.dtype(POSITION), (1, 1, 1, kh, 1, kw)), name="ranks")
    steps.library(functools.partial(window_ranks, kh, kw), [], ranks, "window positions")
    grads = steps.temp("dx tiles", (n, c, oh, kh, ow, kw))
    fallback = steps.fallback(functools.partial(_first_max_reference, op=node.op), [x, g], grads)
    kernel = _route_kernel(linker.dialect, first, ranks, spread)
    # read by convolutions through padded planes: routed straight into their interior
    found = planes_for(linker, steps, out, [x])
    into = None
    if found is not None:
        planes, padding = found
        into = planes_view(steps, planes, padding, out.type.shape, (kh, kw))
    steps.launch(
        kernel,
        [first, ranks, spread],
        grads,
        fallback,
        "each element's gradient: its window's, at the first maximum"
        + (" (into a convolution's padded planes)" if into is not None else ""),
        into=into,
    )
    if found is None:
        steps.reshape(grads, out, (-1, c, height, width))
    else:
        planes_view(steps, planes, padding, out.type.shape, out=out)
    return tuple(steps.steps)


@PLANS.register(AvgPool2dGrad)
def _avg_pool_grad(linker, node) -> tuple:
    """Where the windows tile the input exactly, each element's gradient is its window's
    divided by the window's size: one map over the input seen as (N, C, out_h, kh, out_w,
    kw), the output gradient broadcast over each window."""
    (g, like), (out,) = node.inputs, node.outputs
    steps, spread = _tiled_gradient(linker, node, like, g)
    (kh, kw), (n, c, height, width) = node.op.kernel, like.type.shape
    oh, ow = height // kh, width // kw
    sizes = steps.temp("window size", (1, 1, 1, kh, 1, kw))  # spans the window axes
    steps.library(
        functools.partial(np.full, (1, 1, 1, kh, 1, kw), kh * kw, steps.dtype),
        [],
        sizes,
        "window sizes",
    )
    b = Builder(linker.dialect)
    dtype = steps.dtype.name
    result = b.div(b.variable(spread), b.variable(sizes))
    grads = steps.temp("dx tiles", (n, c, oh, kh, ow, kw))
    kernel = Kernel(
        tuple(b.inputs),
        (Operand(dtype),),
        tuple(b.values),
        Map(((0, result),)),
        fixed_size(grads.type.shape),
    )
    fallback = steps.fallback(functools.partial(_spread_reference, op=node.op), [g, like], grads)
    steps.launch(
        kernel, [spread, sizes], grads, fallback, "each window's gradient over its elements"
    )
    steps.reshape(grads, out, (-1, c, height, width))
    return tuple(steps.steps)


def _tiled_gradient(linker, node, x, g) -> tuple:
    """What both pool gradients over tiling windows start with: the checks, their steps, and
    the output gradient g seen as (N, C, out_h, 1, out_w, 1), one value per window."""
    float_operands(node)
    fixed_sizes(x.type.shape, g.type.shape)
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
    pads = pads_of(op._geometry(), sizes)
    if tuple(op.stride) != (kh, kw) or any(a or b for a, b in pads) or height % kh or width % kw:
        raise Unsupported(
            "a kernel when the windows tile the input exactly (stride = kernel, no "
            "padding, sizes divisible); otherwise the NumPy reference runs"
        )
    if kh * kw > MAX_WINDOW:
        raise Unsupported(f"windows of more than {MAX_WINDOW} elements run the NumPy reference")


def _first_max_kernel(dialect, elements, step: int, positive: bool = False) -> Kernel:
    """The position of the first maximum among ``elements`` (NaN counting as the maximum):
    the count of elements before the first that is the maximum, added up without a select
    (selects became jumps that the random positions of maxima mispredict). ``positive``:
    a window whose maximum is not above 0 gets a position past its last, which no element
    has (its gradient goes nowhere)."""
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
    if positive:
        above = b.gt(peak, b.literal(0, b.dtype_of(peak)))
        past = b.mul(b.convert(b.op("not", above), POSITION), b.literal(len(values), POSITION))
        position = b.add(position, past)
    return Kernel(
        _stepped(b.inputs, step),
        (Operand(POSITION),),
        tuple(b.values),
        Map(((0, position),)),
        fixed_size(elements[0].type.shape),
    )


def _route_kernel(dialect, first, ranks, spread) -> Kernel:
    """Each element's gradient: its window's where its rank is the window's first maximum.
    A product with the hit (0 or 1), as the reference computes it, not a select: the C
    compiler made the select a jump, which the random positions of maxima mispredict. Rows
    of fewer than 8 window columns give way to rows along out_w (render/maps.py), where the
    output takes kw elements a step and the ranks none: the stepped row."""
    b = Builder(dialect)
    dtype = spread.type.dtype.name
    hit = b.convert(b.eq(b.variable(first), b.variable(ranks)), dtype)
    result = b.mul(hit, b.variable(spread))
    n, c, oh, _, ow, _ = first.type.shape
    kh, kw = ranks.type.shape[3], ranks.type.shape[5]
    inputs, output = tuple(b.inputs), Operand(dtype)
    if kw < 8:
        inputs = tuple(
            dataclasses.replace(op, row_step=0 if k == 1 else 1) for k, op in enumerate(inputs)
        )
        output = dataclasses.replace(output, row_step=kw)
    return Kernel(
        inputs, (output,), tuple(b.values), Map(((0, result),)), fixed_size((n, c, oh, kh, ow, kw))
    )


def first_max_positions(x, kh, kw, positive=False):
    """The first kernel's value from NumPy: each window's np.argmax, as (N, C, oh, 1, ow, 1);
    ``positive``: kh * kw more where the window's maximum is not above 0."""
    n, c, h, w = x.shape
    tiles = x.reshape(n, c, h // kh, kh, w // kw, kw).transpose(0, 1, 2, 4, 3, 5)
    flat = tiles.reshape(n, c, h // kh, w // kw, kh * kw)
    first = np.argmax(flat, axis=-1)
    if positive:
        first = first + kh * kw * ~(np.max(flat, axis=-1) > 0)
    return first.astype(POSITION).reshape(n, c, h // kh, 1, w // kw, 1)


def _first_max_reference(x, g, op):
    """The gradient tiles the kernel computes, from the op's NumPy reference."""
    (kh, kw), (n, c, h, w) = op.kernel, x.shape
    return op.perform(x, g).reshape(n, c, h // kh, kh, w // kw, kw)
