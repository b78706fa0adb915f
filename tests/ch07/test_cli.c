/* Chapter 07's program from the outside: bad input exits 2 with a message (a storage type a step does not take among
 * it); --model prints the steps' bytes and the backward's FLOP convention; a CPU run of a ragged causal shape passes
 * its check; --csv to a bad path stops first. */
#include "ch07_test.h"

static int run_cli(const char *args, char *out, size_t len) { return run_chapter("07", args, out, len); }

Test(cli, bad_input_exits_2_with_a_message) {
    const struct {
        const char *args, *says;
    } bad[] = {{"--model --kernel foo", "naive"},           {"--model --kernel", "needs a value"},
               {"--model --dtype fp16", "--dtype"},          {"--model --dtype bf16", "--dtype"},
               {"--model --br 16", "--br 16"},               {"--model --bc 128", "--bc 128"},
               {"--model --dim 48", "--dim 48"},             {"--model --batch 256 --heads 256", "65535"},
               {"--model --seq 0", "--seq"},                 {"--cpu --seq 64 --br 48", "--br 48"},
               {"--model --gemm cublas", "--gemm"},
               {"--model --kernel flash --dtype fp16", "--kernel tensor_cores"},
               {"--model --kernel naive --dtype bf16", "fp32"},
               {"--model --kernel tensor_cores --dtype fp32", "fp16 or bf16"},
               {"--model --kernel tensor_cores --dim 32", "d = 64 and 128"},
               {"--model --kernel tensor_cores --br 32", "--br 32"},
               {"--model --kernel tensor_cores --bc 32", "--bc 32"},
               {"--cpu --kernel tensor_cores --dtype fp32 --seq 64", "fp16 or bf16"},
               {"--model --kernel dq_vectors --dim 32", "--kernel dq_vectors"},
               {"--model --kernel wide_blocks --dtype fp32", "--kernel wide_blocks"},
               {"--model --kernel wide_blocks --bc 64", "--bc 64"},
               {"--model --kernel wide_blocks --br 128", "--br 128"},
               {"--model --kernel wgmma --dtype fp32", "--kernel wgmma"},
               {"--model --kernel wgmma --bc 64", "--bc 64"},
               {"--model --kernel wgmma --dim 32", "d = 64 and 128"},
               {"--model --kernel lean_loop --dtype fp32", "--kernel lean_loop"},
               {"--model --kernel lean_loop --br 128", "--br 128"},
               {"--model --kernel dq_bulk --dtype fp32", "--kernel dq_bulk"},
               {"--model --kernel dq_bulk --dim 32", "d = 64 and 128"},
               {"--model --kernel dq_overlap --dtype fp32", "--kernel dq_overlap"},
               {"--model --kernel dq_overlap --bc 64", "--bc 64"},
               {"--model --kernel warp_specialized --dtype fp32", "--kernel warp_specialized"},
               {"--model --kernel warp_specialized --dim 32", "d = 64 and 128"},
               {"--model --kernel warp_tiles --dtype fp32", "--kernel warp_tiles"},
               {"--model --kernel warp_tiles --bc 64", "--bc 64"},
               {"--model --kernel lean_tiles --dim 32", "d = 64 and 128"},
               {"--model --kernel lean_tiles --br 128", "--br 128"},
               {"--model --kernel kv_registers --br 64", "its Br is 128"},
               {"--model --kernel kv_registers --dim 128 --br 128", "its Br is 64"},
               {"--model --kernel kv_registers --bc 64", "--bc 64"},
               {"--model --kernel dq_pairs --br 64", "its Br is 128"},
               {"--model --kernel dq_pairs --dtype fp32", "--kernel dq_pairs"},
               {"--model --kernel dq_quads --dim 128 --br 128", "its Br is 64"},
               {"--model --kernel dq_quads --bc 64", "--bc 64"},
               {"--model --kernel stat_copies --br 64", "its Br is 128"},
               {"--model --kernel stat_copies --dtype fp32", "--kernel stat_copies"},
               {"--model --kernel dq_squares --dim 128 --br 128", "its Br is 64"},
               {"--model --kernel dq_squares --dtype fp32", "--kernel dq_squares"},
               {"--model --kernel matrix_stores --br 64", "its Br is 128"},
               {"--model --kernel matrix_stores --dtype fp32", "--kernel matrix_stores"},
               {"--model --dq", "needs a value"},            {"--model --dq atomics", "atomic, pass"},
               {"--model --kernel tensor_cores --dq pass", "--kernel flash"},
               {"--model --kernel naive --dq pass", "--kernel naive"},
               {"--model --dq pass --br 64 --bc 32", "Br = Bc"}};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) assert_rejected("07", bad[k].args, bad[k].says);
}

