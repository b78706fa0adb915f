#!/usr/bin/env bash
# bench.sh OUTDIR: chapter 03's measurements on a GPU. Run from the repository root with the binaries built
# (make ch03; ./ch02/run and ./ch00/run are used when present). About two minutes on an H200. OUTDIR is a
# results folder (results/<GPU>); everything goes to OUTDIR/ch03/:
#   article.csv     the article's configuration (B=10 H=64 N=1024 d=64, Br=Bc=32), checked
#   tiles.csv       the same problem with other tiles (Br, Bc)
#   sweep.csv       N = 512 .. 16384 at B=10, H=65536/N: 655,360 tokens, so 20,480 blocks of
#                   Br=32 at every N (the GPU full); with --causal: causal.csv
#   ch02_sweep.csv  chapter 02 on the same shapes and tiles (--no-check: its tests check it)
#   long.csv        N = 65536 (B=1, H=8), causal and not: O(N d) memory;
#   ch00_n65536.txt what chapter 00 says to the same problem (it needs N x N arrays)
#   ncu.csv         ncu at the article configuration (--profile), every metric of NCU_ALL
#                   (common/scripts/bench-lib.sh): DRAM and l1tex global bytes, shared loads (requests,
#                   wavefronts, bank conflicts), registers and occupancy, kernel time; chapter 02's bench
#                   measures the same (its ncu_article.csv), and prints the same lines
#   ncu_stalls.csv  the same launch: warp stall reasons (cycles per issued instruction)
#   peers.csv       PyTorch's 3-op attention and SDPA backends at the article configuration, plain and causal
#                   (common/scripts/peers.py; skipped when python3 or PyTorch is absent)
#   profile.csv     model | counted | DRAM bytes (common/scripts/book.py profile-join)
#   summary.txt     the summary printed last
#   runs.log        every program's own output
# The report has one row for the kernel, flash_v2 (chapter 02: flash_v1, and a setup row flash_v1_init), and
# no total row.
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
. common/scripts/bench-lib.sh   # find_ncu, csv_rows, profile_join, ncu_value, ncu_summary, the ncu metric lists
[ -x "$run" ] || { echo "bench: $run not found; build it first: make ch03" >&2; exit 3; }
mkdir -p "$out" || exit 1
export REQUIRE_GPU=1
start=$SECONDS
status=0

# append CSV LOG PROGRAM ARGS...: one run with --csv, its rows added to CSV (bench-lib.sh's csv_append).
append() { csv_append "$@" || status=1; }

# rows CSV [KERNEL]: the rows of the attention kernel (flash_v2, or KERNEL) as
# "N|B|H|causal|br|bc|time_ms_median|tflops|rel_err|model_read|counted_read".
rows() {
    csv_rows "$1" N,B,H,causal,br,bc,time_ms_median,tflops,rel_err,model_read_bytes,counted_read_bytes \
        "kernel=${2:-flash_v2}"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "-" }'; }

log=$out/runs.log
: >"$log"
rm -f "$out"/article.csv "$out"/tiles.csv "$out"/sweep.csv "$out"/causal.csv \
      "$out"/ch02_sweep.csv "$out"/long.csv "$out"/peers.csv "$out"/ncu.csv "$out"/ncu_stalls.csv

echo "bench 1/7: the article's configuration ($run)"
append "$out/article.csv" "$log" "$run"

echo "bench 2/7: tiles (Br, Bc) at the article's configuration"
tiles="16,16 32,32 64,32 64,64 128,32 128,64"
for t in $tiles; do
    append "$out/tiles.csv" "$log" "$run" --br "${t%,*}" --bc "${t#*,}" --reps 10
done

echo "bench 3/7: N = 512 .. 16384, B=10, H=65536/N (chapter 03, causal, and chapter 02 when built)"
Ns="512 1024 2048 4096 8192 16384"
for N in $Ns; do
    H=$((65536 / N))
    append "$out/sweep.csv" "$log" "$run" --batch 10 --heads "$H" --seq "$N" --reps 10
    append "$out/causal.csv" "$log" "$run" --batch 10 --heads "$H" --seq "$N" --reps 10 --causal
    if [ -x ./ch02/run ]; then
        append "$out/ch02_sweep.csv" "$log" ./ch02/run --batch 10 --heads "$H" --seq "$N" --br 32 --bc 32 --reps 3 --no-check
    fi
done

echo "bench 4/7: N = 65536, B=1, H=8: O(N d) memory (and chapter 00's answer)"
append "$out/long.csv" "$log" "$run" --batch 1 --heads 8 --seq 65536 --reps 3
append "$out/long.csv" "$log" "$run" --batch 1 --heads 8 --seq 65536 --reps 3 --causal
ch00_said="(./ch00/run not built)"
if [ -x ./ch00/run ]; then
    ./ch00/run --batch 1 --heads 8 --seq 65536 >"$out/ch00_n65536.txt" 2>&1
    ch00_status=$?
    ch00_said="exit $ch00_status: $(grep -m1 -i 'error' "$out/ch00_n65536.txt" || tail -n 1 "$out/ch00_n65536.txt")"
fi

