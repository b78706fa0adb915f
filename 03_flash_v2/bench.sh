#!/usr/bin/env bash
# bench.sh OUTDIR: chapter 03's measurements on a GPU. Run from the repository root with the binaries built
# (make ch03; ./ch02/run and ./ch00/run are used when present). About 100 s on an H200. OUTDIR is a results
# folder (results/<GPU>); everything goes to OUTDIR/ch03/:
#   article.csv     the article's configuration (B=10 H=64 N=1024 d=64, Br=Bc=32), checked
#   tiles.csv       the same problem with other tiles (Br, Bc)
#   sweep.csv       N = 512 .. 16384 at B=10, H=65536/N: 655,360 tokens, so 20,480 blocks of
#                   Br=32 at every N (the GPU full); with --causal: causal.csv
#   ch02_sweep.csv  chapter 02 on the same shapes (--no-check: its tests check it)
#   long.csv        N = 65536 (B=1, H=8), causal and not: O(N d) memory;
#   ch00_n65536.txt what chapter 00 says to the same problem (it needs N x N arrays)
#   ncu.csv         ncu at the article configuration (--profile): DRAM bytes, shared loads
#                   (requests, wavefronts, bank conflicts), achieved occupancy, kernel time
#   ncu_stalls.csv  the same launch: warp stall reasons (cycles per issued instruction)
#   profile.csv     model | counted | DRAM bytes (common/scripts/profile_join.awk)
#   summary.txt     the summary printed last
#   runs.log        every program's own output
# Exit status 0 when every step ran; 1 when one failed (the summary shows '-' for it); 3 ./ch03/run missing.
set -u -o pipefail
# Without a CUDA device there is nothing to measure: say so once and stop (not an error).
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "bench: chapter 03 needs a CUDA device (none found here): nothing measured"
    exit 0
fi

out=${1:?usage: bash 03_flash_v2/bench.sh OUTDIR (a results folder; writes OUTDIR/ch03/)}/ch03
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root" || exit 3
run=./ch03/run
[ -x "$run" ] || { echo "bench: $run not found; build it first: make ch03" >&2; exit 3; }
mkdir -p "$out" || exit 1
export REQUIRE_GPU=1
start=$SECONDS
status=0

# append CSV LOG PROGRAM ARGS...: one run with --csv, its rows added to CSV (the header once); output in LOG.
append() {
    local csv=$1 log=$2 tmp
    shift 2
    tmp=$(mktemp "${TMPDIR:-/tmp}/ch03_bench.XXXXXX") || return 1
    echo "\$ $*" >>"$log"
    if "$@" --csv "$tmp" >>"$log" 2>&1; then
        if [ -s "$csv" ]; then tail -n +2 "$tmp" >>"$csv"; else cat "$tmp" >"$csv"; fi
    else
        echo "bench: FAILED (exit $?): $* (see $log)"
        status=1
    fi
    rm -f "$tmp"
}

# rows CSV: its total rows as "N|B|H|causal|br|bc|time_ms_median|tflops|rel_err|model_read|counted_read"
# (the report's CSV has no quoted fields: plain awk, columns found by name).
rows() {
    [ -s "$1" ] || return 0
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $c["kernel"] == "total" {
          print $c["N"] "|" $c["B"] "|" $c["H"] "|" $c["causal"] "|" $c["br"] "|" $c["bc"] "|" $c["time_ms_median"] "|" \
                $c["tflops"] "|" $c["rel_err"] "|" $c["model_read_bytes"] "|" $c["counted_read_bytes"] }' "$1"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "-" }'; }

log=$out/runs.log
: >"$log"
rm -f "$out"/article.csv "$out"/tiles.csv "$out"/sweep.csv "$out"/causal.csv \
      "$out"/ch02_sweep.csv "$out"/long.csv

echo "bench 1/6: the article's configuration ($run)"
append "$out/article.csv" "$log" "$run"

echo "bench 2/6: tiles (Br, Bc) at the article's configuration"
tiles="16,16 32,32 64,32 64,64 128,32 128,64"
for t in $tiles; do
    append "$out/tiles.csv" "$log" "$run" --br "${t%,*}" --bc "${t#*,}" --reps 10
done

