/* runner.c's gemm step (included by it, after the Step type and the output pool): one
 * ?gemm call through the BLAS address in the plan, with alpha, beta and the add into z folded
 * in, operands transposed by their strides; and who runs the product: one BLAS thread,
 * OpenBLAS's threads, or parts of it on OpenMP threads (the thresholds below), never more
 * than the call's team (runner_threads.h: the cores other processes leave free). */

/* Multiply-adds up to which a product inside a loop runs on one BLAS thread: a loop calls
 * hundreds of small ?gemm back to back, and waking OpenBLAS's threads for each cost more than
 * they gave (docs/loops.md; docs/benchmarks.md, "Measurements behind the code"). */
#define LOOP_SERIAL_MAX (1 << 22)
/* Who runs a product outside loops, by its multiply-adds (measured on the 2-core machine):
 * - below SERIAL_MAX, one BLAS thread: waking OpenBLAS's threads for it costs more than it
 *   saves (the handoff took 5x the kernel's samples at 1.5M), and its idle
 *   threads then spin for about 0.1 s on a core the next kernel's OpenMP threads need;
 * - from SPLIT_MIN, OpenMP threads of one BLAS thread each, a block of the result each: no
 *   pool left spinning, and the parts meet once, where OpenBLAS's threads meet at every
 *   block of the inner length (a filter gradient's 36,864 stalled whenever one thread was
 *   descheduled);
 * - in between, OpenBLAS's own threads: products of 33-102M ran 1.3-1.7x slower split.
 * The measurements: docs/benchmarks.md, "Measurements behind the code". */
#ifndef SN_SERIAL_MAX
#error "define SN_SERIAL_MAX as symnb.backends.plan.SERIAL_MAX (runner.py and setup.py do)"
#endif
#define SERIAL_MAX ((npy_intp)SN_SERIAL_MAX)
#define SPLIT_MIN (1 << 28)
/* From SMALL_SPLIT_MIN to SERIAL_MAX the parts on OpenMP threads too, where one BLAS thread
 * ran alone (a dense layer of 64 x 9216 x 10 and its two gradients, 5.9M each) */
#define SMALL_SPLIT_MIN (1 << 22)
/* columns of a split part: a multiple of a cache line of floats */
#define SPLIT_ALIGN 16

/* ---- gemm --------------------------------------------------------------------------------- */

/* multiply-adds up to which a matrix-vector product is one ?gemm call here (see gemm_fits) */
#define VECTOR_MAX (1 << 16)

/* (transpose flag, leading dimension) of a vector read as one row (``row``) or one column of
 * a row-major matrix; -1 for steps BLAS cannot take (negative, zero, not whole elements). */
static int vector_operand(PyArrayObject *v, int row, int *trans, int64_t *ld) {
    npy_intp item = PyArray_ITEMSIZE(v), s = PyArray_STRIDE(v, 0), n = PyArray_DIM(v, 0);
    if (n == 1) s = item;
    if (s <= 0 || s % item) return -1;
    *trans = row && s != item ? TRANS : NO_TRANS;
    *ld = row && s == item ? n : s / item;
    return 0;
}

/* (transpose flag, leading dimension) for a row-major call; a C-ordered copy (``*copy``)
 * only for a layout BLAS cannot read (neither axis unit-strided, negative strides). */
static int blas_operand(PyArrayObject *a, int *trans, int64_t *ld, PyObject **copy) {
    npy_intp item = PyArray_ITEMSIZE(a), rows = PyArray_DIM(a, 0), cols = PyArray_DIM(a, 1);
    npy_intp s0 = PyArray_STRIDE(a, 0), s1 = PyArray_STRIDE(a, 1);
    *trans = NO_TRANS;
    if ((s1 == item || cols == 1) && s0 % item == 0 && s0 >= (cols > 1 ? cols : 1) * item) {
        *ld = s0 / item;
        return 0;
    }
    if ((s0 == item || rows == 1) && s1 % item == 0 && s1 >= (rows > 1 ? rows : 1) * item) {
        *trans = TRANS;
        *ld = s1 / item;
        return 0;
    }
    *copy = PyArray_NewCopy(a, NPY_CORDER);
    *ld = cols;
    return *copy == NULL ? -1 : 0;
}

