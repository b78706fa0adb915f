/* The bridge to chapter 02: one query row's attention over K/V blocks with the online rescaling of the output
 * accumulator equals reference_attention_head, for any block size Bc, with and without the causal mask. */
#include "ch01_test.h"

static float *random_matrix(int rows, int cols, Rng *rng) {
    float *m = (float *)malloc(sizeof(float) * (size_t)rows * cols);
    fill_normal(m, (size_t)rows * cols, rng, 1.0f);
    return m;
}

/* Every query row of one head through attention_row_online with each block size, against the float64 head. */
static void check_head(int N, int d, const int *blocks, int n_blocks, int causal, unsigned long long seed) {
    Rng rng = rng_seeded(seed);
    float *q = random_matrix(N, d, &rng), *k = random_matrix(N, d, &rng), *v = random_matrix(N, d, &rng);
    double *o_ref = (double *)malloc(sizeof(double) * (size_t)N * d), *lse_ref = (double *)malloc(sizeof(double) * N);
    float *o = (float *)malloc(sizeof(float) * (size_t)N * d);
    reference_attention_head(q, k, v, N, d, causal, o_ref, lse_ref);
    for (int b = 0; b < n_blocks; b++) {
        const int Bc = blocks[b];
        double max_lse_err = 0;
        for (int i = 0; i < N; i++) {
            const int keys = causal ? i + 1 : N; /* query i sees keys 0..i */
            const float lse = attention_row_online(q + (size_t)i * d, k, v, keys, d, Bc, o + (size_t)i * d);
            const double err = fabs(lse - lse_ref[i]) / fmax(1.0, fabs(lse_ref[i]));
            if (err > max_lse_err) max_lse_err = err;
        }
        const ErrorStats e = error_stats(o, o_ref, (size_t)N * d);
        cr_assert(error_ok(&e, CH01_TOL), "N=%d d=%d Bc=%d causal=%d: O rel err %.3e (max %.3e, %zu non-finite)", N, d,
                  Bc, causal, e.rel, e.max_abs, e.nonfinite);
        cr_assert(max_lse_err <= CH01_TOL, "N=%d d=%d Bc=%d causal=%d: lse rel err %.3e", N, d, Bc, causal,
                  max_lse_err);
    }
    free(q);
    free(k);
    free(v);
    free(o_ref);
    free(lse_ref);
    free(o);
}

Test(bridge, equals_reference_attention_for_any_block_size) {
    const int lengths[] = {1, 17, 33, 100, 1000};
    const int dims[] = {32, 64, 128};
    const int blocks[] = {1, 7, 32, 64, 1000};
    for (size_t a = 0; a < sizeof(lengths) / sizeof(lengths[0]); a++)
        for (size_t b = 0; b < sizeof(dims) / sizeof(dims[0]); b++)
            for (int causal = 0; causal <= 1; causal++)
                check_head(lengths[a], dims[b], blocks, sizeof(blocks) / sizeof(blocks[0]), causal, 77 + a * 10 + b);
}

/* The block size changes the order of the arithmetic only: Bc = 1 (pure online) and Bc = N (one block, the
 * ordinary softmax) agree within rounding. */
Test(bridge, block_size_changes_only_rounding) {
    const int N = 500, d = 64;
    Rng rng = rng_seeded(5);
    float *q = random_matrix(1, d, &rng), *k = random_matrix(N, d, &rng), *v = random_matrix(N, d, &rng);
    float o1[64], oN[64];
    const float lse1 = attention_row_online(q, k, v, N, d, 1, o1);
    const float lseN = attention_row_online(q, k, v, N, d, N, oN);
    for (int x = 0; x < d; x++)
        cr_assert(fabsf(o1[x] - oN[x]) <= 1e-5f * (1.f + fabsf(oN[x])), "o[%d]: Bc=1 %g vs Bc=N %g", x, o1[x], oN[x]);
    cr_assert(fabsf(lse1 - lseN) <= 1e-5f * fabsf(lseN), "lse: %g vs %g", lse1, lseN);
    free(q);
    free(k);
    free(v);
}

/* Large scores: scaling q by 1e3 makes scores of order 1e3..1e4; exp never overflows because every exponent
 * is s - m <= 0. */
Test(bridge, large_scores_stay_finite) {
    const int N = 200, d = 32;
    Rng rng = rng_seeded(9);
    float *q = random_matrix(N, d, &rng), *k = random_matrix(N, d, &rng), *v = random_matrix(N, d, &rng);
    for (int i = 0; i < N * d; i++) q[i] *= 1e3f;
    double *o_ref = (double *)malloc(sizeof(double) * (size_t)N * d);
    float *o = (float *)malloc(sizeof(float) * (size_t)N * d);
    reference_attention_head(q, k, v, N, d, 0, o_ref, NULL);
    for (int i = 0; i < N; i++) attention_row_online(q + (size_t)i * d, k, v, N, d, 16, o + (size_t)i * d);
    const ErrorStats e = error_stats(o, o_ref, (size_t)N * d);
    cr_assert(error_ok(&e, CH01_TOL), "rel err %.3e, %zu non-finite", e.rel, e.nonfinite);
    free(q);
    free(k);
    free(v);
    free(o_ref);
    free(o);
}
