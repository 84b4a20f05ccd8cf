"""How a node becomes a kernel description, registered per op class (``@lowers(Softmax)``).

A lowering returns a :class:`Lowered`: the kernel, the variables its operands read and write
with the index-space axes each lacks (``absent``: a reduction's output lacks the reduced axes,
a cross-entropy's labels lack the row axis), and what the executor does with an empty index
space. Adding an op with a fast kernel means registering its lowering here beside the others;
nothing in the linkers or executors changes.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from symnb.backends.kernels.build import Builder, fixed_size
from symnb.backends.kernels.ir import (
    Contract,
    Extent,
    Gather,
    Index,
    Kernel,
    Load,
    Map,
    Operand,
    Pass,
    Reduce,
    Rows,
    RowValue,
    Stored,
    Unsupported,
    check_dtype,
)
from symnb.core.dims import is_known
from symnb.ops.blas import Gemm
from symnb.ops.elemwise import Elemwise
from symnb.ops.linalg import Matmul
from symnb.ops.nnet import LogSoftmax, Softmax, SoftmaxCrossEntropy, SoftmaxCrossEntropyGrad
from symnb.ops.reduce import Logsumexp, Mean
from symnb.ops.reduce import Reduce as ReduceOp

FLOATS = ("float32", "float64")

_LOWERINGS: dict[type, object] = {}
_OBSERVERS: list = []


@dataclass(frozen=True)
class Lowered:
    """A node (or a producer and its reduction) as one kernel and its operands' layout."""

    kernel: Kernel
    inputs: tuple  # (variable, absent axes)
    outputs: tuple  # (variable, absent axes, keepdims)
    nodes: tuple  # the graph nodes the kernel computes, in order
    inplace: int | None = None  # the input whose buffer may take output 0
    empty: str = "skip"  # an empty index space: "skip" the call, or "decline" to the reference
    note: str = ""  # shown in f.kernels


def lowers(*op_classes):
    """Register a lowering ``fn(node, dialect, producer) -> Lowered`` for these op classes."""

    def register(fn):
        for cls in op_classes:
            _LOWERINGS[cls] = fn
        return fn

    return register


def lower(node, dialect, producer=None) -> Lowered:
    """The kernel of ``node`` for ``dialect``; ``producer`` (an elementwise node only this
    reduction reads) is computed inside it. Raises Unsupported when there is none."""
    for cls in type(node.op).__mro__:
        if cls in _LOWERINGS:
            lowered = _LOWERINGS[cls](node, dialect, producer)
            for observer in _OBSERVERS:
                observer(lowered)
            return lowered
    raise Unsupported("no kernel for this op; runs its NumPy reference")


@contextlib.contextmanager
def observing(callback):
    """Inside, ``callback(lowered)`` sees every kernel lowered (tools and tests list them:
    the tests render every kernel the op suite generates in every dialect)."""
    _OBSERVERS.append(callback)
    try:
        yield
    finally:
        _OBSERVERS.remove(callback)


def fusable(node, dialect, producer) -> bool:
    """Whether ``producer`` can be computed inside ``node``'s kernel."""
    try:
        lower(node, dialect, producer)
    except Unsupported:
        return False
    return True


def _operands(builder: Builder, absent_of=None) -> tuple:
    absent_of = absent_of or {}
    return tuple((v, absent_of.get(id(v), ())) for v in builder.input_vars)


def _kernel(builder: Builder, outputs, body, shape) -> Kernel:
    return Kernel(
        tuple(builder.inputs), tuple(outputs), tuple(builder.values), body, fixed_size(shape)
    )


# -- maps and reductions ----------------------------------------------------------------------
@lowers(Elemwise)
def _map(node, dialect, producer=None) -> Lowered:
    builder = Builder(dialect)
    value = builder.node(node)
    out = node.outputs[0]
    kernel = _kernel(builder, [Operand(out.type.dtype.name)], Map(((0, value),)), out.type.shape)
    inplace = _destroyed_operand(node, builder.input_vars)
    return Lowered(kernel, _operands(builder), ((out, (), False),), (node,), inplace)


