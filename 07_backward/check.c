/* check.c: the sampled float64 check of chapter 07's gradients (ch07.h): the heads and rows the forward chapters'
 * check picks (common/attention_check.h), the float64 gradients of those rows (reference.c), and the comparison. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "attention_check.h"
#include "ch07.h"
#include "fma_loops.h"
#include "host_tensor.h"
#include "threads.h"

typedef struct {
    const Options *o;
    const BwdHost *t;
    BwdExpected *e;
    int x;       /* the checked head's index in e */
    int threads; /* pass 1's threads for this head */
} ExpectedJob;

static void *expected_head(void *arg) {
    const ExpectedJob *j = arg;
    const int N = j->o->N, d = j->o->d, causal = j->o->causal;
    const size_t base = (size_t)j->e->heads[j->x] * N * d, slice = (size_t)j->x * j->e->nrows * d;
    const float *q = j->t->Q + base, *k = j->t->K + base, *v = j->t->V + base, *dO = j->t->dO + base;
    double *L = host_alloc(sizeof(double) * N, "the reference's L"), *D = host_alloc(sizeof(double) * N, "its D");
    bwd_reference_stats(q, k, v, dO, N, d, causal, L, D, j->threads);
    bwd_reference_dq(q, k, v, dO, L, D, N, d, causal, j->e->rows, j->e->nrows, j->e->dQ + slice);
    bwd_reference_dkv(q, k, v, dO, L, D, N, d, causal, j->e->rows, j->e->nrows, j->e->dK + slice, j->e->dV + slice);
    free(L), free(D);
    return NULL;
}

BwdExpected bwd_expected(const Options *o, const BwdHost *t) {
    BwdExpected e;
    e.N = o->N;
    e.d = o->d;
    e.nheads = sample_heads(o->B * o->H, ATTN_CHECK_HEADS, e.heads);
    e.rows = host_alloc(sizeof(int) * (size_t)(o->N < ATTN_CHECK_ROWS ? ATTN_CHECK_ROWS : o->N), "the check's rows");
    e.nrows = attn_rows_to_check(o->N, e.rows);
    const size_t n = (size_t)e.nheads * e.nrows * o->d;
    e.dQ = host_alloc(sizeof(double) * n, "the expected dQ");
    e.dK = host_alloc(sizeof(double) * n, "the expected dK");
    e.dV = host_alloc(sizeof(double) * n, "the expected dV");
    /* One thread per checked head (run_on_threads), each writing its own slice of e; pass 1 of a head (every row:
     * N^2 d float64 products, most of the check's time at large N) on its share of the CPUs. */
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const int threads = cpus > e.nheads ? (int)(cpus / e.nheads) : 1;
    ExpectedJob job[ATTN_CHECK_HEADS];
    for (int x = 0; x < e.nheads; x++) {
        const ExpectedJob j = {o, t, &e, x, threads};
        job[x] = j;
    }
    run_on_threads(expected_head, job, sizeof(job[0]), e.nheads);
    return e;
}

void bwd_expected_free(BwdExpected *e) {
    free(e->rows), free(e->dQ), free(e->dK), free(e->dV);
    e->rows = NULL, e->dQ = e->dK = e->dV = NULL;
}

static void compare_one(const BwdExpected *e, const Options *o, const float *g, const double *expected, ErrorStats *s) {
    *s = error_stats_empty();
    for (int x = 0; x < e->nheads; x++)
        for (int r = 0; r < e->nrows; r++) {
            const size_t at = ((size_t)e->heads[x] * o->N + e->rows[r]) * o->d;
            error_stats_merge(s, g + at, expected + ((size_t)x * e->nrows + r) * o->d, (size_t)o->d);
        }
    /* Every element, sampled or not: one left unwritten is still NaN from the poison. */
    s->nonfinite = count_nonfinite(g, (size_t)o->B * o->H * o->N * o->d);
    if (s->nonfinite) s->rel = NAN;
}

void bwd_compare(const BwdExpected *e, const Options *o, const BwdHost *t, ErrorStats *dq, ErrorStats *dk,
                 ErrorStats *dv) {
    compare_one(e, o, t->dQ, e->dQ, dq);
    compare_one(e, o, t->dK, e->dK, dk);
    compare_one(e, o, t->dV, e->dV, dv);
}

/* fp32 gradients are sums of up to N products with cancellation (each row of dS sums to zero). The CPU versions' worst
 * relative error over dQ, dK, dV was 5e-7 to 1.1e-6 at N = 1024 to 4096 (README: "Correctness"); the forward
 * chapters' rule, 1e-5 growing as sqrt(N) past 1024 tokens, leaves ten times that. */
/* fp16 and bf16 (step 3): chapter 05's rule (05_tensor_cores/cpu.c), its bounds and absolute term. */
#define TC_TOL_BOUND_FP16 1e-2
#define TC_TOL_BOUND_BF16 5e-2
#define TC_TOL_ABS 1e-4

double bwd_tolerance(const Options *o, const BwdHost *t, const BwdExpected *e) {
    if (o->dtype == DTYPE_FP32) return 1e-5 * fmax(1.0, sqrt(o->N / 1024.0));
    ErrorStats g[3];
    tc_plain_grads(o, t, e, &g[0], &g[1], &g[2]);
    double worst = 0.0;
    for (int x = 0; x < 3; x++) worst = fmax(worst, error_stats_rel(&g[x]));
    return fmin(o->dtype == DTYPE_BF16 ? TC_TOL_BOUND_BF16 : TC_TOL_BOUND_FP16, 2 * worst + TC_TOL_ABS);
}