/* The bytes an array may touch, [lo, hi). */
static void extent(PyArrayObject *a, char **lo, char **hi) {
    *lo = *hi = PyArray_BYTES(a);
    for (int d = 0; d < PyArray_NDIM(a); d++) {
        npy_intp span = (PyArray_DIM(a, d) - 1) * PyArray_STRIDE(a, d);
        if (span < 0) *lo += span;
        else *hi += span;
    }
    *hi += PyArray_ITEMSIZE(a);
}

static int overlaps(PyArrayObject *a, PyArrayObject *b) {
    char *alo, *ahi, *blo, *bhi;
    extent(a, &alo, &ahi);
    extent(b, &blo, &bhi);
    return alo < bhi && blo < ahi;
}

/* z broadcasts to (m, n). */
static int broadcasts_to(PyArrayObject *z, npy_intp m, npy_intp n) {
    int nd = PyArray_NDIM(z);
    npy_intp want[2] = {m, n};
    if (nd > 2) return 0;
    for (int d = 0; d < nd; d++) {
        npy_intp got = PyArray_DIM(z, d), w = want[2 - nd + d];
        if (got != 1 && got != w) return 0;
    }
    return 1;
}

/* Where the product goes: z itself for an in-place step when it can hold the result and
 * overlaps neither x nor y, else a pooled array holding z broadcast (when beta is not 0). */
static PyObject *gemm_output(Step *st, PyArrayObject *z, PyArrayObject *x, PyArrayObject *y,
                             npy_intp *dims, double beta) {
    int type = st->out_types[0];
    if (st->inplace && z != NULL && can_hold(z, 2, dims, type) && !overlaps(z, x)
        && !overlaps(z, y))
        return Py_NewRef((PyObject *)z);
    PyObject *c = pooled(st, 0, 2, dims, type);
    if (c != NULL && beta != 0 && PyArray_CopyInto((PyArrayObject *)c, z) < 0) Py_CLEAR(c);
    return c;
}

/* c (m x n, row stride ldc) = alpha * op(x) op(y) + beta * c, one ?gemm call. */
static void gemm_call(Step *st, int ta, int tb, npy_intp m, npy_intp n, npy_intp k,
                      double alpha, char *x, int64_t lda, char *y, int64_t ldb, double beta,
                      char *c, int64_t ldc) {
    int single = st->out_types[0] == NPY_FLOAT32;
    if (st->ilp64 && single)
        ((sgemm64_fn)st->target)(ROW_MAJOR, ta, tb, m, n, k, (float)alpha, x, lda, y, ldb,
                                 (float)beta, c, ldc);
    else if (st->ilp64)
        ((dgemm64_fn)st->target)(ROW_MAJOR, ta, tb, m, n, k, alpha, x, lda, y, ldb, beta, c,
                                 ldc);
    else if (single)
        ((sgemm_fn)st->target)(ROW_MAJOR, ta, tb, (int)m, (int)n, (int)k, (float)alpha, x,
                               (int)lda, y, (int)ldb, (float)beta, c, (int)ldc);
    else
        ((dgemm_fn)st->target)(ROW_MAJOR, ta, tb, (int)m, (int)n, (int)k, alpha, x, (int)lda,
                               y, (int)ldb, beta, c, (int)ldc);
}

/* Part ``part`` of ``parts`` of the product: a block of c's columns when it is at least as
 * wide as tall, else a block of its rows; the operands' matching blocks by their layouts. */
static void gemm_part(Step *st, int ta, int tb, npy_intp *mnk, double alpha, char *x,
                      int64_t lda, char *y, int64_t ldb, double beta, char *c, int part,
                      int parts) {
    npy_intp m = mnk[0], n = mnk[1], k = mnk[2], item = st->out_types[0] == NPY_FLOAT32 ? 4 : 8;
    int by_columns = n >= m;
    npy_intp size = by_columns ? n : m;
    npy_intp step = (size + parts - 1) / parts;
    if (by_columns) step = (step + SPLIT_ALIGN - 1) / SPLIT_ALIGN * SPLIT_ALIGN;
    npy_intp lo = part * step, hi = lo + step < size ? lo + step : size;
    if (lo >= hi) return;
    if (by_columns)
        gemm_call(st, ta, tb, m, hi - lo, k, alpha, x, lda,
                  y + lo * item * (tb == NO_TRANS ? 1 : ldb), ldb, beta, c + lo * item, n);
    else
        gemm_call(st, ta, tb, hi - lo, n, k, alpha, x + lo * item * (ta == NO_TRANS ? lda : 1),
                  lda, y, ldb, beta, c + lo * n * item, n);
}

