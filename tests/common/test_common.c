/* Tests of common/: the command line, IEEE half on the host, the float64 reference, the error measures,
 * and the report's CSV. None needs a GPU. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_tensor.h"
#include "options.h"
#include "../support.h"
#include "reference.h"
#include "checked_math.h"
#include "report.h"
#include "threads.h"

/* ---------------------------------------------------------------- options */

/* The rejections print their "error: ..." line to stderr: captured, so that passing tests leave none in the log. */
TestSuite(options, .init = cr_redirect_stderr);

/* A chapter's own option, as a chapter's table declares one: a word, of two. */
static const char *const BACKENDS[] = {"own", "cublas", NULL};
static const ChapterOption DECLARED[] = {
    {.name = "backend", .metavar = "G", .values = BACKENDS, .default_index = 0, .what = "a backend", .help = "own | cublas"},
    {0}};

static int parse_declared(Options *o, unsigned features, const ChapterOption *declared, int argc, const char **argv) {
    const CommandLine cl = {"test", features, declared, 0, 0};
    return options_parse(o, argc, (char **)argv, &cl);
}

static int parse(Options *o, unsigned features, int argc, const char **argv) {
    return parse_declared(o, features, NULL, argc, argv);
}

Test(options, defaults_are_the_article_configuration) {
    Options o;
    const char *argv[] = {"run"};
    cr_assert_eq(parse(&o, 0, 1, argv), 0);
    cr_assert_eq(o.B, 10);
    cr_assert_eq(o.H, 64);
    cr_assert_eq(o.N, 1024);
    cr_assert_eq(o.d, 64);
    cr_assert_eq(o.Br, 32);
    cr_assert_eq(o.Bc, 32);
    cr_assert_eq(o.dtype, DTYPE_FP32);
    cr_assert_eq(options_rows(&o, NULL), 10LL * 64 * 1024, "rows default to B*H*N");
}

Test(options, parses_every_value) {
    Options o;
    const char *argv[] = {"run", "--batch", "2", "--heads", "3", "--seq", "17", "--dim", "128", "--dtype", "fp16",
                          "--br", "64", "--bc", "16", "--causal", "--backend", "cublas", "--reps", "5", "--seed", "9",
                          "--csv", "-", "--no-check", "--no-flush"};
    cr_assert_eq(parse_declared(&o, CLI_DTYPE | CLI_TILES | CLI_CAUSAL, DECLARED, sizeof(argv) / sizeof(*argv), argv), 0);
    cr_assert(o.B == 2 && o.H == 3 && o.N == 17 && o.d == 128);
    cr_assert(o.dtype == DTYPE_FP16 && o.Br == 64 && o.Bc == 16 && o.causal && option_value(&o, DECLARED, 0) == 1);
    cr_assert(o.reps == 5 && o.seed == 9 && !strcmp(o.csv_path, "-") && o.no_check && o.no_flush);
}

