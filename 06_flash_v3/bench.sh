#!/usr/bin/env bash
# bench.sh OUTDIR [STAGE...]: chapter 06's measurements on an sm_90 GPU, with the PyTorch peers in the same run. From
# the repository root after make ch05 ch06. OUTDIR is a results folder (results/<GPU>); everything goes to
# OUTDIR/ch06/. The stages, all of them without STAGE (in this order); each replaces its own rows of the shared files,
# so that a stage can be run again alone:
#   article   article.csv: the article's problem size (B=10 H=64 N=1024), d = 64 and 128, fp16 and bf16, full and
#             causal, each step (--kernel wgmma, tma, warp_specialized, pingpong, overlap, zigzag, queue,
#             tma_store, dispatch: rows flash_<step>) with its default tiles; the peers at the same shapes
#   tiles     tiles.csv: warp_specialized's tiles (Br x Bc = 128 x 64, 128 x 128, and 192 x 128 at d = 64) at
#             16k tokens (B=1 H=16 N=16384, B=16 N=1024, B=32 N=512), bf16, full and causal: the measurement behind
#             its default tiles (tiles.h)
#   sweep64, sweep128
#             sweep.csv: 16k tokens (B = 16384/N, H = 16), N = 512 .. 16384, fp16 and bf16, full and causal, at that
#             d, each step; ch05_sweep.csv: chapter 05's last step (mma_async) at the same shapes; the peers at the
#             same shapes
#   ncu       ncu.csv, ncu_stalls.csv, ncu_tensor.csv: Nsight Compute, one launch of each step at B=1 H=16 N=16384
#             d=128 bf16, full mask: bytes, occupancy, registers, issue slots, tensor-pipe activity, stall reasons
#   ncu_short ncu_short.csv: Nsight Compute at B=16 H=16 N=1024 d=64 bf16 causal, tma and tma_store (step 9's two
#             kernels where it picks tma): warps per scheduler active and eligible, issue slots, tensor pipe;
#             ncu_short_run.csv, the run its rows describe
#   recheck   recheck.csv, recheck_peers.csv: the sweep's points at N = 512 and 1024 again, step 9 (the default)
#             and cuDNN alone in 5 rounds: where the goal's margin is thinnest, a second look in another call
#   summary   summary.txt: every run of ours beside FlashAttention-2 and cuDNN (time ratios) and chapter 05
# peers.csv: PyTorch's SDPA backends (flash = FlashAttention-2 and cudnn at every shape above, efficient at the
# article's size, where it is a contender; beyond it it is 2-3x slower than flash and would double the time), in ROUNDS
# rounds (default 3: common/scripts/peers.py once per round, one process for all of a stage's shapes), a row per
# round. The peers are the noisy side (cuDNN's median moves by 7-25% between rounds where ours moves under 1%):
# the summary compares each of our runs with the peer's fastest round, the side that favours the peer.
#
# Repetitions: 20 at the article's size; in the sweep 10 up to N = 2048 and 5 from N = 4096. Checks: every run of
# ours against the float64 reference (at N >= 2048, 64 sampled rows of four heads).
# Expected on an H200 (nine steps): article, ncu and ncu_short 5 min together, tiles 1 min, each sweep stage 5-6 min,
# recheck 2 min.
set -u -o pipefail
rounds=${ROUNDS:-3}
case $rounds in *[!0-9]* | '' | 0*) echo "bench: ROUNDS must be a whole number from 1 (got '$rounds')" >&2; exit 2 ;; esac
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "bench: chapter 06 needs a CUDA device (none found here): nothing measured"
    exit 0
