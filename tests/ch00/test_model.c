/* Chapter 00's closed forms: article 2's numbers (IO-3kernels in ARTICLES.md), the article configuration's bytes worked out by hand, the
 * model against the CPU version's counted bytes for many shapes (ragged N, every d, both storage types),
 * and the device memory. No GPU needed. */
#include "ch00_test.h"

static unsigned long long total_ideal(const Options *o) {
    return io_total(qk_ideal_bytes(o)) + io_total(softmax_ideal_bytes(o)) + io_total(pv_ideal_bytes(o));
}

Test(model, article_2_counts_8Nd_plus_10N2_at_N4096_d128_fp16) {
    const Options o = shape(1, 1, 4096, 128, DTYPE_FP16, GEMM_OWN);
    const unsigned long long N = 4096, d = 128;
    cr_assert_eq(io3kernels_bytes(&o, SA_QK), 4 * N * d + 2 * N * N);
    cr_assert_eq(io3kernels_bytes(&o, SA_QK), 35651584ULL);
    cr_assert_eq(io3kernels_bytes(&o, SA_SOFTMAX), 4 * N * N);
    cr_assert_eq(io3kernels_bytes(&o, SA_SOFTMAX), 67108864ULL);
    cr_assert_eq(io3kernels_bytes(&o, SA_PV), 4 * N * N + 4 * N * d);
    cr_assert_eq(io3kernels_bytes(&o, SA_PV), 69206016ULL);
    cr_assert_eq(io3kernels_bytes(&o, SA_QK) + io3kernels_bytes(&o, SA_SOFTMAX) + io3kernels_bytes(&o, SA_PV), 171966464ULL,
                 "8Nd + 10N^2");
    /* reading P once, V once and writing O once: 2N^2 + 4Nd for the third step, 8Nd + 8N^2 in all */
    cr_assert_eq(io_total(pv_ideal_bytes(&o)), 2 * N * N + 4 * N * d);
    cr_assert_eq(total_ideal(&o), 8 * N * d + 8 * N * N);
    cr_assert_eq(total_ideal(&o), 138412032ULL);
    cr_assert_eq(io3kernels_bytes(&o, SA_PV) - io_total(pv_ideal_bytes(&o)), 2 * N * N, "the article reads P twice");
}

Test(model, article_configuration_by_hand) {
    const Options o = shape(10, 64, 1024, 64, DTYPE_FP32, GEMM_OWN);
    const unsigned long long heads = 640, e = 4, N = 1024, d = 64;
    cr_assert_eq(qk_blocks_per_head(&o), 8, "Tq = 1024 / 128");
    cr_assert_eq(pv_blocks_per_head(&o), 4, "Tp = 1024 / (16384 / 64)");
    /* qk: Q once, K once per query block (8 times); S written once */
    cr_assert_eq(qk_model_bytes(&o).read, heads * e * (N * d + 8 * N * d));
    cr_assert_eq(qk_model_bytes(&o).read, 1509949440ULL);
    cr_assert_eq(qk_model_bytes(&o).write, 2684354560ULL);
    cr_assert_eq(softmax_model_bytes(&o).read, 2684354560ULL);
    cr_assert_eq(softmax_model_bytes(&o).write, 2684354560ULL);
    /* pv: P once, V once per row block (4 times); O written once */
    cr_assert_eq(pv_model_bytes(&o).read, heads * e * (N * N + 4 * N * d));
    cr_assert_eq(pv_model_bytes(&o).read, 3355443200ULL);
    cr_assert_eq(pv_model_bytes(&o).write, 167772160ULL);
    cr_assert_eq(total_ideal(&o), heads * e * (4 * N * d + 4 * N * N));
    cr_assert_eq(gemm_flops(&o), 85899345920.0, "2 B H N^2 d");
    cr_assert_eq(softmax_ops(&o), 5.0 * 640 * 1024 * 1024);
    cr_assert_eq(std_attn_device_bytes(&o), 4ULL * heads * N * (4 * d + 2 * N));
}

Test(model, cublas_rows_are_named_apart_and_modelled_by_the_compulsory_bytes) {
    const Options own = shape(2, 3, 300, 64, DTYPE_FP16, GEMM_OWN), cub = shape(2, 3, 300, 64, DTYPE_FP16, GEMM_CUBLAS);
    KernelModel m[MAX_KERNELS], c[MAX_KERNELS];
    cr_assert_eq(std_attn_models(&own, m), 3);
    cr_assert_eq(std_attn_models(&cub, c), 3);
    cr_assert_str_eq(m[SA_QK].kernel, "qk_gemm");
    cr_assert_str_eq(m[SA_SOFTMAX].kernel, "softmax");
    cr_assert_str_eq(m[SA_PV].kernel, "pv_gemm");
    cr_assert_str_eq(c[SA_QK].kernel, "qk_cublas");
    cr_assert_str_eq(c[SA_PV].kernel, "pv_cublas");
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(c[k].model.read, c[k].ideal.read);
        cr_assert_eq(c[k].model.write, c[k].ideal.write);
        cr_assert_eq(c[k].ideal.read, m[k].ideal.read);
        cr_assert_eq(m[k].flops + m[k].softmax_ops, c[k].flops + c[k].softmax_ops);
    }
    cr_assert(m[SA_QK].model.read > m[SA_QK].ideal.read, "our qk_gemm re-reads K once per query block (Tq = 3)");
}

