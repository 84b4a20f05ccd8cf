"""The GPU form of each loop shape: work-items over the index space, work-groups over rows.

A map gives each work-item elements of the index space (a grid-stride loop, so any launch size
covers any size); a reduction gives each work-item output elements and loops over the reduced
axes; a row program gives each work-group rows, its work-items sharing every row pass and
combining their partial reductions in local memory between barriers. The arguments are the
launch ABI's (``symnb/backends/plan.py``) with ``a`` in device memory and one pointer
parameter per operand; a row whose check fails sets ``status`` to 1 (the kernel declines).

The schedule (``symnb/backends/schedule/gpu.py``) gives the work-group size and a product's
tiles; the dialect supplies ``entry_signature``, the thread indices (``global_id``, ``global_size``,
``group_id``, ``group_count``, ``local_id``), ``barrier``, ``local_array`` and ``space`` (the
qualifier of device pointers).
"""

from __future__ import annotations

from symnb.backends.kernels.ir import (
    Extent,
    Gather,
    Index,
    Load,
    RowValue,
    Stored,
    Unsupported,
    closure,
    identity,
)
from symnb.backends.render.maps import MapWriter
from symnb.backends.render.rows import RowWriter
from symnb.backends.render.walk import Walk
from symnb.backends.schedule.base import GpuGrid


def render_grid(r, kernel, schedule: GpuGrid) -> str:
    return render_program(r, [kernel], ["sn_kernel"], [schedule])


def render_program(r, kernels, names, schedules) -> str:
    """One program holding every kernel under its name (helpers written once), each laid out
    as its schedule says: a device compiler builds many kernels in one run for about the cost
    of one. The kernels of one program share its work-group size (``SN_GROUP``)."""
    r = r.fresh()
    groups = {s.group for s in schedules}
    if len(groups) != 1:
        raise ValueError(f"one program's kernels have work-groups of {sorted(groups)} items")
    entries = []
    for kernel, name, schedule in zip(kernels, names, schedules):
        writer = WRITERS[schedule.strategy](r, kernel, schedule)
        entries.append(writer.source().replace("sn_kernel(", f"{name}(", 1))
    preamble = r.preamble(*kernels)
    return "\n".join([preamble, f"#define SN_GROUP {groups.pop()}", r.helper_source(), *entries])


class ReduceGrid(Walk):
    """One work-item per output element, looping over the reduced axes (out stride 0)."""

    def source(self) -> str:
        red, out = self.k.body, self.k.outputs[0]
        refs = closure(self.k.values, [red.value])
        nout = self.nin
        leaf = _leaf(self, lambda k: self.at(k, f"o{k} + q{k}"))
        acc_t = self.t(red.acc_dtype)
        start = self.r.literal(identity(red.kind, red.acc_dtype), red.acc_dtype)
        combined = self.combine(red.kind, "acc", f"v{red.value}", red.acc_dtype)
        final = f"({self.t(out.dtype)})(acc / (double)count)" if red.mean else "acc"
        return f"""
{self.r.entry_signature(self.nops)} {{
{self.header()}    const int64_t size = a[1 + nd + {self.nops} * nd];
    int64_t count = 1;
    for (int64_t d = 0; d < nd; d++) if (st[{nout} * nd + d] == 0) count *= shape[d];
    for (int64_t j = {self.r.global_id}; j < size; j += {self.r.global_size}) {{
{self._kept()}
        {acc_t} acc = {start};
        for (int64_t r = 0; r < count; r++) {{
{self._reduced()}
{self.body(refs, leaf, "            ")}
            acc = {combined};
        }}
        {self.at(nout, f"o{nout}")} = {final};
    }}
}}"""

    def _kept(self) -> str:
        """Offsets of output element ``j``: decoded over the axes the output keeps."""
        zero = ", ".join(f"o{k} = 0" for k in range(self.nops))
        adds = "\n".join(f"            o{k} += i * st[{k} * nd + d];" for k in range(self.nops))
        return f"""        int64_t rest = j, {zero};
        for (int64_t d = nd - 1; d >= 0; d--) {{
            if (st[{self.nin} * nd + d] == 0) continue;
            const int64_t i = rest % shape[d];
            rest /= shape[d];
{adds}
        }}"""

    def _reduced(self) -> str:
        zero = ", ".join(f"q{k} = 0" for k in range(self.nin))
        adds = "\n".join(f"                q{k} += i * st[{k} * nd + d];" for k in range(self.nin))
        return f"""            int64_t left = r, {zero};
            for (int64_t d = nd - 1; d >= 0; d--) {{
                if (st[{self.nin} * nd + d] != 0) continue;
                const int64_t i = left % shape[d];
                left /= shape[d];
{adds}
            }}"""