echo "bench 3/6: N = 512 .. 16384, B=10, H=65536/N (chapter 03, causal, and chapter 02 when built)"
Ns="512 1024 2048 4096 8192 16384"
for N in $Ns; do
    H=$((65536 / N))
    append "$out/sweep.csv" "$log" "$run" --batch 10 --heads "$H" --seq "$N" --reps 10
    append "$out/causal.csv" "$log" "$run" --batch 10 --heads "$H" --seq "$N" --reps 10 --causal
    if [ -x ./ch02/run ]; then
        append "$out/ch02_sweep.csv" "$log" ./ch02/run --batch 10 --heads "$H" --seq "$N" --reps 3 --no-check
    fi
done

echo "bench 4/6: N = 65536, B=1, H=8: O(N d) memory (and chapter 00's answer)"
append "$out/long.csv" "$log" "$run" --batch 1 --heads 8 --seq 65536 --reps 3
append "$out/long.csv" "$log" "$run" --batch 1 --heads 8 --seq 65536 --reps 3 --causal
ch00_said="(./ch00/run not built)"
if [ -x ./ch00/run ]; then
    ./ch00/run --batch 1 --heads 8 --seq 65536 >"$out/ch00_n65536.txt" 2>&1
    ch00_status=$?
    ch00_said="exit $ch00_status: $(grep -m1 -i 'error' "$out/ch00_n65536.txt" || tail -n 1 "$out/ch00_n65536.txt")"
fi

ncu=$(command -v "${NCU:-ncu}" || true)
[ -z "$ncu" ] && [ -x /usr/local/cuda/bin/ncu ] && ncu=/usr/local/cuda/bin/ncu
ncu_common=(--clock-control none --kernel-name-base function --print-units base -k regex:flash_v2_kernel --csv)
metrics=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
metrics+=,smsp__sass_inst_executed_op_shared_ld.sum,smsp__inst_executed_op_ldsm.sum
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio
metrics+=,smsp__average_warp_latency_per_inst_issued.ratio
stalls='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
if [ -n "$ncu" ]; then
    echo "bench 5/6: ncu at the article's configuration: bytes, shared loads, occupancy"
    "$ncu" "${ncu_common[@]}" --metrics "$metrics" --log-file "$out/ncu.csv" "$run" --profile >>"$log" 2>&1 ||
        { echo "bench: FAILED: ncu (see $out/ncu.csv and $log)"; status=1; }
    echo "bench 6/6: ncu at the article's configuration: stall reasons"
    "$ncu" "${ncu_common[@]}" --metrics "$stalls" --log-file "$out/ncu_stalls.csv" "$run" --profile >>"$log" 2>&1 ||
        { echo "bench: FAILED: ncu stall reasons (see $out/ncu_stalls.csv and $log)"; status=1; }
else
    echo "bench 5-6/6: ncu not found (set NCU=/path/to/ncu): no DRAM bytes, conflicts or stall reasons"
    status=1
fi

