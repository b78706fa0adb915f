#!/usr/bin/env bash
# profile.sh: a chapter's bytes three ways, per kernel: model (closed form) | counted (instrumented build) |
# DRAM (measured by Nsight Compute), reads and writes side by side, with the ratios DRAM / model.
#
#   bash common/scripts/profile.sh CH [chapter options]        (make profile CH=00)
#   bash common/scripts/profile.sh --from REPORT_CSV NCU_CSV    join outputs captured earlier (no GPU needed)
#
# Live mode, on a machine with a CUDA device and ncu, from the repository root after `make chCH`:
#   1. ./chCH/run --csv TMP [options]: the model and counted bytes per kernel (and the ceilings cache filled,
#      so that the next run launches only the chapter's kernels);
#   2. ncu --clock-control none --kernel-name-base function --print-units base
#          --metrics dram__bytes_read.sum,dram__bytes_write.sum --csv ./chCH/run --profile [options]
#      (--profile: each kernel launched once, no warm-up, no counted run, no check). ncu flushes the caches
#      before each profiled kernel (its default --cache-control all), so the DRAM bytes are a cold start.
# Kernel function R_kernel (and any R_* launch) belongs to report row R; see profile_join.awk.
# With RESULTS_DIR set (a results folder such as results/NVIDIA_H200), the joined table is also written to
# $RESULTS_DIR/chCH/profile.csv. NCU=/path/to/ncu
# picks the ncu binary (default: ncu in PATH, else /usr/local/cuda/bin/ncu).
#
# Exit status: 0 done; 1 a run or the parsing failed; 2 usage; 3 ncu or the chapter's program missing;
# 4 no CUDA device.
set -u

scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# find_ncu, csv_field, ncu_dram, the ncu flags and metric lists
. "$scripts/bench-lib.sh"

usage() {
    echo "usage: bash common/scripts/profile.sh CH [chapter options]     e.g. make profile CH=00" >&2
    echo "       bash common/scripts/profile.sh --from REPORT_CSV NCU_CSV" >&2
    exit 2
}

# join REPORT_CSV NCU_OUTPUT JOINED_CSV: parse ncu's output, join it with the report, print the tables.
join_and_print() {
    local summary
    summary=$(ncu_dram "$2") || return 1
    printf '%s\n' "$summary" | awk -f "$scripts/csv.awk" -f "$scripts/profile_join.awk" "$1" - > "$3" || return 1
    awk -f "$scripts/csv.awk" -f "$scripts/profile_table.awk" "$3"
    if grep -q '^[^,]*,other:' "$3"; then
        echo
        echo "other:* rows are launches that match no report row (helpers, library kernels): DRAM only."
    fi
}

# save JOINED_CSV CH: copy the joined table into $RESULTS_DIR when set.
save() {
    [ -n "${RESULTS_DIR:-}" ] || return 0
    mkdir -p "$RESULTS_DIR/ch$2" && cp "$1" "$RESULTS_DIR/ch$2/profile.csv" || return 1
    echo "wrote $RESULTS_DIR/ch$2/profile.csv"
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/profile.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

[ $# -ge 1 ] || usage

if [ "$1" = "--from" ]; then
    [ $# -eq 3 ] || usage
    for f in "$2" "$3"; do
        [ -r "$f" ] || { echo "profile: cannot read $f" >&2; exit 2; }
    done
    join_and_print "$2" "$3" "$tmp/joined.csv" || exit 1
    ch=$(csv_field "$2" chapter)
    [ -n "$ch" ] || { echo "profile: no chapter in $2" >&2; exit 1; }
    save "$tmp/joined.csv" "$ch" || exit 1
    exit 0
fi

[[ $1 =~ ^[0-9]{1,2}$ ]] || { echo "profile: CH must be a chapter number such as 00, got '$1'" >&2; usage; }
ch=$(printf '%02d' "$((10#$1))")
shift
for arg in "$@"; do
    case $arg in
        --csv|--csv=*|--profile|--cpu|--model|--help)
            echo "profile: $arg is set by this script; pass only size and chapter options" >&2
            exit 2 ;;
    esac
done

if ! ncu=$(find_ncu); then
    echo "profile: ncu (Nsight Compute) not found${NCU:+ at $NCU}; it comes with the CUDA toolkit (/usr/local/cuda/bin/ncu), or set NCU=/path/to/ncu" >&2
    exit 3
fi
run=./ch$ch/run
if [ ! -x "$run" ]; then
    echo "profile: $run not found; build it first: make ch$ch (run from the repository root)" >&2
    exit 3
fi

echo "profile: 1/2 $run --csv TMP $* (model and counted bytes)"
REQUIRE_GPU=1 "$run" --csv "$tmp/report.csv" "$@" > "$tmp/run.log" 2>&1
rc=$?
if [ $rc -eq 4 ]; then
    echo "profile: no CUDA device: DRAM bytes need a GPU (and ncu)" >&2
    exit 4
fi
if [ $rc -ne 0 ]; then
    echo "profile: $run failed (exit $rc):" >&2
    tail -n 20 "$tmp/run.log" >&2
    exit 1
fi
gpu=$(csv_field "$tmp/report.csv" gpu)
if [ "$gpu" = "cpu" ] || [ -z "$gpu" ]; then
    echo "profile: $run ran on the CPU (no CUDA device): DRAM bytes need a GPU" >&2
    exit 4
fi

echo "profile: 2/2 ncu ... $run --profile $* (DRAM bytes, one launch per kernel)"
"$ncu" "${NCU_FLAGS[@]}" --metrics "$NCU_DRAM" --log-file "$tmp/ncu.csv" \
    "$run" --profile "$@" > "$tmp/profile.log" 2>&1
rc=$?
# The table goes to the log file; should an ncu version print it to stdout instead, parse that.
ncu_out=$tmp/ncu.csv
grep -q '"Metric Name"' "$ncu_out" 2>/dev/null || ncu_out=$tmp/profile.log
if [ $rc -ne 0 ]; then
    echo "profile: ncu exited with status $rc:" >&2
    grep -h '^==ERROR==\|^==WARNING==' "$tmp/ncu.csv" "$tmp/profile.log" 2>/dev/null >&2
    tail -n 10 "$tmp/profile.log" >&2
    exit 1
fi

echo
echo "chapter $ch on $gpu, options: ${*:-(article configuration)}"
join_and_print "$tmp/report.csv" "$ncu_out" "$tmp/joined.csv" || exit 1
save "$tmp/joined.csv" "$ch" || exit 1
