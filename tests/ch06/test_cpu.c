/* Chapter 06's CPU version (the kernel's arithmetic in the storage precision) against the float64 reference under
 * the chapter's rule, with counted bytes == model, fp16 and bf16, d = 64 and 128, causal and not, ragged N; and the
 * rule itself. */
#include "ch06_test.h"

Test(cpu, small_and_ragged_N) {
    const int Ns[] = {1, 17, 64, 65, 130};
    for (size_t n = 0; n < sizeof(Ns) / sizeof(Ns[0]); n++) check_fa3(NULL, 2, 3, Ns[n]);
}

/* The rule: twice the plain computation's error plus 1e-4, below 1e-2 (fp16) or 5e-2 (bf16); the plain
 * computation's error is that of rounding P and O, about 2^-11 (fp16) and 2^-8 (bf16) relative. */
Test(rule, tolerances_follow_the_plain_error_of_the_storage_type) {
    for (int x = 0; x < 2; x++) {
        Options o = fa3_shape(1, 2, 300, 128, FA3_DTYPES[x], 1);
        AttnHost t = attn_host_make(fa3_for(&o), &o);
        AttnExpected e = attn_expected(&o, t.Q, t.K, t.V);
        double tol_O, tol_L;
        fa3_tolerances(&o, &t, &e, &tol_O, &tol_L);
        const double lo = FA3_DTYPES[x] == DTYPE_FP16 ? 1e-4 : 1e-3, hi = FA3_DTYPES[x] == DTYPE_FP16 ? 1e-2 : 5e-2;
        cr_assert(tol_O > lo && tol_O <= hi, "%s: tol_O %.3e", dtype_name(o.dtype), tol_O);
        cr_assert(tol_L >= 1e-4 && tol_L <= hi, "%s: tol_L %.3e", dtype_name(o.dtype), tol_L);
        attn_expected_free(&e);
        attn_host_free(&t);
    }
}

/* The plain computation rounds P to the storage type before P V, as wgmma takes it from registers, and sums l from
 * the fp32 p. Two keys of scores 0 and -11/8 (natural units), V's rows 0 and v: feature x of O is
 * p1' v[x] / (1 + p1), p1 = e^(-11/8) and p1' = p1 in bf16, 0.35% below it; averaged over 64 features, O's own
 * rounding to bf16 leaves p1', not p1. */
Test(rule, plain_row_rounds_p_to_the_storage_type) {
    enum { D = 64 };
    float q[D] = {1.f}, K[2 * D] = {0.f}, V[2 * D] = {0.f}, o[D];
    K[D] = -11.f;
    for (int x = 0; x < D; x++) V[D + x] = 1.f + x / 128.f;
    fa3_plain_row(q, K, V, 2, D, FA3_BC, 0, 0, DTYPE_BF16, o);
    const double p1 = exp(-11. / 8.), p1_t = stored_value((float)p1, DTYPE_BF16);
    double seen = 0.;
    for (int x = 0; x < D; x++) seen += o[x] * (1. + p1) / V[D + x] / D;
    cr_assert(fabs(seen - p1_t) < 0.25 * fabs(p1_t - p1),
              "P as seen through O: %.6f; rounded to bf16 %.6f, in fp32 %.6f", seen, p1_t, p1);
}

Test(cpu, chapter_run_cpu_counts_and_checks) {
    for (int k = 0; k < FA3_KERNEL_COUNT; k++) {
        Options o = fa3_shape(2, 3, 130, 128, DTYPE_BF16, 1);
        fa3_set_kernel(&o, FA3_KERNELS[k]);
        KernelRun runs[MAX_KERNELS + 1];
        memset(runs, 0, sizeof(runs));
        chapter_run_cpu(&chapter06, &o, runs);
        KernelModel m[MAX_KERNELS];
        memset(m, 0, sizeof(m));
        cr_assert_eq(chapter06.models(&o, m), 1);
        cr_assert_str_eq(m[0].kernel, fa3_kernel_name(k));
        cr_assert_eq(runs[0].counted.read, m[0].model.read);
        cr_assert_eq(runs[0].counted.write, m[0].model.write);
        cr_assert(error_ok(&runs[0].err, runs[0].tol), "rel %.3e tol %.3e", runs[0].err.rel, runs[0].tol);
    }
}

/* The wgmma count of --model: (d/16 + Bc/16) per visited K/V block; every block visited without the mask, the
 * blocks on and below the diagonal with it. */
Test(model, wgmma_count) {
    Options o = fa3_shape(10, 64, 1024, 64, DTYPE_FP16, 0);
    Fa3Wgmma w = fa3_wgmma_count(&o);
    cr_assert_eq(w.per_kv_block, 8);
    cr_assert_eq(w.total, 640ull * 16 * 16 * 8);
    o.d = 128, o.causal = 1;
    w = fa3_wgmma_count(&o);
    cr_assert_eq(w.per_kv_block, 12);
    cr_assert_eq(w.total, 640ull * (16 * 17 / 2) * 12);
    /* warp_specialized's 128 x 128: each of two consumers (d/16 + Bc/16) = 8 + 8 */
    o.Br = o.Bc = 128;
    w = fa3_wgmma_count(&o);
    cr_assert_eq(w.per_kv_block, 32);
    cr_assert_eq(w.total, 640ull * (8 * 9 / 2) * 32);
}
