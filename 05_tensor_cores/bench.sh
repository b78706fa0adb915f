#!/usr/bin/env bash
# bench.sh OUTDIR [tests]: chapter 05's measurements on a GPU, with the PyTorch peers in the same run. From the
# repository root after make ch05. OUTDIR is a results folder (results/<GPU>); everything goes to OUTDIR/ch05/.
# With `tests`, the checks on the GPU alone, instead of the measurements (after make tests/bin/test_ch05; Criterion's
# runtime in .gpu/lib where the system has none):
#   tests_gpu.log, tests_gpu.tap   the GPU tests (test_ch05 --filter=gpu/*)
#   sanitizer_summary.txt          compute-sanitizer memcheck, racecheck and synccheck on every step at two small
#                                  ragged shapes, a line a run ending in the tool's summary; sanitizer_*.log its logs
#   tests_gpu.provenance.json      the record of this stage (the timings' provenance.json is left as it was)
# Without it, the measurements:
#   article.csv     the article's problem size (B=10 H=64 N=1024 d=64), fp16 and bf16, full and causal, for each
#                   of the chapter's steps (--kernel wmma, mma_staged, repack, o_registers, swizzle, mma_plain,
#                   unrolled_copy, edge_masks, mma, cp_async, mma_async: rows flash_<step>), each with the tiles it
#                   picks by default
#   steps.csv       the README's table of the steps: every step's fp16 rows of article.csv, full and causal (the
#                   record and log of the earlier run it replaces, steps.provenance.json and steps.log, are removed)
#   tiles.csv       mma_async with Br = 64 (4 warps of 16 rows, as mma) at the article's problem size (with mma and
#                   mma_async's default Br = 128: what the copies and what the larger warp tile each bring), and
#                   Br = 64 and 128 side by side at three sweep shapes, fp16, full and causal (tiles_sweep.csv)
#   sweep.csv       16k tokens (B = 16384/N, H = 16), N = 512 .. 16384, d = 64 and 128, fp16 and bf16, full and
#                   causal, --kernel mma_async
#   peers.csv       PyTorch's SDPA backends (flash = FlashAttention-2, cudnn, efficient) at every one of those
#                   shapes, and 3-op and math up to N = 2048, in ROUNDS rounds (default 3: common/scripts/peers.py
#                   once per round, one process for all the shapes), a row per round; one line and no CSV without
#                   PyTorch. The peers are the noisy side (cuDNN's median moves by 7-25% between rounds where ours
#                   moves under 1%): the summary and the README compare each of our runs with the peer's fastest
#                   round, the side that favours the peer.
#   ncu.csv, ncu_stalls.csv   ncu at the article's size, fp16, full, one launch of each step's kernel
#   ncu_tensor.csv  the same launches: tensor-pipe activity and instructions executed (warp instructions, mma
#                   among them), metrics asked for by pattern so that a GPU without them leaves the file empty
#   plot.csv        the rows of article.csv that make plots draws (fp16, full mask: one per kernel)
#   summary.txt     every run of ours beside FlashAttention-2 and cuDNN (time ratios);  runs.log
#
# Repetitions: 20 at the article's size; in the sweep 10 up to N = 2048 and 5 from N = 4096, where a launch takes
# milliseconds and the median of 10 was within 0.12% (full) and 1.4% (causal) of the minimum on the H200.
# Checks: every run is checked against the float64 reference except the sweep's N = 1024 runs (--no-check): at
# N <= 1024 the check computes every row of four heads in float64 (seconds at d = 128), and the same kernel,
# d, storage type and mask are checked at N = 512 and at 2048 .. 16384 (64 sampled rows of four heads), so every
# configuration is still checked at several N.
# Expected on the H200 (2026-12-06, eleven steps, the peers in one round): 4.2 minutes (253 s: the runs 122 s of it,
# runs.log records the wall time of each; the rest ncu's 33 launches and the peers' round); each more round of peers
# adds well under a minute. The tests stage: not yet timed (chapter 07's, with as many sanitizer runs, took 4.7).
set -u -o pipefail
rounds=${ROUNDS:-3}
case $rounds in *[!0-9]* | '' | 0*) echo "bench: ROUNDS must be a whole number from 1 (got '$rounds')" >&2; exit 2 ;; esac
case ${2:-} in '' | tests) ;; *) echo "bench: unknown stage '$2' (none, for the measurements, or tests)" >&2; exit 2 ;; esac
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "bench: chapter 05 needs a CUDA device (none found here): nothing measured"
    exit 0
