/* Tests of common/scripts/run-tests.sh (the closing lines of `make test`) on stand-in test binaries: bash
 * scripts that print what a Criterion binary prints and write its TAP report. No GPU needed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../support.h"

static char dir[64];

static void remove_dir(void) {
    if (dir[0] == '\0') return;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

TestSuite(run_tests, .fini = remove_dir);

static void fake_binary(const char *name, const char *synthesis, const char *tap, int status) {
    if (dir[0] == '\0') {
        snprintf(dir, sizeof dir, "/tmp/test_run_tests.XXXXXX");
        cr_assert(mkdtemp(dir) != NULL);
    }
    fake_test_binary(dir, name, synthesis, tap, status);
}

static const char *last_line(char *out) {
    size_t n = strlen(out);
    while (n > 0 && out[n - 1] == '\n') out[--n] = '\0';
    const char *nl = strrchr(out, '\n');
    return nl ? nl + 1 : out;
}

Test(run_tests, counts_passed_failed_and_skipped_and_says_why_once) {
    fake_binary("a", "Tested: 4 | Passing: 3 | Failing: 1 | Crashing: 0",
                "TAP version 13\n1..6\nok - gpu::x  # SKIP no CUDA device: the GPU tests need one\n"
                "ok - gpu::y  # SKIP no CUDA device: the GPU tests need one\nok - cpu::z\n",
                1);
    fake_binary("b", "Tested: 3 | Passing: 2 | Failing: 0 | Crashing: 1",
                "TAP version 13\nok - gpu::w  # SKIP no CUDA device: the GPU tests need one\n"
                "ok - plots::v  # SKIP gnuplot is not installed here\n",
                1);
    char cmd[512], out[16384];
    snprintf(cmd, sizeof cmd, "bash common/scripts/run-tests.sh %s/a %s/b 2>&1", dir, dir);
    cr_assert_eq(run_command(cmd, out, sizeof out), 1, "a failure must fail the run:\n%s", out);
    const char *cuda = strstr(out, "skipped: 3 tests: no CUDA device");
    cr_assert(cuda != NULL, "no line saying why 3 tests skipped:\n%s", out);
    cr_assert(strstr(cuda, "the kernels themselves were not run") != NULL, "%s", out);
    cr_assert(strstr(cuda + 1, "skipped: 3 tests: no CUDA device") == NULL, "the reason is printed twice:\n%s", out);
    cr_assert(strstr(out, "skipped: 1 test: gnuplot is not installed here") != NULL, "%s", out);
    cr_assert_str_eq(last_line(out), "tests: 5 passed, 2 failed, 4 skipped");
}

Test(run_tests, all_passing_without_skips) {
    fake_binary("c", "Tested: 2 | Passing: 2 | Failing: 0 | Crashing: 0", "TAP version 13\nok - a::b\nok - a::c\n", 0);
    char cmd[512], out[8192];
    snprintf(cmd, sizeof cmd, "bash common/scripts/run-tests.sh %s/c 2>&1", dir);
    cr_assert_eq(run_command(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "skipped:") == NULL, "no skip, no reason line:\n%s", out);
    cr_assert_str_eq(last_line(out), "tests: 2 passed, 0 failed, 0 skipped");
}

Test(run_tests, a_binary_without_summary_counts_as_failed) {
    fake_binary("d", NULL, "", 139);
    fake_binary("e", "Tested: 1 | Passing: 1 | Failing: 0 | Crashing: 0", "ok - a::b\n", 0);
    char cmd[512], out[8192];
    snprintf(cmd, sizeof cmd, "bash common/scripts/run-tests.sh %s/d %s/e 2>&1", dir, dir);
    cr_assert_eq(run_command(cmd, out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "printed no Criterion summary (exit status 139)") != NULL, "%s", out);
    cr_assert_str_eq(last_line(out), "tests: 1 passed, 1 failed, 0 skipped");
}

/* ---------------------------------------------------------------- the Makefile */

