/* Tests of the scripts around the measurements: plots/render-all.sh (the roofline data file and a real
 * gnuplot render) and common/scripts/profile.sh (ncu's CSV parsed and joined with a chapter's report).
 * Fixtures are written into a temporary folder by each test: a chapter CSV built column by column from
 * REPORT_CSV_HEADER (so a renamed column fails here, not in a plot), and an ncu CSV written by hand in the
 * format of ncu 2025 (`--csv --print-units base`). No GPU, no ncu needed; gnuplot is. Run from the repo root. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../support.h"
#include "report.h"

/* ---------------------------------------------------------------- helpers */

static char repo[4096];
static char dir[64]; /* this test's temporary folder, removed after the test whatever its outcome */

static void make_tmpdir(void) {
    cr_assert(getcwd(repo, sizeof repo) != NULL);
    snprintf(dir, sizeof dir, "/tmp/test_plots.XXXXXX");
    cr_assert(mkdtemp(dir) != NULL, "mkdtemp failed");
}

static void remove_tmpdir(void) {
    if (dir[0] == '\0') return;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

TestSuite(plots, .init = tooling_suite_init, .fini = remove_tmpdir); /* the sanitized pass skips these (support.h) */

/* Runs a shell command with stderr merged into stdout; returns its exit status, the output in out. */
static int run(const char *cmd, char *out, size_t len) {
    const size_t size = strlen(cmd) + sizeof("() 2>&1");
    char *full = malloc(size);
    cr_assert(full != NULL);
    snprintf(full, size, "(%s) 2>&1", cmd);
    const int status = run_command(full, out, len);
    free(full);
    return status;
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* Whole file into a malloc'd buffer (NUL-terminated); *len its size. NULL when it cannot be read. */
static char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    cr_assert(buf != NULL);
    size_t n = fread(buf, 1, (size_t)size, f);
    buf[n] = '\0';
    fclose(f);
    if (len) *len = n;
    return buf;
}

static int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* ------------------------------------------------- a chapter CSV, by column name */

/* One CSV row from "name=value" pairs separated by ';' (values may contain spaces, not ';'), in the column
 * order of REPORT_CSV_HEADER; columns not given stay empty. A name missing from the header fails the test. */
static void csv_row(FILE *f, const char *pairs) {
    char header[1024];
    snprintf(header, sizeof header, "%s", REPORT_CSV_HEADER);
    header[strcspn(header, "\r\n")] = '\0';

    char given[2048];
    snprintf(given, sizeof given, "%s", pairs);
    for (char *save = NULL, *pair = strtok_r(given, ";", &save); pair; pair = strtok_r(NULL, ";", &save)) {
        size_t name_len = strcspn(pair, "=");
        int found = 0;
        char columns[1024];
        snprintf(columns, sizeof columns, "%s", header);
        for (char *s2 = NULL, *c = strtok_r(columns, ",", &s2); c; c = strtok_r(NULL, ",", &s2))
            if (strlen(c) == name_len && strncmp(c, pair, name_len) == 0) found = 1;
        cr_assert(found, "fixture column '%.*s' is not in REPORT_CSV_HEADER", (int)name_len, pair);
    }

    int first = 1;
    for (char *s = NULL, *c = strtok_r(header, ",", &s); c; c = strtok_r(NULL, ",", &s)) {
        const char *value = "";
        size_t value_len = 0;
        for (const char *p = pairs; *p;) {
            size_t pair_len = strcspn(p, ";");
            size_t name_len = strcspn(p, "=");
            if (name_len < pair_len && name_len == strlen(c) && strncmp(p, c, name_len) == 0) {
                value = p + name_len + 1;
                value_len = pair_len - name_len - 1;
            }
            p += pair_len + (p[pair_len] == ';');
        }
        fprintf(f, "%s%.*s", first ? "" : ",", (int)value_len, value);
        first = 0;
    }
    fputc('\n', f);
}

/* Chapter 00 at the article's configuration (B=10 H=64 N=1024 d=64 fp32) on an H200: per head, qk_gemm reads
 * Q and K (2*N*d*4 bytes) and writes S (N*N*4), softmax reads S and writes P, pv_gemm reads P and V and
 * writes O. 640 heads. */
#define H200 "chapter=00;gpu=NVIDIA H200;B=10;H=64;N=1024;d=64;dtype=fp32;rows=655360;br=32;bc=32;causal=0;" \
             "gemm=own;ceiling_gbs=4213.5;ceiling_tflops=59.83;"
#define QK_GEMM "kernel=qk_gemm;flops=85899345920;softmax_ops=0;model_read_bytes=335544320;" \
                "model_write_bytes=2684354560;counted_read_bytes=335544320;counted_write_bytes=2684354560;" \
                "ideal_read_bytes=335544320;ideal_write_bytes=2684354560;rel_err=1.2e-07;max_abs_err=3.1e-07;"
#define SOFTMAX "kernel=softmax;flops=0;softmax_ops=3355443200;model_read_bytes=2684354560;" \
                "model_write_bytes=2684354560;counted_read_bytes=2684354560;counted_write_bytes=2684354560;" \
                "ideal_read_bytes=2684354560;ideal_write_bytes=2684354560;rel_err=8.0e-08;max_abs_err=2.0e-08;"
#define PV_GEMM "kernel=pv_gemm;flops=85899345920;softmax_ops=0;model_read_bytes=2852126720;" \
                "model_write_bytes=167772160;counted_read_bytes=2852126720;counted_write_bytes=167772160;" \
                "ideal_read_bytes=2852126720;ideal_write_bytes=167772160;rel_err=1.5e-07;max_abs_err=4.0e-07;"
#define TOTAL "kernel=total;flops=171798691840;softmax_ops=3355443200;model_read_bytes=5872025600;" \
              "model_write_bytes=5536481280;counted_read_bytes=5872025600;counted_write_bytes=5536481280;" \
              "ideal_read_bytes=335544320;ideal_write_bytes=167772160;rel_err=1.5e-07;max_abs_err=4.0e-07;"

/* Writes folder/name with the header and the given rows (NULL-terminated); name may hold one sub-folder
 * (chNN/run.csv), created when missing. */
static void write_chapter_csv(const char *folder, const char *name, const char *const *rows) {
    char path[4200];
    const char *slash = strchr(name, '/');
    if (slash) {
        snprintf(path, sizeof path, "%s/%.*s", folder, (int)(slash - name), name);
        cr_assert(mkdir(path, 0755) == 0 || errno == EEXIST, "cannot create %s", path);
    }
    snprintf(path, sizeof path, "%s/%s", folder, name);
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL, "cannot write %s", path);
    fprintf(f, "%s\n", REPORT_CSV_HEADER);
    for (int i = 0; rows[i]; i++) csv_row(f, rows[i]);
    fclose(f);
}

static const char *const CH00_H200[] = {
    H200 QK_GEMM "time_ms_median=2.600000;time_ms_min=2.550000;tflops=33.0382;gbs_model=1161.50;intensity=28.4444",
    H200 SOFTMAX "time_ms_median=1.450000;time_ms_min=1.440000;tflops=0.0000;gbs_model=3702.56;intensity=0.6250",
    H200 PV_GEMM "time_ms_median=2.900000;time_ms_min=2.850000;tflops=29.6205;gbs_model=1041.33;intensity=28.4444",
    H200 TOTAL "time_ms_median=6.950000;time_ms_min=6.900000;tflops=24.7192;gbs_model=1641.49;intensity=15.3529",
    NULL};

