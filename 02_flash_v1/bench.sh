#!/usr/bin/env bash
# bench.sh OUTDIR: chapter 02 on the GPU: the article's configuration (checked), N = 512 .. 8192, every tile
# (Br, Bc) at the article's configuration, the DRAM bytes Nsight Compute measures at each N, occupancy and
# shared-memory metrics at the article's configuration, and chapter 00 on the same shapes when it is built.
#
#   bash 02_flash_v1/bench.sh OUTDIR      (from the repository root, after make ch02; needs a GPU and ncu)
#
# Every run keeps B = 10, H = 64 (the article's 640 heads): flash_v1 has one block per head, so B*H is all the
# parallelism it has, and 640 blocks fill an H200 (132 SMs, 5 blocks each) in one wave. Only N changes.
# OUTDIR is a results folder (results/<GPU>); everything goes to OUTDIR/ch02/: <name>.csv (+ .log) per run,
# ncu_<name>.csv (ncu's raw output), profile_<name>.csv (model | counted | DRAM per kernel,
# common/scripts/profile_join.awk), ncu_occupancy.csv, and ch00_n<N>.csv (chapter 00 at the same shapes) when
# ./ch00/run exists; then prints a summary.
# About a minute on an H200.
set -u -o pipefail
# Without a CUDA device there is nothing to measure: say so once and stop (not an error).
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "bench: chapter 02 needs a CUDA device (none found here): nothing measured"
    exit 0
fi
cd "$(dirname "$0")/.."
out=${1:?usage: bash 02_flash_v1/bench.sh OUTDIR (a results folder; writes OUTDIR/ch02/)}/ch02
mkdir -p "$out"
run=./ch02/run
scripts=common/scripts
[ -x "$run" ] || { echo "bench: $run not found; build it first: make ch02" >&2; exit 3; }
status=0

# bench NAME ARGS...: one run of the chapter's program, CSV to OUTDIR/ch02/NAME.csv.
bench() {
    local name=$1
    shift
    echo "bench: $run $* --csv $out/$name.csv"
    if ! REQUIRE_GPU=1 "$run" "$@" --csv "$out/$name.csv" >"$out/$name.log" 2>&1; then
        echo "  FAILED (see $out/$name.log)"
        status=1
    fi
}

sweep="512 1024 2048 4096 8192"
reps_for() { case $1 in 4096) echo 8 ;; 8192) echo 4 ;; *) echo 20 ;; esac; }

bench article
for N in $sweep; do bench "n$N" --seq "$N" --no-check --reps "$(reps_for "$N")"; done
for Br in 16 32 64; do
    for Bc in 16 32 64; do bench "tile_${Br}x${Bc}" --br "$Br" --bc "$Bc" --no-check --reps 10; done
done

ncu=$(command -v ncu || true)
[ -z "$ncu" ] && [ -x /usr/local/cuda/bin/ncu ] && ncu=/usr/local/cuda/bin/ncu
if [ -z "$ncu" ]; then
    echo "bench: ncu not found: no DRAM measurement" >&2
    status=1
else
    # DRAM bytes of each kernel, one launch each (--profile), joined with the run's model and counted bytes.
    for name in article $(printf 'n%s ' $sweep); do
        args=()
        [ "$name" = article ] || args=(--seq "${name#n}")
        echo "bench: ncu ... $run --profile ${args[*]}"
        "$ncu" --clock-control none --kernel-name-base function --print-units base -k regex:flash_v1 \
            --metrics dram__bytes_read.sum,dram__bytes_write.sum --csv --log-file "$out/ncu_$name.csv" \
            "$run" --profile "${args[@]}" >"$out/ncu_$name.log" 2>&1 || { echo "  ncu FAILED"; status=1; }
        [ -f "$out/$name.csv" ] || continue
        awk -f $scripts/csv.awk -f $scripts/ncu_dram.awk "$out/ncu_$name.csv" |
            awk -f $scripts/csv.awk -f $scripts/profile_join.awk "$out/$name.csv" - >"$out/profile_$name.csv" ||
            { echo "  could not join ncu's output"; status=1; }
    done
    # Occupancy (theoretical, achieved, what limits it) and the shared-memory loads of ARTICLE.md A8.
    echo "bench: ncu ... $run --profile (occupancy, shared memory)"
    "$ncu" --clock-control none --kernel-name-base function --print-units base -k regex:flash_v1_kernel \
        --metrics launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,sm__maximum_warps_per_active_cycle_pct,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__sass_inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum \
        --csv --log-file "$out/ncu_occupancy.csv" "$run" --profile >"$out/ncu_occupancy.log" 2>&1 ||
        { echo "  ncu FAILED"; status=1; }
