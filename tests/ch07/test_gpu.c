/* Chapter 07's kernels on the GPU, both builds (timed and instrumented), the eighteen steps and step 2's --dq pass:
 * dQ, dK, dV against the float64 reference over N in {1, 17, 33, 300, 1000, 4097}, every d (steps 3-18: 64 and 128,
 * fp16 and bf16, under their low-precision rule), causal and not, odd B and H, several tiles; poisoned outputs fully
 * written; counted bytes == model to the byte for every kernel; resources without spills; the program's GPU run.
 * Steps 6 to 10 (wgmma) run on an sm_90 GPU only, and are skipped on others. Without a CUDA device these tests skip;
 * with REQUIRE_GPU=1 they fail instead. */
#include "ch07_test.h"

static void check_bwd_gpu_N(int B, int H, int N) {
    NEED_GPU();
    for (int k = 0; k < 3; k++)
        for (int causal = 0; causal < 2; causal++)
            for (int step = 0; step <= BWD_FLASH + 1; step++) { /* BWD_FLASH + 1: step 2 with --dq pass */
                const Options o = step > BWD_FLASH ? dq_pass_shape(B, H, N, TEST_DIMS[k], 32, 32, causal)
                                                   : bwd_shape(B, H, N, TEST_DIMS[k], 32, 32, causal, step);
                check_bwd(&o, 1);
            }
}

/* Steps 3 to 14 at d = 64 and 128 (the Hopper steps where they run), fp16 and bf16, causal and not. */
static void check_tc_gpu_N(int B, int H, int N) {
    NEED_GPU();
    const DType types[2] = {DTYPE_FP16, DTYPE_BF16};
    for (int d = 64; d <= 128; d *= 2)
        for (int causal = 0; causal < 2; causal++)
            for (int t = 0; t < 2; t++)
                for (int step = BWD_TC; step < BWD_STEPS; step++) { /* innermost: one reference for every step */
                    if (!step_runs_here(step)) continue;
                    const Options o = tc_step_shape(step, B, H, N, d, causal, types[t]);
                    check_bwd(&o, 1);
                }
}

Test(gpu, N_1) { check_bwd_gpu_N(3, 1, 1); }
Test(gpu, N_17) { check_bwd_gpu_N(1, 3, 17); }
Test(gpu, N_33) { check_bwd_gpu_N(3, 3, 33); }
Test(gpu, N_1000) { check_bwd_gpu_N(1, 3, 1000); }
Test(gpu, tc_N_1) { check_tc_gpu_N(3, 1, 1); }
Test(gpu, tc_N_17) { check_tc_gpu_N(1, 3, 17); }
Test(gpu, tc_N_33) { check_tc_gpu_N(3, 3, 33); }
Test(gpu, tc_N_300) { check_tc_gpu_N(3, 5, 300); }
Test(gpu, tc_N_1000) { check_tc_gpu_N(1, 3, 1000); }

Test(gpu, flash_every_tile_ragged_causal) {
    NEED_GPU();
    const int tiles[][2] = {{32, 32}, {64, 64}, {32, 64}, {64, 32}};
    for (int x = 0; x < 4; x++)
        for (int causal = 0; causal < 2; causal++) {
            const Options o = bwd_shape(3, 5, 300, 64, tiles[x][0], tiles[x][1], causal, BWD_FLASH);
            check_bwd(&o, 1);
            if (tiles[x][0] != tiles[x][1]) continue; /* the pass: square tiles only */
            const Options p = dq_pass_shape(3, 5, 300, 64, tiles[x][0], tiles[x][1], causal);
            check_bwd(&p, 1);
        }
}

Test(gpu, N_4097_sampled_rows, .timeout = 600) {
    NEED_GPU();
    for (int causal = 0; causal < 2; causal++) {
        const Options o = bwd_shape(1, 2, 4097, 128, 32, 32, causal, BWD_FLASH);
        check_bwd(&o, 1);
        const Options p = dq_pass_shape(1, 2, 4097, 128, 64, 64, causal);
        check_bwd(&p, 1);
    }
    const Options o = bwd_shape(1, 1, 4097, 64, 32, 32, 1, BWD_NAIVE);
    check_bwd(&o, 1);
    for (int causal = 0; causal < 2; causal++) /* the steps innermost: one reference for all of them */
        for (int step = BWD_TC; step < BWD_STEPS; step++) {
            if (!step_runs_here(step)) continue;
            const Options t = tc_step_shape(step, 1, 2, 4097, 128, causal, causal ? DTYPE_BF16 : DTYPE_FP16);
            check_bwd(&t, 1);
        }
    for (int causal = 0; causal < 2; causal++)
        for (int step = BWD_KV_REGS; step <= BWD_MATRIX_STORES; step++) { /* fragments held over a long sweep: d = 64 */
            const Options t = tc_step_shape(step, 1, 2, 4097, 64, causal, DTYPE_BF16);
            check_bwd(&t, 1);
        }
}

