"""What the writer of every body shape shares (``Walk``): the kernel, its schedule and the
dialect, the values' statements, the combining of reductions, and the two spellings of where
the work runs: the CPU's (the launch decoded on the host, rows walked by loops, operands
through hoisted pointers and strides) and the GPU's (the launch read from device memory,
work-items over the index space, operands through byte offsets). Each shape's writer (maps.py,
reductions.py, rows.py, contract.py) walks its body once and asks ``grid`` (the schedule's
target family) which spelling the walk takes."""

from __future__ import annotations

import numpy as np

from symnb.backends.schedule.base import GpuGrid


class Walk:
    """A body shape's writer: ``r`` the dialect, ``k`` the kernel, ``s`` its schedule."""

    streams = False

    def __init__(self, r, kernel, schedule):
        self.r, self.k, self.s = r, kernel, schedule
        self.nin, self.nout = len(kernel.inputs), len(kernel.outputs)
        self.nops = self.nin + self.nout
        self.grid = isinstance(schedule, GpuGrid)
        self.g = r.space

    def t(self, dtype: str) -> str:
        return self.r.type_name(dtype)

    def out_type(self, j: int) -> str:
        return self.t(self.k.outputs[j].dtype)

    def body(self, refs, leaf, indent: str = "        ") -> str:
        lines = self.r.statements(self.k.values, refs, leaf)
        return "\n".join(indent + line for line in lines)

    def combine(self, kind: str, acc: str, x: str, dtype: str) -> str:
        """``acc`` combined with ``x`` by the reduction ``kind``, in ``dtype``."""
        if kind in ("max", "min"):
            return f"{self.r.extremum(kind, dtype)}({acc}, {x})"
        op = {"sum": "+", "prod": "*", "all": "&&", "any": "||"}[kind]
        if kind in ("sum", "prod") and np.dtype(dtype).kind in "iu":
            return self.r.wrapping(op, [acc, x], dtype)  # no signed overflow
        return f"({self.t(dtype)})({acc} {op} {x})"

    def compensated(self, tot: str, comp: str, x: str) -> str:
        """``tot += x`` with Neumaier's compensation, the lost low bits kept in ``comp``: a
        float64 sum's block sums added with about one rounding in all (``SUM_BLOCK``). Once
        ``tot`` is not finite ``comp`` may be NaN: the result is then ``tot`` alone
        (``compensated_total``)."""
        return (
            f"{{ const double t_ = {tot} + {x}; "
            f"{comp} += fabs({tot}) >= fabs({x}) ? ({tot} - t_) + {x} : ({x} - t_) + {tot}; "
            f"{tot} = t_; }}"
        )

    def compensated_total(self, tot: str, comp: str) -> str:
        """The compensated sum's value (``compensated``): inf and NaN as one accumulator's."""
        return f"(isfinite({tot}) ? {tot} + {comp} : {tot})"

    def extremum_loop(self, kind: str, dtype: str, body: str, value: str, lo: str, hi: str) -> str:
        """A float max/min of ``value`` over ``i`` in [lo, hi) into ``acc`` (NaNs seen: into
        ``nan``; the caller makes the result NaN). The dialect's SIMD reduction (C's
        ``SN_OMP_MAX``/``SN_OMP_MIN``), or, where the schedule has ``lane_bytes``, also
        explicit lanes for compilers that vectorise no float max/min reduction (LLVM: only
        where it may assume no NaNs): L lanes each keep the extremum of every L-th element and
        a NaN flag of the same width, blocks of L elements from ``lo``, the last block re-run
        over [hi - L, hi) (max and min are idempotent: no second copy of the element code for a
        tail), the lanes then halved into lane 0. A range shorter than 2L is a scalar loop (the
        lanes' start and fold cost more than they save there: 64 rows of 24 doubles in 16
        lanes, 1.7 -> 2.6 us). The dialect says which compilers get which form
        (``Renderer.lanes_or_simd``)."""
        pick = ">" if kind == "max" else "<"
        update = f"acc = {value} {pick} acc ? {value} : acc; nan |= {value} != {value};"
        pragma = self.r.simd([(kind, "acc", dtype), ("or", "nan", "int32")])
        loop = f"for (int64_t i = {lo}; i < {hi}; i++) {{\n{body}\n        {update}\n    }}"
        simd = f"{pragma}\n    {loop}"
        size = np.dtype(dtype).itemsize
        lanes = self.s.lane_bytes // size
        if not lanes:
            return simd
        t, flag = self.t(dtype), self.t(f"int{8 * size}")
        inner = indent(indent(body))
        span, first = (hi, "") if lo == "0" else (f"{hi} - {lo}", f"{lo} + ")
        blocks = f"""if ({span} >= {2 * lanes}) {{
        {t} lane[{lanes}]; {flag} nl[{lanes}];
        for (int k = 0; k < {lanes}; k++) {{ lane[k] = acc; nl[k] = 0; }}
        const int64_t nb = ({span} + {lanes - 1}) / {lanes};
        for (int64_t b = 0; b < nb; b++) {{
            const int64_t i0 = b + 1 < nb ? {first}b * {lanes} : {hi} - {lanes};
            {self.r.simd([])}
            for (int k = 0; k < {lanes}; k++) {{
                const int64_t i = i0 + k;
{inner}
                lane[k] = {value} {pick} lane[k] ? {value} : lane[k];
                nl[k] |= {value} != {value};
            }}
        }}
        for (int h = {lanes // 2}; h > 0; h /= 2) {{
            {self.r.simd([])}
            for (int k = 0; k < h; k++) {{
                lane[k] = lane[k + h] {pick} lane[k] ? lane[k + h] : lane[k];
                nl[k] |= nl[k + h];
            }}
        }}
        acc = lane[0]; nan |= nl[0] != 0;
    }} else {{
        {indent(loop)}
    }}"""
        return self.r.lanes_or_simd(blocks, simd)

    # -- the CPU's spelling: host-decoded launch, loops over rows --------------------------------
    def threaded(self) -> bool:
        return self.s.threads

    def hoisted(self, strided: bool, constants=()) -> list[str]:
        """Scalar operands (and ``constants``: inputs constant along the row) are read once;
        others get a typed pointer (flat, or stepped: see ``load``) or a stride."""
        lines = []
        for k, op in enumerate(self.k.inputs):
            t = self.t(op.dtype)
            if op.scalar or op.per_row or k in constants:
                lines.append(f"const {t} c{k} = *(const {t} *)p[{k}];")
            elif strided:
                lines.append(f"const int64_t s{k} = st[{k}][last];")
            else:
                lines.append(f"const {t} *in{k} = (const {t} *)p[{k}];")
        return lines

    def load(self, item, strided: bool, constants=(), steps=None) -> str:
        """Input ``item.operand``'s element i: a hoisted constant, through its run-time stride
        (``strided``), or through its pointer, ``steps[k]`` elements apart when given."""
        op = self.k.inputs[item.operand]
        if op.scalar or op.per_row or item.operand in constants:
            return f"c{item.operand}"
        if strided:
            return f"*(const {self.t(op.dtype)} *)(p[{item.operand}] + i * s{item.operand})"
        step = 1 if steps is None else steps[item.operand]
        return f"in{item.operand}[i]" if step == 1 else f"in{item.operand}[i * {step}]"

    def contiguous_test(self, axis: str, outputs: bool = True) -> str:
        """Every non-scalar operand (input, with ``outputs`` output too) has unit stride along
        ``axis``."""
        operands = self.k.inputs + (self.k.outputs if outputs else ())
        tests = [
            f"st[{k}][{axis}] == {np.dtype(op.dtype).itemsize}"
            for k, op in enumerate(operands)
            if not (op.scalar or op.per_row)
        ]
        return "(" + (" && ".join(tests) or "1") + ")"

    #: the rows of the index space: ``outer`` rows of ``n`` elements along the last axis
    SPLIT = """    int64_t outer = 1;
    for (int64_t d = 0; d + 1 < nd; d++) outer *= shape[d];
    const int64_t n = shape[nd - 1];
"""

    def decode(self, collapse: bool = True) -> str:
        text = (
            f"    char *p0[{self.nops}]; int64_t *st[{self.nops}];\n"
            f"    int64_t local[SN_ARGS({self.nops})];\n"
            f"    if (a[0] > SN_MAXDIM) return 2;\n"
            f"    for (int64_t i = 0; i < 1 + a[0] * {self.nops + 1}; i++) local[i] = a[i];\n"
            f"    int64_t nd = sn_decode(local, ptr, {self.nops}, p0, st);\n"
            f"    int64_t *shape = local + 1;\n"
        )
        if collapse:
            text += f"    nd = sn_collapse(nd, shape, {self.nops}, st);\n"
        return text

    def outer_rows(self, call: str, pragma: str = "", outer: str = "outer", nd: str = "nd") -> str:
        """A loop over every row but the last axis (``outer`` of them, ``n`` long): blocks of
        ``SN_ROWS`` rows (split between threads by ``pragma``), each located once and then
        advanced row by row. With ``nd`` = "nd - 1" the rows are blocks of the last two axes."""
        return f"""{pragma}
    for (int64_t b = 0; b < ({outer} + SN_ROWS - 1) / SN_ROWS; b++) {{
        char *p[{self.nops}];
        int64_t idx[SN_MAXDIM];
        const int64_t hi = (b + 1) * SN_ROWS < {outer} ? (b + 1) * SN_ROWS : {outer};
        sn_locate(b * SN_ROWS, {nd}, shape, {self.nops}, p0, st, p, idx);
        for (int64_t o = b * SN_ROWS; o < hi; o++) {{
            {call}
            sn_advance({nd}, shape, {self.nops}, st, p, idx);
        }}
    }}"""

    # -- the GPU's spelling: launch in device memory, work-items over the index space ---------
    def operand(self, k: int):
        return (self.k.inputs + self.k.outputs)[k]

    def header(self) -> str:
        return (
            f"    const int64_t nd = a[0];\n"
            f"    {self.g}const int64_t *shape = a + 1;\n"
            f"    {self.g}const int64_t *st = a + 1 + nd;\n"
        )

    def offsets(self, index: str, dims: str, offsets: str = "o") -> str:
        """Decode ``index`` over the axes ``d`` of ``dims`` into each operand's byte offset."""
        zero = ", ".join(f"{offsets}{k} = 0" for k in range(self.nops))
        adds = "\n".join(
            f"            {offsets}{k} += i * st[{k} * nd + d];" for k in range(self.nops)
        )
        return f"""        int64_t rest = {index}, {zero};
        for (int64_t d = {dims}; d >= 0; d--) {{
            const int64_t i = rest % shape[d];
            rest /= shape[d];
{adds}
        }}"""

    def at(self, k: int, offset: str) -> str:
        t = self.t(self.operand(k).dtype)
        const = "const " if k < self.nin else ""
        return f"*({self.g}{const}{t} *)(p{k} + {offset})"


def indent(text: str) -> str:
    return "\n".join("    " + line if line else line for line in text.splitlines())
