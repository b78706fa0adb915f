/* Tests of common/scripts/docs.sh (`make docs`, `make docs-check`): the measured tables of the chapter READMEs
 * are what the committed results give, and a number edited by hand is caught. Run from the repo root. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../support.h"

static char out[1 << 16];

/* The committed READMEs: every generated block is what docs.sh makes from the committed results. */
Test(docs, readmes_match_the_committed_results) {
    const int rc = run_command("sh common/scripts/docs.sh --check 2>&1", out, sizeof out);
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
        "cp $T/R.md $T/before.md; sh common/scripts/docs.sh --check $T/R.md 2>&1; echo \"exit $?\"; "
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
        "sh common/scripts/docs.sh $T/A.md 2>&1; echo \"A exit $?\"; "
        "sh common/scripts/docs.sh $T/M.md 2>&1; echo \"M exit $?\"; "
        "cmp -s $T/A.md $T/A0.md || echo 'A changed'; cmp -s $T/M.md $T/M0.md || echo 'M changed'",
        out, sizeof out);
    cr_assert_eq(rc, 0);
    cr_assert(strstr(out, "block no_such_block has no generator"), "%s", out);
    cr_assert(strstr(out, "A exit 1") && strstr(out, "M exit 0"), "%s", out);
    cr_assert(!strstr(out, "changed"), "%s", out);
}