fi
out=${1:?usage: bash 05_tensor_cores/bench.sh OUTDIR [tests] (a results folder; writes OUTDIR/ch05/)}/ch05
cd "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/.." || exit 3
run=./ch05/run
. common/scripts/bench-lib.sh
[ -x "$run" ] || { echo "bench: $run not found; build it first: make ch05" >&2; exit 3; }
mkdir -p "$out" || exit 1
export REQUIRE_GPU=1
start=$SECONDS
status=0
kernels="wmma mma_staged repack o_registers swizzle mma_plain unrolled_copy edge_masks mma cp_async mma_async"

if [ "${2:-}" = tests ]; then
    echo "bench tests: the GPU tests, compute-sanitizer on every step (4-5 min)"
    # the record of this stage, tests_gpu.provenance.json (the captions of its files read it): the timings' record,
    # provenance.json, stays that of the run that timed them
    bench_header 05 tests_gpu >/dev/null
    gpu_tests tests/bin/test_ch05 "$out" || status=1
    rm -f "$out"/sanitizer_*.log
    : >"$out/sanitizer_summary.txt"
    for k in $kernels; do
        for s in "--batch 2 --heads 3 --seq 77 --dim 64 --causal" "--batch 1 --heads 2 --seq 33 --dim 128 --dtype bf16"; do
            for tool in memcheck racecheck synccheck; do
                f=$out/sanitizer_${k}_${tool}_$(echo "$s" | tr -d ' -').log
                # shellcheck disable=SC2086  # the shape: words
                line=$(sanitizer_run "$f" $tool "$run" --kernel "$k" $s --reps 1)
                rc=$?
                echo "compute-sanitizer --tool $tool $run --kernel $k $s: rc=$rc $line" >>"$out/sanitizer_summary.txt"
                [ $rc = 0 ] || { echo "bench: FAILED: compute-sanitizer $tool --kernel $k $s (see $f)"; status=1; }
            done
        done
    done
    sed 's/^/  /' "$out/sanitizer_summary.txt"
    echo "bench: $((SECONDS - start)) s"
    exit $status
fi
log=$out/runs.log
: >"$log"
rm -f "$out"/article.csv "$out"/tiles.csv "$out"/sweep.csv "$out"/peers.csv "$out"/ncu.csv "$out"/ncu_stalls.csv \
    "$out"/ncu_tensor.csv
# tensor-pipe cycles active (% of peak), mma instructions and all warp instructions executed
NCU_TENSOR='regex:^(sm__pipe_tensor_op_hmma_cycles_active\.avg\.pct_of_peak_sustained_active|sm__inst_executed_pipe_tensor_op_hmma\.sum|smsp__inst_executed\.sum)$'
# the peers' shapes, one a line (peers.py --shapes): collected while our runs are made, timed in one process
shapes=$(mktemp "${TMPDIR:-/tmp}/peers.XXXXXX") || exit 1
trap 'rm -f "$shapes"' EXIT

echo "bench 1/4: the article's problem size, each kernel"
for t in fp16 bf16; do
    for c in 0 1; do
        for k in $kernels; do
            # shellcheck disable=SC2046  # the causal option: none or one word
            csv_append "$out/article.csv" "$log" "$run" --kernel $k --dtype $t $([ $c = 1 ] && echo --causal) || status=1
        done
        # shellcheck disable=SC2046
        csv_append "$out/tiles.csv" "$log" "$run" --kernel mma_async --br 64 --dtype $t $([ $c = 1 ] && echo --causal) ||
            status=1
        echo "10 64 1024 64 $t $c 10" >>"$shapes"
    done
