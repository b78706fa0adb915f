/* reference.c: chapter 07's float64 reference of the gradients (ch07.h). Every sum in double, every exponential
 * exp(); the forward's rows are common/reference.c's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ch07.h"
#include "host_tensor.h"
#include "threads.h"

/* ---- pass 1: L and D of every row ---------------------------------------------------------------------------- */

typedef struct {
    const float *q, *k, *v, *dO;
    int N, d, causal, r0, r1;
    double *L, *D;
} StatsJob;

static void *stats_rows(void *arg) {
    const StatsJob *j = arg;
    double *o = host_alloc(sizeof(double) * (size_t)j->d, "the reference's O row");
    for (int i = j->r0; i < j->r1; i++) {
        reference_attention_rows(j->q, j->k, j->v, j->N, j->d, j->causal, &i, 1, o, &j->L[i]);
        double acc = 0.0;
        for (int c = 0; c < j->d; c++) acc += (double)j->dO[(size_t)i * j->d + c] * o[c];
        j->D[i] = acc;
    }
    free(o);
    return NULL;
}

void bwd_reference_stats(const float *q, const float *k, const float *v, const float *dO, int N, int d, int causal,
                         double *L, double *D, int threads) {
    if (threads < 1) threads = 1;
    if (threads > THREADS_MAX) threads = THREADS_MAX;
    if (threads > N) threads = N;
    StatsJob job[THREADS_MAX];
    /* Contiguous slices of rows, each thread its own rows of L and D: the same result as one pass. With the mask a
     * row i costs i + 1 keys, so the slices are cut at equal shares of N (N + 1) / 2 rather than of N. */
    for (int x = 0, r0 = 0; x < threads; x++) {
        int r1 = N;
        if (x < threads - 1)
            r1 = causal ? (int)floor(N * sqrt((double)(x + 1) / threads)) : (int)((long long)N * (x + 1) / threads);
        if (r1 < r0) r1 = r0;
        const StatsJob j = {q, k, v, dO, N, d, causal, r0, r1, L, D};
        job[x] = j;
        r0 = r1;
    }
    run_on_threads(stats_rows, job, sizeof job[0], threads);
}

/* ---- pass 2: the gradients of the listed rows ------------------------------------------------------------------ */

static double dot(const float *a, const float *b, int d) {
    double acc = 0.0;
    for (int c = 0; c < d; c++) acc += (double)a[c] * (double)b[c];
    return acc;
}

void bwd_reference_dq(const float *q, const float *k, const float *v, const float *dO, const double *L,
                      const double *D, int N, int d, int causal, const int *rows, int n, double *dq) {
    const double scale = 1.0 / sqrt((double)d);
    for (int x = 0; x < n; x++) {
        const int i = rows ? rows[x] : x, keys = causal ? i + 1 : N;
        double *out = dq + (size_t)x * d;
        memset(out, 0, sizeof(double) * d);
        for (int j = 0; j < keys; j++) {
            const double p = exp(scale * dot(q + (size_t)i * d, k + (size_t)j * d, d) - L[i]);
            const double ds = p * (dot(dO + (size_t)i * d, v + (size_t)j * d, d) - D[i]);
            for (int c = 0; c < d; c++) out[c] += ds * (double)k[(size_t)j * d + c];
        }
        for (int c = 0; c < d; c++) out[c] *= scale;
    }
}

void bwd_reference_dkv(const float *q, const float *k, const float *v, const float *dO, const double *L,
                       const double *D, int N, int d, int causal, const int *rows, int n, double *dk, double *dv) {
    const double scale = 1.0 / sqrt((double)d);
    for (int x = 0; x < n; x++) {
        const int j = rows ? rows[x] : x;
        double *gk = dk + (size_t)x * d, *gv = dv + (size_t)x * d;
        memset(gk, 0, sizeof(double) * d);
        memset(gv, 0, sizeof(double) * d);
        for (int i = causal ? j : 0; i < N; i++) { /* with the mask, key j is seen by the queries i >= j */
            const double p = exp(scale * dot(q + (size_t)i * d, k + (size_t)j * d, d) - L[i]);
            const double ds = p * (dot(dO + (size_t)i * d, v + (size_t)j * d, d) - D[i]);
            for (int c = 0; c < d; c++) {
                gv[c] += p * (double)dO[(size_t)i * d + c];
                gk[c] += ds * (double)q[(size_t)i * d + c];
            }
        }
        for (int c = 0; c < d; c++) gk[c] *= scale;
    }
}

double bwd_reference_loss(const float *q, const float *k, const float *v, const float *dO, int N, int d, int causal) {
    double *o = host_alloc(sizeof(double) * (size_t)N * d, "the reference's O");
    reference_attention_rows(q, k, v, N, d, causal, NULL, N, o, NULL);
    double loss = 0.0;
    for (size_t x = 0; x < (size_t)N * d; x++) loss += o[x] * (double)dO[x];
    free(o);
    return loss;
}
