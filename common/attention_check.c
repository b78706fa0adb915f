/* attention_check.c: the sampled float64 check of attention_check.h. Nothing here needs a chapter's kernels, so
 * common's tests cover it. */
#include "attention_check.h"

#include <math.h>
#include <stdlib.h>

#include "host_tensor.h"
#include "threads.h"

int attn_rows_to_check(int N, int *rows) {
    if (N <= ATTN_FULL_CHECK_N) {
        for (int r = 0; r < N; r++) rows[r] = r;
        return N;
    }
    int n = 0;
    for (int r = 0; r < 8; r++) rows[n++] = r;
    for (int x = 1; n < ATTN_CHECK_ROWS - 24; x++)
        rows[n++] = 8 + (int)((long long)x * (N - 32) / (ATTN_CHECK_ROWS - 32 + 1));
    for (int r = N - 24; r < N; r++) rows[n++] = r;
    return n;
}

typedef struct {
    const float *q, *k, *v;
    int N, d, causal;
    const int *rows;
    int nrows;
    double *o, *lse;
} ExpectedHead;

static void *expected_head(void *arg) {
    const ExpectedHead *j = arg;
    reference_attention_rows(j->q, j->k, j->v, j->N, j->d, j->causal, j->rows, j->nrows, j->o, j->lse);
    return NULL;
}

AttnExpected attn_expected(const Options *o, const float *Q, const float *K, const float *V) {
    AttnExpected e;
    e.N = o->N;
    e.d = o->d;
    e.nheads = sample_heads(o->B * o->H, ATTN_CHECK_HEADS, e.heads);
    e.rows = host_alloc(sizeof(int) * (size_t)(o->N < ATTN_CHECK_ROWS ? ATTN_CHECK_ROWS : o->N), "the check's rows");
    e.nrows = attn_rows_to_check(o->N, e.rows);
    const size_t per_head = (size_t)e.nrows;
    e.O = host_alloc(sizeof(double) * e.nheads * per_head * o->d, "the expected O");
    e.L = host_alloc(sizeof(double) * e.nheads * per_head, "the expected L");
    /* One thread per checked head: each writes its own slice of e.O and e.L, so the result is the same as one
     * pass; at N <= ATTN_FULL_CHECK_N a head is N^2 d float64 products, most of a run's host time (threads.h). */
    ExpectedHead job[ATTN_CHECK_HEADS];
    for (int x = 0; x < e.nheads; x++) {
        const size_t base = (size_t)e.heads[x] * o->N * o->d;
        const ExpectedHead j = {Q + base, K + base, V + base, o->N, o->d, o->causal, e.rows, e.nrows,
                                e.O + x * per_head * o->d, e.L + x * per_head};
        job[x] = j;
    }
    run_on_threads(expected_head, job, sizeof job[0], e.nheads);
    return e;
}

void attn_expected_free(AttnExpected *e) {
    free(e->rows), free(e->O), free(e->L);
    e->rows = NULL;
    e->O = e->L = NULL;
}

/* An element anywhere in out that is not finite fails the check, sampled or not. */
static void count_every_nonfinite(ErrorStats *err, const float *out, size_t n) {
    const size_t bad = count_nonfinite(out, n);
    if (bad > err->nonfinite) err->nonfinite = bad;
    err->rel = error_stats_rel(err);
}

void attn_compare(const AttnExpected *e, const Options *o, const float *O, const float *L, ErrorStats *err_O,
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

double attn_tolerance(const Options *o) { return 1e-5 * fmax(1.0, sqrt(o->N / 1024.0)); }

void attn_chapter_tolerances(const AttnChapter *c, const Options *o, const AttnHost *t, const AttnExpected *e,
                             double *tol_O, double *tol_L) {
    if (c->tolerances) {
        c->tolerances(o, t, e, tol_O, tol_L);
        return;
    }
    *tol_O = *tol_L = attn_tolerance(o);
}
