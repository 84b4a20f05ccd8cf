/* The CPU form of a Contract kernel (symnb/backends/render/contract.py): a register-tiled
 * matrix product, the scheme of BLIS and GotoBLAS.
 *
 * The kernel's own text defines, before this: sn_acc (the accumulating type, the output's),
 * SN_NIN (its inputs), and sn_left_at(at, j) and sn_right_at(at, j), which evaluate the
 * description's left and right values at the j-th element of a run that starts, for operand
 * i, at at[i]. A point (m, k) or (k, n) of an operand sits at its base plus an offset per index
 * group (m, k, n: tables of byte offsets, so an operand may be any strided view over several
 * axes per group: a convolution's windows need no im2col copy); sn_left_continues(ko, k) and
 * sn_right_continues(no, n) say whether k (n) is the element right after k - 1 (n - 1) in
 * every operand the value reads, which makes runs read as vectors. SN_LEFT_LOAD and
 * SN_RIGHT_LOAD name the operand a value is the plain element of (-1 when it computes).
 *
 * The micro-kernel keeps an MR x NR block of the result in vector registers over KC steps.
 * Its right rows are NR consecutive columns: read in place where they are one run of one
 * operand's elements, else packed (blocks of KC x NC into panels NR wide). Its left elements
 * are broadcast one at a time: read in place where the value is one operand's element, else
 * packed (blocks of MC x KC into panels MR tall). Threads split the columns, or the rows, or
 * (for a long inner length and a small result, as a filter gradient's) the inner length, each
 * thread adding a partial result that is summed at the end. */
#include <stdlib.h>
#include <string.h>

#define SN_ITEM (SN_ACC_F64 ? 8 : 4)
#if defined(__AVX512F__)
/* 32 vector registers: 24 accumulators, 8 x 3 vectors; 6 x 4 where the columns are a
 * multiple of 4 vectors and not of 3 (a filter gradient's 64 output channels); 12 x 1 or
 * 12 x 2 where they fit in one or two vectors (a first layer's 8 filters), which would leave
 * most of a wider block's lanes idle */
#define SN_VB 64
#define SN_FIXED_VECTORS ((SN_N_FIXED + 64 / SN_ITEM - 1) / (64 / SN_ITEM))
#if SN_N_FIXED > 0 && SN_FIXED_VECTORS <= 2
#define SN_MR 12
#define SN_NV SN_FIXED_VECTORS
#elif SN_N_FIXED > 0 && SN_N_FIXED % (3 * 64 / SN_ITEM) != 0 && SN_N_FIXED % (4 * 64 / SN_ITEM) == 0
#define SN_MR 6
#define SN_NV 4
#else
#define SN_MR 8
#define SN_NV 3
#endif
#elif defined(__AVX__)
#define SN_VB 32 /* 16 registers: 6 x 2 accumulators */
#define SN_MR 6
#define SN_NV 2
#else
#define SN_VB 16
#define SN_MR 4
#define SN_NV 2
#endif
#define SN_VL ((int64_t)(SN_VB / sizeof(sn_acc)))
#define SN_NR (SN_NV * SN_VL)
/* KC x NR of the right panel (110 KB of floats) stays in the L2 cache across a block's rows,
 * MC x KC of the left block too; a KC x NC block of the right value in L3. Longer steps
 * than the L1 cache's 192 floats load and store each result tile fewer times
 * (docs/benchmarks.md, "Measurements behind the code"). */
#define SN_KC ((int64_t)(2304 / sizeof(sn_acc)))
#define SN_MC (SN_MR * 24)
#define SN_NC (SN_NR * 32)
/* multiply-adds below which the product stays on one thread */
#define SN_CONTRACT_PARALLEL_MIN (1LL << 22)
/* a long sum with a small result is cut into 24, 12, 8, 4 or 2 pieces of the sum (teams of
 * 2 and 4 threads take equal shares of any of them, of 3, 6, 8 and 12 of the larger), of at
 * least a KC step each, their partial results (SN_PARTIALS elements in all at most) added up
 * once */
#define SN_PARTIALS (1LL << 22)
static int64_t sn_k_pieces(int64_t most) {
    static const int64_t counts[] = {24, 12, 8, 4, 2};
    for (int i = 0; i < 5; i++)
        if (counts[i] <= most) return counts[i];
    return 1;
}

typedef sn_acc sn_vec __attribute__((vector_size(SN_VB)));
typedef sn_acc sn_uvec __attribute__((vector_size(SN_VB), aligned(sizeof(sn_acc))));

/* c + a * b in one rounding where the instruction set has it (kernels compile with
 * -ffp-contract=off, so that elementwise results match NumPy's; a product may fuse, as
 * BLAS does) */