Test(options, rejects_bad_input_with_status_2) {
    const char *cases[][3] = {{"run", "--seq", "0"},     {"run", "--seq", "-5"},   {"run", "--dim", "abc"},
                              {"run", "--batch", "1x"},  {"run", "--frobnicate", ""}, {"run", "--reps", "0"},
                              {"run", "--heads", "99999999999"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        Options o;
        int argc = cases[i][2][0] ? 3 : 2;
        cr_assert_eq(parse(&o, 0, argc, cases[i]), 2, "case %zu: %s %s", i, cases[i][1], cases[i][2]);
    }
}

Test(options, chapter_features_gate_their_options) {
    Options o;
    const char *tiles[] = {"run", "--br", "64"};
    cr_assert_eq(parse(&o, 0, 3, tiles), 2, "--br is unknown to a chapter without tiles");
    cr_assert_eq(parse(&o, CLI_TILES, 3, tiles), 0);
    const char *causal[] = {"run", "--causal"};
    cr_assert_eq(parse(&o, CLI_TILES, 2, causal), 2);
    const char *dtype[] = {"run", "--dtype", "fp64"};
    cr_assert_eq(parse(&o, CLI_DTYPE, 3, dtype), 2, "fp64 is not a supported storage type");
    const char *missing[] = {"run", "--seq"};
    cr_assert_eq(parse(&o, 0, 2, missing), 2, "a value is required");
    const char *stray[] = {"run", "extra"};
    cr_assert_eq(parse(&o, 0, 2, stray), 2, "positional arguments are rejected");
}

Test(options, profile_runs_each_kernel_once_unchecked) {
    Options o;
    const char *argv[] = {"run", "--profile", "--reps", "50"};
    cr_assert_eq(parse(&o, 0, 4, argv), 0);
    cr_assert(o.profile && o.reps == 1 && o.warmup == 0 && o.no_check);
}

Test(options, help_returns_1) {
    Options o;
    const char *argv[] = {"run", "--help"};
    cr_redirect_stdout();
    cr_assert_eq(parse(&o, CLI_TILES, 2, argv), 1);
}

Test(options, help_short_h_returns_1) {
    Options o;
    const char *argv[] = {"run", "-h"};
    cr_redirect_stdout();
    cr_assert_eq(parse(&o, 0, 2, argv), 1, "-h is --help");
}

Test(options, dim_must_be_one_the_kernels_exist_for) {
    Options o;
    const char *d100[] = {"run", "--dim", "100"};
    cr_assert_eq(parse(&o, 0, 3, d100), 2, "--dim 100: the help says 32, 64, 128");
    for (int d = 32; d <= 128; d *= 2) {
        char text[8];
        snprintf(text, sizeof text, "%d", d);
        const char *ok[] = {"run", "--dim", text};
        cr_assert_eq(parse(&o, 0, 3, ok), 0, "--dim %d", d);
        cr_assert_eq(o.d, d);
    }
}

Test(options, seed_must_be_non_negative) {
    Options o;
    const char *neg[] = {"run", "--seed", "-1"};
    cr_assert_eq(parse(&o, 0, 3, neg), 2, "--seed -1 wrapped to 2^64 - 1 instead of being refused");
    const char *plus[] = {"run", "--seed", "+5"};
    cr_assert_eq(parse(&o, 0, 3, plus), 2);
    const char *zero[] = {"run", "--seed", "0"};
    cr_assert_eq(parse(&o, 0, 3, zero), 0);
    cr_assert_eq(o.seed, 0);
}

/* ---------------------------------------------------------------- the programs themselves */

/* Every chapter's program built here (make test builds them all): -h and --help print the usage, exit 0. */
Test(cli, every_program_accepts_h_and_help) {
    char list[1024];
    cr_assert_eq(run_command("ls -d ch[0-9][0-9]/run 2>/dev/null", list, sizeof list), 0, "no chapter built");
    int programs = 0;
    for (char *s = NULL, *run = strtok_r(list, "\n", &s); run; run = strtok_r(NULL, "\n", &s)) {
        const char *flags[] = {"-h", "--help"};
        for (int i = 0; i < 2; i++) {
            char cmd[256], out[8192];
            snprintf(cmd, sizeof cmd, "./%s %s 2>&1", run, flags[i]);
            cr_assert_eq(run_command(cmd, out, sizeof out), 0, "%s: exit status (output: %s)", cmd, out);
            cr_assert(strstr(out, "usage:") && strstr(out, "-h, --help"), "%s printed no usage:\n%s", cmd, out);
        }
        programs++;
    }
    cr_assert(programs >= 1);
}

/* Output that cannot be written (a full disk: /dev/full) is an error like bad input: every program exits 2 and
 * says what it could not write, whether the report, --help or the CSV was going there. */
Test(cli, every_program_exits_2_when_its_output_cannot_be_written) {
    if (access("/dev/full", W_OK) != 0) cr_skip_test("this machine has no /dev/full");
    char list[1024];
    cr_assert_eq(run_command("ls -d ch[0-9][0-9]/run 2>/dev/null", list, sizeof list), 0, "no chapter built");
    int programs = 0;
    for (char *s = NULL, *run = strtok_r(list, "\n", &s); run; run = strtok_r(NULL, "\n", &s)) {
        const struct {
            const char *args, *says;
        } cases[] = {{"--model >/dev/full", "error: cannot write to stdout"},
                     {"--help >/dev/full", "error: cannot write to stdout"},
                     {"--model --csv - >/dev/full", "error: cannot write the CSV file '-'"},
                     {"--model --csv /dev/full >/dev/null", "error: cannot write the CSV file '/dev/full'"}};
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            char cmd[256], out[8192];
            snprintf(cmd, sizeof cmd, "./%s 2>&1 %s", run, cases[i].args); /* stderr to the pipe, then stdout */
            cr_assert_eq(run_command(cmd, out, sizeof out), 2, "%s: exit status (output: %s)", cmd, out);
            cr_assert(strstr(out, cases[i].says), "%s: the message should say '%s': %s", cmd, cases[i].says, out);
        }
        programs++;
    }
    cr_assert(programs >= 1);
    /* a run's report, not only the model's */
    char out[8192];
    cr_assert_eq(run_command("./ch01/run --cpu --seq 100 --rows 2 2>&1 >/dev/full", out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "error: cannot write to stdout"), "%s", out);
}

