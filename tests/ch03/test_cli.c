/* Chapter 03's program from the outside (./ch03/run, built by make test-ch03; tests run from the repository
 * root): bad tiles and sizes exit 2 with a message, --model prints both grids and the article's bytes. */
#include "../support.h"
#include "ch03_test.h"

static int run_cli(const char *args, char *out, size_t len) { return run_chapter("03", args, out, len); }

Test(cli, bad_tiles_and_sizes_exit_2_with_a_message) {
    const struct {
        const char *args, *says;
    } bad[] = {{"--model --br 24", "--br 24"},       {"--model --br 256", "--br 256"},
               {"--model --bc 128", "--bc 128"},     {"--model --bc 8", "--bc 8"},
               {"--model --dim 48", "--dim 48"},     {"--model --batch 256 --heads 256", "65535"},
               {"--model --br 0", "--br"},           {"--model --dtype fp16", "--dtype"},
               {"--model --gemm cublas", "--gemm"},  {"--cpu --seq 64 --bc 32 --br 48", "--br 48"}};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) assert_rejected("03", bad[k].args, bad[k].says);
}

Test(cli, model_prints_both_grids_and_the_shared_memory) {
    char out[8192];
    cr_assert_eq(run_cli("--model", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "(32, 640): 20,480 blocks of 64 threads"), "chapter 03's grid: %s", out);
    cr_assert(strstr(out, "(10, 64) at this configuration: 640 blocks"), "chapter 02's grid: %s", out);
    cr_assert(strstr(out, "30,208 B"), "shared memory per block: %s", out);
}

/* One kernel, one row: no "total" row that would repeat it. */
Test(cli, model_csv_has_the_article_bytes) {
    char out[8192];
    cr_assert_eq(run_cli("--model --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n03,flash_v2,model,10,64,1024,64,fp32,171798691840,10905190400,170393600,"), "%s", out);
    cr_assert(strstr(out, "\n03,total,") == NULL, "%s", out);
    cr_assert_eq(run_cli("--model --causal --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n03,flash_v2,model,10,64,1024,64,fp32,85899345920,5704253440,170393600,"),
              "causal: half the FLOPs, the blocks above the diagonal not read: %s", out);
}

Test(cli, cpu_run_checks_ragged_causal_tiles) {
    char out[16384];
    cr_assert_eq(run_cli("--cpu --batch 2 --heads 3 --seq 100 --br 64 --bc 16 --causal", out, sizeof(out)), 0, "%s",
                 out);
    cr_assert(strstr(out, "counted != model") == NULL, "%s", out);
    cr_assert(strstr(out, " ok"), "%s", out);
}

/* Sizes whose counts are near or past 64 bits: every count printed exact, or the size rejected with the limit
 * (never a wrapped count, as a model read smaller than the compulsory one once showed). Keys loaded per head
 * are counted block by block here, independently of model.c. */
static void expect_counts(long long B, long long H, long long N, long long d, int causal) {
    const long long Br = 32, Bc = 32, Tr = (N + Br - 1) / Br;
    Count128 keys = 0;
    for (long long i = 0; i < Tr; i++) {
        const long long last = (i + 1) * Br < N ? (i + 1) * Br - 1 : N - 1; /* the block's last query */
        keys += causal ? (last / Bc + 1) * Bc < N ? (last / Bc + 1) * Bc : N : N;
    }
    const Count128 f = 4, h = (Count128)B * H, n = N;
    const ModelRow128 r[1] = {
        {"flash_v2", (causal ? 2 : 4) * h * n * n * d, f * h * d * (n + 2 * keys), f * h * n * (d + 1)}};
    char args[128], shape[128];
    snprintf(args, sizeof(args), "--batch %lld --heads %lld --seq %lld --dim %lld%s", B, H, N, d,
             causal ? " --causal" : "");
    snprintf(shape, sizeof(shape), "%lld,%lld,%lld,%lld,fp32", B, H, N, d);
    assert_counts_exact_or_rejected("03", args, shape, r, 1);
}

Test(cli, counts_at_huge_sizes_are_exact_or_rejected) {
    const long long Ns[] = {50000000, 2147483647};
    for (int i = 0; i < 2; i++)
        for (int causal = 0; causal < 2; causal++) {
            expect_counts(10, 64, Ns[i], 64, causal);
            expect_counts(1, 1, Ns[i], 64, causal);
        }
    expect_counts(1, 1, 450000000, 32, 1); /* causal: half the FLOPs of a size whose full count would not fit */
    expect_counts(1, 1, 450000000, 32, 0);
}

/* --csv to a path that cannot be written stops the program before any work, not after the whole run. */
Test(cli, unwritable_csv_path_exits_2_before_any_work) {
    assert_csv_path_rejected_first("03", "");
    assert_csv_path_rejected_first("03", "--model");
    assert_csv_path_rejected_first("03", "--cpu --batch 1 --heads 1 --seq 64");
    assert_csv_file_replaced("03", "--model");
}

/* Q, K, V, O and L: 4 (4 d + 1) bytes per row, 13 TB here (B*H stays within the grid's 65535). */
Test(cli, cpu_run_larger_than_host_memory_exits_2_before_allocating) {
    const unsigned long long rows = 65535ull * 100000, d = 128;
    assert_host_memory_rejected("03", "--cpu --batch 1 --heads 65535 --seq 100000 --dim 128", 4 * rows * (4 * d + 1));
}

/* Without a GPU: causal stays causal, a ragged N stays ragged modulo the tiles (4097 no longer becomes 512), and
 * the report header and the requested_* columns say the size was reduced and from what. */
Test(cli, cpu_fallback_keeps_causal_and_a_ragged_n_and_says_it_reduced_the_size) {
    char out[1 << 16];
    cr_assert_eq(assert_cpu_fallback_keeps_the_problem("03", "--seq 4096 --causal", "03,flash_v2,", 10, 64, 4096, 32,
                                                       1024), 1024);
    cr_assert_eq(run_cli("--seq 4096 --causal --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert_eq(csv_int(out, "03,flash_v2,", "causal"), 1, "causal stays causal");
    cr_assert(strstr(out, " causal (reduced for the CPU from B=10 H=64 N=4096)"), "%.3000s", out);
    cr_assert_eq(assert_cpu_fallback_keeps_the_problem("03", "--seq 4097 --causal", "03,flash_v2,", 10, 64, 4097, 32,
                                                       1024), 993);
    assert_cpu_fallback_keeps_the_problem("03", "--seq 5000 --br 64 --bc 16", "03,flash_v2,", 10, 64, 5000, 64, 1024);
}

Test(cli, cpu_run_shows_progress_only_when_it_takes_long) {
    assert_progress_lines("03", "--cpu --batch 1 --heads 3 --seq 64 --causal");
}