/* The data rows (not '#' comments) of a roofline .dat file: label, intensity, TFLOP/s. Returns the count. */
static int read_dat(const char *path, char labels[][32], double *intensity, double *tflops, int max) {
    size_t len;
    char *text = read_all(path, &len);
    cr_assert(text != NULL, "no data file %s", path);
    int n = 0;
    for (char *s = NULL, *line = strtok_r(text, "\n", &s); line; line = strtok_r(NULL, "\n", &s)) {
        if (line[0] == '#') continue;
        cr_assert(n < max, "too many rows in %s", path);
        cr_assert_eq(sscanf(line, "%31[^\t]\t%lf\t%lf", labels[n], &intensity[n], &tflops[n]), 3,
                     "bad row in %s: %s", path, line);
        n++;
    }
    free(text);
    return n;
}

static int find_label(char labels[][32], int n, const char *label) {
    for (int i = 0; i < n; i++)
        if (strcmp(labels[i], label) == 0) return i;
    return -1;
}

/* `make test` and CI install gnuplot (common/scripts/ensure-deps.sh), so there a missing gnuplot fails.
 * Elsewhere (a GPU machine running prebuilt test binaries, say) the rendering tests skip and say why. */
static void require_gnuplot(void) {
    char out[256];
    if (run("command -v gnuplot", out, sizeof out) == 0) return;
    cr_assert(!getenv("CI"), "gnuplot is needed for the plot tests: apt-get install gnuplot-nox");
    cr_skip_test("gnuplot is not installed here (apt-get install gnuplot-nox); make test installs it");
}

/* ---------------------------------------------------------------- render-all.sh */

Test(plots, render_all_writes_data_png_and_svg) {
    require_gnuplot();
    char cmd[8192], out[8192], path[4200];
    make_tmpdir();
    write_chapter_csv(dir, "ch00/run.csv", CH00_H200);
    /* Another CSV of the same chapter (a bench run): not the main one, not plotted. */
    write_chapter_csv(dir, "ch00/article_fp32_cublas.csv", CH00_H200);

    snprintf(cmd, sizeof cmd, "bash plots/render-all.sh %s %s/out", dir, dir);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "render-all failed:\n%s", out);
    cr_assert(strstr(out, "ch00_roofline.png") != NULL, "render-all does not say what it wrote:\n%s", out);

    char labels[8][32];
    double intensity[8], tflops[8];
    snprintf(path, sizeof path, "%s/out/ch00_roofline.dat", dir);
    int n = read_dat(path, labels, intensity, tflops, 8);
    cr_assert_eq(n, 4, "3 kernels + total expected, got %d rows", n);

    /* softmax: 5 ops per score element over 4 bytes read + 4 written per element: 5/8 FLOP/byte;
     * 3,355,443,200 ops in 1.45 ms = 2.31409876 TFLOP/s. */
    int s = find_label(labels, n, "softmax");
    cr_assert(s >= 0, "no softmax row");
    cr_assert(fabs(intensity[s] - 0.625) < 1e-9, "softmax intensity %.12g, expected 0.625", intensity[s]);
    cr_assert(fabs(tflops[s] - 3355443200.0 / 1.45e-3 / 1e12) < 1e-6, "softmax TFLOP/s %.9g", tflops[s]);
    /* qk_gemm per head: 2*N*N*d FLOPs over 4*(2*N*d + N*N) bytes = 131072 / 4608 = 28.444... */
    int q = find_label(labels, n, "qk_gemm");
    cr_assert(q >= 0, "no qk_gemm row");
    cr_assert(fabs(intensity[q] - 131072.0 / 4608.0) < 1e-6, "qk_gemm intensity %.12g", intensity[q]);
    /* total: (2 GEMMs + softmax ops) / all model bytes, and the total time. */
    int t = find_label(labels, n, "total");
    cr_assert(t >= 0, "no total row although the chapter has 3 kernels");
    cr_assert(fabs(intensity[t] - 175154135040.0 / 11408506880.0) < 1e-6, "total intensity %.12g", intensity[t]);
    cr_assert(fabs(tflops[t] - 175154135040.0 / 6.95e-3 / 1e12) < 1e-6, "total TFLOP/s %.9g", tflops[t]);

    size_t len;
    snprintf(path, sizeof path, "%s/out/ch00_roofline.png", dir);
    char *png = read_all(path, &len);
    cr_assert(png != NULL, "no PNG");
    cr_assert(len > 1024, "PNG of %zu bytes", len);
    cr_assert(memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0, "not a PNG");
    free(png);

    snprintf(path, sizeof path, "%s/out/ch00_roofline.svg", dir);
    char *svg = read_all(path, &len);
    cr_assert(svg != NULL, "no SVG");
    cr_assert(strstr(svg, "<svg") != NULL, "not an SVG");
    /* noenhanced labels: the underscore stays a character instead of starting a subscript. */
    cr_assert(strstr(svg, "qk_gemm") != NULL, "label qk_gemm missing or enhanced-text mangled");
    cr_assert(strstr(svg, "4,214 GB/s (measured)") != NULL, "the HBM ceiling is not labelled with its value");
    cr_assert(strstr(svg, "59.8 TFLOP/s (measured)") != NULL, "the FP32 ceiling is not labelled with its value");
    cr_assert(strstr(svg, "softmax ops counted as 5 per score element") != NULL, "caption missing");
    free(svg);

    snprintf(path, sizeof path, "%s/out/article_fp32_cublas_roofline.png", dir);
    cr_assert(!file_exists(path), "a secondary CSV (chNN/*.csv) was plotted");
}

Test(plots, single_kernel_chapter_has_no_total_point) {
    require_gnuplot();
    char cmd[8192], out[8192], path[4200];
    make_tmpdir();
    const char *const rows[] = {
        "chapter=01;gpu=NVIDIA H200;B=10;H=64;N=1024;d=64;dtype=fp32;rows=655360;ceiling_gbs=4213.5;"
        "ceiling_tflops=59.83;kernel=softmax;flops=0;softmax_ops=3355443200;model_read_bytes=2684354560;"
        "model_write_bytes=2684354560;time_ms_median=1.3",
        "chapter=01;gpu=NVIDIA H200;B=10;H=64;N=1024;d=64;dtype=fp32;rows=655360;ceiling_gbs=4213.5;"
        "ceiling_tflops=59.83;kernel=total;flops=0;softmax_ops=3355443200;model_read_bytes=2684354560;"
        "model_write_bytes=2684354560;time_ms_median=1.3",
        NULL};
    write_chapter_csv(dir, "ch01/run.csv", rows);
    snprintf(cmd, sizeof cmd, "bash plots/render-all.sh %s %s", dir, dir);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "render-all failed:\n%s", out);

    char labels[4][32];
    double intensity[4], tflops[4];
    snprintf(path, sizeof path, "%s/ch01_roofline.dat", dir);
    int n = read_dat(path, labels, intensity, tflops, 4);
    cr_assert_eq(n, 1, "one kernel: the total row would repeat it; got %d rows", n);
    cr_assert_str_eq(labels[0], "softmax");
}

Test(plots, rows_without_time_are_skipped) {
    require_gnuplot();
    char cmd[8192], out[8192], path[4200];
    make_tmpdir();
    const char *const rows[] = {CH00_H200[0], H200 SOFTMAX, CH00_H200[2], H200 TOTAL, NULL};
    write_chapter_csv(dir, "ch00/run.csv", rows);
    snprintf(cmd, sizeof cmd, "bash plots/render-all.sh %s %s", dir, dir);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "render-all failed:\n%s", out);
    cr_assert(strstr(out, "'softmax' has no time") != NULL, "no message for the untimed row:\n%s", out);

    char labels[8][32];
    double intensity[8], tflops[8];
    snprintf(path, sizeof path, "%s/ch00_roofline.dat", dir);
    int n = read_dat(path, labels, intensity, tflops, 8);
    cr_assert_eq(n, 2, "qk_gemm and pv_gemm expected, got %d rows", n);
    cr_assert_eq(find_label(labels, n, "softmax"), -1);
    cr_assert_eq(find_label(labels, n, "total"), -1);
}