/* The closed forms against the CPU version, which counts every tile it moves. */
Test(model, closed_forms_equal_the_cpu_versions_counted_bytes) {
    const int Ns[] = {1, 17, 33, 100, 129, 513, 1000};
    for (size_t i = 0; i < sizeof(Ns) / sizeof(Ns[0]); i++)
        for (int j = 0; j < 3; j++)
            for (int t = 0; t < 2; t++) {
                const int N = Ns[i];
                const Options o = shape(2, N >= 1000 ? 1 : 3, N, TEST_DIMS[j], TEST_DTYPES[t], GEMM_OWN);
                char text[128];
                describe(&o, text, sizeof(text));
                Tensors x = tensors_make(&o);
                IoBytes io[SA_KERNELS];
                std_attn_forward_cpu(&o, x.Q, x.K, x.V, x.S, x.P, x.O, io, NULL);
                KernelModel m[MAX_KERNELS];
                std_attn_models(&o, m);
                for (int k = 0; k < SA_KERNELS; k++) {
                    cr_assert_eq(io[k].read, m[k].model.read, "%s %s: counted read %llu != model %llu", text,
                                 m[k].kernel, io[k].read, m[k].model.read);
                    cr_assert_eq(io[k].write, m[k].model.write, "%s %s: counted write %llu != model %llu", text,
                                 m[k].kernel, io[k].write, m[k].model.write);
                }
                tensors_free(&x);
            }
}

Test(model, re_reads_follow_the_tiles) {
    /* K is read once per 128 query rows, V once per 16384/d rows: one block more past each multiple */
    for (int j = 0; j < 3; j++) {
        const int d = TEST_DIMS[j];
        const Options a = shape(1, 1, 128, d, DTYPE_FP32, GEMM_OWN), b = shape(1, 1, 129, d, DTYPE_FP32, GEMM_OWN);
        cr_assert_eq(qk_blocks_per_head(&a), 1);
        cr_assert_eq(qk_blocks_per_head(&b), 2);
        const Options c = shape(1, 1, PV_BR(d), d, DTYPE_FP32, GEMM_OWN), e = shape(1, 1, PV_BR(d) + 1, d, DTYPE_FP32, GEMM_OWN);
        cr_assert_eq(pv_blocks_per_head(&c), 1, "d=%d", d);
        cr_assert_eq(pv_blocks_per_head(&e), 2, "d=%d", d);
        cr_assert_eq(PV_BR(d) * d, 16384, "a pv block owns 16384 outputs");
    }
}

Test(model, shared_memory_budgets) {
    cr_assert_eq(qk_smem_bytes(64), 4 * (64 * 132 + 2 * 16 * 132), "Q_i^T plus two K chunks");
    cr_assert_eq(qk_smem_bytes(64), 50688);
    cr_assert_eq(pv_smem_bytes(64), 4 * (2 * 16 * 260 + 2 * 16 * 64));
    /* softmax, short rows: one warp per row in registers, 4 rows per block, no shared memory */
    cr_assert(softmax_row_per_warp(1) && softmax_row_per_warp(1024) && !softmax_row_per_warp(1025));
    cr_assert_eq(softmax_smem_bytes(1024), 0);
    cr_assert_eq(softmax_threads(1), 128);
    cr_assert_eq(softmax_threads(1024), 128);
    cr_assert_eq(softmax_blocks_per_head(1), 1);
    cr_assert_eq(softmax_blocks_per_head(777), 195, "ceil(777 / 4)");
    cr_assert_eq(softmax_blocks_per_head(1024), 256);
    /* long rows: one block per row, the row in shared memory */
    cr_assert_eq(softmax_blocks_per_head(1025), 1025);
    cr_assert_eq(softmax_smem_bytes(4096), 4 * (4096 + 64));
    cr_assert_eq(softmax_smem_bytes(1025), 4 * (1028 + 64), "rounded up to a float4");
    cr_assert_eq(softmax_threads(1025), 64, "one warp per 1024 elements");
    cr_assert_eq(softmax_threads(4096), 128);
    cr_assert_eq(softmax_threads(32768), 1024);
    cr_assert_eq(softmax_threads(1 << 20), 1024);
    /* the whole row of an H200 (227 KB per block opt-in) tops out a little past 58,000 */
    cr_assert(softmax_smem_bytes(58048) <= 232448);
    cr_assert(softmax_smem_bytes(58112) > 232448);
}
