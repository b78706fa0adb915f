/* attention_check.c: the inputs, the host tensors and the sampled float64 check that every FlashAttention
 * chapter shares (attention.h). Nothing here needs a chapter's kernels, so common's tests cover it. */
#include "attention.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "count.h"
#include "host_tensor.h"

int attn_validate(const AttnChapter *c, const Options *o, const DeviceInfo *dev, char *msg, size_t len,
                  const char *chapter_id) {
    const AttnTiles *t = &c->tiles;
    if (!head_dim_supported(o->d)) {
        snprintf(msg, len, "--dim %d is not supported: chapter %s has kernels for d = 32, 64 and 128", o->d,
                 chapter_id);
        return 2;
    }
    if (!t->br_supported(o->Br)) {
        snprintf(msg, len, "--br %d is not supported: Br must be one of %s", o->Br, t->br_sizes);
        return 2;
    }
    if (!t->bc_supported(o->Bc)) {
        snprintf(msg, len, "--bc %d is not supported: Bc must be one of %s", o->Bc, t->bc_sizes);
        return 2;
    }
    if (dev && dev->present) {
        const size_t need = t->smem_bytes(o->Br, o->Bc, o->d);
        if (need > (size_t)dev->smem_per_block_optin) {
            char a[32], b[32];
            snprintf(msg, len,
                     "--br %d --bc %d --dim %d needs %s B of shared memory per block (%s), more than the %s B per "
                     "block that %s allows; use smaller tiles",
                     o->Br, o->Bc, o->d, fmt_bytes(need, a, sizeof(a)), t->smem_formula,
                     fmt_bytes((unsigned long long)dev->smem_per_block_optin, b, sizeof(b)), dev->name);
            return 2;
        }
    }
    return 0;
}

void attn_inputs(const Options *o, float *Q, float *K, float *V) {
    const size_t n = (size_t)o->B * o->H * o->N * o->d;
    Rng r = rng_seeded(o->seed);
    fill_uniform(Q, n, &r, -2.f, 2.f);
    fill_uniform(K, n, &r, -2.f, 2.f);
    fill_uniform(V, n, &r, -1.f, 1.f);
    round_to_storage(Q, n, o->dtype);
    round_to_storage(K, n, o->dtype);
    round_to_storage(V, n, o->dtype);
}

AttnHost attn_host_make(const AttnChapter *c, const Options *o) {
    AttnHost t;
    memset(&t, 0, sizeof(t));
    t.rows = (size_t)o->B * o->H * o->N;
    t.n = t.rows * o->d;
    t.Q = host_alloc(sizeof(float) * t.n, "Q");
    t.K = host_alloc(sizeof(float) * t.n, "K");
    t.V = host_alloc(sizeof(float) * t.n, "V");
    t.O = host_alloc(sizeof(float) * t.n, "O");
    t.L = host_alloc(sizeof(float) * t.rows, "L");
    for (int x = 0; x < c->nextra; x++) {
        if (!c->extra[x].output) continue;
        t.extra_n[x] = (size_t)c->extra[x].elements(o->B, o->H, o->N, o->d);
        t.extra[x] = host_alloc(sizeof(float) * t.extra_n[x], c->extra[x].name);
    }
    attn_inputs(o, t.Q, t.K, t.V);
    attn_host_poison(&t);
    return t;
}

void attn_host_poison(AttnHost *t) {
    memset(t->O, 0xFF, sizeof(float) * t->n);
    memset(t->L, 0xFF, sizeof(float) * t->rows);
    for (int x = 0; x < ATTN_EXTRA_MAX; x++)
        if (t->extra[x]) memset(t->extra[x], 0xFF, sizeof(float) * t->extra_n[x]);
}

void attn_host_free(AttnHost *t) {
    free(t->Q), free(t->K), free(t->V), free(t->O), free(t->L);
    for (int x = 0; x < ATTN_EXTRA_MAX; x++) free(t->extra[x]);
    memset(t, 0, sizeof(*t));
}

void attn_host_finish(const AttnChapter *c, AttnHost *t) {
    if (c->L_from_outputs) c->L_from_outputs(t);
}

/* The bytes of the chapter's buffers: on the device, all of them; on the host, the outputs (as fp32). */
static unsigned long long extra_bytes(const AttnChapter *c, const Options *o, int host) {
    unsigned long long sum = 0;
    for (int x = 0; x < c->nextra; x++) {
        if (host && !c->extra[x].output) continue;
        const unsigned long long e = host ? sizeof(float) : dtype_size(c->extra[x].type);
        sum = count_add(sum, count_mul(e, c->extra[x].elements(o->B, o->H, o->N, o->d)));
    }
    return sum;
}