Test(plots, cpu_run_is_skipped_with_a_message) {
    require_gnuplot();
    char cmd[8192], out[8192], path[4200];
    make_tmpdir();
    const char *const rows[] = {
        "chapter=00;gpu=cpu;B=1;H=2;N=64;d=32;dtype=fp32;" QK_GEMM "time_ms_median=3.1",
        "chapter=00;gpu=cpu;B=1;H=2;N=64;d=32;dtype=fp32;" TOTAL "time_ms_median=3.1",
        NULL};
    write_chapter_csv(dir, "ch00/run.csv", rows);
    snprintf(cmd, sizeof cmd, "bash plots/render-all.sh %s %s", dir, dir);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "a CPU run is not an error:\n%s", out);
    char expected[4300];
    snprintf(expected, sizeof expected, "no GPU ceilings in %s/ch00/run.csv: CPU run, no roofline", dir);
    cr_assert(strstr(out, expected) != NULL, "expected '%s', got:\n%s", expected, out);
    snprintf(path, sizeof path, "%s/ch00_roofline.png", dir);
    cr_assert(!file_exists(path), "a CPU run was plotted");
}

Test(plots, missing_or_empty_results_folder_fails) {
    char cmd[8192], out[8192];
    make_tmpdir();
    snprintf(cmd, sizeof cmd, "bash plots/render-all.sh %s/nonexistent", dir);
    cr_assert_neq(run(cmd, out, sizeof out), 0, "a missing folder must fail");
    cr_assert(strstr(out, "no results folder") != NULL, "unclear message:\n%s", out);

    snprintf(cmd, sizeof cmd, "bash plots/render-all.sh %s", dir);
    cr_assert_neq(run(cmd, out, sizeof out), 0, "a folder without chapter CSVs must fail");
    cr_assert(strstr(out, "no chapter CSV") != NULL, "unclear message:\n%s", out);

    cr_assert_neq(run("bash plots/render-all.sh", out, sizeof out), 0, "no argument must fail");
    cr_assert(strstr(out, "usage") != NULL, "no usage line:\n%s", out);
}

/* ---------------------------------------------------------------- profile.sh */

/* What `ncu --clock-control none --kernel-name-base function --print-units base --metrics
 * dram__bytes_read.sum,dram__bytes_write.sum --csv ./ch00/run --profile` prints: ==PROF== lines, then one row
 * per (launch, metric). The poisoning kernel belongs to no report row. */
static const char NCU_CH00[] =
    "==PROF== Connected to process 48213 (./ch00/run)\n"
    "==PROF== Profiling \"poison_kernel\" - 0: 0%....50%....100% - 1 pass\n"
    "==PROF== Profiling \"qk_gemm_kernel\" - 1: 0%....50%....100% - 1 pass\n"
    "==PROF== Profiling \"softmax_kernel\" - 2: 0%....50%....100% - 1 pass\n"
    "==PROF== Profiling \"pv_gemm_kernel\" - 3: 0%....50%....100% - 1 pass\n"
    "==PROF== Disconnected from process 48213\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
    "\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
    "\"0\",\"48213\",\"run\",\"127.0.0.1\",\"poison_kernel\",\"1\",\"7\",\"(256, 1, 1)\",\"(2640, 1, 1)\",\"0\","
    "\"9.0\",\"Command line profiler metrics\",\"dram__bytes_read.sum\",\"byte\",\"1,024\"\n"
    "\"0\",\"48213\",\"run\",\"127.0.0.1\",\"poison_kernel\",\"1\",\"7\",\"(256, 1, 1)\",\"(2640, 1, 1)\",\"0\","
    "\"9.0\",\"Command line profiler metrics\",\"dram__bytes_write.sum\",\"byte\",\"2,684,362,752\"\n"
    "\"1\",\"48213\",\"run\",\"127.0.0.1\",\"qk_gemm_kernel\",\"1\",\"7\",\"(16, 16, 1)\",\"(16, 16, 640)\",\"0\","
    "\"9.0\",\"Command line profiler metrics\",\"dram__bytes_read.sum\",\"byte\",\"341,835,776\"\n"
    "\"1\",\"48213\",\"run\",\"127.0.0.1\",\"qk_gemm_kernel\",\"1\",\"7\",\"(16, 16, 1)\",\"(16, 16, 640)\",\"0\","
    "\"9.0\",\"Command line profiler metrics\",\"dram__bytes_write.sum\",\"byte\",\"2,684,405,248\"\n"
    "\"2\",\"48213\",\"run\",\"127.0.0.1\",\"softmax_kernel\",\"1\",\"7\",\"(256, 1, 1)\",\"(655360, 1, 1)\",\"0\","
    "\"9.0\",\"Command line profiler metrics\",\"dram__bytes_read.sum\",\"byte\",\"2,684,389,376\"\n"
    "\"2\",\"48213\",\"run\",\"127.0.0.1\",\"softmax_kernel\",\"1\",\"7\",\"(256, 1, 1)\",\"(655360, 1, 1)\",\"0\","
    "\"9.0\",\"Command line profiler metrics\",\"dram__bytes_write.sum\",\"byte\",\"2,684,371,968\"\n"
    "\"3\",\"48213\",\"run\",\"127.0.0.1\",\"pv_gemm_kernel\",\"1\",\"7\",\"(16, 16, 1)\",\"(1, 16, 640)\",\"0\","
    "\"9.0\",\"Command line profiler metrics\",\"dram__bytes_read.sum\",\"byte\",\"2,853,120,512\"\n"
    "\"3\",\"48213\",\"run\",\"127.0.0.1\",\"pv_gemm_kernel\",\"1\",\"7\",\"(16, 16, 1)\",\"(1, 16, 640)\",\"0\","
    "\"9.0\",\"Command line profiler metrics\",\"dram__bytes_write.sum\",\"byte\",\"167,790,592\"\n";

/* The joined rows profile.sh must write for the fixtures above: model | counted | DRAM and DRAM/model. */
static const char *const JOINED_CH00[] = {
    "00,qk_gemm,qk_gemm_kernel,1,335544320,335544320,341835776,1.0188,2684354560,2684354560,2684405248,1.0000",
    "00,softmax,softmax_kernel,1,2684354560,2684354560,2684389376,1.0000,2684354560,2684354560,2684371968,1.0000",
    "00,pv_gemm,pv_gemm_kernel,1,2852126720,2852126720,2853120512,1.0003,167772160,167772160,167790592,1.0001",
    "00,total,,3,5872025600,5872025600,5879345664,1.0012,5536481280,5536481280,5536567808,1.0000",
    "00,other:poison_kernel,poison_kernel,1,,,1024,,,,2684362752,",
    NULL};

static void expect_lines(const char *path, const char *const *lines) {
    char *text = read_all(path, NULL);
    cr_assert(text != NULL, "no file %s", path);
    cr_assert(strncmp(text, "chapter,kernel,ncu_kernels,launches,", 36) == 0, "bad header in %s:\n%s", path, text);
    for (int i = 0; lines[i]; i++) {
        char line[512];
        snprintf(line, sizeof line, "\n%s\n", lines[i]);
        cr_assert(strstr(text, line) != NULL, "missing row\n  %s\nin %s:\n%s", lines[i], path, text);
    }
    free(text);
}

Test(plots, profile_joins_ncu_dram_bytes_with_the_report) {
    char cmd[8192], out[16384], path[4200];
    make_tmpdir();
    write_chapter_csv(dir, "report.csv", CH00_H200);
    snprintf(path, sizeof path, "%s/ncu.csv", dir);
    write_text(path, NCU_CH00);

    snprintf(cmd, sizeof cmd, "RESULTS_DIR=%s/results bash common/scripts/profile.sh --from %s/report.csv %s/ncu.csv",
             dir, dir, dir);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "profile.sh --from failed:\n%s", out);
    /* The printed table: thousands separators, both directions. */
    cr_assert(strstr(out, "341,835,776") != NULL && strstr(out, "2,684,405,248") != NULL, "table:\n%s", out);
    cr_assert(strstr(out, "bytes read") != NULL && strstr(out, "bytes written") != NULL, "table:\n%s", out);

    snprintf(path, sizeof path, "%s/results/ch00/profile.csv", dir);
    expect_lines(path, JOINED_CH00);
}

