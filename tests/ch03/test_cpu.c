/* Chapter 03's CPU version against the float64 reference (O and the log-sum-exp L) and its counted bytes
 * against the model, causal and not, over ragged N, N smaller than the tiles, every d and several tiles; and
 * the chapter's CPU run as the program does it. */
#include "ch03_test.h"

Test(cpu, small_and_ragged_N_every_d_every_tile) {
    const int Ns[] = {1, 17, 33, 100};
    for (size_t n = 0; n < sizeof(Ns) / sizeof(Ns[0]); n++)
        for (int k = 0; k < 3; k++)
            for (int causal = 0; causal < 2; causal++) check_shape(&chapter03, NULL, 2, 3, Ns[n], TEST_DIMS[k], causal);
}

Test(cpu, N_1000_and_1024) {
    for (int causal = 0; causal < 2; causal++) {
        check_shape(&chapter03, NULL, 1, 2, TEST_N_LONG(1000), 32, causal);
        check_shape(&chapter03, NULL, 2, 1, TEST_N_LONG(1024), 64, causal);
    }
}

Test(cpu, N_4097_against_sampled_rows) {
    for (int causal = 0; causal < 2; causal++) {
        Options o = shape(1, 1, 4097, 32, 64, 32, causal);
        AttnHost t = attn_host_make(&flash_v2, &o);
        AttnExpected e = attn_expected(&o, t.Q, t.K, t.V);
        cr_assert_eq(e.nrows, ATTN_CHECK_ROWS, "N > ATTN_FULL_CHECK_N: a sample of rows");
        IoBytes io[MAX_KERNELS];
        cpu_forward(&flash_v2, &o, &t, io);
        assert_outputs_match(chapter_attention(&chapter03, &o), &e, &o, &t, "cpu");
        assert_counted_equals_model(&chapter03, &o, io, "cpu");
        attn_expected_free(&e);
        attn_host_free(&t);
    }
}

Test(cpu, chapter_run_cpu_counts_and_checks) { check_chapter_runs(&chapter03, 0); }
