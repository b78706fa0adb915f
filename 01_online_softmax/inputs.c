/* inputs.c: the scores every run softmaxes, and the checks of the outputs against the float64 reference. */
#include <stdio.h>
#include <stdlib.h>

#include "ch01.h"
#include "host_tensor.h"

ScorePool score_pool(unsigned long long seed) {
    ScorePool p;
    p.v = (float *)host_alloc(sizeof(float) * SCORE_POOL_SIZE, "the score pool");
    Rng rng = rng_seeded(seed);
    fill_normal(p.v, SCORE_POOL_SIZE, &rng, 1.0f); /* scale * q.k for unit-variance q and k */
    return p;
}

void score_pool_free(ScorePool *p) {
    free(p->v);
    p->v = NULL;
}

void score_pool_fill(const ScorePool *p, size_t first, size_t count, float *dst) {
    size_t at = first % SCORE_POOL_SIZE;
    while (count > 0) {
        const size_t run = SCORE_POOL_SIZE - at < count ? SCORE_POOL_SIZE - at : count;
        for (size_t i = 0; i < run; i++) dst[i] = p->v[at + i];
        dst += run;
        count -= run;
        at = 0;
    }
}

int check_row_sample(long long R, int N, int *idx) {
    long long want = CHECK_ELEMENTS / N;
    if (want < 2) want = 2;
    if (want > R) want = R;
    return sample_heads((int)R, (int)want, idx);
}

/* Rows of y, fetched by `row` (host copy or device download), against reference_softmax_rows. */
static ErrorStats check_rows(const ScorePool *p, long long R, int N,
                             const float *(*row)(const void *src, long long r, int N, float *buf), const void *src) {
    const int max_rows = (int)(R < CHECK_ELEMENTS ? R : CHECK_ELEMENTS);
    int *idx = (int *)host_alloc(sizeof(int) * (size_t)max_rows, "the checked rows");
    const int n = check_row_sample(R, N, idx);
    float *x_row = (float *)host_alloc(sizeof(float) * (size_t)N, "a row of x");
    float *y_buf = (float *)host_alloc(sizeof(float) * (size_t)N, "a row of y");
    double *s = (double *)host_alloc(sizeof(double) * (size_t)N, "a row of float64 scores");
    double *ref = (double *)host_alloc(sizeof(double) * (size_t)N, "a reference row");
    ErrorStats e = error_stats_empty();
    for (int i = 0; i < n; i++) {
        const long long r = idx[i];
        score_pool_fill(p, (size_t)r * N, (size_t)N, x_row);
        for (int j = 0; j < N; j++) s[j] = x_row[j];
        reference_softmax_rows(s, 1, N, ref);
        error_stats_merge(&e, row(src, r, N, y_buf), ref, (size_t)N);
    }
    free(idx);
    free(x_row);
    free(y_buf);
    free(s);
    free(ref);
    return e;
}

static const float *host_row(const void *src, long long r, int N, float *buf) {
    (void)buf;
    return (const float *)src + (size_t)r * N;
}

static const float *device_row(const void *src, long long r, int N, float *buf) {
    dev_download(buf, (const float *)src + (size_t)r * N, (size_t)N, DTYPE_FP32);
    return buf;
}

ErrorStats check_rows_host(const ScorePool *p, const float *y, long long R, int N) {
    return check_rows(p, R, N, host_row, y);
}

ErrorStats check_rows_device(const ScorePool *p, const float *y_dev, long long R, int N) {
    return check_rows(p, R, N, device_row, y_dev);
}

size_t count_nonfinite_device(const float *y_dev, size_t n) {
    const size_t chunk = (size_t)1 << 24;
    float *buf = (float *)host_alloc(sizeof(float) * (n < chunk ? n : chunk), "the download buffer");
    size_t bad = 0;
    for (size_t at = 0; at < n; at += chunk) {
        const size_t m = n - at < chunk ? n - at : chunk;
        dev_download(buf, y_dev + at, m, DTYPE_FP32);
        bad += count_nonfinite(buf, m);
    }
    free(buf);
    return bad;
}
