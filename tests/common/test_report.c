/* Tests of common/scripts/report.sh (`make report`) and common/scripts/compare.sh (`make compare`).
 * report.sh runs on the committed results of the first GPU folder in results/ (no GPU needed: the programs run
 * with --model only); compare.sh runs on synthetic result folders written by each test. Run from the repo root,
 * after `make` (the chapter programs). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support.h"

/* Runs a bash script; returns its exit status and puts stdout and stderr into out. */
static int bash_script(const char *script, char *out, size_t len) {
    char path[] = "/tmp/test_report.XXXXXX";
    const int fd = mkstemp(path);
    cr_assert(fd >= 0, "mkstemp failed");
    FILE *f = fdopen(fd, "w");
    cr_assert(f != NULL);
    fputs("set -u\nG=$(ls -d results/*/ | grep -v -e latest -e cpu | head -n1); G=${G%/}\n"
          "T=$(mktemp -d /tmp/test_report_dir.XXXXXX); trap 'rm -rf \"$T\"' EXIT\n",
          f);
    fputs(script, f);
    fclose(f);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "bash %s 2>&1", path);
    const int status = run_command(cmd, out, len);
    remove(path);
    return status;
}

static char out[1 << 18];

/* ---------------------------------------------------------------- report.sh */

Test(report, a_row_for_every_id_of_articles) {
    const int rc = bash_script("REPORT=$T/R.md bash common/scripts/report.sh \"$G\" >$T/out || echo \"exit $?\"\n"
                               "n=0\n"
                               "for id in $(grep -o '<a id=\"[^\"]*\"></a>\\*\\*[^*]*\\*\\*' ARTICLES.md | sed 's#.*</a>\\*\\*##; s#\\*\\*$##'); do\n"
                               "  n=$((n + 1))\n"
                               "  grep -q \"^| $id | \" $T/R.md || echo \"no row for $id\"\n"
                               "  grep -q \"^| $id | \" $T/out || echo \"no printed row for $id\"\n"
                               "done\n"
                               "[ $n -ge 22 ] || echo \"only $n ids found in ARTICLES.md\"\n"
                               "grep -q '| ? |' $T/R.md && echo 'an article pattern not found'\n"
                               "exit 0\n",
                               out, sizeof out);
    cr_assert_eq(rc, 0);
    cr_assert_str_eq(out, "", "%s", out);
}

/* The model cells are what the programs print: chapter 02's bytes at the article's configuration, chapter 00's
 * score matrix at IO-scores' shape and the grid sizes, formatted as the report formats them. */
Test(report, model_values_are_the_programs_own) {
    const int rc = bash_script(
        "REPORT=$T/R.md bash common/scripts/report.sh \"$G\" >/dev/null || echo \"report exit $?\"\n"
        "commas() { echo \"$1\" | sed -E ':a; s/([0-9])([0-9]{3})($|,)/\\1,\\2\\3/; ta'; }\n"
        "col() { ./ch$1/run --model ${4:-} --csv - 2>/dev/null | grep -E '^(chapter,|[0-9][0-9],)' |\n"
        "  awk -f common/scripts/csv.awk -f common/scripts/csv_get.awk -v columns=$3 -v where=kernel=$2; }\n"
        "row() { grep \"^| $1 | \" $T/R.md | awk -F' [|] ' '{ print $4 }'; }\n"
        "r=$(col 02 flash_v1 model_read_bytes); w=$(col 02 flash_v1 model_write_bytes)\n"
        "[ -n \"$r\" ] && [ \"$(row V1-bytes)\" = \"$(commas $r) B; $(commas $w) B\" ] || echo \"V1-bytes: $(row V1-bytes) vs $r $w\"\n"
        "s=$(col 00 qk_gemm model_write_bytes '--dtype fp16 --batch 1 --heads 32 --seq 8192 --dim 64')\n"
        "row IO-scores | grep -q \"; $(commas $s) B\" || echo \"IO-scores: $(row IO-scores) vs $s\"\n"
        "b=$(./ch03/run --model | grep -oE '[0-9,]+ blocks of' | head -n1 | cut -d' ' -f1)\n"
        "row V2-grid | grep -q -- \"-> $b\\$\" || echo \"V2-grid: $(row V2-grid) vs $b\"\n"
        "exit 0\n",
        out, sizeof out);
    cr_assert_eq(rc, 0);
    cr_assert_str_eq(out, "", "%s", out);
}

/* A claim id that report.sh does not know: a row that says so, and exit 1. */
Test(report, an_unknown_claim_fails) {
    const int rc = bash_script("cp ARTICLES.md $T/A.md\n"
                               "echo '| <a id=\"v9-new\"></a>**V9-new** | a new claim | model | 09 |' >>$T/A.md\n"
                               "ARTICLES=$T/A.md REPORT=$T/R.md bash common/scripts/report.sh \"$G\" >/dev/null 2>$T/err\n"
                               "echo \"exit $?\"; grep '^| V9-new |' $T/R.md; cat $T/err\n",
                               out, sizeof out);
    cr_assert_eq(rc, 0);
    cr_assert(strstr(out, "exit 1"), "%s", out);
    cr_assert(strstr(out, "| V9-new | (no entry in common/scripts/report.sh)"), "%s", out);
    cr_assert(strstr(out, "V9-new (ARTICLES.md) has no line"), "%s", out);
}