Test(cli, ch01_rejects_dim_100_and_seed_minus_1) {
    char out[4096];
    cr_assert_eq(run_command("./ch01/run --model --dim 100 2>&1", out, sizeof out), 2, "--dim 100: %s", out);
    cr_assert(strstr(out, "--dim 100") && strstr(out, "32, 64 and 128"), "unclear message: %s", out);
    cr_assert_eq(run_command("./ch01/run --model --seed -1 2>&1", out, sizeof out), 2, "--seed -1: %s", out);
    cr_assert(strstr(out, "non-negative"), "unclear message: %s", out);
}

Test(options, head_dims) {
    cr_assert(head_dim_supported(32) && head_dim_supported(64) && head_dim_supported(128));
    cr_assert(!head_dim_supported(48) && !head_dim_supported(256) && !head_dim_supported(0));
    cr_assert_eq(dtype_size(DTYPE_FP16), 2);
    cr_assert_eq(dtype_size(DTYPE_FP32), 4);
}

/* ---------------------------------------------------------------- half */

Test(half, known_values_round_to_nearest_even) {
    cr_assert_eq(half_from_float(1.0f), 0x3C00);
    cr_assert_eq(half_from_float(-2.0f), 0xC000);
    cr_assert_eq(half_from_float(65504.0f), 0x7BFF, "largest finite half");
    cr_assert_eq(half_from_float(65520.0f), 0x7C00, "rounds up to inf");
    cr_assert_eq(half_from_float(5.9604645e-8f), 0x0001, "smallest subnormal");
    cr_assert_eq(half_from_float(1e-9f), 0x0000, "underflow to zero");
    cr_assert_eq(half_from_float(1.0f + 1.0f / 2048), 0x3C00, "tie goes to even (down)");
    cr_assert_eq(half_from_float(1.0f + 3.0f / 2048), 0x3C02, "tie goes to even (up)");
    cr_assert_eq(half_from_float(INFINITY), 0x7C00);
    cr_assert(isnan(half_to_float(half_from_float(NAN))));
    cr_assert(isnan(half_to_float(0xFFFF)), "the poison pattern 0xFFFF is NaN");
}

Test(half, every_finite_half_round_trips_exactly) {
    for (unsigned h = 0; h < 65536; h++) {
        if ((h & 0x7C00u) == 0x7C00u) continue; /* inf, NaN */
        float f = half_to_float((uint16_t)h);
        uint16_t back = half_from_float(f);
        if (h == 0x8000u) cr_assert(back == 0x8000u);
        else cr_assert_eq(back, h, "0x%04x -> %g -> 0x%04x", h, f, back);
    }
}

/* ---------------------------------------------------------------- random inputs */

Test(rng, fixed_seed_is_reproducible_and_not_zero) {
    float a[64], b[64];
    Rng r1 = rng_seeded(42), r2 = rng_seeded(42), r3 = rng_seeded(43);
    fill_uniform(a, 64, &r1, -1, 1);
    fill_uniform(b, 64, &r2, -1, 1);
    cr_assert_arr_eq(a, b, sizeof(a));
    fill_uniform(b, 64, &r3, -1, 1);
    cr_assert(memcmp(a, b, sizeof(a)) != 0, "another seed, other inputs");
    int zeros = 0;
    for (int i = 0; i < 64; i++) zeros += a[i] == 0.0f;
    cr_assert_eq(zeros, 0);
}

/* Past 2^22 numbers the draws and the rounding run on threads (common/host_tensor.c): the same numbers as draws of
 * 2^20 at a time, each on one thread, and the same rounding. */
