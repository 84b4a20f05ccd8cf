"""Index arithmetic every CPU-model kernel shares, in the C subset all dialects accept.

A kernel is called as ``sn_kernel(a, ptr)`` (the launch ABI in ``symnb/backends/plan.py``):
``ptr`` holds each operand's address (inputs, then outputs); ``a[0]`` = ndim (at least 1),
``a[1:1+ndim]`` = the index space's shape, then for each operand ``ndim`` byte strides (0 on
broadcast, length-1 and absent axes), then each output's element count (reductions read it).
A plan's ``Launch`` step builds these (symnb/backends/plan.py, layout.py). The kernel works
on a copy of the shape and strides; ``SN_MAXDIM`` is ``symnb.core.types.MAX_RANK``.
"""

from __future__ import annotations

from symnb.core.types import MAX_RANK  # the one rank limit, as in runner.c

#: ``sn_collapse`` merges axes that are contiguous for every operand and drops length-1 axes,
#: so a C-contiguous elementwise call becomes one flat loop whatever its rank.
RUNTIME = """
#define SN_MAXDIM @MAX_RANK@
#define SN_ARGS(nops) (2 + SN_MAXDIM + (nops) * SN_MAXDIM)
#define SN_ROWS 64 /* rows located once and then advanced; threads split blocks of them */

static int64_t sn_collapse(int64_t nd, int64_t *shape, int nops, int64_t **st) {
    int64_t out = 0;
    for (int64_t d = 0; d < nd; d++) {
        if (shape[d] == 1) continue;
        int merge = out > 0;
        for (int k = 0; merge && k < nops; k++) merge = st[k][out - 1] == st[k][d] * shape[d];
        if (merge) {
            shape[out - 1] *= shape[d];
            for (int k = 0; k < nops; k++) st[k][out - 1] = st[k][d];
            continue;
        }
        shape[out] = shape[d];
        for (int k = 0; k < nops; k++) st[k][out] = st[k][d];
        out++;
    }
    if (out == 0) {
        shape[0] = 1;
        for (int k = 0; k < nops; k++) st[k][0] = 0;
        out = 1;
    }
    return out;
}

static void sn_locate(int64_t o, int64_t nd, const int64_t *shape, int nops,
                      char *const *base, int64_t *const *st, char **p, int64_t *idx) {
    for (int k = 0; k < nops; k++) p[k] = base[k];
    for (int64_t d = nd - 2; d >= 0; d--) {
        int64_t i = o % shape[d];
        o /= shape[d];
        idx[d] = i;
        for (int k = 0; k < nops; k++) p[k] += i * st[k][d];
    }
}

/* The next row's operands, an odometer over every axis but the last: a few additions
 * instead of the divisions of sn_locate, for rows too short to hide them. */
static inline void sn_advance(int64_t nd, const int64_t *shape, int nops,
                              int64_t *const *st, char **p, int64_t *idx) {
    for (int64_t d = nd - 2; d >= 0; d--) {
        for (int k = 0; k < nops; k++) p[k] += st[k][d];
        if (++idx[d] < shape[d]) return;
        for (int k = 0; k < nops; k++) p[k] -= st[k][d] * shape[d];
        idx[d] = 0;
    }
}

static int64_t sn_decode(int64_t *a, char **ptr, int nops, char **p, int64_t **st) {
    int64_t nd = a[0];
    for (int k = 0; k < nops; k++) {
        p[k] = ptr[k];
        st[k] = a + 1 + nd + k * nd;
    }
    return nd;
}

/* Short innermost rows cost more to start than to run: an elementwise map may run in any
 * order, so the axis of at least 8 elements with output 0's smallest stride goes innermost. */
static void sn_inner_axis(int64_t nd, int64_t *shape, int nops, int64_t **st, int out) {
    int64_t best = -1, t;
    for (int64_t d = 0; d + 1 < nd; d++)
        if (shape[d] >= 8 && (best < 0 || st[out][d] < st[out][best])) best = d;
    if (best < 0) return;
    t = shape[best], shape[best] = shape[nd - 1], shape[nd - 1] = t;
    for (int k = 0; k < nops; k++) t = st[k][best], st[k][best] = st[k][nd - 1], st[k][nd - 1] = t;
}

static int sn_outer_distinct(int64_t nd, int64_t *const *st, int out) {
    for (int64_t d = 0; d + 1 < nd; d++)
        if (st[out][d] == 0) return 0;
    return 1;
}
"""


def runtime(parallel_min: int) -> str:
    text = RUNTIME.replace("@MAX_RANK@", str(MAX_RANK))
    return f"#define SN_PARALLEL_MIN {parallel_min}\n{text}"