Test(gpu, resources_no_spills) {
    NEED_GPU();
    const int Brs[] = {32, 64}, Bcs[] = {32, 64};
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    for (int k = 0; k < 3; k++) {
        const int d = TEST_DIMS[k];
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 2; c++) {
                if (bwd_smem_bytes(Brs[r], Bcs[c], d) > (size_t)dev.smem_per_block_optin) continue;
                void (*const fp32[3])(int, int, int, KernelResources *) = {flash_bwd_resources, flash_dq_resources,
                                                                           flash_dkdv_resources};
                const char *const fp32_names[3] = {"flash_bwd", "flash_dq", "flash_dkdv"};
                for (int s = 0; s < (Brs[r] == Bcs[c] ? 3 : 1); s++) { /* the pass: square tiles only */
                    KernelResources res;
                    fp32[s](d, Brs[r], Bcs[c], &res);
                    cr_assert_eq(res.local_bytes, 0, "%s d=%d Br=%d Bc=%d spills %d B", fp32_names[s], d, Brs[r],
                                 Bcs[c], res.local_bytes);
                    cr_assert_geq(res.blocks_per_sm, 1, "%s d=%d Br=%d Bc=%d", fp32_names[s], d, Brs[r], Bcs[c]);
                }
            }
        for (int x = 0; x < NAIVE_KERNELS; x++) {
            KernelResources res;
            naive_resources(x, d, &res);
            cr_assert_eq(res.local_bytes, 0, "naive kernel %d d=%d spills", x, d);
        }
        KernelResources res;
        fwd_flash_v2_resources(d, &res);
        cr_assert_eq(res.local_bytes, 0, "the forward d=%d spills", d);
        if (d == 32) continue; /* steps 3-5: d = 64 and 128 */
        /* steps 3 to 18, in order (BWD_TC + s): the Hopper steps (6 to 10) where they run */
        void (*const tc[BWD_STEPS - BWD_TC])(int, int, KernelResources *) = {
            tc_bwd_resources,      tc_vec_bwd_resources,  tc_wide_bwd_resources, tc_wgmma_bwd_resources,
            tc_lean_bwd_resources, tc_bulk_bwd_resources, tc_ovl_bwd_resources,  tc_ws_bwd_resources,
            tc_tile_bwd_resources, tc_tile_lean_bwd_resources, tc_kvreg_bwd_resources, tc_pairs_bwd_resources,
            tc_quads_bwd_resources, tc_stats_bwd_resources, tc_squares_bwd_resources, tc_stores_bwd_resources};
        const char *const tc_names[BWD_STEPS - BWD_TC] = {
            "tc_bwd",      "tc_vec_bwd",  "tc_wide_bwd", "tc_wgmma_bwd",     "tc_lean_bwd", "tc_bulk_bwd",
            "tc_ovl_bwd",  "tc_ws_bwd",   "tc_tile_bwd", "tc_tile_lean_bwd", "tc_kvreg_bwd", "tc_pairs_bwd",
            "tc_quads_bwd", "tc_stats_bwd", "tc_squares_bwd", "tc_stores_bwd"};
        for (int s = 0; s < BWD_STEPS - BWD_TC; s++)
            for (int t = DTYPE_FP16; t <= DTYPE_BF16 && step_runs_here(BWD_TC + s); t++) {
                cr_assert(tc[s] && tc_names[s], "step %d has no entry here", BWD_TC + s + 1);
                tc[s](d, t, &res);
                cr_assert_eq(res.local_bytes, 0, "%s d=%d %s spills %d B", tc_names[s], d, dtype_name((DType)t),
                             res.local_bytes);
                cr_assert_geq(res.blocks_per_sm, 1, "%s d=%d", tc_names[s], d);
            }
        /* step 5's point at d = 64, which steps 11 and 12 keep: two blocks of 8 warps per SM */
        void (*const two_blocks[3])(int, int, KernelResources *) = {tc_wide_bwd_resources, tc_tile_bwd_resources,
                                                                    tc_tile_lean_bwd_resources};
        for (int s = 0; s < 3 && d == 64; s++) {
            two_blocks[s](d, DTYPE_BF16, &res);
            cr_assert_geq(res.blocks_per_sm, 2, "step %d d=64: %d blocks per SM", s ? 10 + s : 5, res.blocks_per_sm);
        }
        /* steps 13 on spend the second block's registers instead: one block of 8 warps per SM at both d */
        for (int s = BWD_KV_REGS - BWD_TC; s < BWD_STEPS - BWD_TC; s++) {
            tc[s](d, DTYPE_BF16, &res);
            cr_assert_eq(res.blocks_per_sm, 1, "step %d (%s) d=%d: %d blocks per SM", BWD_TC + s + 1, tc_names[s], d,
                         res.blocks_per_sm);
        }
    }
}

Test(gpu, chapter_run_gpu_times_counts_and_checks) {
    NEED_GPU();
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    for (int step = 0; step <= BWD_STEPS; step++) { /* BWD_STEPS: step 2 with --dq pass */
        if (step < BWD_STEPS && !step_runs_here(step)) continue;
        Options o = step == BWD_STEPS ? dq_pass_shape(3, 5, 300, 64, 64, 64, 1)
                    : step >= BWD_TC  ? tc_step_shape(step, 3, 5, 300, 64, 1, DTYPE_FP16)
                                      : bwd_shape(3, 5, 300, 64, 64, 32, 1, step);
        o.reps = 3;
        KernelRun runs[MAX_KERNELS + 1];
        memset(runs, 0, sizeof(runs));
        chapter_run_gpu(&chapter07, &o, &dev, runs);
        KernelModel m[MAX_KERNELS];
        memset(m, 0, sizeof(m));
        const int n = bwd_models(&o, m);
        for (int k = 0; k < n; k++) {
            cr_assert(runs[k].have_time && runs[k].time.median_ms > 0, "%s", m[k].kernel);
            cr_assert_eq(runs[k].counted.read, m[k].model.read, "%s", m[k].kernel);
            cr_assert_eq(runs[k].counted.write, m[k].model.write, "%s", m[k].kernel);
        }
        cr_assert(runs[n - 1].have_check && error_ok(&runs[n - 1].err, runs[n - 1].tol), "rel %.3e", runs[n - 1].err.rel);
    }
}