Test(plots, profile_sums_launches_and_refuses_scaled_units) {
    char cmd[8192], out[16384], path[4200];
    make_tmpdir();
    /* Two report rows, one name a prefix of the other; flash_v2 launches its kernel twice and a second
     * kernel once (demangled name with template and parameters). Then ncu's scaled units (no --print-units base)
     * for one value: refused, exit 2, the flag named. */
    const char *const rows[] = {
        H200 "kernel=flash;flops=1000;model_read_bytes=100;model_write_bytes=10;counted_read_bytes=100;"
             "counted_write_bytes=10;time_ms_median=1",
        H200 "kernel=flash_v2;flops=1000;model_read_bytes=200;model_write_bytes=20;counted_read_bytes=200;"
             "counted_write_bytes=20;time_ms_median=1",
        H200 "kernel=total;flops=2000;model_read_bytes=300;model_write_bytes=30;counted_read_bytes=300;"
             "counted_write_bytes=30;time_ms_median=2",
        NULL};
    write_chapter_csv(dir, "report.csv", rows);
    snprintf(path, sizeof path, "%s/ncu.csv", dir);
    write_text(path,
               "==PROF== Connected to process 7 (./ch03/run)\n"
               "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
               "\"0\",\"flash_kernel\",\"dram__bytes_read.sum\",\"byte\",\"100\"\n"
               "\"0\",\"flash_kernel\",\"dram__bytes_write.sum\",\"byte\",\"10\"\n"
               "\"1\",\"flash_v2_kernel\",\"dram__bytes_read.sum\",\"byte\",\"150\"\n"
               "\"1\",\"flash_v2_kernel\",\"dram__bytes_write.sum\",\"byte\",\"15\"\n"
               "\"1\",\"flash_v2_kernel\",\"gpu__time_duration.sum\",\"nsecond\",\"2,048\"\n"
               "\"2\",\"void flash_v2_combine_kernel<64>(const float *, float *)\",\"dram__bytes_read.sum\","
               "\"byte\",\"50\"\n"
               "\"2\",\"void flash_v2_combine_kernel<64>(const float *, float *)\",\"dram__bytes_write.sum\","
               "\"byte\",\"5\"\n"
               "\"3\",\"flash_v2_kernel\",\"dram__bytes_read.sum\",\"byte\",\"1\"\n"
               "\"3\",\"flash_v2_kernel\",\"dram__bytes_write.sum\",\"byte\",\"1\"\n"
               "==PROF== Disconnected from process 7\n");

    snprintf(cmd, sizeof cmd, "RESULTS_DIR=%s bash common/scripts/profile.sh --from %s/report.csv %s/ncu.csv",
             dir, dir, dir);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "profile.sh --from failed:\n%s", out);
    const char *const joined[] = {
        "00,flash,flash_kernel,1,100,100,100,1.0000,10,10,10,1.0000",
        "00,flash_v2,flash_v2_kernel + flash_v2_combine_kernel,3,200,200,201,1.0050,20,20,21,1.0500",
        "00,total,,4,300,300,301,1.0033,30,30,31,1.0333",
        NULL};
    snprintf(path, sizeof path, "%s/ch00/profile.csv", dir);
    expect_lines(path, joined);

    snprintf(cmd, sizeof cmd, "sed -i 's/\"byte\",\"100\"/\"Kbyte\",\"0.10\"/' %s/ncu.csv && "
             "bash common/scripts/profile.sh --from %s/report.csv %s/ncu.csv", dir, dir, dir);
    cr_assert_eq(run(cmd, out, sizeof out), 2, "scaled units must be refused:\n%s", out);
    cr_assert(strstr(out, "Kbyte: pass ncu --print-units base") != NULL, "unclear message:\n%s", out);
}

Test(plots, profile_rejects_output_without_ncu_table) {
    char cmd[8192], out[8192], path[4200];
    make_tmpdir();
    write_chapter_csv(dir, "report.csv", CH00_H200);
    snprintf(path, sizeof path, "%s/ncu.csv", dir);
    write_text(path, "==PROF== Connected to process 9 (./ch00/run)\n"
                     "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
                     "Performance Counters on the target device 0.\n");
    snprintf(cmd, sizeof cmd, "bash common/scripts/profile.sh --from %s/report.csv %s/ncu.csv", dir, dir);
    cr_assert_neq(run(cmd, out, sizeof out), 0, "no ncu table must fail");
    cr_assert(strstr(out, "no ncu CSV table") != NULL, "unclear message:\n%s", out);
    cr_assert(strstr(out, "ERR_NVGPUCTRPERM") != NULL, "ncu's error is not shown:\n%s", out);
}

/* The live mode end to end, with stand-ins for the chapter's program and for ncu (written into a temporary
 * folder that plays the repository root): checks the commands profile.sh runs and the table it writes. */
