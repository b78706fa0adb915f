/* reference.c: float64 attention on the CPU and the error measures of every check. */
#include "reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "host_tensor.h"

void reference_scores_head(const float *q, const float *k, int N, int d, int causal, double *s) {
    const double scale = 1.0 / sqrt((double)d);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            if (causal && j > i) {
                s[(size_t)i * N + j] = -INFINITY;
                continue;
            }
            double acc = 0.0;
            for (int x = 0; x < d; x++) acc += (double)q[(size_t)i * d + x] * (double)k[(size_t)j * d + x];
            s[(size_t)i * N + j] = scale * acc;
        }
}

void reference_softmax_rows(const double *s, long long rows, int cols, double *p) {
    for (long long r = 0; r < rows; r++) {
        const double *row = s + (size_t)r * cols;
        double *out = p + (size_t)r * cols;
        double m = -INFINITY;
        for (int j = 0; j < cols; j++) m = row[j] > m ? row[j] : m;
        if (m == -INFINITY) { /* every entry masked: no probability mass anywhere */
            memset(out, 0, sizeof(double) * cols);
            continue;
        }
        double l = 0.0;
        for (int j = 0; j < cols; j++) l += (out[j] = exp(row[j] - m));
        for (int j = 0; j < cols; j++) out[j] /= l;
    }
}

void reference_attention_rows(const float *q, const float *k, const float *v, int N, int d, int causal,
                              const int *rows, int n, double *o, double *lse) {
    const double scale = 1.0 / sqrt((double)d);
    double *s = (double *)host_alloc(sizeof(double) * (size_t)N, "the reference's score row");
    for (int x = 0; x < n; x++) {
        const int i = rows ? rows[x] : x, keys = causal ? i + 1 : N;
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
        if (lse) lse[x] = m + log(l);
    }
    free(s);
}

void reference_attention_head(const float *q, const float *k, const float *v, int N, int d, int causal,
                              double *o, double *lse) {
    reference_attention_rows(q, k, v, N, d, causal, NULL, N, o, lse);
}

ErrorStats error_stats_empty(void) {
    ErrorStats e;
    memset(&e, 0, sizeof(e));
    return e;
}

double error_stats_rel(const ErrorStats *e) {
    if (e->nonfinite) return NAN;
    return e->sum_ref2 > 0 ? sqrt(e->sum_diff2 / e->sum_ref2) : sqrt(e->sum_diff2);
}

void error_stats_merge(ErrorStats *e, const float *out, const double *ref, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(out[i])) {
            e->nonfinite++;
            continue;
        }
        double diff = (double)out[i] - ref[i];
        e->sum_diff2 += diff * diff;
        e->sum_ref2 += ref[i] * ref[i];
        if (fabs(diff) > e->max_abs) e->max_abs = fabs(diff);
    }
    e->n += n;
    e->rel = error_stats_rel(e);
}

ErrorStats error_stats(const float *out, const double *ref, size_t n) {
    ErrorStats e = error_stats_empty();
    error_stats_merge(&e, out, ref, n);
    return e;
}

int error_ok(const ErrorStats *e, double tol) {
    const double rel = error_stats_rel(e);
    return e->n > 0 && e->nonfinite == 0 && !isnan(rel) && rel <= tol;
}

int sample_heads(int count, int max, int *idx) {
    if (count <= max) {
        for (int i = 0; i < count; i++) idx[i] = i;
        return count;
    }
    if (max <= 1) {
        idx[0] = 0;
        return 1;
    }
    /* first, last, and evenly spaced between: distinct, increasing indices */
    for (int i = 0; i < max; i++) idx[i] = (int)((long long)i * (count - 1) / (max - 1));
    return max;
}
