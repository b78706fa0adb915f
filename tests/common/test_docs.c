/* Tests of common/scripts/book.py docs (`make docs`, `make docs-check`): the measured tables of the chapter READMEs
 * are what the committed results give, and a number edited by hand is caught. Run from the repo root. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../support.h"

/* the sanitized pass skips these (tooling_suite_init, support.h) */
TestSuite(docs, .init = tooling_suite_init);

static char out[1 << 16];

/* The committed READMEs: every generated block is what book.py docs makes from the committed results. */
Test(docs, readmes_match_the_committed_results) {
    const int rc = run_command("python3 common/scripts/book.py docs --check 2>&1", out, sizeof out);
    cr_assert_eq(rc, 0, "a README's measured tables differ from the committed results (run make docs):\n%s", out);
}

/* A copy of chapter 00's README with one generated number changed (the first time of the "fp32, own GEMMs" row,
 * whatever the committed run measured, made 9.999): --check names the line and exits 1; the copy itself is left
 * as it was. */
Test(docs, a_number_edited_by_hand_fails) {
    const int rc = run_command(
        "T=$(mktemp -d /tmp/test_docs.XXXXXX) && trap 'rm -rf \"$T\"' EXIT && "
        "sed -E 's/^\\| fp32, own GEMMs \\| [0-9.]+ \\|/| fp32, own GEMMs | 9.999 |/' 00_standard_attention/README.md >$T/R.md && "
        "cmp -s 00_standard_attention/README.md $T/R.md && echo 'the edit did not apply'; "
        "cp $T/R.md $T/before.md; python3 common/scripts/book.py docs --check $T/R.md 2>&1; echo \"exit $?\"; "
        "cmp -s $T/R.md $T/before.md || echo 'the copy was changed'",
        out, sizeof out);
    cr_assert_eq(rc, 0);
    cr_assert(strstr(out, "-| fp32, own GEMMs | 9.999 |"), "%s", out);
    cr_assert(strstr(out, "+| fp32, own GEMMs | "), "%s", out);
    cr_assert(strstr(out, "exit 1"), "%s", out);
    cr_assert(!strstr(out, "did not apply") && !strstr(out, "was changed"), "%s", out);
}

/* A generated block that no generator knows is an error; one marked source=manual is kept as written. */
Test(docs, unknown_blocks_fail_and_manual_blocks_are_kept) {
    const int rc = run_command(
        "T=$(mktemp -d /tmp/test_docs.XXXXXX) && trap 'rm -rf \"$T\"' EXIT && "
        "printf 'a\\n<!-- MEASURED:no_such_block -->\\nx\\n<!-- /MEASURED -->\\n' >$T/A.md && "
        "printf '<!-- MEASURED:no_such_block source=manual -->\\n| 1 |\\n<!-- /MEASURED -->\\n' >$T/M.md && "
        "cp $T/A.md $T/A0.md && cp $T/M.md $T/M0.md && "
        "python3 common/scripts/book.py docs $T/A.md 2>&1; echo \"A exit $?\"; "
        "python3 common/scripts/book.py docs $T/M.md 2>&1; echo \"M exit $?\"; "
        "cmp -s $T/A.md $T/A0.md || echo 'A changed'; cmp -s $T/M.md $T/M0.md || echo 'M changed'",
        out, sizeof out);
    cr_assert_eq(rc, 0);
    cr_assert(strstr(out, "block no_such_block has no generator"), "%s", out);
    cr_assert(strstr(out, "A exit 1") && strstr(out, "M exit 0"), "%s", out);
    cr_assert(!strstr(out, "changed"), "%s", out);
}

/* Bad results files under a copy of chapter 00's README (a CSV missing, empty, cut in the middle of a row, a column
 * renamed): a message that names the file and the fault, exit 2, and the README as it was (nothing half-written). */
Test(docs, bad_results_exit_2_and_leave_the_readme_alone) {
    const int rc = run_command(
        "T=$(mktemp -d /tmp/test_docs.XXXXXX) && trap 'rm -rf \"$T\"' EXIT && "
        "cp 00_standard_attention/README.md $T/R.md && cp $T/R.md $T/before.md && "
        "f=ch00/article_fp32_own.csv && "
        "for fault in missing empty truncated column; do "
        "  rm -rf $T/res && cp -r results/NVIDIA_H200 $T/res && "
        "  case $fault in "
        "    missing) rm $T/res/$f ;; "
        "    empty) : >$T/res/$f ;; "
        "    truncated) head -c -40 results/NVIDIA_H200/$f >$T/res/$f ;; "
        "    column) sed -i '1s/time_ms_median/time_ms/' $T/res/$f ;; "
        "  esac; "
        "  RESULTS=$T/res python3 common/scripts/book.py docs $T/R.md 2>&1; echo \"$fault exit $?\"; "
        "  cmp -s $T/R.md $T/before.md || echo \"$fault: the README was changed\"; "
        "done",
        out, sizeof out);
    cr_assert_eq(rc, 0);
    cr_assert(strstr(out, "missing exit 2") && strstr(out, "article_fp32_own.csv: no such file"), "%s", out);
    cr_assert(strstr(out, "empty exit 2") && strstr(out, "article_fp32_own.csv: empty"), "%s", out);
    cr_assert(strstr(out, "truncated exit 2") && strstr(out, "fields where the header has"), "%s", out);
    cr_assert(strstr(out, "column exit 2") && strstr(out, "no column 'time_ms_median'"), "%s", out);
    cr_assert(!strstr(out, "was changed"), "%s", out);
}

