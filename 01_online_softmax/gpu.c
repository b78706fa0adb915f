/* gpu.c: chapter 01 on the GPU: upload the scores, then for each kernel: time it (timed build), check its
 * output against the float64 reference, and count its bytes (instrumented build). */
#include <stdlib.h>

#include "ch01.h"
#include "checked_math.h"
#include "cuda_check.h"
#include "host_tensor.h"
#include "io_tally.cuh"
#include "kernels.h"
#include "save.h"
#include "timing.h"

void softmax_launch(int kernel, int counted, const float *x, float *y, float *ml, long long R, int N, int C) {
    switch (kernel) {
    case SOFTMAX_3PASS: (counted ? softmax_3pass_counted : softmax_3pass)(x, y, R, N); break;
    case SOFTMAX_ONLINE: (counted ? softmax_online_counted : softmax_online)(x, y, R, N); break;
    default: (counted ? softmax_blockwise_counted : softmax_blockwise)(x, y, ml, R, N, C); break;
    }
}

size_t ch01_device_bytes(const Options *o) {
    /* x and y, and the (m, l) pairs; checked_math.h: exact or flagged */
    const unsigned long long R = (unsigned long long)ch01_rows(o), K = (unsigned long long)blockwise_chunks(o->N, BLOCKWISE_CHUNK);
    return count_add(count_mul4(2, R, (unsigned long long)o->N, sizeof(float)), count_mul3(R, K, 2 * sizeof(float)));
}

size_t ch01_host_bytes(const Options *o, int cpu) {
    typedef unsigned long long u64;
    const u64 R = (u64)ch01_rows(o), N = (u64)o->N, f = sizeof(float), n = count_mul(R, N), chunk = (u64)1 << 24;
    const u64 pool = f * SCORE_POOL_SIZE;
    /* the check: the sampled rows' indices, a row of x and y, two float64 rows */
    const u64 check = o->no_check ? 0 : sizeof(int) * (R < CHECK_ELEMENTS ? R : CHECK_ELEMENTS) + (2 * f + 16) * N;
    if (!cpu) /* the upload buffer, and the download buffer of the NaN count */
        return count_add(pool + check, 2 * f * (n < chunk ? n : chunk));
    /* x, y and the (m, l) pairs */
    return count_add(count_add(count_mul(2 * f, n), count_mul3(R, (u64)blockwise_chunks(o->N, BLOCKWISE_CHUNK), 2 * f)),
                     pool + check);
}

typedef struct {
    int kernel;
    const float *x;
    float *y, *ml;
    long long R;
    int N;
} Launch;

static void launch_timed(void *p) {
    const Launch *a = (const Launch *)p;
    softmax_launch(a->kernel, 0, a->x, a->y, a->ml, a->R, a->N, BLOCKWISE_CHUNK);
}

/* The scores go up in 64 MB pieces, so that no host array as large as the input is needed. */
static void upload_scores(const ScorePool *pool, float *x, size_t n) {
    const size_t chunk = (size_t)1 << 24;
    float *buf = (float *)host_alloc(sizeof(float) * (n < chunk ? n : chunk), "the upload buffer");
    for (size_t at = 0; at < n; at += chunk) {
        const size_t m = n - at < chunk ? n - at : chunk;
        score_pool_fill(pool, at, m, buf);
        dev_upload(x + at, buf, m, DTYPE_FP32);
    }
    free(buf);
}

void ch01_save_x(const Options *o, const ScorePool *pool) {
    const long long shape[2] = {ch01_rows(o), o->N};
    const size_t n = (size_t)ch01_rows(o) * o->N, chunk = (size_t)1 << 20;
    SaveFile f;
    if (!save_open(&f, o, "x", "fp32", 2, shape)) return;
    float *buf = (float *)host_alloc(sizeof(float) * (n < chunk ? n : chunk), "the save buffer");
    for (size_t at = 0; at < n; at += chunk) {
        const size_t m = n - at < chunk ? n - at : chunk;
        score_pool_fill(pool, at, m, buf);
        if (!save_floats(&f, buf, m)) break;
    }
    save_close(&f);
    free(buf);
}

void ch01_save_y(const Options *o, int kernel, const float *y_dev, const float *y_host) {
    const long long shape[2] = {ch01_rows(o), o->N};
    const size_t n = (size_t)ch01_rows(o) * o->N, chunk = (size_t)1 << 20;
    char name[64];
    snprintf(name, sizeof(name), "y_%s", ch01_kernel_names[kernel]);
    SaveFile f;
    if (!save_open(&f, o, name, "fp32", 2, shape)) return;
    if (y_host) {
        save_floats(&f, y_host, n);
    } else {
        float *buf = (float *)host_alloc(sizeof(float) * (n < chunk ? n : chunk), "the save buffer");
        for (size_t at = 0; at < n; at += chunk) {
            const size_t m = n - at < chunk ? n - at : chunk;
            dev_download(buf, y_dev + at, m, DTYPE_FP32);
            if (!save_floats(&f, buf, m)) break;
        }
        free(buf);
    }
    save_close(&f);
}

void ch01_run_gpu(const Options *o, const DeviceInfo *dev, KernelRun *runs) {
    (void)dev;
    const long long R = ch01_rows(o);
    const int N = o->N;
    const size_t elements = (size_t)R * N;
    ScorePool pool = score_pool(o->seed);
    float *x = (float *)dev_alloc(elements * sizeof(float));
    float *y = (float *)dev_alloc(elements * sizeof(float));
    float *ml = (float *)dev_alloc((size_t)R * blockwise_chunks(N, BLOCKWISE_CHUNK) * 2 * sizeof(float));
    upload_scores(&pool, x, elements);
    if (o->save_dir) ch01_save_x(o, &pool);

    for (int k = 0; k < CH01_KERNELS; k++) {
        Launch a = {k, x, y, ml, R, N};
        KernelRun *run = &runs[k];

        dev_poison(y, elements * sizeof(float));
        run->time = time_launches(launch_timed, &a, o->warmup, o->reps, !o->no_flush);
        run->have_time = 1;

        if (!o->no_check) { /* sampled rows against float64; every element for NaN (poison left unwritten) */
            run->err = check_rows_device(&pool, y, R, N);
            const size_t bad = count_nonfinite_device(y, elements);
            if (bad > run->err.nonfinite) run->err.nonfinite = bad;
            run->err.rel = error_stats_rel(&run->err);
            run->tol = CH01_TOL;
            run->have_check = 1;
        }
        if (o->save_dir) ch01_save_y(o, k, y, NULL); /* what the timed runs left in y, as checked */

        if (!o->profile) {
            dev_poison(y, elements * sizeof(float));
            io_counter_reset();
            softmax_launch(k, 1, x, y, ml, R, N, BLOCKWISE_CHUNK);
            run->counted = io_counter_read();
            run->have_counted = 1;
        }
    }
    dev_free(x);
    dev_free(y);
    dev_free(ml);
    score_pool_free(&pool);
}
