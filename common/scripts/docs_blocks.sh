# docs_blocks.sh: the generated blocks of the chapter READMEs, one function block_NAME per <!-- MEASURED:NAME -->
# (sourced by docs.sh, which defines $R and the helpers col, pick, cell, fmt, ms, with_csv_awk and caption). Each
# prints a Markdown table, then its caption.

# ---- tables of several blocks, and the blocks that are one call of them --------------------------------
# ncu FILE KERNEL METRIC: one metric of a kernel function in Nsight Compute's CSV (ncu_metrics.awk)
ncu() {
    awk -f common/scripts/csv.awk -f common/scripts/ncu_metrics.awk -v kernel="$2" "$1" | awk -F'|' -v m="$3" '$1 == m { print $3; exit }'
}

# ncu_table COLUMN...: Nsight Compute's metrics, one column per COLUMN = TITLE=NCU_CSV,STALLS_CSV,KERNEL (files under
# $R), one row per line of stdin: SOURCE METRIC FORMAT LABEL. SOURCE: ncu (the first file), stalls (the second),
# ratio or percent (METRIC = A/B: A / B or 100 A / B, of the first file); FORMAT: a printf format, commas
# (with_commas) or ms (ns as ms)
ncu_table() {
    rows=$(cat)
    printf '| |'; for c in "$@"; do printf ' %s |' "${c%%=*}"; done
    printf '\n|---|'; for c in "$@"; do printf -- '---:|'; done; echo
    echo "$rows" | while read -r src metric format label; do
        printf '| %s |' "$label"
        for c in "$@"; do
            spec=${c#*=}; n=$R/${spec%%,*} rest=${spec#*,}; st=$R/${rest%%,*} k=${rest#*,}
            case $src in
                ncu) v=$(ncu "$n" "$k" "$metric") ;;
                stalls) v=$(ncu "$st" "$k" "$metric") ;;
                ratio | percent) v=$(awk -v a="$(ncu "$n" "$k" "${metric%/*}")" -v b="$(ncu "$n" "$k" "${metric#*/}")" \
                    -v p=$([ $src = percent ] && echo 100 || echo 1) 'BEGIN { print p * a / b }') ;;
            esac
            case $format in
                commas) v=$(echo "$v" | with_csv_awk '{ printf "%s", with_commas($1) }') ;;
                ms) v=$(awk -v x="$v" 'BEGIN { printf "%.3f", x / 1e6 }') ;;
                *) v=$(fmt "$format" "$v") ;;
            esac
            printf ' %s |' "$v"
        done
        echo
    done
}
S=smsp__average_warps_issue_stalled_
LD=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum CF=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
RQ=smsp__sass_inst_executed_op_shared_ld.sum

# a profile table (profile_table.awk: model, counted and DRAM bytes per kernel) as the bench printed it
profile_block() {
    echo '```'
    awk -f common/scripts/csv.awk -f common/scripts/profile_table.awk "$1" | tail -n +2
    echo '```'
    caption "$1"
}
block_ch00_h200_dram() { profile_block "$R/ch00/profile.csv"; }
block_ch01_io_n1024() { profile_block "$R/ch01/profile_n1024.csv"; }
block_ch01_io_n65536() { profile_block "$R/ch01/profile_n65536.csv"; }
block_ch01_io_n1048576() { profile_block "$R/ch01/profile_n1048576.csv"; }

# bytes_table CORNER RUN_CSV KERNEL NCU_CSV NCU_KERNEL FORMAT [compulsory]: one kernel's bytes read and written, as
# the model and the instrumented build count them (RUN_CSV), as the SMs request them and as DRAM sees them (ncu);
# DRAM / model in FORMAT; compulsory adds the ideal bytes (ideal_read_bytes, ideal_write_bytes)
bytes_table() {
    printf '|%s| model | counted | requested (ncu l1tex) | DRAM (ncu) | DRAM / model |%s\n' " ${1:+$1 }" "${7:+ compulsory (Q+K+V; O+L) |}"
    printf '|---|---:|---:|---:|---:|---:|%s\n' "${7:+---:|}"
    for rw in read:ld write:st; do
        printf '%s|%s|%s|%s\n' "${rw%:*}" "$(col "$2" "model_${rw%:*}_bytes,counted_${rw%:*}_bytes,ideal_${rw%:*}_bytes" kernel=$3)" \
            "$(ncu "$4" "$5" l1tex__t_bytes_pipe_lsu_mem_global_op_${rw#*:}.sum)" "$(ncu "$4" "$5" dram__bytes_${rw%:*}.sum)"
    done | with_csv_awk '{
        printf("| %s | %s | %s | %s | %s | " f " |", $1, with_commas($2), with_commas($3), with_commas($5), with_commas($6), $6 / $2)
        print ideal == "" ? "" : " " with_commas($4) " |"
    }' -v f="$6" -v ideal="${7:-}"
    caption "$2" "$4"
}
block_ch02_article_bytes() { bytes_table '' "$R/ch02/run.csv" flash_v1 "$R/ch02/ncu_article.csv" flash_v1_kernel %.4f; }
block_ch03_bytes() { bytes_table bytes "$R/ch03/run.csv" flash_v2 "$R/ch03/ncu.csv" flash_v2_kernel %.2g compulsory; }

