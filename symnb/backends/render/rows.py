"""A row program, on every C-family target: per row, a check, passes over its elements (a pass
may reduce the row to a value later passes read, and may store elements), then per-row values.

The walk is ``RowWriter.levels`` (which values each step computes once per row and which per
element); on a CPU (``CpuRows``) each row is a function over flat or strided rows, the rows
split between threads, blocked sums and prefetches as the schedule says; on a GPU (``GpuGrid``
"group-rows") a work-group takes each row, its work-items sharing every pass and combining
partial reductions as a tree in local memory between barriers.
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
from symnb.backends.render.walk import Walk, indent


class RowWriter(Walk):
    """Row programs: per row, the check, the passes then the finals (``levels``: which values
    each computes once per row and which per element), the rows split between threads on a
    CPU, between work-groups on a GPU."""

    def __init__(self, r, kernel, schedule):
        super().__init__(r, kernel, schedule)
        element = (Index, Stored)
        self.element = {
            i
            for i in range(len(kernel.values))
            if depends(kernel.values, i, element) or self._reads_rows(i)
        }

    def _reads_rows(self, ref: int) -> bool:
        loads = [i for i in closure(self.k.values, [ref]) if isinstance(self.k.values[i], Load)]
        ops = self.k.inputs
        return any(
            not (ops[self.k.values[i].operand].scalar or ops[self.k.values[i].operand].per_row)
            for i in loads
        )

    def levels(self) -> tuple[list, list, list]:
        """The walk every target shares: the values of the row's check, of each pass (those
        computed once per row, then those computed per element) and of the finals, each
        per-row value written once, before the first pass (or the finals) that needs it."""
        values, rows, done = self.k.values, self.k.body, set()

        def new(refs) -> list[int]:
            todo = [i for i in closure(values, refs) if i not in self.element and i not in done]
            done.update(todo)
            return todo

        check = new([rows.check]) if rows.check is not None else []
        passes = []
        for p in rows.passes:
            row_values = new(self.needs(p))
            passes.append(
                (row_values, [i for i in closure(values, self.needs(p)) if i in self.element])
            )
        return check, passes, new([v for _, v in rows.finals])

    def needs(self, p) -> list[int]:
        refs = [p.value] + [v for _, v in p.stores]
        return [r for r in refs if r is not None]

    def source(self) -> str:
        if self.grid:
            return self.group_rows()
        rows = self.row(True) + self.row(False)
        return "typedef int (*sn_rows_fn)(int64_t, char *const *, int64_t *const *, int64_t);\n" + (
            rows + self.entry()
        )

    # -- what an element reads ---------------------------------------------------------------
    def leaf(self, strided: bool = False):
        """Spells the values that read memory or the row: on a CPU through the row function's
        pointers (flat) or strides (``strided``), on a GPU through the row's byte pointers."""

        def spell(item) -> str:
            if isinstance(item, Load):
                return self.grid_load(item) if self.grid else self.load(item, strided)
            if isinstance(item, Gather):
                t = self.t(item.dtype)
                base = f"q{item.operand}" if self.grid else f"p[{item.operand}]"
                return f"*({self.g}const {t} *)({base} + v{item.index} * s{item.operand})"
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

    def grid_load(self, item) -> str:
        k, t = item.operand, self.t(self.k.inputs[item.operand].dtype)
        if self.k.inputs[k].scalar or self.k.inputs[k].per_row:
            return f"*({self.g}const {t} *)q{k}"
        return f"*({self.g}const {t} *)(q{k} + i * s{k})"

    def stored(self, j: int, strided: bool = False) -> str:
        if self.grid:
            return f"*({self.g}{self.out_type(j)} *)(q{self.nin + j} + i * s{self.nin + j})"
        if strided:
            return f"*({self.out_type(j)} *)(p[{self.nin + j}] + i * so{j})"
        return f"out{j}[i]"

    # -- a CPU: a function per row (flat or strided), rows split between threads -----------------
    def row(self, strided: bool) -> str:
        name = "sn_rows" if strided else "sn_rows_flat"
        body = [*self.pointers(strided)]
        check, passes, finals = self.levels()
        if self.k.body.check is not None:
            body += self.statements(check, strided)
            body.append(f"if (!v{self.k.body.check}) return 1;")
        for step, (p, (row_values, element_values)) in enumerate(zip(self.k.body.passes, passes)):
            body += self.statements(row_values, strided)
            body += self.sweep(step, p, element_values, strided)
        body += self.statements(finals, strided)
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

    def statements(self, refs, strided: bool) -> list[str]:
        return self.r.statements(self.k.values, refs, self.leaf(strided))

    def sweep(self, step: int, p, refs, strided: bool) -> list[str]:
        """One pass over the row's elements, computing the element values ``refs``."""
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
            extremum = self.extremum_loop(p.kind, p.acc_dtype, body, value, "lo", "hi")
            loop = self.chunked(step, strided, extremum)
            return [
                f"{acc_t} acc{step} = {start}; int nan{step} = 0;",
                "{",
                f"    {acc_t} acc = acc{step}; int nan = nan{step};",
                indent(loop),
                f"    acc{step} = acc; nan{step} = nan;",
                "}",
                f"if (nan{step}) acc{step} = NAN;",
                f"const {acc_t} rv{step} = acc{step};",
            ]
        update = f"acc += {value};" if p.kind == "sum" else f"acc = acc && {value};"
        pragma = self.r.simd([(p.kind, "acc", p.acc_dtype)])
        loop = (
            f"{pragma}\n    for (int64_t i = lo; i < hi; i++) {{\n{body}\n        {update}\n    }}"
        )
        block = self.s.blocks[step]
        if block:
            total_t = self.t(p.total_dtype)
            return [
                f"{total_t} tot{step} = 0;",
                *self.next_rows(step, strided),
                f"for (int64_t lo = 0; lo < n; lo += {block}) {{",
                f"    const int64_t hi = lo + {block} < n ? lo + {block} : n;",
                f"    {acc_t} acc = {start};",
                indent(self.prefetched(step, strided, loop, "hi - lo")),
                f"    tot{step} += acc;",
                "}",
                f"const {total_t} rv{step} = tot{step};",
            ]
        loop = self.chunked(step, strided, loop)
        return [
            f"{acc_t} acc{step} = {start};",
            "{",
            f"    {acc_t} acc = acc{step};",
            indent(loop),
            f"    acc{step} = acc;",
            "}",
            f"const {acc_t} rv{step} = acc{step};",
        ]

    def chunked(self, step: int, strided: bool, loop: str) -> str:
        """The pass over [0, n): in chunks that prefetch the next row where that pays."""
        if not self.prefetches(step, strided):
            return "{\n    const int64_t lo = 0, hi = n;\n" + indent(loop) + "\n}"
        c = self.s.prefetch_chunk
        ahead = "".join(line + "\n" for line in self.next_rows(step, strided))
        chunk = indent(self.prefetched(step, strided, loop, c))
        return (
            f"{ahead}int64_t lo = 0;\nfor (; lo + {c} <= n; lo += {c}) {{\n"
            f"    const int64_t hi = lo + {c};\n{chunk}"
            f"\n}}\n{{\n    const int64_t hi = n;\n{indent(loop)}\n}}"
        )

    def prefetches(self, step: int, strided: bool) -> bool:
        """Whether pass ``step`` over a flat row fetches the next row meanwhile (the
        schedule's ``prefetch``)."""
        return step in self.s.prefetch and not strided

    def fetched_inputs(self):
        """The inputs whose next row a prefetching pass fetches: (index, item size)."""
        return [
            (k, np.dtype(op.dtype).itemsize)
            for k, op in enumerate(self.k.inputs)
            if not (op.scalar or op.per_row)
        ]

    def next_rows(self, step: int, strided: bool) -> list[str]:
        """How far each fetched input's next row lies, read once per row and not inside the
        chunk loop: re-reading it there through ``st`` cost a tenth of a reduction's time."""
        if not self.prefetches(step, strided):
            return []
        return [
            f"const int64_t ahead{k} = last > 0 ? st[{k}][last - 1] : 0;"
            for k, _ in self.fetched_inputs()
        ]

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
            "outer > 1 && outer * n >= SN_PARALLEL_MIN", reduction=("or", "bad", "int32")
        )
        call = "bad |= row(n, p, st, nd - 1);"
        return f"""
{self.r.driver_signature()} {{
{self.decode(collapse=False)}{self.SPLIT}    int bad = 0;
    sn_rows_fn row = {self.contiguous_test("nd - 1")} ? sn_rows_flat : sn_rows;
{self.outer_rows(call, pragma)}
    return bad;
}}"""

    # -- a GPU: a work-group per row, partial reductions combined in local memory ---------------
    def group_rows(self) -> str:
        """Work-items split each pass; reductions meet in local memory as a tree."""
        rows, leaf = self.k.body, self.leaf()
        lines = [
            self.r.local_array(self._red_type(p), f"red{j}", "SN_GROUP")
            for j, p in enumerate(rows.passes)
            if p.kind
        ]
        lines += self.row_start()
        check, passes, finals = self.levels()
        if rows.check is not None:
            lines.append(self.body(check, leaf))
            lines.append(f"        if (!v{rows.check}) {{ if (lid == 0) *status = 1; continue; }}")
        for j, (p, (row_values, element_values)) in enumerate(zip(rows.passes, passes)):
            lines += self.group_sweep(j, p, leaf, row_values, element_values)
        lines.append("        if (lid == 0) {")
        lines.append(self.body(finals, leaf, "            "))
        for j, v in rows.finals:
            t = self.t(self.k.outputs[j].dtype)
            lines.append(f"            *({self.g}{t} *)q{self.nin + j} = v{v};")
        lines += ["        }", "    }"]
        return f"\n{self.r.entry_signature(self.nops)} {{\n" + "\n".join(lines) + "\n}"

    def _red_type(self, p) -> str:
        return self.t(p.total_dtype or p.acc_dtype)

    def row_start(self) -> list[str]:
        ptrs = "\n".join(f"        {self.g}char *q{k} = p{k} + o{k};" for k in range(self.nops))
        strides = "\n".join(
            f"        const int64_t s{k} = st[{k} * nd + nd - 1];" for k in range(self.nops)
        )
        return [
            self.header(),
            f"    const int64_t lid = {self.r.local_id}, n = shape[nd - 1];",
            "    int64_t outer = 1;",
            "    for (int64_t d = 0; d + 1 < nd; d++) outer *= shape[d];",
            f"    for (int64_t row = {self.r.group_id}; row < outer; "
            f"row += {self.r.group_count}) {{",
            self.offsets("row", "nd - 2"),
            ptrs,
            strides,
        ]

    def group_sweep(self, j: int, p, leaf, row_values, element_values) -> list[str]:
        """Pass ``j``: its per-row values, then its elements split between the work-items."""
        lines = [self.body(row_values, leaf)]
        stores = "".join(f"\n            {self.stored(o)} = v{v};" for o, v in p.stores)
        loop_body = self.body(element_values, leaf, "            ") + stores
        if p.kind is None:
            return lines + [
                f"        for (int64_t i = lid; i < n; i += SN_GROUP) {{\n{loop_body}\n        }}",
                f"        {self.r.barrier};",
            ]
        t = self._red_type(p)
        dtype = p.total_dtype or p.acc_dtype
        start = self.r.literal(identity(p.kind, dtype), dtype)
        step = self.combine(p.kind, "acc", f"({t})v{p.value}", dtype)
        tree = self.combine(p.kind, f"red{j}[lid]", f"red{j}[lid + s]", dtype)
        return lines + [
            f"        {{\n        {t} acc = {start};",
            f"        for (int64_t i = lid; i < n; i += SN_GROUP) {{\n{loop_body}\n"
            f"            acc = {step};\n        }}",
            f"        red{j}[lid] = acc;\n        }}",
            f"        {self.r.barrier};",
            "        for (int64_t s = SN_GROUP / 2; s > 0; s >>= 1) {",
            f"            if (lid < s) red{j}[lid] = {tree};",
            f"            {self.r.barrier};",
            "        }",
            f"        const {t} rv{j} = red{j}[0];",
            f"        {self.r.barrier};",
        ]