size_t attn_device_bytes(const AttnChapter *c, const Options *o) { /* Q, K, V, O; L; the chapter's buffers */
    typedef unsigned long long u64;
    const u64 rows = count_mul3((u64)o->B, (u64)o->H, (u64)o->N);
    const u64 qkvo = count_mul(dtype_size(o->dtype), count_mul(rows, 4 * (u64)o->d));
    const u64 L = c->L_from_outputs ? 0 : count_mul(sizeof(float), rows);
    return count_add(count_add(qkvo, L), extra_bytes(c, o, 0));
}

void attn_shrink_for_cpu(Options *o, unsigned long long (*flops)(const Options *o)) {
    const double cpu_run_flops = 1.2e9;
    if ((double)flops(o) <= cpu_run_flops) return;
    o->B = 1;
    if (o->H > 4) o->H = 4;
    const int N = o->N, tile = o->Br > o->Bc ? o->Br : o->Bc; /* powers of two: their lcm */
    for (long long target = N; (double)flops(o) > cpu_run_flops && target > 64; target /= 2)
        o->N = shrink_seq_keeping_tiles(N, target, tile);
}

long long attn_kv_blocks(int N, int Br, int Bc, int causal, long long i) {
    const long long Tc = ceil_div(N, Bc);
    if (!causal) return Tc;
    const long long last_row = (i + 1) * Br < N ? (i + 1) * Br - 1 : N - 1;
    return last_row / Bc + 1; /* <= Tc, since last_row <= N - 1 */
}

unsigned long long attn_keys_loaded(int N, int Br, int Bc, int causal) {
    const long long Tr = ceil_div(N, Br);
    if (!causal) return (unsigned long long)Tr * N;
    unsigned long long keys = 0;
    for (long long i = 0; i < Tr; i++) {
        const long long rows = Bc * attn_kv_blocks(N, Br, Bc, 1, i); /* whole blocks ...        */
        keys += (unsigned long long)(rows < N ? rows : N);          /* ... but the last is ragged */
    }
    return keys;
}

size_t attn_host_bytes(const AttnChapter *c, const Options *o) {
    typedef unsigned long long u64;
    const u64 rows = count_mul3((u64)o->B, (u64)o->H, (u64)o->N);
    const u64 tensors = count_add(count_mul(sizeof(float), count_mul(rows, 4 * (u64)o->d + 1)), /* Q, K, V, O; L */
                                  extra_bytes(c, o, 1));
    if (o->no_check) return tensors;
    const u64 heads = count_mul((u64)o->B, (u64)o->H);
    const u64 nheads = heads < ATTN_CHECK_HEADS ? heads : ATTN_CHECK_HEADS;
    const u64 nrows = o->N <= ATTN_FULL_CHECK_N ? (u64)o->N : ATTN_CHECK_ROWS;
    const u64 check = sizeof(int) * ((u64)o->N < ATTN_CHECK_ROWS ? ATTN_CHECK_ROWS : (u64)o->N) +
                      sizeof(double) * nheads * nrows * ((u64)o->d + 1);
    return count_add(tensors, check);
}

/* ---- the check ------------------------------------------------------------------------------------------- */

static int rows_to_check(int N, int *rows) {
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
    e.nrows = rows_to_check(o->N, e.rows);
    const size_t per_head = (size_t)e.nrows;
    e.O = host_alloc(sizeof(double) * e.nheads * per_head * o->d, "the expected O");
    e.L = host_alloc(sizeof(double) * e.nheads * per_head, "the expected L");
    /* One thread per checked head: each writes its own slice of e.O and e.L, so the result is the same as one
     * pass; at N <= ATTN_FULL_CHECK_N a head is N^2 d float64 products, most of a run's host time. A thread that
     * cannot be started leaves its head to this one. */
    ExpectedHead job[ATTN_CHECK_HEADS];
    pthread_t tid[ATTN_CHECK_HEADS];
    int started[ATTN_CHECK_HEADS];
    for (int x = 0; x < e.nheads; x++) {
        const size_t base = (size_t)e.heads[x] * o->N * o->d;
        const ExpectedHead j = {Q + base, K + base, V + base, o->N, o->d, o->causal, e.rows, e.nrows,
                                e.O + x * per_head * o->d, e.L + x * per_head};
        job[x] = j;
        started[x] = x > 0 && pthread_create(&tid[x], NULL, expected_head, &job[x]) == 0;
    }
    if (e.nheads > 0) expected_head(&job[0]);
    for (int x = 1; x < e.nheads; x++) {
        if (started[x]) pthread_join(tid[x], NULL);
        else expected_head(&job[x]);
    }
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
