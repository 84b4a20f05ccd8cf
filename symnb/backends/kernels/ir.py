"""The kernel description's data: named scalar ops over operands, in one of four loop shapes.

A :class:`Kernel` runs over an index space (the broadcast of its inputs; see the plan's launch
ABI in ``symnb/backends/plan.py``). Its scalar work is a tuple of SSA values; each names an
earlier value by its position. Nothing here is text of any language: ops are names from
:data:`SCALAR_OPS`, and renderers decide how to spell them.

The loop shapes (``Kernel.body``):

- :class:`Map`: every output element is a function of the inputs' elements at its index.
- :class:`Reduce`: output 0 accumulates a value over the axes where the output is absent.
- :class:`Rows`: the last axis is a row; passes run over each row in turn (a pass may reduce
  the row to a scalar that later passes read, and may store elements), then per-row values
  are stored. Softmax, logsumexp and the fused cross-entropy are row programs.
- :class:`Contract`: a matrix product over the space (batch..., m, k, n): output 0 is the sum
  over k of ``left`` (read at (m, k)) times ``right`` (read at (k, n)). CPU renderers pack it
  into a register-tiled product (``render/contract.py``); GPU renderers tile it through local
  memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: scalar op name -> number of operands. Renderers spell each (``symnb/backends/render``).
SCALAR_OPS = {
    **dict.fromkeys(
        "add sub mul div floor_div mod pow maximum minimum atan2 hypot copysign fmod "
        "polygamma lt le gt ge eq ne bit_and bit_or bit_xor".split(),
        2,
    ),
    **dict.fromkeys(
        "neg abs sign exp log sqrt tanh sigmoid sin cos tan asin acos atan sinh cosh asinh "
        "acosh atanh expm1 log1p log2 log10 exp2 cbrt erf erfc erfinv erfcinv tgamma lgamma "
        "digamma trigamma floor ceil trunc rint invert not isnan isinf isfinite".split(),
        1,
    ),
    "where": 3,
}
#: ops whose result is a bool whatever their operands
BOOLEAN_OPS = frozenset("lt le gt ge eq ne not isnan isinf isfinite".split())
#: reduction kinds and their combine ops
REDUCTIONS = {
    "sum": "add",
    "prod": "mul",
    "max": "maximum",
    "min": "minimum",
    "all": "bit_and",
    "any": "bit_or",
}
#: dtypes a kernel may compute in; float16 and complex are left to NumPy (library calls)
KERNEL_KINDS = "biuf"


class Unsupported(Exception):
    """This node cannot be a kernel; the message says why (shown in ``f.kernels``)."""


# -- operands and values -------------------------------------------------------------------------
@dataclass(frozen=True)
class Operand:
    """An array the kernel reads or writes. ``scalar``: one element (read once);
    ``per_row``: a row kernel's operand without the row axis (labels, a per-row loss);
    ``row_constant``: its type's last axis has length 1, so it is likely broadcast along the
    output's rows (a bias of shape (1, C, 1, 1), a column (N, 1)). ``row_step``: the step in
    elements the planner expects this operand to take along the rows (an input or the output;
    0: constant along them), None where it does not say (a 2x2 max-pool's windows: inputs every
    other element; its gradient's route: the output every other). Both are facts the schedule
    reads (``symnb/backends/schedule/cpu.py``: CPU loops get a row variant for them)."""

    dtype: str
    scalar: bool = False
    per_row: bool = False
    row_constant: bool = False
    row_step: int | None = None


@dataclass(frozen=True)
class Load:
    """Input ``operand``'s element at the current index (in a row pass: the row's element)."""

    operand: int
    dtype: str


@dataclass(frozen=True)
class Gather:
    """Input ``operand``'s row element at the position ``index`` (a value) holds."""

    operand: int
    index: int
    dtype: str


@dataclass(frozen=True)
class Index:
    """The current element's position along the row (row passes only)."""

    dtype: str = "int64"


@dataclass(frozen=True)
class Extent:
    """The row's length (row passes and finals)."""

    dtype: str = "int64"


@dataclass(frozen=True)
class Stored:
    """Output ``output``'s row element at the current index, as an earlier pass stored it."""

    output: int
    dtype: str


@dataclass(frozen=True)
class RowValue:
    """What pass ``step`` of a row program reduced its row to."""

    step: int
    dtype: str


@dataclass(frozen=True)
class Literal:
    value: object  # a Python bool/int/float
    dtype: str
    weak: bool = False  # promotes like a Python scalar (NumPy 2)

    def _key(self) -> tuple:
        """What tells two literals apart: Python's ``-0.0 == 0.0``, but a kernel's
        ``1 / -0.0``, ``atan2`` and ``copysign`` do not agree, so the sign is part of it
        (and every NaN is one value)."""
        value = self.value
        sign = math.copysign(1.0, value) if isinstance(value, float) else 1.0
        return ("nan" if value != value else value, sign, self.dtype, self.weak)

    def __eq__(self, other) -> bool:
        return isinstance(other, Literal) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


