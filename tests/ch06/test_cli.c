/* Chapter 06's program from the outside: bad input exits 2 with a message; --model prints the bytes, the wgmma
 * count and each kernel's shared memory; a CPU run of a ragged causal bf16 shape passes its check; a GPU that is
 * not sm_90 is refused. */
#include "ch06_test.h"

static int run_cli(const char *args, char *out, size_t len) { return run_chapter("06", args, out, len); }

Test(cli, bad_input_exits_2_with_a_message) {
    const struct {
        const char *args, *says;
    } bad[] = {{"--model --dtype fp32", "fp16 or bf16"}, {"--model --dim 32", "--dim 32"},
               {"--model --dim 256", "--dim 256"},      {"--model --dtype fp8", "--dtype"},
               {"--model --kernel wgmma --br 128", "--br"}, {"--model --layout naive", "--layout"},
               {"--model --kernel tma --batch 1000 --heads 1000", "65535"},
               {"--model --kernel tma_store --batch 50000 --heads 50000 --seq 192", "work items"},
               {"--model --kernel mma_async",
                "wgmma, tma, warp_specialized, pingpong, overlap, zigzag, queue, tma_store, dispatch"},
               {"--model --kernel dispatch --br 64 --bc 128", "dispatch runs tma's kernel at Br = 64"},
               {"--model --kernel dispatch --br 192 --dim 128", "tma_store is compiled for Br = 128"},
               {"--model --kernel warp_specialized --br 64", "--br 64"},
               {"--model --kernel warp_specialized --bc 32", "--bc 32"},
               {"--model --kernel warp_specialized --br 192 --dim 128", "Br = 192 (three consumer warpgroups)"},
               {"--model --kernel warp_specialized --br 192 --bc 64", "--br 192 --bc 64"},
               {"--model --kernel pingpong --br 192 --dim 128", "pingpong is compiled for Br = 128"},
               {"--model --kernel overlap --bc 256", "--bc 256"},
               {"--model --kernel tma --bc 128", "--bc 128"},
               {"--model --kernel", "needs a value"}};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) assert_rejected("06", bad[k].args, bad[k].says);
}

/* The article's shape: Q once, K and V for each of the 16 query blocks (Br = 64), 2 bytes each; O in fp16 and L in
 * fp32: chapter 05's bytes at its Br = 64. */
Test(cli, model_csv_has_the_fp16_bytes) {
    char out[8192];
    cr_assert_eq(run_cli("--model --kernel wgmma --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n06,flash_wgmma,model,10,64,1024,64,fp16,171798691840,2768240640,86507520,"), "%s", out);
}

Test(cli, model_lines_show_the_warpgroup_and_the_wgmma) {
    char out[8192];
    cr_assert_eq(run_cli("--model --kernel wgmma", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "kernel flash_wgmma (--kernel wgmma); grid (Tr, B*H) = (16, 640): 10,240 blocks of 128 "
                          "threads (one warpgroup"),
              "%s", out);
    /* 2 (64 64 + 4 64 64) = 40,960 bytes; 640 heads x 256 K/V blocks x 8 wgmma */
    cr_assert(strstr(out, "shared memory per block: 40,960 B"), "%s", out);
    cr_assert(strstr(out, "wgmma per K/V block: 4 m64n64k16 for S (Q_i, K_j from shared memory) + 4 m64n64k16 for O"),
              "%s", out);
    cr_assert(strstr(out, "; 1,310,720 in all"), "%s", out);
    cr_assert_eq(run_cli("--model --kernel wgmma --dim 128 --causal --dtype bf16", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "shared memory per block: 81,920 B"), "%s", out);
    /* 640 heads x 136 K/V blocks on and below the diagonal x 12 wgmma */
    cr_assert(strstr(out, "wgmma per K/V block: 8 m64n64k16 for S (Q_i, K_j from shared memory) + 4 m64n128k16 for O"),
              "%s", out);
    cr_assert(strstr(out, "; 1,044,480 in all"), "%s", out);
}

