/* Chapter 04's program from the outside: bad layouts and tiles exit 2 with a message, --model prints the
 * layout's bytes, its shared memory and the predicted bank conflicts, and a CPU run of a ragged causal shape in
 * every layout passes its check. */
#include "ch04_test.h"

static int run_cli(const char *args, char *out, size_t len) { return run_chapter("04", args, out, len); }

Test(cli, bad_layouts_and_tiles_exit_2_with_a_message) {
    const struct {
        const char *args, *says;
    } bad[] = {{"--model --layout foo", "naive, transposed, padded, swizzled, paired"},
               {"--model --layout", "--layout"},
               {"--model --br 24", "--br 24"},
               {"--model --bc 128", "--bc 128"},
               {"--model --dim 48", "--dim 48"},
               {"--model --dtype fp16", "--dtype"}};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) assert_rejected("04", bad[k].args, bad[k].says);
    /* --layout is this chapter's: chapter 03 refuses it (where its program is: a student's copy of chapter 04,
     * make assignment's, has no chapter 03) */
    if (access("ch03/run", X_OK) == 0) assert_rejected("03", "--model --layout naive", "--layout");
}

Test(cli, model_csv_transposed_has_the_setup_row) {
    char out[8192];
    cr_assert_eq(run_cli("--model --layout transposed --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n04,k_transpose,model,10,64,1024,64,fp32,0,167772160,167772160,"), "%s", out);
    cr_assert(strstr(out, "\n04,flash_v4_transposed,model,10,64,1024,64,fp32,171798691840,10905190400,170393600,"),
              "%s", out);
}

Test(cli, model_prints_the_layout_and_its_shared_memory) {
    char out[16384];
    cr_assert_eq(run_cli("--model --layout padded", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "layout padded"), "%s", out);
    cr_assert(strstr(out, "of which K_j 8,704 B (Bc x (d + 4))"), "%s", out);
    cr_assert_eq(run_cli("--model", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "layout paired"), "the default: %s", out);
}

Test(cli, cpu_run_checks_every_layout) {
    char out[16384], args[256];
    for (int layout = 0; layout < LAYOUT_COUNT; layout++) {
        snprintf(args, sizeof(args), "--cpu --batch 2 --heads 2 --seq 77 --br 16 --bc 64 --causal --layout %s",
                 TEST_LAYOUTS[layout]);
        cr_assert_eq(run_cli(args, out, sizeof(out)), 0, "%s: %s", args, out);
        cr_assert(strstr(out, " ok"), "%s: %s", args, out);
    }
}