# ---- chapter 00 --------------------------------------------------------------------------------------------
# chapter 00's four runs, or two: per kernel and the total (ms). Arguments: title, then LABEL=FILE... (FILE
# without .csv; a cuBLAS run's kernels are qk_cublas and pv_cublas)
ch00_table() {
    printf '| %s | S = QK^T | softmax | O = PV | total |\n|---|---|---|---|---|\n' "$1"
    shift
    used=
    for lf in "$@"; do
        f=$R/ch00/${lf#*=}.csv g=gemm
        case $f in *cublas*) g=cublas ;; esac
        printf '| %s | %s | %s | %s | **%s** |\n' "${lf%%=*}" "$(ms "$f" qk_$g)" "$(ms "$f" softmax)" \
            "$(ms "$f" pv_$g)" "$(ms "$f" total)"
        used="$used $f"
    done
    caption $used
}
block_ch00_h200_article() {
    ch00_table 'B=10 H=64 N=1024 d=64' 'fp32, own GEMMs=article_fp32_own' 'fp32, cuBLAS GEMMs=article_fp32_cublas' \
        'fp16, own GEMMs=article_fp16_own' 'fp16, cuBLAS GEMMs=article_fp16_cublas'
}
block_ch00_h200_seed() {
    ch00_table 'B=1 H=32 N=4096 d=128 fp16' 'own GEMMs=seed_fp16_own' 'cuBLAS GEMMs=seed_fp16_cublas'
}

# chapter 00 over N, fp32, own GEMMs: per kernel (ms), the growth of the total, each kernel's roofline_pct
block_ch00_h200_n_sweep() {
    sweep=
    for n in 512 1024 2048 4096; do sweep="$sweep $R/ch02/earlier_kernel/ch00_n$n.csv"; done
    printf '| N | S = QK^T ms | softmax ms | O = PV ms | total ms | total / previous N | softmax, %% of copy | GEMMs, %% of FFMA peak |\n'
    printf '|---|---|---|---|---|---|---|---|\n'
    for f in $sweep; do col "$f" N,kernel,time_ms_median,roofline_pct; done | awk -F'|' '
        { t[$2] = $3; p[$2] = $4 }
        $2 == "total" {
            printf "| %d | %.3f | %.3f | %.3f | %.3f |%s| %.1f%% | %.1f%%, %.1f%% |\n", $1, t["qk_gemm"], t["softmax"],
                t["pv_gemm"], $3, prev ? sprintf(" %.2fx ", $3 / prev) : " ", p["softmax"], p["qk_gemm"], p["pv_gemm"]
            prev = $3
        }'
    caption -n 'ch02/earlier_kernel/ch00_n{512,1024,2048,4096}.csv' $sweep
}

# chapter 00's speed targets: the softmax against the copy bandwidth measured in the same run (roofline_pct), our
# GEMMs against cuBLAS's (TFLOP/s, same shape), the cuBLAS pipeline against PyTorch's three ops (7.12 ms, ARTICLES.md)
block_ch00_h200_targets() {
    c=$R/ch00
    sm() { fmt %.1f "$(pick "$c/$1.csv" roofline_pct kernel=softmax)"; }
    gemms() { # RUN: our qk and pv as % of cuBLAS's, then met or missed
        awk -v a="$(pick "$c/$1_own.csv" tflops kernel=qk_gemm)" -v b="$(pick "$c/$1_cublas.csv" tflops kernel=qk_cublas)" \
            -v p="$(pick "$c/$1_own.csv" tflops kernel=pv_gemm)" -v q="$(pick "$c/$1_cublas.csv" tflops kernel=pv_cublas)" \
            'BEGIN { printf "`qk_gemm` %.1f%%, `pv_gemm` %.1f%% | %s", 100 * a / b, 100 * p / q,
                     (a / b >= 0.5 && p / q >= 0.5) ? "met" : "**missed**" }'
    }
    s32=$(sm article_fp32_own) s16=$(sm article_fp16_own) t=$(pick "$c/article_fp32_cublas.csv" time_ms_median kernel=total)
    printf '| target | measured | |\n|---|---|---|\n'
    printf '| softmax >= 80%% of copy bandwidth, article config | %s%% (fp32), %s%% (fp16) | %s |\n' "$s32" "$s16" \
        "$(awk -v a="$s32" -v b="$s16" 'BEGIN { print (a >= 80 && b >= 80) ? "met" : "**missed**" }')"
    printf '| own GEMMs >= 50%% of cuBLAS, fp32 (article) | %s |\n' "$(gemms article_fp32)"
    printf '| own GEMMs >= 50%% of cuBLAS, fp16 (article) | %s |\n' "$(gemms article_fp16)"
    printf "| own GEMMs >= 50%% of cuBLAS, fp16 (article 2's shape, \`seed_fp16\`) | %s |\n" "$(gemms seed_fp16)"
    awk -v t="$t" 'BEGIN { printf "| cuBLAS pipeline, fp32 article, <= 1.2x PyTorch (7.12 ms) | %.3f ms = %.2fx | %s |\n", t, t / 7.12,
        t / 7.12 <= 1.2 ? "met" : "**missed**" }'
    caption -n 'ch00/{article_fp32,article_fp16,seed_fp16}_{own,cublas}.csv' "$c/article_fp32_own.csv"
}