# ---- summary ---------------------------------------------------------------------------------------------
metric() { # metric FILE NAME: the value ncu reported for flash_v2_kernel, or empty
    [ -s "$1" ] || return 0
    awk -f common/scripts/csv.awk -f "$here/ncu_metrics.awk" -v kernel=flash_v2_kernel "$1" 2>/dev/null | awk -F'|' -v m="$2" '$1 == m { print $3 }'
}
{
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1)
    echo "== chapter 03 bench on ${gpu:-?}, $(date -u +%Y-%m-%d), CUDA $(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
    IFS='|' read -r _ _ _ _ _ _ ms tf err mread cread < <(rows "$out/article.csv")
    echo "article configuration (B=10 H=64 N=1024 d=64 fp32, Br=Bc=32): ${ms:--} ms, ${tf:--} TFLOP/s, rel err ${err:--}"
    echo "  reads: model ${mread:--} B, counted ${cread:--} B"
    echo
    echo "tiles at the article's configuration:"
    printf '  %4s %4s %10s %9s\n' Br Bc ms TFLOP/s
    rows "$out/tiles.csv" | while IFS='|' read -r _ _ _ _ br bc ms tf _; do printf '  %4s %4s %10s %9s\n' "$br" "$bc" "$ms" "$tf"; done
    echo
    echo "N sweep, B=10, H=65536/N, Br=Bc=32 (chapter 02: same shapes, its default tiles, its total row):"
    printf '  %6s %4s %11s %9s %11s %12s %11s %15s\n' N H "ch03 ms" TFLOP/s "ch02 ms" "ch02 / ch03" "causal ms" "causal / full"
    declare -A c2 cc
    while IFS='|' read -r N _ _ _ _ _ ms _; do c2[$N]=$ms; done < <(rows "$out/ch02_sweep.csv")
    while IFS='|' read -r N _ _ _ _ _ ms _; do cc[$N]=$ms; done < <(rows "$out/causal.csv")
    while IFS='|' read -r N _ H _ _ _ ms tf _; do
        printf '  %6s %4s %11s %9s %11s %12s %11s %15s\n' "$N" "$H" "$ms" "$tf" "${c2[$N]:--}" \
            "$(ratio "${c2[$N]:-0}" "$ms")" "${cc[$N]:--}" "$(ratio "${cc[$N]:-0}" "$ms")"
    done < <(rows "$out/sweep.csv")
    echo
    echo "N = 65536, B=1 H=8 d=64 (device memory: Q, K, V, O, L = $(awk 'BEGIN { printf "%.2f", 4 * (4 * 8 * 65536 * 64 + 8 * 65536) / 1e9 }') GB):"
    rows "$out/long.csv" | while IFS='|' read -r _ _ _ causal _ _ ms tf err _; do
        echo "  chapter 03$([ "$causal" = 1 ] && echo ' causal'): $ms ms, $tf TFLOP/s, rel err $err"
    done
    echo "  chapter 00 (S and P are N x N): $ch00_said"
    echo
    f=$out/ncu.csv
    req=$(metric "$f" smsp__sass_inst_executed_op_shared_ld.sum)
    ldsm=$(metric "$f" smsp__inst_executed_op_ldsm.sum)
    wav=$(metric "$f" l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum)
    con=$(metric "$f" l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum)
    echo "ncu, article configuration, one launch (--profile; ncu flushes the caches first):"
    awk -v t="$(metric "$f" gpu__time_duration.sum)" 'BEGIN { if (t > 0) printf "  kernel time %.3f ms (one launch under ncu, caches flushed)\n", t / 1e6 }'
    if [ -s "$f" ] && [ -s "$out/article.csv" ] &&
        awk -f common/scripts/csv.awk -f common/scripts/ncu_dram.awk "$f" 2>/dev/null |
        awk -f common/scripts/csv.awk -f common/scripts/profile_join.awk "$out/article.csv" - >"$out/profile.csv"; then
        awk -f common/scripts/csv.awk -f common/scripts/profile_table.awk "$out/profile.csv" | sed 's/^/  /'
    fi
    echo "  (the article's v2 read 412.18 MB from DRAM, ARTICLE.md A7)"
    echo "  shared loads: requests ${req:--} (+ ldsm ${ldsm:--}), wavefronts ${wav:--}, bank conflicts ${con:--}"
    awk -v r="${req:-0}" -v l="${ldsm:-0}" -v w="${wav:-0}" -v c="${con:-0}" 'BEGIN {
        if (w > 0 && r + l > 0) printf "  conflict rate %.2f%% (conflicts / wavefronts), %.2f-way (wavefronts / requests); article: 63.64%%, 6.3-way\n", 100 * c / w, w / (r + l) }'
    echo "  achieved occupancy $(metric "$f" sm__warps_active.avg.pct_of_peak_sustained_active) % of peak warps"
    mio=$(metric "$f" smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio)
    lat=$(metric "$f" smsp__average_warp_latency_per_inst_issued.ratio)
    awk -v m="${mio:-0}" -v l="${lat:-0}" 'BEGIN { if (l > 0) printf "  MIO throttle: %.2f of %.2f cycles per issued instruction (%.1f%%)\n", m, l, 100 * m / l }'
    echo "  stall reasons, cycles per issued instruction (largest first):"
    if [ -s "$out/ncu_stalls.csv" ]; then
        awk -f common/scripts/csv.awk -f "$here/ncu_metrics.awk" -v kernel=flash_v2_kernel "$out/ncu_stalls.csv" 2>/dev/null |
            awk -F'|' '$1 ~ /^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$/ && $3 > 0.005 {
                         n = $1; sub(/^smsp__average_warps_issue_stalled_/, "", n); sub(/_per_issue_active\.ratio$/, "", n)
                         printf "%s %s\n", $3, n }' | sort -rn | head -n 8 | awk '{ printf "    %-22s %6.2f\n", $2, $1 }'
    fi
    echo
    echo "bench: $((SECONDS - start)) s; CSVs and ncu output in $out/"
} | tee "$out/summary.txt"
exit $status
