/* support.h: running a program from the outside, for every test file (tests run from the repository root). */
#ifndef FA_TEST_SUPPORT_H
#define FA_TEST_SUPPORT_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "host_tensor.h"

/* The sanitized pass (make SANITIZE=1 test: the C compiled with AddressSanitizer and UBSan, after the plain pass
 * has run every test) looks for memory errors and undefined behaviour in the host code. There, a long CPU run
 * takes a shorter N with the same remainder modulo 256, so that it spans several tiles of every test tile and
 * its last tile is as ragged (TEST_N_LONG: 488 for the plain pass's 1000, 256 for its 1024), and a test that reads machine code and runs no host
 * code of ours skips (SKIP_IN_SANITIZED_PASS), saying so. */
#ifdef __SANITIZE_ADDRESS__
#define TEST_N_LONG(n) ((n) < 512 ? (n) : 256 + (n) % 256)
#define SKIP_IN_SANITIZED_PASS(why) cr_skip_test("the sanitized pass: %s (the plain pass ran it)", why)
#else
#define TEST_N_LONG(n) (n)
#define SKIP_IN_SANITIZED_PASS(why) ((void)0)
#endif

/* The .init of a suite that tests the Python tooling and the shell scripts (make docs, the plots, the digests, the
 * committed results): in the sanitized pass it skips, none of its work being host code of ours in a process the
 * sanitizers watch but for the chapter programs it starts, whose own tests run there. */
static inline void tooling_suite_init(void) {
    SKIP_IN_SANITIZED_PASS("it tests the Python tooling and the scripts, not the C host code");
}

/* 1 when a CUDA device is usable. */
static inline int gpu_available(void) {
    DeviceInfo info;
    return device_query(&info);
}

/* At the top of every GPU test: without a CUDA device the test skips and says why; with REQUIRE_GPU=1 (the GPU
 * machine's runs) a missing device fails it instead. */
#define NEED_GPU()                                                                                           \
    do {                                                                                                     \
        if (!gpu_available()) {                                                                              \
            cr_assert(!require_gpu_env(), "REQUIRE_GPU=1 but no CUDA device");                                  \
            cr_skip_test("no CUDA device: the GPU tests need one (they run on the GPU machine)");            \
        }                                                                                                    \
    } while (0)

/* The defaults with a problem size set: B, H, N, d (a chapter's own options at their defaults). Each chapter's
 * shape() sets its own options (tiles, dtype, ...) on top. */
static inline Options shape_options(int B, int H, int N, int d) {
    Options o;
    options_defaults(&o);
    o.B = B;
    o.H = H;
    o.N = N;
    o.d = d;
    return o;
}

/* Runs a shell command and puts what it writes to stdout into out (NUL-terminated, as much as fits; the rest is
 * read and dropped so that the command never blocks on a full pipe). Returns the exit status, or -1 when the
 * command did not exit normally. */
static inline int run_command(const char *cmd, char *out, size_t len) {
    FILE *p = popen(cmd, "r");
    cr_assert(p, "cannot run %s", cmd);
    size_t used = 0, got;
    while (used + 1 < len && (got = fread(out + used, 1, len - 1 - used, p)) > 0) used += got;
    out[used] = '\0';
    char rest[4096];
    while (fread(rest, 1, sizeof(rest), p) > 0) {
    }
    const int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Runs ./chNN/run ARGS, stdout and stderr together into out; returns the exit status. */
/* dir/name: a stand-in for a Criterion test binary. It records its arguments in dir/name.args, writes `tap` to
 * the file of its --tap=FILE argument, prints `synthesis` as Criterion's closing line (unless NULL) and exits
 * with `status`. */
static inline void fake_test_binary(const char *dir, const char *name, const char *synthesis, const char *tap,
                                    int status) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL);
    fprintf(f, "#!/bin/bash\necho \"$@\" > \"$0.args\"\ntap=\nfor a in \"$@\"; do case $a in --tap=*) tap=${a#--tap=} ;; esac; done\n"
               "[ -n \"$tap\" ] && printf '%%s' '%s' > \"$tap\"\n",
            tap);
    if (synthesis) fprintf(f, "echo '[====] Synthesis: %s '\n", synthesis);
    fprintf(f, "exit %d\n", status);
    fclose(f);
    cr_assert_eq(chmod(path, 0755), 0);
}

