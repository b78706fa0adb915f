#!/usr/bin/env bash
# report.sh [RESULTS_DIR]: the claims of ARTICLES.md beside this book's model and measurements (`make report`).
#
#   RESULTS_DIR   a GPU's results folder (default: results/latest, the last GPU run); it is only read, except
#                 for RESULTS_DIR/REPORT.md, which this script writes (REPORT=FILE to write elsewhere)
#   ARTICLES=FILE the claims (default ARTICLES.md); every id there gets a row, a missing one is an error
#
# No GPU needed. One row per claim id of ARTICLES.md: the article's value (read from ARTICLES.md itself with a
# pattern, so a value quoted here is one the article gives), our model value (from the chapter programs'
# `--model --csv -` at the article's configuration or the claim's shape, run here), our measured value and the
# committed file it comes from, measured / article, the chapter and a note. Then PyTorch (peers.csv) beside our
# best kernel of each chapter that timed it, from the same run.
#
# How it works: facts first (key = value, from the programs and the results files; `fact KEY` in the table
# below substitutes them as {KEY}), then the table CLAIMS, one line per id, rendered by report.awk.
# A claim whose facts are missing (a results file that this GPU's folder lacks) says which file.
set -u -o pipefail
cd "$(dirname "$0")/../.."
. common/scripts/bench-lib.sh

R=${1:-results/latest}
[ -d "$R" ] || { echo "report: no results folder '$R'" >&2; exit 2; }
R=$(cd "$R" && pwd -P)
case $R in "$(pwd -P)"/*) R=${R#"$(pwd -P)"/} ;; esac   # paths in the report relative to the repository
ARTICLES=${ARTICLES:-ARTICLES.md}
REPORT=${REPORT:-$R/REPORT.md}
[ -f "$ARTICLES" ] || { echo "report: no $ARTICLES" >&2; exit 2; }
for c in 00 02 03 04; do
    [ -x ch$c/run ] || { echo "report: ch$c/run is not built (make first)" >&2; exit 2; }
done

FACTS=$(mktemp "${TMPDIR:-/tmp}/report.XXXXXX") || exit 1
trap 'rm -f "$FACTS"' EXIT
put() { [ -n "${2:-}" ] && printf '%s\t%s\n' "$1" "$2" >>"$FACTS"; }
num() { tr -d ',' <<<"$1"; }

# ---- model: the chapter programs, run here -------------------------------------------------------------
# model_csv CH KERNEL COLS ARGS...: columns of one kernel's --model --csv row (stdout holds the text too: the CSV
# lines are the ones that start with the chapter's number).
model_out() { local ch=$1; shift; ./ch$ch/run --model "$@" --csv - 2>&1; }
model_csv() {
    local out=$1 kernel=$2 cols=$3
    grep -E '^(chapter,kernel,|[0-9][0-9],)' <<<"$out" |
        awk -f common/scripts/csv.awk -f common/scripts/csv_get.awk -v columns="$cols" -v where="kernel=$kernel"
}
# first number (commas removed) of the first line matching an extended regex, captured after PREFIX
grab() { grep -m1 -oE -e "$2" <<<"$1" | grep -oE '[0-9][0-9,]*\.?[0-9]*' | sed -n "${3:-1}p" | tr -d ','; }

m02=$(model_out 02)
IFS='|' read -r r w < <(model_csv "$m02" flash_v1 model_read_bytes,model_write_bytes)
put m02_read "$r"; put m02_write "$w"
put m02_blocks "$(grab "$m02" '[0-9,]+ blocks of [0-9]+ threads, one per head')"
put m02_tc "$(grab "$m02" 'Tc x Tr = [0-9]+')"
put m02_smem "$(grab "$m02" 'shared memory per block: [0-9,]+ B')"
put m02_smem_art "$(grab "$m02" "Triton v1.*: [0-9,]+ B" 5)"
put m02_occ_art "$(grab "$m02" "Triton v1.*occupancy" 7)"
put m02_occ_own "$(grab "$m02" "this kernel: .*occupancy" 5)"
for row in "$(grep -m1 'RTX 2070' <<<"$m02")" "$(grep -m1 'A100' <<<"$m02")" "$(grep -m1 'H100' <<<"$m02")"; do
    case $row in *2070*) k=rtx ;; *A100*) k=a100 ;; *) k=h100 ;; esac
    # the datasheet row: HBM GB/s, FP32 TFLOP, FP16 tensor TFLOP, FP32 ridge, L2 MB (after the sm_NN column)
    set -- $(sed 's/.*sm_[0-9]*//' <<<"$row")
    put ${k}_gbs "$1"; put ${k}_fp32 "$2"; put ${k}_tc "$3"; put ${k}_l2 "$5"
