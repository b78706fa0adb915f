/* Chapter 00's kernels on the GPU, both builds (timed and instrumented), own GEMMs and cuBLAS: S, P and O
 * against the float64 reference over N in {1, 17, 33, 601, 1000, 1024}, every d, fp32 and fp16, B and H > 1;
 * poisoned outputs fully written; counted bytes == model to the byte; the softmax's invariants on the device;
 * no spills; the program's out-of-memory and row-limit messages. Without a CUDA device these tests skip; with
 * REQUIRE_GPU=1 they fail instead. */
#include "../support.h"
#include "ch00_test.h"
#include "cuda_check.h"

/* One shape, one reference: own GEMMs and cuBLAS, each through the timed and the instrumented build. */
static void gpu_shape(int B, int H, int N, int d, DType t, int max_heads) {
    Options o = shape(B, H, N, d, t, GEMM_OWN);
    Tensors x = tensors_make(&o);
    Expected e = expected_make(&o, &x, max_heads);
    const GemmBackend backends[] = {GEMM_OWN, GEMM_CUBLAS};
    for (int g = 0; g < 2; g++)
        for (int counted = 0; counted < 2; counted++) {
            option_assign(&o, CH00_OPT_GEMM, backends[g]);
            char text[128];
            describe(&o, text, sizeof(text));
            memset(x.S, 0, sizeof(float) * x.nn); /* whatever is here must be replaced by the download */
            IoBytes io[SA_KERNELS];
            int have[SA_KERNELS];
            std_attn_forward_gpu(&o, x.Q, x.K, x.V, x.S, x.P, x.O, counted, io, have);
            assert_outputs_match(&e, &o, &x, counted ? "instrumented build" : "timed build");
            if (!counted) continue;
            KernelModel m[MAX_KERNELS];
            std_attn_models(&o, m);
            for (int k = 0; k < SA_KERNELS; k++) {
                cr_assert_eq(have[k], k == SA_SOFTMAX || gemm_of(&o) == GEMM_OWN, "%s %s: counted or not", text, m[k].kernel);
                if (!have[k]) continue;
                cr_assert_eq(io[k].read, m[k].model.read, "%s %s: counted read %llu != model %llu", text, m[k].kernel,
                             io[k].read, m[k].model.read);
                cr_assert_eq(io[k].write, m[k].model.write, "%s %s: counted write %llu != model %llu", text,
                             m[k].kernel, io[k].write, m[k].model.write);
            }
        }
    expected_free(&e);
    tensors_free(&x);
}

static void gpu_all_dims_and_types(int B, int H, int N, int max_heads) {
    NEED_GPU();
    for (int j = 0; j < 3; j++)
        for (int t = 0; t < 2; t++) gpu_shape(B, H, N, TEST_DIMS[j], TEST_DTYPES[t], max_heads);
}

Test(gpu, n1) { gpu_all_dims_and_types(2, 3, 1, 8); }
Test(gpu, n17) { gpu_all_dims_and_types(2, 3, 17, 8); }
Test(gpu, n33) { gpu_all_dims_and_types(2, 3, 33, 8); }
Test(gpu, n1000) { gpu_all_dims_and_types(2, 2, 1000, 2); }
Test(gpu, n1024) { gpu_all_dims_and_types(2, 2, 1024, 2); }
Test(gpu, n601_unaligned_rows_across_many_tiles) { gpu_all_dims_and_types(3, 2, 601, 2); }

/* The softmax kernel alone on scores we choose: against the CPU softmax, and bit for bit unchanged by a shift
 * of every score (fp32: by 1024, where exp would overflow without the max subtracted; fp16: by 16, on a grid of
 * 1/64 so that the shifted scores are still exact in half: half has 10 fraction bits, so past 1024 it cannot
 * hold fractions at all). One head (B = H = 1), so S is N x N: the kernels launch one row per query, N rows.
 * N = 1, 777 and 1024 run the one-warp-per-row kernel, 2048 and 4099 the one-block-per-row kernel (4099: 5
 * warps, past a single warp's reduction); 1, 777 and 4099 take the element-by-element path, 1024 and 2048
 * the vector one. */