static inline int run_chapter(const char *chapter, const char *args, char *out, size_t len) {
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "./ch%s/run %s 2>&1", chapter, args);
    return run_command(cmd, out, len);
}

/* Bad input: ./chNN/run ARGS must exit with status 2 and its message must mention `says`. */
static inline void assert_rejected(const char *chapter, const char *args, const char *says) {
    char out[4096];
    cr_assert_eq(run_chapter(chapter, args, out, sizeof(out)), 2, "%s: exit status (output: %s)", args, out);
    cr_assert(strstr(out, says), "%s: the message should mention '%s': %s", args, says, out);
}

/* --csv to a path that cannot be written: ./chNN/run ARGS --csv PATH exits 2 at once with a message that names
 * the path, before any work (no model, no report, no CPU run). */
static inline void assert_csv_path_rejected_first(const char *chapter, const char *args) {
    char cmd_args[512], out[16384];
    snprintf(cmd_args, sizeof(cmd_args), "%s --csv /nonexistent/dir/x.csv", args);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const int rc = run_chapter(chapter, cmd_args, out, sizeof(out));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    cr_assert_eq(rc, 2, "%s: exit 2 expected (output: %.2000s)", cmd_args, out);
    cr_assert(strstr(out, "cannot write the CSV file '/nonexistent/dir/x.csv'"), "%s: the message: %.2000s", cmd_args, out);
    char title[32];
    snprintf(title, sizeof(title), "chapter %s", chapter);
    cr_assert(strstr(out, title) == NULL && strstr(out, "IO/FLOP model") == NULL && strstr(out, "CPU version") == NULL,
              "%s: nothing may run before the CSV path is checked: %.2000s", cmd_args, out);
    cr_assert(s < 2.0, "%s: took %.2f s: the path is checked before any work", cmd_args, s);
}

/* A CSV file that exists is replaced by the run's rows (not appended to). */
static inline void assert_csv_file_replaced(const char *chapter, const char *args) {
    char path[] = "/tmp/fa_csv.XXXXXX";
    const int fd = mkstemp(path);
    cr_assert(fd >= 0, "mkstemp failed");
    cr_assert_eq(write(fd, "old contents\n", 13), 13);
    close(fd);
    char cmd_args[512], out[16384], head[64] = "";
    snprintf(cmd_args, sizeof(cmd_args), "%s --csv %s", args, path);
    cr_assert_eq(run_chapter(chapter, cmd_args, out, sizeof(out)), 0, "%s: %.2000s", cmd_args, out);
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s: the CSV file is gone", cmd_args);
    cr_assert(fgets(head, sizeof(head), f), "%s: the CSV file is empty", cmd_args);
    fclose(f);
    unlink(path);
    cr_assert_eq(strncmp(head, "chapter,kernel,", 15), 0, "%s: the file starts with: %s", cmd_args, head);
}

/* A --cpu run whose host arrays exceed MemAvailable: ./chNN/run ARGS exits 2 at once, before the CPU version
 * starts, with the bytes it needs (at least `need`, the test's count of the main arrays, and not more than a
 * few MB above it) and the bytes available. The command runs under a 16 GB address-space limit, so that a
 * missing check fails here instead of exhausting the machine (under AddressSanitizer, make SANITIZE=1, a 16 GB
 * limit of resident memory: its shadow memory alone reserves terabytes of address space). Skips where the
 * machine has that much memory. */