#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h>
#endif
#if defined(__AVX512F__) && SN_ACC_F64
#define SN_FMA(a, b, c) ((sn_vec)_mm512_fmadd_pd((__m512d)(a), (__m512d)(b), (__m512d)(c)))
#elif defined(__AVX512F__)
#define SN_FMA(a, b, c) ((sn_vec)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#elif defined(__AVX__) && defined(__FMA__) && SN_ACC_F64
#define SN_FMA(a, b, c) ((sn_vec)_mm256_fmadd_pd((__m256d)(a), (__m256d)(b), (__m256d)(c)))
#elif defined(__AVX__) && defined(__FMA__)
#define SN_FMA(a, b, c) ((sn_vec)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#else
#define SN_FMA(a, b, c) ((c) + (a) * (b))
#endif

typedef struct {
    char *p[SN_NIN];
    int64_t *mo[SN_NIN], *ko[SN_NIN], *no[SN_NIN];
    int64_t M, N, K;
    char *low[SN_NIN], *high[SN_NIN]; /* the bytes each operand spans */
} sn_problem;

/* Memory a thread keeps from call to call: its packing space, and the calling thread's
 * offset tables, runs and the threads' partial results. Fresh memory each call cost a page
 * fault per 4 KB (a seventh of a convolution's time). ``*kept`` grows to ``bytes`` when
 * smaller; NULL when that fails. */
static void *sn_kept(void **kept, size_t *size, size_t bytes) {
    if (bytes > *size) {
        free(*kept);
        *kept = aligned_alloc(SN_VB, (bytes + SN_VB - 1) / SN_VB * SN_VB);
        *size = *kept == NULL ? 0 : bytes;
    }
    return *kept;
}

static __thread void *sn_space, *sn_tables, *sn_partials, *sn_runs;
static __thread size_t sn_space_size, sn_tables_size, sn_partials_size, sn_runs_size;

/* c (an MR x NR block, rows ldc apart) = or += a panel of the left (MR x KC) times a panel of
 * the right (KC x NR); only mr x nr of the block exist at an edge. The left element (r, k) is
 * at arow[r] + ao[k] bytes when ``arow`` is given (the operand read in place), else at
 * a[r * rs + k * ks] in a packed panel: k-major (rs 1, ks MR) or row-major (rs kc, ks 1), as
 * it was cheaper to pack. The right row k starts bo[k] bytes past b: a packed panel's row, or
 * the operand's own. */
static inline __attribute__((always_inline)) void sn_micro_body(
        int64_t kc, const sn_acc *restrict a, const int64_t rs, const int64_t ks,
        const char *const *arow, const int64_t *ao, const char *b, const int64_t *bo,
        sn_acc *c, int64_t ldc, int add, int64_t mr, int64_t nr) {
    sn_vec acc[SN_MR][SN_NV];
    #pragma GCC unroll 32
    for (int r = 0; r < SN_MR; r++)
        #pragma GCC unroll 8
        for (int v = 0; v < SN_NV; v++) acc[r][v] = (sn_vec){0};
    for (int64_t k = 0; k < kc; k++) {
        sn_vec bv[SN_NV];
        #pragma GCC unroll 8
        for (int v = 0; v < SN_NV; v++) bv[v] = *(const sn_uvec *)(b + bo[k] + v * SN_VB);
        /* the row of the panel after next: rows read in place (not packed) come from all
         * over the operand, where the hardware does not guess what comes next */
        __builtin_prefetch(b + bo[k] + 2 * SN_NR * sizeof(sn_acc), 0, 3);
        #pragma GCC unroll 32
        for (int r = 0; r < SN_MR; r++) {
            const sn_acc x = arow ? *(const sn_acc *)(arow[r] + ao[k]) : a[r * rs + k * ks];
            const sn_vec av = x - (sn_vec){0}; /* a broadcast: x - 0 is x */
            #pragma GCC unroll 8
            for (int v = 0; v < SN_NV; v++) acc[r][v] = SN_FMA(av, bv[v], acc[r][v]);
        }
    }
    if (mr == SN_MR && nr == SN_NR) {
        #pragma GCC unroll 32
        for (int r = 0; r < SN_MR; r++)
            #pragma GCC unroll 8
            for (int v = 0; v < SN_NV; v++) {
                sn_uvec *q = (sn_uvec *)(c + r * ldc + v * SN_VL);
                *q = add ? *q + acc[r][v] : acc[r][v];
            }
        return;
    }
    sn_acc block[SN_MR][SN_NR] __attribute__((aligned(SN_VB)));
    for (int r = 0; r < SN_MR; r++)
        for (int v = 0; v < SN_NV; v++) *(sn_vec *)&block[r][v * SN_VL] = acc[r][v];
    for (int64_t r = 0; r < mr; r++)
        for (int64_t j = 0; j < nr; j++)
            c[r * ldc + j] = add ? c[r * ldc + j] + block[r][j] : block[r][j];
}