Test(rng, draws_on_threads_equal_draws_in_small_pieces) {
    const size_t n = (size_t)5 << 20, piece = (size_t)1 << 20;
    float *a = host_alloc(sizeof(float) * n, "a"), *b = host_alloc(sizeof(float) * n, "b");
    Rng r1 = rng_seeded(7), r2 = rng_seeded(7);
    fill_uniform(a, n, &r1, -3, 3);
    for (size_t i = 0; i < n; i += piece) fill_uniform(b + i, piece, &r2, -3, 3);
    cr_assert(memcmp(a, b, sizeof(float) * n) == 0, "the threaded draws differ from one pass");
    cr_assert_eq(rng_uniform(&r1), rng_uniform(&r2), "the generator left in another state");
    round_to_storage(a, n, DTYPE_BF16);
    for (size_t i = 0; i < n; i += piece) round_to_storage(b + i, piece, DTYPE_BF16);
    cr_assert(memcmp(a, b, sizeof(float) * n) == 0, "the threaded rounding differs from one pass");
    free(a), free(b);
}

/* ---------------------------------------------------------------- reference */

Test(reference, one_token_returns_its_value) {
    const float q[4] = {0.5f, -1, 2, 0.25f}, k[4] = {1, 2, -0.5f, 3}, v[4] = {7, -3, 0.5f, 2};
    double o[4], lse[1];
    reference_attention_head(q, k, v, 1, 4, 0, o, lse);
    for (int x = 0; x < 4; x++) cr_assert_float_eq(o[x], v[x], 1e-15);
    /* lse of a single score is the score itself: (0.5 - 2 - 1 + 0.75) / sqrt(4) = -0.875 */
    cr_assert_float_eq(lse[0], -0.875, 1e-15);
}

Test(reference, two_tokens_by_hand) {
    /* d = 1, so scale = 1. Query 0 = 1: scores (1*1, 1*2) = (1, 2); weights e^1, e^2 over e^1 + e^2. */
    const float q[2] = {1, 0}, k[2] = {1, 2}, v[2] = {10, 20};
    double o[2], lse[2];
    reference_attention_head(q, k, v, 2, 1, 0, o, lse);
    const double w1 = exp(1.0) / (exp(1.0) + exp(2.0)), w2 = 1 - w1;
    cr_assert_float_eq(o[0], 10 * w1 + 20 * w2, 1e-12);
    cr_assert_float_eq(lse[0], log(exp(1.0) + exp(2.0)), 1e-12);
    cr_assert_float_eq(o[1], 15.0, 1e-12, "query 0 scores equal: the mean of the values");
    cr_assert_float_eq(lse[1], log(2.0), 1e-12);
    /* causal: query 0 sees key 0 alone */
    reference_attention_head(q, k, v, 2, 1, 1, o, lse);
    cr_assert_float_eq(o[0], 10.0, 1e-12);
    cr_assert_float_eq(lse[0], 1.0, 1e-12);
    cr_assert_float_eq(o[1], 15.0, 1e-12);
}

Test(reference, scores_and_softmax_compose_to_attention) {
    enum { N = 9, D = 8 };
    float q[N * D], k[N * D], v[N * D];
    Rng r = rng_seeded(7);
    fill_normal(q, N * D, &r, 1);
    fill_normal(k, N * D, &r, 1);
    fill_normal(v, N * D, &r, 1);
    for (int causal = 0; causal < 2; causal++) {
        double s[N * N], p[N * N], o[N * D], o2[N * D];
        reference_scores_head(q, k, N, D, causal, s);
        reference_softmax_rows(s, N, N, p);
        for (int i = 0; i < N; i++)
            for (int x = 0; x < D; x++) {
                double acc = 0;
                for (int j = 0; j < N; j++) acc += p[i * N + j] * v[j * D + x];
                o2[i * D + x] = acc;
            }
        reference_attention_head(q, k, v, N, D, causal, o, NULL);
        for (int i = 0; i < N * D; i++) cr_assert_float_eq(o[i], o2[i], 1e-12);
    }
}

