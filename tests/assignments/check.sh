#!/usr/bin/env bash
# check.sh [--tap=FILE]: the checks of the classroom assignments (common/scripts/cut-assignment.sh), reported
# the way a Criterion test binary reports, so that `make test` counts them with the other tests. For every
# assignment NAME of chapter NN, graded by the test suites its BEGIN marker names:
#   assignments::NAME_stub_fails        its student's copy (make assignment CH=NN NAME=NAME) builds, and there
#                                       make grade fails on the stub and writes its JUnit XML (a GPU assignment
#                                       without a GPU: the copy builds and its tests are reported as not graded)
#   assignments::NAME_solution_passes   the book's own code, the solution, passes make grade CH=NN on them.
# The copies build for the book's architectures, ARCH=$FA_ARCH from make test (empty: the fat set, as CI builds
# it), else 90, starting from the objects already built: with the same architectures as those objects, only what
# a stub changes is compiled again (a copy for other architectures than the book's would compile every CUDA
# file of its chapter again), and a CUDA file among those for sm_90 alone (the Makefile's STUB_CU): it proves the
# copy builds, and the book's objects of that file, built for every architecture, are not replaced by it.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
tap=
for a in "$@"; do case $a in --tap=*) tap=${a#--tap=} ;; esac; done
arch=${FA_ARCH-90}
book_arch=()
[ -z "${FA_ARCH+set}" ] || book_arch=(ARCH="$FA_ARCH")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/assignments.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# make as if run by hand: not the make that runs the tests (its flags and jobs are not for this one).
run_make() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u FA_SUBMAKE make --no-print-directory "$@"; }

passed=0 failed=0 results=
report() { # report TEST OK MESSAGE
    if [ "$2" = 1 ]; then
        echo "[PASS] assignments::$1"
        passed=$((passed + 1)) results+="ok - assignments::$1"$'\n'
    else
        echo "[FAIL] assignments::$1: $3"
        failed=$((failed + 1)) results+="not ok - assignments::$1 $3"$'\n'
    fi
}

# Objects to start each copy's build from: the book's, then each copy's, less those a stub compiled.
seed=$tmp/seed
mkdir -p "$seed"
[ -d build ] && cp -pR build/. "$seed/"
rm -rf "$seed/tests/common"

bash common/scripts/cut-assignment.sh --list >"$tmp/list" || { echo "check: cut-assignment.sh --list failed"; exit 1; }
while read -r ch name file kind filter; do
    copy=$tmp/ch$ch-$name
    log=$tmp/$name.log
    t0=$SECONDS
    if ! bash common/scripts/cut-assignment.sh "$ch" "$copy" "$name" >"$log" 2>&1; then
        report "${name}_stub_fails" 0 "make assignment failed: $(tail -n 1 "$log")"
        continue
    fi
    mkdir -p "$copy/build"
    cp -pR "$seed/." "$copy/build/"
    # the CUDA files whose objects the stub changes (the stubbed file, or one that includes it)
    stub_cu=$(grep -rl --include='*.d' -F "$file" "$seed" | sed -n 's#^'"$seed"'/\(.*\)\.\(cu\|counted\)\.d$#\1.cu#p' |
        sort -u | tr '\n' ' ')
    run_make -C "$copy" ARCH="$arch" STUB_CU="$stub_cu" grade CH="$ch" XML=grade.xml TESTS="$filter" >>"$log" 2>&1
    rc=$?
    # Objects compiled from a stubbed file are not the book's: they do not seed the next copy.
    cp -pR "$copy/build/." "$seed/"
    grep -rl --include='*.d' -F "$file" "$seed" | while read -r d; do rm -f "${d%.d}.o" "$d"; done
    if [ ! -x "$copy/ch$ch/run" ] || [ ! -x "$copy/tests/bin/test_ch$ch" ]; then
        report "${name}_stub_fails" 0 "the copy did not build: $(grep -m1 -i 'error' "$log")"
    elif ! grep -q '<testsuites' "$copy/grade.xml" 2>/dev/null; then
        report "${name}_stub_fails" 0 "make grade XML=grade.xml wrote no JUnit XML"
    elif [ "$kind" = gpu ] && grep -q '^NOT GRADED .*: needs a GPU$' "$log"; then
        # No GPU here: the kernel's tests cannot run, and the grade says so.
        if [ "$rc" = 0 ] && grep -q '^grade: .*not graded: [0-9]* tests* that needs* a GPU' "$log"; then
            report "${name}_stub_fails" 1
        else
            report "${name}_stub_fails" 0 "without a GPU the grade should list the GPU tests as not graded"
        fi
    elif [ "$rc" != 0 ] && grep -q '^FAIL ' "$log"; then
        report "${name}_stub_fails" 1
    else
        report "${name}_stub_fails" 0 "make grade did not fail on the stub (exit status $rc)"
    fi

    t1=$SECONDS
    log=$tmp/$name.book.log
    if run_make "${book_arch[@]}" grade CH="$ch" TESTS="$filter" >"$log" 2>&1 && grep -q '^grade: PASS' "$log"; then
        report "${name}_solution_passes" 1
    else
        report "${name}_solution_passes" 0 "make grade CH=$ch TESTS='$filter' failed on the book: $(grep -m1 '^FAIL' "$log")"
    fi
    echo "check: $name (chapter $ch): the copy $((t1 - t0)) s, the book $((SECONDS - t1)) s"
done <"$tmp/list"

[ -z "$tap" ] || printf 'TAP version 13\n1..%d\n%s' $((passed + failed)) "$results" >"$tap"
echo "[====] Synthesis: Tested: $((passed + failed)) | Passing: $passed | Failing: $failed | Crashing: 0 "
[ "$failed" = 0 ]
