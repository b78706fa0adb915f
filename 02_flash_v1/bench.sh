#!/usr/bin/env bash
# bench.sh OUTDIR: chapter 02 on the GPU: the article's configuration (checked), N = 512 .. 8192, every tile
# (Br, Bc) the kernel takes (Br 16, 32, 64, 128 x Bc 16, 32, 64) at the article's configuration, the DRAM bytes
# Nsight Compute measures at each N, and at the article's configuration the same ncu metrics as chapter 03's
# bench (DRAM and l1tex global bytes, shared loads and bank conflicts, occupancy, stall reasons: the two
# kernels share their per-tile code, so the two summaries compare line by line); chapter 00 on the same shapes
# when it is built.
#
#   bash 02_flash_v1/bench.sh OUTDIR      (from the repository root, after make ch02; needs a GPU and ncu)
#
# Every run keeps B = 10, H = 64 (the article's 640 heads): flash_v1 has one block per head, so B*H is all the
# parallelism it has, and 640 blocks fill an H200 (132 SMs, 5 blocks each) in one wave. Only N changes.
# The report has two rows: flash_v1 (the attention kernel, the one compared) and flash_v1_init (setup: O, l, m
# set to 0, 0, -inf), and no total row.
# OUTDIR is a results folder (results/<GPU>); everything goes to OUTDIR/ch02/: <name>.csv (+ .log) per run
# (article, n<N>, tile_<Br>x<Bc>), ncu_<name>.csv (ncu's raw output; ncu_article.csv holds every metric of
# bench-lib.sh's NCU_ALL, ncu_article_stalls.csv the stall reasons), profile_<name>.csv (model | counted | DRAM
# per kernel, common/scripts/book.py profile-join), ch00_n<N>.csv (chapter 00 at the same shapes) when ./ch00/run
# exists, and summary.txt, the summary printed last.
# About two minutes on an H200 (flash_v1 at N = 8192 takes about 1.1 s a launch: few repetitions there).
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
. $scripts/bench-lib.sh   # find_ncu, csv_rows, profile_join, ncu_value, ncu_summary, the ncu metric lists
bench_header 02 > "$out/measured.txt"   # the GPU, date and CUDA version of this run (make docs' captions)
[ -x "$run" ] || { echo "bench: $run not found; build it first: make ch02" >&2; exit 3; }
start=$SECONDS
status=0

# bench NAME ARGS...: one run of the chapter's program, CSV to OUTDIR/ch02/NAME.csv.
bench() {
    local name=$1
    shift
    echo "bench: $run $* --csv $out/$name.csv"
    rm -f "$out/$name.csv"
    if ! REQUIRE_GPU=1 "$run" "$@" --csv "$out/$name.csv" >"$out/$name.log" 2>&1; then
        echo "  FAILED (see $out/$name.log)"
        status=1
    fi
}

sweep="512 1024 2048 4096 8192"
reps_for() { case $1 in 2048) echo 10 ;; 4096) echo 5 ;; 8192) echo 3 ;; *) echo 20 ;; esac; }
brs="16 32 64 128"
bcs="16 32 64"

bench article
for N in $sweep; do bench "n$N" --seq "$N" --no-check --reps "$(reps_for "$N")"; done
for Br in $brs; do
    for Bc in $bcs; do bench "tile_${Br}x${Bc}" --br "$Br" --bc "$Bc" --no-check --reps 10; done
done

rm -f "$out"/ncu_article_stalls.csv
if ! ncu=$(find_ncu); then
    echo "bench: ncu not found (set NCU=/path/to/ncu): no DRAM bytes, conflicts or stall reasons" >&2
    status=1