/* --kernel tma: the same bytes under its own name; its shared memory holds two mbarriers more. */
Test(cli, model_of_the_tma_kernel) {
    char out[8192];
    cr_assert_eq(run_cli("--model --kernel tma --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n06,flash_tma,model,10,64,1024,64,fp16,171798691840,2768240640,86507520,"), "%s", out);
    cr_assert_eq(run_cli("--model --kernel tma --dim 128", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "kernel flash_tma (--kernel tma)"), "%s", out);
    cr_assert(strstr(out, "shared memory per block: 81,936 B (2 (Br d + 4 Bc d) + 16 bytes"), "%s", out);
    cr_assert(strstr(out, "copies: by the tensor memory accelerator"), "%s", out);
}

/* --kernel warp_specialized: its own tiles (without --br, --bc 192 x 128 at d = 64, 128 x 128 at d = 128), so its
 * own bytes: Q once, K and V for each query tile; the work items, the persistent grid, the ring of stages and the
 * wgmma of every consumer. */
Test(cli, model_of_the_warp_specialized_kernel) {
    char out[8192];
    cr_assert_eq(run_cli("--model --kernel warp_specialized --csv -", out, sizeof(out)), 0, "%s", out);
    /* 640 heads x 2 B x 64 x (1024 + 2 x 6 x 1024): 6 query tiles of 192 rows */
    cr_assert(strstr(out, "\n06,flash_warp_specialized,model,10,64,1024,64,fp16,171798691840,1090519040,86507520,"),
              "%s", out);
    cr_assert_eq(run_cli("--model --kernel warp_specialized", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "work items (Tr x B*H) = 6 x 640 = 3,840 (a Q tile of 192 rows of one head)"), "%s", out);
    cr_assert(strstr(out, "blocks of 512 threads: a producer warpgroup (copies) and 3 consumer warpgroups"), "%s", out);
    /* 4 192 64 + 5 (4 128 64 + 16) + 16 */
    cr_assert(strstr(out, "shared memory per block: 213,088 B"), "%s", out);
    cr_assert(strstr(out, "into a ring of 5 stages"), "%s", out);
    /* 640 heads x 6 x 8 K/V blocks x 3 consumers x (4 + 8) */
    cr_assert(strstr(out, "in each of 3 consumer warpgroups; 1,105,920 in all"), "%s", out);
    /* causal and short (N <= 1024): 128 rows at d = 64 as well */
    cr_assert_eq(run_cli("--model --kernel warp_specialized --causal", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "(a Q tile of 128 rows of one head)"), "%s", out);
    cr_assert_eq(run_cli("--model --kernel warp_specialized --causal --seq 2048", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "(a Q tile of 192 rows of one head)"), "%s", out);
    cr_assert_eq(run_cli("--model --kernel warp_specialized --dim 128", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "(a Q tile of 128 rows of one head)"), "%s", out);
    cr_assert(strstr(out, "K/V blocks of 128 keys"), "%s", out);
    cr_assert_eq(run_cli("--model --kernel warp_specialized --br 128 --csv -", out, sizeof(out)), 0, "%s", out);
    /* 640 heads x 2 B x 64 x (1024 + 2 x 8 x 1024) */
    cr_assert(strstr(out, "\n06,flash_warp_specialized,model,10,64,1024,64,fp16,171798691840,1426063360,86507520,"),
              "%s", out);
    cr_assert_eq(run_cli("--model --kernel warp_specialized --br 128", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "work items (Tr x B*H) = 8 x 640 = 5,120 (a Q tile of 128 rows of one head)"), "%s", out);
    cr_assert(strstr(out, "blocks of 384 threads: a producer warpgroup (copies) and 2 consumer warpgroups"), "%s", out);
    /* 4 128 64 + 6 (4 128 64 + 16) + 16 */
    cr_assert(strstr(out, "shared memory per block: 229,488 B (4 Br d + S (4 Bc d + 16) + 16 bytes"), "%s", out);
    cr_assert(strstr(out, "into a ring of 6 stages"), "%s", out);
    /* 640 heads x 8 x 8 K/V blocks x 2 consumers x (4 + 8) */
    cr_assert(strstr(out, "wgmma per K/V block: 4 m64n128k16 for S (Q_i, K_j from shared memory) + 8 m64n64k16 for O "
                          "(P from registers, V_j from shared memory), in each of 2 consumer warpgroups; 983,040 in "
                          "all"),
              "%s", out);
    cr_assert_eq(run_cli("--model --kernel warp_specialized --dim 128 --bc 64", out, sizeof(out)), 0, "%s", out);
    /* 4 128 128 + 5 (4 64 128 + 16) + 16 */
    cr_assert(strstr(out, "shared memory per block: 229,472 B"), "%s", out);
    cr_assert(strstr(out, "into a ring of 5 stages"), "%s", out);
}