done

# plot.csv: what make plots draws for this chapter (plots/render-all.sh): the steps' kernels at the article's size,
# fp16, full mask (the header and those rows of article.csv)
# (the program's CSV has no quoted fields)
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; print; next }
    $col["dtype"] == "fp16" && $col["causal"] == "0"' "$out/article.csv" >"$out/plot.csv" || status=1
# steps.csv: the README's table of the steps (05_tensor_cores/readme_blocks.py), the fp16 rows of article.csv
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; print; next }
    $col["dtype"] == "fp16"' "$out/article.csv" >"$out/steps.csv" || status=1
rm -f "$out/steps.provenance.json" "$out/steps.log"

echo "bench 1b: mma_async's two tiles at three sweep shapes"
tile_sweep() { # the same commands by hand: see the README, "Choosing mma_async's tile"
    local s c br
    for s in "--batch 16 --heads 16 --seq 1024 --dim 128" "--batch 1 --heads 16 --seq 16384 --dim 64" \
        "--batch 1 --heads 16 --seq 16384 --dim 128"; do
        for c in "" --causal; do
            for br in 64 128; do
                # shellcheck disable=SC2086
                csv_append "$out/tiles_sweep.csv" "$log" "$run" --kernel mma_async --br $br $s $c --reps 10 || status=1
            done
        done
    done
}
rm -f "$out/tiles_sweep.csv"
tile_sweep

echo "bench 2/4: 16k tokens, H = 16, N = 512 .. 16384 (mma_async)"
for N in 512 1024 2048 4096 8192 16384; do
    B=$((16384 / N))
    reps=10 check='' peers=''
    [ "$N" -ge 4096 ] && reps=5
    [ "$N" = 1024 ] && check=--no-check
    # 3-op and math materialise S (B H N^2 elements): from N = 4096 they take most of the peers' time and are not
    # what the summary compares with
    [ "$N" -ge 4096 ] && peers=sdpa_efficient,sdpa_flash,sdpa_cudnn
    for d in 64 128; do
        for t in fp16 bf16; do
            for c in 0 1; do
                # shellcheck disable=SC2046,SC2086  # the causal option and $check: none or one word
                csv_append "$out/sweep.csv" "$log" "$run" --kernel mma_async --batch $B --heads 16 --seq $N --dim $d \
                    --dtype $t --reps $reps $check $([ $c = 1 ] && echo --causal) || status=1
                echo "$B 16 $N $d $t $c 10 $peers" >>"$shapes"
            done
        done
    done
done

echo "bench 3/4: PyTorch at every shape above, $rounds rounds of one process each (common/scripts/peers.py --shapes)"
if command -v python3 >/dev/null 2>&1; then
    for r in $(seq 1 "$rounds"); do
        { echo "\$ python3 common/scripts/peers.py --shapes FILE --csv $out/peers.csv  (round $r)"
          sed 's/^/  shape: /' "$shapes"; } >>"$log"
        python3 common/scripts/peers.py --shapes "$shapes" --csv "$out/peers.csv" >>"$log" 2>&1 ||
            { echo "bench: FAILED: peers.py (see $log)"; status=1; }
    done
    tail -n 1 "$log" | grep '^peers: PyTorch' # says so when PyTorch or its GPU is absent
else
    echo "bench: no python3: no peers"
fi

