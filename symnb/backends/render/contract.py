"""The CPU form of a ``Contract``: a packed, register-tiled product (``contract.h``).

Each operand of the product is read at its base plus one byte offset per index group (m, k,
n), from tables the entry point builds from the strides of the call. So an operand may be any
strided view, over several axes per group (``Contract.groups``): a convolution's filters over
(O; C, kh, kw) and its input's windows over (C, kh, kw; N, out_h, out_w) are packed straight
from the input, with no im2col matrix. The description's ``left`` and ``right`` values become
``sn_left_at(at, j)`` and ``sn_right_at(at, j)``, the value at the j-th element of a run that
starts at ``at`` (one address per operand): packing evaluates them, so what the description
computes on the way (a conversion, a scaling) costs nothing in the product's inner loop.

The rest (panels, micro-kernel, threads) is C text shared by every such kernel. It keeps an
MR x NR block of the result in vector registers (GCC's vector extensions, sized by the
instruction set the kernel is compiled for: AVX-512, AVX or 16-byte vectors).
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from symnb.backends.kernels.ir import Load, Unsupported, closure

#: the product's C text (micro-kernel, packing, threads, entry helper)
HEADER = Path(__file__).with_name("contract.h")


@functools.cache
def product_source() -> str:
    return HEADER.read_text()


class ContractLoops:
    """Writes a ``Contract`` kernel for a CPU dialect ``r``."""

    streams = False

    def __init__(self, r, kernel, schedule):
        self.r, self.k = r, kernel
        self.nin = len(kernel.inputs)

    def source(self) -> str:
        body = self.k.body
        acc = self.r.type_name(body.acc_dtype)
        gm, gk, gn = body.groups
        parts = [
            f"typedef {acc} sn_acc;",
            f"#define SN_ACC_F64 {int(body.acc_dtype == 'float64')}",
            f"#define SN_NIN {self.nin}",
            self.value("sn_left_at", body.left),
            self.runs("sn_left_continues", body.left, "ko", "k"),
            self.value("sn_right_at", body.right),
            self.runs("sn_right_continues", body.right, "no", "n"),
            self.runs("sn_right_steps_continue", body.right, "ko", "k"),
            f"#define SN_RIGHT_LOAD {self.plain_load(body.right)}",
            f"#define SN_LEFT_LOAD {self.plain_load(body.left)}",
            f"#define SN_N_FIXED {self.columns()}",
            product_source(),
            f"{self.r.entry_signature()} {{\n"
            f"    if (a[0] > SN_MAXDIM) return 2;\n"
            f"    return sn_contract(a, ptr, {gm}, {gk}, {gn});\n}}",
        ]  # fmt: skip
        return "\n".join(parts)

    def columns(self) -> int:
        """The product's column count when the types fix it (the micro-kernel's width may fit
        it), else 0."""
        return self.k.body.columns or 0

    def plain_load(self, ref) -> int:
        """The operand whose element value ``ref`` is, as the accumulating type; -1 when it
        computes anything (packing then evaluates it element by element)."""
        item = self.k.values[ref]
        if isinstance(item, Load) and item.dtype == self.k.body.acc_dtype:
            return item.operand
        return -1

    def reads(self, ref) -> list[int]:
        """The operands value ``ref`` reads."""
        values = self.k.values
        return sorted({values[v].operand for v in closure(values, [ref])
                       if isinstance(values[v], Load)})  # fmt: skip

    def value(self, name, ref) -> str:
        """``name(at, j)``: the value ``ref`` in the product's accumulating type, each operand
        ``i`` read at ``at[i] + j`` elements: the ``j``-th element of a run (the caller finds
        where each operand's run starts from the offset tables)."""
        values = self.k.values

        def leaf(item) -> str:
            if not isinstance(item, Load):
                raise Unsupported(f"{type(item).__name__} in a product's operand")
            k, t = item.operand, self.r.type_name(self.k.inputs[item.operand].dtype)
            return f"((const {t} *)at[{k}])[j]"

        lines = self.r.statements(values, closure(values, [ref]), leaf)
        body = "\n".join("    " + line for line in lines)
        return (f"static inline sn_acc {name}(char *const *at, const int64_t j) {{\n"
                f"{body}\n    return (sn_acc)v{ref};\n}}")  # fmt: skip

    def runs(self, name, ref, table, i) -> str:
        """``name(table, i)``: whether every operand value ``ref`` reads has its element at
        index ``i`` of the group right after the one at ``i - 1`` (a run continues, read as
        consecutive elements: vector loads instead of one load per offset)."""
        tests = []
        for k in self.reads(ref):
            size = np.dtype(self.k.inputs[k].dtype).itemsize
            tests.append(f"{table}[{k}][{i}] == {table}[{k}][{i} - 1] + {size}")
        return (
            f"static inline int {name}(int64_t *const *{table}, int64_t {i}) {{\n"
            f"    (void){table}; (void){i};\n    return {' && '.join(tests) or '1'};\n}}"
        )
