/* Chapter 04's CPU version, every layout (the transposed one with its counted transposition), against the
 * float64 reference (O and L) and its counted bytes against the model, causal and not, ragged N, every d and
 * several tiles; and the chapter's CPU run as the program does it. */
#include "ch04_test.h"

Test(cpu, small_and_ragged_N_every_layout_d_and_tile) {
    const int Ns[] = {1, 17, 33, 70};
    for (size_t n = 0; n < sizeof(Ns) / sizeof(Ns[0]); n++) check_layouts(NULL, 2, 3, Ns[n]);
}

Test(cpu, N_1000) { check_layouts(NULL, 1, 1, TEST_N_LONG(1000)); }

/* K^T as the setup writes it: the element (key, x) at [x][key], rows of attn_kt_stride(N) floats, zeros past N,
 * and the bytes: K read once, K^T written once. */
Test(cpu, k_transpose_pads_rows_to_16_bytes_with_zeros) {
    const int N = 5, d = 32, heads = 2, stride = attn_kt_stride(N);
    cr_assert_eq(stride, 8);
    float K[2 * 5 * 32], Kt[2 * 32 * 8];
    for (int x = 0; x < heads * N * d; x++) K[x] = (float)x + 1.f;
    memset(Kt, 0xFF, sizeof(Kt));
    IoBytes io = {0, 0};
    k_transpose_cpu(K, Kt, heads, N, d, &io);
    for (int h = 0; h < heads; h++)
        for (int x = 0; x < d; x++)
            for (int key = 0; key < stride; key++)
                cr_assert_eq(Kt[(h * d + x) * stride + key], key < N ? K[(h * N + key) * d + x] : 0.f);
    cr_assert_eq(io.read, 4ULL * heads * N * d);
    cr_assert_eq(io.write, 4ULL * heads * d * stride);
}

Test(cpu, chapter_run_cpu_counts_and_checks_every_layout) {
    for (int layout = 0; layout < LAYOUT_COUNT; layout++) {
        Options o = layout_shape(layout, 3, 5, 300, 64, 64, 16, 1);
        o.reps = 1;
        KernelRun runs[MAX_KERNELS + 1];
        memset(runs, 0, sizeof(runs));
        chapter_run_cpu(&chapter04, &o, runs);
        KernelModel m[MAX_KERNELS];
        memset(m, 0, sizeof(m));
        const int n = chapter04.models(&o, m);
        cr_assert_eq(n, layout == LAYOUT_TRANSPOSED ? 2 : 1, "%s", TEST_LAYOUTS[layout]);
        for (int k = 0; k < n; k++) {
            cr_assert(runs[k].have_counted, "%s %s", TEST_LAYOUTS[layout], m[k].kernel);
            cr_assert_eq(runs[k].counted.read, m[k].model.read, "%s %s", TEST_LAYOUTS[layout], m[k].kernel);
            cr_assert_eq(runs[k].counted.write, m[k].model.write, "%s %s", TEST_LAYOUTS[layout], m[k].kernel);
        }
        cr_assert(error_ok(&runs[n - 1].err, runs[n - 1].tol), "%s: rel %.3e", TEST_LAYOUTS[layout], runs[n - 1].err.rel);
    }
}