# ---- chapter 01 --------------------------------------------------------------------------------------------
# chapter 01's time ratio 3-pass : online over N against the byte ratio 4 : 3, and the DRAM bytes per element where
# ncu measured them (profile_n<N>.csv); the article run (run.csv) under N = 1,024
block_ch01_ratio() {
    printf '| N | 3-pass ms | online ms | ratio | vs 4/3 | DRAM B/el, 3-pass : online | DRAM ratio |\n|---|---|---|---|---|---|---|\n'
    for n in 1024 4096 16384 65536 262144 1048576; do
        f=$R/ch01/n$n.csv p=$R/ch01/profile_n$n.csv
        printf '%s|%s|%s|%s|%s|%s\n' $n "$(pick "$f" rows kernel=softmax_3pass)" "$(pick "$f" time_ms_median kernel=softmax_3pass)" \
            "$(pick "$f" time_ms_median kernel=softmax_online)" \
            "$([ -f "$p" ] && col "$p" dram_read_bytes,dram_write_bytes kernel=softmax_3pass)" \
            "$([ -f "$p" ] && col "$p" dram_read_bytes,dram_write_bytes kernel=softmax_online)"
        [ $n = 1024 ] && printf 'run|0|%s|%s||\n' "$(pick "$R/ch01/run.csv" time_ms_median kernel=softmax_3pass)" \
            "$(pick "$R/ch01/run.csv" time_ms_median kernel=softmax_online)"
    done | with_csv_awk '{
        r = $3 / $4; vs = sprintf("%.1f%%", 100 * (r * 3 / 4 - 1))
        if ($1 == "run") { printf "| 1,024 (article run, ch01/run.log) | %.4f | %.4f | %.3f | %s | | |\n", $3, $4, r, vs; next }
        el = $1 * $2; a = ($5 + $6) / el; b = ($7 + $8) / el
        printf "| %s | %.3f | %.3f | %.3f | %s | %s |\n", with_commas($1), $3, $4, r, vs,
            $5 == "" ? "not measured |" : sprintf("%.3f : %.3f | %.3f", a, b, a / b)
    }'
    caption -n 'ch01/n{1024,4096,16384,65536,262144,1048576}.csv, ch01/profile_n{1024,65536,1048576}.csv, ch01/run.csv' \
        "$R/ch01/n1024.csv"
}

# ---- chapter 02 --------------------------------------------------------------------------------------------
# chapter 00's total against flash_v1 over N (B=10 H=64 d=64 fp32), times and model bytes
block_ch02_vs_ch00() {
    printf '| N | ch00 ms | ch02 ms | ch00 / ch02 time | ch00 model GB | ch02 model GB | ch00 / ch02 bytes |\n'
    printf '|---:|---:|---:|---:|---:|---:|---:|\n'
    for n in 512 1024 2048 4096; do
        a=$R/ch02/ch00_n$n.csv b=$R/ch02/n$n.csv
        printf '%s|%s|%s\n' "$n" "$(col "$a" time_ms_median,model_read_bytes,model_write_bytes kernel=total)" \
            "$(col "$b" time_ms_median,model_read_bytes,model_write_bytes kernel=flash_v1)"
    done | awk -F'|' '{ a = ($3 + $4) / 1e9; b = ($6 + $7) / 1e9
        printf "| %s | %.3f | %.3f | %.2f | %.3f | %.3f | %.2f |\n", $1, $2, $5, $2 / $5, a, b, a / b }'
    caption -n 'ch02/{ch00_n,n}{512,1024,2048,4096}.csv' "$R/ch02/ch00_n1024.csv"
}

# flash_v1 against flash_v2 over N at 655,360 tokens (chapter 03's bench); the article's N = 1024 in bold
block_ch02_vs_ch03() {
    v1=$R/ch03/ch02_sweep.csv v2=$R/ch03/sweep.csv
    printf '| N | H | ch02 blocks | ch02 (v1) ms | ch03 (v2) ms | v1 / v2 | v1 model GB | v2 model GB |\n'
    printf '|---:|---:|---:|---:|---:|---:|---:|---:|\n'
    { col "$v1" N,B,H,time_ms_median,model_read_bytes,model_write_bytes kernel=flash_v1 | sed 's/^/1|/'
      col "$v2" N,time_ms_median,model_read_bytes,model_write_bytes kernel=flash_v2 | sed 's/^/2|/'; } |
    with_csv_awk '
        $1 == 1 { n[++rows] = $2; bh[$2] = $3 * $4; h[$2] = $4; t1[$2] = $5; g1[$2] = ($6 + $7) / 1e9 }
        $1 == 2 { t2[$2] = $3; g2[$2] = ($4 + $5) / 1e9 }
        END {
            for (i = 1; i <= rows; i++) {
                k = n[i]; s = k == 1024 ? "**" : ""
                printf "| %s%s%s | %s%s%s | %s%s%s | %s%.3f%s | %s%.3f%s | %s%.2f%s | %s%.3f%s | %s%.3f%s |\n", s, k, s,
                    s, h[k], s, s, with_commas(bh[k]), s, s, t1[k], s, s, t2[k], s, s, t1[k] / t2[k], s, s, g1[k], s, s, g2[k], s
            }
        }'
    caption "$v1" "$v2"
}

# flash_v1 beside flash_v2 (chapter 03) under ncu at the article's configuration
block_ch02_ncu() {
    ncu_table 'flash_v1 (this chapter)=ch02/ncu_article.csv,ch02/ncu_article_stalls.csv,flash_v1_kernel' \
        'flash_v2 (chapter 03)=ch03/ncu.csv,ch03/ncu_stalls.csv,flash_v2_kernel' <<ROWS
ncu gpu__time_duration.sum ms time under ncu (ms)
ncu $RQ commas shared-load requests
ncu $LD commas shared-load wavefronts
ncu $CF commas shared-load bank conflicts
percent $CF/$LD %.1f%% conflicts / wavefronts
ratio $LD/$RQ %.2f wavefronts / request
ncu l1tex__throughput.avg.pct_of_peak_sustained_active %.1f%% L1/shared-memory unit, % of peak
ncu sm__warps_active.avg.pct_of_peak_sustained_active %.1f%% achieved occupancy (warps active / 64)
ncu sm__maximum_warps_per_active_cycle_pct %.1f%% theoretical occupancy
ncu launch__registers_per_thread %s registers per thread
ncu smsp__average_warp_latency_per_inst_issued.ratio %.2f cycles between two instructions of a warp
stalls ${S}short_scoreboard_per_issue_active.ratio %.2f ... stalled on shared memory (short_scoreboard)
stalls ${S}long_scoreboard_per_issue_active.ratio %.2f ... on global memory (long_scoreboard)
stalls ${S}mio_throttle_per_issue_active.ratio %.2f ... on the MIO queue (mio_throttle)
stalls ${S}barrier_per_issue_active.ratio %.2f ... at a barrier
ncu sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active %.1f%% FMA pipe, % of peak
ncu dram__throughput.avg.pct_of_peak_sustained_elapsed %.1f%% DRAM throughput, % of peak
ROWS
    caption -n 'ch02/ncu_article{,_stalls}.csv, ch03/ncu{,_stalls}.csv' "$R/ch02/ncu_article.csv"
}

