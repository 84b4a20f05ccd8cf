/* The memory-bandwidth floor for W1b: stream n doubles from each of 4 inputs, write 1 output.
 * out[i] = x[i] + y[i] + z[i] + w[i] moves exactly the bytes W1b must move, with negligible
 * arithmetic. Buffers are touched before timing (by the same threads, static schedule), so
 * page faults are not timed; the median of the repetitions is printed in seconds.
 * Usage: stream N REPS   (threads from OMP_NUM_THREADS) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double d = *(const double *)a - *(const double *)b;
    return (d > 0) - (d < 0);
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    int reps = argc > 2 ? atoi(argv[2]) : 11;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
    double *w = malloc(n * sizeof *w), *out = malloc(n * sizeof *out);
    double *times = malloc(reps * sizeof *times);
    if (!x || !y || !z || !w || !out || !times) return 1;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        x[i] = i; y[i] = 1; z[i] = 2; w[i] = 3; out[i] = 0;
    }
    for (int r = 0; r < reps; r++) {
        double start = now();
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) out[i] = x[i] + y[i] + z[i] + w[i];
        times[r] = now() - start;
    }
    qsort(times, reps, sizeof *times, by_value);
    printf("%.9f %.1f\n", times[reps / 2], out[n - 1]);
    return 0;
}