static void fake_tools(const char *report_csv) {
    char path[4200], text[8192];
    snprintf(path, sizeof path, "%s/ch00", dir);
    cr_assert_eq(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/ch00/run", dir);
    snprintf(text, sizeof text,
             "#!/bin/bash\necho \"run $*\" >> %s/calls.log\n"
             "while [ $# -gt 0 ]; do [ \"$1\" = --csv ] && cp %s \"$2\"; shift; done\n",
             dir, report_csv);
    write_text(path, text);
    cr_assert_eq(chmod(path, 0755), 0);
    snprintf(path, sizeof path, "%s/fake-ncu", dir);
    snprintf(text, sizeof text,
             "#!/bin/bash\necho \"ncu $*\" >> %s/calls.log\n"
             "while [ $# -gt 0 ]; do [ \"$1\" = --log-file ] && cp %s/ncu.csv \"$2\"; shift; done\n",
             dir, dir);
    write_text(path, text);
    cr_assert_eq(chmod(path, 0755), 0);
    snprintf(path, sizeof path, "%s/ncu.csv", dir);
    write_text(path, NCU_CH00);
}

Test(plots, profile_live_runs_the_chapter_then_ncu) {
    char cmd[8192], out[16384], path[4200];
    make_tmpdir();
    write_chapter_csv(dir, "report.csv", CH00_H200);
    snprintf(path, sizeof path, "%s/report.csv", dir);
    fake_tools(path);

    snprintf(cmd, sizeof cmd, "cd %s && NCU=./fake-ncu RESULTS_DIR=res bash %s/common/scripts/profile.sh 0 --seq 512",
             dir, repo);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "profile.sh failed:\n%s", out);
    snprintf(path, sizeof path, "%s/res/ch00/profile.csv", dir);
    expect_lines(path, JOINED_CH00);

    snprintf(path, sizeof path, "%s/calls.log", dir);
    char *calls = read_all(path, NULL);
    cr_assert(calls != NULL);
    cr_assert(strstr(calls, "run --csv ") != NULL && strstr(calls, " --seq 512\n") != NULL, "calls:\n%s", calls);
    const char *ncu = strstr(calls, "ncu ");
    cr_assert(ncu != NULL, "ncu was not run:\n%s", calls);
    const char *flags[] = {"--clock-control none", "--kernel-name-base function", "--print-units base",
                           "--metrics dram__bytes_read.sum,dram__bytes_write.sum", "--csv",
                           "./ch00/run --profile --seq 512"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        cr_assert(strstr(ncu, flags[i]) != NULL, "ncu not given '%s':\n%s", flags[i], calls);
    free(calls);
}

Test(plots, profile_fails_clearly_without_gpu_or_ncu) {
    char cmd[8192], out[8192], path[4200];
    make_tmpdir();
    const char *const cpu_rows[] = {"chapter=00;gpu=cpu;B=1;H=2;N=64;d=32;dtype=fp32;" QK_GEMM, NULL};
    write_chapter_csv(dir, "cpu.csv", cpu_rows);
    snprintf(path, sizeof path, "%s/cpu.csv", dir);
    fake_tools(path);

    snprintf(cmd, sizeof cmd, "cd %s && NCU=./fake-ncu bash %s/common/scripts/profile.sh 00", dir, repo);
    cr_assert_eq(run(cmd, out, sizeof out), 4, "a CPU run must exit 4:\n%s", out);
    cr_assert(strstr(out, "no CUDA device") != NULL, "unclear message:\n%s", out);

    snprintf(cmd, sizeof cmd, "cd %s && NCU=%s/no-such-ncu bash %s/common/scripts/profile.sh 00", dir, dir, repo);
    cr_assert_eq(run(cmd, out, sizeof out), 3, "a missing ncu must exit 3:\n%s", out);
    cr_assert(strstr(out, "ncu (Nsight Compute) not found") != NULL, "unclear message:\n%s", out);

    snprintf(cmd, sizeof cmd, "cd %s && NCU=./fake-ncu bash %s/common/scripts/profile.sh 07", dir, repo);
    cr_assert_eq(run(cmd, out, sizeof out), 3, "a missing program must exit 3:\n%s", out);
    cr_assert(strstr(out, "make ch07") != NULL, "unclear message:\n%s", out);

    cr_assert_eq(run("bash common/scripts/profile.sh", out, sizeof out), 2, "no chapter: usage, exit 2");
}

/* ---------------------------------------------------------------- DRAM intensity, one total too many */

#define CH03 "chapter=03;gpu=NVIDIA H200;B=10;H=64;N=1024;d=64;dtype=fp32;rows=655360;br=32;bc=32;causal=0;" \
             "gemm=own;ceiling_gbs=4196.0;ceiling_tflops=57.4;softmax_ops=3355443200;flops=171798691840;" \
             "model_read_bytes=10905190400;model_write_bytes=170393600;time_ms_median=13.81;"

Test(plots, measured_dram_bytes_give_a_second_point_per_kernel) {
    require_gnuplot();
    char cmd[8192], out[8192], path[4200];
    make_tmpdir();
    const char *const rows[] = {CH03 "kernel=flash_v2", CH03 "kernel=total", NULL};
    write_chapter_csv(dir, "ch03/run.csv", rows);
    snprintf(path, sizeof path, "%s/ch03/profile.csv", dir);
    write_text(path, "chapter,kernel,ncu_kernels,launches,model_read_bytes,counted_read_bytes,dram_read_bytes,"
                     "dram_read_over_model,model_write_bytes,counted_write_bytes,dram_write_bytes,dram_write_over_model\n"
                     "03,flash_v2,flash_v2_kernel,1,10905190400,10905190400,503664896,0.0462,170393600,170393600,"
                     "160674304,0.9430\n"
                     "03,total,,1,10905190400,10905190400,503664896,0.0462,170393600,170393600,160674304,0.9430\n");
    snprintf(cmd, sizeof cmd, "bash plots/render-all.sh %s %s/out", dir, dir);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "render-all failed:\n%s", out);
    char expected[4300];
    snprintf(expected, sizeof expected, "from %s/ch03/run.csv, DRAM bytes from %s/ch03/profile.csv", dir, dir);
    cr_assert(strstr(out, expected) != NULL, "does not say which data it drew from:\n%s", out);

    /* One kernel: its total is not a second point. On DRAM bytes: 175154135040 FLOP / 664339200 B. */
    char labels[4][32];
    double intensity[4], tflops[4];
    snprintf(path, sizeof path, "%s/out/ch03_roofline.dat", dir);
    cr_assert_eq(read_dat(path, labels, intensity, tflops, 4), 1, "the total repeats the only kernel");
    snprintf(path, sizeof path, "%s/out/ch03_roofline_dram.dat", dir);
    char *text = read_all(path, NULL);
    cr_assert(text != NULL, "no DRAM data file");
    char label[32];
    double model, dram, perf;
    int index;
    cr_assert_eq(sscanf(text, "%31[^\t]\t%lf\t%lf\t%lf\t%d", label, &model, &dram, &perf, &index), 5, "%s", text);
    free(text);
    cr_assert_str_eq(label, "flash_v2");
    cr_assert(fabs(model - 175154135040.0 / 11075584000.0) < 1e-6, "model intensity %.9g", model);
    cr_assert(fabs(dram - 175154135040.0 / 664339200.0) < 1e-3, "DRAM intensity %.9g", dram);
    cr_assert_eq(index, 1);

    snprintf(path, sizeof path, "%s/out/ch03_roofline.svg", dir);
    char *svg = read_all(path, NULL);
    cr_assert(svg != NULL);
    cr_assert(strstr(svg, "flash_v2 DRAM  264 FLOP/B") != NULL, "the DRAM point is not labelled");
    cr_assert(strstr(svg, "open: on the DRAM bytes ncu measured") != NULL, "the markers are not explained");
    free(svg);
}

/* Chapter 02's shape: an init kernel without FLOPs, one kernel, a total equal to it: one point. */
Test(plots, total_equal_to_its_only_plotted_kernel_is_dropped) {
    require_gnuplot();
    char cmd[8192], out[8192], path[4200];
    make_tmpdir();
    const char *const rows[] = {CH03 "kernel=flash_v1_init;flops=0;softmax_ops=0;time_ms_median=0.05",
                                CH03 "kernel=flash_v1", CH03 "kernel=total", NULL};
    write_chapter_csv(dir, "ch02/run.csv", rows);
    snprintf(cmd, sizeof cmd, "bash plots/render-all.sh %s %s", dir, dir);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "render-all failed:\n%s", out);
    char labels[4][32];
    double intensity[4], tflops[4];
    snprintf(path, sizeof path, "%s/ch02_roofline.dat", dir);
    int n = read_dat(path, labels, intensity, tflops, 4);
    cr_assert_eq(n, 1, "flash_v1 and its equal total: %d points", n);
    cr_assert_str_eq(labels[0], "flash_v1");
}

/* One axis range for the whole book: a plot of one kernel near the ridge spans the same decades as any other. */
Test(plots, every_chapter_shares_one_axis_range) {
    require_gnuplot();
    char cmd[8192], out[8192], path[4200];
    make_tmpdir();
    const char *const rows[] = {CH03 "kernel=flash_v2", NULL};
    write_chapter_csv(dir, "ch03/run.csv", rows);
    snprintf(cmd, sizeof cmd, "bash plots/render-all.sh %s %s", dir, dir);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "render-all failed:\n%s", out);
    snprintf(path, sizeof path, "%s/ch03_roofline.svg", dir);
    char *svg = read_all(path, NULL);
    cr_assert(svg != NULL);
    cr_assert(strstr(svg, ">0.1<") != NULL && strstr(svg, ">1000<") != NULL, "x axis not 0.1 .. 1000");
    free(svg);
}

/* ---------------------------------------------------------------- roofline labels and the roof */

/* Chapter 05's three kernels sit just under the HBM slope, too far right for their labels to fit to the right;
 * chapter 01's softmax sits above it (its model bytes count L2 hits). No label may cross a roof line: each lies
 * wholly under the roof (its top under the roof at its left end, the roof rising to the right) or wholly over
 * it (its bottom over the roof at its right end). */