/* The article's size, Br = Bc = 32: flash_bwd loads Q_i, dO_i, L_i, D_i for each of the Tc = 32 key blocks (with the
 * mask, from the diagonal on), K_j and V_j once, and adds dQ_i's share with atomics (counted as writes). */
Test(cli, model_csv_has_the_article_bytes) {
    char out[16384];
    cr_assert_eq(run_cli("--model --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n07,flash_bwd,model,10,64,1024,64,fp32,429496729600,11240734720,5704253440,"), "%s", out);
    cr_assert(strstr(out, "\n07,forward,model,10,64,1024,64,fp32,171798691840,10905190400,170393600,"),
              "the forward: chapter 03's bytes at 32 x 32: %s", out);
    cr_assert(strstr(out, "\n07,backward,model,"), "the total row is the backward's: %s", out);
    cr_assert_eq(run_cli("--model --causal --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n07,flash_bwd,model,10,64,1024,64,fp32,214748364800,5958533120,3103784960,"),
              "causal: half the FLOPs, the query blocks above the diagonal not read: %s", out);
    cr_assert_eq(run_cli("--model --kernel naive --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n07,naive_p,model,10,64,1024,64,fp32,85899345920,5410652160,2684354560,"),
              "naive_p: the Q and K panels of 16 x 16 tiles, L, and P written: %s", out);
}

/* --dq pass at the article's size, Br = Bc = 32: flash_dq reads Q_i, dO_i, O_i and L_i once and K_j, V_j for each of
 * the Tr = 32 query blocks, writes D and dQ once; flash_dkdv is flash_bwd without the atomics' 4 d bytes per row
 * visit. The FLOPs: dQ's product in flash_dq, the other four in flash_dkdv. */
Test(cli, model_dq_pass_bytes_and_flops) {
    char out[16384];
    cr_assert_eq(run_cli("--model --dq pass --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n07,flash_dq,model,10,64,1024,64,fp32,85899345920,11243356160,170393600,"), "%s", out);
    cr_assert(strstr(out, "\n07,flash_dkdv,model,10,64,1024,64,fp32,343597383680,11240734720,335544320,"), "%s", out);
    cr_assert(strstr(out, "\n07,backward,model,10,64,1024,64,fp32,429496729600,22484090880,505937920,"),
              "the total: the book's 10 B H N^2 d: %s", out);
    cr_assert(!strstr(out, "flash_bwd"), "no flash_bwd_d, no flash_bwd: %s", out);
}

/* Step 3: fp16 without --dtype, Br = Bc = 64 without --br, --bc; K, V, dK, dV once and Q_i, dO_i per visit in 2
 * bytes, L_i, D_i and dQ_i's atomic adds in 4. */
Test(cli, model_tensor_cores_bytes_and_defaults) {
    char out[16384];
    cr_assert_eq(run_cli("--model --kernel tensor_cores --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n07,tc_bwd,model,10,64,1024,64,fp16,429496729600,2936012800,2852126720,"), "%s", out);
    cr_assert(strstr(out, "\n07,tc_bwd_d,model,10,64,1024,64,fp16,0,167772160,170393600,"), "%s", out);
    cr_assert_eq(run_cli("--model --kernel tensor_cores --dtype bf16 --causal --csv -", out, sizeof(out)), 0, "%s",
                 out);
    cr_assert(strstr(out, "\n07,tc_bwd,model,10,64,1024,64,bf16,214748364800,1638400000,1593835520,"), "%s", out);
    cr_assert_eq(run_cli("--model --kernel tensor_cores", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "Br=64 Bc=64") && strstr(out, "grid (Tc, B*H) = (16, 640)"), "%s", out);
}

/* Steps 4 and 5 move step 3's bytes at their tiles: step 4 the same (its atomics are 16 bytes, the same floats);
 * step 5's Bc = 128 halves the visits of the query blocks: Q_i, dO_i, L_i, D_i loaded and dQ_i's share added
 * Tc = 8 times per head instead of 16. */