# flash_v1 over every tile at the article's configuration (tile_<Br>x<Bc>.csv, and the lines the run printed in
# tile_<Br>x<Bc>.log); the default tile (32 x 32) in bold
block_ch02_tiles() {
    printf '| Br | Bc | ms | model GB | TFLOP/s | registers | blocks per SM x warps | waves of the 640 blocks |\n'
    printf '|---:|---:|---:|---:|---:|---:|---|---:|\n'
    for br in 16 32 64 128; do for bc in 16 32 64; do
        f=$R/ch02/tile_${br}x$bc.csv
        printf '%s|%s|%s|%s|%s\n' $br $bc "$(col "$f" time_ms_median,model_read_bytes,model_write_bytes,tflops kernel=flash_v1)" \
            "$(sed -n 's/.*: \([0-9]*\) registers per thread.*/\1/p' "${f%.csv}.log")" \
            "$(sed -n 's/.*occupancy: \([0-9]*\) blocks per SM x \([0-9]*\) warps.* take \([0-9]*\) wave.*/\1 x \2|\3/p' "${f%.csv}.log")"
    done; done | awk -F'|' '{
        s = $1 == 32 && $2 == 32 ? "**" : ""
        printf "| %s%s%s | %s%s%s | %s%.3f%s | %s%.3f%s | %s%.2f%s | %s | %s | %s |\n", s, $1, s, s, $2, s, s, $3, s,
            s, ($4 + $5) / 1e9, s, s, $6, s, $7, $8, $9
    }'
    caption -n 'ch02/tile_{16,32,64,128}x{16,32,64}.csv' "$R/ch02/tile_32x32.csv"
}

# ---- chapter 03 --------------------------------------------------------------------------------------------
# chapter 03 over N at 655,360 tokens beside chapter 02 and its own causal runs; the largest ch02 / ch03 in bold.
# The last column is arithmetic: (Tr + 1) / (2 Tr) of the K/V blocks, Tr = N / 32
block_ch03_sweep() {
    v2=$R/ch03/sweep.csv v1=$R/ch03/ch02_sweep.csv vc=$R/ch03/causal.csv
    printf '| N | H | ch02 blocks | ch03 ms | ch03 TFLOP/s | ch02 ms | ch02 TFLOP/s | ch02 / ch03 | causal ms | causal / full | K/V blocks visited, causal / full |\n'
    printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
    { col "$v2" N,B,H,time_ms_median,tflops kernel=flash_v2 | sed 's/^/2|/'
      col "$v1" N,time_ms_median,tflops kernel=flash_v1 | sed 's/^/1|/'
      col "$vc" N,time_ms_median kernel=flash_v2 | sed 's/^/c|/'; } |
    with_csv_awk '
        $1 == 2 { n[++rows] = $2; bh[$2] = $3 * $4; h[$2] = $4; t2[$2] = $5; f2[$2] = $6 }
        $1 == 1 { t1[$2] = $3; f1[$2] = $4 }
        $1 == "c" { tc[$2] = $3 }
        END {
            for (i = 1; i <= rows; i++) if (t1[n[i]] / t2[n[i]] > most) most = t1[n[i]] / t2[n[i]]
            for (i = 1; i <= rows; i++) {
                k = n[i]; r = t1[k] / t2[k]; tr = k / 32
                printf "| %s | %s | %s | %.3f | %.2f | %.3f | %.2f | %s | %.3f | %.2f | %.3f |\n", k, h[k], with_commas(bh[k]),
                    t2[k], f2[k], t1[k], f1[k], sprintf(r == most ? "**%.2f**" : "%.2f", r), tc[k], tc[k] / t2[k], (tr + 1) / (2 * tr)
            }
        }'
    caption "$v2" "$v1" "$vc"
}

