#include <stdint.h>
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


#if defined(__clang__)
#pragma omp declare reduction(sn_max : float, double : omp_out = omp_in > omp_out ? omp_in : omp_out) initializer(omp_priv = -INFINITY)
#define SN_OMP_MAX sn_max
#else
#define SN_OMP_MAX max
#endif
__attribute__((simd("notinbranch"))) double exp(double);
__attribute__((simd("notinbranch"))) double log(double);

#define SN_PARALLEL_MIN 1048576

#define SN_MAXDIM 32
#define SN_ARGS(nops) (2 + SN_MAXDIM + (nops) * SN_MAXDIM)
#define SN_ROWS 64 /* rows located once and then advanced; threads split blocks of them */

/* the runner's helpers, runtime.h 1a6f95ba9f8b8ab0 */
int64_t snrt_collapse(int64_t nd, int64_t *shape, int nops, int64_t **st);
#define sn_collapse snrt_collapse
void snrt_locate(int64_t o, int64_t nd, const int64_t *shape, int nops, char *const *base, int64_t *const *st, char **p, int64_t *idx);
#define sn_locate snrt_locate
void snrt_advance(int64_t nd, const int64_t *shape, int nops, int64_t *const *st, char **p, int64_t *idx);
#define sn_advance snrt_advance
int64_t snrt_decode(int64_t *a, char **ptr, int nops, char **p, int64_t **st);
#define sn_decode snrt_decode
void snrt_inner_axis(int64_t nd, int64_t *shape, int nops, int64_t **st, int out);
#define sn_inner_axis snrt_inner_axis
void snrt_reduce_axis(int64_t nd, int64_t *shape, int nops, int64_t **st, int out);
#define sn_reduce_axis snrt_reduce_axis
int snrt_outer_distinct(int64_t nd, int64_t *const *st, int out);
#define sn_outer_distinct snrt_outer_distinct
int64_t snrt_tile(int64_t *a, int64_t nd, int64_t *shape, int nops, int64_t **st, int out);
#define sn_tile snrt_tile

typedef int (*sn_rows_fn)(int64_t, char *const *, int64_t *const *, int64_t);