@lowers(ReduceOp)
def _reduce(node, dialect, producer=None) -> Lowered:
    op = node.op
    if op.kind is None or op.__props__ != ("axis", "keepdims"):
        raise Unsupported(f"{op} has no kernel reduction")
    builder = Builder(dialect)
    value = builder.node(producer) if producer is not None else builder.variable(node.inputs[0])
    out = node.outputs[0].type.dtype
    check_dtype(out)
    acc = "float64" if op.kind == "sum" and out.kind == "f" else out.name
    shape = node.inputs[0].type.shape
    tail, row = _reduced_tail(shape, op.axis)
    body = Reduce(builder.convert(value, acc), op.kind, acc, isinstance(op, Mean), tail, row)
    kernel = _kernel(builder, [Operand(out.name)], body, shape)
    nodes = (producer, node) if producer is not None else (node,)
    outputs = ((node.outputs[0], op.axis, op.keepdims),)
    return Lowered(kernel, _operands(builder), outputs, nodes, empty="decline")


def _reduced_tail(shape, axis) -> tuple[int, int | None]:
    """How many of the last axes (up to two) are reduced, and the last axis' length when it is
    known (a named or unknown dim is not)."""
    nd, axis = len(shape), set(axis)
    tail = 2 if nd >= 2 and {nd - 2, nd - 1} <= axis else int(nd >= 1 and nd - 1 in axis)
    return tail, shape[-1] if nd and is_known(shape[-1]) else None


@lowers(Matmul)
def _matmul(node, dialect, producer=None) -> Lowered:
    """``x @ y`` of float matrices (or stacks of them): the kernel backends call BLAS instead;
    device backends run this tiled product (``Contract``)."""
    x, y = node.inputs
    return contraction(x, y, node.outputs[0], (node,))


def contraction(x, y, out, nodes) -> Lowered:
    """``out = x @ y`` as a ``Contract`` over the space (batch..., m, k, n): x lacks axis n, y
    axis m, the output axis k; batch axes broadcast as np.matmul's do, and transposed operands
    are read through their strides. ``nodes``: what the kernel computes (for the display).
    x and y are two operands even when they are one variable (``x @ x``)."""
    dtype = out.type.dtype.name
    if x.type.ndim < 2 or y.type.ndim < 2 or not x.type.dtype == y.type.dtype == out.type.dtype:
        raise Unsupported("a product of matrices (or stacks of them) of one float dtype only")
    if dtype not in FLOATS:
        raise Unsupported("a product of float32/float64 matrices only")
    space = (*out.type.shape[:-2], x.type.shape[-2], x.type.shape[-1], y.type.shape[-1])
    nd = len(space)
    kernel = product_kernel(x, y, dtype, space)
    inputs = ((x, (nd - 1,)), (y, (nd - 3,)))
    return Lowered(
        kernel, inputs, ((out, (nd - 2,), False),), tuple(nodes), empty="decline", note=PRODUCT_NOTE
    )


def product_kernel(x, y, dtype: str, space, groups=(1, 1, 1), columns=None) -> Kernel:
    """The ``Contract`` kernel of ``x`` times ``y`` (operands 0 and 1, of ``dtype``, two
    operands even when they are one variable: ``x @ x``) over ``space``."""
    builder = Builder()
    builder.inputs += [Operand(dtype), Operand(dtype)]
    builder.input_vars += [x, y]
    left, right = builder.emit(Load(0, dtype)), builder.emit(Load(1, dtype))
    body = Contract(builder.op("mul", left, right), left, right, dtype, groups, columns)
    return _kernel(builder, [Operand(dtype)], body, space)


PRODUCT_NOTE = "x @ y in tiles through local memory (no BLAS on this device)"


def gemm_epilogue(node, product, dialect) -> Lowered:
    """``beta * z + alpha * product`` of a gemm node whose ``product`` (x @ y) a matmul
    kernel computed: the second of the two kernels a device runs a gemm as."""
    if not isinstance(node.op, Gemm):
        raise Unsupported(f"{node.op} is not a gemm")
    z, alpha, _, _, beta = node.inputs
    out = node.outputs[0]
    builder = Builder(dialect)
    scaled_z = builder.op("mul", builder.variable(beta), builder.variable(z))
    value = builder.op(
        "add", scaled_z, builder.op("mul", builder.variable(alpha), builder.variable(product))
    )
    kernel = _kernel(builder, [Operand(out.type.dtype.name)], Map(((0, value),)), out.type.shape)
    return Lowered(kernel, _operands(builder), ((out, (), False),), (node,))


