"""The CPU form of each loop shape: loop nests over the index space, threads, SIMD.

Maps get a flat loop for contiguous calls (threaded, with streaming stores, where the
schedule says) and a strided row loop for the rest, plus the row variants the schedule asks
for; row programs run their passes over each row with rows split between threads; reductions
are written in reductions.py, and what all three share in loop_base.py. The schedule
(``symnb/backends/schedule/cpu.py``) decides; the dialect supplies the spelling of threads
(``parallel_for``, ``team``), SIMD (``simd``), ``prefetch`` and streaming stores.
"""

from __future__ import annotations

import numpy as np

from symnb.backends.kernels.ir import (
    Extent,
    Gather,
    Index,
    Load,
    RowValue,
    Stored,
    closure,
    depends,
    identity,
)
from symnb.backends.render.contract import ContractLoops
from symnb.backends.render.maps import MapWriter
from symnb.backends.render.reductions import ReduceLoops
from symnb.backends.render.runtime import runtime
from symnb.backends.render.walk import Walk, indent
from symnb.backends.schedule.base import CpuContract, CpuMap, CpuReduce, CpuRows


def render_loops(r, kernel, schedule) -> str:
    """The entry point and its loops for a CPU dialect ``r``, as ``schedule`` lays them out
    (a product the schedule does not pack is written as the sum it is)."""
    r = r.fresh()
    writers = {CpuMap: MapWriter, CpuReduce: ReduceLoops, CpuContract: ContractLoops,
               CpuRows: RowLoops}  # fmt: skip
    writer = writers[type(schedule)](r, kernel, schedule)
    entry = writer.source()
    return "\n".join(
        [
            r.preamble(kernel, writer.streams),
            r.helper_source(),
            runtime(schedule.parallel_min, r.shared_helpers()),
            entry,
        ]
    )