/* P_ij and dS_ij of query i and key j, as the kernel rounds them (one head's arrays). */
static void plain_scores(const Options *o, const float *Q, const float *K, const float *V, const float *dO,
                         const float *L, const float *D, int i, int j, float *p, float *ds) {
    const int d = o->d;
    float s, dp;
    fma_dots(Q + (size_t)i * d, K + (size_t)j * d, dO + (size_t)i * d, V + (size_t)j * d, d, &s, &dp);
    tc_scores(s, dp, L[i], D[i], LOG2E / sqrtf((float)d), o->dtype, p, ds);
}

/* One checked head of tc_plain_grads: D of every row, then dQ of the sampled query rows and dK, dV of the sampled
 * key rows, each a sum over the other side's rows that the mask lets through. */
static void plain_head(const Options *o, const BwdHost *t, const BwdExpected *e, int x, float *dq, float *dk,
                       float *dv, float *D) {
    const int N = o->N, d = o->d;
    const size_t base = (size_t)e->heads[x] * N * d;
    const float *Q = t->Q + base, *K = t->K + base, *V = t->V + base, *dO = t->dO + base, *O = t->O + base;
    const float *L = t->L + (size_t)e->heads[x] * N;
    const float scale = 1.f / sqrtf((float)d);
    for (int i = 0; i < N; i++) {
        float acc = 0.f;
        for (int c = 0; c < d; c++) acc = fmaf(dO[(size_t)i * d + c], O[(size_t)i * d + c], acc);
        D[i] = acc;
    }
    for (int y = 0; y < e->nrows; y++) {
        const int r = e->rows[y];
        float *q = dq + (size_t)y * d, *k = dk + (size_t)y * d, *v = dv + (size_t)y * d;
        for (int c = 0; c < d; c++) q[c] = k[c] = v[c] = 0.f;
        for (int j = 0; j < (o->causal ? r + 1 : N); j++) { /* dQ_r = scale sum_j dS_rj K_j */
            float p, ds;
            plain_scores(o, Q, K, V, dO, L, D, r, j, &p, &ds);
            fma_row(q, ds, K + (size_t)j * d, d);
        }
        for (int i = o->causal ? r : 0; i < N; i++) { /* dK_r = scale sum_i dS_ir Q_i, dV_r = sum_i P_ir dO_i */
            float p, ds;
            plain_scores(o, Q, K, V, dO, L, D, i, r, &p, &ds);
            fma_row(k, ds, Q + (size_t)i * d, d);
            fma_row(v, p, dO + (size_t)i * d, d);
        }
        for (int c = 0; c < d; c++) {
            q[c] *= scale;
            k[c] = stored_value(k[c] * scale, o->dtype);
            v[c] = stored_value(v[c], o->dtype);
        }
    }
}

typedef struct {
    const Options *o;
    const BwdHost *t;
    const BwdExpected *e;
    int x;                   /* the checked head's index in e          */
    float *dq, *dk, *dv, *D; /* its plain gradients ([nrows][d]) and D */
} PlainJob;

static void *plain_job(void *arg) {
    const PlainJob *j = arg;
    plain_head(j->o, j->t, j->e, j->x, j->dq, j->dk, j->dv, j->D);
    return NULL;
}

void tc_plain_grads(const Options *o, const BwdHost *t, const BwdExpected *e, ErrorStats *dq, ErrorStats *dk,
                    ErrorStats *dv) {
    const size_t n = (size_t)e->nrows * o->d, per = 3 * n + (size_t)o->N; /* a head's dQ, dK, dV rows and D */
    float *buf = host_alloc(sizeof(float) * per * e->nheads, "the plain gradients");
    /* One thread per checked head (run_on_threads), each into its own slice of buf; the errors are merged afterwards
     * in head order: the sums one thread makes. */
    PlainJob job[ATTN_CHECK_HEADS];
    for (int x = 0; x < e->nheads; x++) {
        float *h = buf + (size_t)x * per;
        const PlainJob j = {o, t, e, x, h, h + n, h + 2 * n, h + 3 * n};
        job[x] = j;
    }
    run_on_threads(plain_job, job, sizeof(job[0]), e->nheads);
    *dq = error_stats_empty(), *dk = error_stats_empty(), *dv = error_stats_empty();
    for (int x = 0; x < e->nheads; x++) {
        const size_t at = (size_t)x * n;
        error_stats_merge(dq, job[x].dq, e->dQ + at, n);
        error_stats_merge(dk, job[x].dk, e->dK + at, n);
        error_stats_merge(dv, job[x].dv, e->dV + at, n);
    }
    free(buf);
}

void bwd_check_into(const Options *o, const BwdHost *t, KernelRun *run) {
    BwdExpected e = bwd_expected(o, t);
    ErrorStats g[3];
    bwd_compare(&e, o, t, &g[0], &g[1], &g[2]);
    /* One check per report row: the gradient with the largest relative error (NaN first), its max error the
     * largest of the three. */
    int worst = 0;
    for (int x = 1; x < 3; x++) {
        const double a = error_stats_rel(&g[worst]), b = error_stats_rel(&g[x]);
        if (!isnan(a) && (isnan(b) || b > a)) worst = x;
    }
    run->err = g[worst];
    run->err.rel = error_stats_rel(&g[worst]);
    for (int x = 0; x < 3; x++) {
        if (g[x].max_abs > run->err.max_abs) run->err.max_abs = g[x].max_abs;
        if (x != worst) run->err.nonfinite += g[x].nonfinite;
    }
    run->tol = bwd_tolerance(o, t, &e);
    run->have_check = 1;
    bwd_expected_free(&e);
}
