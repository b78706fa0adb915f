#!/usr/bin/env bash
# bench.sh OUTDIR: chapter 05's measurements on a GPU, with the PyTorch peers in the same run. From the repository
# root after make ch05. OUTDIR is a results folder (results/<GPU>); everything goes to OUTDIR/ch05/:
#   article.csv     the article's problem size (B=10 H=64 N=1024 d=64), fp16 and bf16, plain and causal, Br 64 and 128
#   sweep.csv       16k tokens (B = 16384/N, H = 16), N = 1024, 4096, 16384, d = 64 and 128, fp16 and bf16,
#                   plain and causal (Br = 128)
#   peers.csv       PyTorch's SDPA backends (flash = FlashAttention-2, cudnn, efficient) and 3-op at every one of
#                   those shapes (common/scripts/peers.py; skipped with one line without PyTorch)
#   ncu.csv, ncu_stalls.csv   ncu at the article's size, fp16, Br = 128
#   summary.txt     each of our runs beside FlashAttention-2 and cuDNN (time ratios);  runs.log
# About five minutes on an H200.
set -u -o pipefail
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "bench: chapter 05 needs a CUDA device (none found here): nothing measured"
    exit 0
fi
out=${1:?usage: bash 05_tensor_cores/bench.sh OUTDIR (a results folder; writes OUTDIR/ch05/)}/ch05
cd "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/.." || exit 3
run=./ch05/run
. common/scripts/bench-lib.sh
[ -x "$run" ] || { echo "bench: $run not found; build it first: make ch05" >&2; exit 3; }
mkdir -p "$out" || exit 1
export REQUIRE_GPU=1
start=$SECONDS
status=0
log=$out/runs.log
: >"$log"
rm -f "$out"/article.csv "$out"/sweep.csv "$out"/peers.csv "$out"/ncu.csv "$out"/ncu_stalls.csv
have_torch=0
command -v python3 >/dev/null 2>&1 && python3 -c 'import torch' >/dev/null 2>&1 && have_torch=1
peer() { [ $have_torch = 1 ] && { python3 common/scripts/peers.py "$@" --reps 10 --csv "$out/peers.csv" >>"$log" 2>&1 || status=1; }; }

echo "bench 1/3: the article's problem size"
for t in fp16 bf16; do
    for c in "" --causal; do
        for br in 64 128; do
            # shellcheck disable=SC2086
            csv_append "$out/article.csv" "$log" "$run" --dtype $t --br $br $c || status=1
        done
        # shellcheck disable=SC2086
        peer --dtype $t $c
    done
done
echo "bench 2/3: 16k tokens, H = 16"
for N in 1024 4096 16384; do
    B=$((16384 / N))
    for d in 64 128; do
        for t in fp16 bf16; do
            for c in "" --causal; do
                # shellcheck disable=SC2086
                csv_append "$out/sweep.csv" "$log" "$run" --batch $B --heads 16 --seq $N --dim $d --dtype $t --br 128 --reps 10 $c || status=1
                # shellcheck disable=SC2086
                peer --batch $B --heads 16 --seq $N --dim $d --dtype $t $c
            done
        done
    done
done
if ncu=$(find_ncu); then
    echo "bench 3/3: ncu at the article's size (fp16, Br = 128)"
    "$ncu" "${NCU_FLAGS[@]}" -k regex:flash_tc_kernel --metrics "$NCU_ALL" --log-file "$out/ncu.csv" "$run" --profile --br 128 >>"$log" 2>&1 || status=1
    "$ncu" "${NCU_FLAGS[@]}" -k regex:flash_tc_kernel --metrics "$NCU_STALLS" --log-file "$out/ncu_stalls.csv" "$run" --profile --br 128 >>"$log" 2>&1 || status=1
fi

{
    bench_header 05
    [ $have_torch = 1 ] || echo "(PyTorch not installed here: no peers)"
    printf '%5s %4s %6s %4s %5s %-7s %4s %10s %8s %10s %10s %10s %8s %8s\n' B H N d dtype mask Br "ms" TFLOP/s "flash ms" "cudnn ms" "effic. ms" "vs flash" "vs cudnn"
    declare -A P
    while IFS='|' read -r p b h n d t c ms; do P[$p,$b,$h,$n,$d,$t,$c]=$ms; done < <(csv_rows "$out/peers.csv" peer,B,H,N,d,dtype,causal,time_ms_median)
    for f in "$out/article.csv" "$out/sweep.csv"; do
        csv_rows "$f" B,H,N,d,dtype,causal,br,time_ms_median,tflops kernel=flash_mma_async | while IFS='|' read -r b h n d t c br ms tf; do
            k="$b,$h,$n,$d,$t,$c"
            fl=${P[sdpa_flash,$k]:-}; cu=${P[sdpa_cudnn,$k]:-}; ef=${P[sdpa_efficient,$k]:-}
            printf '%5s %4s %6s %4s %5s %-7s %4s %10s %8s %10s %10s %10s %8s %8s\n' "$b" "$h" "$n" "$d" "$t" \
                "$([ "$c" = 1 ] && echo causal || echo full)" "$br" "$ms" "$tf" "${fl:--}" "${cu:--}" "${ef:--}" \
                "$(awk -v a="$fl" -v b="$ms" 'BEGIN { if (a > 0) printf "%.2f", a / b; else printf "-" }')" \
                "$(awk -v a="$cu" -v b="$ms" 'BEGIN { if (a > 0) printf "%.2f", a / b; else printf "-" }')"
        done
    done
    echo "(vs flash, vs cudnn: the peer's time / ours: above 1, ours is faster)"
    echo
    [ -s "$out/ncu.csv" ] && ncu_summary "$out/article.csv" flash_mma_async "$out/ncu.csv" "$out/ncu_stalls.csv" flash_tc_kernel
    echo "bench: $((SECONDS - start)) s"
} | tee "$out/summary.txt"
exit $status