/* Steps 4 and 5 (pingpong, overlap): step 3's tiles, bytes, grid and ring under their own names, with the turns
 * and, for overlap, the order inside a consumer; overlap is the default kernel. */
Test(cli, model_of_the_pingpong_and_overlap_kernels) {
    char out[8192];
    const char *const steps[] = {"pingpong", "overlap"};
    for (int k = 0; k < 2; k++) {
        char args[128];
        snprintf(args, sizeof(args), "--model --kernel %s --csv -", steps[k]);
        cr_assert_eq(run_cli(args, out, sizeof(out)), 0, "%s", out);
        char row[128]; /* step 3's bytes at 192 x 128 */
        snprintf(row, sizeof(row), "\n06,flash_%s,model,10,64,1024,64,fp16,171798691840,1090519040,86507520,", steps[k]);
        cr_assert(strstr(out, row), "%s", out);
        snprintf(args, sizeof(args), "--model --kernel %s --dim 128", steps[k]);
        cr_assert_eq(run_cli(args, out, sizeof(out)), 0, "%s", out);
        cr_assert(strstr(out, "(a Q tile of 128 rows of one head)"), "%s", out);
        cr_assert(strstr(out, "blocks of 384 threads: a producer warpgroup (copies) and 2 consumer warpgroups"), "%s",
                  out);
        cr_assert(strstr(out, "turns: the consumers issue their products"), "%s", out);
        cr_assert_eq(strstr(out, "overlap: in each consumer S_ij") != NULL, k == 1, "%s", out);
        /* 4 128 128 + 2 (4 128 128 + 16) + 16 for step 4; step 5: 4 128 128 + (2 + 3) (2 128 128 + 16) + 16 */
        cr_assert(strstr(out, k == 0 ? "shared memory per block: 196,656 B" : "shared memory per block: 229,472 B"),
                  "%s", out);
        if (k == 1)
            cr_assert(strstr(out, "K_j into a ring of 2 stages and V_j into one of 3"), "%s", out);
    }
}

/* Step 6 (zigzag): step 5's tiles, bytes and rings under its own name, and the balance of the persistent grid's
 * work that it changes, from the model (132 blocks without a GPU): under the causal mask at 16k tokens, d = 128,
 * the most loaded block has 6.3% more K/V blocks than the mean in the order of steps 3-5 and 0.2% more in the
 * zigzag; without the mask every item is as long as the next (2048 items on 132 blocks: 16 or 15 each). */
Test(cli, model_of_the_zigzag_kernel) {
    char out[8192];
    cr_assert_eq(run_cli("--model --kernel zigzag --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n06,flash_zigzag,model,10,64,1024,64,fp16,171798691840,1090519040,86507520,"), "%s", out);
    cr_assert_eq(run_cli("--model --kernel zigzag --causal --dim 128 --batch 1 --heads 16 --seq 16384", out,
                         sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "K_j into a ring of 2 stages and V_j into one of 3"), "%s", out);
    cr_assert(strstr(out, "work per block (K/V blocks, 132 blocks, an H200's SMs): the most loaded over the mean 1.063 "
                          "with the items handed out in order (steps 3-5), 1.002 in a zigzag (step 6, this kernel), 1.002 "
                          "from a queue (steps 7-8)"),
              "%s", out);
    cr_assert_eq(run_cli("--model --kernel zigzag --dim 128 --batch 1 --heads 16 --seq 16384", out, sizeof(out)), 0,
                 "%s", out);
    /* 2048 items of 128 blocks on 132 blocks: 16 / 15.52 */
    cr_assert(strstr(out, "the most loaded over the mean 1.031 with the items handed out in order (steps 3-5), 1.031 "
                          "in a zigzag"), "%s", out);
}