else
    # Bytes of each kernel (flash_v1_init and flash_v1), one launch each (--profile), joined with the run's model
    # and counted bytes: at the article's configuration every metric of NCU_ALL, over N the DRAM bytes alone.
    for name in article $(printf 'n%s ' $sweep); do
        args=() metrics=$NCU_DRAM
        [ "$name" = article ] && metrics=$NCU_ALL || args=(--seq "${name#n}")
        echo "bench: ncu ... $run --profile ${args[*]}"
        "$ncu" "${NCU_FLAGS[@]}" -k regex:flash_v1 --metrics "$metrics" --log-file "$out/ncu_$name.csv" \
            "$run" --profile "${args[@]}" >"$out/ncu_$name.log" 2>&1 || { echo "  ncu FAILED"; status=1; }
        [ -f "$out/$name.csv" ] || continue
        profile_join "$out/$name.csv" "$out/ncu_$name.csv" >"$out/profile_$name.csv" ||
            { echo "  could not join ncu's output"; status=1; }
    done
    echo "bench: ncu ... $run --profile (stall reasons)"
    "$ncu" "${NCU_FLAGS[@]}" -k regex:flash_v1_kernel --metrics "$NCU_STALLS" --log-file "$out/ncu_article_stalls.csv" \
        "$run" --profile >"$out/ncu_article_stalls.log" 2>&1 || { echo "  ncu FAILED"; status=1; }
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
for Br in $brs; do for Bc in $bcs; do [ -f "$out/tile_${Br}x${Bc}.csv" ] && files+=("$out/tile_${Br}x${Bc}.csv"); done; done
[ ${#files[@]} -gt 0 ] || { echo "bench: no results"; exit 1; }
{
# one line per row: FILE (no .csv)|kernel|DRAM read|DRAM write|ms|flops|copy GB/s|model read|model write|counted
# read|counted write|rel_err
rows() {
    for f in "${files[@]}"; do
        csv_rows "$f" kernel,dram_read_bytes,dram_write_bytes,time_ms_median,flops,ceiling_gbs,model_read_bytes,model_write_bytes,counted_read_bytes,counted_write_bytes,rel_err |
            sed "s/^/$(basename "$f" .csv)|/"
    done
}
awk -F'|' -f /dev/stdin -v brs="$brs" -v bcs="$bcs" -v sweep="$sweep" \
    -v l1_r="$(ncu_value "$out/ncu_article.csv" flash_v1_kernel l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum)" \
    -v l1_w="$(ncu_value "$out/ncu_article.csv" flash_v1_kernel l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum)" <(rows) <<'AWK'
{
    file = $1; k = $2
    if (file ~ /^profile_/) {
        name = substr(file, 9)
        dram_r[name, k] = $3; dram_w[name, k] = $4
        next
    }
    name = file; sub(/^ch00_/, "", name)
    key = (file ~ /^ch00_/ ? "ch00:" : "") name SUBSEP k
    ms[key] = $5; flops[key] = $6; copy = $7
    model_r[key] = $8; model_w[key] = $9; counted_r[key] = $10; counted_w[key] = $11; rel[key] = $12
}
function gb(x) { return x == "" ? "-" : sprintf("%.3f", x / 1e9) }
END {
    a = "article" SUBSEP "flash_v1"
    printf "== flash_v1 at the article's configuration (B=10 H=64 N=1024 d=64 Br=Bc=32), GB\n"
    printf "%-8s %10s %10s %12s %10s %10s\n", "", "model", "counted", "l1tex global", "DRAM", "article"
    printf "%-8s %10s %10s %12s %10s %10s\n", "read", gb(model_r[a]), gb(counted_r[a]), gb(l1_r), gb(dram_r[a]), "11.58"
    printf "%-8s %10s %10s %12s %10s %10s\n", "write", gb(model_w[a]), gb(counted_w[a]), gb(l1_w), gb(dram_w[a]), "5.54"
    i = "article" SUBSEP "flash_v1_init"
    printf "flash_v1_init (setup: O, l, m = 0, 0, -inf): %s ms, writes model %s GB, DRAM %s GB\n",
        (i in ms) ? sprintf("%.3f", ms[i]) : "-", gb(model_w[i]), gb(dram_w[i])
    printf "flash_v1: %s ms, rel err %s\n\n", (a in ms) ? sprintf("%.3f", ms[a]) : "-", (a in rel) ? rel[a] : "-"

    printf "== flash_v1 over N (B=10 H=64 d=64 Br=Bc=32); copy bandwidth (measured) %s GB/s\n", copy
    printf "%6s %10s %8s %10s %10s %9s %9s %8s %10s\n", "N", "ms", "TFLOP/s", "model GB", "DRAM GB", "GB/s mod",
        "GB/s DRAM", "% copy", "DRAM/model"
    nN = split(sweep, Ns, " ")
    for (j = 1; j <= nN; j++) {
        name = "n" Ns[j]; key = name SUBSEP "flash_v1"
        if (!(key in ms)) continue
        t = ms[key] / 1e3; mb = model_r[key] + model_w[key]
        db = (key in dram_r) && dram_r[key] != "" ? dram_r[key] + dram_w[key] : ""
        printf "%6s %10.3f %8.2f %10.3f %10s %9.0f %9s %7s%% %10s\n", Ns[j], ms[key], flops[key] / t / 1e12, mb / 1e9,
            gb(db), mb / t / 1e9, db == "" ? "-" : sprintf("%.0f", db / t / 1e9),
            db == "" || copy == "" ? "-" : sprintf("%.1f", 100 * db / t / 1e9 / copy),
            db == "" ? "-" : sprintf("%.3f", db / mb)
    }

    printf "\n== tiles at the article's configuration (flash_v1; block = 2 Br threads): the traffic depends on Bc only\n"
    printf "%4s %4s %10s %10s %9s %8s\n", "Br", "Bc", "ms", "model GB", "GB/s mod", "TFLOP/s"
    nr = split(brs, R, " "); nc = split(bcs, C, " ")
    for (r = 1; r <= nr; r++)
        for (c = 1; c <= nc; c++) {
            key = "tile_" R[r] "x" C[c] SUBSEP "flash_v1"
            if (!(key in ms)) { printf "%4s %4s %10s\n", R[r], C[c], "-"; continue }
            t = ms[key] / 1e3; mb = model_r[key] + model_w[key]
            printf "%4s %4s %10.3f %10.3f %9.0f %8.2f\n", R[r], C[c], ms[key], mb / 1e9, mb / t / 1e9,
                flops[key] / t / 1e12
        }

    if (("ch00:n1024" SUBSEP "total") in ms) {
        printf "\n== chapter 00 (three kernels, S and P in HBM: its total row) vs chapter 02 (flash_v1), B=10 H=64 d=64\n"
        printf "%6s %10s %10s %10s\n", "N", "ch00 ms", "ch02 ms", "ch00/ch02"
        for (j = 1; j <= nN; j++) {
            k0 = "ch00:n" Ns[j] SUBSEP "total"; k2 = "n" Ns[j] SUBSEP "flash_v1"
            if (!(k0 in ms) || !(k2 in ms)) continue
            printf "%6s %10.3f %10.3f %10.2f\n", Ns[j], ms[k0], ms[k2], ms[k0] / ms[k2]
        }
    }
}
AWK
    echo
    ncu_summary "$out/article.csv" flash_v1 "$out/ncu_article.csv" "$out/ncu_article_stalls.csv" flash_v1_kernel
    echo
    echo "bench: $((SECONDS - start)) s; CSVs and ncu output in $out/"
} | tee "$out/summary.txt"
exit $status