Test(plots, no_label_crosses_a_roof_line) {
    require_gnuplot();
    char cmd[8192], out[8192], path[4200];
    make_tmpdir();
    snprintf(path, sizeof path, "%s/points.dat", dir);
    write_text(path, "flash_wmma 64x64\t61.3553719\t88.6486524\n"
                     "flash_mma 64x64\t61.3553719\t200.813249\n"
                     "flash_mma_async 128x64\t115.79896\t305.691923\n"
                     "softmax_online\t0.417\t2.36\n"
                     "softmax\t0.625\t2.62\n");
    snprintf(cmd, sizeof cmd,
             "gnuplot -e \"datafile='%s/points.dat'; out='%s/roof'; bw_gbs=4211.3; peak_tflops=989; "
             "labels_out='%s/labels.txt'\" plots/roofline.gp",
             dir, dir, dir);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "gnuplot failed:\n%s", out);
    snprintf(path, sizeof path, "%s/labels.txt", dir);
    char *text = read_all(path, NULL);
    cr_assert(text != NULL, "no label boxes written");
    int n = 0;
    for (char *s = NULL, *line = strtok_r(text, "\n", &s); line; line = strtok_r(NULL, "\n", &s)) {
        char label[128];
        double x0, x1, y0, y1, roof0, roof1;
        cr_assert_eq(sscanf(line, "%127[^\t]\t%lf\t%lf\t%lf\t%lf\t%lf\t%lf", label, &x0, &x1, &y0, &y1, &roof0, &roof1), 7,
                     "bad line: %s", line);
        cr_assert(x0 < x1 && y0 < y1, "empty box: %s", line);
        cr_assert(y1 <= roof0 || y0 >= roof1, "label '%s' crosses the roof: %s", label, line);
        n++;
    }
    free(text);
    cr_assert_eq(n, 5, "one label per point expected, got %d", n);
}

/* ---------------------------------------------------------------- chapter 05's sweep beside PyTorch */

/* Our kernel at one token count (B x N = 1024) over N = 512, 1024, d = 64 and 128, with and without the mask;
 * PyTorch's kernels of the same bench (peers.py's columns), one of them missing. */
#define SWEEP "chapter=05;kernel=flash_mma_async;gpu=NVIDIA H200;H=16;dtype=fp16;gemm=own;br=128;bc=64;"
#define PEERS_HEADER "peer,gpu,torch,B,H,N,d,dtype,causal,time_ms_median,time_ms_min,tflops,rel_err_vs_3op\n"

static void write_sweep_fixture(void) {
    static const char *const rows[] = {
        SWEEP "B=2;N=512;d=64;causal=0;flops=2147483648;time_ms_median=0.100;rel_err=2.5e-04",
        SWEEP "B=1;N=1024;d=64;causal=0;flops=4294967296;time_ms_median=0.200;rel_err=",
        SWEEP "B=2;N=512;d=64;causal=1;flops=1073741824;time_ms_median=0.100;rel_err=2.5e-04",
        SWEEP "B=1;N=1024;d=64;causal=1;flops=2147483648;time_ms_median=0.200;rel_err=",
        SWEEP "B=2;N=512;d=128;causal=0;flops=4294967296;time_ms_median=0.100;rel_err=2.5e-04",
        SWEEP "B=1;N=1024;d=128;causal=0;flops=8589934592;time_ms_median=0.200;rel_err=",
        SWEEP "B=2;N=512;d=128;causal=1;flops=2147483648;time_ms_median=0.100;rel_err=2.5e-04",
        SWEEP "B=1;N=1024;d=128;causal=1;flops=4294967296;time_ms_median=0.200;rel_err=",
        SWEEP "B=2;N=512;d=64;causal=0;dtype=bf16;flops=2147483648;time_ms_median=9.9;rel_err=2.0e-03",
        NULL};
    write_chapter_csv(dir, "ch05/sweep.csv", rows);
    char path[4200];
    snprintf(path, sizeof path, "%s/ch05/peers.csv", dir);
    /* sdpa_flash twice our time at (2, 512, 64, no mask); no sdpa_efficient row there */
    write_text(path, PEERS_HEADER
               "sdpa_flash,NVIDIA H200,2.11.0,2,16,512,64,fp16,0,0.200,0.19,1,0\n"
               "sdpa_cudnn,NVIDIA H200,2.11.0,2,16,512,64,fp16,0,0.050,0.05,1,0\n"
               "sdpa_flash,NVIDIA H200,2.11.0,1,16,1024,64,fp16,0,0.200,0.19,1,0\n");
}

Test(plots, sweep_beside_pytorch_in_four_panels) {
    require_gnuplot();
    char cmd[8192], out[8192], path[4200];
    make_tmpdir();
    const char *const run_rows[] = {CH03 "kernel=flash_v2", NULL};
    write_chapter_csv(dir, "ch03/run.csv", run_rows);
    write_sweep_fixture();
    snprintf(cmd, sizeof cmd, "bash plots/render-all.sh %s %s/out", dir, dir);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "render-all failed:\n%s", out);
    cr_assert(strstr(out, "ch05_sweep.png") != NULL, "render-all does not say it drew the sweep:\n%s", out);

    /* the chapter's FLOPs at each shape (its flops column: 4 B H N^2 d, halved when causal) over the median time: at
     * B=2 H=16 N=512 d=64, 2^31 FLOPs; in 0.1 ms 21.474836 TFLOP/s, the peers' with the same FLOPs over their own
     * times. */
    snprintf(path, sizeof path, "%s/out/ch05_sweep.dat", dir);
    char *dat = read_all(path, NULL);
    cr_assert(dat != NULL, "no sweep data file");
    /* sdpa_efficient has no row at all: its column is left out */
    cr_assert(strstr(dat, "\n512\t21.4748\t10.7374\t42.9497\n") != NULL, "d = 64, no mask, N = 512:\n%s", dat);
    cr_assert(strstr(dat, "\n1024\t21.4748\t21.4748\tNaN\n") != NULL, "d = 64, no mask, N = 1024:\n%s", dat);
    cr_assert(strstr(dat, "\n512\t10.7374\tNaN\tNaN\n") != NULL, "causal halves the FLOPs:\n%s", dat);
    cr_assert(strstr(dat, "9.9") == NULL && strstr(dat, "\t0.2169") == NULL, "a bf16 row was drawn:\n%s", dat);
    free(dat);

    snprintf(path, sizeof path, "%s/out/ch05_sweep.png", dir);
    size_t len;
    char *png = read_all(path, &len);
    cr_assert(png != NULL && len > 1024 && memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0, "no PNG");
    free(png);
    snprintf(path, sizeof path, "%s/out/ch05_sweep.svg", dir);
    char *svg = read_all(path, NULL);
    cr_assert(svg != NULL && strstr(svg, "<svg") != NULL, "no SVG");
    cr_assert(strstr(svg, "SDPA memory-efficient") == NULL, "a peer without rows is in the key");
    const char *expected[] = {"flash_mma_async (chapter 05)", "FlashAttention-2 (SDPA flash)", "cuDNN (SDPA cuDNN)",
                              "d = 64, no mask", "d = 128, causal", "sequence length N",
                              "B x N = 1024 tokens, H = 16", "PyTorch 2.11.0 timed in the same bench",
                              "ours at N = 1024 not checked against the reference (--no-check)"};
    for (size_t i = 0; i < sizeof expected / sizeof *expected; i++)
        cr_assert(strstr(svg, expected[i]) != NULL, "'%s' is not in the sweep plot", expected[i]);
    free(svg);
}

/* A chapter of several steps (chapter 06): each kernel of its sweep a series in the order of the file, after the
 * kernel of another chapter its bench ran at the same shapes (ch05_sweep.csv); the peers timed in three rounds, each
 * drawn at its fastest. */
