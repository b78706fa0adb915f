#!/usr/bin/env bash
# grade.sh TEST_BINARY [XML_FILE [FILTER]]: runs one chapter's Criterion test binary (only the tests that match
# Criterion's --filter FILTER, such as 'cpu/*', when given) and prints a grade sheet, one line per test (PASS,
# FAIL with its message, or NOT GRADED with the reason), then the totals. Tests that skip for
# want of a CUDA device are reported as not graded: they need a GPU (run the grading again on a machine with
# one). With XML_FILE, Criterion also writes its JUnit XML report there.
# Exit status 1 when a test failed or crashed, or the binary did not run to its end.
set -u -o pipefail
bin=$1 xml=${2:-} filter=${3:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/grade.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
args=(--jobs 1 --tap="$tmp/tap")
[ -z "$xml" ] || args+=(--xml="$xml")
[ -z "$filter" ] || args+=(--filter="$filter")
echo "== grade: $bin${filter:+ (tests $filter)}"
"$bin" "${args[@]}" >"$tmp/log" 2>&1
rc=$?
if ! grep -aq 'Synthesis: Tested' "$tmp/log" || [ ! -f "$tmp/tap" ]; then
    cat "$tmp/log"
    echo "grade: FAIL: $bin did not run to its end (exit status $rc); nothing was graded"
    exit 1
fi
# TAP lines: "ok - suite::test  (0.01s)", "ok - suite::test  # SKIP reason", "not ok - suite::test [message]",
# the failure messages in the YAML block that follows a "not ok" (its "  - file:line: |+" items).
awk '
    # The message of a failure: its first 6 lines, and how many more there are.
    function add(line) { if (lines++ < 6) msg = msg "            " line "\n" }
    function flush() {
        if (failing) {
            printf "%-11s %s\n", "FAIL", test
            if (msg == "") msg = "            (no message)\n"
            if (lines > 6) msg = msg sprintf("            (%d more lines: run the test binary for all of them)\n", lines - 6)
            printf "%s", msg
        }
        failing = 0; msg = ""; lines = 0
    }
    /^ok - / {
        flush()
        test = $3
        if (index($0, "# SKIP")) {
            reason = $0; sub(/.*# SKIP */, "", reason)
            if (filtered && reason == "test was skipped") next   # outside the filter: not part of this grade
            if (reason ~ /^no CUDA device/) { printf "%-11s %s: needs a GPU\n", "NOT GRADED", test; gpu++ }
            else { printf "%-11s %s: %s\n", "NOT GRADED", test, reason; other++ }
        } else { printf "%-11s %s\n", "PASS", test; passed++ }
        next
    }
    /^not ok - / {
        flush()
        test = $4; failing = 1; failed++
        rest = $0; sub(/^not ok - [^ ]* */, "", rest); sub(/^\([0-9.]*s\) *$/, "", rest)
        if (rest != "") add(rest)
        next
    }
    failing && /^  - .*: \|\+$/ { line = $0; sub(/^  - /, "", line); sub(/ \|\+$/, "", line); where = line; next }
    failing && /^      / { line = $0; sub(/^ */, "", line); add((where == "" ? "" : where " ") line); where = ""; next }
    END {
        flush()
        printf "grade: %d passed, %d failed", passed, failed
        if (gpu) printf "; not graded: %d test%s that need%s a GPU (none here: run make grade on a machine with a CUDA GPU)", gpu, gpu == 1 ? "" : "s", gpu == 1 ? "s" : ""
        if (other) printf "; not graded: %d other skipped test%s (reason above)", other, other == 1 ? "" : "s"
        printf "\n"
    }
' filtered="${filter:+1}" "$tmp/tap" | tee "$tmp/sheet"
failed=$(sed -n 's/^grade: [0-9]* passed, \([0-9]*\) failed.*/\1/p' "$tmp/sheet")
[ -z "$xml" ] || echo "grade: JUnit XML written to $xml"
if ! grep -q '^\(PASS\|FAIL\|NOT GRADED\) ' "$tmp/sheet"; then
    echo "grade: FAIL: no test ran${filter:+ (no test matches $filter)}"
    exit 1
fi
if [ "${failed:-1}" != 0 ] || [ "$rc" != 0 ]; then
    echo "grade: FAIL"
    exit 1
fi
echo "grade: PASS (every graded test passed)"
