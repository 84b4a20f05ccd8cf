"""A reduction, on every C-family target: output 0 (stride 0 on the reduced axes) accumulates
the element value (``ReduceWriter.element``, written once) by the reduction's combine.

On a CPU (``CpuReduce``): innermost rows accumulated in a register (reduced axis innermost) or
combined into the output row by row (kept axis innermost), the innermost axis chosen by the
inputs' steps, short reduced rows summed in blocks, and threads over distinct outputs or into
a copy of the output each. On a GPU (``GpuGrid`` "outputs"): a work-item per output element,
looping over the reduced axes, or a work-group per output where the outputs are few and
long, its items meeting as a tree in local memory (``per_output``), or, for outputs fewer
than the device's compute units and long, two launches: work-groups reduce parts of each
output into partial results, then a work-group per output combines them (``two_pass``)."""

from __future__ import annotations

import numpy as np

from symnb.backends.kernels.ir import closure, identity
from symnb.backends.render.walk import Walk, indent


class ReduceWriter(Walk):
    """Accumulate f(in...) into output 0, which has stride 0 on the reduced axes."""

    def source(self) -> str:
        red = self.k.body
        self.refs = closure(self.k.values, [red.value])
        if self.grid:
            return self.per_output()
        acc_t, out_t = self.t(red.acc_dtype), self.out_type(0)
        parts = ["typedef void (*sn_row_fn)(int64_t, char *const *, int64_t *const *, int64_t);"]
        if self.threaded():
            parts[:0] = ["#include <stdlib.h>", self.piece_count()]
        parts += [self.row(acc_t, out_t, True), self.row(acc_t, out_t, False)]
        parts += [self.scatter(out_t, True), self.scatter(out_t, False)]
        if self.blocks():
            parts.append(self.block(acc_t, out_t))
        parts.append(self.entry(out_t))
        return "\n".join(parts)

    def blocks(self) -> bool:
        """Whether short rows may be summed in blocks (``block``; the schedule's
        ``short_rows``)."""
        return self.s.short_rows is not None

    def block(self, acc_t: str, out_t: str) -> str:
        """m short rows of n unit-strided elements that all reduce into one output (the last
        two axes reduced: a bias gradient over a padded plane's rows of 24): summed column by
        column in a local buffer, then across it once, where each row of ``sn_row_flat``
        paid its own horizontal sum (rows of 24 ran 4x slower than contiguous data)."""
        red = self.k.body
        zero = self.acc_start()
        hoist = "\n        ".join(self.hoisted(strided=False))
        column = self.fold("col[i]", f"v{red.value}", red.acc_dtype)
        out = f"*({out_t} *)p0[{self.nin}]"
        final = self.fold(out, f"({out_t})acc", self.k.outputs[0].dtype)
        return f"""
#define SN_BLOCK_N {self.s.short_rows}
static void sn_block_flat(int64_t n, int64_t m, char *const *p0, int64_t *const *st,
                          int64_t last) {{
    char *p[{self.nops}];
    for (int k = 0; k < {self.nops}; k++) p[k] = p0[k];
    {acc_t} col[SN_BLOCK_N];
    for (int64_t i = 0; i < n; i++) col[i] = {zero};
    for (int64_t r = 0; r < m; r++) {{
        {hoist}
        {self.r.simd([])}
        for (int64_t i = 0; i < n; i++) {{
{self.element(self.leaf(False), "            ")}
            col[i] = {column};
        }}
        for (int k = 0; k < {self.nops}; k++) p[k] += st[k][last - 1];
    }}
    {acc_t} acc = {zero};
    {self.r.simd([(red.kind, "acc", red.acc_dtype)])}
    for (int64_t i = 0; i < n; i++) acc = {self.fold("acc", "col[i]", red.acc_dtype)};
    *({out_t} *)p0[{self.nin}] = {final};
}}"""

    def fold(self, acc: str, x: str, dtype: str) -> str:
        """``acc`` combined with ``x`` by the reduction's kind."""
        return self.combine(self.k.body.kind, acc, x, dtype)

    def acc_start(self) -> str:
        """The accumulator's first value: the reduction's identity in its type."""
        red = self.k.body
        return self.r.literal(identity(red.kind, red.acc_dtype), red.acc_dtype)

    def element(self, leaf, indent: str = "        ") -> str:
        """The statements of the element value the reduction accumulates."""
        return self.body(self.refs, leaf, indent)

    def leaf(self, strided: bool = False):
        """Spells an input's element: through the host loop's pointers or strides, or on a GPU
        at the output element's offset plus the reduced position's."""
        if self.grid:
            return lambda item: self.at(item.operand, f"o{item.operand} + q{item.operand}")
        return lambda item: self.load(item, strided)

    def row(self, acc_t: str, out_t: str, strided: bool) -> str:
        """The reduced axis is innermost: accumulate in a register, SIMD where possible."""
        red = self.k.body
        hoist = "\n    ".join(self.hoisted(strided=strided))
        final = self.fold(f"*({out_t} *)p[{self.nin}]", f"({out_t})acc", self.k.outputs[0].dtype)
        name = "sn_row" if strided else "sn_row_flat"
        return f"""
static void {name}(int64_t n, char *const *p, int64_t *const *st, int64_t last) {{
    (void)st; (void)last;
    {hoist}
    {acc_t} acc = {self.acc_start()};
    int nan = 0; (void)nan;
    {self.vector_reduction(f"v{red.value}", self.element(self.leaf(strided)))}
    *({out_t} *)p[{self.nin}] = {final};
}}"""

    def vector_reduction(self, value: str, body: str) -> str:
        """The row's loop: ``body`` computes ``value`` per element, ``acc`` accumulates it
        (a float max/min through ``extremum_loop``, NaN once any element is)."""
        kind, dtype = self.k.body.kind, self.k.body.acc_dtype
        if not self.grid and self.s.sum_block:
            return self.blocked_sum(value, body)
        if kind not in ("max", "min"):
            update = f"acc = {self.fold('acc', value, dtype)};"
        elif np.dtype(dtype).kind != "f":
            pick = ">" if kind == "max" else "<"
            update = f"acc = {value} {pick} acc ? {value} : acc;"
        else:
            loop = self.extremum_loop(kind, dtype, body, value, "0", "n")
            return f"{loop}\n    if (nan) acc = NAN;"
        pragma = self.r.simd([(kind, "acc", dtype)])
        return f"{pragma}\n    for (int64_t i = 0; i < n; i++) {{\n{body}\n        {update}\n    }}"

    def blocked_sum(self, value: str, body: str) -> str:
        """A float64 row summed in blocks of the schedule's ``sum_block`` elements, each
        vectorised, their sums combined with compensation (``compensated``): about NumPy's
        pairwise accuracy, where one accumulator's error grows with the row's length."""
        block, dtype = self.s.sum_block, self.k.body.acc_dtype
        return f"""double comp = 0.0;
    for (int64_t lo = 0; lo < n; lo += {block}) {{
        const int64_t hi = lo + {block} < n ? lo + {block} : n;
        double part = 0.0;
        {self.r.simd([("sum", "part", dtype)])}
        for (int64_t i = lo; i < hi; i++) {{
{body}
            part = {self.fold("part", value, dtype)};
        }}
        {self.compensated("acc", "comp", "part")}
    }}
    acc = {self.compensated_total("acc", "comp")};"""

    def scatter(self, out_t: str, strided: bool) -> str:
        """The innermost axis is kept: out[i] = combine(out[i], x[i]) along it."""
        hoist = "\n    ".join(self.hoisted(strided=strided))
        if strided:
            name, pragma, step = "sn_scatter", "", f"const int64_t so = st[{self.nin}][last];"
            target = f"*({out_t} *)(p[{self.nin}] + i * so)"
        else:
            name, pragma = "sn_scatter_flat", self.r.simd([])
            step, target = f"{out_t} *out = ({out_t} *)p[{self.nin}];", "out[i]"
        value = f"({out_t})v{self.k.body.value}"
        combined = self.fold(target, value, self.k.outputs[0].dtype)
        return f"""
static void {name}(int64_t n, char *const *p, int64_t *const *st, int64_t last) {{
    (void)st; (void)last;
    {hoist}
    {step}
    {pragma}
    for (int64_t i = 0; i < n; i++) {{
{self.element(self.leaf(strided))}
        {target} = {combined};
    }}
}}"""

    def row_threads(self, outer: str = "outer", nd: str = "nd") -> str:
        """Output rows split between threads when they are distinct and many enough."""
        if not self.threaded():
            return ""
        return (
            f"    int par = {outer} > 1 && outer * n >= SN_PARALLEL_MIN;\n"
            f"    par = par && sn_outer_distinct({nd}, st, {self.nin});\n"
            + self.r.parallel_for("par")
        )

    def piece_count(self) -> str:
        """``sn_pieces``: how many pieces ``rows`` rows of ``work`` elements that share
        ``size`` outputs are cut into, by the schedule's ``pieces``, ``piece_min`` and
        ``piece_outputs`` (1: no cut)."""
        s = self.s
        return f"""static int64_t sn_pieces(int64_t work, int64_t size, int64_t rows) {{
    static const int64_t counts[] = {{{", ".join(map(str, s.pieces))}}};
    int64_t most = work / {s.piece_min};
    if (most > work / (size * {s.piece_outputs})) most = work / (size * {s.piece_outputs});
    if (most > rows) most = rows;
    for (int i = 0; i < {len(s.pieces)}; i++)
        if (counts[i] <= most) return counts[i];
    return 1;
}}"""

    def walk(self, call: str, outer: str = "outer", nd: str = "nd") -> str:
        """The ``outer`` rows (over the axes before ``nd``'s last) through ``call``: split
        between threads where their outputs are distinct; where rows share outputs and are
        many enough (a bias gradient, a sum of everything), cut into pieces by their sizes
        alone (``sn_pieces``), each reduced into a copy of the output of its own
        (piece 0 into the output), the copies then added up in piece order (a vectorised
        pass per copy over blocks of 256 outputs), on however many threads the call has (one
        included): the same bits whatever the team; else on one thread."""
        plain = self.outer_rows(call, self.row_threads(outer, nd), outer, nd)
        if not self.threaded():
            return plain
        nin, nops, out_t, start = self.nin, self.nops, self.out_type(0), self.start()
        combined = self.fold("out[i]", "part[i]", self.k.outputs[0].dtype)
        return f"""    {out_t} *parts = NULL;
    const int64_t pieces = sn_pieces(outer * n, size, {outer});
    if (pieces > 1 && outer * n >= SN_PARALLEL_MIN && !sn_outer_distinct({nd}, st, {nin}))
        parts = ({out_t} *)malloc((size_t)((pieces - 1) * size) * sizeof({out_t}));
    if (parts) {{
        const int64_t team = sn_max_threads(), nt = team < pieces ? team : pieces;
        {self.r.team()[0]} num_threads(nt)
        {{
            char *q[{nops}], *p[{nops}];
            int64_t idx[SN_MAXDIM];
            for (int k = 0; k < {nops}; k++) q[k] = p0[k];
            #pragma omp for schedule(static)
            for (int64_t u = 0; u < pieces; u++) {{
                {out_t} *mine = u == 0 ? out : parts + (u - 1) * size;
                if (u > 0) {{
                    {self.r.simd([])}
                    for (int64_t i = 0; i < size; i++) mine[i] = {start};
                }}
                q[{nin}] = (char *)mine;
                const int64_t lo = {outer} * u / pieces, hi = {outer} * (u + 1) / pieces;
                sn_locate(lo, {nd}, shape, {nops}, q, st, p, idx);
                for (int64_t o = lo; o < hi; o++) {{
                    {call}
                    sn_advance({nd}, shape, {nops}, st, p, idx);
                }}
            }}
            #pragma omp for schedule(static)
            for (int64_t c = 0; c < size; c += 256) {{
                const int64_t end = size - c < 256 ? size : c + 256;
                for (int64_t u = 1; u < pieces; u++) {{
                    const {out_t} *part = parts + (u - 1) * size;
                    {self.r.simd([])}
                    for (int64_t i = c; i < end; i++) out[i] = {combined};
                }}
            }}
        }}
        free(parts);
    }} else {{
{indent(plain)}
    }}"""

    def start(self) -> str:
        """The output's first value: the reduction's identity in the output's dtype."""
        dtype = self.k.outputs[0].dtype
        return self.r.literal(identity(self.k.body.kind, dtype), dtype)

    def rows(self) -> str:
        """The reduced axis innermost: a row each, or blocks of short rows (``block``)."""
        flat = self.contiguous_test("nd - 1", outputs=False)
        rows = f"""    sn_row_fn row = {flat} ? sn_row_flat : sn_row;
{self.walk("row(n, p, st, nd - 1);")}"""
        if not self.blocks():
            return rows
        blocks = self.walk("sn_block_flat(n, m, p, st, nd - 1);", "blocks", "nd - 1")
        return f"""    if (nd > 1 && n < SN_BLOCK_N && st[{self.nin}][nd - 2] == 0 && {flat}) {{
        const int64_t m = shape[nd - 2], blocks = outer / m;
{indent(blocks)}
    }} else {{
{indent(rows)}
    }}"""

    def entry(self, out_t: str) -> str:
        red = self.k.body
        size = f"a[1 + a[0] + {self.nops} * a[0]]"
        start = self.start()
        mean = ""
        if red.mean:
            mean = "    const double count = (double)(outer * n) / (double)size;\n"
            mean += f"    for (int64_t i = 0; i < size; i++) out[i] = ({out_t})(out[i] / count);\n"
        scatter = self.walk("scatter(n, p, st, nd - 1);")
        return f"""
{self.r.driver_signature()} {{
    const int64_t size = {size};
{self.decode()}    {out_t} *out = ({out_t} *)p0[{self.nin}];
    for (int64_t i = 0; i < size; i++) out[i] = {start};
    sn_reduce_axis(nd, shape, {self.nops}, st, {self.nin});
{self.SPLIT}    if (st[{self.nin}][nd - 1] == 0) {{
{indent(self.rows())}
    }} else {{
        int flat = {self.contiguous_test("nd - 1")};
        sn_row_fn scatter = flat ? sn_scatter_flat : sn_scatter;
{indent(scatter)}
    }}
{mean}    return 0;
}}"""

    # -- a GPU: a work-group per output, or a work-item per output ------------------------------
    def per_output(self) -> str:
        """Two ways in one kernel, chosen per call (the same for every work-item, so the
        barriers are met by all of a group): where each output reduces the schedule's ``coop``
        elements or more and the outputs are few (at most one per ``coop`` work-items) or
        each reduces along the innermost axis, a work-group reduces one output at a time,
        its work-items striding over the reduced elements and meeting as a tree in local
        memory; else each work-item reduces output elements of its own (adjacent items,
        adjacent outputs)."""
        red, out = self.k.body, self.k.outputs[0]
        nout = self.nin
        acc_t, start = self.t(red.acc_dtype), self.acc_start()
        combined = self.fold("acc", f"v{red.value}", red.acc_dtype)
        store = self.at(nout, f"o{nout}")
        coop = self.s.coop

        def final(acc: str) -> str:
            """A mean divides the sum as the output's dtype holds it (a float32 sum past
            FLT_MAX is inf, as NumPy's and the CPU's are), not the wider accumulator."""
            if not red.mean:
                return acc
            out_t = self.t(out.dtype)
            return f"({out_t})(({out_t})({acc}) / (double)count)"

        return f"""
{self.r.entry_signature(self.nops + 1)} {{
{self.r.local_array(acc_t, "red", "SN_GROUP")}
{self.header()}    const int64_t size = a[1 + nd + {self.nops} * nd];
    int64_t count = 1;
    for (int64_t d = 0; d < nd; d++) if (st[{nout} * nd + d] == 0) count *= shape[d];
    const int64_t lid = {self.r.local_id}, items = {self.r.global_size};
{self.two_pass(final)}
    const int inner = st[{nout} * nd + nd - 1] == 0;
    if (count >= {coop} && (inner || size * {coop} <= items)) {{
        for (int64_t j = {self.r.group_id}; j < size; j += {self.r.group_count}) {{
{indent(self._kept())}
            {acc_t} acc = {start};
            for (int64_t r = lid; r < count; r += SN_GROUP) {{
{indent(self._reduced())}
{self.element(self.leaf(), "                ")}
                acc = {combined};
            }}
{indent(indent(self.tree()))}
            if (lid == 0) {store} = {final("red[0]")};
            {self.r.barrier};
        }}
        return;
    }}
    for (int64_t j = {self.r.global_id}; j < size; j += items) {{
{self._kept()}
        {acc_t} acc = {start};
        for (int64_t r = 0; r < count; r++) {{
{self._reduced()}
{self.element(self.leaf(), "            ")}
            acc = {combined};
        }}
        {store} = {final("acc")};
    }}
}}"""

    def tree(self) -> str:
        """The work-group's ``acc`` values combined into ``red[0]``, halving in local memory."""
        tree = self.fold("red[lid]", "red[lid + s]", self.k.body.acc_dtype)
        return f"""    red[lid] = acc;
    {self.r.barrier};
    for (int64_t s = SN_GROUP / 2; s > 0; s >>= 1) {{
        if (lid < s) red[lid] = {tree};
        {self.r.barrier};
    }}"""

    def two_pass(self, final) -> str:
        """The kernel's last parameter is a scratch buffer: the output itself for one pass,
        else ``8 + outputs * G`` bytes' worth of partials, launched twice (``gpu.parts``,
        ``runtime.launch_kernel``). The first launch (``size * G`` work-groups) gives group
        b part ``b % G`` of output ``b / G``: its items stride over that part's elements and
        meet as a tree, item 0 writing the partial result (in the accumulator's type) and
        group 0 writing G at the buffer's start. The second launch (``size`` groups: G >= 2
        tells them apart) gives each output a group, which combines its G partials by the
        same tree and stores the result as one pass would (a mean divided once). Each way
        ends at a barrier, as the one-pass loop does (``red`` is read before it is written
        again: test_gpu_barriers reads the kernel without its returns)."""
        red, g = self.k.body, self.g
        nout, scratch = self.nin, f"p{self.nops}"
        acc_t, start = self.t(red.acc_dtype), self.acc_start()
        combined = self.fold("acc", f"v{red.value}", red.acc_dtype)
        partial = self.fold("acc", "part[j * parts + r]", red.acc_dtype)
        store = self.at(nout, f"o{nout}")
        return f"""    if ({scratch} != p{nout}) {{
        {g}int64_t *head = ({g}int64_t *){scratch};
        {g}{acc_t} *part = ({g}{acc_t} *)({scratch} + 8);
        const int64_t b = {self.r.group_id}, groups = {self.r.group_count};
        {acc_t} acc = {start};
        if (groups != size) {{
            const int64_t parts = groups / size, j = b / parts, g = b % parts;
            if (b == 0 && lid == 0) head[0] = parts;
{indent(self._kept())}
            const int64_t hi = count * (g + 1) / parts;
            for (int64_t r = count * g / parts + lid; r < hi; r += SN_GROUP) {{
{indent(self._reduced())}
{self.element(self.leaf(), "                ")}
                acc = {combined};
            }}
{indent(self.tree())}
            if (lid == 0) part[b] = red[0];
            {self.r.barrier};
            return;
        }}
        const int64_t parts = head[0], j = b;
{self._kept()}
        for (int64_t r = lid; r < parts; r += SN_GROUP) acc = {partial};
{self.tree()}
        if (lid == 0) {store} = {final("red[0]")};
        {self.r.barrier};
        return;
    }}"""

    def _kept(self) -> str:
        """Offsets of output element ``j``: decoded over the axes the output keeps."""
        zero = ", ".join(f"o{k} = 0" for k in range(self.nops))
        adds = "\n".join(f"            o{k} += i * st[{k} * nd + d];" for k in range(self.nops))
        return f"""        int64_t rest = j, {zero};
        for (int64_t d = nd - 1; d >= 0 && rest; d--) {{
            if (st[{self.nin} * nd + d] == 0) continue;
            const int64_t i = rest % shape[d];
            rest /= shape[d];
{adds}
        }}"""

    def _reduced(self) -> str:
        zero = ", ".join(f"q{k} = 0" for k in range(self.nin))
        adds = "\n".join(f"                q{k} += i * st[{k} * nd + d];" for k in range(self.nin))
        flat = " ".join(f"q{k} = r * st[{k} * nd];" for k in range(self.nin))
        return f"""            int64_t left = r, {zero};
            if (nd == 1) {{ {flat} left = 0; }}
            for (int64_t d = nd - 1; d >= 0 && left; d--) {{
                if (st[{self.nin} * nd + d] != 0) continue;
                const int64_t i = left % shape[d];
                left /= shape[d];
{adds}
            }}"""