Test(make, help_prints_the_header_comment) {
    char out[8192];
    cr_assert_eq(run_command("make --no-print-directory help 2>&1", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "make reproduce") && strstr(out, "make help"), "no header:\n%s", out);
    cr_assert(strstr(out, "build:") == NULL, "help builds nothing, so it names no architectures:\n%s", out);
}

/* -n: print the commands without running them; the stamp of the architectures pointed at /dev/null so that
 * the dry run leaves the build as it is. */
Test(make, reproduce_needs_gnuplot_not_criterion) {
    char out[65536];
    cr_assert_eq(run_command("make -n FA_SUBMAKE=1 GENCODE_STAMP=/dev/null reproduce 2>&1", out, sizeof out), 0, "%s",
                 out);
    cr_assert(strstr(out, "ensure-deps.sh gnuplot") != NULL, "reproduce does not check gnuplot:\n%s", out);
    cr_assert(strstr(out, "ensure-deps.sh\n") == NULL, "reproduce installs Criterion (all of ensure-deps):\n%s", out);
}

/* make PTX=75: every object compute_75 PTX alone, in build-ptx75/, and the build line says so; GENCODE= on the command
 * line: the line names it. Dry runs of every command (-n -B), the stamps pointed at /dev/null: nothing is built or
 * written; outside the make that runs the tests and its variables (SANITIZE=1, in the sanitized pass, would pick
 * build-san/). */
#define CLEAN_MAKE "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE -u DEBUG_WAITS -u ARCH -u PTX -u GENCODE " \
                   "make -n -B FA_SUBMAKE=1 GENCODE_STAMP=/dev/null " \
                   "CU_GENCODE_STAMP=/dev/null "
Test(make, ptx_build_and_the_build_line) {
    char out[65536];
    cr_assert_eq(run_command(CLEAN_MAKE "PTX=75 ch03 2>&1", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "build: compute_75 PTX only (PTX=75), in build-ptx75/") != NULL, "%s", out);
    cr_assert(strstr(out, "-gencode arch=compute_75,code=compute_75 -Xptxas -v  -c 03_flash_v2/kernels.cu -o "
                          "build-ptx75/03_flash_v2/kernels.cu.o") != NULL, "the timed build: %s", out);
    cr_assert(strstr(out, "-gencode arch=compute_75,code=compute_75 -Xptxas -v -DCOUNT_IO -c 03_flash_v2/kernels.cu -o "
                          "build-ptx75/03_flash_v2/kernels.counted.o") != NULL, "the instrumented build: %s", out);
    cr_assert(strstr(out, "sm_") == NULL, "no machine code: %s", out);
    cr_assert_eq(run_command(CLEAN_MAKE "GENCODE='-gencode arch=compute_80,code=sm_80' ch03 2>&1", out, sizeof out), 0,
                 "%s", out);
    cr_assert(strstr(out, "build: -gencode arch=compute_80,code=sm_80 (GENCODE given on the command line)") != NULL,
              "%s", out);
}

/* ---------------------------------------------------------------- bench.sh without a GPU */

Test(bench, without_a_gpu_each_bench_says_so_once_and_exits_0) {
    char list[1024], out[8192];
    if (run_command("nvidia-smi -L 2>/dev/null | grep -q '^GPU'", out, sizeof out) == 0)
        cr_skip_test("a CUDA device is here: the benches would measure");
    cr_assert_eq(run_command("ls [0-9][0-9]_*/bench.sh", list, sizeof list), 0);
    for (char *s = NULL, *b = strtok_r(list, "\n", &s); b; b = strtok_r(NULL, "\n", &s)) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "bash %s /tmp/bench_without_gpu.$$ 2>&1; st=$?; rm -rf /tmp/bench_without_gpu.$$; exit $st",
                 b);
        cr_assert_eq(run_command(cmd, out, sizeof out), 0, "%s: %s", b, out);
        cr_assert(strstr(out, "needs a CUDA device") != NULL, "%s: %s", b, out);
        cr_assert(strchr(out, '\n') == strrchr(out, '\n') && strstr(out, "FAILED") == NULL, "%s: one line expected:\n%s",
                  b, out);
    }
}
