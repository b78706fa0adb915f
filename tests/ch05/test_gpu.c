/* Chapter 05's mma kernels (steps 2 to 11) on the GPU, both builds: O and L against the float64 reference under
 * the chapter's rule (twice the plain storage-precision error), fp16 and bf16, d = 64 and 128, causal and not,
 * Br = 64 (every step) and 128 (mma_async), ragged N, B and H > 1; poisoned outputs fully written; counted ==
 * model to the byte; no spills; the program's run (wmma: test_wmma.c). Without a CUDA device these tests skip; with REQUIRE_GPU=1 they fail instead. */
#include "ch05_test.h"

static void gpu_N(int B, int H, int N) {
    NEED_GPU();
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    check_tc(&dev, B, H, N);
}

Test(gpu, N_1) { gpu_N(2, 3, 1); }
Test(gpu, N_17) { gpu_N(2, 3, 17); }
Test(gpu, N_65) { gpu_N(2, 3, 65); }
Test(gpu, N_1000) { gpu_N(2, 3, 1000); }
Test(gpu, N_1024) { gpu_N(1, 2, 1024); }
Test(gpu, N_4097_sampled_rows) { gpu_N(1, 2, 4097); }

/* No spills, but one: mma_async at d = 128 with 32 rows per warp holds O (128 floats a lane), S (64) and the
 * ldmatrix operands in flight in 255 registers, and ptxas spills a few bytes (16 on sm_90:
 * results/NVIDIA_H200/ch05/runs.log), outside the mma chains; a test of at most 16 bytes there keeps it from
 * growing unseen. */
Test(gpu, resources_no_spills) {
    NEED_GPU();
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    const struct { int kernel, Br; } tiles[] = {
        {TC_KERNEL_MMA_STAGED, 64}, {TC_KERNEL_REPACK, 64},        {TC_KERNEL_O_REGISTERS, 64},
        {TC_KERNEL_SWIZZLE, 64},    {TC_KERNEL_MMA_PLAIN, 64},     {TC_KERNEL_UNROLLED_COPY, 64},
        {TC_KERNEL_EDGE_MASKS, 64}, {TC_KERNEL_MMA, 64},           {TC_KERNEL_CP_ASYNC, 64},
        {TC_KERNEL_MMA_ASYNC, 64},  {TC_KERNEL_MMA_ASYNC, 128}};
    for (int x = 0; x < 2; x++)
        for (int y = 0; y < 2; y++)
            for (size_t r = 0; r < sizeof(tiles) / sizeof(tiles[0]); r++) {
                if (TC_DTYPES[x] == DTYPE_BF16 && dev.cc_major < 8) continue;
                const int d = TC_DIMS[y], Br = tiles[r].Br, kernel = tiles[r].kernel;
                if (tc_smem_bytes(kernel, Br, TC_BC, d) > (size_t)dev.smem_per_block_optin) continue;
                KernelResources res;
                flash_tc_resources(kernel, d, Br, TC_DTYPES[x], &res);
                const int spill_allowed = kernel == TC_KERNEL_MMA_ASYNC && d == 128 && Br == 128 ? 16 : 0;
                cr_assert_leq(res.local_bytes, spill_allowed, "kernel %d d=%d Br=%d %s spills %d bytes", kernel, d,
                              Br, dtype_name(TC_DTYPES[x]), res.local_bytes);
                cr_assert_geq(res.blocks_per_sm, 1);
                cr_assert_eq(res.smem_bytes, tc_smem_bytes(kernel, Br, TC_BC, d));
            }
}

Test(gpu, chapter_run_gpu_times_counts_and_checks) {
    NEED_GPU();
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    Options o = tc_shape(3, 5, 300, 128, DTYPE_FP16, 1);
    o.reps = 3;
    KernelRun runs[MAX_KERNELS + 1];
    memset(runs, 0, sizeof(runs));
    chapter_run_gpu(&chapter05, &o, &dev, runs);
    KernelModel m[MAX_KERNELS];
    memset(m, 0, sizeof(m));
    chapter05.models(&o, m);
    cr_assert(runs[0].have_time && runs[0].have_counted && runs[0].have_check);
    cr_assert_eq(runs[0].counted.read, m[0].model.read);
    cr_assert_eq(runs[0].counted.write, m[0].model.write);
    cr_assert(error_ok(&runs[0].err, runs[0].tol), "rel %.3e tol %.3e", runs[0].err.rel, runs[0].tol);
}