/* The micro-kernel over a packed left panel (rows rs apart, steps ks apart). */
static void sn_micro_packed(int64_t kc, const sn_acc *restrict a, const int64_t rs,
                            const int64_t ks, const char *b, const int64_t *bo, sn_acc *c,
                            int64_t ldc, int add, int64_t mr, int64_t nr) {
    sn_micro_body(kc, a, rs, ks, NULL, NULL, b, bo, c, ldc, add, mr, nr);
}

/* The micro-kernel reading the left operand in place: row r's step k at arow[r] + ao[k]. */
static void sn_micro_direct(int64_t kc, const char *const *arow, const int64_t *ao,
                            const char *b, const int64_t *bo, sn_acc *c, int64_t ldc, int add,
                            int64_t mr, int64_t nr) {
    sn_micro_body(kc, NULL, 0, 0, arow, ao, b, bo, c, ldc, add, mr, nr);
}

/* The starts of the runs of [first, first + count) (and count after the last): a run
 * continues while ``continues(table, i)``. */
#define SN_RUNS(starts, runs, continues, table, first, count)                              \
    do {                                                                                \
        runs = 0;                                                                       \
        starts[runs++] = 0;                                                             \
        for (int64_t i_ = 1; i_ < (count); i_++)                                        \
            if (!continues(table, (first) + i_)) starts[runs++] = i_;                   \
        starts[runs] = (count);                                                         \
    } while (0)

#if defined(__AVX512F__)
#define SN_PIECES 1
/* A line of a panel (a row of the right panel, a row of a row-major left panel) where the
 * value is one operand's element is copied by vector moves: piece i moves the elements of
 * ``mask`` of vector ``vector`` from ``offset`` bytes past the line's start in the operand (a
 * piece per vector a run of consecutive elements touches). */
typedef struct {
    int64_t offset;
    int vector;
    unsigned mask;
} sn_piece;

/* A masked load is slow (about 10 cycles on Zen 5), so a piece inside the operand's bytes is
 * a plain load blended in; only pieces at the operand's ends read masked (masked lanes are
 * never read). */
#if SN_ACC_F64
#define SN_MASKED_LOAD(into, mask, src) \
    ((sn_vec)_mm512_mask_loadu_pd((__m512d)(into), (__mmask8)(mask), (src)))
#define SN_BLEND(into, mask, src) \
    ((sn_vec)_mm512_mask_blend_pd((__mmask8)(mask), (__m512d)(into), sn_opaque(_mm512_loadu_pd(src))))
#else
#define SN_MASKED_LOAD(into, mask, src) \
    ((sn_vec)_mm512_mask_loadu_ps((__m512)(into), (__mmask16)(mask), (src)))
#define SN_BLEND(into, mask, src) \
    ((sn_vec)_mm512_mask_blend_ps((__mmask16)(mask), (__m512)(into), sn_opaque(_mm512_loadu_ps(src))))
#endif
/* a value the compiler may not see through: it would fold the load and the blend back into
 * the masked load they replace */
#define sn_opaque(x) ({ __typeof__(x) sn_x = (x); __asm__("" : "+v"(sn_x)); sn_x; })

/* The pieces of a line whose element j sits at off[j] bytes, in runs ``starts``. */
static int sn_pieces(const int64_t *off, const int64_t *starts, int runs, sn_piece *pieces) {
    int count = 0;
    for (int u = 0; u < runs; u++) {
        const int64_t lo = starts[u], hi = starts[u + 1];
        for (int64_t v = lo / SN_VL; v * SN_VL < hi; v++) {
            const int64_t a = lo > v * SN_VL ? lo : v * SN_VL;
            const int64_t b = hi < (v + 1) * SN_VL ? hi : (v + 1) * SN_VL;
            pieces[count].offset = off[lo] + (v * SN_VL - lo) * (int64_t)sizeof(sn_acc);
            pieces[count].vector = (int)v;
            pieces[count].mask = ((1u << (b - a)) - 1) << (a - v * SN_VL);
            count++;
        }
    }
    return count;
}

/* dst's ``nvec`` vectors = the line at ``line`` by its pieces (zeros where none reads); the
 * operand spans [low, high). Pieces come by vector: each vector is merged in a register. */
static inline void sn_copy_line(sn_acc *dst, int nvec, const char *line,
                                const sn_piece *pieces, int count, const char *low,
                                const char *high) {
    sn_vec part = {0};
    int at = 0;
    for (int e = 0; e < count; e++) {
        if (pieces[e].vector != at) {
            *(sn_vec *)(dst + at * SN_VL) = part;
            for (int v = at + 1; v < pieces[e].vector; v++) *(sn_vec *)(dst + v * SN_VL) = (sn_vec){0};
            part = (sn_vec){0};
            at = pieces[e].vector;
        }
        const char *src = line + pieces[e].offset;
        if (src >= low && src + SN_VB <= high)
            part = SN_BLEND(part, pieces[e].mask, src);
        else
            part = SN_MASKED_LOAD(part, pieces[e].mask, src);
    }
    *(sn_vec *)(dst + at * SN_VL) = part;
    for (int v = at + 1; v < nvec; v++) *(sn_vec *)(dst + v * SN_VL) = (sn_vec){0};
}
#else
#define SN_PIECES 0
#endif