def _destroyed_operand(node, operands) -> int | None:
    """The kernel operand an in-place node may overwrite (``destroy_map``), if any."""
    for ins in getattr(node.op, "destroy_map", {}).values():
        for i in ins:
            for k, var in enumerate(operands):
                if var is node.inputs[i]:
                    return k
    return None


# -- row programs -------------------------------------------------------------------------------
def _last_axis(node, x) -> int:
    """The row axis: the op's axis must be the last (other axes run the reference)."""
    axis = getattr(node.op, "axis", None)
    last = x.type.ndim - 1
    if x.type.ndim == 0 or axis not in (last, (last,), -1):
        raise Unsupported("along the last axis only; otherwise the NumPy reference runs")
    return last


def _float_rows(node, *floats) -> str:
    dtype = node.outputs[-1].type.dtype.name
    if dtype not in FLOATS or any(v.type.dtype.name != dtype for v in floats):
        got = "/".join(sorted({dtype, *(v.type.dtype.name for v in floats)}))
        raise Unsupported(
            f"{got} rows run in NumPy (kernels take float32/float64 rows of one dtype)"
        )
    return dtype


def _exp_sum(
    b: Builder, x: int, store: int | None = None, finite_shift: bool = False
) -> tuple[Pass, Pass, int]:
    """The max pass and the pass summing ``exp(x - max)`` (storing it when ``store`` is an
    output), and the value ``x - max``; with ``finite_shift``, an infinite max shifts by 0
    (SciPy's softmax and log_softmax: ``log_softmax([1, inf])`` is ``[-inf, nan]``)."""
    dtype = b.dtype_of(x)
    peak = b.emit(RowValue(0, dtype))
    if finite_shift:
        peak = b.where(b.isfinite(peak), peak, b.const(0))
    shifted = b.sub(x, peak)
    e = b.exp(shifted)
    stores = ((store, e),) if store is not None else ()
    peak = Pass("max", x, dtype)
    total = Pass("sum", e, dtype, stores, "float64")
    return peak, total, shifted


def _row_sum(b: Builder, step: int, dtype: str) -> int:
    return b.convert(b.emit(RowValue(step, "float64")), dtype)


@lowers(Softmax)
def _softmax(node, dialect, producer=None) -> Lowered:
    x = node.inputs[0]
    _last_axis(node, x)
    dtype = _float_rows(node, x)
    b = Builder(dialect)
    b.dtype = dtype
    peak, total, _ = _exp_sum(b, b.variable(x), store=0)
    scale = b.div(b.const(1), _row_sum(b, 1, dtype))
    normalise = Pass(stores=((0, b.mul(b.emit(Stored(0, dtype)), scale)),))
    body = Rows((peak, total, normalise))
    kernel = _kernel(b, [Operand(dtype)], body, x.type.shape)
    return Lowered(
        kernel,
        _operands(b),
        ((node.outputs[0], (), False),),
        (node,),
        empty="decline",
        note=_ROW_NOTE,
    )


@lowers(LogSoftmax)
def _log_softmax(node, dialect, producer=None) -> Lowered:
    x = node.inputs[0]
    _last_axis(node, x)
    dtype = _float_rows(node, x)
    b = Builder(dialect)
    b.dtype = dtype
    peak, total, shifted = _exp_sum(b, b.variable(x), finite_shift=True)
    lse = b.log(_row_sum(b, 1, dtype))
    body = Rows((peak, total, Pass(stores=((0, b.sub(shifted, lse)),))))
    kernel = _kernel(b, [Operand(dtype)], body, x.type.shape)
    return Lowered(
        kernel,
        _operands(b),
        ((node.outputs[0], (), False),),
        (node,),
        empty="decline",
        note=_ROW_NOTE,
    )