class ContractGrid(Walk):
    """A matrix product (``Contract``) in tiles: a work-group per tile x tile block of outputs
    (a grid-stride loop over the blocks of every batch), k advancing tile_k at a time (the
    schedule's). Each step loads a tile x tile_k block of ``left`` and a tile_k x tile block
    of ``right`` into local memory (zeros past the edges, so any size works) between barriers;
    each work-item then accumulates its work x work outputs in registers. Operands are read
    through their strides, so transposed and broadcast operands need no copy."""

    def source(self) -> str:
        tile, tile_k, work, side, items = self._geometry()
        c = self.k.body
        if c.groups != (1, 1, 1):
            raise Unsupported("a product over groups of axes (one axis each for m, k and n on "
                              "a device)")  # fmt: skip
        left_t, right_t = (self.t(self.k.values[v].dtype) for v in (c.left, c.right))
        lines = [
            self.r.local_array(left_t, "ta", str(tile_k * (tile + 1))),
            self.r.local_array(right_t, "tb", str(tile_k * tile)),
            self.header(),
            "    const int64_t M = shape[nd - 3], K = shape[nd - 2], N = shape[nd - 1];",
        ]
        lines += [f"    const int64_t sm{j} = st[{j} * nd + nd - 3], "
                  f"sk{j} = st[{j} * nd + nd - 2], sn{j} = st[{j} * nd + nd - 1];"
                  for j in range(self.nops)]  # fmt: skip
        lines += [
            f"    const int64_t lid = {self.r.local_id}, tx = lid % {side}, ty = lid / {side};",
            f"    const int64_t tm = (M + {tile - 1}) / {tile}, tn = (N + {tile - 1}) / {tile};",
            "    int64_t blocks = tm * tn;",
            "    for (int64_t d = 0; d + 3 < nd; d++) blocks *= shape[d];",
            f"    for (int64_t blk = {self.r.group_id}; blk < blocks; "
            f"blk += {self.r.group_count}) {{",
            f"        const int64_t m0 = blk % (tm * tn) / tn * {tile}, n0 = blk % tn * {tile};",
            self.offsets("blk / (tm * tn)", "nd - 4"),
            f"        {self.t(c.acc_dtype)} acc[{work * work}];",
            f"        for (int w = 0; w < {work * work}; w++) acc[w] = "
            f"{self.r.literal(0, c.acc_dtype)};",
            f"        for (int64_t k0 = 0; k0 < K; k0 += {tile_k}) {{",
            self._tile("ta", c.left, left_t, f"kk * {tile + 1} + mm", "m", f"e % {tile_k}",
                       f"e / {tile_k}"),
            self._tile("tb", c.right, right_t, f"kk * {tile} + nn", "n", f"e / {tile}",
                       f"e % {tile}"),
            f"            {self.r.barrier};",
            self._multiply(c.acc_dtype),
            f"            {self.r.barrier};",
            "        }",
            self._store(),
            "    }",
        ]  # fmt: skip
        return f"\n{self.r.entry_signature(self.nops)} {{\n" + "\n".join(lines) + "\n}"

    def _geometry(self) -> tuple[int, int, int, int, int]:
        s = self.s
        return s.tile, s.tile_k, s.work, s.side, s.tile_items

    def _tile(self, name, value, ctype, at, which, kk, rest) -> str:
        """Load ``value`` at (m, k) (``which`` "m": the left tile) or (k, n) into ``name``."""
        tile, tile_k, work, side, items = self._geometry()
        index = "mm" if which == "m" else "nn"
        other = "m" if which == "m" else "n"
        bound = "M" if which == "m" else "N"

        def element(j):
            return self.at(j, f"o{j} + {other} * s{other}{j} + k * sk{j}")

        refs = closure(self.k.values, [value])
        zero = self.r.literal(0, self.k.values[value].dtype)
        return f"""            for (int64_t e = lid; e < {tile * tile_k}; e += {items}) {{
                const int64_t kk = {kk}, {index} = {rest};
                const int64_t {other} = {other}0 + {index}, k = k0 + kk;
                {ctype} value = {zero};
                if ({other} < {bound} && k < K) {{
{self.body(refs, _leaf(self, element), "                    ")}
                    value = v{value};
                }}
                {name}[{at}] = value;
            }}"""

    def _multiply(self, acc_dtype) -> str:
        tile, tile_k, work, side, items = self._geometry()
        acc = self.t(acc_dtype)
        return f"""            for (int kk = 0; kk < {tile_k}; kk++) {{
                {acc} av[{work}], bv[{work}];
                for (int w = 0; w < {work}; w++) {{
                    av[w] = ({acc})ta[kk * {tile + 1} + ty + w * {side}];
                    bv[w] = ({acc})tb[kk * {tile} + tx + w * {side}];
                }}
                for (int i = 0; i < {work}; i++)
                    for (int j = 0; j < {work}; j++) acc[i * {work} + j] += av[i] * bv[j];
            }}"""

    def _store(self) -> str:
        tile, tile_k, work, side, items = self._geometry()
        out = self.nin
        t = self.t(self.k.outputs[0].dtype)
        target = self.at(out, f"o{out} + m * sm{out} + n * sn{out}")
        return f"""        for (int i = 0; i < {work}; i++) {{
            const int64_t m = m0 + ty + i * {side};
            for (int j = 0; j < {work}; j++) {{
                const int64_t n = n0 + tx + j * {side};
                if (m < M && n < N) {target} = ({t})acc[i * {work} + j];
            }}
        }}"""


#: the writer of each strategy (``GpuGrid.strategy``)
WRITERS = {"elements": MapWriter, "outputs": ReduceGrid, "group-rows": RowWriter,
           "tiles": ContractGrid}  # fmt: skip


def _leaf(grid: Walk, element, rows: bool = False):
    """Spells the values that read memory or the loop, for a grid writer."""

    def spell(item) -> str:
        if isinstance(item, Load):
            op = grid.k.inputs[item.operand]
            if rows and (op.scalar or op.per_row):
                t = grid.t(op.dtype)
                return f"*({grid.g}const {t} *)q{item.operand}"
            return element(item.operand)
        if isinstance(item, Gather):
            t = grid.t(item.dtype)
            return f"*({grid.g}const {t} *)(q{item.operand} + v{item.index} * s{item.operand})"
        if isinstance(item, Index):
            return "i"
        if isinstance(item, Extent):
            return "n"
        if isinstance(item, RowValue):
            return f"rv{item.step}"
        if isinstance(item, Stored):
            j = grid.nin + item.output
            return f"*({grid.g}{grid.t(item.dtype)} *)(q{j} + i * s{j})"
        raise TypeError(f"unknown kernel value {item!r}")

    return spell