#define SWEEP06 "chapter=06;gpu=NVIDIA H200;H=16;dtype=fp16;gemm=own;br=64;bc=64;B=2;N=512;rel_err=2.5e-04;"
Test(plots, sweep_of_several_steps_and_the_fastest_round) {
    require_gnuplot();
    char cmd[8192], out[8192], path[4200];
    make_tmpdir();
    const char *const run_rows[] = {CH03 "kernel=flash_v2", NULL};
    write_chapter_csv(dir, "ch03/run.csv", run_rows);
    static const char *const rows[] = {
        SWEEP06 "d=64;kernel=flash_wgmma;causal=0;flops=2147483648;time_ms_median=0.100",
        SWEEP06 "d=64;kernel=flash_tma;causal=0;flops=2147483648;time_ms_median=0.050",
        SWEEP06 "d=64;kernel=flash_wgmma;causal=1;flops=1073741824;time_ms_median=0.100",
        SWEEP06 "d=64;kernel=flash_tma;causal=1;flops=1073741824;time_ms_median=0.050",
        SWEEP06 "d=128;kernel=flash_wgmma;causal=0;flops=4294967296;time_ms_median=0.100",
        SWEEP06 "d=128;kernel=flash_tma;causal=0;flops=4294967296;time_ms_median=0.050",
        SWEEP06 "d=128;kernel=flash_wgmma;causal=1;flops=2147483648;time_ms_median=0.100",
        SWEEP06 "d=128;kernel=flash_tma;causal=1;flops=2147483648;time_ms_median=0.050",
        NULL};
    write_chapter_csv(dir, "ch06/sweep.csv", rows);
    static const char *const rows05[] = {
        "chapter=05;kernel=flash_mma_async;gpu=NVIDIA H200;H=16;dtype=fp16;gemm=own;br=128;bc=64;B=2;N=512;d=64;"
        "causal=0;flops=2147483648;time_ms_median=0.200;rel_err=2.5e-04",
        NULL};
    write_chapter_csv(dir, "ch06/ch05_sweep.csv", rows05);
    snprintf(path, sizeof path, "%s/ch06/peers.csv", dir);
    write_text(path, PEERS_HEADER
               "sdpa_cudnn,NVIDIA H200,2.11.0,2,16,512,64,fp16,0,0.080,0.07,1,0\n"
               "sdpa_cudnn,NVIDIA H200,2.11.0,2,16,512,64,fp16,0,0.050,0.05,1,0\n"
               "sdpa_cudnn,NVIDIA H200,2.11.0,2,16,512,64,fp16,0,0.070,0.07,1,0\n");
    snprintf(cmd, sizeof cmd, "bash plots/render-all.sh %s %s/out", dir, dir);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "render-all failed:\n%s", out);
    snprintf(path, sizeof path, "%s/out/ch06_sweep.dat", dir);
    char *dat = read_all(path, NULL);
    cr_assert(dat != NULL, "no sweep data file:\n%s", out);
    /* 2^31 FLOPs: chapter 05's kernel in 0.2 ms, wgmma 0.1, tma 0.05, cuDNN's fastest round 0.05 */
    cr_assert(strstr(dat, "flash_mma_async (chapter 05), flash_wgmma (chapter 06), flash_tma (chapter 06), sdpa_cudnn")
                  != NULL, "the series' order:\n%s", dat);
    cr_assert(strstr(dat, "\n512\t10.7374\t21.4748\t42.9497\t42.9497\n") != NULL, "d = 64, no mask:\n%s", dat);
    cr_assert(strstr(dat, "\n512\tNaN\t10.7374\t21.4748\tNaN\n") != NULL, "causal:\n%s", dat);
    free(dat);
}

/* A backward pass (chapter 07): each run is a setup row (the forward that makes O and L), its kernels and the
 * backward's total; drawn as the total under the name of the kernel before it, with the backward's FLOPs
 * (10 B H N^2 d, halved when causal: the flops column) for every side; PyTorch's backward (peers.py --backward:
 * sdpa_flash_bwd) drawn as FlashAttention-2; the title says backward; fp32 runs are not drawn. A row without FLOPs
 * fails clearly. */
#define SWEEP07 "chapter=07;gpu=NVIDIA H200;H=16;gemm=own;br=64;bc=128;B=2;N=512;rel_err=2.5e-04;"
#define RUN07(D, C, FWD, BWD, MS)                                                                                    \
    SWEEP07 "dtype=fp32;setup=1;kernel=forward;d=" D ";causal=" C ";flops=" FWD ";time_ms_median=1.0",                \
        SWEEP07 "dtype=fp16;setup=0;kernel=tc_bwd_d;d=" D ";causal=" C ";flops=0;time_ms_median=0.01",               \
        SWEEP07 "dtype=fp16;setup=0;kernel=tc_ovl_bwd;d=" D ";causal=" C ";flops=" BWD ";time_ms_median=0.09",       \
        SWEEP07 "dtype=fp16;setup=0;kernel=backward;d=" D ";causal=" C ";flops=" BWD ";time_ms_median=" MS
Test(plots, sweep_of_a_backward_pass_draws_each_runs_total) {
    require_gnuplot();
    char cmd[8192], out[8192], path[4200];
    make_tmpdir();
    const char *const run_rows[] = {CH03 "kernel=flash_v2", NULL};
    write_chapter_csv(dir, "ch03/run.csv", run_rows);
    static const char *const rows[] = {
        RUN07("64", "0", "2147483648", "5368709120", "0.100"), RUN07("64", "1", "1073741824", "2684354560", "0.100"),
        RUN07("128", "0", "4294967296", "10737418240", "0.100"),
        RUN07("128", "1", "2147483648", "5368709120", "0.100"),
        SWEEP07 "dtype=fp32;setup=1;kernel=forward;d=64;causal=0;flops=2147483648;time_ms_median=1.0",
        SWEEP07 "dtype=fp32;setup=0;kernel=flash_bwd_d;d=64;causal=0;flops=0;time_ms_median=0.1",
        SWEEP07 "dtype=fp32;setup=0;kernel=flash_bwd;d=64;causal=0;flops=5368709120;time_ms_median=9.0",
        SWEEP07 "dtype=fp32;setup=0;kernel=backward;d=64;causal=0;flops=5368709120;time_ms_median=9.1",
        NULL};
    write_chapter_csv(dir, "ch07/sweep.csv", rows);
    snprintf(path, sizeof path, "%s/ch07/peers.csv", dir);
    write_text(path, PEERS_HEADER "sdpa_flash_bwd,NVIDIA H200,2.11.0,2,16,512,64,fp16,0,0.200,0.19,1,0\n");
    snprintf(cmd, sizeof cmd, "bash plots/render-all.sh %s %s/out", dir, dir);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "render-all failed:\n%s", out);
    snprintf(path, sizeof path, "%s/out/ch07_sweep.dat", dir);
    char *dat = read_all(path, NULL);
    cr_assert(dat != NULL, "no sweep data file:\n%s", out);
    /* 10 x 2 x 16 x 512^2 x 64 = 5,368,709,120 FLOPs: the total's 0.1 ms 53.6871 TFLOP/s, flash's 0.2 ms 26.8435 */
    cr_assert(strstr(dat, "TFLOP/s of tc_ovl_bwd (chapter 07), sdpa_flash\n512\t53.6871\t26.8435\n") != NULL,
              "d = 64, no mask:\n%s", dat);
    cr_assert(strstr(dat, "\n512\t26.8435\tNaN\n") != NULL, "causal halves the FLOPs:\n%s", dat);
    cr_assert(strstr(dat, "10 B H N^2 d") != NULL && strstr(dat, "forward") == NULL && strstr(dat, "tc_bwd_d") == NULL,
              "a setup or kernel row drawn, or the forward's FLOPs:\n%s", dat);
    free(dat);
    snprintf(path, sizeof path, "%s/out/ch07_sweep.svg", dir);
    char *svg = read_all(path, NULL);
    cr_assert(svg != NULL && strstr(svg, "attention backward pass") != NULL && strstr(svg, "10 B H N^2 d") != NULL,
              "the figure does not say backward:\n%s", out);
    free(svg);

    /* the same runs with a total without FLOPs: exit 2 naming the row, no data file */
    static const char *const bad[] = {
        SWEEP07 "dtype=fp16;setup=1;kernel=forward;d=64;causal=0;flops=2147483648;time_ms_median=1.0",
        SWEEP07 "dtype=fp16;setup=0;kernel=tc_ovl_bwd;d=64;causal=0;flops=5368709120;time_ms_median=0.09",
        SWEEP07 "dtype=fp16;setup=0;kernel=backward;d=64;causal=0;flops=;time_ms_median=0.1", NULL};
    write_chapter_csv(dir, "ch07/sweep.csv", bad);
    snprintf(cmd, sizeof cmd, "rm -rf %s/out; python3 plots/sweep_data.py %s/ch07 %s/x.dat; echo \"exit $?\"", dir, dir,
             dir);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "exit 2") && strstr(out, "tc_ovl_bwd at N = 512, d = 64: no FLOPs"), "%s", out);
    snprintf(path, sizeof path, "%s/x.dat", dir);
    cr_assert(!file_exists(path), "a data file was written without FLOPs");
}