/* The product on as many OpenMP threads as both OpenBLAS and OpenMP may use (a user's limit
 * on either holds), one BLAS thread each (see SPLIT_MIN). */
static void split_gemm(Step *st, int ta, int tb, npy_intp *mnk, double alpha, char *x,
                       int64_t lda, char *y, int64_t ldb, double beta, char *c, int threads) {
#ifdef _OPENMP
    if (omp_get_max_threads() < threads) threads = omp_get_max_threads();
    #pragma omp parallel num_threads(threads)
    gemm_part(st, ta, tb, mnk, alpha, x, lda, y, ldb, beta, c, omp_get_thread_num(),
              omp_get_num_threads());
#else
    gemm_part(st, ta, tb, mnk, alpha, x, lda, y, ldb, beta, c, 0, 1);
    (void)threads;
#endif
}

static void call_gemm(Step *st, int ta, int tb, npy_intp *mnk, double alpha, char *x,
                      int64_t lda, char *y, int64_t ldb, double beta, char *c) {
    gemm_call(st, ta, tb, mnk[0], mnk[1], mnk[2], alpha, x, lda, y, ldb, beta, c, mnk[1]);
}

/* alpha or beta from its slot (-1: ``otherwise``); 0 done, FALLBACK when it is no number. */
static int scalar_of(PyObject **slots, int slot, double otherwise, double *value) {
    *value = otherwise;
    if (slot < 0) return 0;
    *value = PyFloat_AsDouble(slots[slot]);
    if (*value == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return FALLBACK; }
    return 0;
}

/* Operands of the planned type, no empty axis, z broadcasting: (m, n, k); else 0. Matrices,
 * or with no z one vector (x: a row, m = 1; y: a column, n = 1) in a product of at most
 * VECTOR_MAX multiply-adds: a larger one is NumPy's gemv, which reads the matrix once where
 * ?gemm would pack it first. */
static int gemm_fits(Step *st, PyObject **slots, npy_intp *mnk) {
    PyObject *x = slots[st->ins[GEMM_X]], *y = slots[st->ins[GEMM_Y]];
    PyObject *z = st->ins[GEMM_Z] >= 0 ? slots[st->ins[GEMM_Z]] : NULL;
    int type = st->out_types[0];
    if (st->target == NULL || !PyArray_Check(x) || !PyArray_Check(y)) return 0;
    PyArrayObject *a = (PyArrayObject *)x, *b = (PyArrayObject *)y;
    int na = PyArray_NDIM(a), nb = PyArray_NDIM(b);
    if (na < 1 || na > 2 || nb < 1 || nb > 2 || na + nb < 3 || (z != NULL && na + nb != 4)
        || PyArray_TYPE(a) != type || PyArray_TYPE(b) != type
        || PyArray_DIM(a, na - 1) != PyArray_DIM(b, 0))
        return 0;
    mnk[0] = na == 2 ? PyArray_DIM(a, 0) : 1, mnk[1] = nb == 2 ? PyArray_DIM(b, 1) : 1;
    mnk[2] = PyArray_DIM(a, na - 1);
    if (mnk[0] == 0 || mnk[1] == 0 || mnk[2] == 0) return 0;
    if (na + nb == 3 && mnk[0] * mnk[1] * mnk[2] > VECTOR_MAX) return 0;
    if (z == NULL) return 1;
    return PyArray_Check(z) && PyArray_TYPE((PyArrayObject *)z) == type
           && broadcasts_to((PyArrayObject *)z, mnk[0], mnk[1]);
}

/* Whether a BLAS with 32-bit ints (not ILP64) can take the sizes and leading dimensions; a
 * larger product is NumPy's (its own BLAS), never sizes cut to an int. */
static int int_sized(Step *st, npy_intp *mnk, int64_t lda, int64_t ldb) {
    return st->ilp64
           || (mnk[0] <= INT_MAX && mnk[1] <= INT_MAX && mnk[2] <= INT_MAX && lda <= INT_MAX
               && ldb <= INT_MAX);
}

