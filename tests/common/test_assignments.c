/* Tests of the classroom machinery: common/scripts/cut-assignment.sh (the student's copy of a chapter) and
 * common/scripts/grade.sh (the grade sheet), the latter on stand-in test binaries: bash scripts that print what
 * a Criterion binary prints and write its TAP report. No GPU needed; tests/assignments/check.sh builds and grades
 * every real assignment. */
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

static const char *tmp_dir(void) {
    if (dir[0] == '\0') {
        snprintf(dir, sizeof dir, "/tmp/test_assignments.XXXXXX");
        cr_assert(mkdtemp(dir) != NULL);
    }
    return dir;
}

TestSuite(cut, .fini = remove_dir);
TestSuite(grade, .fini = remove_dir);

/* ---------------------------------------------------------------- cut-assignment.sh */

Test(cut, list_names_each_assignment_its_file_kind_and_suites) {
    char out[8192];
    cr_assert_eq(run_command("bash common/scripts/cut-assignment.sh --list 2>&1", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "01 merge 01_online_softmax/max_sum.h cpu @(merge|numerics)/*\n") != NULL, "%s", out);
    cr_assert(strstr(out, "03 v2-kernel-rescale 03_flash_v2/kernels.cu gpu @(gpu)/*\n") != NULL, "%s", out);
    /* a header the kernels share with the host's model: cpu, with the kernels' own suite among its suites */
    cr_assert(strstr(out, "04 swizzle 04_bank_conflicts/layouts.h cpu @(banks|model|gpu)/*\n") != NULL, "%s", out);
    int lines = 0;
    for (char *s = NULL, *l = strtok_r(out, "\n", &s); l; l = strtok_r(NULL, "\n", &s), lines++) {
        char ch[8], name[64], file[128], kind[8], filter[64];
        cr_assert_eq(sscanf(l, "%7s %63s %127s %7s %63s", ch, name, file, kind, filter), 5, "%s", l);
        cr_assert(strncmp(file, ch, 2) == 0 && access(file, R_OK) == 0, "%s: not a file of chapter %s", file, ch);
        cr_assert(strcmp(kind, "cpu") == 0 || strcmp(kind, "gpu") == 0, "%s", l);
    }
    cr_assert_geq(lines, 6);
}

Test(cut, a_copy_holds_the_chapter_its_tests_and_the_stub_of_the_named_assignment_only) {
    char cmd[512], out[8192];
    snprintf(cmd, sizeof cmd, "bash common/scripts/cut-assignment.sh 03 %s/a03 v2-normalise 2>&1", tmp_dir());
    cr_assert_eq(run_command(cmd, out, sizeof out), 0, "%s", out);
    /* make plots and make reproduce: the plot scripts, the chapter's plots, its results under results/latest */
    const char *present[] = {"Makefile", "README.md", "LICENSE", "common/attention.c", "common/scripts/grade.sh",
                             "03_flash_v2/kernels.cu", "03_flash_v2/tiles.h", "tests/support.h", "tests/ch03/test_cpu.c",
                             "plots/render-all.sh", "plots/render-banks.sh", "plots/roofline.gp",
                             "plots/roofline_data.awk", "plots/ch03_roofline.png", "results/latest/ch03/run.csv"};
    for (size_t i = 0; i < sizeof present / sizeof *present; i++) {
        snprintf(cmd, sizeof cmd, "%s/a03/%s", dir, present[i]);
        cr_assert(access(cmd, R_OK) == 0, "the copy lacks %s", present[i]);
    }
    /* a chapter stands alone: nothing of chapter 02 comes with chapter 03 */
    const char *absent[] = {"02_flash_v1", "00_standard_attention", "tests/common", "tests/ch02", ".ci",
                            "plots/ch02_roofline.png", "results/latest/ch02"};
    for (size_t i = 0; i < sizeof absent / sizeof *absent; i++) {
        snprintf(cmd, sizeof cmd, "%s/a03/%s", dir, absent[i]);
        cr_assert(access(cmd, F_OK) != 0, "the copy holds %s", absent[i]);
    }
    /* The named block: stub in, solution and STUB comment out, BEGIN and END kept. */
    snprintf(cmd, sizeof cmd, "cat %s/a03/03_flash_v2/cpu.c", dir);
    static char src[65536];
    cr_assert_eq(run_command(cmd, src, sizeof src), 0);
    cr_assert(strstr(src, "// TODO: delayed normalisation") && strstr(src, "const float lse = 0.f;"), "no stub:\n%s", src);
    cr_assert(strstr(src, "ASSIGNMENT STUB") == NULL && strstr(src, "inv_l") == NULL, "the solution is left:\n%s", src);
    cr_assert(strstr(src, "ASSIGNMENT BEGIN v2-normalise") && strstr(src, "ASSIGNMENT END v2-normalise"), "%s", src);
    /* The other block of the chapter, not named, is the book's. */
    snprintf(cmd, sizeof cmd, "cmp 03_flash_v2/kernels.cu %s/a03/03_flash_v2/kernels.cu", dir);
    cr_assert_eq(run_command(cmd, out, sizeof out), 0, "%s", out);
}

