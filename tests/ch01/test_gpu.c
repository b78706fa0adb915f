/* Chapter 01 on the GPU: each kernel (timed and instrumented builds) against the float64 reference over row
 * lengths 1 .. 2^20, counted bytes == model to the byte, NaN-poisoned outputs fully written, and the numerics
 * of max_sum.h on the device. Skipped without a CUDA device; failing with REQUIRE_GPU=1. */
#include "../support.h"
#include "ch01_test.h"
#include "cuda_check.h"
#include "io_tally.cuh"

typedef struct {
    IoBytes counted;  /* bytes the instrumented build counted (when counted) */
    size_t nonfinite; /* NaN or inf anywhere in the output                    */
} DeviceRun;

/* Uploads x (R x N, starting `offset` floats into the buffers, to move the rows off 16-byte alignment), runs one
 * kernel on a poisoned output, downloads y. */
static DeviceRun run_on_device(int kernel, int counted, const float *x, float *y, long long R, int N, int C,
                               int offset) {
    const size_t n = (size_t)R * N;
    float *dx = (float *)dev_alloc(sizeof(float) * (n + offset));
    float *dy = (float *)dev_alloc(sizeof(float) * (n + offset));
    float *dml = (float *)dev_alloc(sizeof(float) * 2 * (size_t)R * blockwise_chunks(N, C));
    dev_upload(dx + offset, x, n, DTYPE_FP32);
    dev_poison(dy, sizeof(float) * (n + offset));
    DeviceRun run = {{0, 0}, 0};
    if (counted) io_counter_reset();
    softmax_launch(kernel, counted, dx + offset, dy + offset, dml, R, N, C);
    if (counted) run.counted = io_counter_read();
    CUDA_CHECK(cudaDeviceSynchronize());
    dev_download(y, dy + offset, n, DTYPE_FP32);
    run.nonfinite = count_nonfinite(y, n);
    dev_free(dx);
    dev_free(dy);
    dev_free(dml);
    return run;
}

static float *scores(long long R, int N, unsigned long long seed) {
    float *x = (float *)malloc(sizeof(float) * (size_t)R * N);
    Rng rng = rng_seeded(seed);
    fill_normal(x, (size_t)R * N, &rng, 1.0f);
    return x;
}

/* One shape, every kernel, both builds: result, full write, counted == model. */
static void check_shape(long long R, int N, const int *chunks, int n_chunks, int offset) {
    float *x = scores(R, N, 31 + N), *y = (float *)malloc(sizeof(float) * (size_t)R * N);
    for (int k = 0; k < CH01_KERNELS; k++)
        for (int c = 0; c < (k == SOFTMAX_BLOCKWISE ? n_chunks : 1); c++) {
            const int C = k == SOFTMAX_BLOCKWISE ? chunks[c] : BLOCKWISE_CHUNK;
            for (int counted = 0; counted <= 1; counted++) {
                const DeviceRun run = run_on_device(k, counted, x, y, R, N, C, offset);
                const char *build = counted ? "instrumented" : "timed";
                cr_assert_eq(run.nonfinite, 0, "%s (%s) R=%lld N=%d C=%d: %zu outputs left NaN or inf",
                             ch01_kernel_names[k], build, R, N, C, run.nonfinite);
                const double rel = softmax_error(x, y, R, N);
                cr_assert(rel <= CH01_TOL, "%s (%s) R=%lld N=%d C=%d offset=%d: rel err %.3e", ch01_kernel_names[k],
                          build, R, N, C, offset, rel);
                if (counted) {
                    const IoBytes model = model_of(k, R, N, C);
                    cr_assert(run.counted.read == model.read && run.counted.write == model.write,
                              "%s R=%lld N=%d C=%d: counted %llu read / %llu written, model %llu / %llu",
                              ch01_kernel_names[k], R, N, C, run.counted.read, run.counted.write, model.read,
                              model.write);
                }
            }
        }
    free(x);
    free(y);
}

