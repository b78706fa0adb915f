/* Chapter 00's program from the outside (./ch00/run, built by make test-ch00; tests run from the repository
 * root): bad input exits 2 with a message, --model works anywhere and prints article 2's numbers
 * (IO-3kernels, IO-example, IO-scores in ARTICLES.md), and a CPU run checks every stage with counted == model. */
#include "ch00_test.h"

Test(cli, bad_input_exits_2_with_a_message) {
    const struct {
        const char *args, *says;
    } bad[] = {{"--model --frobnicate", "unknown option"},
               {"--model --seq 0", "--seq must be >= 1"},
               {"--model --dim 48", "d = 32, 64 and 128"},
               {"--model --dim 256", "--dim 256"},
               {"--model --br 32", "unknown option"},
               {"--model --causal", "unknown option"},
               {"--model --dtype bf16", "--dtype"},
               {"--model --gemm magma", "--gemm"},
               {"--model --batch 256 --heads 256", "65535"},
               {"--model --seq", "needs a value"},
               {"--model extra", "unexpected argument"}};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) assert_rejected("00", bad[k].args, bad[k].says);
}

Test(cli, model_prints_the_articles_total_and_the_compulsory_one) {
    char out[16384];
    cr_assert_eq(run_cli("--model --dtype fp16 --batch 1 --heads 1 --seq 4096 --dim 128", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "article 2's count (IO-3kernels in ARTICLES.md)"), "the label of its count: %s", out);
    cr_assert(strstr(out, "total 171,966,464 (8Nd + 10N^2"), "IO-3kernels' total: %s", out);
    cr_assert(strstr(out, "S = QK^T 35,651,584   P = softmax(S) 67,108,864   O = PV 69,206,016"), "its split: %s", out);
    cr_assert(strstr(out, "138,412,032"), "the compulsory total: %s", out);
    cr_assert(strstr(out, "0.0843 ms"), "IO-example: memory time on an A100: %s", out);
    cr_assert(strstr(out, "0.0275 ms"), "IO-example: compute time on an A100: %s", out);
    cr_assert(strstr(out, "134,217,728 B = 128 MiB per head, 4,294,967,296 B = 4 GiB for 32 heads"), "IO-scores: %s", out);
    cr_assert(strstr(out, "\nIO-example: N = 4096, d = 128"), "the IO-example line: %s", out);
    cr_assert(strstr(out, "\nIO-scores: S alone at N = 8192"), "the IO-scores line: %s", out);
    cr_assert(strstr(out, "intensity (IO-intensity)"), "the IO-intensity line: %s", out);
    cr_assert(strstr(out, "(32, 1): 32 blocks"), "the qk grid: %s", out);
}

Test(cli, model_csv_has_exact_bytes) {
    char out[16384];
    cr_assert_eq(run_cli("--model --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n00,qk_gemm,model,10,64,1024,64,fp32,85899345920,1509949440,2684354560,"), "%s", out);
    cr_assert(strstr(out, "\n00,softmax,model,10,64,1024,64,fp32,0,2684354560,2684354560,"), "%s", out);
    cr_assert(strstr(out, "\n00,pv_gemm,model,10,64,1024,64,fp32,85899345920,3355443200,167772160,"), "%s", out);
    cr_assert(strstr(out, "\n00,total,model,10,64,1024,64,fp32,171798691840,7549747200,5536481280,"), "%s", out);
    cr_assert_eq(run_cli("--model --gemm cublas --csv -", out, sizeof(out)), 0, "%s", out);
    cr_assert(strstr(out, "\n00,qk_cublas,model,10,64,1024,64,fp32,85899345920,335544320,2684354560,"), "%s", out);
}

Test(cli, cpu_run_checks_every_stage_and_counts_the_model) {
    const char *runs[] = {"--cpu --batch 2 --heads 3 --seq 33 --dim 64", "--cpu --batch 2 --heads 2 --seq 130 --dim 32 --dtype fp16",
                          "--cpu --batch 1 --heads 2 --seq 300 --dim 128 --gemm cublas"};
    for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
        char out[16384];
        cr_assert_eq(run_cli(runs[k], out, sizeof(out)), 0, "%s: %s", runs[k], out);
        cr_assert(strstr(out, "counted != model") == NULL, "%s: %s", runs[k], out);
        cr_assert(strstr(out, "FAILED") == NULL && strstr(out, "not checked") == NULL, "%s: %s", runs[k], out);
    }
}

