#!/usr/bin/env bash
# bench.sh OUTDIR: chapter 00's measurements on a GPU, run from the repository root after `make ch00`.
# OUTDIR is a results folder (results/<GPU>); everything goes to OUTDIR/ch00/.
#
#   1. ./ch00/run --csv OUTDIR/ch00/<name>.csv (log beside it) for
#        article_fp32_own, article_fp32_cublas, article_fp16_own, article_fp16_cublas
#            the article's configuration (V-setup in ARTICLES.md), B=10 H=64 N=1024 d=64
#        seed_fp16_own, seed_fp16_cublas
#            article 2's shape (IO-example in ARTICLES.md), B=1 H=32 N=4096 d=128, fp16 ("seed": the
#            source of the example; the name is kept so that the results' file names stay the same)
#   2. the memory check's message for --seq 65536 at the default B and H: OUTDIR/ch00/oom.log, and the
#      shared-memory row limit's message for --seq 65536 at B = H = 1 in fp16: OUTDIR/ch00/row_limit.log
#   3. model | counted | DRAM bytes per kernel, DRAM measured by Nsight Compute (article fp32, own GEMMs):
#      common/scripts/profile.sh 00 -> OUTDIR/ch00/profile.csv, OUTDIR/ch00/profile.log
#   4. a summary: each configuration's total time, the softmax's bandwidth against the measured copy
#      bandwidth, the own GEMMs' throughput as a share of cuBLAS's, cuBLAS fp32 against PyTorch's 7.12 ms
#      (PEER-3op-fp32 in ARTICLES.md).
# About a minute on an H200 (most of it the float64 checks and the input generation on the CPU).
set -u
# Without a CUDA device there is nothing to measure: say so once and stop (not an error).
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "bench: chapter 00 needs a CUDA device (none found here): nothing measured"
    exit 0
fi
[ $# -eq 1 ] || { echo "usage: bash 00_standard_attention/bench.sh OUTDIR" >&2; exit 2; }
results=$1
out=$results/ch00
mkdir -p "$out" || exit 1
run=./ch00/run
[ -x "$run" ] || { echo "bench: $run not found; build it first: make ch00 (from the repository root)" >&2; exit 3; }
scripts=common/scripts
. $scripts/bench-lib.sh   # csv_rows
bench_header 00 > "$out/measured.txt"   # the GPU, date and CUDA version of this run (make docs' captions)
status=0
start=$SECONDS

configs=(
    "article_fp32_own|"
    "article_fp32_cublas|--gemm cublas"
    "article_fp16_own|--dtype fp16"
    "article_fp16_cublas|--dtype fp16 --gemm cublas"
    "seed_fp16_own|--batch 1 --heads 32 --seq 4096 --dim 128 --dtype fp16"
    "seed_fp16_cublas|--batch 1 --heads 32 --seq 4096 --dim 128 --dtype fp16 --gemm cublas"
)
i=0
for c in "${configs[@]}"; do
    i=$((i + 1))
    name=${c%%|*}
    args=${c#*|}
    echo "[$i/${#configs[@]}] $run $args --csv $out/$name.csv"
    # shellcheck disable=SC2086  # args is a list of options
    if ! REQUIRE_GPU=1 "$run" $args --csv "$out/$name.csv" > "$out/$name.log" 2>&1; then
        echo "  FAILED (see $out/$name.log)"
        status=1
    fi
done

echo "[oom] $run --seq 65536 (B=10 H=64: S and P cannot fit; expect exit 2 and the bytes needed and free)"
REQUIRE_GPU=1 "$run" --seq 65536 > "$out/oom.log" 2>&1
rc=$?
sed 's/^/  /' "$out/oom.log"
if [ $rc -ne 2 ]; then echo "  expected exit status 2, got $rc"; status=1; fi

echo "[row limit] $run --batch 1 --heads 1 --seq 65536 --dtype fp16 (fits in memory; a row of S does not fit on chip)"
REQUIRE_GPU=1 "$run" --batch 1 --heads 1 --seq 65536 --dtype fp16 > "$out/row_limit.log" 2>&1
rc=$?
echo "exit $rc" >> "$out/row_limit.log"
sed 's/^/  /' "$out/row_limit.log"
if [ $rc -ne 2 ]; then echo "  expected exit status 2, got $rc"; status=1; fi

echo "[ncu] RESULTS_DIR=$results bash $scripts/profile.sh 00 (article configuration, fp32, own GEMMs)"
if ! RESULTS_DIR=$results bash "$scripts/profile.sh" 00 > "$out/profile.log" 2>&1; then
    echo "  FAILED (see $out/profile.log)"
    status=1
fi
sed 's/^/  /' "$out/profile.log"

# value CSV KERNEL COLUMN: one field of the row of KERNEL (empty when missing)
value() { csv_rows "$1" "$3" "kernel=$2" | head -n 1; }
# ratio A B: 100 A / B with one decimal, or "-"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "-"; else printf "%.1f", 100 * a / b }'; }

echo
echo "summary (chapter 00, $out):"
printf "  %-22s %10s %10s %10s %10s   %s\n" "configuration" "total ms" "qk ms" "softmax ms" "pv ms" "check"
for c in "${configs[@]}"; do
    name=${c%%|*}
    f=$out/$name.csv
    gemm=own
    case $name in *cublas) gemm=cublas ;; esac
    qk=qk_gemm pv=pv_gemm
    [ $gemm = cublas ] && qk=qk_cublas pv=pv_cublas
    err=$(value "$f" total rel_err)
    printf "  %-22s %10s %10s %10s %10s   rel err %s\n" "$name" "$(value "$f" total time_ms_median)" \
        "$(value "$f" $qk time_ms_median)" "$(value "$f" softmax time_ms_median)" "$(value "$f" $pv time_ms_median)" \
        "${err:--}"
done
for t in fp32 fp16; do
    f=$out/article_${t}_own.csv
    echo "  softmax, article $t: $(value "$f" softmax gbs_model) GB/s on model bytes = $(ratio "$(value "$f" softmax gbs_model)" "$(value "$f" softmax ceiling_gbs)")% of the measured copy bandwidth ($(value "$f" softmax ceiling_gbs) GB/s; target >= 80%)"
done
for cfg in article_fp32 article_fp16 seed_fp16; do
    own=$out/${cfg}_own.csv cub=$out/${cfg}_cublas.csv
    echo "  own GEMMs, $cfg: qk_gemm $(value "$own" qk_gemm tflops) TFLOP/s = $(ratio "$(value "$own" qk_gemm tflops)" "$(value "$cub" qk_cublas tflops)")% of cuBLAS, pv_gemm $(value "$own" pv_gemm tflops) TFLOP/s = $(ratio "$(value "$own" pv_gemm tflops)" "$(value "$cub" pv_cublas tflops)")% of cuBLAS (target >= 50%)"
done
cub=$(value "$out/article_fp32_cublas.csv" total time_ms_median)
echo "  three-kernel attention with cuBLAS, article fp32: $cub ms; PyTorch's three ops on the H200: 7.12 ms (ratio $(ratio "$cub" 7.12)%; target <= 120%)"
echo "bench: $((SECONDS - start)) s"   # what make reproduce's estimate reads (bench.log)
[ $status -eq 0 ] && echo "bench: done" || echo "bench: FAILURES above"
exit $status