/* the operand the left value reads in place (any operand when it is packed instead) */
#define SN_LEFT (SN_LEFT_LOAD < 0 ? 0 : SN_LEFT_LOAD)

/* kc rounded up to whole vectors: the row length of a row-major left panel */
#define SN_ROUND(kc) (((kc) + SN_VL - 1) / SN_VL * SN_VL)

/* Rows [i0, i0+mc) and steps [k0, k0+kc) of the left value into panels of MR rows (zeros
 * past the last row), read by runs of steps whose elements are consecutive in memory: each
 * panel row-major (rows SN_ROUND(kc) long, a copy per run) where the runs are long, else
 * k-major. Returns whether the panels are row-major. */
static int sn_pack_left(const sn_problem *q, int64_t i0, int64_t mc, int64_t k0, int64_t kc,
                        sn_acc *pa) {
    int64_t starts[SN_KC + 1];
    char *at[SN_NIN];
    int runs;
    SN_RUNS(starts, runs, sn_left_continues, q->ko, k0, kc);
    const int rowmajor = kc >= 8 * runs;
    const int64_t kp = SN_ROUND(kc), rs = rowmajor ? kp : 1, ks = rowmajor ? 1 : SN_MR;
    for (int64_t ip = 0; ip < mc; ip += SN_MR)
        for (int64_t r = 0; r < SN_MR; r++) {
            sn_acc *dst = pa + ip * (rowmajor ? kp : kc) + r * rs;
            if (ip + r >= mc) {
                for (int64_t k = 0; k < kc; k++) dst[k * ks] = 0;
                continue;
            }
            const int64_t m = i0 + ip + r;
            for (int u = 0; u < runs; u++) {
                const int64_t lo = starts[u], hi = starts[u + 1];
                for (int i = 0; i < SN_NIN; i++) at[i] = q->p[i] + q->mo[i][m] + q->ko[i][k0 + lo];
                if (rowmajor) {
                    #pragma omp simd
                    for (int64_t k = lo; k < hi; k++) dst[k] = sn_left_at(at, k - lo);
                } else {
                    #pragma omp simd
                    for (int64_t k = lo; k < hi; k++) dst[k * SN_MR] = sn_left_at(at, k - lo);
                }
            }
        }
    return rowmajor;
}

/* Columns [j0, j0+nc) and steps [k0, k0+kc) of the right value into panels of NR columns
 * (zeros past the last column), each row of a panel by runs of consecutive columns (a copy
 * per run, or vector pieces); a panel whose columns are all short runs while its steps run
 * long (a transposed operand) is filled column by column instead. A panel that is one run
 * of one operand's elements is not packed: ``direct`` says so, and the micro-kernel reads
 * its rows in place. */
static void sn_pack_right(const sn_problem *q, int64_t j0, int64_t nc, int64_t k0, int64_t kc,
                          sn_acc *pb, char *direct) {
    int64_t starts[SN_NR + 1], kstarts[SN_KC + 1];
    char *at[SN_NIN];
    int runs, kruns;
    SN_RUNS(kstarts, kruns, sn_right_steps_continue, q->ko, k0, kc);
    for (int64_t jp = 0; jp < nc; jp += SN_NR) {
        const int64_t w = nc - jp < SN_NR ? nc - jp : SN_NR, n = j0 + jp;
        SN_RUNS(starts, runs, sn_right_continues, q->no, n, w);
        sn_acc *panel = pb + jp * kc;
        /* a whole run of one operand's elements: the micro-kernel reads its rows in place */
        direct[jp / SN_NR] = SN_RIGHT_LOAD >= 0 && runs == 1 && w == SN_NR;
        if (direct[jp / SN_NR]) continue;
        if (runs == 1 && w == SN_NR) { /* one whole run: copies of a fixed length */
            for (int64_t k = 0; k < kc; k++) {
                for (int i = 0; i < SN_NIN; i++) at[i] = q->p[i] + q->ko[i][k0 + k] + q->no[i][n];
                #pragma omp simd
                for (int64_t j = 0; j < SN_NR; j++) panel[k * SN_NR + j] = sn_right_at(at, j);
            }
            continue;
        }
#if SN_PIECES && SN_RIGHT_LOAD >= 0
        if (2 * (runs + SN_NV) <= w || kc < 8 * kruns) {
            sn_piece pieces[SN_NR + SN_NV + 1];
            const int count = sn_pieces(q->no[SN_RIGHT_LOAD] + n, starts, runs, pieces);
            const int64_t *ko = q->ko[SN_RIGHT_LOAD] + k0;
            for (int64_t k = 0; k < kc; k++)
                sn_copy_line(panel + k * SN_NR, SN_NV, q->p[SN_RIGHT_LOAD] + ko[k], pieces,
                             count, q->low[SN_RIGHT_LOAD], q->high[SN_RIGHT_LOAD]);
            continue;
        }
#endif
        if (4 * runs > w && kc >= 8 * kruns) {
            for (int64_t j = 0; j < SN_NR; j++) {
                if (j >= w) {
                    for (int64_t k = 0; k < kc; k++) panel[k * SN_NR + j] = 0;
                    continue;
                }
                for (int u = 0; u < kruns; u++) {
                    const int64_t lo = kstarts[u], hi = kstarts[u + 1];
                    for (int i = 0; i < SN_NIN; i++) at[i] = q->p[i] + q->ko[i][k0 + lo] + q->no[i][n + j];
                    for (int64_t k = lo; k < hi; k++) panel[k * SN_NR + j] = sn_right_at(at, k - lo);
                }
            }
            continue;
        }
        for (int64_t k = 0; k < kc; k++) {
            sn_acc *dst = panel + k * SN_NR;
            for (int u = 0; u < runs; u++) {
                const int64_t lo = starts[u], hi = starts[u + 1];
                for (int i = 0; i < SN_NIN; i++) at[i] = q->p[i] + q->ko[i][k0 + k] + q->no[i][n + lo];
                #pragma omp simd
                for (int64_t j = lo; j < hi; j++) dst[j] = sn_right_at(at, j - lo);
            }
            for (int64_t j = w; j < SN_NR; j++) dst[j] = 0;
        }
    }
}

