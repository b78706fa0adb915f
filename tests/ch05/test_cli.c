/* Chapter 05's program from the outside: bad input exits 2 with a message; --model prints the fp16 bytes; a
 * CPU run of a ragged causal bf16 shape passes its check. */
#include "ch05_test.h"

static int run_cli(const char *args, char *out, size_t len) { return run_chapter("05", args, out, len); }

Test(cli, bad_input_exits_2_with_a_message) {
    const struct {
        const char *args, *says;
    } bad[] = {{"--model --dtype fp32", "fp16 or bf16"}, {"--model --dim 32", "--dim 32"},
               {"--model --br 32", "--br 32"},          {"--model --bc 32", "--bc 32"},
               {"--model --dtype fp8", "--dtype"},      {"--model --layout naive", "--layout"},
               {"--model --kernel foo", TC_KERNEL_NAMES},
               {"--model --kernel wmma --br 128", "--br 128"},
               {"--model --kernel wmma --bc 32", "--bc 32"},
               {"--model --kernel", "needs a value"},
               {"--model --kernel mma --br 128", "--br 128"},
               {"--model --kernel cp_async --br 128", "--br 128"},
               {"--model --kernel mma_plain --br 128", "--br 128"},
               {"--model --kernel repack --br 128", "--br 128"}};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) assert_rejected("05", bad[k].args, bad[k].says);
}

Test(cli, model_csv_has_the_fp16_bytes) {
    char out[8192];
    cr_assert_eq(run_cli("--model --csv -", out, sizeof(out)), 0, "%s", out);
    /* the default kernel's Br = 128: Q once + K, V for each of the 8 query blocks, 2 bytes each; O in fp16 and L
     * in fp32 */
    cr_assert(strstr(out, "\n05,flash_mma_async,model,10,64,1024,64,fp16,171798691840,1426063360,86507520,"), "%s",
              out);
}

/* --kernel: each step's name reports under its own kernel name with the same bytes at the same tiles (the steps
 * move the same data); the wmma kernel's --model shows its own tile and shared memory. */
Test(cli, kernel_option_names_the_kernel) {
    const char *names[] = {"wmma",          "mma_staged", "repack", "o_registers", "swizzle",  "mma_plain",
                           "unrolled_copy", "edge_masks", "mma",    "cp_async",    "mma_async"};
    for (int k = 0; k < (int)(sizeof(names) / sizeof(names[0])); k++) {
        char args[128], out[8192], row[128];
        snprintf(args, sizeof(args), "--model --kernel %s --br 64 --csv -", names[k]);
        cr_assert_eq(run_cli(args, out, sizeof(out)), 0, "%s: %s", args, out);
        snprintf(row, sizeof(row), "\n05,flash_%s,model,10,64,1024,64,fp16,171798691840,2768240640,86507520,",
                 names[k]);
        cr_assert(strstr(out, row), "%s: %s", args, out);
    }
}

Test(cli, model_of_the_wmma_kernel) {
    char out[8192];
    cr_assert_eq(run_cli("--model --kernel wmma", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "kernel flash_wmma (--kernel wmma)"), "%s", out);
    cr_assert(strstr(out, "128 threads"), "%s", out);
    /* 2 (64 + 128)(64 + 8) + 4 64 68 + 4 64 68 = 62,464 bytes */
    cr_assert(strstr(out, "shared memory per block: 62,464 B (2 (Br + 2 Bc)(d + 8)"), "%s", out);
    cr_assert(strstr(out, "Br = 64, Bc = 64 only"), "%s", out);
    cr_assert_eq(run_cli("--model --kernel wmma --dim 128", out, sizeof(out)), 0, "%s", out);
    /* 2 192 136 + 4 64 68 + 4 64 132 = 103,424 bytes */
    cr_assert(strstr(out, "shared memory per block: 103,424 B"), "%s", out);
}

/* Steps 2 to 4 keep step 1's padded tiles, fewer of them each step (S_ij and P_ij, then O_i go to registers), and
 * step 5 swizzles the rows instead of padding them: each --model shows its own shared memory at d = 64; the model of
 * the shared loads is printed from step 4 on (steps 2 and 3 also pass S_ij, P_ij or O_i through shared memory). */
