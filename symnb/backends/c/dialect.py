"""The C dialect: loop nests with OpenMP threads and SIMD over the shared kernel walk.

It adds to :class:`KernelRenderer` what is C-specific: includes, glibc vector-math
declarations, and the entry point ``sn_kernel`` (argument layout in ``driver.py``) with a
flat contiguous loop (SIMD, threads when large) and a strided loop nest for everything else.
"""

from __future__ import annotations

import numpy as np

from symnb.backends.c import driver
from symnb.backends.c.logsumexp import logsumexp_source
from symnb.backends.c.renderer import KernelRenderer
from symnb.backends.c.vecmath import simd_declarations
from symnb.backends.kernel_ir import Reduction

#: elements below which a kernel stays on one thread. A parallel region costs a few us on an
#: idle machine but milliseconds when other processes hold the cores (both threads must be
#: scheduled), so only kernels of a millisecond or more of work use threads; cheap arithmetic
#: is memory-bound and gains little before its operands leave the caches.
PARALLEL_MIN = 1 << 20
PARALLEL_MIN_CHEAP = 1 << 22

#: output bytes from which a flat loop writes with non-temporal (streaming) stores: an output
#: this much larger than the per-core caches is evicted before anything reads it, and normal
#: stores would first read each line in (write-allocate), one more memory stream of traffic.
STREAM_MIN_BYTES = 1 << 24
#: the staging block, in bytes: results are computed into it (vectorised, in L1), then copied
#: out one 64-byte line per streaming store.
STREAM_BLOCK_BYTES = 512

#: ``sn_stream_copy(dst, src, bytes)``: non-temporal copy of whole 64-byte lines (``dst``
#: 64-byte aligned), where the target has streaming stores; SN_STREAM is 0 elsewhere and the
#: kernels keep normal stores. Compiler builtins rather than <immintrin.h>, whose parse with
#: -march=native cost 0.15 s per compiler run (W5). The line type may alias (as the
#: intrinsics' types do): it reads a buffer written as doubles, floats or integers.
STREAM_COPY = """
#if defined(__x86_64__) && defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#define SN_STREAM 1
#if defined(__AVX512F__)
typedef long long sn_line_t
    __attribute__((vector_size(64), __may_alias__));
#elif defined(__AVX__)
typedef long long sn_line_t
    __attribute__((vector_size(32), __may_alias__));
#else
typedef long long sn_line_t
    __attribute__((vector_size(16), __may_alias__));
#endif
static inline void sn_stream_copy(char *dst, const char *src, int64_t bytes) {
    for (int64_t b = 0; b < bytes; b += (int64_t)sizeof(sn_line_t)) {
        sn_line_t v = *(const sn_line_t *)(src + b);
#if defined(__clang__)
        __builtin_nontemporal_store(v, (sn_line_t *)(dst + b));
#elif defined(__AVX512F__)
        __builtin_ia32_movntdq512((sn_line_t *)(dst + b), v);
#elif defined(__AVX__)
        __builtin_ia32_movntdq256((sn_line_t *)(dst + b), v);
#else
        __builtin_ia32_movntdq((sn_line_t *)(dst + b), v);
#endif
    }
}
static inline void sn_stream_fence(void) { __builtin_ia32_sfence(); }
#else
#define SN_STREAM 0
#endif
"""

_OMP_REDUCTION = {"sum": "+", "prod": "*", "all": "&&", "any": "||"}
ROW_TYPE = "typedef void (*sn_row_fn)(int64_t, char *const *, int64_t *const *, int64_t);"


def row_name(strided: bool) -> str:
    return "sn_row" if strided else "sn_row_flat"


class CDialect(KernelRenderer):
    """C99 with OpenMP pragmas; ``render`` returns one translation unit per kernel."""

    def render(self, kernel) -> str:
        stores = ""
        if isinstance(kernel.result, Reduction):
            entry = ReduceLoops(self, kernel).source()
        else:
            loops = ElemwiseLoops(self, kernel)
            entry = loops.source()
            stores = STREAM_COPY if loops.streams else ""
        return "\n".join(
            [
                driver.INCLUDES,
                stores,
                simd_declarations(sorted(self.math_used)),
                self.helper_source(),
                driver.runtime(PARALLEL_MIN if self.math_used else PARALLEL_MIN_CHEAP),
                entry,
            ]
        )