Test(cli, model_steps_4_and_5_bytes_and_tiles) {
    char out[16384];
    cr_assert_eq(run_cli("--model --kernel dq_vectors --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n07,tc_vec_bwd,model,10,64,1024,64,fp16,429496729600,2936012800,2852126720,"), "%s", out);
    cr_assert(strstr(out, "\n07,tc_bwd_d,model,"), "step 3's tc_bwd_d runs first: %s", out);
    cr_assert_eq(run_cli("--model --kernel wide_blocks --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n07,tc_wide_bwd,model,10,64,1024,64,fp16,429496729600,1551892480,1509949440,"), "%s",
              out);
    cr_assert_eq(run_cli("--model --kernel wide_blocks", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "Br=64 Bc=128") && strstr(out, "grid (Tc, B*H) = (8, 640): 5,120 blocks of 256 threads"),
              "%s", out);
}

/* Steps 6 to 10 load, store and add exactly what step 5 does (the same tiles and loop; the instructions changed, in
 * step 8 who adds dQ, in step 9 when its product is waited on, in step 10 which warps copy and add), and run on sm_90
 * alone: another GPU gets exit 2 and a message naming the step, before anything runs. Step 8's shared memory has dQ_s
 * besides: 101,376 bytes at d = 64; step 9's a second dS_ij^T tile: 117,760; step 10's five mbarriers: 117,800, and
 * its blocks a producer warpgroup: 384 threads. */
Test(cli, model_steps_6_to_10_are_step_5s_bytes) {
    char out[16384];
    const struct {
        const char *kernel, *row, *says;
    } steps[] = {{"wgmma", "tc_wgmma_bwd", "6 (wgmma: two warpgroups of 64 keys)"},
                 {"lean_loop", "tc_lean_bwd", "7 (lean_loop: step 6 issuing fewer instructions)"},
                 {"dq_bulk", "tc_bulk_bwd", "8 (dq_bulk: dQ_i added by the copy engine)"},
                 {"dq_overlap", "tc_ovl_bwd", "9 (dq_overlap: dQ_i's product runs into the next visit)"},
                 {"warp_specialized", "tc_ws_bwd", "10 (warp_specialized: a producer warpgroup copies and adds dQ)"}};
    const char *const smem[] = {"shared memory per block: 82,944 B = (2 Bc d + 4 Br d + Bc Br) e + 16 Br bytes",
                                "shared memory per block: 82,944 B = (2 Bc d + 4 Br d + Bc Br) e + 16 Br bytes",
                                "shared memory per block: 101,376 B = (2 Bc d + 4 Br d + Bc Br) e + 16 Br + "
                                "4 Br (d + 8) bytes",
                                "shared memory per block: 117,760 B = (2 Bc d + 4 Br d + 2 Bc Br) e + 16 Br + "
                                "4 Br (d + 8) bytes",
                                "shared memory per block: 117,800 B = (2 Bc d + 4 Br d + 2 Bc Br) e + 16 Br + "
                                "4 Br (d + 8) + 40 bytes"};
    for (int k = 0; k < 5; k++) {
        char args[128], row[128];
        snprintf(args, sizeof(args), "--model --kernel %s --csv -", steps[k].kernel);
        cr_assert_eq(run_cli(args, out, sizeof(out)), 0, "%s", out);
        snprintf(row, sizeof(row), "\n07,%s,model,10,64,1024,64,fp16,429496729600,1551892480,1509949440,",
                 steps[k].row);
        cr_assert(strstr(out, row), "%s: %s", row, out);
        cr_assert(strstr(out, "\n07,tc_bwd_d,model,"), "step 3's tc_bwd_d runs first: %s", out);
        snprintf(args, sizeof(args), "--model --kernel %s", steps[k].kernel);
        cr_assert_eq(run_cli(args, out, sizeof(out)), 0, "%s", out);
        cr_assert(strstr(out, steps[k].says), "%s", out);
        cr_assert(strstr(out, k < 4 ? "grid (Tc, B*H) = (8, 640): 5,120 blocks of 256 threads"
                                    : "grid (Tc, B*H) = (8, 640): 5,120 blocks of 384 threads"),
                  "%s", out);
        cr_assert(strstr(out, smem[k]), "%s: %s", smem[k], out);
        DeviceInfo other = {.present = 1, .cc_major = 8, .cc_minor = 0, .smem_per_block_optin = 232448};
        snprintf(other.name, sizeof(other.name), "an sm_80 GPU");
        Options o = tc_step_shape(BWD_WGMMA + k, 1, 1, 256, 64, 0, DTYPE_FP16);
        char msg[512] = "", says[64];
        cr_assert_eq(chapter07.validate(&o, &other, msg, sizeof(msg)), 2);
        snprintf(says, sizeof(says), "--kernel %s needs an sm_90 GPU", steps[k].kernel);
        cr_assert(strstr(msg, says), "%s", msg);
        other.cc_major = 9;
        cr_assert_eq(chapter07.validate(&o, &other, msg, sizeof(msg)), 0, "%s", msg);
    }
}