fi

if [ -x ./ch00/run ]; then
    for N in 512 1024 2048 4096; do
        echo "bench: ./ch00/run --seq $N --no-check --csv $out/ch00_n$N.csv"
        REQUIRE_GPU=1 ./ch00/run --seq "$N" --no-check --reps "$(reps_for "$N")" --csv "$out/ch00_n$N.csv" \
            >"$out/ch00_n$N.log" 2>&1 || { echo "  FAILED (see $out/ch00_n$N.log)"; status=1; }
    done
fi

echo
files=()
for name in article $(printf "n%s " $sweep); do
    for f in "$out/$name.csv" "$out/profile_$name.csv" "$out/ch00_$name.csv"; do
        [ -f "$f" ] && files+=("$f")
    done
done
for f in "$out"/ch02_tile_*.csv "$out"/ch02_ncu_occupancy.csv; do
    [ -f "$f" ] && files+=("$f")
done
[ ${#files[@]} -gt 0 ] || { echo "bench: no results"; exit 1; }
awk -f $scripts/csv.awk -f /dev/stdin "${files[@]}" <<'AWK'
function base(path) { sub(/.*\//, "", path); sub(/\.csv$/, "", path); return path }
FNR == 1 { delete col; file = base(FILENAME); ncu = (file == "ncu_occupancy") }
ncu && !("Metric Name" in col) { if (index($0, "\"Metric Name\"")) csv_columns($0, col); next }
ncu {
    if (substr($0, 1, 1) == "\"" && csv_split($0, f) >= col["Metric Value"]) {
        v = f[col["Metric Value"]]
        gsub(/,/, "", v) # thousands separators
        metric[f[col["Metric Name"]]] = v
    }
    next
}
FNR == 1 { csv_columns($0, col); next }
{
    csv_split($0, f)
    k = f[col["kernel"]]
    if (file ~ /^profile_/) {
        name = substr(file, 9)
        dram_r[name, k] = f[col["dram_read_bytes"]]; dram_w[name, k] = f[col["dram_write_bytes"]]
        next
    }
    name = file; sub(/^ch00_/, "", name)
    key = (file ~ /^ch00_/ ? "ch00:" : "") name SUBSEP k
    ms[key] = f[col["time_ms_median"]]; flops[key] = f[col["flops"]]; copy = f[col["ceiling_gbs"]]
    model_r[key] = f[col["model_read_bytes"]]; model_w[key] = f[col["model_write_bytes"]]
    counted_r[key] = f[col["counted_read_bytes"]]; counted_w[key] = f[col["counted_write_bytes"]]
    rel[key] = f[col["rel_err"]]; N[name] = f[col["N"]]; br[name] = f[col["br"]]; bc[name] = f[col["bc"]]
}
function gb(x) { return x == "" ? "-" : sprintf("%.3f", x / 1e9) }
END {
    a = "article" SUBSEP "flash_v1"
    printf "== flash_v1 at the article's configuration (B=10 H=64 N=1024 d=64 Br=Bc=32), GB\n"
    printf "%-8s %10s %10s %10s %10s\n", "", "model", "counted", "DRAM", "article"
    printf "%-8s %10s %10s %10s %10s\n", "read", gb(model_r[a]), gb(counted_r[a]), gb(dram_r[a]), "11.58"
    printf "%-8s %10s %10s %10s %10s\n", "write", gb(model_w[a]), gb(counted_w[a]), gb(dram_w[a]), "5.54"
    i = "article" SUBSEP "flash_v1_init"
    printf "flash_v1_init (O, l, m = 0, 0, -inf): %.3f ms, writes model %s GB, DRAM %s GB\n", ms[i], gb(model_w[i]),
        gb(dram_w[i])
    printf "flash_v1: %.3f ms, rel err %s\n\n", ms[a], rel[a]

    printf "== flash_v1 over N (B=10 H=64 d=64 Br=Bc=32); copy bandwidth (measured) %s GB/s\n", copy
    printf "%6s %10s %8s %10s %10s %9s %9s %8s %10s\n", "N", "ms", "TFLOP/s", "model GB", "DRAM GB", "GB/s mod",
        "GB/s DRAM", "% copy", "DRAM/model"
    split("512 1024 2048 4096 8192", Ns, " ")
    for (j = 1; j <= 5; j++) {
        name = "n" Ns[j]; key = name SUBSEP "flash_v1"
        if (!(key in ms)) continue
        t = ms[key] / 1e3; mb = model_r[key] + model_w[key]
        db = (name SUBSEP "flash_v1") in dram_r && dram_r[name, "flash_v1"] != "" ? \
            dram_r[name, "flash_v1"] + dram_w[name, "flash_v1"] : ""
        printf "%6s %10.3f %8.2f %10.3f %10s %9.0f %9s %7s%% %10s\n", Ns[j], ms[key], flops[key] / t / 1e12, mb / 1e9,
            gb(db), mb / t / 1e9, db == "" ? "-" : sprintf("%.0f", db / t / 1e9),
            db == "" || copy == "" ? "-" : sprintf("%.1f", 100 * db / t / 1e9 / copy),
            db == "" ? "-" : sprintf("%.3f", db / mb)
    }

    printf "\n== tiles at the article's configuration: the traffic depends on Bc only\n"
    printf "%4s %4s %10s %10s %9s %8s\n", "Br", "Bc", "ms", "model GB", "GB/s mod", "TFLOP/s"
    split("16 32 64", T, " ")
    for (r = 1; r <= 3; r++)
        for (c = 1; c <= 3; c++) {
            key = "tile_" T[r] "x" T[c] SUBSEP "flash_v1"
            if (!(key in ms)) continue
            t = ms[key] / 1e3; mb = model_r[key] + model_w[key]
            printf "%4s %4s %10.3f %10.3f %9.0f %8.2f\n", T[r], T[c], ms[key], mb / 1e9, mb / t / 1e9,
                flops[key] / t / 1e12
        }

    if ("sm__maximum_warps_per_active_cycle_pct" in metric) {
        printf "\n== flash_v1_kernel at the article's configuration (ncu)\n"
        printf "registers/thread %s; blocks/SM limited by registers %s, shared memory %s, warps %s\n",
            metric["launch__registers_per_thread"], metric["launch__occupancy_limit_registers"],
            metric["launch__occupancy_limit_shared_mem"], metric["launch__occupancy_limit_warps"]
        printf "occupancy: theoretical %s%%, achieved %s%%; DRAM throughput %s%% of peak\n",
            metric["sm__maximum_warps_per_active_cycle_pct"],
            metric["sm__warps_active.avg.pct_of_peak_sustained_active"],
            metric["dram__throughput.avg.pct_of_peak_sustained_elapsed"]
        q = metric["smsp__sass_inst_executed_op_shared_ld.sum"]; w = metric["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
        x = metric["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]
        printf "shared loads: %s requests, %s wavefronts, %s bank conflicts (%.2f%% of wavefronts, %.2f wavefronts per request)\n",
            with_commas(q), with_commas(w), with_commas(x), (w > 0 ? 100 * x / w : 0), (q > 0 ? w / q : 0)
    }

    if (("ch00:n1024" SUBSEP "total") in ms) {
        printf "\n== chapter 00 (three kernels, S and P in HBM) vs chapter 02 (total rows, B=10 H=64 d=64)\n"
        printf "%6s %10s %10s %8s\n", "N", "ch00 ms", "ch02 ms", "ch00/ch02"
        for (j = 1; j <= 5; j++) {
            k0 = "ch00:n" Ns[j] SUBSEP "total"; k2 = "n" Ns[j] SUBSEP "total"
            if (!(k0 in ms) || !(k2 in ms)) continue
            printf "%6s %10.3f %10.3f %8.2f\n", Ns[j], ms[k0], ms[k2], ms[k0] / ms[k2]
        }
    }
}
AWK
exit $status