Test(cut, refuses_an_unknown_chapter_or_name_and_a_non_empty_destination) {
    char cmd[512], out[8192];
    snprintf(cmd, sizeof cmd, "bash common/scripts/cut-assignment.sh 42 %s/x 2>&1", tmp_dir());
    cr_assert_eq(run_command(cmd, out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "no chapter 42") != NULL, "%s", out);
    snprintf(cmd, sizeof cmd, "bash common/scripts/cut-assignment.sh 01 %s/x no-such-name 2>&1", dir);
    cr_assert_eq(run_command(cmd, out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "no assignment no-such-name (it has: merge)") != NULL, "%s", out);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/full && touch %s/full/f && bash common/scripts/cut-assignment.sh 01 %s/full 2>&1",
             dir, dir, dir);
    cr_assert_eq(run_command(cmd, out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "is not empty") != NULL, "%s", out);
}

/* A stand-in book: the script and one chapter whose block has no END. */
Test(cut, a_block_without_its_end_is_an_error_that_names_the_line) {
    char cmd[1024], out[8192];
    snprintf(cmd, sizeof cmd,
             "d=%s/book && mkdir -p $d/common/scripts $d/09_x && cp -r common/scripts/. $d/common/scripts/ && "
             "printf 'int f(void) {\\n/* ASSIGNMENT BEGIN f [cpu]: x */\\n/* ASSIGNMENT STUB f\\nreturn 0;\\n*/\\nreturn 1;\\n}\\n'"
             " > $d/09_x/kernels.cu && bash $d/common/scripts/cut-assignment.sh --list 2>&1",
             tmp_dir());
    cr_assert_neq(run_command(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "09_x/kernels.cu:2: BEGIN f without its END") != NULL, "%s", out);
}

/* ---------------------------------------------------------------- grade.sh */

static void fake_binary(const char *name, const char *synthesis, const char *tap, int status) {
    fake_test_binary(tmp_dir(), name, synthesis, tap, status);
}

Test(grade, a_sheet_line_per_test_and_not_graded_for_want_of_a_gpu) {
    fake_binary("t", "Tested: 3 | Passing: 1 | Failing: 1 | Crashing: 1",
                "TAP version 13\n1..5\nok - cpu::a  (0.01s)\n"
                "not ok - cpu::b  (0.02s)\n  ---\n  failures:\n  - t.c:3: |+\n      Assertion failed: wrong\n      second\n  ...\n"
                "not ok - cpu::c unexpected signal after t.c:9\n"
                "ok - gpu::d  # SKIP no CUDA device: the GPU tests need one\nok - save::e  # SKIP no NumPy here\n",
                1);
    char cmd[512], out[8192];
    snprintf(cmd, sizeof cmd, "bash common/scripts/grade.sh %s/t %s/g.xml 'cpu/*' 2>&1", dir, dir);
    cr_assert_eq(run_command(cmd, out, sizeof out), 1, "a failure must fail the grade:\n%s", out);
    cr_assert(strstr(out, "PASS        cpu::a\n") != NULL, "%s", out);
    cr_assert(strstr(out, "FAIL        cpu::b\n            t.c:3: Assertion failed: wrong\n            second\n"), "%s", out);
    cr_assert(strstr(out, "FAIL        cpu::c\n            unexpected signal after t.c:9\n") != NULL, "%s", out);
    cr_assert(strstr(out, "NOT GRADED  gpu::d: needs a GPU\n") != NULL, "%s", out);
    cr_assert(strstr(out, "NOT GRADED  save::e: no NumPy here\n") != NULL, "%s", out);
    cr_assert(strstr(out, "grade: 1 passed, 2 failed; not graded: 1 test that needs a GPU") != NULL, "%s", out);
    char args[512];
    snprintf(cmd, sizeof cmd, "cat %s/t.args", dir);
    cr_assert_eq(run_command(cmd, args, sizeof args), 0);
    cr_assert(strstr(args, "--xml=") && strstr(args, "/g.xml") && strstr(args, "--filter=cpu/*"), "%s", args);
}

Test(grade, passes_when_every_graded_test_passes_and_fails_when_none_ran) {
    fake_binary("p", "Tested: 1 | Passing: 1 | Failing: 0 | Crashing: 0",
                "ok - cpu::a  (0.01s)\nok - gpu::d  # SKIP no CUDA device: the GPU tests need one\n", 0);
    char cmd[512], out[8192];
    snprintf(cmd, sizeof cmd, "bash common/scripts/grade.sh %s/p 2>&1", dir);
    cr_assert_eq(run_command(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "grade: PASS") != NULL, "%s", out);
    fake_binary("n", "Tested: 0 | Passing: 0 | Failing: 0 | Crashing: 0", "ok - cpu::a  # SKIP test was skipped\n", 0);
    snprintf(cmd, sizeof cmd, "bash common/scripts/grade.sh %s/n '' 'nothing/*' 2>&1", dir);
    cr_assert_eq(run_command(cmd, out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "no test ran (no test matches nothing/*)") != NULL, "%s", out);
    fake_binary("x", NULL, "", 139);
    snprintf(cmd, sizeof cmd, "bash common/scripts/grade.sh %s/x 2>&1", dir);
    cr_assert_eq(run_command(cmd, out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "did not run to its end (exit status 139)") != NULL, "%s", out);
}