/* Steps 11 and 12 (mma.sync again) load, store and add exactly what step 5 does (the same tiles and loop; the warps'
 * parts of each product changed, and in step 12 the instructions around them); their shared memory has P_ij^T
 * besides: 99,328 bytes at d = 64. They run on any GPU from sm_80 on, bf16 included. */
Test(cli, model_steps_11_and_12_are_step_5s_bytes) {
    char out[16384];
    const struct {
        const char *kernel, *row, *says;
    } steps[] = {{"warp_tiles", "tc_tile_bwd", "11 (warp_tiles: a warp tiling per product, mma.sync)"},
                 {"lean_tiles", "tc_tile_lean_bwd", "12 (lean_tiles: step 11 issuing fewer instructions)"}};
    for (int k = 0; k < 2; k++) {
        char args[128], row[128];
        snprintf(args, sizeof(args), "--model --kernel %s --csv -", steps[k].kernel);
        cr_assert_eq(run_cli(args, out, sizeof(out)), 0, "%s", out);
        snprintf(row, sizeof(row), "\n07,%s,model,10,64,1024,64,fp16,429496729600,1551892480,1509949440,",
                 steps[k].row);
        cr_assert(strstr(out, row), "%s: %s", row, out);
        cr_assert(strstr(out, "\n07,tc_bwd_d,model,"), "step 3's tc_bwd_d runs first: %s", out);
        snprintf(args, sizeof(args), "--model --kernel %s", steps[k].kernel);
        cr_assert_eq(run_cli(args, out, sizeof(out)), 0, "%s", out);
        cr_assert(strstr(out, steps[k].says), "%s", out);
        cr_assert(strstr(out, "grid (Tc, B*H) = (8, 640): 5,120 blocks of 256 threads"), "%s", out);
        cr_assert(strstr(out, "shared memory per block: 99,328 B = (2 Bc d + 4 Br d + 2 Bc Br) e + 16 Br bytes"),
                  "%s", out);
        cr_assert(strstr(out, "dQ: fp32 atomic adds"), "%s", out);
        DeviceInfo other = {.present = 1, .cc_major = 8, .cc_minor = 0, .smem_per_block_optin = 232448};
        snprintf(other.name, sizeof(other.name), "an sm_80 GPU");
        Options o = tc_step_shape(BWD_TILE + k, 1, 1, 256, 64, 0, DTYPE_BF16);
        char msg[512] = "";
        cr_assert_eq(chapter07.validate(&o, &other, msg, sizeof(msg)), 0, "%s", msg);
    }
}

/* The model's CSV row of kernel `after` (run as --kernel after_step) against that of `before` (--kernel before_step)
 * at each shape: the same in its first `fields` comma-separated fields, or in the whole row where fields is 0. */
