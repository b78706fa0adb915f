/* The check every FlashAttention chapter shares (common/attention_check.c): rows of the float64 reference,
 * the sampled heads and rows, a NaN anywhere failing, the worse of two errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../support.h"
#include "attention.h"

static const AttnChapter WRITES_L = {.nkernels = 1};

Test(check, reference_rows_in_any_order_equal_reference_attention_head) {
    for (int causal = 0; causal < 2; causal++) {
        const int N = 37, d = 32;
        Options o = shape_options(1, 1, N, d);
        o.causal = causal;
        AttnHost t = attn_host_make(&WRITES_L, &o);
        double *o_head = malloc(sizeof(double) * N * d), *lse_head = malloc(sizeof(double) * N);
        double *o_rows = malloc(sizeof(double) * N * d), *lse_rows = malloc(sizeof(double) * N);
        int rows[37];
        for (int r = 0; r < N; r++) rows[r] = N - 1 - r;
        reference_attention_head(t.Q, t.K, t.V, N, d, causal, o_head, lse_head);
        reference_attention_rows(t.Q, t.K, t.V, N, d, causal, rows, N, o_rows, lse_rows);
        for (int x = 0; x < N; x++) {
            const int r = rows[x];
            cr_assert(fabs(lse_rows[x] - lse_head[r]) < 1e-12, "lse of row %d", r);
            for (int c = 0; c < d; c++)
                cr_assert(fabs(o_rows[(size_t)x * d + c] - o_head[(size_t)r * d + c]) < 1e-12, "O[%d][%d]", r, c);
        }
        /* causal: row 0 sees key 0 alone, so its output is V's row 0 and its L is its one scaled score */
        if (causal) {
            for (int c = 0; c < d; c++) cr_assert(fabs(o_head[c] - t.V[c]) < 1e-12);
            double s = 0;
            for (int c = 0; c < d; c++) s += (double)t.Q[c] * t.K[c];
            cr_assert(fabs(lse_head[0] - s / sqrt((double)d)) < 1e-12);
        }
        free(o_head), free(lse_head), free(o_rows), free(lse_rows);
        attn_host_free(&t);
    }
}

Test(check, sampled_rows_cover_both_ends_once) {
    Options o = shape_options(1, 1, 5000, 32);
    o.causal = 1;
    AttnHost t = attn_host_make(&WRITES_L, &o);
    AttnExpected e = attn_expected(&o, t.Q, t.K, t.V);
    cr_assert_eq(e.nrows, ATTN_CHECK_ROWS);
    for (int r = 0; r < 8; r++) cr_assert_eq(e.rows[r], r, "the first rows");
    for (int r = 0; r < 24; r++) cr_assert_eq(e.rows[ATTN_CHECK_ROWS - 24 + r], 5000 - 24 + r, "the last rows");
    for (int r = 1; r < e.nrows; r++) cr_assert_gt(e.rows[r], e.rows[r - 1], "increasing, hence distinct");
    attn_expected_free(&e);
    attn_host_free(&t);
}

Test(check, sampled_heads_are_first_last_and_between) {
    Options o = shape_options(2, 5, 3, 32);
    AttnHost t = attn_host_make(&WRITES_L, &o);
    AttnExpected e = attn_expected(&o, t.Q, t.K, t.V);
    cr_assert_eq(e.nheads, ATTN_CHECK_HEADS);
    cr_assert_eq(e.heads[0], 0);
    cr_assert_eq(e.heads[e.nheads - 1], 9);
    cr_assert_eq(e.nrows, 3, "N <= ATTN_FULL_CHECK_N: every row");
    attn_expected_free(&e);
    attn_host_free(&t);
}

/* Outputs equal to the reference pass with zero error; a NaN outside the sampled heads and rows (an element a
 * kernel forgot) still fails. */
Test(check, a_nan_anywhere_fails) {
    const int H = 7, N = 1100, d = 32;
    Options o = shape_options(1, H, N, d);
    AttnHost t = attn_host_make(&WRITES_L, &o);
    double *O_h = malloc(sizeof(double) * N * d), *L_h = malloc(sizeof(double) * N);
    for (int h = 0; h < H; h++) {
        const size_t at = (size_t)h * N;
        reference_attention_head(t.Q + at * d, t.K + at * d, t.V + at * d, N, d, 0, O_h, L_h);
        for (size_t x = 0; x < (size_t)N * d; x++) t.O[at * d + x] = (float)O_h[x];
        for (int r = 0; r < N; r++) t.L[at + r] = (float)L_h[r];
    }
    free(O_h), free(L_h);
    AttnExpected e = attn_expected(&o, t.Q, t.K, t.V);
    cr_assert(e.heads[0] == 0 && e.heads[1] == 2 && e.heads[2] == 4 && e.heads[3] == 6, "head 1 is not sampled");
    ErrorStats err_O, err_L;
    attn_compare(&e, &o, t.O, t.L, &err_O, &err_L);
    cr_assert(error_ok(&err_O, 1e-7) && error_ok(&err_L, 1e-7), "the reference rounded to float passes");
    const size_t unsampled_row = 1 * N + 1000;
    t.O[unsampled_row * d + 7] = NAN;
    attn_compare(&e, &o, t.O, t.L, &err_O, &err_L);
    cr_assert_eq(err_O.nonfinite, 1);
    ErrorStats w = worse_of(err_O, err_L);
    cr_assert(!error_ok(&err_O, 1.0) && !error_ok(&w, 1.0));
    t.O[unsampled_row * d + 7] = 0.f;
    t.L[unsampled_row] = NAN;
    attn_compare(&e, &o, t.O, t.L, &err_O, &err_L);
    cr_assert_eq(err_L.nonfinite, 1);
    w = worse_of(err_O, err_L);
    cr_assert(!error_ok(&w, 1.0));
    attn_expected_free(&e);
    attn_host_free(&t);
}

Test(check, worse_of_takes_the_larger_relative_error) {
    const float out_a[] = {1.0f, 2.0f}, out_b[] = {1.5f};
    const double ref_a[] = {1.0, 2.001}, ref_b[] = {1.0};
    const ErrorStats a = error_stats(out_a, ref_a, 2), b = error_stats(out_b, ref_b, 1);
    const ErrorStats w = worse_of(a, b), v = worse_of(b, a);
    cr_assert_eq(error_stats_rel(&w), error_stats_rel(&b));
    cr_assert_eq(error_stats_rel(&v), error_stats_rel(&b));
    cr_assert_eq(w.max_abs, 0.5);
    cr_assert_eq(w.n, 3);
}