#ifdef __SANITIZE_ADDRESS__
#define HOST_MEMORY_LIMIT "ASAN_OPTIONS=${ASAN_OPTIONS:-}:hard_rss_limit_mb=16000 "
#else
#define HOST_MEMORY_LIMIT "ulimit -v 16000000; "
#endif
static inline void assert_host_memory_rejected(const char *chapter, const char *args, unsigned long long need) {
    if (host_available_bytes() >= need) cr_skip_test("this machine has %llu bytes available", need);
    char cmd[1024], out[16384];
    snprintf(cmd, sizeof(cmd), HOST_MEMORY_LIMIT "./ch%s/run %s 2>&1", chapter, args);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const int rc = run_command(cmd, out, sizeof(out));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    cr_assert_eq(rc, 2, "%s: exit 2 expected (output: %.2000s)", args, out);
    const char *at = strstr(out, "needs ");
    cr_assert(at && strstr(out, "of host memory for the CPU version") && strstr(out, "are available (MemAvailable)"),
              "%s: the message should give the bytes needed and available: %.2000s", args, out);
    const unsigned long long said = strtoull(at + 6, NULL, 10);
    cr_assert(said >= need && said - need < (64ull << 20), "%s: needs %llu bytes, the arrays alone are %llu", args,
              said, need);
    cr_assert(strstr(out, "CPU version (not a GPU") == NULL, "%s: the CPU version must not start: %.2000s", args, out);
    cr_assert(s < 2.0, "%s: took %.2f s: the memory is checked before anything is allocated", args, s);
}

/* Column `name` of the CSV row that starts with `row_prefix` ("03,flash_v2,"), in text that holds the CSV
 * header line; into buf (the test fails when either is missing). */
static inline const char *csv_column(const char *text, const char *row_prefix, const char *name, char *buf, size_t len) {
    const char *header = strstr(text, "chapter,kernel,");
    cr_assert(header, "no CSV header in: %.2000s", text);
    char want[64];
    snprintf(want, sizeof(want), "\n%s", row_prefix);
    const char *row = strstr(header, want);
    cr_assert(row, "no CSV row %s in: %.2000s", row_prefix, text);
    row++;
    int col = -1, i = 0;
    for (const char *h = header; h && *h && *h != '\n'; i++) {
        const size_t n = strcspn(h, ",\n");
        if (n == strlen(name) && strncmp(h, name, n) == 0) col = i;
        h = h[n] == ',' ? h + n + 1 : NULL;
    }
    cr_assert(col >= 0, "no CSV column %s", name);
    for (i = 0; i < col && row; i++) row = strchr(row, ',') ? strchr(row, ',') + 1 : NULL;
    cr_assert(row, "row %s has no column %s", row_prefix, name);
    const size_t n = strcspn(row, ",\n");
    snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), row);
    return buf;
}

static inline long long csv_int(const char *text, const char *row_prefix, const char *name) {
    char buf[64];
    return strtoll(csv_column(text, row_prefix, name, buf, sizeof(buf)), NULL, 10);
}

/* Without a CUDA device a plain run falls back to the CPU version at a smaller size: ./chNN/run ARGS --csv -
 * (stderr too) must keep N's remainder modulo `tile`, run at most max_N, say in the header line that the size
 * was reduced and from what, and carry the requested size in the requested_* columns of row `row_prefix`.
 * Returns the N it ran. Skips where a CUDA device is present (no fallback then). */
static inline long long assert_cpu_fallback_keeps_the_problem(const char *chapter, const char *args,
                                                              const char *row_prefix, long long B, long long H,
                                                              long long N, long long tile, long long max_N) {
    if (gpu_available()) cr_skip_test("a CUDA device is present: no CPU fallback");
    char cmd_args[512], out[1 << 16], says[160];
    snprintf(cmd_args, sizeof(cmd_args), "%s --csv -", args);
    cr_assert_eq(run_chapter(chapter, cmd_args, out, sizeof(out)), 0, "%s: %.3000s", cmd_args, out);
    const long long ran = csv_int(out, row_prefix, "N");
    cr_assert(ran <= max_N && ran % tile == N % tile, "%s: ran N = %lld: at most %lld with N mod %lld = %lld", cmd_args,
              ran, max_N, tile, N % tile);
    snprintf(says, sizeof(says), "(reduced for the CPU from B=%lld H=%lld N=%lld", B, H, N);
    cr_assert(strstr(out, says), "%s: the header should say '%s': %.3000s", cmd_args, says, out);
    cr_assert_eq(csv_int(out, row_prefix, "requested_B"), B, "%s", cmd_args);
    cr_assert_eq(csv_int(out, row_prefix, "requested_H"), H, "%s", cmd_args);
    cr_assert_eq(csv_int(out, row_prefix, "requested_N"), N, "%s", cmd_args);
    return ran;
}

