/* Index arithmetic every CPU-model kernel shares (symnb/backends/render/runtime.py).
 *
 * One definition, two uses: a kernel either includes these functions as its own static
 * functions (SN_RT = static), or calls the copies the C runner exports (runner.c defines SN_RT
 * and renames them snrt_*), which are compiled once per install instead of once per kernel.
 */
SN_RT int64_t sn_collapse(int64_t nd, int64_t *shape, int nops, int64_t **st) {
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

SN_RT void sn_locate(int64_t o, int64_t nd, const int64_t *shape, int nops,
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
SN_RT_INLINE void sn_advance(int64_t nd, const int64_t *shape, int nops,
                              int64_t *const *st, char **p, int64_t *idx) {
    for (int64_t d = nd - 2; d >= 0; d--) {
        for (int k = 0; k < nops; k++) p[k] += st[k][d];
        if (++idx[d] < shape[d]) return;
        for (int k = 0; k < nops; k++) p[k] -= st[k][d] * shape[d];
        idx[d] = 0;
    }
}

SN_RT int64_t sn_decode(int64_t *a, char **ptr, int nops, char **p, int64_t **st) {
    int64_t nd = a[0];
    for (int k = 0; k < nops; k++) {
        p[k] = ptr[k];
        st[k] = a + 1 + nd + k * nd;
    }
    return nd;
}

/* Short innermost rows cost more to start than to run: an elementwise map may run in any
 * order, so the axis of at least 8 elements with output 0's smallest stride goes innermost. */
SN_RT void sn_inner_axis(int64_t nd, int64_t *shape, int nops, int64_t **st, int out) {
    int64_t best = -1, t;
    for (int64_t d = 0; d + 1 < nd; d++)
        if (shape[d] >= 8 && (best < 0 || st[out][d] < st[out][best])) best = d;
    if (best < 0) return;
    t = shape[best], shape[best] = shape[nd - 1], shape[nd - 1] = t;
    for (int k = 0; k < nops; k++) t = st[k][best], st[k][best] = st[k][nd - 1], st[k][nd - 1] = t;
}

static inline int64_t sn_abs64(int64_t x) { return x < 0 ? -x : x; }

/* A reduction may visit its index space in any order: the axis of at least 8 elements that
 * the inputs (operands before out) step along most closely goes innermost, judged by the
 * largest step of any input. A reduction over a transposed input's unit-stride axis then
 * reads rows of adjacent elements, where it read one element per cache line. */
static inline int64_t sn_widest_step(int64_t d, int out, int64_t *const *st) {
    int64_t w = 0;
    for (int k = 0; k < out; k++) w = sn_abs64(st[k][d]) > w ? sn_abs64(st[k][d]) : w;
    return w;
}
SN_RT void sn_reduce_axis(int64_t nd, int64_t *shape, int nops, int64_t **st, int out) {
    int64_t best = nd - 1, t;
    for (int64_t d = 0; d + 1 < nd; d++)
        if (shape[d] >= 8 && sn_widest_step(d, out, st) < sn_widest_step(best, out, st)) best = d;
    if (best == nd - 1) return;
    t = shape[best], shape[best] = shape[nd - 1], shape[nd - 1] = t;
    for (int k = 0; k < nops; k++) t = st[k][best], st[k][best] = st[k][nd - 1], st[k][nd - 1] = t;
}

SN_RT int sn_outer_distinct(int64_t nd, int64_t *const *st, int out) {
    for (int64_t d = 0; d + 1 < nd; d++)
        if (st[out][d] == 0) return 0;
    return 1;
}

/* An input read across the output's rows, a transposed operand with a short stride on the
 * second-last axis and at least a cache line on the last, would take a cache line per
 * element. So the two axes are cut into square tiles, each axis split in two: its blocks, then
 * the places in a block, and the lines one tile reads serve all of its rows. The strides move
 * apart in a to make room for the two new axes. It gives the new number of axes: nd itself
 * when the layout is not that, or when no tile size divides both axes */
SN_RT int64_t sn_tile(int64_t *a, int64_t nd, int64_t *shape, int nops, int64_t **st, int out) {
    if (nd < 2 || nd + 2 > SN_MAXDIM) return nd;
    const int64_t r = nd - 2, c = nd - 1;
    if (st[out][c] == 0 || sn_abs64(st[out][c]) >= sn_abs64(st[out][r])) return nd;
    int across = 0;
    for (int k = 0; k < nops; k++)
        across |= k != out && st[k][r] != 0 && sn_abs64(st[k][r]) < sn_abs64(st[k][c])
                  && sn_abs64(st[k][c]) >= 64;
    int64_t t = 0;
    for (int64_t i = 0; across && !t && i < 4; i++) {
        static const int64_t sizes[] = {32, 16, 8, 4};
        if (shape[r] % sizes[i] == 0 && shape[c] % sizes[i] == 0) t = sizes[i];
    }
    if (!t) return nd;
    for (int k = nops - 1; k >= 0; k--) {
        int64_t *moved = a + 1 + SN_MAXDIM + k * SN_MAXDIM;
        for (int64_t d = nd - 1; d >= 0; d--) moved[d] = st[k][d];
        st[k] = moved;
        moved[nd] = moved[r], moved[nd + 1] = moved[c];
        moved[r] *= t, moved[c] *= t;
    }
    shape[r] /= t, shape[c] /= t, shape[nd] = t, shape[nd + 1] = t;
    return nd + 2;
}
