#!/usr/bin/env bash
# bench.sh OUTDIR: chapter 04's measurements on a GPU, one command for the whole table. Run from the repository
# root with the binaries built (make ch04; ./ch03/run is used when present). OUTDIR is a results folder
# (results/<GPU>); everything goes to OUTDIR/ch04/:
#   layouts.csv         every layout at the article's configuration (B=10 H=64 N=1024 d=64 fp32, Br=Bc=32)
#   layouts_causal.csv  the same, causal
#   ncu_<layout>.csv    ncu at the article's configuration (--profile): DRAM and l1tex bytes, shared loads
#                       (requests, wavefronts, bank conflicts), occupancy, registers, MIO throttle
#   ncu_<layout>_stalls.csv  the same launch: every stall reason
#   banks.txt           the bank model's predictions (./ch04/run --model): compared with ncu in the summary
#   tiles.csv           the default layout over tiles (Br, Bc)
#   sweep.csv, causal.csv, sweep_naive.csv, ch03_sweep.csv   N = 1024 .. 16384 at B=10, H=65536/N
#   peers.csv           PyTorch at the article's configuration, plain and causal (common/scripts/peers.py)
#   summary.txt         the summary printed last;  runs.log  every program's own output
# About four minutes on an H200. Exit status 0 when every step ran, 1 when one failed, 3 ./ch04/run missing.
set -u -o pipefail
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "bench: chapter 04 needs a CUDA device (none found here): nothing measured"
    exit 0
fi
out=${1:?usage: bash 04_bank_conflicts/bench.sh OUTDIR (a results folder; writes OUTDIR/ch04/)}/ch04
cd "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/.." || exit 3
run=./ch04/run
. common/scripts/bench-lib.sh   # find_ncu, csv_rows, csv_field, ncu_value, ncu_summary, the ncu metric lists
[ -x "$run" ] || { echo "bench: $run not found; build it first: make ch04" >&2; exit 3; }
mkdir -p "$out" || exit 1
export REQUIRE_GPU=1
start=$SECONDS
status=0
layouts="naive transposed padded swizzled paired"