static void assert_same_model_row(const char *before_step, const char *before, const char *after_step,
                                  const char *after, const char *const *shapes, size_t n, int fields) {
    char out[16384], ref[16384];
    for (size_t k = 0; k < n; k++) {
        char args[160], row_a[96], row_b[96];
        snprintf(args, sizeof(args), "--model --kernel %s --csv - %s", before_step, shapes[k]);
        cr_assert_eq(run_cli(args, ref, sizeof(ref)), 0, "%s", ref);
        snprintf(args, sizeof(args), "--model --kernel %s --csv - %s", after_step, shapes[k]);
        cr_assert_eq(run_cli(args, out, sizeof(out)), 0, "%s", out);
        snprintf(row_a, sizeof(row_a), "\n07,%s,model,", before);
        snprintf(row_b, sizeof(row_b), "\n07,%s,model,", after);
        const char *a = strstr(ref, row_a), *b = strstr(out, row_b);
        cr_assert(a && b, "%s: %s %s", shapes[k], ref, out);
        a += strlen(row_a), b += strlen(row_b);
        size_t upto = strcspn(a, "\n");
        if (fields > 0) {
            upto = 0;
            for (int f = 0; f < fields; f++) upto += strcspn(a + upto, ",") + 1;
        }
        cr_assert(strncmp(a, b, upto) == 0, "%s: %s %.*s, %s %.*s", shapes[k], before_step, (int)upto, a, after_step,
                  (int)upto, b);
    }
}

/* Step 13 loads, stores and adds what steps 5 and 12 do: its Br (128 at d = 64) changes how many visits a block makes,
 * not which rows it loads, since every key block starts at a multiple of 128 (the causal mask's first query block
 * starts at the block's first key in both). Its shared memory: step 11's formula at its Br. */
Test(cli, model_step_13_is_step_12s_bytes_at_its_own_br) {
    char out[16384];
    const char *shapes[] = {"", "--causal", "--seq 1000 --causal --heads 3", "--dim 128", "--dim 128 --seq 777 --causal"};
    /* the shape, FLOPs and every byte column: the 18 fields before Br */
    assert_same_model_row("lean_tiles", "tc_tile_lean_bwd", "kv_registers", "tc_kvreg_bwd", shapes,
                          sizeof(shapes) / sizeof(shapes[0]), 18);
    cr_assert_eq(run_cli("--model --kernel kv_registers", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "13 (kv_registers: K_j's and V_j's fragments in registers at d = 64)"), "%s", out);
    cr_assert(strstr(out, "Br=128 Bc=128"), "%s", out);
    cr_assert(strstr(out, "shared memory per block: 165,888 B = (2 Bc d + 4 Br d + 2 Bc Br) e + 16 Br bytes"), "%s",
              out);
    cr_assert_eq(run_cli("--model --kernel kv_registers --dim 128", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "Br=64 Bc=128"), "%s", out);
    cr_assert(strstr(out, "shared memory per block: 164,864 B"), "%s", out);
    DeviceInfo other = {.present = 1, .cc_major = 8, .cc_minor = 0, .smem_per_block_optin = 232448};
    snprintf(other.name, sizeof(other.name), "an sm_80 GPU");
    Options o = tc_step_shape(BWD_KV_REGS, 1, 1, 256, 64, 0, DTYPE_BF16);
    char msg[512] = "";
    cr_assert_eq(chapter07.validate(&o, &other, msg, sizeof(msg)), 0, "%s", msg);
}

/* Step 14 adds dQ_i's share in 8-byte pieces: the same bytes as step 13 at every shape, the same tiles. */
Test(cli, model_step_14_is_step_13s_bytes) {
    char out[16384];
    const char *shapes[] = {"", "--causal --seq 1000 --heads 3", "--dim 128 --seq 777 --causal"};
    assert_same_model_row("kv_registers", "tc_kvreg_bwd", "dq_pairs", "tc_pairs_bwd", shapes, sizeof(shapes) / sizeof(shapes[0]), 0);
    cr_assert_eq(run_cli("--model --kernel dq_pairs", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "14 (dq_pairs: dQ_i added in pairs, straight from the fragments)"), "%s", out);
    cr_assert(strstr(out, "Br=128 Bc=128"), "%s", out);
}

/* Step 15 adds dQ_i's share in 16-byte pieces again, from a copy of K_j in shared memory: step 14's global bytes at
 * every shape, Bc d elements more shared memory (16 KB at d = 64, 32 KB at d = 128), within an sm_80's 227 KB. */