/* c[i0:i1, j0:j1] (rows ldc elements apart) = the sum over steps [k0, k1), packing into pa
 * and pb (MC x KC and KC x NC). */
static void sn_product(const sn_problem *q, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                       int64_t k0, int64_t k1, sn_acc *c, int64_t ldc, sn_acc *pa,
                       sn_acc *pb) {
    int64_t packed_rows[SN_KC];
    char direct[SN_NC / SN_NR];
    for (int64_t k = 0; k < SN_KC; k++) packed_rows[k] = k * SN_NR * (int64_t)sizeof(sn_acc);
    for (int64_t jc = j0; jc < j1; jc += SN_NC) {
        const int64_t nc = j1 - jc < SN_NC ? j1 - jc : SN_NC;
        for (int64_t pc = k0; pc < k1; pc += SN_KC) {
            const int64_t kc = k1 - pc < SN_KC ? k1 - pc : SN_KC;
            sn_pack_right(q, jc, nc, pc, kc, pb, direct);
            for (int64_t ic = i0; ic < i1; ic += SN_MC) {
                const int64_t mc = i1 - ic < SN_MC ? i1 - ic : SN_MC;
                /* the left value as one operand's elements is read in place, else packed */
                const int in_place = SN_LEFT_LOAD >= 0;
                const int rowmajor = in_place ? 0 : sn_pack_left(q, ic, mc, pc, kc, pa);
                for (int64_t jr = 0; jr < nc; jr += SN_NR)
                    for (int64_t ir = 0; ir < mc; ir += SN_MR) {
                        const int64_t mr = mc - ir < SN_MR ? mc - ir : SN_MR;
                        const int64_t nr = nc - jr < SN_NR ? nc - jr : SN_NR;
                        sn_acc *at = c + (ic + ir - i0) * ldc + (jc + jr - j0);
                        const char *b = (const char *)(pb + jr * kc);
                        const int64_t *bo = packed_rows;
#if SN_RIGHT_LOAD >= 0
                        if (direct[jr / SN_NR]) {
                            b = q->p[SN_RIGHT_LOAD] + q->no[SN_RIGHT_LOAD][jc + jr];
                            bo = q->ko[SN_RIGHT_LOAD] + pc;
                        }
#endif
                        if (in_place) {
                            const char *arow[SN_MR]; /* rows past the last repeat row 0 */
                            for (int64_t r = 0; r < SN_MR; r++)
                                arow[r] = q->p[SN_LEFT] + q->mo[SN_LEFT][ic + ir + (r < mr ? r : 0)];
                            sn_micro_direct(kc, arow, q->ko[SN_LEFT] + pc, b, bo, at, ldc,
                                            pc > k0, mr, nr);
                        } else if (rowmajor)
                            sn_micro_packed(kc, pa + ir * SN_ROUND(kc), SN_ROUND(kc), 1, b, bo,
                                            at, ldc, pc > k0, mr, nr);
                        else
                            sn_micro_packed(kc, pa + ir * kc, 1, SN_MR, b, bo, at, ldc,
                                            pc > k0, mr, nr);
                    }
            }
        }
    }
}