Test(reference, softmax_invariants) {
    double s[6] = {1, 2, 3, -INFINITY, -INFINITY, -INFINITY}, p[6], shifted[3], ps[3];
    reference_softmax_rows(s, 2, 3, p);
    cr_assert_float_eq(p[0] + p[1] + p[2], 1.0, 1e-15, "a row sums to 1");
    for (int j = 3; j < 6; j++) cr_assert_eq(p[j], 0.0, "an all -inf row is all zeros, not NaN");
    for (int j = 0; j < 3; j++) shifted[j] = s[j] + 1000.0;
    reference_softmax_rows(shifted, 1, 3, ps);
    for (int j = 0; j < 3; j++) cr_assert_float_eq(ps[j], p[j], 1e-15, "shift invariance");
}

/* ---------------------------------------------------------------- errors */

Test(errors, nan_never_passes) {
    const double ref[3] = {1, 2, 3};
    const float good[3] = {1, 2, 3}, nan_out[3] = {1, NAN, 3}, off[3] = {1, 2, 3.3f};
    ErrorStats e = error_stats(good, ref, 3);
    cr_assert(error_ok(&e, 1e-12) && e.rel == 0 && e.max_abs == 0);
    e = error_stats(nan_out, ref, 3);
    cr_assert(!error_ok(&e, 1e30), "NaN fails at any tolerance");
    cr_assert_eq(e.nonfinite, 1);
    e = error_stats(off, ref, 3);
    cr_assert_float_eq(e.max_abs, 0.3, 1e-6);
    cr_assert_float_eq(e.rel, sqrt((double)(3.3f - 3) * (3.3f - 3) / 14.0), 1e-9);
    cr_assert(!error_ok(&e, 0.05) && error_ok(&e, 0.1));
    ErrorStats empty = error_stats_empty();
    cr_assert(!error_ok(&empty, 1.0), "nothing compared is not a pass");
}

Test(errors, merging_equals_one_pass) {
    const double ref[4] = {1, -2, 3, 4};
    const float out[4] = {1.1f, -2, 2.9f, 4.2f};
    ErrorStats whole = error_stats(out, ref, 4), parts = error_stats_empty();
    error_stats_merge(&parts, out, ref, 2);
    error_stats_merge(&parts, out + 2, ref + 2, 2);
    cr_assert_float_eq(parts.rel, whole.rel, 1e-15);
    cr_assert_eq(parts.max_abs, whole.max_abs);
    cr_assert_eq(parts.n, 4);
}

Test(errors, sample_heads_covers_first_and_last) {
    int idx[8];
    cr_assert_eq(sample_heads(5, 8, idx), 5);
    for (int i = 0; i < 5; i++) cr_assert_eq(idx[i], i);
    cr_assert_eq(sample_heads(640, 8, idx), 8);
    cr_assert_eq(idx[0], 0);
    cr_assert_eq(idx[7], 639);
    for (int i = 1; i < 8; i++) cr_assert_gt(idx[i], idx[i - 1]);
    cr_assert_eq(sample_heads(640, 1, idx), 1);
}

/* ---------------------------------------------------------------- report */

Test(report, byte_counts_print_with_separators) {
    char buf[32];
    cr_assert_str_eq(fmt_bytes(11240734720ull, buf, sizeof(buf)), "11,240,734,720");
    cr_assert_str_eq(fmt_bytes(999, buf, sizeof(buf)), "999");
    cr_assert_str_eq(fmt_bytes(1000, buf, sizeof(buf)), "1,000");
    cr_assert_str_eq(fmt_bytes(0, buf, sizeof(buf)), "0");
}

static int count_fields(const char *line) {
    int n = 1;
    for (const char *p = line; *p && *p != '\n'; p++) n += *p == ',';
    return n;
}

Test(report, csv_rows_match_the_header) {
    Options o;
    options_defaults(&o);
    KernelModel m[2] = {{"a", 100, 5, {10, 20}, {1, 2}}, {"b", 300, 0, {30, 40}, {3, 4}}};
    KernelRun runs[3];
    memset(runs, 0, sizeof(runs));
    for (int i = 0; i < 2; i++) {
        runs[i].have_time = 1;
        runs[i].time.median_ms = 1.0 + i;
        runs[i].time.min_ms = 0.5 + i;
        runs[i].have_counted = 1;
        runs[i].counted = m[i].model;
    }
    Ceilings c = {4000, 60, 0};
    ReportContext ctx = {"99", "gpu", &o, &c, "total", 0};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_csv(f, &ctx, m, runs, 2, 1);
    fclose(f);
    const int fields = count_fields(REPORT_CSV_HEADER);
    cr_assert_eq(strncmp(buf, REPORT_CSV_HEADER, strlen(REPORT_CSV_HEADER)), 0);
    int lines = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"), lines++)
        cr_assert_eq(count_fields(line), fields, "line %d: %s", lines, line);
    cr_assert_eq(lines, 4, "header, two kernels, total");
    free(buf);
}

