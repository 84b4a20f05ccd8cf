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
from symnb.backends.render.walk import Walk

#: the product's C text (micro-kernel, packing, threads, entry helper)
HEADER = Path(__file__).with_name("contract.h")


@functools.cache
def product_source() -> str:
    return HEADER.read_text()


class ContractWriter(Walk):
    """Writes a ``Contract`` kernel: its operands' values (``factor``, written once) packed by
    ``contract.h`` on a CPU, staged in tiles on a GPU."""

    def source(self) -> str:
        if self.grid:
            return self.tiles()
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
        ]
        return "\n".join(parts)

    def factor(self, ref, leaf, indent: str) -> str:
        """The statements of operand value ``ref`` (``left`` or ``right``), inputs read by
        ``leaf``: the one definition of what a product multiplies, whatever reads it."""
        return self.body(closure(self.k.values, [ref]), leaf, indent)

    def leaf(self, at):
        """Spells an operand's loads: input k's element where ``at(k)`` says."""

        def spell(item) -> str:
            if not isinstance(item, Load):
                raise Unsupported(f"{type(item).__name__} in a product's operand")
            return at(item.operand)

        return spell

    def run_element(self, k: int) -> str:
        """Input k's j-th element of the run starting at ``at[k]`` (packing reads these)."""
        return f"((const {self.t(self.k.inputs[k].dtype)} *)at[{k}])[j]"

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
        return sorted(
            {values[v].operand for v in closure(values, [ref]) if isinstance(values[v], Load)}
        )

    def value(self, name, ref) -> str:
        """``name(at, j)``: the value ``ref`` in the product's accumulating type, each operand
        ``i`` read at ``at[i] + j`` elements: the ``j``-th element of a run (the caller finds
        where each operand's run starts from the offset tables)."""
        body = self.factor(ref, self.leaf(self.run_element), "    ")
        return (
            f"static inline sn_acc {name}(char *const *at, const int64_t j) {{\n"
            f"{body}\n    return (sn_acc)v{ref};\n}}"
        )

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

    # -- a GPU: tiles through local memory -------------------------------------------------------
    def tiles(self) -> str:
        """A matrix product (``Contract``) in tiles: a work-group per tile x tile block of outputs
        (a grid-stride loop over the blocks of every batch), k advancing tile_k at a time (the
        schedule's). Each step loads a tile x tile_k block of ``left`` and a tile_k x tile block
        of ``right`` into local memory (zeros past the edges, so any size works) between barriers;
        each work-item then accumulates its work x work outputs in registers. Operands are read
        through their strides, so transposed and broadcast operands need no copy."""
        tile, tile_k, work, side, items = self._geometry()
        c = self.k.body
        if c.groups != (1, 1, 1):
            raise Unsupported(
                "a product over groups of axes (one axis each for m, k and n on a device)"
            )
        left_t, right_t = (self.t(self.k.values[v].dtype) for v in (c.left, c.right))
        lines = [
            self.r.local_array(left_t, "ta", str(tile_k * (tile + 1))),
            self.r.local_array(right_t, "tb", str(tile_k * tile)),
            self.header(),
            "    const int64_t M = shape[nd - 3], K = shape[nd - 2], N = shape[nd - 1];",
        ]
        lines += [
            f"    const int64_t sm{j} = st[{j} * nd + nd - 3], "
            f"sk{j} = st[{j} * nd + nd - 2], sn{j} = st[{j} * nd + nd - 1];"
            for j in range(self.nops)
        ]
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
            self._tile(
                "ta", c.left, left_t, f"kk * {tile + 1} + mm", "m", f"e % {tile_k}", f"e / {tile_k}"
            ),
            self._tile(
                "tb", c.right, right_t, f"kk * {tile} + nn", "n", f"e / {tile}", f"e % {tile}"
            ),
            f"            {self.r.barrier};",
            self._multiply(c.acc_dtype),
            f"            {self.r.barrier};",
            "        }",
            self._store(),
            "    }",
        ]
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

        zero = self.r.literal(0, self.k.values[value].dtype)
        return f"""            for (int64_t e = lid; e < {tile * tile_k}; e += {items}) {{
                const int64_t kk = {kk}, {index} = {rest};
                const int64_t {other} = {other}0 + {index}, k = k0 + kk;
                {ctype} value = {zero};
                if ({other} < {bound} && k < K) {{
{self.factor(value, self.leaf(element), "                    ")}
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
