#!/usr/bin/env bash
# run-tests.sh TEST_BINARY...: runs every Criterion test binary (one after another, --jobs 1: GPU tests and
# timed tests must not share the device), even after a failure, then prints one closing line for all of
# them: "tests: N passed, M failed". Exit status 1 when any test failed or crashed, or a binary did not run.
set -u -o pipefail
status=0 passed=0 failed=0
for t in "$@"; do
    echo "== $t"
    log=$(mktemp)
    "$t" --jobs 1 2>&1 | tee "$log"
    rc=$?
    line=$(grep -a 'Synthesis: Tested' "$log" | tail -n 1)
    rm -f "$log"
    if [ -z "$line" ]; then
        echo "run-tests: $t printed no Criterion summary (exit status $rc)"
        failed=$((failed + 1)); status=1; continue
    fi
    p=$(echo "$line" | sed -n 's/.*Passing: \([0-9]*\).*/\1/p')
    f=$(echo "$line" | sed -n 's/.*Failing: \([0-9]*\).*/\1/p')
    c=$(echo "$line" | sed -n 's/.*Crashing: \([0-9]*\).*/\1/p')
    passed=$((passed + p)); failed=$((failed + f + c))
    [ "$rc" = 0 ] || status=1
done
[ "$failed" = 0 ] || status=1
echo "tests: $passed passed, $failed failed"
exit $status
