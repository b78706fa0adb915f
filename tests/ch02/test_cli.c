/* Chapter 02's program from the outside (./ch02/run, built by make test-ch02; tests run from the repository
 * root): bad tiles and sizes exit 2 with a message; --model prints the article's bytes, the grid and the
 * shared-memory arithmetic; a CPU run of ragged tiles passes its check. */
#include "../support.h"
#include "ch02_test.h"

static int run_cli(const char *args, char *out, size_t len) { return run_chapter("02", args, out, len); }

Test(cli, bad_tiles_and_sizes_exit_2_with_a_message) {
    const struct {
        const char *args, *says;
    } bad[] = {{"--model --br 48", "16, 32, 64, 128"},     {"--model --bc 128", "--bc 128"},
               {"--model --br 8 --bc 8", "--br 8"},         {"--cpu --seq 64 --br 24", "--br 24"},
               {"--model --dim 48", "--dim 48"},           {"--model --heads 70000", "65535"},
               {"--model --br 0", "--br"},                 {"--model --causal", "--causal"},
               {"--model --dtype fp16", "--dtype"}};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) assert_rejected("02", bad[k].args, bad[k].says);
}

/* The article's bytes (V1-bytes in ARTICLES.md) in flash_v1's row; the init is a setup row beside it, and
 * there is no "total" row (it would repeat flash_v1's). */
Test(cli, model_csv_has_the_article_bytes) {
    char out[8192];
    cr_assert_eq(run_cli("--model --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n02,flash_v1,model,10,64,1024,64,fp32,171798691840,11240734720,5536481280,"), "%s", out);
    cr_assert(strstr(out, "\n02,flash_v1_init,model,10,64,1024,64,fp32,0,0,173015040,"), "%s", out);
    cr_assert(strstr(out, "\n02,total,") == NULL, "%s", out);
}

Test(cli, model_prints_the_grid_and_the_shared_memory_arithmetic) {
    char out[8192];
    cr_assert_eq(run_cli("--model", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "640 blocks"), "grid (B, H): %s", out);
    cr_assert(strstr(out, "30,208 B"), "this kernel's shared memory: %s", out);
    cr_assert(strstr(out, "30,208 B per block -> 2 blocks per SM x 2 warps = 4 warps, 12.5% occupancy"),
              "this kernel on sm_75: %s", out);
    cr_assert(strstr(out, "28,672 B -> 2 blocks per SM, 25.0% occupancy"), "the article's V1-smem: %s", out);
    cr_assert_eq(run_cli("--model --br 128 --bc 64 --dim 128", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "169,984 B per block does not fit in 64 KB"), "%s", out);
}

Test(cli, cpu_run_checks_ragged_tiles) {
    char out[16384];
    cr_assert_eq(run_cli("--cpu --batch 2 --heads 3 --seq 100 --br 64 --bc 16", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, " ok"), "%s", out);
}

/* Sizes whose counts are near or past 64 bits: every count printed exact, or the size rejected with the limit
 * (never a wrapped count, as a model read smaller than the compulsory one once showed). */
static void expect_counts(long long B, long long H, long long N, long long d) {
    const Count128 f = 4, h = (Count128)B * H, n = N, Tc = (N + 31) / 32;
    const ModelRow128 r[2] = {{"flash_v1_init", 0, 0, f * h * n * (d + 2)},
                              {"flash_v1", 4 * h * n * n * d, f * h * n * (Tc * (2 * d + 2) + 2 * d),
                               f * h * n * Tc * (d + 2)}};
    char args[128], shape[128];
    snprintf(args, sizeof(args), "--batch %lld --heads %lld --seq %lld --dim %lld", B, H, N, d);
    snprintf(shape, sizeof(shape), "%lld,%lld,%lld,%lld,fp32", B, H, N, d);
    assert_counts_exact_or_rejected("02", args, shape, r, 2);
}

Test(cli, counts_at_huge_sizes_are_exact_or_rejected) {
    const long long Ns[] = {50000000, 100000000, 2147483647};
    for (int i = 0; i < 3; i++) {
        expect_counts(10, 64, Ns[i], 64);
        expect_counts(1, 1, Ns[i], 64);
        expect_counts(1, 1, Ns[i], 32);
    }
}

/* --csv to a path that cannot be written stops the program before any work, not after the whole run. */
Test(cli, unwritable_csv_path_exits_2_before_any_work) {
    assert_csv_path_rejected_first("02", "");
    assert_csv_path_rejected_first("02", "--model");
    assert_csv_path_rejected_first("02", "--cpu --batch 1 --heads 1 --seq 64");
    assert_csv_file_replaced("02", "--model");
}

/* Q, K, V, O, l, m and L: 4 (4 d + 3) bytes per row, 4.2 TB here. */
Test(cli, cpu_run_larger_than_host_memory_exits_2_before_allocating) {
    const unsigned long long rows = 1000ull * 1000 * 4096, d = 64;
    assert_host_memory_rejected("02", "--cpu --batch 1000 --heads 1000 --seq 4096", 4 * rows * (4 * d + 3));
}

/* Without a GPU: a ragged N stays ragged modulo the tiles, and the report says the size was reduced and from
 * what. */
Test(cli, cpu_fallback_keeps_a_ragged_n_ragged_and_says_it_reduced_the_size) {
    cr_assert_eq(assert_cpu_fallback_keeps_the_problem("02", "--seq 4097", "02,flash_v1,", 10, 64, 4097, 32, 512), 481);
    assert_cpu_fallback_keeps_the_problem("02", "--seq 3000 --br 64 --bc 16", "02,flash_v1,", 10, 64, 3000, 64, 512);
}

Test(cli, cpu_run_shows_progress_only_when_it_takes_long) {
    assert_progress_lines("02", "--cpu --batch 1 --heads 3 --seq 64");
}