/* A results folder without a file: the claims that need it say so and name it; the others are still there. */
Test(report, a_missing_results_file_is_named) {
    const int rc = bash_script("cp -r \"$G\" $T/gpu && rm $T/gpu/ch03/ncu.csv\n"
                               "REPORT=$T/R.md bash common/scripts/report.sh $T/gpu >/dev/null; echo \"exit $?\"\n"
                               "grep '^| V2-reads |' $T/R.md; grep '^| V1-bytes |' $T/R.md\n",
                               out, sizeof out);
    cr_assert_eq(rc, 0);
    cr_assert(strstr(out, "exit 0"), "%s", out);
    cr_assert(strstr(out, "| V2-reads |") && strstr(out, "not in this results folder (ch03/ncu.csv)"), "%s", out);
    cr_assert(strstr(out, "| V1-bytes |") && strstr(out, "| DRAM 11,"), "%s", out);
}

/* ---------------------------------------------------------------- compare.sh */

/* Two synthetic folders, base and new, with ch03/run.csv and ch02/n512.csv; $1: the new flash_v2 time,
 * $2: the new flash_v2 model read bytes. */
#define FIXTURE                                                                                              \
    "mk() {\n"                                                                                               \
    "  mkdir -p $T/$1/ch03 $T/$1/ch02\n"                                                                     \
    "  h=chapter,kernel,gpu,B,H,N,d,dtype,model_read_bytes,model_write_bytes,counted_read_bytes,"            \
    "counted_write_bytes,time_ms_median,br,bc,causal,rows\n"                                                 \
    "  printf '%s\\n03,flash_v2,G,10,64,1024,64,fp32,%s,170,%s,170,%s,32,32,0,655360\\n' $h $3 $3 $2 "       \
    ">$T/$1/ch03/run.csv\n"                                                                                  \
    "  printf '%s\\n02,flash_v1,G,10,64,512,64,fp32,99,98,99,98,4.5,32,32,0,327680\\n' $h >$T/$1/ch02/n512.csv\n" \
    "}\n"                                                                                                    \
    "mk base 10.0 1000\n"

static int compare(const char *setup, const char *env) {
    char script[4096];
    snprintf(script, sizeof script, "%s%s\n%s bash common/scripts/compare.sh $T/base $T/new\n", FIXTURE, setup, env);
    return bash_script(script, out, sizeof out);
}

Test(compare, equal_runs_pass) {
    cr_assert_eq(compare("mk new 10.0 1000", ""), 0, "%s", out);
    cr_assert(strstr(out, "compare: no regression (2 rows; tolerance 10%)"), "%s", out);
}

Test(compare, twenty_percent_slower_fails_naming_the_kernel) {
    cr_assert_eq(compare("mk new 12.0 1000", ""), 1, "%s", out);
    cr_assert(strstr(out, "ch03/run.csv flash_v2") && strstr(out, "SLOWER by 20%"), "%s", out);
    cr_assert(strstr(out, "flash_v1") == NULL || strstr(out, "flash_v1 B10 H64 N512 d64 fp32 32x32:") == NULL, "%s", out);
}

Test(compare, the_tolerance_is_used) {
    cr_assert_eq(compare("mk new 12.0 1000", "COMPARE_TOL=0.25"), 0, "%s", out);
    cr_assert_eq(compare("mk new 10.6 1000", "COMPARE_TOL=0.05"), 1, "%s", out);
    cr_assert_eq(compare("mk new 10.4 1000", "COMPARE_TOL=0.05"), 0, "%s", out);
}

Test(compare, a_changed_byte_count_fails) {
    cr_assert_eq(compare("mk new 9.0 1001", ""), 1, "%s", out);
    cr_assert(strstr(out, "BYTES DIFFER: model_read 1000 -> 1001 counted_read 1000 -> 1001"), "%s", out);
}

Test(compare, missing_files_and_folders_are_reported) {
    cr_assert_eq(compare("mk new 10.0 1000; rm $T/new/ch02/n512.csv", ""), 0, "%s", out);
    cr_assert(strstr(out, "ch02/n512.csv: not in"), "%s", out);
    cr_assert_eq(compare("mk new 10.0 1000; rm -r $T/new/ch02", ""), 0, "%s", out);
    cr_assert(strstr(out, "ch02: not in"), "%s", out);
    cr_assert_eq(compare("mkdir -p $T/new/ch05", ""), 2, "%s", out);
    cr_assert(strstr(out, "no results file in common"), "%s", out);
    cr_assert_eq(compare("", ""), 2, "%s", out);
    cr_assert(strstr(out, "no results folder"), "%s", out);
}
