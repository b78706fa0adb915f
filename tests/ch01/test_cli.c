/* ./ch01/run from the outside: the model it prints, its CSV, and its exit status on bad input. Runs from the
 * repository root (make test-ch01 does), after make ch01. */
#include <stdio.h>
#include <sys/wait.h>

#include "../support.h"
#include "ch01_test.h"

/* Runs ./ch01/run ARGS (stderr discarded unless merge_stderr); stdout into out. Returns the exit status. */
static int run(const char *args, char *out, size_t len, int merge_stderr) {
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "./ch01/run %s %s", args, merge_stderr ? "2>&1" : "2>/dev/null");
    const int status = run_command(cmd, out, len);
    cr_assert(status >= 0, "%s did not exit normally", cmd);
    return status;
}

/* Column `name` of CSV line `line` (header gives the positions), into buf. */
static const char *csv_get(const char *header, const char *line, const char *name, char *buf, size_t len) {
    int col = -1, i = 0;
    for (const char *h = header; h && *h; i++) {
        const char *end = strpbrk(h, ",\n");
        const size_t n = end ? (size_t)(end - h) : strlen(h);
        if (n == strlen(name) && strncmp(h, name, n) == 0) col = i;
        h = end && *end == ',' ? end + 1 : NULL;
    }
    cr_assert(col >= 0, "no column %s", name);
    const char *f = line;
    for (i = 0; i < col; i++) f = strchr(f, ',') + 1;
    const size_t n = strcspn(f, ",\n");
    snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), f);
    return buf;
}

/* Splits CSV text into lines (in place); returns how many. */
static int lines_of(char *text, char **line, int max) {
    int n = 0;
    for (char *s = strtok(text, "\n"); s && n < max; s = strtok(NULL, "\n")) line[n++] = s;
    return n;
}

Test(cli, model_csv_gives_the_closed_forms) {
    static char out[1 << 16];
    cr_assert_eq(run("--model --csv - --seq 1024 --rows 655360", out, sizeof(out), 0), 0);
    char *line[8], a[64], b[64], c[64];
    cr_assert_eq(lines_of(out, line, 8), 1 + CH01_KERNELS, "a header and one row per kernel (no total row)");
    for (int k = 0; k < CH01_KERNELS; k++) {
        const IoBytes m = model_of(k, 655360, 1024, BLOCKWISE_CHUNK);
        cr_assert_str_eq(csv_get(line[0], line[1 + k], "kernel", a, 64), ch01_kernel_names[k]);
        cr_assert_eq(strtoull(csv_get(line[0], line[1 + k], "model_read_bytes", b, 64), NULL, 10), m.read);
        cr_assert_eq(strtoull(csv_get(line[0], line[1 + k], "model_write_bytes", c, 64), NULL, 10), m.write);
        cr_assert_str_eq(csv_get(line[0], line[1 + k], "rows", a, 64), "655360");
    }
}

Test(cli, cpu_run_counts_the_model_and_passes_its_check) {
    static char out[1 << 16];
    cr_assert_eq(run("--cpu --csv - --seq 1000 --rows 7", out, sizeof(out), 0), 0);
    char *line[8], a[64], b[64];
    cr_assert_eq(lines_of(out, line, 8), 1 + CH01_KERNELS);
    for (int k = 0; k < CH01_KERNELS; k++) {
        cr_assert_str_eq(csv_get(line[0], line[1 + k], "gpu", a, 64), "cpu");
        cr_assert_str_eq(csv_get(line[0], line[1 + k], "counted_read_bytes", a, 64),
                         csv_get(line[0], line[1 + k], "model_read_bytes", b, 64));
        cr_assert_str_eq(csv_get(line[0], line[1 + k], "counted_write_bytes", a, 64),
                         csv_get(line[0], line[1 + k], "model_write_bytes", b, 64));
        const double rel = strtod(csv_get(line[0], line[1 + k], "rel_err", a, 64), NULL);
        cr_assert(rel > 0 && rel <= CH01_TOL, "%s: rel_err %g", ch01_kernel_names[k], rel);
    }
}

Test(cli, rows_of_one_element) {
    static char out[1 << 16];
    cr_assert_eq(run("--cpu --seq 1 --rows 3", out, sizeof(out), 1), 0, "%s", out);
}