#if SN_LEFT_LOAD >= 0 && SN_RIGHT_LOAD >= 0
/* Both values one operand's elements, both read along the steps in runs: each output is a
 * dot product of a left row and a right column, DOTS x DOTS of them at a time with the steps
 * in the vector lanes, no packing. A filter gradient of few channels and filters (a first
 * layer's 9 taps and 8 filters over 21,632 steps) has no rows or columns to tile: packing its
 * transposed operand cost more than the product. */
#define SN_DOTS 4

/* x's first ``count`` lanes (the rest 0), read at ``at`` inside [low, high). */
static inline sn_vec sn_run_load(const char *at, int64_t count, const char *low,
                                 const char *high) {
    if (count >= SN_VL) return *(const sn_uvec *)at;
#if SN_PIECES
    const unsigned mask = (1u << count) - 1;
    if (at >= low && at + SN_VB <= high)
        return SN_BLEND((sn_vec){0}, mask, at);
    return SN_MASKED_LOAD((sn_vec){0}, mask, at);
#else
    sn_vec v = {0};
    for (int64_t e = 0; e < count; e++) v[e] = ((const sn_acc *)at)[e];
    (void)low, (void)high;
    return v;
#endif
}

/* c[i0:i1, j0:j1] (rows ldc apart) = the sum over steps [k0, k1), as dot products; 3 when
 * there is no memory for the runs. */
static int sn_dots(const sn_problem *q, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                   int64_t k0, int64_t k1, sn_acc *c, int64_t ldc) {
    const int L = SN_LEFT_LOAD, R = SN_RIGHT_LOAD;
    const int64_t *kl = q->ko[L], *kr = q->ko[R];
    /* the runs: consecutive in both operands; found once for every block of outputs */
    int64_t *starts = (int64_t *)sn_kept(&sn_runs, &sn_runs_size,
                                         (size_t)(k1 - k0 + 1) * sizeof(int64_t));
    if (starts == NULL) return 3;
    int64_t runs = 0;
    starts[runs++] = k0;
    for (int64_t k = k0 + 1; k < k1; k++)
        if (!(sn_left_continues(q->ko, k) && sn_right_steps_continue(q->ko, k))) starts[runs++] = k;
    starts[runs] = k1;
    for (int64_t i = i0; i < i1; i += SN_DOTS)
        for (int64_t j = j0; j < j1; j += SN_DOTS) {
            const int64_t mr = i1 - i < SN_DOTS ? i1 - i : SN_DOTS;
            const int64_t nr = j1 - j < SN_DOTS ? j1 - j : SN_DOTS;
            const char *arow[SN_DOTS], *brow[SN_DOTS]; /* past the edge: row 0 again */
            for (int64_t r = 0; r < SN_DOTS; r++) {
                arow[r] = q->p[L] + q->mo[L][i + (r < mr ? r : 0)];
                brow[r] = q->p[R] + q->no[R][j + (r < nr ? r : 0)];
            }
            sn_vec acc[SN_DOTS][SN_DOTS];
            for (int r = 0; r < SN_DOTS; r++)
                for (int s = 0; s < SN_DOTS; s++) acc[r][s] = (sn_vec){0};
            for (int64_t u = 0; u < runs; u++) {
                const int64_t lo = starts[u], hi = starts[u + 1];
                for (int64_t t = 0; t < hi - lo; t += SN_VL) {
                    const int64_t count = hi - lo - t;
                    sn_vec a[SN_DOTS], b[SN_DOTS];
                    #pragma GCC unroll 4
                    for (int r = 0; r < SN_DOTS; r++) {
                        a[r] = sn_run_load(arow[r] + kl[lo] + t * (int64_t)sizeof(sn_acc), count,
                                           q->low[L], q->high[L]);
                        b[r] = sn_run_load(brow[r] + kr[lo] + t * (int64_t)sizeof(sn_acc), count,
                                           q->low[R], q->high[R]);
                    }
                    #pragma GCC unroll 4
                    for (int r = 0; r < SN_DOTS; r++)
                        #pragma GCC unroll 4
                        for (int s = 0; s < SN_DOTS; s++) acc[r][s] = SN_FMA(a[r], b[s], acc[r][s]);
                }
            }
            for (int64_t r = 0; r < mr; r++)
                for (int64_t s = 0; s < nr; s++) {
                    sn_acc total = 0;
                    for (int64_t e = 0; e < SN_VL; e++) total += acc[r][s][e];
                    c[(i + r - i0) * ldc + (j + s - j0)] = total;
                }
        }
    return 0;
}
#define SN_CAN_DOT 1
#else
#define SN_CAN_DOT 0
#endif

/* Byte offsets of every index of an axis group (axes [d0, d0 + count) of the space) for each
 * of ``nops`` operands: table[k][i], i the group's C-order index. */