fi
out=${1:?usage: bash 06_flash_v3/bench.sh OUTDIR [article|tiles|sweep64|sweep128|ncu|ncu_short|recheck|summary ...]}/ch06
shift
stages=${*:-article tiles sweep64 sweep128 ncu ncu_short recheck summary}
whole=$([ $# = 0 ] && echo 1 || echo 0) # a whole run: no STAGE given
cd "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/.." || exit 3
run=./ch06/run run05=./ch05/run
. common/scripts/bench-lib.sh
[ -x "$run" ] || { echo "bench: $run not found; build it first: make ch06" >&2; exit 3; }
mkdir -p "$out" || exit 1
export REQUIRE_GPU=1
start=$SECONDS
status=0
log=$out/runs.log
steps="wgmma tma warp_specialized pingpong overlap zigzag queue tma_store dispatch"
kernel_steps=${steps% dispatch} # the steps with a kernel of their own (dispatch runs tma's or tma_store's)
peer_list=sdpa_flash,sdpa_cudnn
# tensor-pipe cycles active (% of peak), mma instructions and all warp instructions executed, issue slots used
# warps per scheduler: active, eligible, issued (ncu_short: where the persistent kernel's few warps wait)
NCU_SHORT=smsp__warps_active.avg.per_cycle_active,smsp__warps_eligible.avg.per_cycle_active
NCU_SHORT+=,smsp__issue_active.avg.pct_of_peak_sustained_active
NCU_SHORT+=,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
NCU_TENSOR='regex:^(sm__pipe_tensor_op_hmma_cycles_active\.avg\.pct_of_peak_sustained_active|sm__inst_executed_pipe_tensor_op_hmma\.sum|smsp__inst_executed\.sum|smsp__issue_active\.avg\.pct_of_peak_sustained_active|sm__throughput\.avg\.pct_of_peak_sustained_elapsed)$'
# The records (common/scripts/provenance.py; a row's timing stands on the record of the run that wrote its file): a
# whole run records the chapter's provenance.json before anything is measured; a stage run on its own records, once
# it is done, NAME.provenance.json naming the files it wrote (the sweep's once both sweeps have run in one call: each
# rewrites only its d's rows of the files they share); the summary records nothing (it reads the others' files).
[ $whole = 0 ] || bench_header 06 >/dev/null
swept=
shapes=$(mktemp "${TMPDIR:-/tmp}/peers.XXXXXX") || exit 1
trap 'rm -f "$shapes"' EXIT

# time_peers [CSV [ROUNDS]]: the peers at the shapes collected in $shapes, ROUNDS times (default $rounds), appended
# to CSV (default peers.csv)
time_peers() {
    local r csv=${1:-$out/peers.csv} n=${2:-$rounds}
    command -v python3 >/dev/null 2>&1 || { echo "bench: no python3: no peers"; return 0; }
    for r in $(seq 1 "$n"); do
        { echo "\$ python3 common/scripts/peers.py --shapes FILE --peers $peer_list --csv $csv  (round $r)"
          sed 's/^/  shape: /' "$shapes"; } >>"$log"
        python3 common/scripts/peers.py --shapes "$shapes" --peers "$peer_list" --csv "$csv" >>"$log" 2>&1 ||
            { echo "bench: FAILED: peers.py (see $log)"; status=1; }
    done
    tail -n 1 "$log" | grep '^peers: PyTorch' # says so when PyTorch or its GPU is absent
    : >"$shapes"
}

causal_flag() { [ "$1" = 1 ] && echo --causal; }

for stage in $stages; do
    case $stage in
    article)
        echo "bench article: the article's problem size, each step"
        rm -f "$out/article.csv"
        drop_rows "$out/peers.csv" H=64
        for d in 64 128; do
            for t in fp16 bf16; do
                for c in 0 1; do
                    for k in $steps; do
                        # shellcheck disable=SC2046  # the causal option: none or one word
                        csv_append "$out/article.csv" "$log" "$run" --kernel $k --dim $d --dtype $t $(causal_flag $c) ||
                            status=1
                    done
                    echo "10 64 1024 $d $t $c 20 sdpa_efficient,sdpa_flash,sdpa_cudnn" >>"$shapes"
                done
            done
        done
        time_peers
        ;;
    tiles)
        echo "bench tiles: warp_specialized's tiles"
        rm -f "$out/tiles.csv"
        for s in "--batch 1 --heads 16 --seq 16384" "--batch 16 --heads 16 --seq 1024" "--batch 32 --heads 16 --seq 512"; do
            for d in 64 128; do
                for c in 0 1; do
                    for tile in "128 64" "128 128" "192 128"; do
                        set -- $tile
                        [ "$1" = 192 ] && [ $d = 128 ] && continue # not compiled (tiles.h)
                        # shellcheck disable=SC2046,SC2086
                        csv_append "$out/tiles.csv" "$log" "$run" --kernel warp_specialized --br $1 --bc $2 $s --dim $d \
                            --dtype bf16 --reps 10 $(causal_flag $c) || status=1
                    done
                done
            done
        done
        ;;
    sweep64 | sweep128)
        d=${stage#sweep}
        echo "bench $stage: 16k tokens, H = 16, N = 512 .. 16384, d = $d: each step, chapter 05's mma_async, the peers"
        drop_rows "$out/sweep.csv" d="$d"
        drop_rows "$out/ch05_sweep.csv" d="$d"
        drop_rows "$out/peers.csv" H=16 d="$d"
        for N in 512 1024 2048 4096 8192 16384; do
            B=$((16384 / N)) reps=10
            [ "$N" -ge 4096 ] && reps=5
            for t in fp16 bf16; do
                for c in 0 1; do
                    for k in $steps; do
                        # shellcheck disable=SC2046
                        csv_append "$out/sweep.csv" "$log" "$run" --kernel $k --batch $B --heads 16 --seq $N --dim $d \
                            --dtype $t --reps $reps $(causal_flag $c) || status=1
                    done
                    if [ -x "$run05" ]; then
                        # shellcheck disable=SC2046
                        csv_append "$out/ch05_sweep.csv" "$log" "$run05" --kernel mma_async --batch $B --heads 16 --seq $N \
                            --dim $d --dtype $t --reps $reps $(causal_flag $c) || status=1
                    fi
                    echo "$B 16 $N $d $t $c $reps" >>"$shapes"
                done
            done
        done
        [ -x "$run05" ] || echo "bench: $run05 not found (make ch05): no chapter 05 columns"
        time_peers
        ;;
    ncu)
        if ncu=$(find_ncu); then
            echo "bench ncu: B=1 H=16 N=16384 d=128 bf16, one launch of each step"
            shape=(--batch 1 --heads 16 --seq 16384 --dim 128 --dtype bf16)
            for k in $kernel_steps; do
                # one file per kernel, then concatenated: book.py reads the rows of every kernel function in it
                "$ncu" "${NCU_FLAGS[@]}" -k "regex:flash_${k}_kernel" --metrics "$NCU_ALL" --log-file "$out/ncu_$k.tmp" \
                    "$run" --profile --kernel "$k" "${shape[@]}" >>"$log" 2>&1 || { echo "bench: FAILED: ncu $k"; status=1; }
                "$ncu" "${NCU_FLAGS[@]}" -k "regex:flash_${k}_kernel" --metrics "$NCU_STALLS" \
                    --log-file "$out/ncu_stalls_$k.tmp" "$run" --profile --kernel "$k" "${shape[@]}" >>"$log" 2>&1 ||
                    { echo "bench: FAILED: ncu stalls $k"; status=1; }
                "$ncu" "${NCU_FLAGS[@]}" -k "regex:flash_${k}_kernel" --metrics "$NCU_TENSOR" \
                    --log-file "$out/ncu_tensor_$k.tmp" "$run" --profile --kernel "$k" "${shape[@]}" >>"$log" 2>&1 ||
                    echo "bench: ncu tensor metrics $k: none (see $log)"
            done
            for k in $kernel_steps; do cat "$out/ncu_tensor_$k.tmp"; done >"$out/ncu_tensor.csv" 2>/dev/null
            for k in $kernel_steps; do cat "$out/ncu_$k.tmp"; done >"$out/ncu.csv" 2>/dev/null
            for k in $kernel_steps; do cat "$out/ncu_stalls_$k.tmp"; done >"$out/ncu_stalls.csv" 2>/dev/null
            rm -f "$out"/ncu_*.tmp
            # the run the ncu rows describe (ncu-summary's timing and model columns)
            rm -f "$out/ncu_run.csv"
            for k in $kernel_steps; do
                csv_append "$out/ncu_run.csv" "$log" "$run" --kernel $k "${shape[@]}" --reps 5 || status=1
            done
        else
            echo "bench ncu: ncu not found (set NCU=/path/to/ncu): no ncu.csv"
            status=1
        fi
        ;;
    ncu_short)
        if ncu=$(find_ncu); then
            echo "bench ncu_short: B=16 H=16 N=1024 d=64 bf16 causal, tma and tma_store (dispatch's two kernels)"
            shape=(--batch 16 --heads 16 --seq 1024 --dim 64 --dtype bf16 --causal)
            rm -f "$out/ncu_short_run.csv"
            for k in tma tma_store; do
                "$ncu" "${NCU_FLAGS[@]}" -k "regex:flash_${k}_kernel" --metrics "$NCU_ALL,$NCU_SHORT" \
                    --log-file "$out/ncu_short_$k.tmp" "$run" --profile --kernel "$k" "${shape[@]}" >>"$log" 2>&1 ||
                    { echo "bench: FAILED: ncu short $k"; status=1; }
                csv_append "$out/ncu_short_run.csv" "$log" "$run" --kernel $k "${shape[@]}" --reps 10 || status=1
            done
            for k in tma tma_store; do cat "$out/ncu_short_$k.tmp"; done >"$out/ncu_short.csv" 2>/dev/null
            rm -f "$out"/ncu_short_*.tmp
        else
            echo "bench ncu_short: ncu not found (set NCU=/path/to/ncu): no ncu_short.csv"
            status=1
        fi
        ;;
    recheck)
        echo "bench recheck: the sweep's shortest points again, step 9 and cuDNN (5 rounds)"
        rm -f "$out/recheck.csv" "$out/recheck_peers.csv"
        for N in 512 1024; do
            for d in 64 128; do
                for t in fp16 bf16; do
                    for c in 0 1; do
                        # shellcheck disable=SC2046
                        csv_append "$out/recheck.csv" "$log" "$run" --kernel dispatch --batch $((16384 / N)) --heads 16 \
                            --seq $N --dim $d --dtype $t --reps 20 $(causal_flag $c) || status=1
                        echo "$((16384 / N)) 16 $N $d $t $c 20 sdpa_cudnn" >>"$shapes"
                    done
                done
            done
        done
        time_peers "$out/recheck_peers.csv" 5
        ;;
    summary)
        {
            bench_header 06 - # the line alone: the record is that of the stages that measured
            [ -s "$out/peers.csv" ] || echo "(no PyTorch timings here: no peers; see runs.log)"
            fmt='%5s %4s %6s %4s %5s %-7s %-24s %3s %3s %9s %8s %9s %9s %9s %8s %8s %8s\n'
            # shellcheck disable=SC2059  # the format is the one above
            printf "$fmt" B H N d dtype mask kernel Br Bc "ms" TFLOP/s "flash ms" "cudnn ms" "ch05 ms" "vs flash" \
                "vs cudnn" "vs ch05"
            # each peer's fastest round (the smallest median), and chapter 05's mma_async
            declare -A P
            while IFS='|' read -r p b h n d t c ms; do P[$p,$b,$h,$n,$d,$t,$c]=$ms; done < <(peers_fastest "$out/peers.csv")
            while IFS='|' read -r b h n d t c ms; do P[ch05,$b,$h,$n,$d,$t,$c]=$ms; done \
                < <(csv_rows "$out/ch05_sweep.csv" B,H,N,d,dtype,causal,time_ms_median)
            ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "-" }'; }
            for f in "$out/article.csv" "$out/tiles.csv" "$out/sweep.csv"; do
                csv_rows "$f" kernel,B,H,N,d,dtype,causal,br,bc,time_ms_median,tflops |
                    while IFS='|' read -r kn b h n d t c br bc ms tf; do
                        k="$b,$h,$n,$d,$t,$c"
                        fl=${P[sdpa_flash,$k]:-} cu=${P[sdpa_cudnn,$k]:-} c5=${P[ch05,$k]:-}
                        # shellcheck disable=SC2059
                        printf "$fmt" "$b" "$h" "$n" "$d" "$t" "$([ "$c" = 1 ] && echo causal || echo full)" "$kn" "$br" \
                            "$bc" "$ms" "$tf" "${fl:--}" "${cu:--}" "${c5:--}" "$(ratio "$fl" "$ms")" "$(ratio "$cu" "$ms")" \
                            "$(ratio "$c5" "$ms")"
                    done
            done
            echo "(vs flash, vs cudnn, vs ch05: their time / ours, above 1 ours is faster; flash and cudnn: the fastest of"
            echo " $(peer_rounds "$out/peers.csv") rounds, ch05: chapter 05's mma_async in the same run)"
            for k in $kernel_steps; do
                echo
                [ -s "$out/ncu.csv" ] &&
                    ncu_summary "$out/ncu_run.csv" "flash_$k" "$out/ncu.csv" "$out/ncu_stalls.csv" "flash_${k}_kernel"
                [ -s "$out/ncu_tensor.csv" ] && ncu_values "$out/ncu_tensor.csv" "flash_${k}_kernel" |
                    awk -F'|' '{ printf "  %-60s %s %s\n", $1, $3, $2 }'
            done
            echo "bench: $((SECONDS - start)) s ($stages)"
        } | tee "$out/summary.txt"
        ;;
    *)
        echo "bench: unknown stage $stage (article, tiles, sweep64, sweep128, ncu, ncu_short, recheck, summary)" >&2
        exit 2
        ;;
    esac
    # the record of a stage run on its own, now that it is done, and of the files it wrote (above)
    [ $whole = 1 ] || case $stage in
    article) bench_header 06 article article.csv peers.csv >/dev/null ;;
    tiles) bench_header 06 tiles tiles.csv >/dev/null ;;
    ncu) bench_header 06 ncu ncu.csv ncu_stalls.csv ncu_tensor.csv ncu_run.csv >/dev/null ;;
    ncu_short) bench_header 06 ncu_short ncu_short.csv ncu_short_run.csv >/dev/null ;;
    recheck) bench_header 06 recheck recheck.csv recheck_peers.csv >/dev/null ;;
    sweep64 | sweep128)
        swept+=" $stage"
        [[ $swept == *sweep64* && $swept == *sweep128* ]] &&
            bench_header 06 sweep sweep.csv ch05_sweep.csv peers.csv >/dev/null
        ;;
    esac
done
exit $status