done

m03=$(model_out 03)
IFS='|' read -r r w ir < <(model_csv "$m03" flash_v2 model_read_bytes,model_write_bytes,ideal_read_bytes)
put m03_read "$r"; put m03_write "$w"; put m03_ideal_read "$ir"
put m03_blocks "$(grab "$m03" '[0-9,]+ blocks of [0-9]+ threads, one per query block')"

# chapter 04: the bank model (one --model run prints every layout): requests, wavefronts, conflicts, rate, N-way
m04=$(model_out 04)
for l in naive transposed paired; do
    set -- $(awk -v l=$l '$1 == l && $2 ~ /^[0-9,]+$/ { gsub(/[,%]/, ""); print $2, $3, $4, $5, $6; exit }' <<<"$m04")
    put m04_wf_$l "${2:-}"; put m04_rate_$l "${4:-}"; put m04_way_$l "${5:-}"
done

# chapter 00 at article 2's worked example (N = 4096, d = 128, one head, fp16)
m00=$(model_out 00 --dtype fp16 --batch 1 --heads 1 --seq 4096 --dim 128)
put m00_art_total "$(grab "$m00" 'total [0-9,]+ \(8Nd \+ 10N\^2')"
IFS='|' read -r ir iw < <(model_csv "$m00" total ideal_read_bytes,ideal_write_bytes)
put m00_comp_total "$((ir + iw))"
put m00_mem_ms "$(grab "$m00" '-> [0-9.]+ ms \(compulsory')"
put m00_cmp_ms "$(grab "$m00" 'vs compute [0-9,]+ FLOP -> [0-9.]+ ms' 2)"
put m00_mem_over_cmp "$(grab "$m00" 'ms: [0-9.]+x \(')"
put m00_int_qk "$(grab "$m00" 'S = QK\^T [0-9.]+ \(2d')"
put m00_int_sm "$(grab "$m00" 'softmax [0-9.]+ \(5 ops')"
put m00_ridge_a100 "$(grab "$m00" "A100 fp16 tensor [0-9]+" 3)"
put m00_ridge_h200 "$(grab "$m00" "H200 fp16 tensor [0-9]+" 3)"
# IO-scores at its own shape: S = the first kernel's writes, N = 8192, 32 heads, fp16
m00s=$(model_out 00 --dtype fp16 --batch 1 --heads 32 --seq 8192 --dim 64)
put m00_s32 "$(model_csv "$m00s" qk_gemm model_write_bytes)"
# IO-flashbytes at its shape (N = 4096, d = 128, one head; fp32, the dtype of chapter 03): compulsory bytes of
# standard attention (chapter 00) over FlashAttention's (chapter 03), and the bytes each code requests
m00f=$(model_out 00 --batch 1 --heads 1 --seq 4096 --dim 128)
m03f=$(model_out 03 --batch 1 --heads 1 --seq 4096 --dim 128)
IFS='|' read -r a b c d < <(model_csv "$m00f" total ideal_read_bytes,ideal_write_bytes,model_read_bytes,model_write_bytes)
IFS='|' read -r e f g h < <(model_csv "$m03f" flash_v2 ideal_read_bytes,ideal_write_bytes,model_read_bytes,model_write_bytes)
put m_flash_comp "$(awk -v x=$((a + b)) -v y=$((e + f)) 'BEGIN { if (y > 0) printf "%.1f", x / y }')"
put m_flash_req "$(awk -v x=$((c + d)) -v y=$((g + h)) 'BEGIN { if (y > 0) printf "%.2f", x / y }')"

# ---- measured: the committed results files ---------------------------------------------------------------
ncu_m() { [ -s "$1" ] && ncu_value "$1" "$2" "$3"; }
row_time() { [ -s "$1" ] && csv_rows "$1" time_ms_median "kernel=$2" | head -n1; }
CH=$R
put gpu "$(csv_field "$CH/ch03/run.csv" gpu)"
put meas_gbs "$(csv_rows "$CH/ch02/run.csv" ceiling_gbs kernel=flash_v1 | head -n1)"
put meas_tflops "$(csv_rows "$CH/ch02/run.csv" ceiling_tflops kernel=flash_v1 | head -n1)"
if [ -s "$CH/ch02/ncu_article.csv" ]; then
    IFS='|' read -r _ r w _ < <(ncu_dram "$CH/ch02/ncu_article.csv" | grep '^flash_v1_kernel|')
    put d02_read "$r"; put d02_write "$w"
