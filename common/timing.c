/* timing.c: CUDA events around each repetition, L2 flushed between repetitions, median and min. */
#include "timing.h"

#include <stdlib.h>
#include <time.h>

#include "cuda_check.h"
#include "host_tensor.h"

/* A buffer twice the size of the L2; writing it evicts whatever the previous repetition left there. */
static void *flush_buffer = NULL;
static size_t flush_bytes = 0;

static void flush_l2(void) {
    if (!flush_buffer) {
        int dev = 0, l2 = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
        flush_bytes = 2 * (size_t)(l2 > 0 ? l2 : (8 << 20));
        CUDA_CHECK(cudaMalloc(&flush_buffer, flush_bytes));
    }
    CUDA_CHECK(cudaMemsetAsync(flush_buffer, 0, flush_bytes, 0));
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

Timing time_launches(LaunchFn fn, void *ctx, int warmup, int reps, int flush) {
    for (int i = 0; i < warmup; i++) fn(ctx);
    CUDA_CHECK(cudaDeviceSynchronize());

    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    double *ms = (double *)host_alloc(sizeof(double) * (size_t)reps, "the repetitions' times");
    for (int r = 0; r < reps; r++) {
        if (flush) flush_l2();
        CUDA_CHECK(cudaEventRecord(start, 0));
        fn(ctx);
        CUDA_CHECK(cudaEventRecord(stop, 0));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float t = 0.f;
        CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
        ms[r] = t;
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));

    qsort(ms, (size_t)reps, sizeof(double), compare_doubles);
    Timing out;
    out.reps = reps;
    out.min_ms = ms[0];
    out.median_ms = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
    free(ms);
    return out;
}

double wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}