Test(gpu, softmax_kernel_invariants) {
    NEED_GPU();
    const int Ns[] = {1, 777, 1024, 2048, 4099};
    for (size_t i = 0; i < sizeof(Ns) / sizeof(Ns[0]); i++)
        for (int t = 0; t < 2; t++) {
            const int N = Ns[i], rows = N; /* one head: N rows of N scores */
            const DType type = TEST_DTYPES[t];
            const size_t n = (size_t)rows * N, e = dtype_size(type);
            float *S = malloc(sizeof(float) * n), *T = malloc(sizeof(float) * n), *P = malloc(sizeof(float) * n),
                  *Q = malloc(sizeof(float) * n);
            double *ref = malloc(sizeof(double) * n);
            Rng r = rng_seeded(N);
            const float steps = type == DTYPE_FP16 ? 64.f : 1024.f, shift = type == DTYPE_FP16 ? 16.f : 1024.f;
            for (size_t k = 0; k < n; k++) S[k] = (float)((long)(rng_uniform(&r) * 16 * steps) - 8 * steps) / steps;
            for (size_t k = 0; k < n; k++) T[k] = S[k] + shift;
            void *S_d = dev_alloc(e * n), *P_d = dev_alloc(e * n);
            StdAttnArgs a = {NULL, NULL, NULL, S_d, P_d, NULL, 1, 1, N, 64, type == DTYPE_FP16};
            const float *in[2] = {S, T};
            float *out[2] = {P, Q};
            for (int s = 0; s < 2; s++) {
                dev_upload(S_d, in[s], n, type);
                dev_poison(P_d, e * n);
                softmax_launch(&a);
                CUDA_CHECK(cudaDeviceSynchronize());
                dev_download(out[s], P_d, n, type);
            }
            /* The float64 reference on the same scores (exact in both storage types: a grid of 1/1024 or 1/64). */
            for (size_t k = 0; k < n; k++) ref[k] = S[k];
            reference_softmax_rows(ref, rows, N, ref);
            cr_assert_eq(count_nonfinite(P, n), 0, "N=%d: P not fully written", N);
            cr_assert(memcmp(P, Q, sizeof(float) * n) == 0, "N=%d %s: a shift by %g changed P", N, dtype_name(type), shift);
            /* fp32: expf is within 2 ulp (CUDA's documented bound) and the row sum is a tree of shuffles, within
             * about log2(N) float epsilons (6e-8 each) of exact: 4e-6 leaves room without hiding a wrong sum.
             * (Against a float CPU loop instead, whose own sum drifts by ~sqrt(N) epsilons, an H200 showed
             * 4.4e-6 at N = 4099.) fp16: one rounding of P to half, a relative 2^-11, or one step of 2^-24 for a
             * subnormal half. */
            const double rel = type == DTYPE_FP16 ? 1e-3 : 4e-6, abs_step = type == DTYPE_FP16 ? 0x1p-24 : 1e-30;
            for (size_t k = 0; k < n; k++)
                cr_assert(fabs((double)P[k] - ref[k]) <= rel * ref[k] + abs_step,
                          "N=%d %s: P[%zu] = %.9g, float64 reference %.9g", N, dtype_name(type), k, P[k], ref[k]);
            dev_free(S_d), dev_free(P_d);
            free(S), free(T), free(P), free(Q), free(ref);
        }
}

Test(gpu, kernels_do_not_spill_and_fit_twice_on_an_sm) {
    NEED_GPU();
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    const char *names[SA_KERNELS] = {"qk_gemm", "softmax", "pv_gemm"};
    for (int j = 0; j < 3; j++)
        for (int fp16 = 0; fp16 < 2; fp16++)
            for (int k = 0; k < SA_KERNELS; k++) {
                KernelResources r;
                std_attn_resources(k, TEST_DIMS[j], fp16, 1024, &r);
                cr_assert_eq(r.local_bytes, 0, "%s d=%d fp16=%d: %d B of local memory (spills)", names[k], TEST_DIMS[j],
                             fp16, r.local_bytes);
                /* __launch_bounds__(256, 2): two GEMM blocks per SM where the shared memory allows (sm_90) */
                if (dev.cc_major >= 9)
                    cr_assert(r.blocks_per_sm >= 2, "%s d=%d fp16=%d: %d blocks per SM (%d registers)", names[k],
                              TEST_DIMS[j], fp16, r.blocks_per_sm, r.regs);
            }
}

Test(gpu, too_big_for_memory_names_the_bytes_needed_and_free) {
    NEED_GPU();
    char out[4096];
    cr_assert_eq(run_cli("--seq 65536", out, sizeof(out)), 2, "%s", out);
    cr_assert(strstr(out, "bytes") && strstr(out, "free"), "needed and free: %s", out);
    const Options o = shape(10, 64, 65536, 64, DTYPE_FP32, GEMM_OWN);
    char need[64];
    snprintf(need, sizeof(need), "needs %zu bytes", std_attn_device_bytes(&o));
    cr_assert(strstr(out, need), "'%s' in: %s", need, out);
}

Test(gpu, a_row_too_long_for_shared_memory_is_rejected) {
    NEED_GPU();
    const Options o = shape(1, 1, 65536, 64, DTYPE_FP16, GEMM_OWN);
    if (std_attn_device_bytes(&o) + (1ull << 30) > device_free_bytes())
        cr_skip_test("not enough free device memory to reach the row limit (it would stop at the memory check)");
    char out[4096];
    cr_assert_eq(run_cli("--batch 1 --heads 1 --seq 65536 --dtype fp16", out, sizeof(out)), 2, "%s", out);
    cr_assert(strstr(out, "keeps a whole row of S on chip") && strstr(out, "stops at N = "), "%s", out);
}

Test(gpu, program_runs_check_and_count) {
    NEED_GPU();
    const char *runs[] = {"--batch 2 --heads 3 --seq 33 --dim 64 --reps 2",
                          "--batch 2 --heads 2 --seq 1000 --dim 128 --dtype fp16 --reps 2",
                          "--batch 2 --heads 2 --seq 1024 --dim 32 --gemm cublas --reps 2",
                          "--batch 2 --heads 2 --seq 777 --dim 64 --dtype fp16 --gemm cublas --reps 2"};
    for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
        char out[16384];
        cr_assert_eq(run_cli(runs[k], out, sizeof(out)), 0, "%s: %s", runs[k], out);
        cr_assert(strstr(out, "counted != model") == NULL, "%s: %s", runs[k], out);
        cr_assert(strstr(out, "FAILED") == NULL && strstr(out, "not checked") == NULL, "%s: %s", runs[k], out);
        cr_assert(strstr(out, "CPU version") == NULL, "%s ran on the CPU: %s", runs[k], out);
    }
    char out[16384];
    cr_assert_eq(run_cli("--batch 2 --heads 3 --seq 33 --dim 64 --profile", out, sizeof(out)), 0, "--profile: %s", out);
}
