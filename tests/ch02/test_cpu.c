/* Chapter 02's CPU version (the kernels' loop nest on host arrays) against the float64 reference and its
 * counted bytes against the model, over ragged and whole tiles, every d, several heads; and the chapter's CPU
 * run as the program does it. */
#include "ch02_test.h"

static void cpu_N(int B, int H, int N) {
    for (int x = 0; x < 3; x++) check_shape(&chapter02, NULL, B, H, N, TEST_DIMS[x], 0);
}

Test(cpu, N_1) { cpu_N(2, 3, 1); }
Test(cpu, N_17) { cpu_N(2, 3, 17); }
Test(cpu, N_33) { cpu_N(2, 3, 33); }
Test(cpu, N_100) { cpu_N(3, 2, 100); }
Test(cpu, N_256) { check_shape(&chapter02, NULL, 2, 2, 256, 64, 0); }

Test(cpu, init_is_algorithm_1_line_2) {
    float O[2 * 32], l[2], m[2];
    memset(O, 0xFF, sizeof(O)), memset(l, 0xFF, sizeof(l)), memset(m, 0xFF, sizeof(m));
    IoBytes io = {0, 0};
    flash_v1_init_cpu(O, l, m, 2, 32, &io);
    for (int x = 0; x < 64; x++) cr_assert_eq(O[x], 0.f);
    for (int r = 0; r < 2; r++) cr_assert(l[r] == 0.f && isinf(m[r]) && m[r] < 0);
    cr_assert_eq(io.write, 4ULL * 2 * (32 + 2));
}

/* l and m are outputs too: one left unwritten (still NaN) makes its row's L NaN, and the check fails. */
Test(cpu, an_unwritten_l_or_m_fails_the_check) {
    Options o = shape(1, 2, 40, 32, 16, 16, 0);
    AttnHost t = attn_host_make(&flash_v1, &o);
    AttnExpected e = attn_expected(&o, t.Q, t.K, t.V);
    IoBytes io[MAX_KERNELS];
    cpu_forward(&flash_v1, &o, &t, io);
    assert_outputs_match(chapter_attention(&chapter02, &o), &e, &o, &t, "cpu");
    for (int which = 0; which < 2; which++) {
        float *stat = t.extra[which ? FV1_BUF_M : FV1_BUF_L];
        const float kept = stat[57];
        stat[57] = NAN;
        flash_v1_L_from_l_m(&t);
        ErrorStats err_O, err_L;
        attn_compare(&e, &o, t.O, t.L, &err_O, &err_L);
        cr_assert_eq(err_L.nonfinite, 1, "%s", which ? "m" : "l");
        stat[57] = kept;
    }
    attn_expected_free(&e);
    attn_host_free(&t);
}

Test(cpu, chapter_run_cpu_counts_and_checks) { check_chapter_runs(&chapter02, 0); }

/* The kernels leave l and m; L follows on the host (flash_v1_L_from_l_m, the table's L_from_outputs). */
Test(cpu, L_from_l_and_m_is_natural_log_and_keeps_nan) {
    Options o = shape_options(1, 1, 4, 32);
    AttnHost t = attn_host_make(&flash_v1, &o);
    const float l[] = {1.f, 8.f, 0.f, NAN}, m[] = {3.f, -1.f, 0.f, 2.f};
    memcpy(t.extra[FV1_BUF_L], l, sizeof(l));
    memcpy(t.extra[FV1_BUF_M], m, sizeof(m));
    flash_v1_L_from_l_m(&t);
    cr_assert(fabsf(t.L[0] - 3.f * 0.6931472f) < 1e-6f, "m in log2 units: L = m ln 2 when l = 1");
    cr_assert(fabsf(t.L[1] - 2.f * 0.6931472f) < 1e-6f, "(-1 + log2 8) ln 2");
    cr_assert(isinf(t.L[2]) && t.L[2] < 0, "no visible key: -inf");
    cr_assert(isnan(t.L[3]), "an unwritten l stays NaN");
    attn_host_free(&t);
}
