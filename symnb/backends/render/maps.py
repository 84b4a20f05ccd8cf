"""A map, on every C-family target: out[i] = f(in...[i]) over a broadcast index space.

On a CPU (``CpuMap``) a flat loop for contiguous calls (split between threads, with streaming
stores, where the schedule says), a strided row loop for the rest, and the row variants the
schedule asks for (a constant row, a stepped row); on a GPU (``GpuGrid`` "elements") a
grid-stride loop of work-items over the elements. The element itself is written once
(``MapWriter.element``).
"""

from __future__ import annotations

import numpy as np

from symnb.backends.kernels.ir import Load, closure
from symnb.backends.render.walk import Walk, indent


class MapWriter(Walk):
    """out[i] = f(in...[i]) over a broadcast index space (one output): each element's values
    and store (``element``) written once, run by the loops the schedule's target takes."""

    def source(self) -> str:
        ((out, value),) = self.k.body.stores
        self.refs = closure(self.k.values, [value])
        self.result = f"v{value}"
        if self.grid:
            return self.grid_stride(out)
        out_t = self.out_type(out)
        self.streams = self.s.stream
        chunk = self.streamed(out_t) if self.streams else _PLAIN_CHUNK
        parts = [self.flat(out_t), chunk, self.strided(out_t)]
        if self.row_constants():
            parts.append(self.constant_row(out_t))
        if self.row_steps():
            parts.append(self.stepped_row(out_t))
        return "\n".join([*parts, self.entry(out_t)])

    def element(self, leaf, target: str, indent: str = "        ") -> str:
        """The element's values and its store into ``target``: the map's one body."""
        return f"{self.body(self.refs, leaf, indent)}\n{indent}{target} = {self.result};"

    def leaf(self, strided: bool, constants=(), steps=None):
        """Spells an input's element: through the host loop's pointers and strides (see
        ``load``) or, on a GPU, at the work-item's byte offset."""
        if self.grid:
            return lambda item: self.at(_loaded(item).operand, f"o{item.operand}")
        return lambda item: self.load(_loaded(item), strided, constants, steps)

    # -- a GPU: a grid-stride loop over the elements ---------------------------------------------
    def grid_stride(self, out: int) -> str:
        """One axis (a contiguous call, its axes collapsed before launch: ``gpu.collapse``)
        steps each operand by its stride, without dividing; more decode each element's
        index axis by axis."""
        target = self.at(self.nin + out, f"o{self.nin + out}")
        steps = "\n".join(f"    const int64_t s{k} = st[{k} * nd];" for k in range(self.nops))
        flat = "\n".join(f"        const int64_t o{k} = e * s{k};" for k in range(self.nops))
        return f"""
{self.r.entry_signature(self.nops)} {{
{self.header()}    int64_t total = 1;
    for (int64_t d = 0; d < nd; d++) total *= shape[d];
    if (nd == 1) {{
{steps}
        for (int64_t e = {self.r.global_id}; e < total; e += {self.r.global_size}) {{
{indent(flat)}
{indent(self.element(self.leaf(False), target))}
        }}
        return;
    }}
    for (int64_t e = {self.r.global_id}; e < total; e += {self.r.global_size}) {{
{self.offsets("e", "nd - 1")}
{self.element(self.leaf(False), target)}
    }}
}}"""

    # -- a CPU: flat and row loops, threads, streaming stores -----------------------------------

    def row_constants(self) -> tuple[int, ...]:
        """The inputs a row variant reads once (the schedule's ``constant_rows``)."""
        return self.s.constant_rows

    def constant_row(self, out_t: str) -> str:
        """A row where the ``row_constants`` inputs have stride 0 and the rest unit stride
        (a bias added to NCHW data, ``x / x.sum(1, keepdims=True)``): those inputs are read
        once and the row is vectorised like a flat one, where the strided row was not."""
        head = "sn_row_const(int64_t n, char *const *p, int64_t *const *st, int64_t last)"
        return self.vector_loop(
            head, "0", "n", out_t, self.row_constants(), "(void)st; (void)last;"
        )

    def row_steps(self) -> tuple[int, ...] | None:
        """The element steps of the inputs then the output compiled into a row variant (the
        schedule's ``row_steps``), or None."""
        return self.s.row_steps

    def stepped_row(self, out_t: str) -> str:
        """A row whose operands take the ``row_steps`` (compiled in: the C compiler
        vectorises it with permutes and masked stores, where run-time strides left it a
        scalar loop 8x slower)."""
        steps = self.row_steps()
        constants = tuple(k for k in range(self.nin) if steps[k] == 0)
        head = "sn_row_step(int64_t n, char *const *p, int64_t *const *st, int64_t last)"
        return self.vector_loop(head, "0", "n", out_t, constants, "(void)st; (void)last;", steps)

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

    def flat(self, out_t: str) -> str:
        head = "sn_flat(int64_t lo, int64_t hi, char *const *p)"
        return self.vector_loop(head, "lo", "hi", out_t)

    def vector_loop(
        self, head: str, lo: str, hi: str, out_t: str, constants=(), prelude: str = "", steps=None
    ) -> str:
        """A vectorised loop over [lo, hi) of unit-strided operands; ``constants``: inputs
        read once instead (see ``constant_row``); ``steps``: the operands' element steps
        (inputs then the output) where they are not 1 (see ``stepped_row``)."""
        hoist = "\n    ".join(
            [*([prelude] if prelude else []), *self.hoisted(strided=False, constants=constants)]
        )
        at = "i" if steps is None or steps[self.nin] == 1 else f"i * {steps[self.nin]}"
        return f"""
static void {head} {{
    {hoist}
    {out_t} *out = ({out_t} *)p[{self.nin}];
    {self.r.simd([])}
    for (int64_t i = {lo}; i < {hi}; i++) {{
{self.element(self.leaf(False, constants, steps), f"out[{at}]")}
    }}
}}"""

    def streamed(self, out_t: str) -> str:
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
{self.element(self.leaf(False), "buf[j]")}
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

    def strided(self, out_t: str) -> str:
        hoist = "\n    ".join(self.hoisted(strided=True))
        return f"""
static void sn_row(int64_t n, char *const *p, int64_t *const *st, int64_t last) {{
    {hoist}
    const int64_t so = st[{self.nin}][last];
    for (int64_t i = 0; i < n; i++) {{
{self.element(self.leaf(True), f"*({out_t} *)(p[{self.nin}] + i * so)")}
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


def _loaded(item):
    """A map's leaves are its inputs' elements."""
    if not isinstance(item, Load):
        raise TypeError(f"unknown kernel value {item!r} in a map")
    return item