class _Loops:
    """Shared pieces of the loop text: operand loads for the flat and strided loops."""

    def __init__(self, dialect: CDialect, kernel):
        self.d, self.k = dialect, kernel
        self.nin = len(kernel.inputs)
        self.nops = self.nin + 1

    def ctype(self, dtype: str) -> str:
        return self.d.type_name(dtype)

    def may_reach(self, elements: int) -> bool:
        """Whether a call can have this many elements (unknown sizes can)."""
        return self.k.size is None or self.k.size >= elements

    def threaded(self) -> bool:
        """Whether a call can be big enough for threads (after the body named its math)."""
        return self.may_reach(PARALLEL_MIN if self.d.math_used else PARALLEL_MIN_CHEAP)

    def hoisted(self, strided: bool) -> list[str]:
        """Scalar operands are read once; others get a typed pointer or a stride."""
        lines = []
        for k, op in enumerate(self.k.inputs):
            t = self.ctype(op.dtype)
            if op.scalar:
                lines.append(f"const {t} c{k} = *(const {t} *)p[{k}];")
            elif strided:
                lines.append(f"const int64_t s{k} = st[{k}][last];")
            else:
                lines.append(f"const {t} *in{k} = (const {t} *)p[{k}];")
        return lines

    def load(self, strided: bool):
        def flat(k: int) -> str:
            return f"c{k}" if self.k.inputs[k].scalar else f"in{k}[i]"

        def strided_load(k: int) -> str:
            t = self.ctype(self.k.inputs[k].dtype)
            return f"c{k}" if self.k.inputs[k].scalar else f"*(const {t} *)(p[{k}] + i * s{k})"

        return strided_load if strided else flat

    def body(self, strided: bool) -> str:
        return "\n".join("        " + line for line in self.d.body(self.k, self.load(strided)))

    def contiguous_test(self) -> str:
        tests = [
            f"st[{k}][0] == {np.dtype(op.dtype).itemsize}"
            for k, op in enumerate(self.k.inputs)
            if not op.scalar
        ]
        tests.append(f"st[{self.nin}][0] == {np.dtype(self.k.result.dtype).itemsize}")
        return " && ".join(tests)

    def inner_contiguous(self) -> str:
        """C test: every non-scalar input has unit stride along the innermost axis."""
        tests = [
            f"st[{k}][nd - 1] == {np.dtype(op.dtype).itemsize}"
            for k, op in enumerate(self.k.inputs)
            if not op.scalar
        ]
        return "(" + (" && ".join(tests) or "1") + ")"

    def decode(self) -> str:
        return (
            f"    char *p0[{self.nops}]; int64_t *st[{self.nops}];\n"
            f"    int64_t local[SN_ARGS({self.nops})];\n"
            f"    if (a[0] > SN_MAXDIM) return 2;\n"
            f"    for (int64_t i = 0; i < 1 + a[0] * {self.nops + 1}; i++) local[i] = a[i];\n"
            f"    a = local;\n"
            f"    int64_t nd = sn_decode(a, ptr, {self.nops}, p0, st);\n"
            f"    int64_t *shape = a + 1;\n"
            f"    nd = sn_collapse(nd, shape, {self.nops}, st);\n"
        )


