"""softmax and log_softmax along the last axis as kernels: three SIMD passes over each row.

A row stays in cache across its passes (max, then exp and sum, then normalise), so memory is
read about once; rows are split between threads when there are enough of them. The kernel
takes C-ordered rows; the runtime makes its input C-ordered and runs NumPy's reference for
any other axis.
"""

from __future__ import annotations

from symnb.backends.c import driver
from symnb.backends.c.vecmath import simd_declarations
from symnb.backends.kernel_ir import Unsupported, check_dtype

KINDS = {"Softmax": "softmax", "LogSoftmax": "log_softmax"}
PARALLEL_MIN = 1 << 20  # see dialect.PARALLEL_MIN


def rownorm_source(dialect, kind: str, dtype: str) -> str:
    """The translation unit of a softmax/log_softmax kernel for ``dtype`` (float32/float64)."""
    check_dtype(dtype)
    if not dtype.startswith("float"):
        raise Unsupported(f"{kind} of {dtype} runs in NumPy")
    t = dialect.type_name(dtype)
    exp, log = dialect.function_name("exp", dtype), dialect.function_name("log", dtype)
    finish = _SOFTMAX if kind == "softmax" else _LOG_SOFTMAX
    body = finish.format(t=t, exp=exp, log=log)
    row = _ROW.format(t=t, body=body)
    decls = simd_declarations(sorted(dialect.math_used))
    return "\n".join([driver.INCLUDES, decls, row, _ENTRY.format(t=t, par=PARALLEL_MIN)])


_ROW = """
static void sn_row(int64_t n, const {t} *x, {t} *y) {{
    {t} m = -INFINITY;
    int nan = 0;
    #pragma omp simd reduction(max:m) reduction(|:nan)
    for (int64_t i = 0; i < n; i++) {{
        m = x[i] > m ? x[i] : m;
        nan |= x[i] != x[i];
    }}
    if (nan) m = NAN;
    double s = 0;
{body}
}}"""

_SOFTMAX = """    #pragma omp simd reduction(+:s)
    for (int64_t i = 0; i < n; i++) {{
        const {t} e = {exp}(x[i] - m);
        y[i] = e;
        s += e;
    }}
    const {t} total = ({t})s;
    #pragma omp simd
    for (int64_t i = 0; i < n; i++) y[i] = y[i] / total;"""

_LOG_SOFTMAX = """    #pragma omp simd reduction(+:s)
    for (int64_t i = 0; i < n; i++) s += {exp}(x[i] - m);
    const {t} lse = {log}(({t})s);
    #pragma omp simd
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) - lse;"""

_ENTRY = """
int sn_kernel(int64_t *a, char **ptr) {{
    const int64_t rows = a[0], n = a[1];
    const {t} *x = (const {t} *)ptr[0];
    {t} *y = ({t} *)ptr[1];
    #pragma omp parallel for if(rows > 1 && rows * n >= {par}) schedule(static)
    for (int64_t r = 0; r < rows; r++) sn_row(n, x + r * n, y + r * n);
    return 0;
}}"""