fi
put n02_occ "$(ncu_m "$CH/ch02/ncu_article.csv" flash_v1_kernel sm__maximum_warps_per_active_cycle_pct)"
put n02_regs "$(ncu_m "$CH/ch02/ncu_article.csv" flash_v1_kernel launch__registers_per_thread)"
put t02 "$(row_time "$CH/ch02/run.csv" flash_v1)"
put t03 "$(row_time "$CH/ch03/run.csv" flash_v2)"
put rel_max "$(for c in 00 01 02 03 04; do csv_rows "$CH/ch$c/run.csv" rel_err; done | awk 'NF && $1 + 0 > m { m = $1 + 0 } END { if (NR) printf "%.1e", m }')"
N3=$CH/ch03/ncu.csv
put d03_read "$(ncu_m "$N3" flash_v2_kernel dram__bytes_read.sum)"
put d03_write "$(ncu_m "$N3" flash_v2_kernel dram__bytes_write.sum)"
put n03_req "$(ncu_m "$N3" flash_v2_kernel smsp__sass_inst_executed_op_shared_ld.sum)"
put n03_wf "$(ncu_m "$N3" flash_v2_kernel l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum)"
put n03_cf "$(ncu_m "$N3" flash_v2_kernel l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum)"
put n03_mio "$(ncu_m "$N3" flash_v2_kernel smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio)"
for l in transposed paired; do
    f=$CH/ch04/ncu_$l.csv
    put n04_${l}_wf "$(ncu_m "$f" flash_v4_kernel l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum)"
    put n04_${l}_cf "$(ncu_m "$f" flash_v4_kernel l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum)"
    put n04_${l}_mio "$(ncu_m "$f" flash_v4_kernel smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio)"
    put n04_${l}_occ "$(ncu_m "$f" flash_v4_kernel sm__maximum_warps_per_active_cycle_pct)"
    put n04_${l}_regs "$(ncu_m "$f" flash_v4_kernel launch__registers_per_thread)"
done
put t04_naive "$(row_time "$CH/ch04/layouts.csv" flash_v4_naive)"
put t04_transposed "$(row_time "$CH/ch04/layouts.csv" flash_v4_transposed)"
if [ -s "$CH/ch00/profile.csv" ]; then
    IFS='|' read -r r w < <(csv_rows "$CH/ch00/profile.csv" dram_read_bytes,dram_write_bytes kernel=total)
    put d00_total "$((r + w))"
fi
put d03_total "$(awk -v r="$(grep -P '^d03_read\t' "$FACTS" | cut -f2)" -v w="$(grep -P '^d03_write\t' "$FACTS" | cut -f2)" \
    'BEGIN { if (r != "" && w != "") printf "%.0f", r + w }')"
put art_N "$(csv_field "$CH/ch03/run.csv" N)"
put art_d "$(csv_field "$CH/ch03/run.csv" d)"
# the peers of the book's earlier table (ARTICLES.md), measured by peers.py in chapter 03's bench
P3=$CH/ch03/peers.csv
put p3_3op "$([ -s "$P3" ] && csv_rows "$P3" time_ms_median,causal peer=torch_3op | awk -F'|' '$2 == 0 { print $1; exit }')"
put p3_eff "$([ -s "$P3" ] && csv_rows "$P3" time_ms_median,causal peer=sdpa_efficient | awk -F'|' '$2 == 0 { print $1; exit }')"
put p_fp16 "$(cat "$CH"/ch0*/peers*.csv 2>/dev/null | awk -F, '$8 == "fp16"' | head -n1)"