# chapter 03 over tiles at the article's configuration; registers and occupancy from the lines each run printed
# (runs.log); the default tile (32 x 32) in bold
block_ch03_tiles() {
    t=$R/ch03/tiles.csv log=$R/ch03/runs.log
    printf '| Br | Bc | ms | TFLOP/s | registers | theoretical occupancy |\n|---:|---:|---:|---:|---:|---:|\n'
    { col "$t" br,bc,time_ms_median,tflops kernel=flash_v2 | sed 's/^/t|/'
      sed -n 's/.*: \([0-9]*\) registers per thread.*/r|\1/p
              s/.*occupancy: \([0-9]*\) blocks per SM x \([0-9]*\) warps = .*(\([0-9.]*%\)).*/o|\1|\2|\3/p
              s/^chapter 03 on .*: B=10 H=64 N=1024 d=64 fp32 Br=\([0-9]*\) Bc=\([0-9]*\)$/k|\1|\2/p' "$log"; } |
    awk -F'|' '
        $1 == "r" { regs = $2 } $1 == "o" { occ = $2 " x " $3 ($3 == 1 ? " warp, " : " warps, ") $4 }
        $1 == "k" && !(($2 "x" $3) in r) { r[$2 "x" $3] = regs; o[$2 "x" $3] = occ }
        $1 == "t" { n[++rows] = $2 "x" $3; ms[$2 "x" $3] = $4; tf[$2 "x" $3] = $5 }
        END {
            for (i = 1; i <= rows; i++) {
                split(n[i], b, "x"); s = n[i] == "32x32" ? "**" : ""
                printf "| %s%s%s | %s%s%s | %s%.3f%s | %s%.2f%s | %s | %s |\n", s, b[1], s, s, b[2], s, s, ms[n[i]], s, s,
                    tf[n[i]], s, r[n[i]], o[n[i]]
            }
        }'
    caption "$t" "$log"
}

# flash_v2 under ncu at the article's configuration: the headline metrics, then the eight largest stall reasons
# with their share of the cycles between two instructions of a warp
block_ch03_ncu() {
    n=$R/ch03/ncu.csv st=$R/ch03/ncu_stalls.csv k=flash_v2_kernel
    lat=$(ncu "$n" $k smsp__average_warp_latency_per_inst_issued.ratio)
    mio=$(ncu "$st" $k ${S}mio_throttle_per_issue_active.ratio)
    printf '| metric | value |\n|---|---:|\n'
    printf '| kernel time under ncu | %s ms |\n' "$(awk -v x="$(ncu "$n" $k gpu__time_duration.sum)" 'BEGIN { printf "%.3f", x / 1e6 }')"
    printf '| achieved occupancy (`sm__warps_active.avg.pct_of_peak_sustained_active`) | %s%% (theoretical %s%%) |\n' \
        "$(fmt %.2f "$(ncu "$n" $k sm__warps_active.avg.pct_of_peak_sustained_active)")" \
        "$(fmt %.1f "$(ncu "$n" $k sm__maximum_warps_per_active_cycle_pct)")"
    printf '| L1/shared-memory unit, %% of peak (`l1tex__throughput`) | %s%% |\n' \
        "$(fmt %.1f "$(ncu "$n" $k l1tex__throughput.avg.pct_of_peak_sustained_active)")"
    printf '| FMA pipe, %% of peak (`sm__pipe_fma_cycles_active`) | %s%% |\n' \
        "$(fmt %.1f "$(ncu "$n" $k sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active)")"
    printf '| warp latency per issued instruction | %.2f cycles |\n' "$lat"
    printf '| MIO throttle | %.2f cycles, %.1f%% of the %.2f |\n\n' "$mio" "$(awk -v a="$mio" -v b="$lat" 'BEGIN { print 100 * a / b }')" "$lat"
    printf '| stall reason (cycles per issued instruction) | cycles | share of %.2f |\n|---|---:|---:|\n' "$lat"
    awk -f common/scripts/csv.awk -f common/scripts/ncu_metrics.awk -v kernel=$k "$st" |
        sed -n "s/^${S}\(.*\)_per_issue_active.ratio|[^|]*|/\1 /p" | sort -k2,2 -rn | head -n 8 |
        awk -v lat="$lat" '{ printf "| %s | %.2f | %.1f%% |\n", $1, $2, 100 * $2 / lat }'
    caption "$n" "$st"
}

# the shared loads of flash_v2 and flash_v1 under ncu (the same launches as the tables above)
block_ch03_bank_conflicts() {
    printf '| kernel | requests | wavefronts | bank conflicts | conflicts / wavefronts | wavefronts / request |\n'
    printf '|---|---:|---:|---:|---:|---:|\n'
    while read -r file k label; do
        f=$R/$file
        printf '%s|%s|%s|%s|%s\n' "$label" "$(ncu "$f" $k $RQ)" "$(ncu "$f" $k smsp__inst_executed_op_ldsm.sum)" \
            "$(ncu "$f" $k $LD)" "$(ncu "$f" $k $CF)"
    done <<ROWS | with_csv_awk '{ printf "| %s | %s (+ %s ldsm) | %s | %s | %.2f%% | %.2f |\n", $1, with_commas($2), $3,
            with_commas($4), with_commas($5), 100 * $5 / $4, $4 / $2 }'
ch03/ncu.csv flash_v2_kernel flash_v2 (this chapter), H200
ch02/ncu_article.csv flash_v1_kernel flash_v1 (chapter 02, the same tile code), H200
ROWS
    caption "$R/ch03/ncu.csv" "$R/ch02/ncu_article.csv"
}

# flash_v1 (chapter 02) and flash_v2 at the article's configuration, from the runs of `make reproduce`
block_ch03_v1_v2() {
    v1=$R/ch02/run.csv v2=$R/ch03/run.csv
    printf '| | v1 (chapter 02) | v2 (this chapter) | v1 time / v2 time |\n|---|---:|---:|---:|\n'
    printf '%s|%s\n' "$(col "$v1" time_ms_median,tflops kernel=flash_v1)" "$(col "$v2" time_ms_median,tflops kernel=flash_v2)" |
        awk -F'|' '{ printf "| this book, H200, CUDA C fp32 | %.4f ms, %.2f TFLOP/s | %.4f ms, %.2f TFLOP/s | **%.2f** |\n",
            $1, $2, $3, $4, $1 / $3 }'
    caption "$v1" "$v2"
}

# chapter 03 at N = 65536 (long.csv), full and causal; ok: the relative error within the programs' tolerance,
# 1e-5 x max(1, sqrt(N / 1024)) (attn_tolerance in common/attention_check.c)
block_ch03_long() {
    f=$R/ch03/long.csv
    col "$f" N,causal,time_ms_median,tflops,rel_err kernel=flash_v2 | awk -F'|' '{
        tol = 1e-5 * ($1 > 1024 ? sqrt($1 / 1024) : 1)
        t = sprintf("%.0e", tol); sub(/e-0/, "e-", t)
        if (NR == 1) printf "| run | ms | TFLOP/s | rel err (tolerance %s) |\n|---|---:|---:|---:|\n", t
        printf "| chapter 03%s | %.3f | %.2f | %.3e, %s |\n", $2 == 1 ? ", causal" : "", $3, $4, $5, $5 + 0 <= tol ? "ok" : "FAILED"
    }'
    caption "$f"
}

