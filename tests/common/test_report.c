/* Tests of common/scripts/book.py report (`make report`) and book.py compare (`make compare`).
 * The report runs on the committed results of the first GPU folder in results/ (no GPU needed: the programs run
 * with --model only); compare runs on synthetic result folders written by each test. Run from the repo root,
 * after `make` (the chapter programs). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support.h"

/* the sanitized pass skips these (tooling_suite_init, support.h) */
TestSuite(compare, .init = tooling_suite_init);

/* Runs a bash script; returns its exit status and puts stdout and stderr into out. */
static int bash_script(const char *script, char *out, size_t len) {
    char path[] = "/tmp/test_report.XXXXXX";
    const int fd = mkstemp(path);
    cr_assert(fd >= 0, "mkstemp failed");
    FILE *f = fdopen(fd, "w");
    cr_assert(f != NULL);
    fputs("set -u\nG=results/$(readlink results/latest)\n" /* the book's GPU folder (another may hold one chapter) */
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

/* ---------------------------------------------------------------- report */

Test(report, a_row_for_every_id_of_articles) {
    const int rc = bash_script("REPORT=$T/R.md python3 common/scripts/book.py report \"$G\" >$T/out || echo \"exit $?\"\n"
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
        "REPORT=$T/R.md python3 common/scripts/book.py report \"$G\" >/dev/null || echo \"report exit $?\"\n"
        "commas() { echo \"$1\" | sed -E ':a; s/([0-9])([0-9]{3})($|,)/\\1,\\2\\3/; ta'; }\n"
        "col() { ./ch$1/run --model ${4:-} --csv - 2>/dev/null | grep -E '^(chapter,|[0-9][0-9],)' |\n"
        "  python3 common/scripts/book.py csv-rows /dev/stdin $3 kernel=$2; }\n"
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

/* A claim id that claims.txt does not know: a row that says so, and exit 1. */
Test(report, an_unknown_claim_fails) {
    const int rc = bash_script("cp ARTICLES.md $T/A.md\n"
                               "echo '| <a id=\"v9-new\"></a>**V9-new** | a new claim | model | 09 |' >>$T/A.md\n"
                               "ARTICLES=$T/A.md REPORT=$T/R.md python3 common/scripts/book.py report \"$G\" >/dev/null 2>$T/err\n"
                               "echo \"exit $?\"; grep '^| V9-new |' $T/R.md; cat $T/err\n",
                               out, sizeof out);
    cr_assert_eq(rc, 0);
    cr_assert(strstr(out, "exit 1"), "%s", out);
    cr_assert(strstr(out, "| V9-new | (no entry in common/scripts/claims.txt)"), "%s", out);
    cr_assert(strstr(out, "V9-new (ARTICLES.md) has no line"), "%s", out);
}

/* A results folder without a file: the claims that need it say so and name it; the others are still there. */
Test(report, a_missing_results_file_is_named) {
    const int rc = bash_script("cp -r \"$G\" $T/gpu && rm $T/gpu/ch03/ncu.csv\n"
                               "REPORT=$T/R.md python3 common/scripts/book.py report $T/gpu >/dev/null; echo \"exit $?\"\n"
                               "grep '^| V2-reads |' $T/R.md; grep '^| V1-bytes |' $T/R.md\n",
                               out, sizeof out);
    cr_assert_eq(rc, 0);
    cr_assert(strstr(out, "exit 0"), "%s", out);
    cr_assert(strstr(out, "| V2-reads |") && strstr(out, "not in this results folder (ch03/ncu.csv)"), "%s", out);
    cr_assert(strstr(out, "| V1-bytes |") && strstr(out, "| DRAM 11,"), "%s", out);
}

/* A results file that is there but broken (empty, cut in the middle of a row, a column renamed): a message naming
 * the file, exit 2, and no REPORT.md written, not even half of one. */
Test(report, bad_results_exit_2_and_write_nothing) {
    const int rc = bash_script("for fault in empty truncated column; do\n"
                               "  rm -rf $T/gpu; cp -r \"$G\" $T/gpu; f=$T/gpu/ch03/run.csv\n"
                               "  case $fault in\n"
                               "    empty) : >$f ;;\n"
                               "    truncated) head -c -40 \"$G\"/ch03/run.csv >$f ;;\n"
                               "    column) sed -i '1s/time_ms_median/time_ms/' $f ;;\n"
                               "  esac\n"
                               "  REPORT=$T/R.md python3 common/scripts/book.py report $T/gpu >/dev/null 2>$T/err\n"
                               "  echo \"$fault exit $?\"; cat $T/err; [ -e $T/R.md ] && echo \"$fault: a report was written\"\n"
                               "done\n"
                               "exit 0\n",
                               out, sizeof out);
    cr_assert_eq(rc, 0);
    cr_assert(strstr(out, "empty exit 2") && strstr(out, "ch03/run.csv: empty"), "%s", out);
    cr_assert(strstr(out, "truncated exit 2") && strstr(out, "fields where the header has"), "%s", out);
    cr_assert(strstr(out, "column exit 2") && strstr(out, "no column 'time_ms_median'"), "%s", out);
    cr_assert(!strstr(out, "was written"), "%s", out);
}

/* Every row names the file its values come from, and no cell says "not measured" where a results file has the row:
 * the fp16 peers of chapter 05 are there (PEER-3op-fp16, PEER-flash-fp16: each peer's fastest round in peers.csv); where no file has the row
 * (PEER-3op-n4096), the cell names the file and the row it looked for. */
Test(report, rows_name_their_file_and_not_measured_is_derived) {
    const int rc = bash_script("REPORT=$T/R.md python3 common/scripts/book.py report \"$G\" >/dev/null || echo \"exit $?\"\n"
                               "grep '^| [A-Za-z]' $T/R.md | grep -v '^| id |' | awk -F' [|] ' '$6 == \"-\" { print \"no file: \" $0 }'\n"
                               "fastest() { awk -F, -v p=$1 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }\n"
                               "  $c[\"peer\"] == p && $c[\"B\"] == 10 && $c[\"N\"] == 1024 && $c[\"dtype\"] == \"fp16\" && $c[\"causal\"] == 0 &&\n"
                               "  (m == \"\" || $c[\"time_ms_median\"] + 0 < m + 0) { m = $c[\"time_ms_median\"] } END { print m }' $G/ch05/peers.csv; }\n"
                               "w=$(fastest torch_3op); [ -n \"$w\" ] && grep '^| PEER-3op-fp16 |' $T/R.md | grep -qF \"| $w ms |\" || echo 'PEER-3op-fp16 wrong'\n"
                               "w=$(fastest sdpa_flash); [ -n \"$w\" ] && grep '^| PEER-flash-fp16 |' $T/R.md | grep -qF \"| $w ms |\" || echo 'PEER-flash-fp16 wrong'\n"
                               "grep '^| PEER-3op-n4096 |' $T/R.md | grep -q 'not measured: no row of ch05/peers.csv with peer=torch_3op B=1 H=32 N=4096' "
                               "|| echo 'PEER-3op-n4096 wrong'\n"
                               "grep -n 'not measured' common/scripts/claims.txt common/scripts/booklib/*.py [0-9][0-9]_*/readme_blocks.py "
                               "| grep -v 'booklib/report.py' | grep -v 'readme_blocks.py.*not measured |' | sed 's/^/typed: /'\n"
                               "exit 0\n",
                               out, sizeof out);
    cr_assert_eq(rc, 0);
    cr_assert_str_eq(out, "", "%s", out);
}

/* ---------------------------------------------------------------- compare */

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
    snprintf(script, sizeof script, "%s%s\n%s python3 common/scripts/book.py compare $T/base $T/new\n", FIXTURE, setup, env);
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

/* compare on a broken NEW file (cut in the middle of a row): a message naming it, exit 2. */
Test(compare, a_truncated_file_exits_2) {
    cr_assert_eq(compare("mk new 10.0 1000; head -c -20 $T/base/ch03/run.csv >$T/new/ch03/run.csv", ""), 2, "%s", out);
    cr_assert(strstr(out, "ch03/run.csv:2: ") && strstr(out, "fields where the header has"), "%s", out);
}

/* An output that cannot be written (a full disk): a message and exit 2, not a silent success. */
Test(compare, a_full_stdout_exits_2) {
    const int rc = bash_script("python3 common/scripts/book.py compare \"$G\" \"$G\" >/dev/full; echo \"exit $?\"\n", out,
                               sizeof out);
    cr_assert_eq(rc, 0);
    cr_assert(strstr(out, "exit 2") && strstr(out, "cannot write its output"), "%s", out);
}