# ---- the claims ------------------------------------------------------------------------------------------
# id | claim (short) | article: an extended regex matched in the id's row of ARTICLES.md (shown as found)
#    | model (template: {key} = a fact; empty: none) | measured (template) | source of the measurement
#    | ratio: measured / article as KEY/ARTICLE[N] (the N-th number of the article's match; or KEY/KEY)
#    | chapter | note (template; empty where they agree)
# A template whose facts are missing becomes "not in this results folder". A measured value that no chapter
# takes says why in its template, prefixed by "none:".
CLAIMS=$(cat <<'EOF'
V-setup|the article's configuration|B = 10 batches, H = 64 heads, N = 1024 tokens, d = 64|chapters' default: N={art_N} d={art_d}|run at N={art_N} d={art_d} on {gpu}|chNN/run.csv||all|the GPU differs: RTX 2070 ({rtx_gbs} GB/s, {rtx_fp32} TFLOP/s fp32 datasheet) vs {gpu} (copy {meas_gbs} GB/s, FFMA {meas_tflops} TFLOP/s measured)
V1-order|v1 loop order: K/V outer, Q inner, grid (B, H)|grid is \(B, H\)|grid (B, H): {m02_blocks} blocks, {m02_tc} K/V steps|none: a design, implemented (flash_v1)|||02|
V1-bytes|v1 HBM traffic (read; write)|[0-9.]+ GB read, [0-9.]+ GB written|{m02_read} B; {m02_write} B|DRAM {d02_read} B; {d02_write} B|ch02/ncu_article.csv, ch02/summary.txt|d02_read/1e9/ARTICLE1|02|the same loop order moves the same bytes; article / model: read {ARTICLE1*1e9/m02_read}, write {ARTICLE2*1e9/m02_write}
V1-smem|v1 shared memory per block; occupancy on sm_75|about 28 KB of shared memory per block|Triton v1 {m02_smem_art} B, {m02_occ_art}% on sm_75 (this kernel {m02_smem} B, {m02_occ_own}%)|theoretical occupancy {n02_occ}% on {gpu}|ch02/ncu_article.csv||02|on the H200 registers ({n02_regs}/thread), not shared memory, limit the blocks per SM
V1-divide|v1 normalises O in the hot loop|a reciprocal and a multiply||none: a design (SASS, chapter 02 README), no number|||02, 03|
V2-reorder|v2: Q_i on chip, O in registers, one division|grid is \(N / Br, B H\)|grid (Tr, B*H): {m03_blocks} blocks|none: a design, implemented (flash_v2)|||03|
V2-grid|thread blocks v1 -> v2|[0-9,]+ in v1, [0-9,]+ in v2|{m02_blocks} -> {m03_blocks}|none: ncu runs do not record the grid; the model is the launch's own arithmetic||m03_blocks/ARTICLE2|03|
V2-reads|v2 DRAM reads|[0-9.]+ MB from DRAM|compulsory {m03_ideal_read} B (requested {m03_read} B)|DRAM {d03_read} B|ch03/ncu.csv|d03_read/1e6/ARTICLE1|03|ours is the compulsory Q+K+V (the H200 L2 holds K, V); the article's is below compulsory (chapter 03)
V2-time|v1 -> v2 time (ms)|v1 [0-9.]+ ms, v2 [0-9.]+ ms||v1 {t02} ms -> v2 {t03} ms ({t02/t03}x)|ch02/run.csv, ch03/run.csv|t02/t03/ARTICLE1*ARTICLE2|02, 03|article / ours: v1 {ARTICLE1/t02}x, bandwidth ratio {meas_gbs/rtx_gbs}x: {ARTICLE1/t02~meas_gbs/rtx_gbs}; v2 {ARTICLE2/t03}x, FLOP ratio {meas_tflops/rtx_fp32}x: {ARTICLE2/t03~meas_tflops/rtx_fp32} (v2 is held by bank conflicts, chapter 04)
V2-conflicts|v2 shared-load conflicts (rate; N-way)|conflict rate of [0-9.]+%|bank model {m04_rate_naive}%; {m04_way_naive}-way|{n03_cf*100/n03_wf}%; {n03_wf/n03_req}-way ({n03_req} requests)|ch03/ncu.csv|n03_cf*100/n03_wf/ARTICLE1|03, 04|same requests as the article; more wavefronts per request on sm_90 (chapter 04 models every layout)
V2-pretranspose|pre-transposed K: time; speedup|156.44 ms -> [0-9]+ ms|predicted wavefronts {m04_wf_naive} -> {m04_wf_transposed}|{t04_naive} -> {t04_transposed} ms (k_transpose setup not included) ({t04_naive/t04_transposed}x), conflicts {n04_transposed_cf*100/n04_transposed_wf}%|ch04/layouts.csv, ch04/ncu_transposed.csv|t04_naive/t04_transposed/ARTICLE1*ARTICLE2|04|the speedup is smaller here: the conflicts were a smaller share of the H200's time
V2-mio|MIO throttle after the fix (cycles)|warps waiting [0-9.]+ cycles||{n04_transposed_mio} cycles (before the fix {n03_mio})|ch04/ncu_transposed.csv, ch03/ncu.csv|n04_transposed_mio/ARTICLE1|03, 04|gone on the H200: the issue slots are next (chapter 04)
V2-tensorcores|sm_80+: tensor cores, async copies, FP8|FFMA instructions, not tensor-core ones||none: no chapter in this tree uses tensor cores (chapter 05)|||05|
V-guidance|tuning targets: conflicts < 10%, occupancy > 50%|bank-conflict rate below [0-9]+%||paired: conflicts {n04_paired_cf*100/n04_paired_wf}%, theoretical occupancy {n04_paired_occ}%|ch04/ncu_paired.csv||04|conflicts met; occupancy is not ({n04_paired_regs} registers/thread), yet paired is the fastest layout
IO-hierarchy|HBM bandwidth and L2, A100 / H100|2.0 TB/s \(A100\) or 3.35 TB/s|datasheet: A100 {a100_gbs} GB/s {a100_l2} MB L2, H100 {h100_gbs} GB/s {h100_l2} MB L2|copy {meas_gbs} GB/s on {gpu}|ch02/run.csv (ceiling_gbs)||00|a fact; the H200's is measured, not the A100's or H100's
IO-ridge|roofline ridge, FLOP/B (A100; H100)|= 156 FLOP/B; H100, 990 / 3.35 = 296|A100 {m00_ridge_a100}; H100 {h100_tc*1000/h100_gbs}|fp32 FFMA {meas_tflops*1000/meas_gbs} on {gpu}|ch02/run.csv (ceilings)|m00_ridge_a100/ARTICLE1|00|the datasheet's A100 row is 2039 GB/s, not 2.0 TB/s
IO-intensity|intensity QK^T; softmax; PV (fp16)|QK\^T about d, softmax about 1, PV about d|{m00_int_qk}; {m00_int_sm}; {m00_int_qk} (N=4096, d=128)|none: intensity is arithmetic|||00|~d counts multiply-adds; per byte in fp16 the limit is 2d/e = d
IO-3kernels|standard attention bytes, fp16, N=4096 d=128|total 8Nd \+ 10N\^2|article's count {m00_art_total} B; compulsory {m00_comp_total} B (8Nd + 8N^2)|none: the compulsory count is a model; chapter 00 measures its own code (ch00/profile.csv)||m00_comp_total/m00_art_total|00|the article's step 3 counts P twice
IO-example|A100, N=4096 d=128: memory vs compute time|memory time about [0-9.]+ ms against compute time about [0-9.]+ ms|memory {m00_mem_ms} ms vs compute {m00_cmp_ms} ms: {m00_mem_over_cmp}x|none: an A100 example; no run on an A100||m00_mem_ms/ARTICLE1|00|
IO-scores|S at N=8192 fp16: per head; 32 heads|[0-9]+ MB per head, [0-9]+ GB for 32 heads|{m00_s32/32} B; {m00_s32} B (qk_gemm writes, 32 heads)|none: chapter 03's bench records the N=65536 case that does not fit (ch03/summary.txt)||m00_s32/1073741824/ARTICLE2|00|MB and GB here are MiB and GiB
IO-tiling|Tc = ceil(N / Bc)|Tc = ceil\(N / Bc\)|Tc = {m02_tc} at N={art_N}, Bc=32|none: arithmetic|||02, 03|
IO-flashbytes|IO reduction N/d at N=4096 d=128|The IO reduction is N / d: [0-9]+x|compulsory {m_flash_comp}x; requested by chapter 03 {m_flash_req}x|DRAM ch00 {d00_total} B / ch03 {d03_total} B = {d00_total/d03_total}x at N={art_N} d={art_d}|ch00/profile.csv, ch03/ncu.csv||00, 02, 03|compulsory N/d + 1; chapter 03 re-reads K, V per Q block (the L2 absorbs it)
IO-exact|FlashAttention output = standard attention's|identical to standard attention||largest rel err {rel_max} vs float64|ch00..ch04/run.csv||01-03|
IO-hopper|H100 TMA and asynchronous copies|TMA and asynchronous copies||none: no chapter in this tree uses TMA|||-|
PEER-3op-fp32|PyTorch 3 ops, fp32, article config|7.12 ms||{p3_3op} ms|ch03/peers.csv|p3_3op/ARTICLE1|03|
PEER-sdpa-fp32|PyTorch SDPA efficient, fp32|5.02 ms||{p3_eff} ms|ch03/peers.csv|p3_eff/ARTICLE1|03|
PEER-3op-fp16|PyTorch 3 ops, fp16|2.52 ms||none: the committed peers CSVs hold fp32 runs only|||-|
PEER-flash-fp16|PyTorch SDPA flash, fp16|0.622 ms||none: the committed peers CSVs hold fp32 runs only|||-|
PEER-3op-n4096|PyTorch 3 ops, fp16, N=4096 d=128|2.89 ms||none: the committed peers CSVs hold fp32 runs only|||-|
EOF
)