# ---- chapter 04 --------------------------------------------------------------------------------------------
# chapter 04's paired layout (the default) over tiles at the article's configuration
block_ch04_tiles() {
    t=$R/ch04/tiles.csv lc=$R/ch04/layouts_causal.csv x=$R/ch04/extra.csv
    tiles='16x16 32x32 64x32 64x64 128x32 128x64'
    best=$(for bt in $tiles; do printf '%s %s\n' "$(pick "$t" time_ms_median br=${bt%x*} bc=${bt#*x})" "$bt"; done |
        sort -n | head -n1 | cut -d' ' -f2)
    row() { # LABEL COLUMN FORMAT [CAUSAL]: one row; the best tile's cell in bold
        printf '| %s |' "$1"
        for bt in $tiles; do
            a="br=${bt%x*} bc=${bt#*x}"
            if [ -z "${4:-}" ]; then v=$(pick "$t" "$2" $a)
            elif [ $bt = 32x32 ]; then v=$(pick "$lc" "$2" kernel=flash_v4_paired $a)
            else v=$(pick "$x" "$2" kernel=flash_v4_paired H=64 N=1024 d=64 causal=1 $a)
            fi
            v=${v:+$(fmt "$3" "$v")}
            [ -n "$v" ] && [ $bt = "$best" ] && v="**$v**"
            printf '%s|' " ${v:+$v }"
        done
        echo
    }
    printf '| Br x Bc |'; for bt in $tiles; do printf ' %s |' "${bt%x*} x ${bt#*x}"; done
    printf '\n|---|'; for bt in $tiles; do printf -- '---:|'; done; echo
    row ms time_ms_median %.3f
    row TFLOP/s tflops %.2f
    row 'causal ms' time_ms_median %.3f causal
    caption "$t" "$lc" "$x"
}

# chapter 04 over N and d beside chapter 03 and PyTorch. A cell: FILE:COL=VALUE,... (the run's time), or - (none);
# ours (the two paired columns) in bold where faster
block_ch04_shapes() {
    printf '| shape (B=10, fp32) | ch03 ms | paired 32 x 32 ms | paired 64 x 64 ms | PyTorch SDPA memory-efficient ms | PyTorch 3-op ms |\n'
    printf '|---|---:|---:|---:|---:|---:|\n'
    p=ch04/peers_64.csv:peer= e=ch04/extra.csv:kernel=flash_v4_paired,br=64,bc=64
    while read -r label c3 p32 p64 eff op3; do
        c3=$([ "$c3" = - ] || cell "$c3") p32=$(cell "$p32") p64=$(cell "$p64")
        eff=$([ "$eff" = - ] || cell "${p}sdpa_efficient,$eff") op3=$([ "$op3" = - ] || cell "${p}torch_3op,$op3")
        if [ "$(awk -v a="$p64" -v b="$p32" 'BEGIN { print a + 0 < b + 0 }')" = 1 ]; then p64="**$p64**"; else p32="**$p32**"; fi
        printf '| %s |' "$(echo "$label" | tr _ ' ')"
        for v in "$c3" "$p32" "$p64" "$eff" "$op3"; do printf '%s|' " ${v:+$v }"; done
        echo
    done <<ROWS
H=64_N=1024_d=64 ch04/ch03_sweep.csv:H=64 ch04/sweep.csv:H=64 $e,H=64,d=64,causal=0 H=64,causal=0 H=64,causal=0
same,_causal ch03/causal.csv:H=64,N=1024 ch04/causal.csv:H=64 $e,H=64,d=64,causal=1 H=64,causal=1 H=64,causal=1
H=16_N=4096_d=64 ch04/ch03_sweep.csv:H=16 ch04/sweep.csv:H=16 $e,H=16,causal=0 H=16,causal=0 H=16,causal=0
same,_causal - ch04/causal.csv:H=16 $e,H=16,causal=1 H=16,causal=1 H=16,causal=1
H=4_N=16384_d=64 ch04/ch03_sweep.csv:H=4 ch04/sweep.csv:H=4 $e,H=4,causal=0 H=4,causal=0 H=4,causal=0
same,_causal - ch04/causal.csv:H=4 $e,H=4,causal=1 H=4,causal=1 H=4,causal=1
H=64_N=1024_d=32 - ch04/extra.csv:kernel=flash_v4_paired,br=32,d=32 $e,d=32 - -
H=64_N=1024_d=128 - ch04/extra.csv:kernel=flash_v4_paired,br=32,d=128 $e,d=128 - -
ROWS
    caption $R/ch04/ch03_sweep.csv $R/ch03/causal.csv $R/ch04/sweep.csv $R/ch04/causal.csv $R/ch04/extra.csv $R/ch04/peers_64.csv
}

# chapter 04's stall reasons per layout (cycles per issued instruction) and the units' use
block_ch04_stalls() {
    cols=
    for l in naive padded swizzled transposed paired; do cols="$cols $l=ch04/ncu_$l.csv,ch04/ncu_${l}_stalls.csv,flash_v4_kernel"; done
    ncu_table $cols <<ROWS
ncu smsp__average_warp_latency_per_inst_issued.ratio %.2f cycles between two instructions of a warp
stalls ${S}short_scoreboard_per_issue_active.ratio %.2f short_scoreboard (waiting for shared memory)
stalls ${S}mio_throttle_per_issue_active.ratio %.2f mio_throttle (the shared-memory queue full)
stalls ${S}long_scoreboard_per_issue_active.ratio %.2f long_scoreboard (global memory, mostly L2)
stalls ${S}selected_per_issue_active.ratio %.2f selected (issuing)
stalls ${S}not_selected_per_issue_active.ratio %.2f not_selected (eligible, another warp issued)
stalls ${S}dispatch_stall_per_issue_active.ratio %.2f dispatch_stall
ncu l1tex__throughput.avg.pct_of_peak_sustained_active %.1f%% L1/shared-memory unit, % of peak
ncu sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active %.1f%% FMA pipe, % of peak
ncu sm__warps_active.avg.pct_of_peak_sustained_active %.1f%% achieved occupancy
ROWS
    caption -n 'ch04/ncu_{naive,padded,swizzled,transposed,paired}{,_stalls}.csv' "$R/ch04/ncu_naive.csv"
}