class RowLoops(Walk):
    """Row programs: per row (rows split between threads), the passes then the finals."""

    def __init__(self, r, kernel, schedule):
        super().__init__(r, kernel, schedule)
        element = (Index, Stored)
        self.element = {
            i for i in range(len(kernel.values))
            if depends(kernel.values, i, element) or self._reads_rows(i)
        }  # fmt: skip
        self.emitted: set[int] = set()

    def _reads_rows(self, ref: int) -> bool:
        loads = [i for i in closure(self.k.values, [ref]) if isinstance(self.k.values[i], Load)]
        ops = self.k.inputs
        return any(not (ops[self.k.values[i].operand].scalar or
                        ops[self.k.values[i].operand].per_row) for i in loads)  # fmt: skip

    def source(self) -> str:
        rows = self.row(True) + self.row(False)
        return "typedef int (*sn_rows_fn)(int64_t, char *const *, int64_t *const *, int64_t);\n" + (
            rows + self.entry()
        )

    # -- one row --------------------------------------------------------------------------------
    def leaf(self, strided: bool):
        def spell(item) -> str:
            if isinstance(item, Load):
                return self.load(item, strided)
            if isinstance(item, Gather):
                t = self.t(item.dtype)
                return f"*(const {t} *)(p[{item.operand}] + v{item.index} * s{item.operand})"
            if isinstance(item, Index):
                return "i"
            if isinstance(item, Extent):
                return "n"
            if isinstance(item, RowValue):
                return f"rv{item.step}"
            if isinstance(item, Stored):
                return self.stored(item.output, strided)
            raise TypeError(f"unknown kernel value {item!r}")

        return spell

    def stored(self, j: int, strided: bool) -> str:
        if strided:
            return f"*({self.out_type(j)} *)(p[{self.nin + j}] + i * so{j})"
        return f"out{j}[i]"

    def row(self, strided: bool) -> str:
        self.emitted = set()
        name = "sn_rows" if strided else "sn_rows_flat"
        body = [*self.pointers(strided)]
        check = self.k.body.check
        if check is not None:
            body += self.row_level([check], strided)
            body.append(f"if (!v{check}) return 1;")
        for step, p in enumerate(self.k.body.passes):
            body += self.row_level(self.needs(p), strided)
            body += self.sweep(step, p, strided)
        finals = [v for _, v in self.k.body.finals]
        body += self.row_level(finals, strided)
        for j, v in self.k.body.finals:
            body.append(f"*({self.out_type(j)} *)p[{self.nin + j}] = v{v};")
        text = "\n    ".join(body)
        return f"""
static int {name}(int64_t n, char *const *p, int64_t *const *st, int64_t last) {{
    (void)st; (void)last;
    {text}
    return 0;
}}"""

    def pointers(self, strided: bool) -> list[str]:
        lines = self.hoisted(strided=strided)
        for k, op in enumerate(self.k.inputs):
            if not (op.scalar or op.per_row or strided):
                lines.append(f"const int64_t s{k} = {np.dtype(op.dtype).itemsize};")
        for j, op in enumerate(self.k.outputs):
            t = self.t(op.dtype)
            if strided:
                lines.append(f"const int64_t so{j} = st[{self.nin + j}][last];")
            elif not op.per_row:
                lines.append(f"{t} *out{j} = ({t} *)p[{self.nin + j}];")
        return lines

    def needs(self, p) -> list[int]:
        refs = [p.value] + [v for _, v in p.stores]
        return [r for r in refs if r is not None]

    def row_level(self, refs, strided: bool) -> list[str]:
        """Statements for the per-row values ``refs`` need that are not yet written."""
        todo = [
            i for i in closure(self.k.values, refs)
            if i not in self.element and i not in self.emitted
        ]  # fmt: skip
        self.emitted.update(todo)
        return self.r.statements(self.k.values, todo, self.leaf(strided))

    def sweep(self, step: int, p, strided: bool) -> list[str]:
        """One pass over the row's elements."""
        refs = [i for i in closure(self.k.values, self.needs(p)) if i in self.element]
        body = self.body(refs, self.leaf(strided), "        ")
        stores = "".join(f"\n        {self.stored(j, strided)} = v{v};" for j, v in p.stores)
        if p.kind is None:
            loop = (
                f"{self.r.simd([])}\n    for (int64_t i = 0; i < n; i++) {{\n{body}{stores}\n    }}"
            )
            return [loop]
        return self.reducing(step, p, body + stores, strided)

    def reducing(self, step: int, p, body: str, strided: bool) -> list[str]:
        acc_t = self.t(p.acc_dtype)
        start = self.r.literal(identity(p.kind, p.acc_dtype), p.acc_dtype)
        value = f"v{p.value}"
        if p.kind in ("max", "min"):
            pick = ">" if p.kind == "max" else "<"
            update = f"acc = {value} {pick} acc ? {value} : acc; nan |= {value} != {value};"
            pragma = self.r.simd([(p.kind, "acc"), ("or", "nan")])
            loop = self.chunked(step, strided, f"{pragma}\n    for (int64_t i = lo; i < hi; i++) "
                                f"{{\n{body}\n        {update}\n    }}")  # fmt: skip
            return [f"{acc_t} acc{step} = {start}; int nan{step} = 0;",
                    "{", f"    {acc_t} acc = acc{step}; int nan = nan{step};",
                    indent(loop), f"    acc{step} = acc; nan{step} = nan;", "}",
                    f"if (nan{step}) acc{step} = NAN;",
                    f"const {acc_t} rv{step} = acc{step};"]  # fmt: skip
        update = f"acc += {value};" if p.kind == "sum" else f"acc = acc && {value};"
        pragma = self.r.simd([(p.kind, "acc")])
        loop = (f"{pragma}\n    for (int64_t i = lo; i < hi; i++) "
                f"{{\n{body}\n        {update}\n    }}")  # fmt: skip
        block = self.s.blocks[step]
        if block:
            total_t = self.t(p.total_dtype)
            return [f"{total_t} tot{step} = 0;", *self.next_rows(step, strided),
                    f"for (int64_t lo = 0; lo < n; lo += {block}) {{",
                    f"    const int64_t hi = lo + {block} < n ? lo + {block} : n;",
                    f"    {acc_t} acc = {start};",
                    indent(self.prefetched(step, strided, loop, "hi - lo")),
                    f"    tot{step} += acc;", "}",
                    f"const {total_t} rv{step} = tot{step};"]  # fmt: skip
        loop = self.chunked(step, strided, loop)
        return [f"{acc_t} acc{step} = {start};", "{", f"    {acc_t} acc = acc{step};",
                indent(loop), f"    acc{step} = acc;", "}",
                f"const {acc_t} rv{step} = acc{step};"]  # fmt: skip

    def chunked(self, step: int, strided: bool, loop: str) -> str:
        """The pass over [0, n): in chunks that prefetch the next row where that pays."""
        if not self.prefetches(step, strided):
            return "{\n    const int64_t lo = 0, hi = n;\n" + indent(loop) + "\n}"
        c = self.s.prefetch_chunk
        ahead = "".join(line + "\n" for line in self.next_rows(step, strided))
        chunk = indent(self.prefetched(step, strided, loop, c))
        return (f"{ahead}int64_t lo = 0;\nfor (; lo + {c} <= n; lo += {c}) {{\n"
                f"    const int64_t hi = lo + {c};\n{chunk}"
                f"\n}}\n{{\n    const int64_t hi = n;\n{indent(loop)}\n}}")  # fmt: skip

    def prefetches(self, step: int, strided: bool) -> bool:
        """Whether pass ``step`` over a flat row fetches the next row meanwhile (the
        schedule's ``prefetch``)."""
        return step in self.s.prefetch and not strided

    def fetched_inputs(self):
        """The inputs whose next row a prefetching pass fetches: (index, item size)."""
        return [(k, np.dtype(op.dtype).itemsize) for k, op in enumerate(self.k.inputs)
                if not (op.scalar or op.per_row)]  # fmt: skip

    def next_rows(self, step: int, strided: bool) -> list[str]:
        """How far each fetched input's next row lies, read once per row and not inside the
        chunk loop: re-reading it there through ``st`` cost a tenth of a reduction's time."""
        if not self.prefetches(step, strided):
            return []
        return [f"const int64_t ahead{k} = last > 0 ? st[{k}][last - 1] : 0;"
                for k, _ in self.fetched_inputs()]  # fmt: skip

    def prefetched(self, step: int, strided: bool, loop: str, span) -> str:
        """``loop`` preceded by prefetches of the next row's ``span`` elements (a constant
        where the chunk is whole, so the prefetch loop unrolls)."""
        if not self.prefetches(step, strided):
            return loop
        lines = []
        for k, size in self.fetched_inputs():
            address = f"p[{k}] + lo * {size} + ahead{k} + b"
            limit = span * size if isinstance(span, int) else f"({span}) * {size}"
            lines.append(f"for (int64_t b = 0; b < {limit}; b += 64) {self.r.prefetch(address)}")
        return "\n".join([*lines, loop])

    # -- the entry ------------------------------------------------------------------------------
    def entry(self) -> str:
        pragma = self.r.parallel_for(
            "outer > 1 && outer * n >= SN_PARALLEL_MIN", reduction=("or", "bad")
        )
        call = "bad |= row(n, p, st, nd - 1);"
        return f"""
{self.r.driver_signature()} {{
{self.decode(collapse=False)}{self.SPLIT}    int bad = 0;
    sn_rows_fn row = {self.contiguous_test("nd - 1")} ? sn_rows_flat : sn_rows;
{self.outer_rows(call, pragma)}
    return bad;
}}"""