if ncu=$(find_ncu); then
    echo "bench 4/4: ncu at the article's size (fp16), each kernel"
    for k in $kernels; do
        # one file per kernel, then concatenated: book.py reads the rows of every kernel function in it
        "$ncu" "${NCU_FLAGS[@]}" -k "regex:flash_${k}_kernel" --metrics "$NCU_ALL" --log-file "$out/ncu_$k.tmp" \
            "$run" --profile --kernel "$k" >>"$log" 2>&1 || { echo "bench: FAILED: ncu $k"; status=1; }
        "$ncu" "${NCU_FLAGS[@]}" -k "regex:flash_${k}_kernel" --metrics "$NCU_STALLS" --log-file "$out/ncu_stalls_$k.tmp" \
            "$run" --profile --kernel "$k" >>"$log" 2>&1 || { echo "bench: FAILED: ncu stalls $k"; status=1; }
        "$ncu" "${NCU_FLAGS[@]}" -k "regex:flash_${k}_kernel" --metrics "$NCU_TENSOR" --log-file "$out/ncu_tensor_$k.tmp" \
            "$run" --profile --kernel "$k" >>"$log" 2>&1 || echo "bench: ncu tensor metrics $k: none (see $log)"
    done
    for k in $kernels; do cat "$out/ncu_tensor_$k.tmp"; done >"$out/ncu_tensor.csv" 2>/dev/null
    for k in $kernels; do cat "$out/ncu_$k.tmp"; done >"$out/ncu.csv" 2>/dev/null
    for k in $kernels; do cat "$out/ncu_stalls_$k.tmp"; done >"$out/ncu_stalls.csv" 2>/dev/null
    rm -f "$out"/ncu_*.tmp
else
    echo "bench 4/4: ncu not found (set NCU=/path/to/ncu): no ncu.csv"
    status=1
fi

{
    bench_header 05
    [ -s "$out/peers.csv" ] || echo "(no PyTorch timings here: no peers; see runs.log)"
    fmt='%5s %4s %6s %4s %5s %-7s %-16s %4s %10s %8s %10s %10s %10s %8s %8s\n'
    # shellcheck disable=SC2059  # the format is the one above
    printf "$fmt" B H N d dtype mask kernel Br "ms" TFLOP/s "flash ms" "cudnn ms" "effic. ms" "vs flash" "vs cudnn"
    declare -A P # each peer's fastest round
    while IFS='|' read -r p b h n d t c ms; do P[$p,$b,$h,$n,$d,$t,$c]=$ms; done < <(peers_fastest "$out/peers.csv")
    for f in "$out/article.csv" "$out/tiles.csv" "$out/tiles_sweep.csv" "$out/sweep.csv"; do
        csv_rows "$f" kernel,B,H,N,d,dtype,causal,br,time_ms_median,tflops | while IFS='|' read -r kn b h n d t c br ms tf; do
            k="$b,$h,$n,$d,$t,$c"
            fl=${P[sdpa_flash,$k]:-}; cu=${P[sdpa_cudnn,$k]:-}; ef=${P[sdpa_efficient,$k]:-}
            # shellcheck disable=SC2059
            printf "$fmt" "$b" "$h" "$n" "$d" "$t" "$([ "$c" = 1 ] && echo causal || echo full)" "$kn" "$br" "$ms" "$tf" \
                "${fl:--}" "${cu:--}" "${ef:--}" \
                "$(awk -v a="$fl" -v b="$ms" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "-" }')" \
                "$(awk -v a="$cu" -v b="$ms" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "-" }')"
        done
    done
    echo "(flash ms, cudnn ms, effic. ms: the peer's fastest of $rounds rounds; vs flash, vs cudnn: the peer's time / ours:"
    echo " above 1, ours is faster; sweep at N = 1024 unchecked: see bench.sh)"
    for k in $kernels; do
        echo
        [ -s "$out/ncu.csv" ] && ncu_summary "$out/article.csv" "flash_$k" "$out/ncu.csv" "$out/ncu_stalls.csv" "flash_${k}_kernel"
        [ -s "$out/ncu_tensor.csv" ] && ncu_values "$out/ncu_tensor.csv" "flash_${k}_kernel" |
            awk -F'|' '{ printf "  %-60s %s %s\n", $1, $3, $2 }'
    done
    echo "bench: $((SECONDS - start)) s"
} | tee "$out/summary.txt"
exit $status