# chapter 04's five layouts at the article's configuration: time, causal time, shared-memory loads by ncu and the
# wavefronts the bank model predicts (banks.txt, `./ch04/run --model`); the fastest layout in bold
block_ch04_layouts() {
    t=$R/ch04/layouts.csv tc=$R/ch04/layouts_causal.csv b=$R/ch04/banks.txt
    layouts='naive transposed padded swizzled paired' w=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
    naive=$(pick "$t" time_ms_median kernel=flash_v4_naive)
    best=$(for l in $layouts; do echo "$(pick "$t" time_ms_median kernel=flash_v4_$l) $l"; done | sort -n | head -n1 | cut -d' ' -f2)
    printf '| layout | ms | TFLOP/s | vs naive | causal ms | shared-load requests | wavefronts (ncu) | predicted | conflicts / wavefronts | wavefronts / request |\n'
    printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
    for l in $layouts; do
        n=$R/ch04/ncu_$l.csv
        ms=$(pick "$t" time_ms_median kernel=flash_v4_$l)
        setup=$([ $l = transposed ] && fmt ' (+ %.3f setup)' "$(pick "$t" time_ms_median kernel=k_transpose)")
        printf '%s|%s|%s|%s|%s|%s|%s|%s|%s|%s\n' "$l" "$ms" "$setup" "$(pick "$t" tflops kernel=flash_v4_$l)" \
            "$(pick "$tc" time_ms_median kernel=flash_v4_$l)" "$(ncu "$n" flash_v4_kernel smsp__sass_inst_executed_op_shared_ld.sum)" \
            "$(ncu "$n" flash_v4_kernel $w)" "$(awk -v l=$l '$1 == l && $2 ~ /^[0-9,]+$/ { print $3; exit }' "$b")" \
            "$(ncu "$n" flash_v4_kernel l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum)" "$naive"
    done | with_csv_awk '{
        c = 100 * $9 / $7; s = $1 == best ? "**" : ""
        printf "| %s%s%s | %s%.3f%s%s | %s%.2f%s | %s%.2f%s | %s%.3f%s | %s | %s | %s | " (c >= 10 ? "%.1f" : "%.2f") "%% | %.2f |\n",
            s, $1, s, s, $2, $3, s, s, $4, s, s, $10 / $2, s, s, $5, s, with_commas($6), with_commas($7), $8, c, $7 / $6
    }' -v best="$best"
    caption -n 'ch04/layouts{,_causal}.csv, ch04/ncu_{naive,transposed,padded,swizzled,paired}.csv, ch04/banks.txt' "$t"
}

# ---- chapter 05 --------------------------------------------------------------------------------------------
# The chapter's kernels as bench.sh names them in article.csv (--kernel wmma, mma, mma_async), in the order shown;
# results from before them hold one kernel, flash_tc, and keep the tables they had (ch05_legacy_article).
CH05_KERNELS='flash_wmma flash_mma flash_mma_async'
# ch05_has_kernels CSV: true when CSV holds rows of those kernels
ch05_has_kernels() { col "$1" kernel | grep -Eq '^flash_(wmma|mma|mma_async)$'; }

# chapter 05's kernels at the article's size beside PyTorch's SDPA backends of the same run: one row per kernel,
# storage type and mask, each kernel at the tiles it picks (the br, bc columns)
block_ch05_article() {
    a=$R/ch05/article.csv p=$R/ch05/peers.csv
    ch05_has_kernels "$a" || { ch05_legacy_article; return; }
    printf '| kernel (B=10 H=64 N=1024 d=64) | dtype | mask | Br x Bc | ours ms | TFLOP/s | FA-2 ms | cuDNN ms | mem-efficient ms | vs FA-2 | vs cuDNN |\n'
    printf '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n'
    { col "$p" B,H,N,d,dtype,causal,peer,time_ms_median | sed 's/^/P|/'
      col "$a" kernel,B,H,N,d,dtype,causal,br,bc,time_ms_median,tflops | sed 's/^/O|/'
    } | awk -F'|' -v kernels="$CH05_KERNELS" '
        function r3(x) { return x == "" ? "-" : sprintf("%.3f", x + 1e-9) }
        function ratio(a, b) { return a > 0 && b > 0 ? sprintf("%.2f", a / b) : "-" }
        $1 == "P" { peer[$2 " " $3 " " $4 " " $5 " " $6 " " $7, $8] = $9 }
        $1 == "O" && $3 == 10 && $4 == 64 && $5 == 1024 && $6 == 64 {
            k = $2 " " $7 " " $8; tiles[k] = $10 == "" ? $9 : $9 " x " $10; ms[k] = $11; tf[k] = $12
        }
        END {
            nk = split(kernels, K, " ")
            for (i = 1; i <= nk; i++)
                for (t = 1; t <= 2; t++)
                    for (c = 0; c <= 1; c++) {
                        dt = t == 1 ? "fp16" : "bf16"; k = K[i] " " dt " " c
                        if (!(k in ms)) { print "docs: ch05_article: no run of " K[i] " at " dt " causal=" c > "/dev/stderr"; bad = 1; continue }
                        s = "10 64 1024 64 " dt " " c
                        f = peer[s, "sdpa_flash"]; cu = peer[s, "sdpa_cudnn"]; o = ms[k]
                        printf "|%s| %s | %s | %s | %.3f | %.1f | %s | %s | %s | %s | %s |\n", K[i] == last ? " " : " " K[i] " ",
                            dt, c ? "causal" : "full", tiles[k], o, tf[k], r3(f), r3(cu), r3(peer[s, "sdpa_efficient"]),
                            ratio(f, o), ratio(cu, o)
                        last = K[i]
                    }
            exit bad
        }' || return 1
    caption "$a" "$p"
}