# ---- PyTorch beside our best kernel, from the same run ---------------------------------------------------
# peer file | our files of the same run | our kernels (regex) | chapter
PEERS=$(cat <<'EOF2'
ch03/peers.csv|ch03/article.csv ch03/causal.csv|^flash_v2$|03
ch04/peers.csv|ch04/layouts.csv ch04/layouts_causal.csv|^flash_v4_|04
ch04/peers_64.csv|ch04/extra.csv|^flash_v4_|04
EOF2
)
peer_rows() {
    local pf ours kre ch files f
    while IFS='|' read -r pf ours kre ch; do
        [ -s "$R/$pf" ] || { echo "+PyTorch ($pf)|PyTorch beside chapter $ch|||none: $pf is not in this results folder|$pf|||"; continue; }
        files=
        for f in $ours; do [ -s "$R/$f" ] && files+=" $R/$f"; done
        # our rows: shape|causal|kernel|ms, the fastest kernel per shape and causal; then the peers of that shape
        { for f in $files; do csv_rows "$f" B,H,N,d,causal,kernel,time_ms_median,br,bc,setup | sed 's/^/O|/'; done
          csv_rows "$R/$pf" B,H,N,d,causal,peer,time_ms_median,dtype | sed 's/^/P|/'; } |
        awk -F'|' -v pf="$pf" -v ours="$ours" -v kre="$kre" -v ch="$ch" '
            $1 == "O" && $7 ~ kre && $11 != 1 { k = $2 " " $3 " " $4 " " $5 "|" $6
                if (!(k in best) || $8 + 0 < best[k] + 0) { best[k] = $8; bk[k] = $7 " " $9 "x" $10 } }
            $1 == "P" { k = $2 " " $3 " " $4 " " $5 "|" $6; if (!(k in order)) order[k] = ++n; key[order[k]] = k
                pm[k, $7] = $8; if ($7 == "torch_3op" || $7 == "sdpa_efficient") peers[k] = peers[k] " " $7; dt[k] = $9 }
            END {
                for (i = 1; i <= n; i++) {
                    k = key[i]; split(k, s, "|"); split(s[1], b, " ")
                    shape = sprintf("B=%s H=%s N=%s d=%s %s%s", b[1], b[2], b[3], b[4], dt[k], s[2] == 1 ? " causal" : "")
                    if (!(k in best)) { printf "+PyTorch ch%s|%s|||none: no run of ours at this shape in %s|%s|||\n", ch, shape, ours, pf; continue }
                    m = sprintf("ours %s %s ms", bk[k], best[k])
                    np = split(peers[k], p, " ")
                    for (j = 1; j <= np; j++)
                        m = m sprintf("; %s %s ms (ours / it %.2f)", p[j], pm[k, p[j]], best[k] / pm[k, p[j]])
                    printf "+PyTorch ch%s|%s: our fastest kernel vs PyTorch|||%s|%s, %s||%s|same run; fp32 on both sides\n", ch, shape, m, pf, ours, ch
                }
            }'
    done <<<"$PEERS"
}

{ printf '%s\n' "$CLAIMS"; peer_rows; } >"$FACTS.claims"
trap 'rm -f "$FACTS" "$FACTS.claims"' EXIT
mkdir -p "$(dirname "$REPORT")"
awk -f common/scripts/csv.awk -f common/scripts/report.awk -v results="$R" \
    "$FACTS" "$ARTICLES" "$FACTS.claims" >"$REPORT.tmp"
rc=$?
mv "$REPORT.tmp" "$REPORT"
cat "$REPORT"
echo
echo "report: written to $REPORT"
exit $rc
