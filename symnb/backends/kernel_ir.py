"""The kernel description every kernel backend renders: loads, a scalar DAG, a store or a reduction.

A :class:`Kernel` is one loop nest over a broadcast index space. Its operands (inputs, then
one output) carry per-axis strides at run time; the body is a list of SSA scalar values
(loads, literals, conversions and op expressions) ending in either a :class:`Store` (the
elementwise case) or a :class:`Reduction` (the output has stride 0 on the reduced axes and
accumulates). It is built from elementwise nodes, ``Composite`` nodes and ``Reduce`` nodes
(optionally with the elementwise node feeding the reduction fused in), and knows nothing of C:
dialects turn it into source (``symnb/backends/c/renderer.py``).

What cannot be described raises :class:`Unsupported`, and the backend runs the node through
its NumPy reference instead ("library call"), saying so.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from symnb.core.variable import Constant
from symnb.ops.composite import Composite
from symnb.ops.elemwise import Cast, Elemwise
from symnb.ops.reduce import Logsumexp, Mean

#: dtypes a kernel may compute in; float16 and complex are left to NumPy (library calls)
KERNEL_KINDS = "biuf"


class Unsupported(Exception):
    """This node cannot be a kernel; the message says why (shown in ``f.kernels``)."""


@dataclass(frozen=True)
class Operand:
    """An array the kernel reads; ``scalar`` when its type says it has one element."""

    dtype: str
    scalar: bool


@dataclass(frozen=True)
class Load:
    operand: int
    dtype: str


@dataclass(frozen=True)
class Literal:
    value: object  # a Python bool/int/float
    dtype: str
    weak: bool = False  # promotes like a Python scalar (NumPy 2)


@dataclass(frozen=True)
class Convert:
    arg: int  # index of an earlier value
    dtype: str


@dataclass(frozen=True)
class Expr:
    """``template`` (an op's ``c``, e.g. ``"exp({0})"``) applied to earlier values, each first
    converted to ``dtype``, the dtype the op computes in."""

    template: str
    args: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class Store:
    value: int
    dtype: str


@dataclass(frozen=True)
class Reduction:
    """Accumulate ``value`` into the output: ``kind`` is sum, prod, max, min, all, any or
    logsumexp (max-shifted, two passes over each row); ``mean`` divides by the count at the
    end. ``acc_dtype`` is the accumulator's dtype."""

    value: int
    kind: str
    acc_dtype: str
    dtype: str
    mean: bool = False


@dataclass(frozen=True)
class Kernel:
    """``size``: the index space's element count when the types fix it (every dim an int),
    else None; dialects leave out what that size rules out (threads, streaming stores), which
    is less code to compile."""

    inputs: tuple[Operand, ...]
    values: tuple
    result: Store | Reduction
    size: int | None = None

    @property
    def name(self) -> str:
        return "reduce" if isinstance(self.result, Reduction) else "elemwise"


# -- building --------------------------------------------------------------------------------
class _Builder:
    """Collects operands and SSA values while walking nodes."""

    def __init__(self):
        self.operands: list[Operand] = []
        self.operand_vars: list = []
        self.values: list = []
        self.memo: dict = {}
        self.weak: dict[int, object] = {}  # value -> the Python scalar NumPy promotes weakly

    def add(self, value) -> int:
        if value not in self.memo:
            self.memo[value] = len(self.values)
            self.values.append(value)
        return self.memo[value]

    def variable(self, var) -> int:
        """A graph variable as a value: a literal for a 0-d constant, else a load."""
        check_dtype(var.type.dtype)
        if isinstance(var, Constant) and var.type.ndim == 0:
            ref = self.add(Literal(var.value.item(), var.type.dtype.name, var.weak))
            if var.weak:
                self.weak[ref] = var.value.item()
            return ref
        for k, seen in enumerate(self.operand_vars):
            if seen is var:
                return self.add(Load(k, var.type.dtype.name))
        scalar = all(d == 1 for d in var.type.shape)
        self.operands.append(Operand(var.type.dtype.name, scalar))
        self.operand_vars.append(var)
        return self.add(Load(len(self.operands) - 1, var.type.dtype.name))

    def dtype_of(self, ref: int) -> str:
        return self.values[ref].dtype

    def convert(self, ref: int, dtype: str) -> int:
        return ref if self.dtype_of(ref) == dtype else self.add(Convert(ref, dtype))


def check_dtype(dtype) -> None:
    dtype = np.dtype(dtype)
    if dtype.kind not in KERNEL_KINDS or dtype.itemsize < 4 and dtype.kind == "f":
        raise Unsupported(f"{dtype.name} is computed by NumPy, not in kernels")


def compute_dtype(out_dtype, arg_probes) -> str:
    """The dtype an op computes in: its output's, except for ops with a boolean result from
    non-boolean operands (comparisons), which compare in the operands' common dtype."""
    out_dtype = np.dtype(out_dtype)
    if out_dtype.kind != "b":
        return out_dtype.name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return np.result_type(*arg_probes).name
        except (TypeError, OverflowError, ValueError) as exc:
            raise Unsupported(f"no common dtype for {arg_probes}: {exc}") from None


def _apply_op(builder: _Builder, op, args: list[int], probes: list, out_dtype) -> int:
    """One elementwise op on built values; returns the value of its result."""
    out_name = np.dtype(out_dtype).name
    check_dtype(out_name)
    if isinstance(op, Cast):
        return builder.convert(args[0], out_name)
    if isinstance(op, Composite):
        return _inline_composite(builder, op, args)
    if not op.c:
        raise Unsupported(f"{op} has no scalar kernel expression")
    dtype = compute_dtype(out_name, probes)
    check_dtype(dtype)
    converted = tuple(builder.convert(a, dtype) for a in args)
    return builder.convert(builder.add(Expr(op.c, converted, dtype)), out_name)


def _probe(builder: _Builder, ref: int):
    """What NumPy sees for a value when promoting: the Python scalar for weak literals."""
    if ref in builder.weak:
        return builder.weak[ref]
    return np.dtype(builder.dtype_of(ref))


def _step_dtype(op, probes) -> np.dtype:
    arrays = [p if not isinstance(p, np.dtype) else np.ones(1, p) for p in probes]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.result_type(op.perform(*arrays))


def _inline_composite(builder: _Builder, op: Composite, inputs: list[int]) -> int:
    """A Composite's program as values; constants stay weak Python scalars, as in its
    NumPy reference."""
    results: list[int] = []
    for step_op, refs in op.program:
        args = [_program_arg(builder, ref, inputs, results) for ref in refs]
        probes = [_probe(builder, a) for a in args]
        out = _step_dtype(step_op, probes)
        results.append(_apply_op(builder, step_op, args, probes, out))
    return builder.convert(results[-1], op.dtype)


def _program_arg(builder: _Builder, ref, inputs, results) -> int:
    kind = ref[0]
    if kind == "in":
        return inputs[ref[1]]
    if kind == "tmp":
        return results[ref[1]]
    value = ref[1]
    if isinstance(value, (np.generic, np.ndarray)):
        return builder.add(Literal(value.item(), value.dtype.name))
    dtype = ref[2] if len(ref) > 2 and ref[2] is not None else np.result_type(value)
    literal = builder.add(Literal(value, np.dtype(dtype).name, True))
    builder.weak[literal] = value
    return literal


def computed_op(op):
    """The op whose values a node computes: an in-place wrapper computes its ``base``."""
    base = getattr(op, "base", None)
    return base if isinstance(base, Elemwise) and hasattr(op, "destroy_map") else op


def _elemwise_value(builder: _Builder, node) -> int:
    refs = [builder.variable(v) for v in node.inputs]
    probes = [_probe(builder, r) for r in refs]
    return _apply_op(builder, computed_op(node.op), refs, probes, node.outputs[0].type.dtype)


def elemwise_kernel(node) -> tuple[Kernel, list]:
    """The kernel of an elementwise or Composite node, and the variables its operands read."""
    if not isinstance(node.op, Elemwise):
        raise Unsupported(f"{node.op} is not elementwise")
    builder = _Builder()
    value = _elemwise_value(builder, node)
    dtype = node.outputs[0].type.dtype.name
    return _finish(builder, Store(value, dtype), node.outputs[0].type.shape)


#: a Reduce op's ``c_combine`` -> the kind of reduction dialects know how to render
REDUCE_KINDS = {
    "{acc} + {x}": "sum",
    "{acc} * {x}": "prod",
    "fmax({acc}, {x})": "max",
    "fmin({acc}, {x})": "min",
    "({acc} && {x})": "all",
    "({acc} || {x})": "any",
}


def reduce_kernel(node, producer=None) -> tuple[Kernel, list]:
    """The kernel of a Reduce node; ``producer`` (the elementwise node computing its input,
    used by nothing else) is fused into the loop body when given."""
    kind = REDUCE_KINDS.get(getattr(node.op, "c_combine", None))
    if type(node.op) is Logsumexp:
        kind = "logsumexp"
    if kind is None or getattr(node.op, "__props__", ()) != ("axis", "keepdims"):
        raise Unsupported(f"{node.op} has no kernel reduction")
    builder = _Builder()
    if producer is not None:
        value = _elemwise_value(builder, producer)
    else:
        value = builder.variable(node.inputs[0])
    out = node.outputs[0].type.dtype
    check_dtype(out)
    acc = _accumulator(kind, out)
    value = builder.convert(value, acc)
    reduction = Reduction(value, kind, acc, out.name, isinstance(node.op, Mean))
    return _finish(builder, reduction, node.inputs[0].type.shape)


def _accumulator(kind: str, out: np.dtype) -> str:
    """Sums of float32 accumulate in float64 (NumPy's pairwise sum is that accurate)."""
    if kind == "sum" and out.kind == "f":
        return "float64"
    return out.name


def _finish(builder: _Builder, result, shape: tuple) -> tuple[Kernel, list]:
    size = None
    if all(isinstance(d, int) for d in shape):
        size = int(np.prod(shape, dtype=np.int64))
    kernel = Kernel(tuple(builder.operands), tuple(builder.values), result, size)
    return kernel, list(builder.operand_vars)