@dataclass(frozen=True)
class Convert:
    arg: int
    dtype: str


@dataclass(frozen=True)
class Op:
    """The scalar op ``name`` (a key of SCALAR_OPS) of earlier values; computed in ``dtype``."""

    name: str
    args: tuple[int, ...]
    dtype: str


# -- loop shapes ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Map:
    stores: tuple[tuple[int, int], ...]  # (output, value)


@dataclass(frozen=True)
class Reduce:
    """Output 0 = ``kind`` of ``value`` over the reduced axes; ``mean`` divides by the count.
    ``tail``: how many of the index space's last axes are reduced (0, 1, or 2 for two or
    more); ``row``: the last axis' length when the types fix it (the schedule sums short rows
    in blocks where the axis above them is reduced too: a bias gradient over a padded plane's
    interior)."""

    value: int
    kind: str
    acc_dtype: str
    mean: bool = False
    tail: int = 0
    row: int | None = None


@dataclass(frozen=True)
class Pass:
    """One sweep over a row: stores elements and/or reduces ``value`` with ``kind``.
    ``total_dtype``: partial sums accumulate in ``acc_dtype`` and are added up in this wider
    type (float32 sums that are both fast and accurate; the schedule sizes the parts)."""

    kind: str | None = None
    value: int | None = None
    acc_dtype: str = ""
    stores: tuple[tuple[int, int], ...] = ()
    total_dtype: str = ""


@dataclass(frozen=True)
class Rows:
    passes: tuple[Pass, ...]
    finals: tuple[tuple[int, int], ...] = ()  # (per-row output, value) after the passes
    check: int | None = None  # a per-row bool value: false makes the kernel decline


@dataclass(frozen=True)
class Contract:
    """Output 0 (lacking axis k) = the sum over k of ``value`` = ``left * right``, in
    ``acc_dtype``, over the index space (batch..., m, k, n). ``left``'s closure reads only
    operands lacking axis n, ``right``'s only operands lacking axis m: a GPU work-group then
    loads a tile of each into local memory once for a tile of outputs. It reads as a sum
    ``Reduce`` (``kind``, ``mean``). ``groups``: how many axes m, k and n each span at the end
    of the space (a convolution's k is (C, kh, kw) of its input's windows, its n (N, out_h,
    out_w)); CPU renderers pack each operand by tables of offsets per group, GPU renderers
    take one axis each. ``columns``: the n axes' element count when the types fix it (the
    CPU micro-kernel's width is chosen at compile time to fit it)."""

    value: int
    left: int
    right: int
    acc_dtype: str
    groups: tuple[int, int, int] = (1, 1, 1)
    columns: int | None = None  # the n axes' element count when the types fix it
    kind = "sum"
    mean = False


@dataclass(frozen=True)
class Kernel:
    """``size``: the index space's element count when the types fix it, else None; the
    schedule (``symnb/backends/schedule``) leaves out what that size rules out (threads,
    streaming stores)."""

    inputs: tuple[Operand, ...]
    outputs: tuple[Operand, ...]
    values: tuple
    body: Map | Reduce | Rows | Contract
    size: int | None = None

    @property
    def name(self) -> str:
        return type(self.body).__name__.lower()


def identity(kind: str, dtype: str):
    """The start value of a reduction as a Python number (inf for float max/min)."""
    dt = np.dtype(dtype)
    if kind in ("sum", "any"):
        return False if dt.kind == "b" else 0
    if kind in ("prod", "all"):
        return True if dt.kind == "b" else 1
    if dt.kind == "f":
        return -math.inf if kind == "max" else math.inf
    if dt.kind == "b":
        return kind == "min"
    info = np.iinfo(dt)
    return int(info.min if kind == "max" else info.max)


def check_dtype(dtype) -> None:
    dtype = np.dtype(dtype)
    if dtype.kind not in KERNEL_KINDS or dtype.itemsize < 4 and dtype.kind == "f":
        raise Unsupported(f"{dtype.name} is computed by NumPy, not in kernels")


def depends(values: tuple, ref: int, kinds: tuple) -> bool:
    """Whether value ``ref`` reads, directly or through its arguments, a value of ``kinds``."""
    item = values[ref]
    if isinstance(item, kinds):
        return True
    return any(depends(values, a, kinds) for a in arguments(item))


def arguments(item) -> tuple[int, ...]:
    """The values an SSA value reads."""
    if isinstance(item, Op):
        return item.args
    if isinstance(item, Convert):
        return (item.arg,)
    if isinstance(item, Gather):
        return (item.index,)
    return ()


def closure(values: tuple, refs) -> list[int]:
    """Every value ``refs`` need, in SSA order."""
    seen: set[int] = set()
    stack = [r for r in refs if r is not None]
    while stack:
        ref = stack.pop()
        if ref not in seen:
            seen.add(ref)
            stack.extend(arguments(values[ref]))
    return sorted(seen)