/* A CPU run prints progress lines on stderr once it has run PROGRESS_AFTER seconds (0 here: from the start),
 * ending at 100%; with the default (2 s) a short run prints none. */
static inline void assert_progress_lines(const char *chapter, const char *args) {
    char cmd[1024], out[1 << 16];
    snprintf(cmd, sizeof(cmd), "PROGRESS_AFTER=0 ./ch%s/run %s 2>&1 >/dev/null", chapter, args);
    cr_assert_eq(run_command(cmd, out, sizeof(out)), 0, "%s: %.2000s", cmd, out);
    cr_assert(strstr(out, "progress: ") && strstr(out, ": 100% after "), "%s: progress lines expected: %.2000s", cmd, out);
    snprintf(cmd, sizeof(cmd), "./ch%s/run %s 2>&1 >/dev/null", chapter, args);
    cr_assert_eq(run_command(cmd, out, sizeof(out)), 0, "%s: %.2000s", cmd, out);
    cr_assert(strstr(out, "progress: ") == NULL, "%s: a short run prints no progress: %.2000s", cmd, out);
}

/* ---- exact counts or a rejection ------------------------------------------------------------------------
 * A count computed in 128 bits by a test: what the program must print exactly, or reject when it does not fit
 * in 64 bits. */
typedef unsigned __int128 Count128;

