#!/usr/bin/env bash
# cut-assignment.sh CH DEST [NAME...]: writes a student's copy of chapter CH into DEST (which must not exist or
# be empty): the chapter, common/, the chapter's tests, the Makefile, README.md and LICENSE, a buildable tree
# in which `make grade CH=CH` grades the student's work; and the plot scripts with the chapter's plots and its
# committed results (results/latest), so that `make plots` and `make reproduce` work there as in the book.
# cut-assignment.sh --list: one line per assignment of the book: chapter, name, file, cpu or gpu, and its
# suites as a Criterion filter (make grade TESTS=...).
#
# An assignment is a block of a chapter's own source, between
#     /* ASSIGNMENT BEGIN name [suite...]: ... */
#     /* ASSIGNMENT STUB name
#     ...the stub: what the student starts from (only // comments inside)...
#     */
#     ...the book's lines: the solution...
#     /* ASSIGNMENT END name */
# In the copy the STUB comment and the solution are replaced by the stub's lines; the BEGIN and END lines stay
# to show where to write. NAMEs pick assignments of the chapter (default: all of them). A block in a .cu file is
# graded by the GPU tests (gpu), any other by the CPU tests (cpu); [suite...] names the test suites of the
# chapter that catch the stub (tests/assignments/check.sh grades the stub and the solution with those alone).
# A block in a header that the kernels include too (chapter 04's layouts.h) is cpu, its stub caught by a CPU
# suite; naming gpu among its suites grades the kernels built on the student's lines as well, where a GPU is.
set -euo pipefail
cd "$(dirname "$0")/../.."

# The blocks of one file as "name filter" pairs (filter: the Criterion filter of its [suites]), with a check of
# their shape; exit 1 on a malformed block.
blocks() {
    awk '
        /\/\* ASSIGNMENT BEGIN / {
            if (name != "") bad("BEGIN inside " name)
            name = $4; sub(/:$/, "", name)
            suites = $0
            if (!sub(/^[^[]*\[/, "", suites) || !sub(/\].*/, "", suites) || suites == "") bad("BEGIN " name " names no [suites]")
            gsub(/ +/, "|", suites)
            begin = FNR
            filter = "@(" suites ")/*"
            next
        }
        /\/\* ASSIGNMENT STUB / && name != "" && $4 != name { bad("STUB " $4 " inside " name) }
        /\/\* ASSIGNMENT END / { n = $4; if (n != name) bad("END " n " without its BEGIN"); print name, filter; name = ""; next }
        END { if (!failed && name != "") { FNR = begin; bad("BEGIN " name " without its END") } }
        function bad(what) { printf "%s:%d: %s\n", FILENAME, FNR, what > "/dev/stderr"; failed = 1; exit 1 }
    ' "$1"
}

chapter_dir() { # the directory NN_name of chapter NN, or nothing
    local d
    for d in "$1"_*/; do [ -f "$d/kernels.cu" ] && echo "${d%/}"; done
    return 0
}

marked_files() { grep -l 'ASSIGNMENT BEGIN ' "$1"/* 2>/dev/null || true; }

if [ "${1:-}" = --list ]; then
    for d in [0-9][0-9]_*/; do
        d=${d%/}
        for f in $(marked_files "$d"); do
            kind=cpu
            case $f in *.cu) kind=gpu ;; esac
            blocks "$f" | while read -r name filter; do echo "${d%%_*} $name $f $kind $filter"; done
        done
    done
    exit 0
fi

if [ $# -lt 2 ]; then
    echo "usage: cut-assignment.sh CH DEST [NAME...]   or   cut-assignment.sh --list" >&2
    exit 2
fi
ch=$1 dest=$2
shift 2
dir=$(chapter_dir "$ch")
if [ -z "$ch" ] || [ -z "$dir" ]; then
    echo "cut-assignment: no chapter $ch here (CH=NN, one of: $(ls -d [0-9][0-9]_*/ | cut -c1-2 | tr '\n' ' '))" >&2
    exit 2
fi
if [ -e "$dest" ] && [ -n "$(ls -A "$dest")" ]; then
    echo "cut-assignment: $dest exists and is not empty; remove it or give another DEST" >&2
    exit 2
fi
available=$(for f in $(marked_files "$dir"); do blocks "$f"; done | cut -d' ' -f1)
if [ -z "$available" ]; then
    echo "cut-assignment: chapter $ch has no assignment" >&2
    exit 2
fi
for name in "$@"; do
    if ! printf '%s\n' $available | grep -qx -- "$name"; then
        echo "cut-assignment: chapter $ch has no assignment $name (it has: $(echo $available))" >&2
        exit 2
    fi
done
chosen=$(echo ${*:-$available})

mkdir -p "$dest/tests"
cp -p Makefile README.md LICENSE .gitignore "$dest/"
cp -pR common "$dir" "$dest/"
cp -p tests/*.h "$dest/tests/"
cp -pR "tests/ch$ch" "$dest/tests/"
# The plot scripts and the chapter's own plots (its README shows them); the chapter's results under the folder
# results/latest names, so that `make plots` redraws its roofline before the student's first `make reproduce`.
mkdir -p "$dest/plots"
cp -p plots/*.sh plots/*.gp plots/*.awk "$dest/plots/"
for f in plots/ch"$ch"_*; do [ -e "$f" ] && cp -p "$f" "$dest/plots/"; done
latest=$(readlink results/latest 2>/dev/null || true)
if [ -n "$latest" ] && [ -d "results/$latest/ch$ch" ]; then
    mkdir -p "$dest/results/$latest"
    cp -pR "results/$latest/ch$ch" "$dest/results/$latest/"
    ln -s "$latest" "$dest/results/latest"
fi
for f in $(marked_files "$dir"); do
    awk -v chosen=" $chosen " '
        function picked(n) { return index(chosen, " " n " ") > 0 }
        state == 0 && /\/\* ASSIGNMENT BEGIN / {
            name = $4; sub(/:$/, "", name)
            if (picked(name)) { print; state = 1; next }
        }
        state == 1 && /\/\* ASSIGNMENT STUB / { state = 2; next }
        state == 1 { printf "%s:%d: no STUB line after BEGIN %s\n", FILENAME, FNR, name > "/dev/stderr"; exit 1 }
        state == 2 && /^[ \t]*\*\/[ \t]*$/ { state = 3; next }         # the end of the stub
        state == 2 { print; next }                                   # a line of the stub
        state == 3 && /\/\* ASSIGNMENT END / { print; state = 0; next }
        state == 3 { next }                                          # a line of the solution
        { print }
    ' "$f" >"$dest/$f"
done
echo "assignment: chapter $ch ($(echo $chosen | sed 's/ /, /g')) written to $dest"
echo "            cd $dest && make grade CH=$ch       (a stub compiles, and fails the tests until it is written: a kernel's, on a GPU)"
