/* The memory-bandwidth floor for W1b: stream n doubles from each of 4 inputs, write 1 output.
 * out[i] = x[i] + y[i] + z[i] + w[i] moves exactly the bytes W1b must move, with negligible
 * arithmetic. Two ways of writing are timed: normal stores (each output line is first read
 * into the cache, write-allocate) and, on x86, non-temporal stores (written straight to memory,
 * as symnb's kernels do for large outputs); the floor is the faster. Buffers are touched
 * before timing (by the same threads, static schedule), so page faults are not timed.
 * Prints: floor seconds, a checksum, normal-store seconds, streaming-store seconds (0 if none).
 * Usage: stream N REPS   (threads from OMP_NUM_THREADS) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__) && defined(__SSE2__)
#include <immintrin.h>
#define HAVE_STREAM 1
#else
#define HAVE_STREAM 0
#endif

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double d = *(const double *)a - *(const double *)b;
    return (d > 0) - (d < 0);
}

static void normal_stores(long n, const double *x, const double *y, const double *z,
                          const double *w, double *out) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) out[i] = x[i] + y[i] + z[i] + w[i];
}

#if HAVE_STREAM
/* out must be 16-byte aligned (malloc's is); pairs of doubles, one streaming store each. */
static void streaming_stores(long n, const double *x, const double *y, const double *z,
                             const double *w, double *out) {
    long pairs = n / 2;
#pragma omp parallel for schedule(static)
    for (long k = 0; k < pairs; k++) {
        long i = 2 * k;
        __m128d s = _mm_add_pd(_mm_add_pd(_mm_loadu_pd(x + i), _mm_loadu_pd(y + i)),
                               _mm_add_pd(_mm_loadu_pd(z + i), _mm_loadu_pd(w + i)));
        _mm_stream_pd(out + i, s);
    }
    _mm_sfence();
    if (n % 2) out[n - 1] = x[n - 1] + y[n - 1] + z[n - 1] + w[n - 1];
}
#endif

typedef void (*loop_fn)(long, const double *, const double *, const double *, const double *,
                        double *);

static double seconds(loop_fn loop, long n, double **a) {
    double start = now();
    loop(n, a[0], a[1], a[2], a[3], a[4]);
    return now() - start;
}

static double median(double *times, int reps) {
    qsort(times, reps, sizeof *times, by_value);
    return times[reps / 2];
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    int reps = argc > 2 ? atoi(argv[2]) : 11;
    double *a[5];
    for (int k = 0; k < 5; k++)
        if (!(a[k] = malloc(n * sizeof(double)))) return 1;
    double *times = malloc(reps * sizeof *times);
    if (!times) return 1;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        a[0][i] = i; a[1][i] = 1; a[2][i] = 2; a[3][i] = 3; a[4][i] = 0;
    }
    double *other = malloc(reps * sizeof *other);
    if (!other) return 1;
    for (int r = 0; r < reps; r++) { /* interleaved, so both see the same machine */
        times[r] = seconds(normal_stores, n, a);
#if HAVE_STREAM
        other[r] = seconds(streaming_stores, n, a);
#endif
    }
    double normal = median(times, reps), streaming = 0, floor = normal;
#if HAVE_STREAM
    streaming = median(other, reps);
    if (streaming < floor) floor = streaming;
#endif
    printf("%.9f %.1f %.9f %.9f\n", floor, a[4][n - 1], normal, streaming);
    return 0;
}