static inline const char *count128_text(Count128 v, char *buf, size_t len) {
    char digits[48];
    int n = 0;
    do {
        digits[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    size_t j = 0;
    while (n > 0 && j + 1 < len) buf[j++] = digits[--n];
    buf[j] = '\0';
    return buf;
}

/* One CSV row of --model: kernel name and its FLOPs and model bytes, in 128 bits. */
typedef struct {
    const char *kernel;
    Count128 flops, read, write;
} ModelRow128;

/* ./chNN/run --model --csv - ARGS: when every count of rows[] (and each row's read + write) fits in 64 bits,
 * exit 0 with each row's "chapter,kernel,model,B,H,N,d,dtype,flops,read,write," exactly; otherwise exit 2
 * with a message that names the 64-bit limit. `shape` is "B,H,N,d,dtype" as the CSV writes it. */
static inline void assert_counts_exact_or_rejected(const char *chapter, const char *args, const char *shape,
                                                   const ModelRow128 *rows, int n) {
    const Count128 limit = (Count128)~0ull;
    int fits = 1;
    for (int i = 0; i < n; i++)
        fits &= rows[i].flops <= limit && rows[i].read <= limit && rows[i].write <= limit &&
                rows[i].read + rows[i].write <= limit;
    char cmd_args[512], out[16384];
    snprintf(cmd_args, sizeof(cmd_args), "--model --csv - %s", args);
    const int rc = run_chapter(chapter, cmd_args, out, sizeof(out));
    if (!fits) {
        cr_assert_eq(rc, 2, "%s: the counts do not fit in 64 bits: exit 2 expected (output: %.2000s)", args, out);
        cr_assert(strstr(out, "does not fit in 64 bits") && strstr(out, "18,446,744,073,709,551,615"),
                  "%s: the message should give the 64-bit limit: %.2000s", args, out);
        return;
    }
    cr_assert_eq(rc, 0, "%s: the counts fit: exit 0 expected (output: %.2000s)", args, out);
    for (int i = 0; i < n; i++) {
        char want[512], f[48], r[48], w[48];
        snprintf(want, sizeof(want), "\n%s,%s,model,%s,%s,%s,%s,", chapter, rows[i].kernel, shape,
                 count128_text(rows[i].flops, f, sizeof(f)), count128_text(rows[i].read, r, sizeof(r)),
                 count128_text(rows[i].write, w, sizeof(w)));
        cr_assert(strstr(out, want), "%s: expected the exact row %s in: %.3000s", args, want + 1, out);
    }
}

/* The machine-code tests (test_sass.c). The path of cuobjdump into tool: the CUDA toolkit's, else the one
 * common/scripts/ensure-deps.sh installs with pip (where provenance.py, which takes the kernels' digests, finds it);
 * 0 where neither is installed. */
static inline int find_cuobjdump(char *tool, size_t len) {
    if (run_command("PATH=\"$PATH:${CUDA:-/usr/local/cuda}/bin\"; command -v cuobjdump || "
                    "python3 common/scripts/provenance.py tools 2>/dev/null | awk '$1 == \"cuobjdump\" { print $2 }' | "
                    "grep .", tool, len) != 0)
        return 0;
    tool[strcspn(tool, "\n")] = '\0';
    return 1;
}
#define NEED_CUOBJDUMP(tool)                                                                                  \
    do {                                                                                                      \
        if (!find_cuobjdump(tool, sizeof(tool)))                                                              \
            cr_skip_test("cuobjdump is not installed here (CUDA toolkit, or pip's nvidia-cuda-cuobjdump)");   \
    } while (0)

/* ptxas's own reports of the objects FILES names (a glob under a build folder, OBJECT.ptxas: the Makefile keeps one
 * beside each object), in each build folder that has them (build, build-san): `reports` of them, `kernels` entry
 * functions in all; none says that wgmma instructions were serialized (ptxas's "Potential Performance Loss" notes,
 * C7510-C7515: the pipeline waiting on each wgmma, whatever the source's waits say); none spills. Skips where no
 * build folder has them (a test binary taken to another machine). */
static inline void check_ptxas_reports(const char *files, int reports, int kernels) {
    char out[4096], cmd[512];
    int folders = 0;
    const char *const builds[] = {"build", "build-san"};
    for (int b = 0; b < 2; b++) {
        snprintf(cmd, sizeof(cmd), "ls %s/%s 2>/dev/null | wc -l", builds[b], files);
        cr_assert_eq(run_command(cmd, out, sizeof(out)), 0, "%s", out);
        if (atoi(out) == 0) continue;
        folders++;
        cr_assert_eq(atoi(out), reports, "%s/%s: %d ptxas reports, %d expected", builds[b], files, atoi(out), reports);
        snprintf(cmd, sizeof(cmd), "cat %s/%s | grep -c 'Compiling entry function'", builds[b], files);
        cr_assert_eq(run_command(cmd, out, sizeof(out)), 0, "%s", out);
        cr_assert_eq(atoi(out), kernels, "%s/%s: %d kernels in the reports, %d expected", builds[b], files, atoi(out),
                     kernels);
        snprintf(cmd, sizeof(cmd), "cat %s/%s | grep -E 'serialized|C75[0-9][0-9]'", builds[b], files);
        cr_assert_neq(run_command(cmd, out, sizeof(out)), 0, "%s/%s: ptxas says\n%s", builds[b], files, out);
        snprintf(cmd, sizeof(cmd),
                 "cat %s/%s | grep 'bytes spill' | grep -v ' 0 bytes spill stores, 0 bytes spill loads'", builds[b],
                 files);
        cr_assert_neq(run_command(cmd, out, sizeof(out)), 0, "%s/%s: spills\n%s", builds[b], files, out);
    }
    if (!folders) cr_skip_test("no ptxas reports here (build/%s): the objects were built elsewhere", files);
}

#endif