Test(report, total_row_sums_the_kernels) {
    KernelModel m[2] = {{"a", 100, 5, {10, 20}, {1, 2}}, {"b", 300, 0, {30, 40}, {3, 4}}};
    KernelModel t = model_total(m, 2, "total");
    cr_assert_str_eq(t.kernel, "total");
    cr_assert_eq(t.flops, 400);
    cr_assert_eq(t.softmax_ops, 5);
    cr_assert(t.model.read == 40 && t.model.write == 60 && t.ideal.read == 4 && t.ideal.write == 6);
}

Test(report, roofline_percentage) {
    /* 1 GFLOP over 1 GB: intensity 1 FLOP/B; at 1000 GB/s the bound is 1 TFLOP/s; 1 GFLOP in 2 ms is
     * 0.5 TFLOP/s = 50% */
    KernelModel k = {"k", 1e9, 0, {500000000ull, 500000000ull}, {0, 0}};
    Ceilings c = {1000, 50, 0};
    cr_assert_float_eq(roofline_pct(&k, 2.0, &c), 50.0, 1e-9);
    cr_assert(isnan(roofline_pct(&k, 2.0, NULL)));
}

/* ---------------------------------------------------------------- datasheet */

Test(datasheet, finds_a_gpu_by_the_name_the_driver_reports) {
    const DatasheetRow *h200 = datasheet_find("NVIDIA H200");
    cr_assert_not_null(h200);
    cr_assert_float_eq(h200->hbm_gbs, 4800.0, 1e-9);
    cr_assert_str_eq(datasheet_find("NVIDIA GeForce RTX 2070")->arch, "sm_75");
    cr_assert_float_eq(datasheet_find("A100")->fp16_tc_tflops, 312.0, 1e-9, "IO-ridge (ARTICLES.md): 312 TFLOP/s");
    cr_assert_null(datasheet_find("NVIDIA GeForce GTX 480"));
}

Test(count, products_and_sums_past_64_bits_raise_the_flag_instead_of_wrapping) {
    count_overflow_clear();
    cr_assert_eq(count_mul4(4, 640, 50000000ull * 50000000ull, 64), COUNT_LIMIT);
    cr_assert(count_overflowed(), "4 x 640 x (5e7)^2 x 64 does not fit in 64 bits");
    count_overflow_clear();
    cr_assert_eq(count_mul3(2, 3, 7), 42);
    cr_assert_eq(count_add(COUNT_LIMIT - 1, 1), COUNT_LIMIT);
    cr_assert(!count_overflowed(), "2^64 - 1 itself fits");
    cr_assert_eq(count_add(COUNT_LIMIT, 1), COUNT_LIMIT);
    cr_assert(count_overflowed());
    count_overflow_clear();
    KernelModel m[2] = {{"a", COUNT_LIMIT, 0, {1, 2}, {1, 2}}, {"b", 1, 0, {3, 4}, {3, 4}}};
    model_counts(m, 2);
    cr_assert(count_overflowed(), "the total row's FLOPs do not fit");
}

/* Out of host memory is bad input (exit 2 with the bytes needed and available), never exit 3 or a crash: every
 * host allocation of the programs goes through host_alloc (common/host_tensor.c holds the only malloc). */
Test(host_alloc, every_host_allocation_of_the_programs_goes_through_host_alloc) {
    char out[4096];
    const int rc = run_command("grep -n -E '\\b(malloc|calloc|realloc)\\(' common/*.c common/*.cu [0-9][0-9]_*/*.c "
                               "[0-9][0-9]_*/*.cu | grep -v '^common/host_tensor.c:'", out, sizeof(out));
    cr_assert_eq(rc, 1, "allocations that bypass host_alloc:\n%s", out);
}