Test(cli, model_step_15_is_step_14s_bytes_and_a_copy_of_K) {
    char out[16384];
    const char *shapes[] = {"", "--causal --seq 1000 --heads 3", "--dim 128 --seq 777 --causal"};
    assert_same_model_row("dq_pairs", "tc_pairs_bwd", "dq_quads", "tc_quads_bwd", shapes, sizeof(shapes) / sizeof(shapes[0]), 0);
    cr_assert_eq(run_cli("--model --kernel dq_quads", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "15 (dq_quads: dQ_i added in fours, from an interleaved copy of K_j)"), "%s", out);
    cr_assert(strstr(out, "Br=128 Bc=128"), "%s", out);
    cr_assert(strstr(out, "shared memory per block: 182,272 B = (3 Bc d + 4 Br d + 2 Bc Br) e + 16 Br bytes"), "%s",
              out);
    cr_assert_eq(run_cli("--model --kernel dq_quads --dim 128", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "Br=64 Bc=128"), "%s", out);
    cr_assert(strstr(out, "shared memory per block: 197,632 B"), "%s", out);
    DeviceInfo other = {.present = 1, .cc_major = 8, .cc_minor = 0, .smem_per_block_optin = 232448};
    snprintf(other.name, sizeof(other.name), "an sm_80 GPU");
    Options o = tc_step_shape(BWD_DQ_QUADS, 1, 1, 256, 128, 0, DTYPE_BF16);
    char msg[512] = "";
    cr_assert_eq(chapter07.validate(&o, &other, msg, sizeof(msg)), 0, "%s", msg);
}

/* Step 16 changes how L_i and D_i reach shared memory (cp.async instead of a register), not how much of them: step
 * 15's global bytes at every shape, its shared memory to the byte. */
Test(cli, model_step_16_is_step_15s_bytes_and_shared_memory) {
    char out[16384];
    const char *shapes[] = {"", "--causal --seq 1000 --heads 3", "--dim 128 --seq 777 --causal", "--seq 1 --batch 3"};
    assert_same_model_row("dq_quads", "tc_quads_bwd", "stat_copies", "tc_stats_bwd", shapes,
                          sizeof(shapes) / sizeof(shapes[0]), 0);
    cr_assert_eq(run_cli("--model --kernel stat_copies", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "16 (stat_copies: L_i and D_i copied by cp.async, as Q_i and dO_i)"), "%s", out);
    cr_assert(strstr(out, "Br=128 Bc=128"), "%s", out);
    cr_assert(strstr(out, "shared memory per block: 182,272 B = (3 Bc d + 4 Br d + 2 Bc Br) e + 16 Br bytes"), "%s",
              out);
    cr_assert_eq(run_cli("--model --kernel stat_copies --dim 128", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "Br=64 Bc=128"), "%s", out);
    cr_assert(strstr(out, "shared memory per block: 197,632 B"), "%s", out);
}

/* Step 17 changes which warp computes which part of dQ_i's share, not what moves: step 16's global bytes at every
 * shape, its shared memory to the byte. */
Test(cli, model_step_17_is_step_16s_bytes_and_shared_memory) {
    char out[16384];
    const char *shapes[] = {"", "--causal --seq 1000 --heads 3", "--dim 128 --seq 777 --causal", "--seq 1 --batch 3"};
    assert_same_model_row("stat_copies", "tc_stats_bwd", "dq_squares", "tc_squares_bwd", shapes,
                          sizeof(shapes) / sizeof(shapes[0]), 0);
    cr_assert_eq(run_cli("--model --kernel dq_squares", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "17 (dq_squares: dQ_i's product in squares of 32 x 32, one a warp)"), "%s", out);
    cr_assert(strstr(out, "Br=128 Bc=128"), "%s", out);
    cr_assert(strstr(out, "shared memory per block: 182,272 B = (3 Bc d + 4 Br d + 2 Bc Br) e + 16 Br bytes"), "%s",
              out);
    cr_assert_eq(run_cli("--model --kernel dq_squares --dim 128", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "Br=64 Bc=128"), "%s", out);
    cr_assert(strstr(out, "shared memory per block: 197,632 B"), "%s", out);
}

/* Step 18 changes the instructions that store P_ij^T and dS_ij^T to shared memory, not what moves: step 17's global
 * bytes at every shape, its shared memory to the byte. */
