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
from symnb.backends.render.loop_base import LoopWriter, indent
from symnb.backends.render.reductions import ReduceLoops
from symnb.backends.render.runtime import runtime
from symnb.backends.schedule.base import CpuContract, CpuMap, CpuReduce, CpuRows


def render_loops(r, kernel, schedule) -> str:
    """The entry point and its loops for a CPU dialect ``r``, as ``schedule`` lays them out
    (a product the schedule does not pack is written as the sum it is)."""
    r = r.fresh()
    writers = {CpuMap: MapLoops, CpuReduce: ReduceLoops, CpuContract: ContractLoops,
               CpuRows: RowLoops}  # fmt: skip
    writer = writers[type(schedule)](r, kernel, schedule)
    entry = writer.source()
    return "\n".join(
        [
            r.preamble(kernel, writer.streams),
            r.helper_source(),
            runtime(writer.threshold, r.shared_helpers()),
            entry,
        ]
    )


class MapLoops(LoopWriter):
    """out[i] = f(in...[i]) over a broadcast index space (one output)."""

    def source(self) -> str:
        ((out, value),) = self.k.body.stores
        self.refs = closure(self.k.values, [value])
        out_t, result = self.out_type(out), f"v{value}"
        self.streams = self.s.stream
        chunk = self.streamed(out_t, result) if self.streams else _PLAIN_CHUNK
        parts = [self.flat(out_t, result), chunk, self.strided(out_t, result)]
        if self.row_constants():
            parts.append(self.constant_row(out_t, result))
        if self.row_steps():
            parts.append(self.stepped_row(out_t, result))
        return "\n".join([*parts, self.entry(out_t)])

    def leaf(self, strided: bool, constants=(), steps=None):
        return lambda item: self.load(item, strided, constants, steps)

    def row_constants(self) -> tuple[int, ...]:
        """The inputs a row variant reads once (the schedule's ``constant_rows``)."""
        return self.s.constant_rows

    def constant_row(self, out_t: str, result: str) -> str:
        """A row where the ``row_constants`` inputs have stride 0 and the rest unit stride
        (a bias added to NCHW data, ``x / x.sum(1, keepdims=True)``): those inputs are read
        once and the row is vectorised like a flat one, where the strided row was not."""
        head = "sn_row_const(int64_t n, char *const *p, int64_t *const *st, int64_t last)"
        return self.vector_loop(head, "0", "n", out_t, result, self.row_constants(),
                                "(void)st; (void)last;")  # fmt: skip

    def row_steps(self) -> tuple[int, ...] | None:
        """The element steps of the inputs then the output compiled into a row variant (the
        schedule's ``row_steps``), or None."""
        return self.s.row_steps

    def stepped_row(self, out_t: str, result: str) -> str:
        """A row whose operands take the ``row_steps`` (compiled in: the C compiler
        vectorises it with permutes and masked stores, where run-time strides left it a
        scalar loop 8x slower)."""
        steps = self.row_steps()
        constants = tuple(k for k in range(self.nin) if steps[k] == 0)
        head = "sn_row_step(int64_t n, char *const *p, int64_t *const *st, int64_t last)"
        return self.vector_loop(head, "0", "n", out_t, result, constants,
                                "(void)st; (void)last;", steps)  # fmt: skip

    def stepped_test(self, axis: str) -> str:
        """Every array operand's stride along ``axis`` is its ``row_steps`` elements."""
        return self.steps_test(axis, self.row_steps())

    def constant_row_test(self, axis: str) -> str:
        """The ``row_constants`` inputs have stride 0 along ``axis``, every other array unit
        stride."""
        constants = self.row_constants()
        steps = [0 if k in constants else 1 for k in range(self.nops)]
        return self.steps_test(axis, steps)

    def steps_test(self, axis: str, steps) -> str:
        """Every array operand k (inputs then the output) has a stride of ``steps[k]``
        elements along ``axis``."""
        tests = [
            f"st[{k}][{axis}] == {steps[k] * np.dtype(op.dtype).itemsize}"
            for k, op in enumerate(self.k.inputs + self.k.outputs)
            if not (op.scalar or op.per_row)
        ]
        return "(" + " && ".join(tests) + ")"

    def flat(self, out_t: str, result: str) -> str:
        head = "sn_flat(int64_t lo, int64_t hi, char *const *p)"
        return self.vector_loop(head, "lo", "hi", out_t, result)

    def vector_loop(self, head: str, lo: str, hi: str, out_t: str, result: str, constants=(),
                    prelude: str = "", steps=None) -> str:  # fmt: skip
        """A vectorised loop over [lo, hi) of unit-strided operands; ``constants``: inputs
        read once instead (see ``constant_row``); ``steps``: the operands' element steps
        (inputs then the output) where they are not 1 (see ``stepped_row``)."""
        hoist = "\n    ".join([*([prelude] if prelude else []),
                               *self.hoisted(strided=False, constants=constants)])  # fmt: skip
        at = "i" if steps is None or steps[self.nin] == 1 else f"i * {steps[self.nin]}"
        return f"""
static void {head} {{
    {hoist}
    {out_t} *out = ({out_t} *)p[{self.nin}];
    {self.r.simd([])}
    for (int64_t i = {lo}; i < {hi}; i++) {{
{self.body(self.refs, self.leaf(False, constants, steps))}
        out[{at}] = {result};
    }}
}}"""

    def streamed(self, out_t: str, result: str) -> str:
        """Large outputs: blocks computed into an aligned L1 buffer by the same vectorised
        body, then written with streaming stores (no write-allocate reads)."""
        hoist = "\n    ".join(self.hoisted(strided=False))
        return f"""
#if SN_STREAM
#define SN_BLOCK ({self.s.stream_block_bytes} / (int64_t)sizeof({out_t}))
static void sn_block(int64_t lo, char *const *p, {out_t} *restrict buf) {{
    {hoist}
    {self.r.simd([])}
    for (int64_t j = 0; j < SN_BLOCK; j++) {{
        const int64_t i = lo + j;
{self.body(self.refs, self.leaf(False))}
        buf[j] = {result};
    }}
}}

static void sn_flat_stream(int64_t lo, int64_t hi, char *const *p) {{
    {out_t} *out = ({out_t} *)p[{self.nin}];
    uintptr_t addr = (uintptr_t)(out + lo);
    if (addr % sizeof({out_t})) {{ sn_flat(lo, hi, p); return; }}
    int64_t head = (int64_t)((64 - addr % 64) % 64 / sizeof({out_t}));
    if (head > hi - lo) head = hi - lo;
    sn_flat(lo, lo + head, p);
    {out_t} buf[SN_BLOCK] __attribute__((aligned(64)));
    int64_t i = lo + head;
    for (; i + SN_BLOCK <= hi; i += SN_BLOCK) {{
        sn_block(i, p, buf);
        sn_stream_copy((char *)(out + i), (const char *)buf, {self.s.stream_block_bytes});
    }}
    sn_stream_fence();
    sn_flat(i, hi, p);
}}
#endif

static void sn_chunk(int64_t lo, int64_t hi, char *const *p, int stream) {{
#if SN_STREAM
    if (stream) {{ sn_flat_stream(lo, hi, p); return; }}
#endif
    (void)stream;
    sn_flat(lo, hi, p);
}}"""

    def strided(self, out_t: str, result: str) -> str:
        hoist = "\n    ".join(self.hoisted(strided=True))
        return f"""
static void sn_row(int64_t n, char *const *p, int64_t *const *st, int64_t last) {{
    {hoist}
    const int64_t so = st[{self.nin}][last];
    for (int64_t i = 0; i < n; i++) {{
{self.body(self.refs, self.leaf(True))}
        *({out_t} *)(p[{self.nin}] + i * so) = {result};
    }}
}}"""

    def entry(self, out_t: str) -> str:
        streams = f"n * (int64_t)sizeof({out_t}) >= {self.s.stream_min_bytes}"
        stream = streams if self.streams else "0"
        flat = self.threaded_flat(stream) if self.threaded() else "sn_chunk(0, shape[0], p0, 0);"
        return f"""
{self.r.driver_signature()} {{
{self.decode()}    if (nd == 1 && {self.contiguous_test("0")}) {{
        {flat}
        return 0;
    }}
    nd = sn_tile(local, nd, shape, {self.nops}, st, {self.nin});
    if (nd > 1 && shape[nd - 1] < 8) sn_inner_axis(nd, shape, {self.nops}, st, {self.nin});
{self.SPLIT}    const int unit = {self.contiguous_test("nd - 1")};  /* rows of adjacent elements */
{self.row_choice()}
    return 0;
}}"""

    def row_choice(self) -> str:
        """Each row by the flat loop, the constant row, the stepped row or the strided one,
        whichever fits."""
        rows = ""
        if self.threaded():
            rows = self.r.parallel_for("outer > 1 && outer * n >= SN_PARALLEL_MIN")
        tests, calls = [], ["if (unit) sn_flat(0, n, p);"]
        if self.row_constants():
            tests.append(f"    const int constant = {self.constant_row_test('nd - 1')};\n")
            calls.append("else if (constant) sn_row_const(n, p, st, nd - 1);")
        if self.row_steps():
            tests.append(f"    const int stepped = {self.stepped_test('nd - 1')};\n")
            calls.append("else if (stepped) sn_row_step(n, p, st, nd - 1);")
        calls.append("else sn_row(n, p, st, nd - 1);")
        return "".join(tests) + self.outer_rows(" ".join(calls), rows)

    def threaded_flat(self, stream: str) -> str:
        """The contiguous case split into 16-element-aligned chunks, one per thread."""
        team, count, me = self.r.team()
        return f"""int64_t n = shape[0];
        int stream = {stream};
        if (n < SN_PARALLEL_MIN) {{ sn_chunk(0, n, p0, stream); return 0; }}
        {team}
        {{
            const int64_t nt = {count}, t = {me};
            int64_t chunk = ((n + nt - 1) / nt + 15) & ~(int64_t)15;
            int64_t lo = t * chunk, hi = lo + chunk < n ? lo + chunk : n;
            if (lo < hi) sn_chunk(lo, hi, p0, stream);
        }}"""


#: ``sn_chunk`` of a kernel whose output is too small for streaming stores
_PLAIN_CHUNK = """
static void sn_chunk(int64_t lo, int64_t hi, char *const *p, int stream) {
    (void)stream;
    sn_flat(lo, hi, p);
}"""


class RowLoops(LoopWriter):
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