/* Step 7 (queue): step 6's tiles and rings under its own name, its counter's bytes in the model (4 read and 4 written
 * per item: at the article's shape 6 x 640 = 3840 items of 192 rows), the sections of heads under
 * the causal mask (K and V of Hs heads in 32 MB: 4 N d bytes a head) and the balance from a queue: at B = 32, H = 16,
 * N = 512, d = 128 (2048 items on 132 blocks) 1.031 in either fixed order, 1.005 from the queue. */
Test(cli, model_of_the_queue_kernel) {
    char out[8192];
    cr_assert_eq(run_cli("--model --kernel queue --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n06,flash_queue,model,10,64,1024,64,fp16,171798691840,1090534400,86522880,"), "%s", out);
    cr_assert_eq(run_cli("--model --kernel queue", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "shared memory per block: 229,584 B (4 Br d + (S_K + S_V) (2 Bc d + 16) + 32 bytes"), "%s",
              out);
    cr_assert(strstr(out, "queue: the items in step 6's order (a head's tiles in turn), the next one claimed by the "
                          "producer with an atomic increment"), "%s", out);
    cr_assert_eq(run_cli("--model --kernel queue --causal --dim 128 --batch 32 --heads 16 --seq 512", out,
                         sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "K_j into a ring of 2 stages and V_j into one of 3"), "%s", out);
    cr_assert(strstr(out, "queue: the causal items in 4 section(s) of 128 heads (K and V: 128 x 4 N d = 33,554,432 B, "
                          "of at most 32 MB"), "%s", out);
    cr_assert(strstr(out, "the most loaded over the mean 1.031 with the items handed out in order (steps 3-5), 1.031 "
                          "in a zigzag (step 6), 1.005 from a queue (steps 7-8, this kernel)"), "%s", out);
    /* 6 heads of 1000 keys fit in one section */
    cr_assert_eq(run_cli("--model --kernel queue --causal --batch 2 --heads 3 --seq 1000", out, sizeof(out)), 0, "%s",
                 out);
    cr_assert(strstr(out, "queue: the causal items in 1 section(s) of 6 heads"), "%s", out);
}

/* Step 8 (tma_store): step 7's bytes (its counter too), shared memory and rings, its queue; the epilogue by the
 * copy engine, one store per 64-feature panel of a consumer's 64 rows. */
Test(cli, model_of_the_tma_store_kernel) {
    char out[8192];
    cr_assert_eq(run_cli("--model --kernel tma_store --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n06,flash_tma_store,model,10,64,1024,64,fp16,171798691840,1090534400,86522880,"), "%s",
              out);
    cr_assert_eq(run_cli("--model --kernel tma_store", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "shared memory per block: 229,584 B (4 Br d + (S_K + S_V) (2 Bc d + 16) + 32 bytes"), "%s",
              out);
    cr_assert(strstr(out, "K_j into a ring of 5 stages and V_j into one of 6"), "%s", out);
    cr_assert(strstr(out, "epilogue: each consumer writes its 64 rows of O_i into shared memory and one of its threads "
                          "hands them to the tensor memory accelerator (1 store of 64 rows x 64 features)"),
              "%s", out);
    cr_assert(strstr(out, "queue: the items in step 6's order"), "%s", out);
    cr_assert_eq(run_cli("--model --kernel tma_store --causal --dim 128 --batch 32 --heads 16 --seq 512", out,
                         sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "K_j into a ring of 2 stages and V_j into one of 3"), "%s", out);
    cr_assert(strstr(out, "(2 stores of 64 rows x 64 features)"), "%s", out);
    cr_assert(strstr(out, "queue: the causal items in 4 section(s) of 128 heads"), "%s", out);
    cr_assert(strstr(out, "1.005 from a queue (steps 7-8, this kernel)"), "%s", out);
    cr_assert_eq(run_cli("--model --kernel queue", out, sizeof(out)), 0, "%s", out);
    cr_assert(!strstr(out, "epilogue:"), "%s", out);
}

/* Step 9 (dispatch): at d = 64 up to 1024 tokens step 2's tiles, kernel and bytes (no counter); elsewhere step
 * 8's; --br picks the kernel. The default kernel, the fastest measured (README, "Measured"). */
