/* Chapter 04's kernels on the GPU, every layout, both builds (timed and instrumented): O and L against the
 * float64 reference over N in {1, 17, 33, 1000, 4097}, every d, causal and not, several tiles; poisoned outputs
 * fully written; counted bytes == model to the byte; resources without spills; the program's GPU run. Without a
 * CUDA device these tests skip; with REQUIRE_GPU=1 they fail instead. */
#include "ch04_test.h"

static void gpu_N(int B, int H, int N) {
    NEED_GPU();
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    check_layouts(&dev, B, H, N);
}

Test(gpu, N_1) { gpu_N(2, 3, 1); }
Test(gpu, N_17) { gpu_N(2, 3, 17); }
Test(gpu, N_33) { gpu_N(2, 3, 33); }
Test(gpu, N_1000) { gpu_N(2, 3, 1000); }
Test(gpu, N_4097_sampled_rows) { gpu_N(1, 2, 4097); }

/* Every compiled kernel that fits, every layout: threads and shared memory as tiles.h says, at least one
 * resident block, no spills. */
Test(gpu, resources_every_layout_and_tile_no_spills) {
    NEED_GPU();
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    const int Brs[] = {16, 32, 64, 128}, Bcs[] = {16, 32, 64};
    for (int layout = 0; layout < LAYOUT_COUNT; layout++)
        for (int d = 32; d <= 128; d *= 2)
            for (int r = 0; r < 4; r++)
                for (int c = 0; c < 3; c++) {
                    const size_t smem = smem_bytes_layout(Brs[r], Bcs[c], d, layout);
                    if (smem > (size_t)dev.smem_per_block_optin) continue;
                    KernelResources res;
                    if (layout == LAYOUT_PAIRED)
                        flash_v4_resources(d, Brs[r], Bcs[c], &res);
                    else
                        flash_v4_variant_resources(d, Brs[r], Bcs[c], layout, &res);
                    cr_assert_eq(res.threads, threads_per_block(Brs[r]));
                    cr_assert_eq(res.smem_bytes, smem);
                    cr_assert_eq(res.local_bytes, 0, "%s d=%d Br=%d Bc=%d spills %d bytes", TEST_LAYOUTS[layout], d,
                                 Brs[r], Bcs[c], res.local_bytes);
                    cr_assert_geq(res.blocks_per_sm, 1);
                }
}

Test(gpu, chapter_run_gpu_times_counts_and_checks) { check_chapter_runs(&chapter04, 1); }

Test(gpu, chapter_run_gpu_transposed_has_its_setup_row) {
    NEED_GPU();
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    Options o = layout_shape(LAYOUT_TRANSPOSED, 2, 3, 1001, 64, 32, 32, 0);
    o.reps = 2;
    KernelRun runs[MAX_KERNELS + 1];
    memset(runs, 0, sizeof(runs));
    chapter_run_gpu(&chapter04, &o, &dev, runs);
    KernelModel m[MAX_KERNELS];
    memset(m, 0, sizeof(m));
    cr_assert_eq(chapter04.models(&o, m), 2);
    cr_assert_str_eq(m[0].kernel, "k_transpose");
    for (int k = 0; k < 2; k++) {
        cr_assert(runs[k].have_time && runs[k].have_counted);
        cr_assert_eq(runs[k].counted.read, m[k].model.read, "%s", m[k].kernel);
        cr_assert_eq(runs[k].counted.write, m[k].model.write, "%s", m[k].kernel);
    }
    cr_assert(error_ok(&runs[1].err, runs[1].tol), "rel %.3e", runs[1].err.rel);
}
