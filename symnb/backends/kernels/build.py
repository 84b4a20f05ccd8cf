"""Building kernel descriptions from graph nodes: operands, SSA values, NumPy's dtype rules.

An elementwise op describes its scalar work in :meth:`Elemwise.scalar`, calling the builder's
ops by name (``k.exp(x)``, ``k.where(c, a, b)``); the builder converts operands to the dtype the
op computes in and asks the dialect whether it can spell each op, so a node no dialect can
render is refused here (``Unsupported``), before any fusion is planned around it.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from symnb.backends.kernels.ir import (
    BOOLEAN_OPS,
    SCALAR_OPS,
    Convert,
    Literal,
    Load,
    Op,
    Operand,
    Unsupported,
    check_dtype,
)
from symnb.core.variable import Constant
from symnb.ops.composite import Composite
from symnb.ops.elemwise import Cast, Elemwise


class Builder:
    """Collects operands and SSA values; ``dialect`` (optional) vets each op it may spell."""

    def __init__(self, dialect=None):
        self.dialect = dialect
        self.inputs: list[Operand] = []
        self.input_vars: list = []
        self.values: list = []
        self.memo: dict = {}
        self.weak: dict[int, object] = {}  # value -> the Python scalar NumPy promotes weakly
        self.dtype = "float64"  # the dtype the op being built computes in
        self.constants: dict = {}  # (dtype, bytes, weak) -> the Constant a scalar operand reads

    def emit(self, value) -> int:
        """The SSA number of ``value``, added once."""
        if value not in self.memo:
            self.memo[value] = len(self.values)
            self.values.append(value)
        return self.memo[value]

    def dtype_of(self, ref: int) -> str:
        return self.values[ref].dtype

    # -- operands -------------------------------------------------------------------------------
    def variable(self, var, per_row: bool = False) -> int:
        """A graph variable as a value: a 0-d constant as ``scalar`` makes it, else a load."""
        check_dtype(var.type.dtype)
        if isinstance(var, Constant) and var.type.ndim == 0:
            if not per_row:
                return self.scalar(var.value.item(), var.type.dtype.name, var.weak, var)
            if var.weak:  # (its slot holds the Python number: the kernel reads an array)
                var = self._constant(var.value.item(), var.type.dtype.name, True)
        return self.emit(Load(self.operand(var, per_row), var.type.dtype.name))

    def scalar(self, value, dtype: str, weak: bool = False, var=None) -> int:
        """A constant scalar: a literal when its value is worth spelling (``spelled``), else a
        scalar operand read at launch (``var``, a 0-d graph Constant, or one made here holding
        ``value`` in ``dtype``), so that kernels differing only in such a value have one source
        and one compiled library (a learning rate). A weak one still promotes as its Python
        scalar (``probe``)."""
        dtype = np.dtype(dtype).name
        if spelled(value, dtype):
            return self.literal(value, dtype, weak)
        if var is None or var.weak:  # a weak constant's slot holds its Python scalar
            var = self._constant(value, dtype, weak)
        ref = self.emit(Load(self.operand(var), dtype))
        if weak:
            self.weak[ref] = value
        return ref

    def _constant(self, value, dtype: str, weak: bool) -> Constant:
        """The 0-d Constant of ``value`` in ``dtype`` a scalar operand reads, one per value
        (a weak one apart from a strong one of the same value: they promote differently)."""
        array = np.asarray(value, dtype)
        key = (dtype, array.tobytes(), weak)
        if key not in self.constants:
            self.constants[key] = Constant(array)
        return self.constants[key]

    def operand(self, var, per_row: bool = False) -> int:
        for k, seen in enumerate(self.input_vars):
            if seen is var:
                return k
        shape = var.type.shape
        scalar = all(d == 1 for d in shape)
        row_constant = not scalar and not per_row and shape[-1] == 1
        self.inputs.append(Operand(var.type.dtype.name, scalar, per_row, row_constant))
        self.input_vars.append(var)
        return len(self.inputs) - 1

    # -- values ---------------------------------------------------------------------------------
    def literal(self, value, dtype: str, weak: bool = False) -> int:
        ref = self.emit(Literal(value, np.dtype(dtype).name, weak))
        if weak:
            self.weak[ref] = value
        return ref

    def convert(self, ref: int, dtype: str) -> int:
        """``ref`` in ``dtype``; a weak Python int becomes a float here, as NumPy makes it
        (through a Python float: 2**60 + 2**36 + 1 is 2**60 in float32, where a kernel's
        one conversion of the int64 would give 2**60 + 2**37)."""
        dtype = np.dtype(dtype).name
        if self.dtype_of(ref) == dtype:
            return ref
        value = self.weak.get(ref)
        if type(value) is int and np.dtype(dtype).kind == "f":
            with np.errstate(over="ignore"):
                return self.literal(float(np.dtype(dtype).type(float(value))), dtype)
        return self.emit(Convert(ref, dtype))

    def to(self, ref: int) -> int:
        """``ref`` in the dtype the current op computes in."""
        return self.convert(ref, self.dtype)

    def const(self, value) -> int:
        """A literal in the dtype the current op computes in."""
        return self.literal(value, self.dtype)

    def truth(self, ref: int) -> int:
        """``ref != 0`` in its own dtype (NumPy's truth of any number; NaN is true)."""
        if self.dtype_of(ref) == "bool":
            return ref
        return self.op("ne", ref, self.literal(0, self.dtype_of(ref)))

    def op(self, name: str | None, *args: int) -> int:
        """The scalar op ``name`` of ``args`` (which already have the dtype it computes in)."""
        if name not in SCALAR_OPS or SCALAR_OPS[name] != len(args):
            raise Unsupported(f"no scalar kernel op {name!r} of {len(args)} operands")
        dtype = self.dtype_of(args[-1])
        if self.dialect is not None and not self.dialect.spells(name, dtype):
            raise Unsupported(f"{name}() has no {dtype} version in {self.dialect.name}")
        result = "bool" if name in BOOLEAN_OPS else dtype
        return self.emit(Op(name, tuple(args), result))

    def __getattr__(self, name: str):
        if name in SCALAR_OPS:  # k.exp(x) for k.op("exp", x)
            return functools.partial(self.op, name)
        raise AttributeError(name)

    # -- elementwise ops ------------------------------------------------------------------------
    def apply(self, op, args: list[int], out_dtype) -> int:
        """One elementwise op on built values; returns the value of its result."""
        out = np.dtype(out_dtype).name
        check_dtype(out)
        if isinstance(op, Cast):
            return self.convert(args[0], out)
        if isinstance(op, Composite):
            return self._composite(op, args)
        before, self.dtype = self.dtype, compute_dtype(out, [self.probe(a) for a in args])
        try:
            check_dtype(self.dtype)
            result = op.scalar(self, *args)
        finally:
            self.dtype = before
        return self.convert(result, out)

    def node(self, node) -> int:
        """The value an elementwise node computes, its inputs as operands. A weak Python float
        beside operands all of a narrower float dtype (``x32 * 0.1``) is that dtype's scalar
        operand, as NumPy converts it: the kernel holds no float64 (a device without float64
        runs it, docs/gpu_backends.md)."""
        op, out = computed_op(node.op), node.outputs[0].type.dtype
        if not narrows_weak_floats(node):
            return self.apply(op, [self.variable(v) for v in node.inputs], out)
        refs = [
            self.scalar(float(out.type(v.value.item())), out.name)
            if _weak_float(v)
            else self.variable(v)
            for v in node.inputs
        ]
        return self.apply(op, refs, out)

    def probe(self, ref: int):
        """What NumPy sees for a value when promoting: the Python scalar for weak literals."""
        if ref in self.weak:
            return self.weak[ref]
        return np.dtype(self.dtype_of(ref))

    def _composite(self, op: Composite, inputs: list[int]) -> int:
        """A Composite's program as values; constants stay weak Python scalars, as in its
        NumPy reference."""
        results: list[int] = []
        for step_op, refs in op.program:
            args = [self._program_arg(ref, inputs, results) for ref in refs]
            out = _step_dtype(step_op, [self.probe(a) for a in args])
            results.append(self.apply(step_op, args, out))
        return self.convert(results[-1], op.dtype)

    def _program_arg(self, ref, inputs, results) -> int:
        kind = ref[0]
        if kind == "in":
            return inputs[ref[1]]
        if kind == "tmp":
            return results[ref[1]]
        value = ref[1]
        if isinstance(value, (np.generic, np.ndarray)):
            return self.scalar(value.item(), value.dtype.name)
        dtype = ref[2] if len(ref) > 2 and ref[2] is not None else np.result_type(value)
        return self.scalar(value, np.dtype(dtype).name, True)


def narrows_weak_floats(node) -> bool:
    """Whether ``Builder.node`` holds the node's weak Python floats in its output's narrower
    float dtype (``x32 * 0.1``; not a fused Composite, whose body keeps its own operands):
    then they are no float64 of the kernel's (the device linker asks)."""
    out = node.outputs[0].type.dtype
    strong = {v.type.dtype for v in node.inputs if not _weak_float(v)}
    narrow = out.kind == "f" and out.itemsize < 8 and strong == {out}
    return narrow and not isinstance(computed_op(node.op), Composite)


def _weak_float(var) -> bool:
    return (
        isinstance(var, Constant) and var.weak and var.type.ndim == 0 and var.type.dtype.kind == "f"
    )


def spelled(value, dtype: str) -> bool:
    """Whether a constant scalar is written into the kernel's text: every non-float (bools,
    integers: indices, masks, shifts) and the floats a compiler or a renderer uses, those that
    are whole (0, 1, 2, -1: ``x * 1``, ``pow(x, 2)``), a power of two (0.5 is ``pow``'s sqrt;
    ``x / 0.25`` is ``x * 4``) or not finite (inf and NaN: masks and identities). Other floats
    (a learning rate) gain the compiler nothing: they are operands (``Builder.scalar``)."""
    if np.dtype(dtype).kind != "f" or isinstance(value, (bool, np.bool_)):
        return True
    value = float(value)
    if not math.isfinite(value) or value.is_integer():
        return True
    return abs(math.frexp(value)[0]) == 0.5


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


def _step_dtype(op, probes) -> np.dtype:
    arrays = [p if not isinstance(p, np.dtype) else np.ones(1, p) for p in probes]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.result_type(op.perform(*arrays))


def computed_op(op):
    """The op whose values a node computes: an in-place wrapper computes its ``base``."""
    base = getattr(op, "base", None)
    return base if isinstance(base, Elemwise) and hasattr(op, "destroy_map") else op


def fixed_size(shape: tuple) -> int | None:
    """The element count when every dim is an int, else None."""
    if all(isinstance(d, int) for d in shape):
        return int(np.prod(shape, dtype=np.int64))
    return None