Test(cli, model_of_the_dispatch_kernel) {
    char out[8192];
    cr_assert_eq(run_cli("--model --kernel dispatch --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n06,flash_dispatch,model,10,64,1024,64,fp16,171798691840,2768240640,86507520,"), "%s",
              out);
    cr_assert_eq(run_cli("--model --kernel dispatch", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "dispatch: the kernel by the tile, the tile by the problem: Br = 64 runs tma's kernel (by "
                          "default at d = 64 up to N = 1024), Br = 128 or 192 tma_store's; at Br = 64 it is tma's"),
              "%s", out);
    cr_assert(strstr(out, "kernel flash_tma (--kernel tma); grid (Tr, B*H) = (16, 640)"), "%s", out);
    cr_assert(strstr(out, "shared memory per block: 40,976 B"), "%s", out);
    /* d = 128, or N = 2048: step 8's tiles, its counter's bytes (as --kernel tma_store's) */
    char ts[8192];
    cr_assert_eq(run_cli("--model --kernel dispatch --dim 128 --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert_eq(run_cli("--model --kernel tma_store --dim 128 --csv -", ts, sizeof(ts)), 0, "%s", ts);
    const char *row = strstr(out, "\n06,flash_dispatch,model,"), *ts_row = strstr(ts, "\n06,flash_tma_store,model,");
    cr_assert(row && ts_row, "%s\n%s", out, ts);
    cr_assert_eq(strcspn(row + 25, "\n"), strcspn(ts_row + 26, "\n"));
    cr_assert_eq(strncmp(row + 25, ts_row + 26, strcspn(row + 25, "\n")), 0, "%s\n%s", row, ts_row);
    cr_assert_eq(run_cli("--model --kernel dispatch --seq 2048 --causal", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "at Br = 192 it is tma_store's"), "%s", out);
    cr_assert(strstr(out, "epilogue: each consumer writes its 64 rows of O_i"), "%s", out);
    cr_assert_eq(run_cli("--model --kernel dispatch --seq 1024 --causal --br 128", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "kernel flash_tma_store (--kernel tma_store); work items (Tr x B*H) = 8 x 640"), "%s", out);
    cr_assert_eq(run_cli("--model --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n06,flash_dispatch,model,"), "the default kernel: %s", out);
}

Test(cli, help_lists_the_kernels) {
    char out[16384];
    cr_assert_eq(run_cli("--help", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "--kernel K       wgmma | tma | warp_specialized | pingpong | overlap | zigzag | queue |\n"),
              "%s", out);
    cr_assert(strstr(out, "--br Br          query rows per tile          (default: the kernel's own)"), "%s", out);
}

Test(cli, cpu_run_checks_bf16_causal_ragged) {
    char out[16384];
    cr_assert_eq(run_cli("--cpu --kernel tma --batch 2 --heads 2 --seq 77 --dim 128 --dtype bf16 --causal", out,
                         sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "flash_tma"), "%s", out);
    cr_assert(strstr(out, " ok"), "%s", out);
    cr_assert_eq(run_cli("--cpu --kernel warp_specialized --batch 2 --heads 2 --seq 77 --dim 64 --causal --br 192",
                         out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "flash_warp_specialized"), "%s", out);
    cr_assert(strstr(out, " ok"), "%s", out);
    cr_assert_eq(run_cli("--cpu --kernel overlap --batch 1 --heads 3 --seq 33 --dim 128 --dtype bf16", out,
                         sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "flash_overlap"), "%s", out);
    cr_assert(strstr(out, " ok"), "%s", out);
}

/* The kernels are sm_90a code: on another GPU the program says so and exits 2, where --model and --cpu still run.
 * Skips without a GPU, and on an sm_90 one. */
Test(cli, another_gpu_is_refused) {
    DeviceInfo dev;
    if (!device_query(&dev)) cr_skip_test("no CUDA device: nothing to refuse");
    if (dev.cc_major == 9 && dev.cc_minor == 0) cr_skip_test("%s is sm_90: the kernels run here", dev.name);
    assert_rejected("06", "--batch 1 --heads 1 --seq 128", "run on an sm_90 GPU only");
    char out[16384];
    cr_assert_eq(run_cli("--cpu --batch 1 --heads 1 --seq 70", out, sizeof(out)), 0, "%s", out);
}