# append CSV PROGRAM ARGS...: one run with --csv, its rows added to CSV, its output in runs.log (csv_append).
append() { local csv=$1; shift; csv_append "$csv" "$log" "$@" || status=1; }
# rows CSV KERNEL: "N|H|causal|br|bc|time_ms_median|time_ms_min|tflops|rel_err" of that kernel's rows.
rows() { csv_rows "$1" N,H,causal,br,bc,time_ms_median,time_ms_min,tflops,rel_err "kernel=$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "-" }'; }

log=$out/runs.log
: >"$log"
rm -f "$out"/layouts.csv "$out"/layouts_causal.csv "$out"/tiles.csv "$out"/sweep.csv "$out"/causal.csv \
      "$out"/sweep_naive.csv "$out"/ch03_sweep.csv "$out"/peers.csv "$out"/ncu_*.csv

echo "bench 1/6: every layout at the article's configuration, plain and causal"
for l in $layouts; do
    append "$out/layouts.csv" "$run" --layout "$l"
    append "$out/layouts_causal.csv" "$run" --layout "$l" --causal
done
for l in $layouts; do echo "== $l"; "$run" --model --layout "$l" | sed -n '/^shared-memory loads/,/bank rule/p'; done \
    >"$out/banks.txt" 2>&1

if ncu=$(find_ncu); then
    echo "bench 2/6: ncu per layout at the article's configuration (metrics, then stall reasons)"
    for l in $layouts; do
        "$ncu" "${NCU_FLAGS[@]}" -k regex:flash_v4_kernel --metrics "$NCU_ALL" --log-file "$out/ncu_$l.csv" \
            "$run" --profile --layout "$l" >>"$log" 2>&1 || { echo "bench: FAILED: ncu $l"; status=1; }
        "$ncu" "${NCU_FLAGS[@]}" -k regex:flash_v4_kernel --metrics "$NCU_STALLS" --log-file "$out/ncu_${l}_stalls.csv" \
            "$run" --profile --layout "$l" >>"$log" 2>&1 || { echo "bench: FAILED: ncu stalls $l"; status=1; }
    done
else
    echo "bench 2/6: ncu not found (set NCU=/path/to/ncu): no measured bank conflicts"
    status=1
fi

echo "bench 3/6: tiles (Br, Bc) of the default layout"
for t in 16,16 32,32 64,32 64,64 128,32 128,64; do append "$out/tiles.csv" "$run" --br "${t%,*}" --bc "${t#*,}" --reps 10; done

echo "bench 4/6: N = 1024 .. 16384, B=10, H=65536/N (default layout, causal, naive, chapter 03)"
for N in 1024 2048 4096 8192 16384; do
    H=$((65536 / N))
    append "$out/sweep.csv" "$run" --batch 10 --heads "$H" --seq "$N" --reps 10
    append "$out/causal.csv" "$run" --batch 10 --heads "$H" --seq "$N" --reps 10 --causal
    append "$out/sweep_naive.csv" "$run" --batch 10 --heads "$H" --seq "$N" --reps 5 --layout naive --no-check
    [ -x ./ch03/run ] && append "$out/ch03_sweep.csv" ./ch03/run --batch 10 --heads "$H" --seq "$N" --reps 5 --no-check
done

# One process for both shapes (peers.py --shape): PyTorch's import and the CUDA context are paid once; without
# PyTorch, peers.py says so in one line and writes no CSV.
if command -v python3 >/dev/null 2>&1; then
    echo "bench 5/6: PyTorch peers at the article's configuration, plain and causal (common/scripts/peers.py)"
    echo "\$ python3 common/scripts/peers.py --shape 10,64,1024,64,fp32,0 --shape 10,64,1024,64,fp32,1 --csv $out/peers.csv" >>"$log"
    python3 common/scripts/peers.py --shape 10,64,1024,64,fp32,0 --shape 10,64,1024,64,fp32,1 --csv "$out/peers.csv" \
        >>"$log" 2>&1 || { echo "bench: FAILED: peers.py (see $log)"; status=1; }
    [ -s "$out/peers.csv" ] || echo "bench 5/6: PyTorch peers skipped: $(tail -n 1 "$log")"
else
    echo "bench 5/6: PyTorch peers skipped: no python3"
fi

echo "bench 6/6: summary"
{
    bench_header 04
    echo "layouts at the article's configuration (B=10 H=64 N=1024 d=64 fp32, Br=Bc=32); ncu: one launch each"
    printf '  %-11s %9s %9s %8s %7s %8s %13s %15s %15s %7s %6s %6s %6s %5s %7s\n' layout "ms" "min ms" TFLOP/s speedup \
        "causal" requests "wavefronts" "predicted" "confl." N-way "MIO %" "occ %" regs "smem B"
    naive_ms=$(rows "$out/layouts.csv" flash_v4_naive | cut -d'|' -f6)
    for l in $layouts; do
        IFS='|' read -r _ _ _ _ _ ms mn tf _ < <(rows "$out/layouts.csv" "flash_v4_$l")
        cms=$(rows "$out/layouts_causal.csv" "flash_v4_$l" | cut -d'|' -f6)
        f=$out/ncu_$l.csv
        q=$(ncu_value "$f" flash_v4_kernel smsp__sass_inst_executed_op_shared_ld.sum)
        w=$(ncu_value "$f" flash_v4_kernel l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum)
        x=$(ncu_value "$f" flash_v4_kernel l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum)
        mio=$(ncu_value "$f" flash_v4_kernel smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio)
        lat=$(ncu_value "$f" flash_v4_kernel smsp__average_warp_latency_per_inst_issued.ratio)
        occ=$(ncu_value "$f" flash_v4_kernel sm__warps_active.avg.pct_of_peak_sustained_active)
        regs=$(ncu_value "$f" flash_v4_kernel launch__registers_per_thread)
        pred=$(awk -v l="$l" '$1 == l { print $3 }' "$out/banks.txt" | head -n1)
        smem=$(grep -m1 -A20 "^\$ $run --layout $l\$" "$log" | grep -m1 -o 'shared memory per block: [0-9,]*' | grep -o '[0-9,]*$')
        printf '  %-11s %9s %9s %8s %7s %8s %13s %15s %15s %7s %6s %6s %6s %5s %7s\n' "$l" "${ms:--}" "${mn:--}" "${tf:--}" \
            "$(ratio "${naive_ms:-0}" "${ms:-0}")" "${cms:--}" "${q:--}" "${w:--}" "${pred:--}" \
            "$(awk -v x="${x//,/}" -v w="${w//,/}" 'BEGIN { if (w > 0) printf "%.1f%%", 100 * x / w; else printf "-" }')" \
            "$(awk -v w="${w//,/}" -v q="${q//,/}" 'BEGIN { if (q > 0) printf "%.2f", w / q; else printf "-" }')" \
            "$(awk -v m="$mio" -v t="$lat" 'BEGIN { if (t > 0) printf "%.1f", 100 * m / t; else printf "-" }')" \
            "${occ:--}" "${regs:--}" "${smem:--}"
    done
    echo "  (the article: 63.64% conflicts, 6.3-way; 156.44 ms -> 34 ms with K pre-transposed, 4.6x; V2-conflicts, V2-pretranspose)"
    echo
    echo "tiles of the default layout at the article's configuration:"
    printf '  %4s %4s %10s %9s\n' Br Bc ms TFLOP/s
    rows "$out/tiles.csv" flash_v4_paired | while IFS='|' read -r _ _ _ br bc ms _ tf _; do printf '  %4s %4s %10s %9s\n' "$br" "$bc" "$ms" "$tf"; done
    echo
    echo "N sweep, B=10, H=65536/N, Br=Bc=32:"
    printf '  %6s %4s %10s %9s %11s %10s %10s %11s %10s\n' N H "ms" TFLOP/s "causal ms" "naive ms" "ch03 ms" "ch03 / it" "naive / it"
    declare -A cs nv c3
    while IFS='|' read -r N _ _ _ _ ms _; do cs[$N]=$ms; done < <(rows "$out/causal.csv" flash_v4_paired)
    while IFS='|' read -r N _ _ _ _ ms _; do nv[$N]=$ms; done < <(rows "$out/sweep_naive.csv" flash_v4_naive)
    while IFS='|' read -r N _ _ _ _ ms _; do c3[$N]=$ms; done < <(rows "$out/ch03_sweep.csv" flash_v2)
    while IFS='|' read -r N H _ _ _ ms _ tf _; do
        printf '  %6s %4s %10s %9s %11s %10s %10s %11s %10s\n' "$N" "$H" "$ms" "$tf" "${cs[$N]:--}" "${nv[$N]:--}" \
            "${c3[$N]:--}" "$(ratio "${c3[$N]:-0}" "$ms")" "$(ratio "${nv[$N]:-0}" "$ms")"
    done < <(rows "$out/sweep.csv" flash_v4_paired)
    echo
    if [ -s "$out/peers.csv" ]; then
        echo "PyTorch at the article's configuration (common/scripts/peers.py, same run):"
        csv_rows "$out/peers.csv" peer,causal,time_ms_median,tflops | while IFS='|' read -r p c ms tf; do
            printf '  %-16s %-7s %9s ms %8s TFLOP/s\n' "$p" "$([ "$c" = 1 ] && echo causal || echo full)" "$ms" "$tf"
        done
        echo
    fi
    for l in $layouts; do
        ncu_summary "$out/layouts.csv" "flash_v4_$l" "$out/ncu_$l.csv" "$out/ncu_${l}_stalls.csv" flash_v4_kernel | sed "1s/^/[$l] /"
        echo
    done
    echo "bench: $((SECONDS - start)) s; CSVs and ncu output in $out/"
} | tee "$out/summary.txt"
exit $status