/* Sizes whose counts are near or past 64 bits: every count printed exact, or the size rejected with the limit
 * (never a wrapped count, as a model read smaller than the compulsory one once showed). */
static void expect_counts(long long B, long long H, long long N, long long d) {
    const Count128 e = 4, h = (Count128)B * H, n = N, Tq = (N + QK_BR - 1) / QK_BR, Tp = (N + PV_BR(d) - 1) / PV_BR(d);
    ModelRow128 r[4] = {{"qk_gemm", 2 * h * n * n * d, e * h * (n * d + Tq * n * d), e * h * n * n},
                        {"softmax", 0, e * h * n * n, e * h * n * n},
                        {"pv_gemm", 2 * h * n * n * d, e * h * (n * n + Tp * n * d), e * h * n * d},
                        {"total", 0, 0, 0}};
    for (int k = 0; k < 3; k++) r[3].flops += r[k].flops, r[3].read += r[k].read, r[3].write += r[k].write;
    char args[128], shape[128];
    snprintf(args, sizeof(args), "--batch %lld --heads %lld --seq %lld --dim %lld", B, H, N, d);
    snprintf(shape, sizeof(shape), "%lld,%lld,%lld,%lld,fp32", B, H, N, d);
    assert_counts_exact_or_rejected("00", args, shape, r, 4);
}

Test(cli, counts_at_huge_sizes_are_exact_or_rejected) {
    const long long Ns[] = {50000000, 2147483647};
    for (int i = 0; i < 2; i++) {
        expect_counts(10, 64, Ns[i], 64);
        expect_counts(1, 1, Ns[i], 64);
        expect_counts(1, 1, Ns[i], 32);
    }
    expect_counts(1, 1, 300000000, 32); /* near the limit: fits */
    expect_counts(1, 1, 400000000, 32); /* each kernel's FLOPs fit, the total's do not */
}

/* --csv to a path that cannot be written stops the program before any work, not after the whole run. */
Test(cli, unwritable_csv_path_exits_2_before_any_work) {
    assert_csv_path_rejected_first("00", "");
    assert_csv_path_rejected_first("00", "--model");
    assert_csv_path_rejected_first("00", "--cpu --batch 1 --heads 1 --seq 64");
    assert_csv_file_replaced("00", "--model");
}

/* Q, K, V, O and S, P of every head: 4 (4 N d + 2 N^2) bytes per head, 564 TB here (without the check, whose
 * float64 head would add 17 GB). */
Test(cli, cpu_run_larger_than_host_memory_exits_2_before_allocating) {
    const unsigned long long heads = 65535, N = 32768, d = 32;
    assert_host_memory_rejected("00", "--cpu --no-check --batch 65535 --heads 1 --seq 32768 --dim 32",
                                4 * heads * (4 * N * d + 2 * N * N));
}

/* Without a GPU: a ragged N stays ragged modulo the GEMMs' row tiles (256 at d = 64, 512 at d = 32), and the
 * report says the size was reduced and from what. */
Test(cli, cpu_fallback_keeps_a_ragged_n_ragged_and_says_it_reduced_the_size) {
    cr_assert_eq(assert_cpu_fallback_keeps_the_problem("00", "--seq 4097", "00,total,", 10, 64, 4097, 256, 300), 257);
    assert_cpu_fallback_keeps_the_problem("00", "--seq 5000 --dim 32", "00,total,", 10, 64, 5000, 512, 1000);
    assert_cpu_fallback_keeps_the_problem("00", "--seq 4096 --dtype fp16", "00,total,", 10, 64, 4096, 256, 256);
}

Test(cli, cpu_run_shows_progress_only_when_it_takes_long) {
    assert_progress_lines("00", "--cpu --batch 1 --heads 3 --seq 64");
}
