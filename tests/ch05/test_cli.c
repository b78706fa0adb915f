/* Chapter 05's program from the outside: bad input exits 2 with a message; --model prints the fp16 bytes; a
 * CPU run of a ragged causal bf16 shape passes its check. */
#include "ch05_test.h"

static int run_cli(const char *args, char *out, size_t len) { return run_chapter("05", args, out, len); }

Test(cli, bad_input_exits_2_with_a_message) {
    const struct {
        const char *args, *says;
    } bad[] = {{"--model --dtype fp32", "fp16 or bf16"}, {"--model --dim 32", "--dim 32"},
               {"--model --br 32", "--br 32"},          {"--model --bc 32", "--bc 32"},
               {"--model --dtype fp8", "--dtype"},      {"--model --layout naive", "--layout"}};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) assert_rejected("05", bad[k].args, bad[k].says);
}

Test(cli, model_csv_has_the_fp16_bytes) {
    char out[8192];
    cr_assert_eq(run_cli("--model --csv -", out, sizeof(out)), 0, "%s", out);
    /* Q once + K, V for each of the 16 query blocks, 2 bytes each; O in fp16 and L in fp32 */
    cr_assert(strstr(out, "\n05,flash_tc,model,10,64,1024,64,fp16,171798691840,2768240640,86507520,"), "%s", out);
}

Test(cli, cpu_run_checks_bf16_causal_ragged) {
    char out[16384];
    cr_assert_eq(run_cli("--cpu --batch 2 --heads 2 --seq 77 --dtype bf16 --causal --br 128", out, sizeof(out)), 0,
                 "%s", out);
    cr_assert(strstr(out, " ok"), "%s", out);
}
