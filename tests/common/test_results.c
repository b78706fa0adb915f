/* Tests of the committed results: one folder per chapter in each GPU's folder (results/README.md), no
 * development leftovers, results/latest a link to a GPU folder, and every results/ path a README cites exists.
 * No GPU needed. Run from the repository root. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "../support.h"

/* the sanitized pass skips these (tooling_suite_init, support.h) */
TestSuite(results, .init = tooling_suite_init);

/* Runs a bash script; returns its exit status and puts stdout and stderr into out. */
static int run_bash(const char *script, char *out, size_t len) {
    char path[] = "/tmp/test_results.XXXXXX";
    const int fd = mkstemp(path);
    cr_assert(fd >= 0, "mkstemp failed");
    FILE *f = fdopen(fd, "w");
    cr_assert(f != NULL);
    fputs(script, f);
    fclose(f);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "bash %s 2>&1", path);
    const int status = run_command(cmd, out, len);
    remove(path);
    return status;
}

Test(results, one_folder_per_chapter_with_its_article_run) {
    char out[8192];
    const int status = run_bash(
        "shopt -s nullglob\n"
        "n=0\n"
        "for g in results/*/; do\n"
        "  g=${g%/}; [ -L \"$g\" ] && continue; [ \"$g\" = results/cpu ] && continue\n"
        "  n=$((n + 1))\n"
        "  for e in \"$g\"/*; do\n"
        "    case ${e##*/} in\n"
        "      ch[0-9][0-9]) [ -d \"$e\" ] || echo \"not a folder: $e\"\n"
        "                    [ -f \"$e/run.csv\" ] && [ -f \"$e/run.log\" ] || echo \"no run.csv and run.log in $e\" ;;\n"
        "      REPORT.md|reproduce.log|provenance.json) ;;\n"
        "      *) echo \"not a chapter folder: $e\" ;;\n"
        "    esac\n"
        "  done\n"
        "done\n"
        "[ $n -gt 0 ] || echo 'no GPU results folder'\n",
        out, sizeof out);
    cr_assert_eq(status, 0);
    cr_assert_str_eq(out, "", "results/ does not follow results/README.md:\n%s", out);
}

/* A folder beside the chapter folders is caught by the test above; these are leftovers inside them, at any depth:
 * numbered calls of a development session (call1_ab.csv, ab_call2.log), reruns, runs "after a refactor". */
#define LEFTOVERS "\\( -name 'call[0-9]*' -o -name '*_call[0-9]*' -o -name '*rerun*' -o -name '*after_refactor*' \\)"

Test(results, no_development_leftovers) {
    char out[8192];
    cr_assert_eq(run_bash("find results -mindepth 1 " LEFTOVERS " -print\n", out, sizeof out), 0);
    cr_assert_str_eq(out, "", "development leftovers in results/:\n%s", out);
}

/* The same search finds a leftover however deep it lies (one at depth 6, as an archived run once had). */
Test(results, leftovers_are_found_at_any_depth) {
    char out[8192];
    cr_assert_eq(run_bash("T=$(mktemp -d /tmp/test_results_dir.XXXXXX); trap 'rm -rf \"$T\"' EXIT\n"
                          "mkdir -p $T/results/GPU/ch02/old/runs/steps && touch $T/results/GPU/ch02/old/runs/steps/call1_ab.csv\n"
                          "touch $T/results/GPU/ch02/run.csv\n"
                          "cd $T && find results -mindepth 1 " LEFTOVERS " -print\n",
                          out, sizeof out),
                 0);
    cr_assert_str_eq(out, "results/GPU/ch02/old/runs/steps/call1_ab.csv\n", "%s", out);
}

Test(results, latest_is_a_link_to_a_gpu_folder) {
    char out[4096];
    cr_assert_eq(run_bash("[ -L results/latest ] || echo 'results/latest is not a link'\n"
                          "t=$(readlink results/latest)\n"
                          "case $t in */*) echo \"results/latest -> $t: not a folder beside it\" ;; esac\n"
                          "[ -f \"results/$t/ch00/run.csv\" ] || echo \"results/latest -> $t has no ch00/run.csv\"\n",
                          out, sizeof out),
                 0);
    cr_assert_str_eq(out, "", "%s", out);
}

/* Paths such as results/NVIDIA_H200/ch02/n{512,1024}.csv or .../ch01/ncu_n<N>.csv: braces expanded, <N> and
 * {Br} stand for anything. Placeholders of the layout itself (<GPU>, chNN) and results/cpu are not files, and a
 * path after a commit (67a6afb:results/...) is one that git keeps, not the tree. */
Test(results, every_cited_results_file_exists) {
    char out[16384];
    const int status = run_bash(
        "shopt -s nullglob\n"
        "grep -ohE '([0-9a-f]{7,40}:)?results/[A-Za-z0-9_]+(/[A-Za-z0-9_.*{},<>-]+)*/?' README.md [0-9][0-9]_*/README.md |\n"
        "  sed 's/[.,]*$//' | sort -u | while read -r p; do\n"
        "  case $p in *'<GPU>'*|*chNN*|results/cpu*|[0-9a-f]*:*) continue ;; esac\n"
        "  g=$(printf '%s' \"$p\" | sed -E 's/<[^>]*>/*/g; s/\\{[A-Z][a-z]*\\}/*/g; s/_nN\\./_n*./g')\n"
        "  found=$(eval \"ls -d $g\" 2>/dev/null | head -n 1)\n"
        "  [ -n \"$found\" ] || echo \"cited but missing: $p\"\n"
        "done\n",
        out, sizeof out);
    cr_assert_eq(status, 0);
    cr_assert_str_eq(out, "", "%s", out);
}