static int run_gemm(Step *st, PyObject **slots) {
    npy_intp mnk[3];
    double alpha, beta;
    if (!gemm_fits(st, slots, mnk)) return FALLBACK;
    PyArrayObject *z = st->ins[GEMM_Z] >= 0 ? (PyArrayObject *)slots[st->ins[GEMM_Z]] : NULL;
    if (scalar_of(slots, st->ins[GEMM_ALPHA], 1.0, &alpha)
        || scalar_of(slots, z ? st->ins[GEMM_BETA] : -1, 0.0, &beta))
        return FALLBACK;
    /* BLAS skips the product when alpha is 0 and never reads c when beta is 0, so a NaN or
     * an inf there would vanish where the expression gives NaN (0 * inf): NumPy's, as the
     * gemm's reference computes it (a learning rate of 0 must not hide a NaN gradient) */
    if (alpha == 0.0 || (z != NULL && beta == 0.0)) return FALLBACK;
    PyArrayObject *x = (PyArrayObject *)slots[st->ins[GEMM_X]];
    PyArrayObject *y = (PyArrayObject *)slots[st->ins[GEMM_Y]];
    PyObject *xc = NULL, *yc = NULL, *c = NULL;
    int ta, tb, rc = -1;
    int64_t lda, ldb;
    npy_intp dims[2] = {mnk[0], mnk[1]};
    if (PyArray_NDIM(x) + PyArray_NDIM(y) == 3) { /* a vector: x a row (m = 1), y a column */
        int xv = PyArray_NDIM(x) == 1, yv = !xv;
        if ((xv ? vector_operand(x, 1, &ta, &lda) : blas_operand(x, &ta, &lda, &xc))
            || (yv ? vector_operand(y, 0, &tb, &ldb) : blas_operand(y, &tb, &ldb, &yc))) {
            rc = PyErr_Occurred() ? -1 : FALLBACK;
            goto done;
        }
        if (!int_sized(st, mnk, lda, ldb)) { rc = FALLBACK; goto done; }
        if ((c = pooled(st, 0, 1, xv ? dims + 1 : dims, st->out_types[0])) == NULL) goto done;
    } else {
        if (blas_operand(x, &ta, &lda, &xc) || blas_operand(y, &tb, &ldb, &yc)) goto done;
        if (!int_sized(st, mnk, lda, ldb)) { rc = FALLBACK; goto done; }
        if ((c = gemm_output(st, z, x, y, dims, beta)) == NULL) goto done;
    }
    char *xp = PyArray_BYTES(xc ? (PyArrayObject *)xc : x);
    char *yp = PyArray_BYTES(yc ? (PyArrayObject *)yc : y);
    char *cp = PyArray_BYTES((PyArrayObject *)c);
    npy_intp work = mnk[0] * mnk[1] * mnk[2];
    int split = st->set_threads != NULL && !st->in_loop
                && (work >= SPLIT_MIN || (work >= SMALL_SPLIT_MIN && work < SERIAL_MAX));
    int serial = st->set_threads != NULL && !split
                 && ((!st->in_loop && work < SERIAL_MAX)
                     || (st->in_loop && st->loop_serial && work <= LOOP_SERIAL_MAX));
    if (work >= RELEASE_GIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        /* the BLAS's own count (the user's limit), the call's team within it (threads.py),
         * and BLAS threads of one under parts on OpenMP threads: never one pool inside the
         * other */
        int threads = st->set_threads != NULL ? st->get_threads() : 0;
        int team = serial ? 1 : team_limit(threads);
        int parts = split ? team : 1, blas = parts > 1 ? 1 : team;
        if (blas < threads) st->set_threads(blas);
        if (parts > 1)
            split_gemm(st, ta, tb, mnk, alpha, xp, lda, yp, ldb, beta, cp, parts);
        else
            call_gemm(st, ta, tb, mnk, alpha, xp, lda, yp, ldb, beta, cp);
        if (blas < threads) st->set_threads(threads);
        Py_END_ALLOW_THREADS
    } else {
        call_gemm(st, ta, tb, mnk, alpha, xp, lda, yp, ldb, beta, cp);
    }
    Py_XSETREF(slots[st->outs[0]], c);
    rc = 0;
done:
    Py_XDECREF(xc);
    Py_XDECREF(yc);
    return rc;
}