Test(cli, bad_input_exits_2_with_a_message) {
    const char *cases[] = {"--seq 0", "--rows 0", "--rows -3", "--rows 3000000000", "--causal", "--bc 64",
                           "--dtype fp16", "--gemm cublas"};
    static char out[1 << 16];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char args[128];
        snprintf(args, sizeof(args), "--model %s", cases[i]);
        cr_assert_eq(run(args, out, sizeof(out), 1), 2, "%s: exit 2 expected; output: %s", cases[i], out);
        cr_assert(strstr(out, "error"), "%s: no error message: %s", cases[i], out);
    }
}

Test(cli, require_gpu_without_a_gpu_exits_4) {
    if (gpu_available()) cr_skip_test("a CUDA device is present");
    static char out[1 << 16];
    unsetenv("REQUIRE_GPU"); /* each Criterion test runs in its own process: no need to restore it */
    cr_assert_eq(run("--seq 100 --rows 2", out, sizeof(out), 0), 0, "without REQUIRE_GPU: the CPU version");
    setenv("REQUIRE_GPU", "1", 1);
    cr_assert_eq(run("--seq 100 --rows 2", out, sizeof(out), 0), 4);
}

/* Rows of N = 5e7 and 2^31 - 1: one row's counts are exact; the default B*H*N rows are rejected (exit 2:
 * more thread blocks than one launch takes) before any count could wrap. */
Test(cli, counts_at_huge_sizes_are_exact_or_rejected) {
    const long long Ns[] = {50000000, 2147483647};
    for (int i = 0; i < 2; i++) {
        const Count128 n = Ns[i], K = (Ns[i] + BLOCKWISE_CHUNK - 1) / BLOCKWISE_CHUNK;
        const ModelRow128 r[3] = {{"softmax_3pass", 0, 12 * n, 4 * n},
                                  {"softmax_online", 0, 8 * n, 4 * n},
                                  {"softmax_blockwise", 0, 8 * n + K * K * 8, 4 * n + K * 8}};
        char args[128], shape[128], out[4096];
        snprintf(args, sizeof(args), "--seq %lld --rows 1", Ns[i]);
        snprintf(shape, sizeof(shape), "10,64,%lld,64,fp32", Ns[i]);
        assert_counts_exact_or_rejected("01", args, shape, r, 3);
        snprintf(args, sizeof(args), "--model --seq %lld", Ns[i]);
        cr_assert_eq(run(args, out, sizeof(out), 1), 2, "%s: %s", args, out);
        cr_assert(strstr(out, "error: --rows"), "%s: %s", args, out);
    }
}

/* --csv to a path that cannot be written stops the program before any work, not after the whole run. */
Test(cli, unwritable_csv_path_exits_2_before_any_work) {
    assert_csv_path_rejected_first("01", "");
    assert_csv_path_rejected_first("01", "--model");
    assert_csv_path_rejected_first("01", "--cpu --batch 1 --heads 1 --seq 64");
    assert_csv_file_replaced("01", "--model");
}

/* x and y: 8 bytes per element, and 8 per (m, l) pair: 136 TB here. */
Test(cli, cpu_run_larger_than_host_memory_exits_2_before_allocating) {
    const unsigned long long R = 17000000, N = 1000000, K = (N + BLOCKWISE_CHUNK - 1) / BLOCKWISE_CHUNK;
    assert_host_memory_rejected("01", "--cpu --seq 1000000 --rows 17000000", 8 * R * N + 8 * R * K);
}

/* Without a GPU: rows are dropped, the row length kept; a row longer than the CPU budget keeps its remainder
 * modulo the blockwise chunk (a ragged last chunk stays ragged); the report says from what it was reduced. */
Test(cli, cpu_fallback_keeps_a_ragged_n_ragged_and_says_it_reduced_the_size) {
    static char out[1 << 16];
    cr_assert_eq(assert_cpu_fallback_keeps_the_problem("01", "--seq 4097", "01,softmax_blockwise,", 10, 64, 4097,
                                                       BLOCKWISE_CHUNK, 4097), 4097);
    assert_cpu_fallback_keeps_the_problem("01", "--seq 5000000 --rows 3", "01,softmax_online,", 10, 64, 5000000,
                                          BLOCKWISE_CHUNK, 1 << 22);
    cr_assert_eq(run("--seq 5000000 --rows 3 --csv -", out, sizeof(out), 1), 0, "%s", out);
    cr_assert(strstr(out, "rows=3)"), "the header gives the rows asked for: %.2000s", out);
    cr_assert_eq(csv_int(out, "01,softmax_3pass,", "requested_rows"), 3);
}

Test(cli, cpu_run_shows_progress_only_when_it_takes_long) {
    assert_progress_lines("01", "--cpu --seq 1000 --rows 5");
}