/* The run's record (provenance.json) gives the caption's GPU, CUDA and date; a kernel whose code changed since it
 * was measured (provenance.stale(), stood in for here) is named under the table that shows it, and only there. */
Test(docs, captions_from_the_record_and_stale_kernels_marked) {
    const int rc = run_command(
        "T=$(mktemp -d /tmp/test_docs.XXXXXX) && trap 'rm -rf \"$T\"' EXIT && cp -r results/NVIDIA_H200 $T/res && "
        "echo '{\"gpu\": \"GPU X\", \"nvcc\": \"13.9 (V13.9.1)\", \"date_utc\": \"2027-01-02T03:04:05Z\"}' "
        ">$T/res/provenance.json && "
        "python3 -c \"import sys, types; sys.path.insert(0, 'common/scripts'); m = types.ModuleType('provenance'); "
        "m.stale = lambda r: {('03', 'flash_v2'): 'kernel changed since measured: flash_v2_kernel (timed)'}; "
        "sys.modules['provenance'] = m; from booklib import blocks; b = blocks.Blocks('$T/res'); "
        "print(b.block_ch03_v1_v2()); print('----'); print(b.block_ch02_vs_ch00())\" 2>&1",
        out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, ": GPU X, CUDA 13.9, measured 2027-01-02.\n"), "%s", out);
    const char *sep = strstr(out, "----");
    const char *mark = strstr(out, "stale: kernel changed since measured: ch03 flash_v2 (flash_v2_kernel (timed)).");
    cr_assert(sep && mark && mark < sep, "%s", out);
    cr_assert(!strstr(sep, "stale"), "%s", out);
}

/* A run of one chapter's file beside its own record (chNN/<name>.provenance.json beside chNN/<name>.csv): the
 * caption of a table from that file is that record's, not the folder's. */
Test(docs, a_files_own_record_gives_its_caption) {
    const int rc = run_command(
        "T=$(mktemp -d /tmp/test_docs.XXXXXX) && trap 'rm -rf \"$T\"' EXIT && cp -r results/NVIDIA_H200 $T/res && "
        "echo '{\"gpu\": \"GPU Y\", \"nvcc\": \"13.8 (V13.8.2)\", \"date_utc\": \"2027-02-03T04:05:06Z\"}' "
        ">$T/res/ch05/steps.provenance.json && "
        "python3 -c \"import sys; sys.path.insert(0, 'common/scripts'); from booklib import blocks; "
        "b = blocks.Blocks('$T/res'); print(b.block_ch05_steps()); print('----'); print(b.block_ch05_article())\" 2>&1",
        out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    const char *sep = strstr(out, "----");
    const char *own = strstr(out, "from `ch05/steps.csv`");
    const char *cap = own ? strstr(own, ": GPU Y, CUDA 13.8, measured 2027-02-03.\n") : NULL;
    cr_assert(sep && own && cap && cap < sep, "%s", out);
    cr_assert(!strstr(sep, "GPU Y"), "%s", out);
}


/* The READMEs' --model excerpts (a fenced block opening with `./chNN/run --model ...`) are what the programs print
 * (common/scripts/model-excerpts.sh); chapter 06's two are checked, and a copy of its README with one number of an
 * excerpt changed (the queue's 1.005 made 1.006) fails, naming the command. */
Test(docs, model_excerpts_are_the_programs_output) {
    int rc = run_command("bash common/scripts/model-excerpts.sh README.md */README.md 2>&1", out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    int n = 0;
    const char *said = strstr(out, "model-excerpts: ");
    cr_assert(said && sscanf(said, "model-excerpts: %d", &n) == 1, "%s", out);
    cr_assert_geq(n, 2, "%s", out);
    rc = run_command("T=$(mktemp -d /tmp/test_docs.XXXXXX) && trap 'rm -rf \"$T\"' EXIT && "
                     "sed 's/1.005 from a queue/1.006 from a queue/' 06_flash_v3/README.md >$T/R.md && "
                     "bash common/scripts/model-excerpts.sh $T/R.md 2>&1",
                     out, sizeof out);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "the excerpt of `./ch06/run --model --kernel queue --causal --dim 128"), "%s", out);
    cr_assert(strstr(out, "1.006 from a queue"), "%s", out);
}