class ElemwiseLoops(_Loops):
    """out[i] = f(in...[i]) over a broadcast index space."""

    def source(self) -> str:
        out_t = self.ctype(self.k.result.dtype)
        result = f"v{self.k.result.value}"
        self.streams = self.may_reach(STREAM_MIN_BYTES // np.dtype(self.k.result.dtype).itemsize)
        stores = self.streamed(out_t, result) if self.streams else _PLAIN_CHUNK
        parts = [self.flat(out_t, result), stores]
        return "\n".join([*parts, self.strided(out_t, result), self.entry(out_t)])

    def flat(self, out_t: str, result: str) -> str:
        hoist = "\n    ".join(self.hoisted(strided=False))
        return f"""
static void sn_flat(int64_t lo, int64_t hi, char *const *p) {{
    {hoist}
    {out_t} *out = ({out_t} *)p[{self.nin}];
    #pragma omp simd
    for (int64_t i = lo; i < hi; i++) {{
{self.body(strided=False)}
        out[i] = {result};
    }}
}}"""

    def streamed(self, out_t: str, result: str) -> str:
        """The flat loop for large outputs: blocks computed into an aligned L1 buffer by the
        same vectorised body, then written with streaming stores (no write-allocate reads).
        ``sn_chunk`` picks it when the output is at least STREAM_MIN_BYTES and aligned."""
        hoist = "\n    ".join(self.hoisted(strided=False))
        body = self.body(strided=False)
        return f"""
#if SN_STREAM
#define SN_BLOCK ({STREAM_BLOCK_BYTES} / (int64_t)sizeof({out_t}))
static void sn_block(int64_t lo, char *const *p, {out_t} *restrict buf) {{
    {hoist}
    #pragma omp simd
    for (int64_t j = 0; j < SN_BLOCK; j++) {{
        const int64_t i = lo + j;
{body}
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
        sn_stream_copy((char *)(out + i), (const char *)buf, {STREAM_BLOCK_BYTES});
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
{self.body(strided=True)}
        *({out_t} *)(p[{self.nin}] + i * so) = {result};
    }}
}}"""

    def entry(self, out_t: str) -> str:
        stream = f"n * (int64_t)sizeof({out_t}) >= {STREAM_MIN_BYTES}" if self.streams else "0"
        if not self.threaded():
            flat = "sn_chunk(0, shape[0], p0, 0);"
            rows = ""
        else:
            flat = _THREADED_FLAT.format(stream=stream)
            rows = "#pragma omp parallel for if(outer > 1 && outer * n >= SN_PARALLEL_MIN) "
            rows += "schedule(static)"
        return f"""
int sn_kernel(int64_t *a, char **ptr) {{
{self.decode()}    if (nd == 1 && {self.contiguous_test()}) {{
        {flat}
        return 0;
    }}
    int64_t outer = 1;
    for (int64_t d = 0; d + 1 < nd; d++) outer *= shape[d];
    int64_t n = shape[nd - 1];
    {rows}
    for (int64_t o = 0; o < outer; o++) {{
        char *p[{self.nops}];
        sn_locate(o, nd, shape, {self.nops}, p0, st, p);
        sn_row(n, p, st, nd - 1);
    }}
    return 0;
}}"""


#: the contiguous case of an elementwise kernel that may run on several threads
_THREADED_FLAT = """int64_t n = shape[0];
        int stream = {stream};
        if (n < SN_PARALLEL_MIN) {{ sn_chunk(0, n, p0, stream); return 0; }}
        #pragma omp parallel
        {{
            int64_t nt = 1, t = 0;
#ifdef _OPENMP
            nt = omp_get_num_threads(); t = omp_get_thread_num();
#endif
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


class ReduceLoops(_Loops):
    """Accumulate f(in...) into an output with stride 0 on the reduced axes."""

    def identity(self, dtype: str) -> str:
        kind, r = self.k.result.kind, np.dtype(dtype)
        if kind in ("sum", "any"):
            return self.d.literal(0, dtype)
        if kind in ("prod", "all"):
            return self.d.literal(1, dtype)
        if r.kind == "f":
            return "-INFINITY" if kind == "max" else "INFINITY"
        if r.kind == "b":
            return self.d.literal(kind == "min", dtype)
        info = np.iinfo(r)
        return self.d.literal(info.min if kind == "max" else info.max, dtype)

    def combine(self, acc: str, x: str, dtype: str) -> str:
        kind = self.k.result.kind
        if kind in ("max", "min"):
            return f"{self.d.function_name('f' + kind, dtype)}({acc}, {x})"
        op = {"sum": "+", "prod": "*", "all": "&&", "any": "||"}[kind]
        return f"({self.ctype(dtype)})({acc} {op} {x})"

    def source(self) -> str:
        r = self.k.result
        if r.kind == "logsumexp":
            return logsumexp_source(self)
        acc_t, out_t = self.ctype(r.acc_dtype), self.ctype(r.dtype)
        parts = [ROW_TYPE, self.row(acc_t, out_t), self.scatter(out_t), self.entry(out_t)]
        return "\n".join(parts)

    def row(self, acc_t: str, out_t: str) -> str:
        return self.row_variant(acc_t, out_t, True) + self.row_variant(acc_t, out_t, False)

    def row_variant(self, acc_t: str, out_t: str, strided: bool) -> str:
        """The reduced axis is innermost: accumulate in a register, SIMD where OpenMP can.
        The flat variant (unit strides) is the one compilers vectorise well."""
        r = self.k.result
        hoist = "\n    ".join(self.hoisted(strided=strided))
        value = f"v{r.value}"
        pragma, update, after = self.vector_reduction(acc_t, value)
        final = self.combine(f"*({out_t} *)p[{self.nin}]", f"({out_t})acc", r.dtype)
        return f"""
static void {row_name(strided)}(int64_t n, char *const *p, int64_t *const *st, int64_t last) {{
    (void)st; (void)last;
    {hoist}
    {acc_t} acc = {self.identity(r.acc_dtype)};
    int nan = 0; (void)nan;
    {pragma}
    for (int64_t i = 0; i < n; i++) {{
{self.body(strided=strided)}
        {update}
    }}
    {after}
    *({out_t} *)p[{self.nin}] = {final};
}}"""

    def vector_reduction(self, acc_t: str, value: str) -> tuple[str, str, str]:
        kind, dtype = self.k.result.kind, self.k.result.acc_dtype
        if kind in _OMP_REDUCTION:
            op = _OMP_REDUCTION[kind]
            combined = self.combine("acc", value, dtype)
            return f"#pragma omp simd reduction({op}:acc)", f"acc = {combined};", ""
        pick = ">" if kind == "max" else "<"
        update = f"acc = {value} {pick} acc ? {value} : acc;"
        if np.dtype(dtype).kind != "f":
            return f"#pragma omp simd reduction({kind}:acc)", update, ""
        update += f" nan |= {value} != {value};"
        pragma = f"#pragma omp simd reduction({kind}:acc) reduction(|:nan)"
        return pragma, update, "if (nan) acc = NAN;"

    def scatter(self, out_t: str) -> str:
        """The innermost axis is kept: out[i] = combine(out[i], x[i]) along it; the flat
        variant (unit strides along it) is the one compilers vectorise."""
        return self.scatter_variant(out_t, True) + self.scatter_variant(out_t, False)

    def scatter_variant(self, out_t: str, strided: bool) -> str:
        r = self.k.result
        hoist = "\n    ".join(self.hoisted(strided=strided))
        if strided:
            name, pragma, step = "sn_scatter", "", f"const int64_t so = st[{self.nin}][last];"
            target = f"*({out_t} *)(p[{self.nin}] + i * so)"
        else:
            name, pragma = "sn_scatter_flat", "#pragma omp simd"
            step, target = f"{out_t} *out = ({out_t} *)p[{self.nin}];", "out[i]"
        combined = self.combine(target, f"({out_t})v{r.value}", r.dtype)
        return f"""
static void {name}(int64_t n, char *const *p, int64_t *const *st, int64_t last) {{
    (void)st; (void)last;
    {hoist}
    {step}
    {pragma}
    for (int64_t i = 0; i < n; i++) {{
{self.body(strided=strided)}
        {target} = {combined};
    }}
}}"""

    def row_threads(self) -> str:
        """The pragma splitting output rows between threads (when they are distinct and many
        enough); nothing for kernels whose size rules threads out."""
        if not self.threaded():
            return ""
        return f"""        int par = outer > 1 && outer * n >= SN_PARALLEL_MIN;
        par = par && sn_outer_distinct(nd, st, {self.nin});
        #pragma omp parallel for if(par) schedule(static)"""

    def entry(self, out_t: str) -> str:
        r = self.k.result
        mean = ""
        if r.mean:
            mean = "    const double count = (double)(outer * n) / (double)size;\n"
            mean += f"    for (int64_t i = 0; i < size; i++) out[i] = ({out_t})(out[i] / count);\n"
        return f"""
int sn_kernel(int64_t *a, char **ptr) {{
    const int64_t size = a[1 + a[0] + {self.nops} * a[0]];
{self.decode()}    {out_t} *out = ({out_t} *)p0[{self.nin}];
    for (int64_t i = 0; i < size; i++) out[i] = {self.identity(r.dtype)};
    int64_t outer = 1;
    for (int64_t d = 0; d + 1 < nd; d++) outer *= shape[d];
    int64_t n = shape[nd - 1];
    if (st[{self.nin}][nd - 1] == 0) {{
        sn_row_fn row = {self.inner_contiguous()} ? sn_row_flat : sn_row;
{self.row_threads()}
        for (int64_t o = 0; o < outer; o++) {{
            char *p[{self.nops}];
            sn_locate(o, nd, shape, {self.nops}, p0, st, p);
            row(n, p, st, nd - 1);
        }}
    }} else {{
        int flat = {self.inner_contiguous()} && st[{self.nin}][nd - 1] == (int64_t)sizeof({out_t});
        sn_row_fn scatter = flat ? sn_scatter_flat : sn_scatter;
        for (int64_t o = 0; o < outer; o++) {{
            char *p[{self.nops}];
            sn_locate(o, nd, shape, {self.nops}, p0, st, p);
            scatter(n, p, st, nd - 1);
        }}
    }}
{mean}    return 0;
}}"""
