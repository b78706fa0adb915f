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
