/* Chapter 05's first step, the wmma kernel (--kernel wmma, 1_wmma.cu): on the GPU, both builds, O and L against
 * the float64 reference under the chapter's rule, fp16 and bf16, d = 64 and 128, causal and not, ragged N, B and
 * H > 1; poisoned outputs fully written; counted == model to the byte; no spills; the program's run. Without a
 * CUDA device the GPU tests skip (with REQUIRE_GPU=1 they fail instead). On the CPU: the table the chapter picks
 * for --kernel wmma, its name in the model, and its CPU version counted and checked. */
#include "ch05_test.h"

static void wmma_gpu_N(int B, int H, int N) {
    NEED_GPU();
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    check_wmma(&dev, B, H, N);
}

Test(gpu, wmma_N_1) { wmma_gpu_N(2, 3, 1); }
Test(gpu, wmma_N_17) { wmma_gpu_N(2, 3, 17); }
Test(gpu, wmma_N_65) { wmma_gpu_N(2, 3, 65); }
Test(gpu, wmma_N_1000) { wmma_gpu_N(2, 3, 1000); }
Test(gpu, wmma_N_1024) { wmma_gpu_N(1, 2, 1024); }
Test(gpu, wmma_N_4097_sampled_rows) { wmma_gpu_N(1, 2, 4097); }

Test(gpu, wmma_resources_no_spills) {
    NEED_GPU();
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    for (int x = 0; x < 2; x++)
        for (int y = 0; y < 2; y++) {
            if (TC_DTYPES[x] == DTYPE_BF16 && dev.cc_major < 8) continue;
            const size_t smem = wmma_smem_bytes(WMMA_BR, WMMA_BC, TC_DIMS[y]);
            if (smem > (size_t)dev.smem_per_block_optin) continue;
            KernelResources res;
            flash_wmma_resources(TC_DIMS[y], WMMA_BR, WMMA_BC, TC_DTYPES[x], &res);
            cr_assert_eq(res.local_bytes, 0, "d=%d %s spills", TC_DIMS[y], dtype_name(TC_DTYPES[x]));
            cr_assert_eq(res.threads, WMMA_THREADS);
            cr_assert_geq(res.blocks_per_sm, 1);
            cr_assert_eq(res.smem_bytes, smem);
        }
}

Test(gpu, wmma_chapter_run_gpu_times_counts_and_checks) {
    NEED_GPU();
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    Options o = wmma_shape(3, 5, 300, 64, DTYPE_FP16, 1);
    o.reps = 3;
    KernelRun runs[MAX_KERNELS + 1];
    memset(runs, 0, sizeof(runs));
    chapter_run_gpu(&chapter05, &o, &dev, runs);
    KernelModel m[MAX_KERNELS];
    memset(m, 0, sizeof(m));
    cr_assert_eq(chapter05.models(&o, m), 1);
    cr_assert_str_eq(m[0].kernel, "flash_wmma");
    cr_assert(runs[0].have_time && runs[0].have_counted && runs[0].have_check);
    cr_assert_eq(runs[0].counted.read, m[0].model.read);
    cr_assert_eq(runs[0].counted.write, m[0].model.write);
    cr_assert(error_ok(&runs[0].err, runs[0].tol), "rel %.3e tol %.3e", runs[0].err.rel, runs[0].tol);
}

/* The program on the GPU: a ragged causal bf16 run of the wmma kernel passes its check (exit 0, " ok"). */
Test(gpu, wmma_program_run_checks_bf16_causal_ragged) {
    NEED_GPU();
    DeviceInfo dev;
    cr_assert(device_query(&dev));
    if (dev.cc_major < 8) cr_skip_test("bf16 needs sm_80");
    char out[16384];
    cr_assert_eq(run_chapter("05", "--kernel wmma --batch 2 --heads 3 --seq 77 --dtype bf16 --causal --reps 2", out,
                             sizeof(out)),
                 0, "%s", out);
    cr_assert(strstr(out, "flash_wmma"), "%s", out);
    cr_assert(strstr(out, " ok"), "%s", out);
}

/* ---- no GPU needed ---------------------------------------------------------------------------------------- */

Test(kernels, the_chapter_picks_a_table_per_kernel) {
    Options o = tc_shape(1, 1, 64, 64, DTYPE_FP16, 0);
    const char *names[] = {"wmma",          "mma_staged", "repack", "o_registers", "swizzle",  "mma_plain",
                           "unrolled_copy", "edge_masks", "mma",    "cp_async",    "mma_async"};
    const char *report[] = {"flash_wmma",          "flash_mma_staged", "flash_repack", "flash_o_registers",
                            "flash_swizzle",       "flash_mma_plain",  "flash_unrolled_copy",
                            "flash_edge_masks",    "flash_mma",        "flash_cp_async", "flash_mma_async"};
    cr_assert_eq(sizeof(names) / sizeof(names[0]), TC_KERNEL_COUNT);
    char msg[512];
    for (int k = 0; k < TC_KERNEL_COUNT; k++) {
        cr_assert_eq(option_set(&o, chapter05.options, "kernel", names[k], msg, sizeof(msg)), 0, "%s", msg);
        cr_assert_eq(tc_kernel_of(&o), k, "%s", names[k]);
        cr_assert_eq(chapter_attention(&chapter05, &o), &flash_tc_kernels[k], "%s", names[k]);
        KernelModel m[MAX_KERNELS];
        memset(m, 0, sizeof(m));
        cr_assert_eq(chapter05.models(&o, m), 1);
        cr_assert_str_eq(m[0].kernel, report[k]);
    }
    o.chapter[CH05_OPT_KERNEL] = (OptionValue){0};
    cr_assert_eq(tc_kernel_of(&o), TC_KERNEL_MMA_ASYNC, "the default is mma_async");
    cr_assert_eq(option_set(&o, chapter05.options, "kernel", "foo", msg, sizeof(msg)), 2);
    cr_assert(strstr(msg, "--kernel foo") && strstr(msg, TC_KERNEL_NAMES), "%s", msg);
}

Test(kernels, wmma_has_one_tile_and_its_shared_memory) {
    Options o = wmma_shape(1, 1, 64, 64, DTYPE_FP16, 0);
    char msg[512];
    cr_assert_eq(chapter05.validate(&o, NULL, msg, sizeof(msg)), 0, "%s", msg);
    o.Br = 128;
    cr_assert_eq(chapter05.validate(&o, NULL, msg, sizeof(msg)), 2);
    cr_assert(strstr(msg, "--br 128"), "%s", msg);
    /* Q_i, K_j, V_j: 64 rows of d + 8 two-byte elements each; S: 64 x 68 floats; O: 64 x (d + 4) floats */
    cr_assert_eq(wmma_smem_bytes(64, 64, 64), 3 * 64 * 72 * 2 + 64 * 68 * 4 + 64 * 68 * 4);
    cr_assert_eq(wmma_smem_bytes(64, 64, 128), 3 * 64 * 136 * 2 + 64 * 68 * 4 + 64 * 132 * 4);
    cr_assert_leq(wmma_smem_bytes(64, 64, 64), 64 * 1024, "d = 64 fits sm_75's 64 KB per block");
}

Test(cpu, wmma_version_counts_and_checks) {
    const int Ns[] = {1, 17, 65, 130};
    for (size_t n = 0; n < sizeof(Ns) / sizeof(Ns[0]); n++) check_wmma(NULL, 2, 3, Ns[n]);
}