static void sn_offsets(int64_t d0, int64_t count, const int64_t *shape, int nops,
                       int64_t *const *st, int64_t **table) {
    for (int k = 0; k < nops; k++) {
        int64_t filled = 1;
        table[k][0] = 0;
        for (int64_t d = d0; d < d0 + count; d++) {
            for (int64_t i = filled - 1; i >= 0; i--) {
                const int64_t base = table[k][i];
                for (int64_t j = shape[d] - 1; j >= 0; j--)
                    table[k][i * shape[d] + j] = base + j * st[k][d];
            }
            filled *= shape[d];
        }
    }
}

/* Whether dot products beat packing: both values plain, a result of at most one vector of
 * columns (a wider block would leave most lanes idle; from two vectors, packing was faster:
 * a first layer's gradient for 32 filters, 0.6x the time on two threads) and 1024 outputs,
 * runs of at least 16 vectors on average along the steps in both operands, and right
 * columns far apart (packing them would transpose the operand). */
static int sn_dots_pay(const sn_problem *q) {
#if SN_CAN_DOT
    if (q->N > SN_VL || q->M * q->N > 1024 || q->K < 16 * SN_VL) return 0;
    const int64_t sample = q->K < 4096 ? q->K : 4096;
    int64_t breaks = 0, close = 0;
    for (int64_t k = 1; k < sample; k++)
        breaks += !(sn_left_continues(q->ko, k) && sn_right_steps_continue(q->ko, k));
    for (int64_t j = 1; j < q->N; j++) close += sn_right_continues(q->no, j);
    return sample >= 16 * (breaks + 1) && 2 * close < q->N;
#else
    (void)q;
    return 0;
#endif
}

/* One product of the batch: the output (M x N elements, rows ldc apart) at ``out``. */
static int sn_contract_one(const sn_problem *q, sn_acc *out, int64_t ldc) {
    const int64_t M = q->M, N = q->N, K = q->K;
    const int64_t mp = (M + SN_MR - 1) / SN_MR, np = (N + SN_NR - 1) / SN_NR;
    const int big = (double)M * N * K >= SN_CONTRACT_PARALLEL_MIN;
    int threads = 1;
#ifdef _OPENMP
    if (big) threads = omp_get_max_threads();
#endif
    /* a long sum with a small result is cut into pieces of the sum, each packing only its
     * part of both values, the partial results added in piece order: the cut depends on the
     * sizes alone, never on the team (which a loaded machine lowers from one call to the
     * next), so the rounding is the same whatever the threads */
    int64_t pieces = 0;
    if (big && K >= 8 * (M + N) && M * N <= (1 << 20)) {
        pieces = K / SN_KC;
        if (pieces > SN_PARTIALS / (M * N)) pieces = SN_PARTIALS / (M * N);
        pieces = sn_k_pieces(pieces);
    }
    const int by_k = pieces > 1;
    if (by_k && threads > pieces) threads = (int)pieces;
    const int dots = sn_dots_pay(q);
    sn_acc *partial = NULL;
    if (by_k) {
        partial = (sn_acc *)sn_kept(&sn_partials, &sn_partials_size,
                                    (size_t)pieces * M * N * sizeof(sn_acc));
        if (partial == NULL) return 3;
    }
    int failed = 0;
    #pragma omp parallel num_threads(threads) if(threads > 1)
    {
        const int64_t t = sn_thread(), nt = sn_threads();
        const size_t room = ((SN_MC + SN_NC) * SN_KC + SN_VL) * sizeof(sn_acc);
        sn_acc *pa = (sn_acc *)sn_kept(&sn_space, &sn_space_size, room);
        sn_acc *pb = pa + SN_MC * SN_KC;
        if (pa == NULL) {
            #pragma omp atomic write
            failed = 1;
        } else if (by_k) {
            for (int64_t u = pieces * t / nt; u < pieces * (t + 1) / nt; u++) {
                const int64_t k0 = K * u / pieces, k1 = K * (u + 1) / pieces;
                sn_acc *mine = partial + u * M * N;
#if SN_CAN_DOT
                if (dots && sn_dots(q, 0, M, 0, N, k0, k1, mine, N)) {
                    #pragma omp atomic write
                    failed = 1;
                } else if (!dots)
#endif
                    sn_product(q, 0, M, 0, N, k0, k1, mine, N, pa, pb);
            }
        } else if (dots) {
#if SN_CAN_DOT
            const int64_t per = (M + nt - 1) / nt;
            const int64_t i0 = t * per, i1 = (t + 1) * per < M ? (t + 1) * per : M;
            if (i0 < i1 && sn_dots(q, i0, i1, 0, N, 0, K, out + i0 * ldc, ldc)) {
                #pragma omp atomic write
                failed = 1;
            }
#endif
        } else if (np >= mp || np >= nt) {
            const int64_t per = (np + nt - 1) / nt;
            const int64_t j0 = t * per * SN_NR, j1 = (t + 1) * per * SN_NR < N ? (t + 1) * per * SN_NR : N;
            if (j0 < j1) sn_product(q, 0, M, j0, j1, 0, K, out + j0, ldc, pa, pb);
        } else {
            const int64_t per = (mp + nt - 1) / nt;
            const int64_t i0 = t * per * SN_MR, i1 = (t + 1) * per * SN_MR < M ? (t + 1) * per * SN_MR : M;
            if (i0 < i1) sn_product(q, i0, i1, 0, N, 0, K, out + i0 * ldc, ldc, pa, pb);
        }
        if (by_k) {
            #pragma omp barrier
            if (!failed) {
                const int64_t per = (M + nt - 1) / nt;
                for (int64_t i = t * per; i < (t + 1) * per && i < M; i++)
                    for (int64_t j = 0; j < N; j++) {
                        sn_acc s = 0;
                        for (int64_t u = 0; u < pieces; u++) s += partial[(u * M + i) * N + j];
                        out[i * ldc + j] = s;
                    }
            }
        }
    }
    return failed ? 3 : 0;
}

