/* check.c: O and L against the float64 reference (ch03.h). */
#include "ch03.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "host_tensor.h"

static void *host_alloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "error: out of host memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}

void reference_rows(const float *q, const float *k, const float *v, int N, int d, int causal, const int *rows,
                    int n, double *o, double *lse) {
    const double scale = 1.0 / sqrt((double)d);
    double *s = (double *)host_alloc(sizeof(double) * (size_t)N);
    for (int x = 0; x < n; x++) {
        const int i = rows[x], keys = causal ? i + 1 : N;
        double m = -INFINITY;
        for (int j = 0; j < keys; j++) {
            double acc = 0.0;
            for (int c = 0; c < d; c++) acc += (double)q[(size_t)i * d + c] * (double)k[(size_t)j * d + c];
            s[j] = scale * acc;
            if (s[j] > m) m = s[j];
        }
        double l = 0.0;
        for (int j = 0; j < keys; j++) l += (s[j] = exp(s[j] - m));
        double *out = o + (size_t)x * d;
        for (int c = 0; c < d; c++) out[c] = 0.0;
        for (int j = 0; j < keys; j++)
            for (int c = 0; c < d; c++) out[c] += s[j] * (double)v[(size_t)j * d + c];
        for (int c = 0; c < d; c++) out[c] /= l;
        lse[x] = m + log(l);
    }
    free(s);
}

/* All rows up to FULL_CHECK_N; above, the first 8 (the first query block, which sees fewest keys under the
 * causal mask), the last 24 (the ragged last blocks) and 32 spread between. */
static int rows_to_check(int N, int *rows) {
    if (N <= FULL_CHECK_N) {
        for (int r = 0; r < N; r++) rows[r] = r;
        return N;
    }
    int n = 0;
    for (int r = 0; r < 8; r++) rows[n++] = r;
    for (int x = 1; n < CHECK_ROWS - 24; x++) rows[n++] = 8 + (int)((long long)x * (N - 32) / (CHECK_ROWS - 32 + 1));
    for (int r = N - 24; r < N; r++) rows[n++] = r;
    return n;
}

Expected expected_make(const Options *o, const float *Q, const float *K, const float *V) {
    Expected e;
    e.N = o->N;
    e.d = o->d;
    e.nheads = sample_heads(o->B * o->H, CHECK_HEADS, e.heads);
    e.rows = (int *)host_alloc(sizeof(int) * (size_t)(o->N < CHECK_ROWS ? CHECK_ROWS : o->N));
    e.nrows = rows_to_check(o->N, e.rows);
    const size_t per_head = (size_t)e.nrows;
    e.O = (double *)host_alloc(sizeof(double) * e.nheads * per_head * o->d);
    e.L = (double *)host_alloc(sizeof(double) * e.nheads * per_head);
    for (int x = 0; x < e.nheads; x++) {
        const size_t base = (size_t)e.heads[x] * o->N * o->d;
        const float *q = Q + base, *k = K + base, *v = V + base;
        double *O = e.O + x * per_head * o->d, *L = e.L + x * per_head;
        if (e.nrows == o->N) reference_attention_head(q, k, v, o->N, o->d, o->causal, O, L);
        else reference_rows(q, k, v, o->N, o->d, o->causal, e.rows, e.nrows, O, L);
    }
    return e;
}

void expected_free(Expected *e) {
    free(e->rows);
    free(e->O);
    free(e->L);
    e->rows = NULL;
    e->O = e->L = NULL;
}

/* An element anywhere in out that is not finite fails the check, sampled or not. */
static void count_every_nonfinite(ErrorStats *err, const float *out, size_t n) {
    const size_t bad = count_nonfinite(out, n);
    if (bad > err->nonfinite) err->nonfinite = bad;
    err->rel = error_stats_rel(err);
}

void expected_compare(const Expected *e, const Options *o, const float *O, const float *L, ErrorStats *err_O,
                      ErrorStats *err_L) {
    *err_O = error_stats_empty();
    *err_L = error_stats_empty();
    for (int x = 0; x < e->nheads; x++)
        for (int y = 0; y < e->nrows; y++) {
            const size_t row = (size_t)e->heads[x] * e->N + e->rows[y], want = (size_t)x * e->nrows + y;
            error_stats_merge(err_O, O + row * e->d, e->O + want * e->d, (size_t)e->d);
            error_stats_merge(err_L, L + row, e->L + want, 1);
        }
    const size_t rows = (size_t)o->B * o->H * o->N;
    count_every_nonfinite(err_O, O, rows * o->d);
    count_every_nonfinite(err_L, L, rows);
}

ErrorStats worse_of(ErrorStats a, ErrorStats b) {
    const double ra = error_stats_rel(&a), rb = error_stats_rel(&b);
    ErrorStats w = isnan(ra) || (!isnan(rb) && ra >= rb) ? a : b;
    w.nonfinite = a.nonfinite + b.nonfinite;
    w.n = a.n + b.n;
    w.max_abs = fmax(a.max_abs, b.max_abs);
    w.rel = error_stats_rel(&w);
    return w;
}

double flash_v2_tolerance(const Options *o) { return 1e-5 * fmax(1.0, sqrt(o->N / 1024.0)); }
