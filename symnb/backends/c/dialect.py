"""The C dialect: C99 with OpenMP threads and SIMD, glibc's vector math, streaming stores.

Everything about loops, indices and reductions is the shared renderer's
(``symnb/backends/render``); this class only says how C spells them. The entry point follows
the launch ABI: ``int sn_kernel(int64_t *a, char **ptr)``, 0 when done, nonzero to decline.
"""

from __future__ import annotations

from symnb.backends.c.runner import exports_helpers
from symnb.backends.c.stores import STREAM_COPY
from symnb.backends.c.vecmath import simd_declarations
from symnb.backends.render.base import Renderer
from symnb.backends.render.source import render
from symnb.backends.schedule import cpu

INCLUDES = """#include <stdint.h>
#include <stdbool.h>
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
// a loop kernel's entry only decodes the launch and walks rows, calling the row functions:
// GCC compiles it at -O1, a third less compile time for the same run time
#if defined(__GNUC__) && !defined(__clang__)
#define SN_DRIVER __attribute__((optimize("O1")))
#else
#define SN_DRIVER
#endif
static inline int64_t sn_threads(void) {
#ifdef _OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}
static inline int64_t sn_max_threads(void) {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}
static inline int64_t sn_thread(void) {
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}
"""
#: reduction kind -> OpenMP's reduction identifier
OMP_REDUCTIONS = {
    "sum": "+",
    "prod": "*",
    "all": "&&",
    "any": "||",
    "max": "max",
    "min": "min",
    "or": "|",
}
#: float max/min under OpenMP's own identifiers start each SIMD lane at the "least
#: representable value", which clang reads as -DBL_MAX (GCC as -inf): the max of a row of -inf
#: came out -1.8e308. Under clang these reductions are declared, lanes starting at the
#: infinities; GCC keeps OpenMP's own (correct there, and its vectoriser versions the loop for
#: unit strides only with those). ``SN_OMP_MAX``/``SN_OMP_MIN`` name whichever applies (macros
#: expand inside ``#pragma omp``).
FLOAT_EXTREMA = {
    kind: f"""#if defined(__clang__)
#pragma omp declare reduction(sn_{kind} : float, double : omp_out = omp_in {pick} omp_out ? omp_in : omp_out) initializer(omp_priv = {start})
#define SN_OMP_{kind.upper()} sn_{kind}
#else
#define SN_OMP_{kind.upper()} {kind}
#endif"""  # noqa: E501 - one pragma line
    for kind, pick, start in (("max", ">", "-INFINITY"), ("min", "<", "INFINITY"))
}


class CDialect(Renderer):
    """One translation unit per kernel, for the system C compiler."""

    name = "C"
    model = "loops"
    streams = True  # flat loops may write with streaming stores (``stores.py``)
    prefetches = True  # __builtin_prefetch
    extrema_lanes = True  # clang: float max/min in explicit lanes (``lanes_or_simd``)

    def render(self, kernel, schedule=None) -> str:
        """The kernel's source as ``schedule`` lays it out (the CPU schedule's when None)."""
        return render(kernel, schedule or cpu.schedule(kernel, self), self)

    def preamble(self, kernel, streams: bool) -> str:
        stores = STREAM_COPY if streams else ""
        extrema = [FLOAT_EXTREMA[kind] for kind in sorted(self.extrema_used)]
        return "\n".join([INCLUDES, stores, *extrema, simd_declarations(sorted(self.math_used))])

    def shared_helpers(self) -> bool:
        """The runner's compiled index helpers, when it is loaded: a kernel that compiles its
        own copies takes about a third longer to compile (docs/c_backend.md, "Cache")."""
        return exports_helpers()

    def entry_signature(self) -> str:
        return "int sn_kernel(int64_t *a, char **ptr)"

    def driver_signature(self) -> str:
        """The entry of a loop kernel, which holds no hot loop of its own (``SN_DRIVER``)."""
        return "SN_DRIVER\n" + self.entry_signature()

    def parallel_for(self, condition: str, reduction=None) -> str:
        """Rows split between threads; ``reduction`` is one ``(kind, variable, dtype)``."""
        clause = ""
        if reduction:
            clause = f" reduction({self.reduction_identifier(*reduction)}:{reduction[1]})"
        return f"    #pragma omp parallel for if({condition}) schedule(static){clause}"

    def team(self) -> tuple[str, str, str]:
        """A parallel region, and the expressions of its thread count and thread number."""
        return "#pragma omp parallel", "sn_threads()", "sn_thread()"

    def simd(self, reductions) -> str:
        """``omp simd`` over ``(kind, variable, dtype)`` reductions."""
        return "#pragma omp simd" + "".join(
            f" reduction({self.reduction_identifier(*r)}:{r[1]})" for r in reductions
        )

    def reduction_identifier(self, kind: str, variable: str, dtype: str) -> str:
        if kind in FLOAT_EXTREMA and dtype in ("float32", "float64"):
            self.extrema_used.add(kind)
            return f"SN_OMP_{kind.upper()}"
        return OMP_REDUCTIONS[kind]

    def lanes_or_simd(self, lanes: str, simd: str) -> str:
        """clang (LLVM) vectorises a float max/min reduction only where it may assume no NaNs:
        it gets the explicit lanes; GCC vectorises OpenMP's own reduction, faster than the
        lanes (a 4096-element row: 326 against 367 ns for float, 386 against 450 ns for
        double), and compiles only that (the preprocessor drops the other)."""
        return f"#if defined(__clang__)\n    {lanes}\n#else\n    {simd}\n#endif"

    def prefetch(self, address: str) -> str:
        return f"__builtin_prefetch({address}, 0, 3);"