/* The entry point's work: a = the launch ABI's arguments, the space (batch..., m axes, k
 * axes, n axes) with ``gm``, ``gk`` and ``gn`` axes per group; the output lacks the k axes
 * and is C-ordered (its n axes contiguous), as the runner allocates it. Nonzero: declined. */
static int sn_contract(int64_t *a, char **ptr, int gm, int gk, int gn) {
    char *p0[SN_NIN + 1];
    int64_t *st[SN_NIN + 1];
    int64_t nd = sn_decode(a, ptr, SN_NIN + 1, p0, st);
    const int64_t *shape = a + 1;
    const int64_t nb = nd - gm - gk - gn;
    int64_t M = 1, K = 1, N = 1, batch = 1;
    for (int64_t d = 0; d < nb; d++) batch *= shape[d];
    for (int64_t d = nb; d < nb + gm; d++) M *= shape[d];
    for (int64_t d = nb + gm; d < nb + gm + gk; d++) K *= shape[d];
    for (int64_t d = nb + gm + gk; d < nd; d++) N *= shape[d];
    if (M == 0 || N == 0 || batch == 0) return 0;
    if (K == 0) return 2;
    /* the output: rows (m) and columns (n) of a C-ordered array */
    int64_t want = sizeof(sn_acc);
    for (int64_t d = nd - 1; d >= nb + gm + gk; d--) {
        if (shape[d] > 1 && st[SN_NIN][d] != want) return 2;
        want *= shape[d];
    }
    const int64_t ldc = N;
    const size_t bytes = (size_t)SN_NIN * (M + K + N) * sizeof(int64_t);
    int64_t *tables = (int64_t *)sn_kept(&sn_tables, &sn_tables_size, bytes);
    if (tables == NULL) return 3;
    sn_problem q;
    q.M = M, q.N = N, q.K = K;
    for (int k = 0; k < SN_NIN; k++) {
        q.mo[k] = tables + k * (M + K + N);
        q.ko[k] = q.mo[k] + M;
        q.no[k] = q.ko[k] + K;
    }
    for (int k = 0; k < SN_NIN; k++) {
        q.low[k] = q.high[k] = p0[k];
        for (int64_t d = 0; d < nd; d++) {
            const int64_t span = (shape[d] - 1) * st[k][d];
            if (span < 0) q.low[k] += span;
            else q.high[k] += span;
        }
        q.high[k] += sizeof(sn_acc);
    }
    sn_offsets(nb, gm, shape, SN_NIN, st, q.mo);
    sn_offsets(nb + gm, gk, shape, SN_NIN, st, q.ko);
    sn_offsets(nb + gm + gk, gn, shape, SN_NIN, st, q.no);
    int rc = 0;
    int64_t idx[SN_MAXDIM] = {0};
    for (int64_t b = 0; rc == 0 && b < batch; b++) {
        int64_t at = b;
        char *out = p0[SN_NIN];
        for (int k = 0; k < SN_NIN; k++) q.p[k] = p0[k];
        for (int64_t d = nb - 1; d >= 0; d--) {
            idx[d] = at % shape[d];
            at /= shape[d];
            for (int k = 0; k < SN_NIN; k++) q.p[k] += idx[d] * st[k][d];
            out += idx[d] * st[SN_NIN][d];
        }
        /* the output's m axes: rows N apart when they are C-ordered, as the runner makes them */
        int64_t row = N * (int64_t)sizeof(sn_acc);
        for (int64_t d = nb + gm - 1; d >= nb; d--) {
            if (shape[d] > 1 && st[SN_NIN][d] != row) { rc = 2; break; }
            row *= shape[d];
        }
        if (rc == 0) rc = sn_contract_one(&q, (sn_acc *)out, ldc);
    }
    return rc;
}