Test(gpu, short_rows) {
    NEED_GPU();
    const int lengths[] = {1, 17, 33, 1000, 1024};
    const int chunks[] = {BLOCKWISE_CHUNK, 7, 64, 999};
    for (size_t a = 0; a < sizeof(lengths) / sizeof(lengths[0]); a++)
        check_shape(37, lengths[a], chunks, 4, 0);
}

Test(gpu, long_rows) {
    NEED_GPU();
    const int chunks[] = {BLOCKWISE_CHUNK, 999, 4096};
    check_shape(5, 65536, chunks, 3, 0);
    check_shape(3, 1 << 20, chunks, 3, 0);
    check_shape(2, (1 << 20) + 3, chunks, 2, 0); /* ragged: neither a multiple of 4 nor of the chunk */
}

/* Rows that start off the 16-byte grid: the scalar head and tail of the row walkers. */
Test(gpu, unaligned_rows) {
    NEED_GPU();
    const int chunks[] = {BLOCKWISE_CHUNK, 64};
    for (int offset = 1; offset <= 3; offset++) {
        check_shape(9, 1000, chunks, 2, offset);
        check_shape(4, 5, chunks, 2, offset);
    }
}

Test(gpu, large_masked_and_empty_rows_give_no_nan) {
    NEED_GPU();
    const int lengths[] = {1, 2, 17, 1000, 8193, 65536};
    const int chunks[] = {BLOCKWISE_CHUNK, 1, 64, 1000};
    for (size_t a = 0; a < sizeof(lengths) / sizeof(lengths[0]); a++) {
        const int N = lengths[a];
        float *x = special_rows(N, 3), *y = (float *)malloc(sizeof(float) * SPECIAL_ROWS * (size_t)N);
        for (int k = 0; k < CH01_KERNELS; k++)
            for (int c = 0; c < (k == SOFTMAX_BLOCKWISE ? 4 : 1); c++) {
                const int C = k == SOFTMAX_BLOCKWISE ? chunks[c] : BLOCKWISE_CHUNK;
                if (blockwise_chunks(N, C) > 2000) continue; /* K^2 pairs read per row */
                const DeviceRun run = run_on_device(k, 0, x, y, SPECIAL_ROWS, N, C, 0);
                cr_assert_eq(run.nonfinite, 0, "%s N=%d C=%d: %zu NaN or inf", ch01_kernel_names[k], N, C,
                             run.nonfinite);
                const double rel = softmax_error(x, y, SPECIAL_ROWS, N);
                cr_assert(rel <= CH01_TOL, "%s N=%d C=%d: rel err %.3e", ch01_kernel_names[k], N, C, rel);
                assert_zero_row(y + (size_t)ROW_ALL_MINUS_INF * N, N, ch01_kernel_names[k]);
            }
        free(x);
        free(y);
    }
}

/* The GPU and the CPU versions run the same max_sum.h: their outputs agree closely (not bit for bit: lanes and
 * threads group the sums differently). */
Test(gpu, agrees_with_the_cpu_version) {
    NEED_GPU();
    const long long R = 11;
    const int N = 4099, C = 1000;
    float *x = scores(R, N, 8), *y_gpu = (float *)malloc(sizeof(float) * R * N),
          *y_cpu = (float *)malloc(sizeof(float) * R * N), *ml = (float *)malloc(sizeof(float) * 2 * R * 5);
    for (int k = 0; k < CH01_KERNELS; k++) {
        IoBytes io = {0, 0};
        run_on_device(k, 0, x, y_gpu, R, N, C, 0);
        softmax_cpu(k, x, y_cpu, ml, R, N, C, &io);
        for (size_t i = 0; i < (size_t)R * N; i++)
            cr_assert(fabsf(y_gpu[i] - y_cpu[i]) <= 4e-6f * y_cpu[i] + 1e-12f, "%s: y[%zu] GPU %.9g CPU %.9g",
                      ch01_kernel_names[k], i, y_gpu[i], y_cpu[i]);
    }
    free(x);
    free(y_gpu);
    free(y_cpu);
    free(ml);
}