@lowers(Logsumexp)
def _logsumexp(node, dialect, producer=None) -> Lowered:
    x = node.inputs[0]
    last = _last_axis(node, x)
    if node.op.__props__ != ("axis", "keepdims"):
        raise Unsupported(f"{node.op} has no kernel")
    out = node.outputs[0].type.dtype.name
    check_dtype(out)
    b = Builder(dialect)
    b.dtype = out
    value = b.node(producer) if producer is not None else b.variable(x)
    value = b.convert(value, out)
    peak = b.emit(RowValue(0, out))
    shift = b.where(b.isfinite(peak), peak, b.const(0))
    e = b.convert(b.exp(b.sub(value, shift)), "float64")
    passes = (Pass("max", value, out), Pass("sum", e, "float64"))
    result = b.add(b.log(_row_sum(b, 1, out)), shift)
    kernel = _kernel(b, [Operand(out, per_row=True)], Rows(passes, ((0, result),)), x.type.shape)
    nodes = (producer, node) if producer is not None else (node,)
    outputs = ((node.outputs[0], (last,), node.op.keepdims),)
    return Lowered(kernel, _operands(b), outputs, nodes, empty="decline")


def _label(b: Builder, labels) -> tuple[int, int]:
    """A row's label and whether it is in [0, n) (a negative one is refused, as the
    reference refuses it: the kernel declines and the reference raises)."""
    if labels.type.dtype.kind not in "iu" or labels.type.dtype == np.uint64:
        raise Unsupported("labels must be integers that int64 holds")
    label = b.convert(b.variable(labels, per_row=True), "int64")
    n = b.emit(Extent())
    return label, b.bit_and(b.ge(label, b.literal(0, "int64")), b.lt(label, n))


@lowers(SoftmaxCrossEntropy)
def _xent(node, dialect, producer=None) -> Lowered:
    logits, labels = node.inputs
    last, dtype = _last_axis(node, logits), _float_rows(node, logits)
    b = Builder(dialect)
    b.dtype = dtype
    label, in_range = _label(b, labels)
    x = b.variable(logits)
    peak, total, _ = _exp_sum(b, x, store=1)
    s = _row_sum(b, 1, dtype)
    normalise = Pass(stores=((1, b.mul(b.emit(Stored(1, dtype)), b.div(b.const(1), s))),))
    picked = b.emit(Gather(b.values[x].operand, label, dtype))
    peak_value = b.emit(RowValue(0, dtype))
    loss = b.sub(b.log(s), b.sub(picked, peak_value))
    # a row whose max is +inf (no NaN: the max pass keeps NaN) has log_softmax's loss, once
    # per row: log(sum(exp(x))) - x[label] = inf - x[label] (SoftmaxCrossEntropy.perform)
    inf = b.const(np.inf)
    loss = b.where(b.eq(peak_value, inf), b.sub(inf, picked), loss)
    body = Rows((peak, total, normalise), ((0, loss),), check=in_range)
    outs = [Operand(dtype, per_row=True), Operand(dtype)]
    kernel = _kernel(b, outs, body, logits.type.shape)
    absent = {id(labels): (last,)}
    outputs = ((node.outputs[0], (last,), False), (node.outputs[1], (), False))
    return Lowered(kernel, _operands(b, absent), outputs, (node,), empty="decline", note=_ROW_NOTE)


@lowers(SoftmaxCrossEntropyGrad)
def _xent_grad(node, dialect, producer=None) -> Lowered:
    dloss, probs, labels = node.inputs
    last, dtype = _last_axis(node, probs), _float_rows(node, probs, dloss)
    b = Builder(dialect)
    b.dtype = dtype
    label, in_range = _label(b, labels)
    d = b.convert(b.variable(dloss, per_row=True), dtype)
    p = b.variable(probs)
    at_label = b.eq(b.emit(Index()), label)
    y = b.mul(b.where(at_label, b.sub(p, b.const(1)), p), d)
    body = Rows((Pass(stores=((0, y),)),), check=in_range)
    kernel = _kernel(b, [Operand(dtype)], body, probs.type.shape)
    absent = {id(labels): (last,), id(dloss): (last,)}
    return Lowered(
        kernel,
        _operands(b, absent),
        ((node.outputs[0], (), False),),
        (node,),
        empty="decline",
        note=_ROW_NOTE,
    )


_ROW_NOTE = "last axis, float32/float64; otherwise the NumPy reference runs"
