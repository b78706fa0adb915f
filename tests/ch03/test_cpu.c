/* Chapter 03's CPU version against the float64 reference (O and the log-sum-exp L), causal and not, over
 * ragged N, N smaller than the tiles, every d and several tiles; and the check's own machinery. */
#include "ch03_test.h"

/* One shape, one reference, every test tile: the CPU version on poisoned outputs, O and L checked. */
static void cpu_shape(int B, int H, int N, int d, int causal) {
    Options o = shape(B, H, N, d, 32, 32, causal);
    HostTensors t = host_tensors(&o);
    Expected e = expected_make(&o, t.Q, t.K, t.V);
    for (int k = 0; k < N_TEST_TILES; k++) {
        o.Br = TEST_TILES[k][0];
        o.Bc = TEST_TILES[k][1];
        poison_host(&o, &t);
        IoBytes io = {0, 0};
        cpu_forward(&o, &t, &io);
        assert_outputs_match(&e, &o, t.O, t.L, "cpu");
    }
    expected_free(&e);
    host_free(&t);
}

Test(cpu, small_and_ragged_N_every_d_every_tile) {
    const int Ns[] = {1, 17, 33, 100};
    for (size_t n = 0; n < sizeof(Ns) / sizeof(Ns[0]); n++)
        for (int k = 0; k < 3; k++)
            for (int causal = 0; causal < 2; causal++) cpu_shape(2, 3, Ns[n], TEST_DIMS[k], causal);
}

Test(cpu, N_1000_and_1024) {
    for (int causal = 0; causal < 2; causal++) {
        cpu_shape(1, 2, 1000, 32, causal);
        cpu_shape(2, 1, 1024, 64, causal);
    }
}

Test(cpu, N_4097_against_sampled_rows) {
    for (int causal = 0; causal < 2; causal++) {
        Options o = shape(1, 1, 4097, 32, 64, 32, causal);
        HostTensors t = host_tensors(&o);
        Expected e = expected_make(&o, t.Q, t.K, t.V);
        cr_assert_eq(e.nrows, CHECK_ROWS, "N > FULL_CHECK_N: a sample of rows");
        IoBytes io = {0, 0};
        cpu_forward(&o, &t, &io);
        assert_outputs_match(&e, &o, t.O, t.L, "cpu");
        expected_free(&e);
        host_free(&t);
    }
}

Test(check, reference_rows_equal_reference_attention_head) {
    for (int causal = 0; causal < 2; causal++) {
        const int N = 37, d = 32;
        Options o = shape(1, 1, N, d, 32, 32, causal);
        HostTensors t = host_tensors(&o);
        double *o_head = malloc(sizeof(double) * N * d), *lse_head = malloc(sizeof(double) * N);
        double *o_rows = malloc(sizeof(double) * N * d), *lse_rows = malloc(sizeof(double) * N);
        int rows[37];
        for (int r = 0; r < N; r++) rows[r] = N - 1 - r; /* any order */
        reference_attention_head(t.Q, t.K, t.V, N, d, causal, o_head, lse_head);
        reference_rows(t.Q, t.K, t.V, N, d, causal, rows, N, o_rows, lse_rows);
        for (int x = 0; x < N; x++) {
            const int r = rows[x];
            cr_assert(fabs(lse_rows[x] - lse_head[r]) < 1e-12, "lse of row %d", r);
            for (int c = 0; c < d; c++)
                cr_assert(fabs(o_rows[(size_t)x * d + c] - o_head[(size_t)r * d + c]) < 1e-12, "O[%d][%d]", r, c);
        }
        free(o_head), free(lse_head), free(o_rows), free(lse_rows);
        host_free(&t);
    }
}

Test(check, sampled_rows_cover_both_ends_once) {
    Options o = shape(1, 1, 5000, 32, 32, 32, 1);
    HostTensors t = host_tensors(&o);
    Expected e = expected_make(&o, t.Q, t.K, t.V);
    cr_assert_eq(e.nrows, CHECK_ROWS);
    for (int r = 0; r < 8; r++) cr_assert_eq(e.rows[r], r, "the first rows");
    for (int r = 0; r < 24; r++) cr_assert_eq(e.rows[CHECK_ROWS - 24 + r], 5000 - 24 + r, "the last rows");
    for (int r = 1; r < e.nrows; r++) cr_assert_gt(e.rows[r], e.rows[r - 1], "increasing, hence distinct");
    expected_free(&e);
    host_free(&t);
}

Test(check, sampled_heads_are_first_middle_last) {
    Options o = shape(2, 5, 3, 32, 32, 32, 0);
    HostTensors t = host_tensors(&o);
    Expected e = expected_make(&o, t.Q, t.K, t.V);
    cr_assert_eq(e.nheads, CHECK_HEADS);
    cr_assert_eq(e.heads[0], 0);
    cr_assert_eq(e.heads[e.nheads - 1], 9);
    expected_free(&e);
    host_free(&t);
}

/* A NaN outside the sampled heads and rows (an element a kernel forgot) still fails the check. */
Test(check, a_nan_anywhere_fails) {
    Options o = shape(1, 5, 2100, 32, 64, 64, 0);
    HostTensors t = host_tensors(&o);
    Expected e = expected_make(&o, t.Q, t.K, t.V);
    IoBytes io = {0, 0};
    cpu_forward(&o, &t, &io);
    assert_outputs_match(&e, &o, t.O, t.L, "cpu");
    const size_t unsampled_row = 1 * 2100 + 1000; /* head 1 is not among first, middle, last of 5 */
    cr_assert(e.heads[0] == 0 && e.heads[1] == 2 && e.heads[2] == 4);
    ErrorStats err_O, err_L, w;
    t.O[unsampled_row * 32 + 7] = NAN;
    expected_compare(&e, &o, t.O, t.L, &err_O, &err_L);
    w = worse_of(err_O, err_L);
    cr_assert_eq(err_O.nonfinite, 1);
    cr_assert(!error_ok(&err_O, 1.0) && !error_ok(&w, 1.0));
    t.O[unsampled_row * 32 + 7] = 0.f;
    t.L[unsampled_row] = NAN;
    expected_compare(&e, &o, t.O, t.L, &err_O, &err_L);
    w = worse_of(err_O, err_L);
    cr_assert_eq(err_L.nonfinite, 1);
    cr_assert(!error_ok(&w, 1.0));
    expected_free(&e);
    host_free(&t);
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