static int sn_rows(int64_t n, char *const *p, int64_t *const *st, int64_t last) {
    (void)st; (void)last;
    const int64_t s0 = st[0][last];
    const int64_t so0 = st[1][last];
    double acc0 = ((double)-INFINITY); int nan0 = 0;
    {
        double acc = acc0; int nan = nan0;
        {
        const int64_t lo = 0, hi = n;
        #if defined(__clang__)
            if (hi - lo >= 32) {
                double lane[16]; int64_t nl[16];
                for (int k = 0; k < 16; k++) { lane[k] = acc; nl[k] = 0; }
                const int64_t nb = (hi - lo + 15) / 16;
                for (int64_t b = 0; b < nb; b++) {
                    const int64_t i0 = b + 1 < nb ? lo + b * 16 : hi - 16;
                    #pragma omp simd
                    for (int k = 0; k < 16; k++) {
                        const int64_t i = i0 + k;
                        const double v0 = *(const double *)(p[0] + i * s0);
                        lane[k] = v0 > lane[k] ? v0 : lane[k];
                        nl[k] |= v0 != v0;
                    }
                }
                for (int h = 8; h > 0; h /= 2) {
                    #pragma omp simd
                    for (int k = 0; k < h; k++) {
                        lane[k] = lane[k + h] > lane[k] ? lane[k + h] : lane[k];
                        nl[k] |= nl[k + h];
                    }
                }
                acc = lane[0]; nan |= nl[0] != 0;
            } else {
                    for (int64_t i = lo; i < hi; i++) {
                    const double v0 = *(const double *)(p[0] + i * s0);
                    acc = v0 > acc ? v0 : acc; nan |= v0 != v0;
                }
            }
        #else
            #pragma omp simd reduction(SN_OMP_MAX:acc) reduction(|:nan)
            for (int64_t i = lo; i < hi; i++) {
                const double v0 = *(const double *)(p[0] + i * s0);
                acc = v0 > acc ? v0 : acc; nan |= v0 != v0;
            }
        #endif
    }
        acc0 = acc; nan0 = nan;
    }
    if (nan0) acc0 = NAN;
    const double rv0 = acc0;
    const double v1 = rv0;
    const bool v2 = ((bool)isfinite(v1));
    const double v3 = ((double)0x0.0p+0);
    const double v4 = ((double)(v2 ? v1 : v3));
    double acc1 = ((double)0x0.0p+0);
    {
        double acc = acc1;
        {
        const int64_t lo = 0, hi = n;
        #pragma omp simd reduction(+:acc)
            for (int64_t i = lo; i < hi; i++) {
                const double v0 = *(const double *)(p[0] + i * s0);
                const double v5 = ((double)(v0 - v4));
                const double v6 = ((double)exp(v5));
                acc += v6;
            }
    }
        acc1 = acc;
    }
    const double rv1 = acc1;
    const double v7 = rv1;
    const double v8 = ((double)log(v7));
    const double v9 = ((double)(v8 + v4));
    *(double *)p[1] = v9;
    return 0;
}
static int sn_rows_flat(int64_t n, char *const *p, int64_t *const *st, int64_t last) {
    (void)st; (void)last;
    const double *in0 = (const double *)p[0];
    const int64_t s0 = 8;
    double acc0 = ((double)-INFINITY); int nan0 = 0;
    {
        double acc = acc0; int nan = nan0;
        {
        const int64_t lo = 0, hi = n;
        #if defined(__clang__)
            if (hi - lo >= 32) {
                double lane[16]; int64_t nl[16];
                for (int k = 0; k < 16; k++) { lane[k] = acc; nl[k] = 0; }
                const int64_t nb = (hi - lo + 15) / 16;
                for (int64_t b = 0; b < nb; b++) {
                    const int64_t i0 = b + 1 < nb ? lo + b * 16 : hi - 16;
                    #pragma omp simd
                    for (int k = 0; k < 16; k++) {
                        const int64_t i = i0 + k;
                        const double v0 = in0[i];
                        lane[k] = v0 > lane[k] ? v0 : lane[k];
                        nl[k] |= v0 != v0;
                    }
                }
                for (int h = 8; h > 0; h /= 2) {
                    #pragma omp simd
                    for (int k = 0; k < h; k++) {
                        lane[k] = lane[k + h] > lane[k] ? lane[k + h] : lane[k];
                        nl[k] |= nl[k + h];
                    }
                }
                acc = lane[0]; nan |= nl[0] != 0;
            } else {
                    for (int64_t i = lo; i < hi; i++) {
                    const double v0 = in0[i];
                    acc = v0 > acc ? v0 : acc; nan |= v0 != v0;
                }
            }
        #else
            #pragma omp simd reduction(SN_OMP_MAX:acc) reduction(|:nan)
            for (int64_t i = lo; i < hi; i++) {
                const double v0 = in0[i];
                acc = v0 > acc ? v0 : acc; nan |= v0 != v0;
            }
        #endif
    }
        acc0 = acc; nan0 = nan;
    }
    if (nan0) acc0 = NAN;
    const double rv0 = acc0;
    const double v1 = rv0;
    const bool v2 = ((bool)isfinite(v1));
    const double v3 = ((double)0x0.0p+0);
    const double v4 = ((double)(v2 ? v1 : v3));
    double acc1 = ((double)0x0.0p+0);
    {
        double acc = acc1;
        const int64_t ahead0 = last > 0 ? st[0][last - 1] : 0;
    int64_t lo = 0;
    for (; lo + 64 <= n; lo += 64) {
        const int64_t hi = lo + 64;
        for (int64_t b = 0; b < 512; b += 64) __builtin_prefetch(p[0] + lo * 8 + ahead0 + b, 0, 3);
        #pragma omp simd reduction(+:acc)
            for (int64_t i = lo; i < hi; i++) {
                const double v0 = in0[i];
                const double v5 = ((double)(v0 - v4));
                const double v6 = ((double)exp(v5));
                acc += v6;
            }
    }
    {
        const int64_t hi = n;
        #pragma omp simd reduction(+:acc)
            for (int64_t i = lo; i < hi; i++) {
                const double v0 = in0[i];
                const double v5 = ((double)(v0 - v4));
                const double v6 = ((double)exp(v5));
                acc += v6;
            }
    }
        acc1 = acc;
    }
    const double rv1 = acc1;
    const double v7 = rv1;
    const double v8 = ((double)log(v7));
    const double v9 = ((double)(v8 + v4));
    *(double *)p[1] = v9;
    return 0;
}
SN_DRIVER
int sn_kernel(int64_t *a, char **ptr) {
    char *p0[2]; int64_t *st[2];
    int64_t local[SN_ARGS(2)];
    if (a[0] > SN_MAXDIM) return 2;
    for (int64_t i = 0; i < 1 + a[0] * 3; i++) local[i] = a[i];
    int64_t nd = sn_decode(local, ptr, 2, p0, st);
    int64_t *shape = local + 1;
    int64_t outer = 1;
    for (int64_t d = 0; d + 1 < nd; d++) outer *= shape[d];
    const int64_t n = shape[nd - 1];
    int bad = 0;
    sn_rows_fn row = (st[0][nd - 1] == 8) ? sn_rows_flat : sn_rows;
    #pragma omp parallel for if(outer > 1 && outer * n >= SN_PARALLEL_MIN) schedule(static) reduction(|:bad)
    for (int64_t b = 0; b < (outer + SN_ROWS - 1) / SN_ROWS; b++) {
        char *p[2];
        int64_t idx[SN_MAXDIM];
        const int64_t hi = (b + 1) * SN_ROWS < outer ? (b + 1) * SN_ROWS : outer;
        sn_locate(b * SN_ROWS, nd, shape, 2, p0, st, p, idx);
        for (int64_t o = b * SN_ROWS; o < hi; o++) {
            bad |= row(n, p, st, nd - 1);
            sn_advance(nd, shape, 2, st, p, idx);
        }
    }
    return bad;
}