Test(plots, sweep_with_a_bad_peers_file_fails_clearly) {
    require_gnuplot();
    char cmd[8192], out[8192], path[4200];
    make_tmpdir();
    const char *const run_rows[] = {CH03 "kernel=flash_v2", NULL};
    write_chapter_csv(dir, "ch03/run.csv", run_rows);
    write_sweep_fixture();
    snprintf(path, sizeof path, "%s/ch05/peers.csv", dir);
    write_text(path, "peer,gpu,B,H,N,d,dtype,causal\nsdpa_flash,NVIDIA H200,2,16,512,64,fp16,0\n");
    snprintf(cmd, sizeof cmd, "bash plots/render-all.sh %s %s/out", dir, dir);
    cr_assert_neq(run(cmd, out, sizeof out), 0, "a peers file without times must fail:\n%s", out);
    cr_assert(strstr(out, "peers.csv: no column torch, time_ms_median") != NULL, "unclear message:\n%s", out);
    snprintf(path, sizeof path, "%s/out/ch05_sweep.dat", dir);
    cr_assert(!file_exists(path), "a sweep data file was written from a bad peers file");
    snprintf(path, sizeof path, "%s/out/ch03_roofline.png", dir);
    cr_assert(file_exists(path), "the other plots were not drawn");
}

/* ---------------------------------------------------------------- the journey */

/* Every chapter's time at the article's configuration beside the article's own time, read from ARTICLES.md:
 * chapter 00's total, chapter 02's kernel without its setup kernel, chapter 01 (no attention FLOPs) left out. */
Test(plots, journey_beside_the_article_times) {
    require_gnuplot();
    char cmd[8192], out[8192], path[4200];
    make_tmpdir();
    write_chapter_csv(dir, "ch00/run.csv", CH00_H200);
    const char *const ch01[] = {CH03 "chapter=01;kernel=softmax_online;flops=0;time_ms_median=1.4", NULL};
    write_chapter_csv(dir, "ch01/run.csv", ch01);
    const char *const ch02[] = {CH03 "chapter=02;kernel=flash_v1_init;flops=0;setup=1;time_ms_median=0.05",
                                CH03 "chapter=02;kernel=flash_v1;setup=0;time_ms_median=17.66", NULL};
    write_chapter_csv(dir, "ch02/run.csv", ch02);
    const char *const ch03[] = {CH03 "kernel=flash_v2;setup=0", NULL};
    write_chapter_csv(dir, "ch03/run.csv", ch03);
    /* a backward (chapter 07): its forward a setup row, its kernels and total at 10 B H N^2 d, not the forward's 4 */
    const char *const ch07[] = {CH03 "chapter=07;kernel=forward;setup=1;time_ms_median=13.9",
                                CH03 "chapter=07;kernel=flash_bwd;flops=429496729600;setup=0;time_ms_median=16.5",
                                CH03 "chapter=07;kernel=backward;flops=429496729600;setup=0;time_ms_median=16.6", NULL};
    write_chapter_csv(dir, "ch07/run.csv", ch07);
    snprintf(cmd, sizeof cmd, "bash plots/render-all.sh %s %s/out", dir, dir);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "render-all failed:\n%s", out);
    cr_assert(strstr(out, "journey.png") != NULL, "render-all does not say it drew the journey:\n%s", out);

    /* the article's times: v1 and v2 of V2-time in ARTICLES.md, as the claim row states them */
    char v1[32] = "", v2[32] = "";
    cr_assert_eq(run("grep -o 'v1 [0-9.]* ms, v2 [0-9.]* ms' ARTICLES.md | head -n1 | cut -d' ' -f2 | tr -d '\\n'", v1,
                     sizeof v1),
                 0);
    cr_assert_eq(run("grep -o 'v1 [0-9.]* ms, v2 [0-9.]* ms' ARTICLES.md | head -n1 | cut -d' ' -f5 | tr -d '\\n'", v2,
                     sizeof v2),
                 0);
    cr_assert(v1[0] && v2[0], "no V2-time in ARTICLES.md");
    snprintf(path, sizeof path, "%s/out/journey.dat", dir);
    char *dat = read_all(path, NULL);
    cr_assert(dat != NULL, "no journey data file");
    char line[256];
    snprintf(line, sizeof line, "\n00\t00: 3 kernels\\nfp32\t6.95\tNaN\n");
    cr_assert(strstr(dat, line) != NULL, "chapter 00: its total, no article time:\n%s", dat);
    snprintf(line, sizeof line, "\n02\t02: flash_v1\\nfp32, 32x32\t17.66\t%s\n", v1);
    cr_assert(strstr(dat, line) != NULL, "chapter 02: its kernel, v1's time:\n%s", dat);
    snprintf(line, sizeof line, "\n03\t03: flash_v2\\nfp32, 32x32\t13.81\t%s\n", v2);
    cr_assert(strstr(dat, line) != NULL, "chapter 03: v2's time:\n%s", dat);
    cr_assert(strstr(dat, "\n01\t") == NULL, "chapter 01 has no attention time:\n%s", dat);
    cr_assert(strstr(dat, "\n07\t") == NULL, "chapter 07 times a backward, not a forward:\n%s", dat);
    free(dat);

    snprintf(path, sizeof path, "%s/out/journey.svg", dir);
    char *svg = read_all(path, NULL);
    cr_assert(svg != NULL && strstr(svg, "<svg") != NULL, "no SVG");
    const char *expected[] = {"median time (ms), log scale", "this book, NVIDIA H200", "article 1 (Triton, fp32",
                              "no time in the article",
                              "left out (no time of the forward pass on a GPU in this folder): chapter 01, 07",
                              "B=10 H=64 N=1024 d=64"};
    for (size_t i = 0; i < sizeof expected / sizeof *expected; i++)
        cr_assert(strstr(svg, expected[i]) != NULL, "'%s' is not in the journey plot", expected[i]);
    free(svg);
    snprintf(path, sizeof path, "%s/out/journey.png", dir);
    size_t len;
    char *png = read_all(path, &len);
    cr_assert(png != NULL && len > 1024 && memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0, "no PNG");
    free(png);
}

/* Chapters run at different shapes are not one journey: a clear message, and no plot. */
Test(plots, journey_of_mixed_shapes_fails_clearly) {
    require_gnuplot();
    char cmd[8192], out[8192], path[4200];
    make_tmpdir();
    write_chapter_csv(dir, "ch00/run.csv", CH00_H200);
    const char *const ch03[] = {CH03 "kernel=flash_v2;N=2048", NULL};
    write_chapter_csv(dir, "ch03/run.csv", ch03);
    snprintf(cmd, sizeof cmd, "bash plots/render-all.sh %s %s/out", dir, dir);
    cr_assert_neq(run(cmd, out, sizeof out), 0, "mixed shapes must fail:\n%s", out);
    cr_assert(strstr(out, "B=10 H=64 N=2048 d=64, not the configuration of the chapters before it") != NULL,
              "unclear message:\n%s", out);
    snprintf(path, sizeof path, "%s/out/journey.png", dir);
    cr_assert(!file_exists(path), "a journey of mixed shapes was drawn");
}