/* run_on_threads runs every job once, on a thread or on the caller's, past THREADS_MAX too, and no job past n. */
typedef struct {
    int runs;
    char pad[60]; /* each job's count on a cache line of its own */
} CountedJob;
static void *count_run(void *arg) { return ((CountedJob *)arg)->runs++, NULL; }

Test(threads, every_job_runs_once) {
    static CountedJob job[THREADS_MAX + 10];
    const int sizes[] = {0, 1, 3, THREADS_MAX, THREADS_MAX + 5};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        memset(job, 0, sizeof(job));
        run_on_threads(count_run, job, sizeof(job[0]), sizes[s]);
        for (int x = 0; x < THREADS_MAX + 10; x++)
            cr_assert_eq(job[x].runs, x < sizes[s], "n = %d: job %d ran %d times", sizes[s], x, job[x].runs);
    }
}

Test(options, shrink_for_the_cpu_keeps_the_remainder_modulo_the_tile) {
    cr_assert_eq(shrink_seq_keeping_tiles(4096, 1024, 32), 1024);
    cr_assert_eq(shrink_seq_keeping_tiles(4097, 1024, 32), 993);
    cr_assert_eq(shrink_seq_keeping_tiles(4097, 256, 256), 257, "one whole tile and the ragged rows");
    cr_assert_eq(shrink_seq_keeping_tiles(4127, 16, 32), 63, "at least one whole tile besides the remainder");
    cr_assert_eq(shrink_seq_keeping_tiles(500, 1024, 32), 500, "within the target: unchanged");
    cr_assert_eq(shrink_seq_keeping_tiles(100, 64, 128), 100, "shorter than a tile: unchanged");
}

/* A chapter's own ceiling is measured once, then read from the cache file, beside the common ceilings' line and
 * any other chapter's; FA_REMEASURE=1 measures it again. No GPU: the device is described by hand. */
static int measured_calls;
static double measure_800(const DeviceInfo *info) { return (void)info, measured_calls++, 800.25; }
static double measure_5(const DeviceInfo *info) { return (void)info, measured_calls++, 5.0; }

Test(ceilings, a_chapter_ceiling_is_measured_once_and_cached_beside_the_others, .init = cr_redirect_stderr) {
    char dir[] = "/tmp/fa-ceilings-XXXXXX", path[512], text[512];
    cr_assert_not_null(mkdtemp(dir));
    setenv("FA_CACHE_DIR", dir, 1);
    unsetenv("FA_REMEASURE");
    DeviceInfo info;
    memset(&info, 0, sizeof(info));
    snprintf(info.slug, sizeof(info.slug), "Fake_GPU");
    info.cc_major = 9;
    snprintf(path, sizeof(path), "%s/ceilings-Fake_GPU-sm90.txt", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "hbm_gbs 4000.0 fp32_tflops 60.00\n");
    fclose(f);
    measured_calls = 0; /* each call once, outside the assertions (which may evaluate their arguments twice) */
    const double first = device_chapter_ceiling(&info, "wgmma_tflops", "wgmma", measure_800);
    const double again = device_chapter_ceiling(&info, "wgmma_tflops", "wgmma", measure_800);
    cr_assert_float_eq(first, 800.25, 1e-9);
    cr_assert_float_eq(again, 800.2, 1e-9, "the cached value, as written (%.1f)");
    cr_assert_eq(measured_calls, 1);
    const double other = device_chapter_ceiling(&info, "other_tflops", "other", measure_5);
    cr_assert_float_eq(other, 5.0, 1e-9);
    cr_assert_eq(measured_calls, 2);
    const Ceilings c = device_ceilings(&info); /* the common line still reads: nothing measured */
    cr_assert(c.cached && c.hbm_gbs == 4000.0 && c.fp32_tflops == 60.0);
    f = fopen(path, "r");
    cr_assert_not_null(f);
    const size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    cr_assert_str_eq(text, "hbm_gbs 4000.0 fp32_tflops 60.00\nwgmma_tflops 800.2\nother_tflops 5.0\n");
    setenv("FA_REMEASURE", "1", 1);
    const double remeasured = device_chapter_ceiling(&info, "wgmma_tflops", "wgmma", measure_800);
    cr_assert_float_eq(remeasured, 800.25, 1e-9);
    cr_assert_eq(measured_calls, 3);
    unsetenv("FA_REMEASURE");
    remove(path);
    rmdir(dir);
}