Test(cli, model_step_18_is_step_17s_bytes_and_shared_memory) {
    char out[16384];
    const char *shapes[] = {"", "--causal --seq 1000 --heads 3", "--dim 128 --seq 777 --causal", "--seq 1 --batch 3"};
    assert_same_model_row("dq_squares", "tc_squares_bwd", "matrix_stores", "tc_stores_bwd", shapes,
                          sizeof(shapes) / sizeof(shapes[0]), 0);
    cr_assert_eq(run_cli("--model --kernel matrix_stores", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "18 (matrix_stores: P_ij^T and dS_ij^T stored by stmatrix on sm_90)"), "%s", out);
    cr_assert(strstr(out, "Br=128 Bc=128"), "%s", out);
    cr_assert(strstr(out, "shared memory per block: 182,272 B = (3 Bc d + 4 Br d + 2 Bc Br) e + 16 Br bytes"), "%s",
              out);
    cr_assert_eq(run_cli("--model --kernel matrix_stores --dim 128", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "Br=64 Bc=128"), "%s", out);
    cr_assert(strstr(out, "shared memory per block: 197,632 B"), "%s", out);
}

Test(cli, model_says_the_flop_convention_and_the_grid) {
    char out[16384];
    cr_assert_eq(run_cli("--model", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "10 B H N^2 d = 429,496,729,600, 2.5 x the forward's 171,798,691,840"), "%s", out);
    cr_assert(strstr(out, "grid (Tc, B*H) = (32, 640): 20,480 blocks"), "%s", out);
    cr_assert_eq(run_cli("--model --kernel naive", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "P, dP and dS in HBM, 2,684,354,560 B each"), "%s", out);
}

Test(cli, cpu_run_checks_ragged_causal_tiles) {
    char out[16384];
    const char *args[] = {"--cpu --batch 2 --heads 3 --seq 100 --br 64 --bc 32 --causal",
                          "--cpu --kernel naive --batch 3 --heads 1 --seq 77 --dim 32",
                          "--cpu --kernel tensor_cores --batch 1 --heads 3 --seq 77 --dim 128 --causal",
                          "--cpu --kernel tensor_cores --dtype bf16 --batch 2 --heads 1 --seq 65",
                          "--cpu --kernel dq_vectors --batch 1 --heads 2 --seq 90 --causal",
                          "--cpu --kernel wide_blocks --dtype bf16 --batch 2 --heads 1 --seq 130 --dim 128",
                          "--cpu --kernel wgmma --batch 1 --heads 2 --seq 150 --causal",
                          "--cpu --kernel lean_loop --dtype bf16 --batch 2 --heads 1 --seq 70 --dim 128",
                          "--cpu --kernel dq_bulk --batch 3 --heads 1 --seq 65 --causal",
                          "--cpu --kernel dq_overlap --dtype bf16 --batch 1 --heads 3 --seq 97 --dim 128",
                          "--cpu --kernel warp_specialized --batch 2 --heads 2 --seq 129 --dim 64 --causal",
                          "--cpu --kernel warp_tiles --dtype bf16 --batch 1 --heads 2 --seq 140 --causal",
                          "--cpu --kernel lean_tiles --batch 2 --heads 1 --seq 190 --dim 128",
                          "--cpu --kernel kv_registers --batch 1 --heads 2 --seq 300 --causal",
                          "--cpu --kernel kv_registers --dtype bf16 --batch 2 --heads 1 --seq 100 --dim 128",
                          "--cpu --kernel dq_pairs --dtype bf16 --batch 1 --heads 3 --seq 260 --causal",
                          "--cpu --kernel dq_quads --batch 2 --heads 1 --seq 150 --dim 128 --causal",
                          "--cpu --kernel stat_copies --dtype bf16 --batch 1 --heads 2 --seq 270 --causal",
                          "--cpu --kernel dq_squares --batch 2 --heads 1 --seq 130 --dim 128",
                          "--cpu --kernel matrix_stores --dtype bf16 --batch 1 --heads 3 --seq 200 --causal"};
    for (size_t k = 0; k < sizeof(args) / sizeof(args[0]); k++) {
        cr_assert_eq(run_cli(args[k], out, sizeof(out)), 0, "%s: %s", args[k], out);
        cr_assert(strstr(out, "counted != model") == NULL, "%s", out);
        cr_assert(strstr(out, " ok"), "%s", out);
    }
}

Test(cli, unwritable_csv_path_exits_2_before_any_work) {
    assert_csv_path_rejected_first("07", "");
    assert_csv_path_rejected_first("07", "--model");
}
