#!/usr/bin/env bash
# run-tests.sh TEST_BINARY...: runs every Criterion test binary, one after another, even after a failure, then
# prints why tests were skipped (once per reason) and, last, one closing line for all of them:
#     tests: N passed, M failed, K skipped
# Criterion's own summary ("Tested: ...") leaves skipped tests out; they are counted from its TAP report.
# Exit status 1 when any test failed or crashed, or a binary did not run.
set -u -o pipefail
# A binary's tests run one at a time where a CUDA device is (GPU tests must not share it); without one the GPU
# tests skip and no test shares anything but the CPUs, so they run TEST_JOBS at a time (default 2).
jobs=1
nvidia-smi -L 2>/dev/null | grep -q '^GPU' || jobs=${TEST_JOBS:-2}
status=0 passed=0 failed=0 skipped=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/run-tests.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/reasons"
for t in "$@"; do
    echo "== $t"
    rm -f "$tmp/tap"
    start=$SECONDS
    "$t" --jobs "$jobs" --tap="$tmp/tap" 2>&1 | tee "$tmp/log"
    rc=$?
    echo "== $t: $((SECONDS - start)) s"
    line=$(grep -a 'Synthesis: Tested' "$tmp/log" | tail -n 1)
    if [ -z "$line" ]; then
        echo "run-tests: $t printed no Criterion summary (exit status $rc)"
        failed=$((failed + 1)); status=1; continue
    fi
    p=$(echo "$line" | sed -n 's/.*Passing: \([0-9]*\).*/\1/p')
    f=$(echo "$line" | sed -n 's/.*Failing: \([0-9]*\).*/\1/p')
    c=$(echo "$line" | sed -n 's/.*Crashing: \([0-9]*\).*/\1/p')
    passed=$((passed + p)); failed=$((failed + f + c))
    if [ -f "$tmp/tap" ]; then
        # TAP: "ok - suite::test  # SKIP reason"
        sed -n 's/^ok .*# SKIP \{0,1\}\(.*\)$/\1/p' "$tmp/tap" >>"$tmp/reasons"
    fi
    [ "$rc" = 0 ] || status=1
done
skipped=$(grep -c '' "$tmp/reasons")
if [ "$skipped" -gt 0 ]; then
    sort "$tmp/reasons" | uniq -c | sort -rn | while read -r n reason; do
        case $reason in
            "no CUDA device"*) reason="$reason; the kernels themselves were not run" ;;
        esac
        echo "skipped: $n test$([ "$n" = 1 ] || echo s): ${reason:-no reason given}"
    done
fi
[ "$failed" = 0 ] || status=1
echo "tests: $passed passed, $failed failed, $skipped skipped"
exit $status