if ncu=$(find_ncu); then
    echo "bench 5/7: ncu at the article's configuration: bytes, shared loads, occupancy"
    "$ncu" "${NCU_FLAGS[@]}" -k regex:flash_v2_kernel --metrics "$NCU_ALL" --log-file "$out/ncu.csv" \
        "$run" --profile >>"$log" 2>&1 || { echo "bench: FAILED: ncu (see $out/ncu.csv and $log)"; status=1; }
    echo "bench 6/7: ncu at the article's configuration: stall reasons"
    "$ncu" "${NCU_FLAGS[@]}" -k regex:flash_v2_kernel --metrics "$NCU_STALLS" --log-file "$out/ncu_stalls.csv" \
        "$run" --profile >>"$log" 2>&1 ||
        { echo "bench: FAILED: ncu stall reasons (see $out/ncu_stalls.csv and $log)"; status=1; }
else
    echo "bench 5-6/7: ncu not found (set NCU=/path/to/ncu): no DRAM bytes, conflicts or stall reasons"
    status=1
fi

# PyTorch's answers to the same problem, timed the book's way; optional (the book needs neither python3 nor
# PyTorch), so their absence is one line, not a failure.
# One process for both shapes (peers.py --shape): PyTorch's import and the CUDA context are paid once; without
# PyTorch, peers.py says so in one line and writes no CSV.
if command -v python3 >/dev/null 2>&1; then
    echo "bench 7/7: PyTorch peers at the article's configuration, plain and causal (common/scripts/peers.py)"
    echo "\$ python3 common/scripts/peers.py --shape 10,64,1024,64,fp32,0 --shape 10,64,1024,64,fp32,1 --csv $out/peers.csv" >>"$log"
    python3 common/scripts/peers.py --shape 10,64,1024,64,fp32,0 --shape 10,64,1024,64,fp32,1 --csv "$out/peers.csv" \
        >>"$log" 2>&1 || { echo "bench: FAILED: peers.py (see $log)"; status=1; }
    [ -s "$out/peers.csv" ] || echo "bench 7/7: PyTorch peers skipped: $(tail -n 1 "$log")"
else
    echo "bench 7/7: PyTorch peers skipped: no python3"
fi

# ---- summary ---------------------------------------------------------------------------------------------
{
    bench_header 03
    IFS="|" read -r _ _ _ _ _ _ a_ms a_tf err mread cread < <(rows "$out/article.csv")
    echo "article configuration (B=10 H=64 N=1024 d=64 fp32, Br=Bc=32): ${a_ms:--} ms, ${a_tf:--} TFLOP/s, rel err ${err:--}"
    l1r=$(ncu_value "$out/ncu.csv" flash_v2_kernel l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum)
    echo "  reads: model ${mread:--} B, counted ${cread:--} B, l1tex global (ncu) ${l1r:--} B"
    echo
    echo "tiles at the article's configuration:"
    printf '  %4s %4s %10s %9s\n' Br Bc ms TFLOP/s
    rows "$out/tiles.csv" | while IFS='|' read -r _ _ _ _ br bc ms tf _; do printf '  %4s %4s %10s %9s\n' "$br" "$bc" "$ms" "$tf"; done
    echo
    echo "N sweep, B=10, H=65536/N, Br=Bc=32 (chapter 02: same shapes and tiles, its flash_v1 row):"
    printf '  %6s %4s %11s %9s %11s %12s %11s %15s\n' N H "ch03 ms" TFLOP/s "ch02 ms" "ch02 / ch03" "causal ms" "causal / full"
    declare -A c2 cc
    while IFS='|' read -r N _ _ _ _ _ ms _; do c2[$N]=$ms; done < <(rows "$out/ch02_sweep.csv" flash_v1)
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
    if [ -s "$out/peers.csv" ]; then
        echo "PyTorch at the article configuration (common/scripts/peers.py: the book's timing; torch $(csv_field "$out/peers.csv" torch)):"
        printf '  %-22s %10s %9s %11s %11s %9s %11s\n' "" ms TFLOP/s "ch03 / it" "causal ms" TFLOP/s "ch03 / it"
        declare -A pc pct
        while IFS='|' read -r p ms tf; do pc[$p]=$ms; pct[$p]=$tf; done < <(csv_rows "$out/peers.csv" peer,time_ms_median,tflops causal=1)
        ms3=${a_ms:-}
        msc=${cc[1024]:-}
        while IFS='|' read -r p ms tf; do
            printf '  %-22s %10s %9s %11s %11s %9s %11s\n' "$p" "$ms" "$tf" "$(ratio "${ms3:-0}" "$ms")" "${pc[$p]:--}" \
                "${pct[$p]:--}" "$(ratio "${msc:-0}" "${pc[$p]:-0}")"
        done < <(csv_rows "$out/peers.csv" peer,time_ms_median,tflops causal=0)
        printf '  %-22s %10s %9s %11s %11s\n' "flash_v2 (this chapter)" "${ms3:--}" "${a_tf:--}" "" "${msc:--}"
        echo
    fi
    # model | counted | DRAM per kernel (profile.csv, what plots/render-all.sh draws), then the ncu block that
    # chapter 02's summary prints too.
    if [ -s "$out/ncu.csv" ] && [ -s "$out/article.csv" ]; then
        profile_join "$out/article.csv" "$out/ncu.csv" >"$out/profile.csv" 2>/dev/null
    fi
    ncu_summary "$out/article.csv" flash_v2 "$out/ncu.csv" "$out/ncu_stalls.csv" flash_v2_kernel
    echo "  (the article: v2 read 412.18 MB from DRAM, V2-reads in ARTICLES.md; shared loads 63.64% conflicts, 6.3-way, V2-conflicts)"
    echo
    echo "bench: $((SECONDS - start)) s; CSVs and ncu output in $out/"
} | tee "$out/summary.txt"
exit $status
