#!/usr/bin/env bash
# bench.sh OUTDIR: chapter 01 on the GPU: the three softmax kernels over row lengths from 1,024 (the article's
# S matrix) to 1,048,576, and the DRAM bytes Nsight Compute measures for short, medium and long rows.
#
#   bash 01_online_softmax/bench.sh OUTDIR      (from the repository root, after make ch01; needs a GPU)
#
# Writes OUTDIR/ch01/n<N>.csv (+ .log) per row length, OUTDIR/ch01/ncu_n<N>.csv (ncu's raw output) and
# OUTDIR/ch01/profile_n<N>.csv (model | counted | DRAM per kernel, common/scripts/book.py profile-join), then prints
# a summary: GB/s on model bytes, % of the measured copy bandwidth, the 3-pass : online time ratio against the
# byte ratio 4 : 3, and DRAM bytes per element. Every size holds about 2-2.7 GB of scores (and as much output),
# so that no run fits in the 60 MB L2; what decides whether the re-reads of the 3-pass and online kernels reach
# DRAM is whether the rows being worked on at once fit in the L2 (see the README). About a minute on an H200.
set -u -o pipefail
# Without a CUDA device there is nothing to measure: say so once and stop (not an error).
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "bench: chapter 01 needs a CUDA device (none found here): nothing measured"
    exit 0
fi
cd "$(dirname "$0")/.."
out=${1:?usage: bash 01_online_softmax/bench.sh OUTDIR (a results folder; writes OUTDIR/ch01/)}/ch01
mkdir -p "$out"
run=./ch01/run
scripts=common/scripts
. $scripts/bench-lib.sh   # find_ncu, csv_rows, profile_join, the ncu flags and metric lists
bench_header 01 > "$out/measured.txt"   # the GPU, date and CUDA version of this run (make docs' captions)
[ -x "$run" ] || { echo "bench: $run not found; build it first: make ch01" >&2; exit 3; }

# N:rows
sweep="1024:655360 4096:131072 16384:32768 65536:8192 262144:2048 1048576:512"
profiled="1024:655360 65536:8192 1048576:512"
status=0
start=$SECONDS

for c in $sweep; do
    N=${c%:*} R=${c#*:}
    echo "bench: $run --seq $N --rows $R --csv $out/n$N.csv"
    if ! REQUIRE_GPU=1 "$run" --seq "$N" --rows "$R" --csv "$out/n$N.csv" >"$out/n$N.log" 2>&1; then
        echo "  FAILED (see $out/n$N.log)"; status=1
    fi
done

if ! ncu=$(find_ncu); then
    echo "bench: ncu not found (set NCU=/path/to/ncu): no DRAM measurement" >&2; status=1
else
    for c in $profiled; do
        N=${c%:*} R=${c#*:}
        echo "bench: ncu ... $run --profile --seq $N --rows $R"
        "$ncu" "${NCU_FLAGS[@]}" -k regex:softmax_ --metrics "$NCU_DRAM" --log-file "$out/ncu_n$N.csv" \
            "$run" --profile --seq "$N" --rows "$R" >"$out/ncu_n$N.log" 2>&1 || { echo "  ncu FAILED"; status=1; }
        [ -f "$out/n$N.csv" ] || continue
        profile_join "$out/n$N.csv" "$out/ncu_n$N.csv" >"$out/profile_n$N.csv" ||
            { echo "  could not join ncu's output"; status=1; }
    done
fi

echo
echo "summary: GB/s on model bytes; % of the measured copy bandwidth; DRAM bytes per element (read + write) from ncu"
files=()
for c in $sweep; do
    for f in "$out/n${c%:*}.csv" "$out/profile_n${c%:*}.csv"; do [ -f "$f" ] && files+=("$f"); done
done
[ ${#files[@]} -gt 0 ] || { echo "bench: no results"; exit 1; }
# one line per row: P|N|kernel|DRAM read|DRAM write (profile_n<N>.csv), or R|N|kernel|rows|ms|GB/s|copy GB/s|model
# read|model write|rel_err|counted read
rows() {
    for f in "${files[@]}"; do
        case ${f##*/} in
            profile_n*) N=${f##*_n}; csv_rows "$f" kernel,dram_read_bytes,dram_write_bytes | sed "s/^/P|${N%.csv}|/" ;;
            *) csv_rows "$f" N,kernel,rows,time_ms_median,gbs_model,ceiling_gbs,model_read_bytes,model_write_bytes,rel_err,counted_read_bytes |
                   sed 's/^/R|/' ;;
        esac
    done
}
awk -F'|' -f /dev/stdin <(rows) <<'AWK'
$1 == "P" { if ($4 != "") dram[$2, $3] = $4 + $5; next }
{
    N = $2; k = $3
    if (!(N in seen)) { seen[N] = 1; order[++nN] = N }
    if (!(k in kseen)) { kseen[k] = 1; kernels[++nk] = k }
    rows[N] = $4; ms[N, k] = $5; gbs[N, k] = $6; copy[N] = $7; model[N, k] = $8 + $9
    ok[N, k] = $10 != "" && $11 == $8
}
END {
    printf "%9s %7s %-18s %9s %9s %7s %11s %11s\n", "N", "rows", "kernel", "ms", "GB/s", "% copy",
        "model B/el", "DRAM B/el"
    for (i = 1; i <= nN; i++) {
        N = order[i]
        for (j = 1; j <= nk; j++) {
            k = kernels[j]
            el = N * rows[N]
            d = (N SUBSEP k) in dram ? sprintf("%.3f", dram[N, k] / el) : "-"
            printf "%9s %7s %-18s %9.3f %9.0f %6.1f%% %11.3f %11s%s\n", N, rows[N], k, ms[N, k], gbs[N, k],
                (copy[N] > 0 ? 100 * gbs[N, k] / copy[N] : 0), model[N, k] / el,
                d, ok[N, k] ? "" : "  (check or count FAILED)"
        }
        r = ms[N, "softmax_3pass"] / ms[N, "softmax_online"]
        printf "%9s %7s 3pass/online time %.3f vs bytes 4/3 = 1.333 (%+.1f%%)\n", "", "", r, 100 * (r / (4 / 3) - 1)
    }
    if (nN) printf "copy bandwidth (measured, read + write): %s GB/s\n", copy[order[1]]
}
AWK
echo "bench: $((SECONDS - start)) s"   # what make reproduce's estimate reads (bench.log)
exit $status