Test(cli, model_of_the_steps_between_wmma_and_mma_plain) {
    const struct {
        const char *kernel, *smem, *loads;
    } steps[] = {{"mma_staged", "shared memory per block: 62,464 B (2 (Br + 2 Bc)(d + 8) + 4 Br (Bc + 4)", NULL},
                 /* 2 (64 + 128)(64 + 8) + 4 64 (64 + 4) = 27,648 + 17,408 */
                 {"repack", "shared memory per block: 45,056 B (2 (Br + 2 Bc)(d + 8) + 4 Br (d + 4) bytes", NULL},
                 {"o_registers", "shared memory per block: 27,648 B (2 (Br + 2 Bc)(d + 8) bytes", "(padded rows"},
                 /* 2 (64 64 + 2 64 64) */
                 {"swizzle", "shared memory per block: 24,576 B (2 (Br d + 2 Bc d) bytes", "(swizzled rows"}};
    for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
        char args[128], out[8192];
        snprintf(args, sizeof(args), "--model --kernel %s", steps[k].kernel);
        cr_assert_eq(run_cli(args, out, sizeof(out)), 0, "%s: %s", args, out);
        cr_assert(strstr(out, steps[k].smem), "%s: %s", args, out);
        cr_assert(strstr(out, "128 threads (4 warps of 16 query rows)"), "%s: %s", args, out);
        if (steps[k].loads) cr_assert(strstr(out, steps[k].loads), "%s: %s", args, out);
        else cr_assert(!strstr(out, "shared loads"), "%s: %s", args, out);
    }
}

Test(cli, help_lists_the_kernels) {
    char out[16384];
    cr_assert_eq(run_cli("--help", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "--kernel K       wmma | mma_staged | repack | o_registers | swizzle | mma_plain | unrolled_copy |\n"
                          "                   edge_masks | mma | cp_async | mma_async: the chapter's eleven steps"),
              "%s", out);
}

Test(cli, cpu_run_of_the_wmma_kernel_checks) {
    char out[16384];
    cr_assert_eq(run_cli("--cpu --kernel wmma --batch 2 --heads 2 --seq 77 --dtype bf16 --causal", out, sizeof(out)),
                 0, "%s", out);
    cr_assert(strstr(out, "flash_wmma"), "%s", out);
    cr_assert(strstr(out, " ok"), "%s", out);
}

Test(cli, cpu_run_checks_bf16_causal_ragged) {
    char out[16384];
    cr_assert_eq(run_cli("--cpu --batch 2 --heads 2 --seq 77 --dtype bf16 --causal --br 128", out, sizeof(out)), 0,
                 "%s", out);
    cr_assert(strstr(out, " ok"), "%s", out);
}

/* A saved run checked by somebody else's attention: ./ch05/run --save writes Q, K, V, O (fp16) and L, and
 * PyTorch's scaled_dot_product_attention on the saved Q, K, V (in float32, on the saved, rounded values) must
 * match the saved O within fp16's rounding, and its log-sum-exp the saved L. Skipped, saying so, where python3,
 * NumPy or PyTorch is absent (the book needs none of them). */
Test(cli, saved_fp16_run_checks_out_in_pytorch) {
    char out[16384];
    if (run_command("python3 -c 'import numpy, torch' 2>&1", out, sizeof(out)) != 0)
        cr_skip_test("python3 with NumPy and PyTorch is not installed here: the cross-check needs both");
    char dir[] = "/tmp/fa_ch05_save.XXXXXX";
    cr_assert(mkdtemp(dir), "cannot make a temporary folder");
    char args[512];
    snprintf(args, sizeof(args), "--batch 2 --heads 3 --seq 77 --causal --reps 2 --save %s", dir);
    cr_assert_eq(run_cli(args, out, sizeof(out)), 0, "%s", out);
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "python3 -c \""
             "import numpy as np, torch, math; d='%s'; "
             "q, k, v = (torch.from_numpy(np.load(d + '/' + n + '.npy').astype(np.float32)) for n in 'QKV'); "
             "o = np.load(d + '/O.npy').astype(np.float64); L = np.load(d + '/L.npy').astype(np.float64); "
             "ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True).numpy(); "
             "s = (q.double() @ k.double().transpose(-1, -2)) / math.sqrt(q.shape[-1]); "
             "s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), float('-inf')); "
             "lse = torch.logsumexp(s, -1).numpy(); "
             "eo = np.linalg.norm(o - ref) / np.linalg.norm(ref); el = np.linalg.norm(L - lse) / np.linalg.norm(lse); "
             "print('O rel err', eo, 'L rel err', el); assert eo < 1e-2 and el < 1e-3\" 2>&1",
             dir);
    const int rc = run_command(cmd, out, sizeof(out));
    char rm[256];
    snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
    cr_assert_eq(system(rm), 0);
    cr_assert_eq(rc, 0, "PyTorch does not agree with the saved run: %s", out);
}