# the 16k-token sweep (B = 16384/N, H = 16) of chapter 05's fastest kernel beside FlashAttention-2 and cuDNN of the
# same run: one row per N, d and storage type, full and causal side by side. The kernel: flash_mma_async, or the
# one kernel (flash_tc) of results from before it.
block_ch05_sweep() {
    s=$R/ch05/sweep.csv p=$R/ch05/peers.csv
    k=flash_mma_async
    ch05_has_kernels "$s" || k=flash_tc
    printf '| N (%s) | B | d | dtype | full ms | TFLOP/s | vs FA-2 | vs cuDNN | causal ms | TFLOP/s | vs FA-2 | vs cuDNN |\n' "$k"
    printf '|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n'
    { col "$p" B,H,N,d,dtype,causal,peer,time_ms_median | sed 's/^/P|/'
      col "$s" B,H,N,d,dtype,causal,time_ms_median,tflops "kernel=$k" | sed 's/^/O|/'
    } | awk -F'|' '
        function ratio(a, b) { return a > 0 && b > 0 ? sprintf("%.2f", a / b) : "-" }
        function cell(c,    s) {
            s = key " " c
            if (!(s in ms)) return " - | - | - | - |"
            return sprintf(" %.3f | %.1f | %s | %s |", ms[s], tf[s], ratio(peer[s, "sdpa_flash"], ms[s]),
                ratio(peer[s, "sdpa_cudnn"], ms[s]))
        }
        $1 == "P" { peer[$2 " " $3 " " $4 " " $5 " " $6 " " $7, $8] = $9 }
        $1 == "O" {
            r = $2 " " $3 " " $4 " " $5 " " $6
            ms[r " " $7] = $8; tf[r " " $7] = $9
            if (!(r in seen)) { seen[r] = 1; order[++n] = r }
        }
        END {
            if (!n) { print "docs: ch05_sweep: no sweep rows" > "/dev/stderr"; exit 1 }
            for (i = 1; i <= n; i++) {
                key = order[i]; split(key, f, " ")
                printf "|%s| %s | %s | %s |%s%s\n", f[3] == last ? " " : " " f[3] " ", f[1], f[4], f[5], cell(0), cell(1)
                last = f[3]
            }
        }' || return 1
    caption "$s" "$p"
}

# results from before the three kernels: flash_tc beside PyTorch's SDPA backends of the same run, one row per
# "B H N d dtype causal Br" below
ch05_legacy_article() {
    a=$R/ch05/article.csv s=$R/ch05/sweep.csv p=$R/ch05/peers.csv
    printf '| shape | dtype | mask | Br | ours ms | TFLOP/s | FA-2 ms | cuDNN ms | mem-efficient ms | vs FA-2 | vs cuDNN |\n'
    printf '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n'
    { col "$p" B,H,N,d,dtype,causal,peer,time_ms_median | sed 's/^/P|/'
      col "$a" B,H,N,d,dtype,causal,br,time_ms_median,tflops | sed 's/^/O|/'
      col "$s" B,H,N,d,dtype,causal,br,time_ms_median,tflops | sed 's/^/O|/'
      printf 'R|%s\n' '10 64 1024 64 fp16 0 64' '10 64 1024 64 fp16 1 64' '10 64 1024 64 bf16 0 64' \
          '10 64 1024 64 bf16 1 64' '16 16 1024 128 fp16 0 128' '4 16 4096 64 fp16 0 128' '4 16 4096 128 fp16 0 128' \
          '4 16 4096 128 fp16 1 128' '1 16 16384 64 bf16 0 128' '1 16 16384 128 fp16 0 128' '1 16 16384 128 bf16 1 128'
    } | awk -F'|' '
        # 3 decimals, a 5 in the fourth (the peers file has four) rounded up: 0.5075 -> 0.508
        function r3(x) { return sprintf("%.3f", x + 1e-9) }
        $1 == "P" { peer[$2 " " $3 " " $4 " " $5 " " $6 " " $7, $8] = $9 }
        $1 == "O" { k = $2 " " $3 " " $4 " " $5 " " $6 " " $7 " " $8; ms[k] = $9; tf[k] = $10 }
        $1 == "R" {
            split($2, r, " "); k = r[1] " " r[2] " " r[3] " " r[4] " " r[5] " " r[6]
            if (!(($2) in ms)) { print "docs: ch05_article: no run of ours at " $2 > "/dev/stderr"; exit 1 }
            shape = sprintf("B=%s H=%s N=%s d=%s", r[1], r[2], r[3], r[4])
            f = peer[k, "sdpa_flash"]; c = peer[k, "sdpa_cudnn"]; o = ms[$2]
            printf "|%s| %s | %s | %s | %.3f | %.1f | %s | %s | %s | %.2f | %.2f |\n", shape == last ? " " : " " shape " ",
                r[5], r[6] ? "causal" : "full", r[7], o, tf[$2], r3(f), r3(c), r3(peer[k, "sdpa_efficient"]), f / o, c / o
            last = shape
        }' || return 1
    caption "$a" "$s" "$p"
}
