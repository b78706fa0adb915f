/* Chapter 02's CPU version (the kernels' loop nest on host arrays) against the float64 reference, over
 * ragged and whole tiles, every d, several heads; and the chapter's CPU run as the program does it. */
#include "ch02_test.h"

static void cpu_shape(int B, int H, int N, int d) {
    Options o = shape(B, H, N, d, 32, 32);
    Inputs in = inputs_make(&o);
    Expected e = expected_make(&o, &in, FV1_CHECK_HEADS);
    float *O, *l, *m;
    poisoned_outputs(&o, &O, &l, &m);
    for (int k = 0; k < N_TEST_TILES; k++) {
        o.Br = TEST_TILES[k][0];
        o.Bc = TEST_TILES[k][1];
        IoBytes io = {0, 0};
        flash_v1_init_cpu(O, l, m, in.rows, d, &io);
        for (int h = 0; h < B * H; h++) {
            const size_t at = (size_t)h * N;
            flash_v1_head_cpu(in.Q + at * d, in.K + at * d, in.V + at * d, O + at * d, l + at, m + at, N, d, o.Br,
                              o.Bc, &io);
        }
        assert_outputs_match(&e, &o, O, l, m, "cpu");
    }
    free(O), free(l), free(m);
    expected_free(&e);
    inputs_free(&in);
}

Test(cpu, N_1) {
    for (int x = 0; x < 3; x++) cpu_shape(2, 3, 1, TEST_DIMS[x]);
}
Test(cpu, N_17) {
    for (int x = 0; x < 3; x++) cpu_shape(2, 3, 17, TEST_DIMS[x]);
}
Test(cpu, N_33) {
    for (int x = 0; x < 3; x++) cpu_shape(2, 3, 33, TEST_DIMS[x]);
}
Test(cpu, N_100) {
    for (int x = 0; x < 3; x++) cpu_shape(3, 2, 100, TEST_DIMS[x]);
}
Test(cpu, N_256) { cpu_shape(2, 2, 256, 64); }

Test(cpu, init_is_algorithm_1_line_2) {
    float O[2 * 32], l[2], m[2];
    memset(O, 0xFF, sizeof(O)), memset(l, 0xFF, sizeof(l)), memset(m, 0xFF, sizeof(m));
    IoBytes io = {0, 0};
    flash_v1_init_cpu(O, l, m, 2, 32, &io);
    for (int x = 0; x < 64; x++) cr_assert_eq(O[x], 0.f);
    for (int r = 0; r < 2; r++) cr_assert(l[r] == 0.f && isinf(m[r]) && m[r] < 0);
    cr_assert_eq(io.write, 4ULL * 2 * (32 + 2));
}

/* The program's CPU path: both rows timed and counted, counted == model, and the check passes. */
Test(cpu, chapter_run_cpu_counts_and_checks) {
    Options o = shape(2, 3, 77, 64, 16, 64);
    KernelRun runs[MAX_KERNELS + 1];
    memset(runs, 0, sizeof(runs));
    chapter02.run_cpu(&o, runs);
    KernelModel m[MAX_KERNELS];
    const int n = chapter02.models(&o, m);
    for (int k = 0; k < n; k++) {
        cr_assert(runs[k].have_time && runs[k].have_counted, "%s", m[k].kernel);
        cr_assert_eq(runs[k].counted.read, m[k].model.read, "%s", m[k].kernel);
        cr_assert_eq(runs[k].counted.write, m[k].model.write, "%s", m[k].kernel);
    }
    cr_assert(runs[FV1_MAIN].have_check);
    cr_assert(error_ok(&runs[FV1_MAIN].err, runs[FV1_MAIN].tol), "rel %.3e", runs[FV1_MAIN].err.rel);
}
