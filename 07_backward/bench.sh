#!/usr/bin/env bash
# bench.sh OUTDIR [STAGE...]: chapter 07's measurements on a GPU (the backward pass: steps 1-2 in fp32, steps 3-18,
# tensor_cores, dq_vectors, wide_blocks, on an sm_90 GPU wgmma, lean_loop, dq_bulk, dq_overlap and warp_specialized,
# then warp_tiles, lean_tiles, kv_registers, dq_pairs, dq_quads, stat_copies, dq_squares and matrix_stores, in fp16
# and bf16), with the PyTorch peers' backward in the same run. From the repository root after
# make ch07 (and tests/bin/test_ch07 for the tests stage, Criterion's libraries on the library path where the GPU
# machine lacks them). OUTDIR is a results folder (results/<GPU>); everything goes to OUTDIR/ch07/. The stages, all
# of them without STAGE (in this order); each replaces its own rows and files, so that a stage can be run again
# alone:
#   tests     tests_gpu.log (+ .tap): REQUIRE_GPU=1 tests/bin/test_ch07 --filter=gpu/*; compute-sanitizer memcheck,
#             racecheck and synccheck of every step and of dq_pass (step 2 with --dq pass) at two small ragged
#             shapes each, the Hopper steps and steps 11-18 at a third whose blocks use each buffer or stage twice (steps 13
#             to 18 at a fourth, d = 64, where their Br is 128):
#             sanitizer_<step>_<tool>_<shape>.log (the names chapter 06's README block reads), one line each in
#             sanitizer_summary.txt; handover.txt: racecheck and synccheck on step 10's hand-over of dQ_s alone
#             (tests/ch07/handover.cu), its three ways to meet DQ_FREE, then step 10's with 2 to 8 consumer warps,
#             its proxy fence, both sides waiting on DQ_READY, the consumers' own barrier; stage_release.txt: the
#             same tools on step 10's stages of L_i and D_i alone (tests/ch07/stage_release.cu), the three ways a
#             consumer warp can release one; tests_gpu.provenance.json, the stage's record (the timings'
#             provenance.json is left as it was)
#   article   article.csv: the article's problem size (B=10 H=64 N=1024 d=64), full and causal: steps naive and
#             flash in fp32, and flash with --dq pass (dQ in a kernel of its own: the README's dQ comparison), the tensor-core steps (3-18) in bf16 and fp16; the peers' backward at
#             the same shapes: in fp32 the 3-op, memory-efficient and math backends, in bf16 and fp16
#             FlashAttention-2, cuDNN and memory-efficient (the tensor-core steps' targets). The flash step runs at Br = Bc = 64 here, in the sweeps and
#             in ncu (tiles_for, below)
#   tiles     tiles.csv: the article's problem size, the flash step at each of its tiles (Br, Bc in {32, 64}), full
#             and causal
#   hopper    hopper.csv (sm_90 only): the Hopper steps one after another (wgmma .. warp_specialized) at points of
#             the sweeps, bf16, d = 64 and 128, N = 1024, 4096 and 16384, full and causal, 5 repetitions, unchecked
#             (every step is checked in the tests and article stages, the last in the sweeps): what each step buys
#             over the one before, at the d = 128 the article's size does not have
#   sweep64, sweep128 (sweep: both)
#             sweep.csv: 16k tokens (B = 16384/N, H = 16), N = 512 .. 16384, at that d, full and causal: the flash
#             step at every N, the naive step up to N = 2048, the last mma.sync step (matrix_stores) and the last
#             Hopper step (warp_specialized, on sm_90), the goals' (SWEEP_TC="wide_blocks dq_overlap" picks others)
#             at every N in bf16 and fp16;
#             the peers' backward at the same shapes: fp32 memory-efficient at every N, fp32 math and 3-op up to
#             N = 2048, bf16 and fp16 flash, cuDNN and memory-efficient at every N
#   ncu       ncu/<row>.csv, concatenated in ncu.csv: Nsight Compute (--clock-control none), one launch of each
#             backward kernel of every step and of dq_pass (a row each, named as in step_table below: naive_p ..
#             naive_dk, flash_bwd_d, flash_bwd, flash_dq, flash_dkdv, tc_bwd_d, tc_bwd, then each later step's; the
#             tensor-core steps in fp16) at the article's size, full mask: DRAM bytes, l1tex global load/store
#             bytes, the bytes of global reductions (op_red: the fp32 atomics into dQ) and atomics, shared loads,
#             occupancy, time; ncu/<row>_stalls.csv and ncu_stalls.csv: the stall reasons of every row but the
#             naive step's; ncu_kernels.txt: the kernel function each row ran; ncu_run.csv: every step at that shape
#             (model and counted bytes, timing) for the side-by-side; on sm_90, ncu_sass_tc_ws_bwd.txt: where the last
#             Hopper step's warps wait, instruction by instruction (ncu's source counters of one launch at d = 128,
#             N = 4096, bf16, full, B = 4, H = 16, where its goal against cuDNN is; book.py ncu-sass)
#   summary   summary.txt: each backward of ours beside every peer's fastest round at the same shape and dtype,
#             as ours / peer (below 1: ours faster); the goals: fp32 flash no slower than the memory-efficient
#             backend in fp32 at the article's size, the last mma.sync step (matrix_stores) >= 1.00x
#             FlashAttention-2's backward (sdpa_flash) at every point (article and sweep, bf16 and fp16, full and
#             causal), and the last Hopper step (warp_specialized) the same and >= 0.80x cuDNN's at d = 128 from
#             N = 4096 (steps 6 to 9 too, where they ran); the 16-bit peers;
#             the ncu blocks
# peers.csv: common/scripts/peers.py --backward (rows sdpa_efficient_bwd, sdpa_flash_bwd, ...: the gradient call
# alone, timed the book's way, FLOPs 10 B H N^2 d), in ROUNDS rounds (default 3: one process per round for all of a
# stage's shapes), a row per round; the summary compares with each peer's fastest round (the side that favours the
# peer; chapter 06 saw cuDNN's median move 7-25% between rounds where ours moved under 1%).
#
# Our rows (the program's CSV): forward (a setup row: the forward that makes O and L, outside the total; fp32 in every
# step), the step's kernels (naive_p .. naive_dk, flash_bwd_d and flash_bwd, or tc_bwd_d and tc_bwd, tc_vec_bwd or
# tc_wide_bwd, ...), then backward
# (the backward alone: the total the summary compares). Repetitions: 20 at the article's size; in the sweep 10 up to
# N = 2048, 5 from N = 4096.
# Checks: every run against the float64 reference (every row of four heads up to N = 1024, 64 sampled rows above),
# except the sweep's N = 16384 (--no-check): the reference needs the log-sum-exp and D of every row of four heads
# (pass 1, 4 N^2 d float64 operations a head: about 10-20 s a run there on the GPU machine's 16 cores at d = 128),
# while the same kernel, d and mask are checked at N = 8192 (256 key blocks' atomics into each dQ row).
# The naive step stops at N = 2048 in the sweep: its P, dP and dS are 3 x 4 B H N^2 bytes (6.4 GB at 16k tokens and
# N = 2048, 51 GB at N = 16384), and its cost grows with N as the traffic does; the article's size and N <= 2048
# already show it, and the sweep's point is the flash step against the peers.
# Every run of ours under `timeout` (RUN_TIMEOUT, default 120 s): a kernel that hangs costs two minutes, not the call.
# The tests stage runs compute-sanitizer SAN_JOBS at a time (default 4); its summary and logs are the same as one
# at a time would write.
# Times (runs.log records the wall time of each run), on an H100 (2026-12-05): with steps 1-8, the article 2.5 min,
# hopper 1 min, sweep128 6 min, sweep64 at N = 1024, 4096 and 16384 alone 2.5 min (at every N about 4); with steps
# 1-5, the tests stage 3 min and ncu 2 min (steps 6-8 add 18 sanitizer runs and 3 kernels to profile); step 9 adds
# about 0.5 min to the hopper stage, 6 sanitizer runs and a kernel to profile; sweep128 at N = 4096, 8192 and 16384
# with SWEEP_TC=dq_overlap ROUNDS=2 took 2.7 min; on the H200 (2026-12-05), with steps 1-9, the article stage and its
# summary 2.8 min, the hopper stage 1.5 min; on the H200 (2026-12-06), with steps 1-10: the hopper stage 1.7 min,
# tests 4.7, ncu 2.6, each sweep with ROUNDS=2 in two parts (SWEEP_N) of N = 512-2048 and 4096-16384: sweep128 1.9
# and 3.1 min, sweep64 1.3 and 1.8, the summary 0.4; on the H200 (2026-12-07), with steps 1-18, the same parts: sweep128
# 2.3 and 4.1 min, sweep64 1.4 and 2.3. Each run about 3 s beyond its kernels (the inputs, the check's
# float64 reference, the counted pass). The call limit of 10 minutes holds one or two stages: sweep128 alone.
# SWEEP_N="512 1024 2048" runs a sweep at those N only (replacing their rows), so that it can be run in parts, in
# several calls; the sweep's record is written once every N of both sweeps has been measured with the same code
# (below), so a kernel changed since stays stale (provenance.py check) until then.
set -u -o pipefail
rounds=${ROUNDS:-3}
case $rounds in *[!0-9]* | '' | 0*) echo "bench: ROUNDS must be a whole number from 1 (got '$rounds')" >&2; exit 2 ;; esac
san_jobs=${SAN_JOBS:-4}
case $san_jobs in *[!0-9]* | '' | 0*) echo "bench: SAN_JOBS must be a whole number from 1 (got '$san_jobs')" >&2; exit 2 ;; esac
# the sweeps' N (SWEEP_N: some of them, to run a sweep in parts; each part replaces its own rows only)
sweep_all_n="512 1024 2048 4096 8192 16384"
sweep_n=${SWEEP_N:-$sweep_all_n}
for N in $sweep_n; do
    [[ " $sweep_all_n " == *" $N "* ]] || { echo "bench: SWEEP_N: N from $sweep_all_n (got '$N')" >&2; exit 2; }
done
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "bench: chapter 07 needs a CUDA device (none found here): nothing measured"
    exit 0
fi
out=${1:?usage: bash 07_backward/bench.sh OUTDIR [tests|article|tiles|hopper|sweep|sweep64|sweep128|ncu|summary ...]}/ch07
shift
whole=0 # a whole run: no STAGE given, every stage in order (its record: below)
[ $# -gt 0 ] || { whole=1; set -- tests article tiles hopper sweep64 sweep128 ncu summary; }
stages=()
for s in "$@"; do
    if [ "$s" = sweep ]; then stages+=(sweep64 sweep128); else stages+=("$s"); fi
done
cd "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/.." || exit 3
prog=./ch07/run
. common/scripts/bench-lib.sh
[ -x "$prog" ] || { echo "bench: $prog not found; build it first: make ch07" >&2; exit 3; }
mkdir -p "$out" || exit 1
export REQUIRE_GPU=1
run=(timeout "${RUN_TIMEOUT:-120}" "$prog")
start=$SECONDS
status=0
log=$out/runs.log
# the bytes of global reductions (atomicAdd whose result is unused: RED) and of atomics that return a value, the
# requests of the former: flash_bwd's dQ
NCU_ATOMICS=l1tex__t_bytes_pipe_lsu_mem_global_op_red.sum,l1tex__t_bytes_pipe_lsu_mem_global_op_atom.sum
NCU_ATOMICS+=,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum
# The steps in order, a line each: the name (the sanitizer's and ncu's, --kernel's but for dq_pass: flash --dq pass),
# its label in the summary, and its backward kernels in launch order after the forward (kernels.h), each of which ncu
# profiles (a row of ncu.csv each). The tensor-core steps after step 3 launch its tc_bwd_d first (D_i, dQ = 0),
# profiled once, with tensor_cores. Steps 6 to 10 run on an sm_90 GPU only.
step_table="
naive            naive   naive_p naive_dv naive_dp naive_ds naive_dq naive_dk
flash            flash   flash_bwd_d flash_bwd
dq_pass          dq_pass flash_dq flash_dkdv
tensor_cores     tc      tc_bwd_d tc_bwd
dq_vectors       vec     tc_vec_bwd
wide_blocks      wide    tc_wide_bwd
wgmma            wgmma   tc_wgmma_bwd
lean_loop        lean    tc_lean_bwd
dq_bulk          bulk    tc_bulk_bwd
dq_overlap       ovl     tc_ovl_bwd
warp_specialized ws      tc_ws_bwd
warp_tiles       tile    tc_tile_bwd
lean_tiles       tlean   tc_tile_lean_bwd
kv_registers     kvreg   tc_kvreg_bwd
dq_pairs         pairs   tc_pairs_bwd
dq_quads         quads   tc_quads_bwd
stat_copies      stats   tc_stats_bwd
dq_squares       squares tc_squares_bwd
matrix_stores    stores  tc_stores_bwd"
declare -A kernels_of label_of label_of_kernel
step_names=() # every step, in order
while read -r s label kernels; do
    [ -n "$s" ] || continue
    step_names+=("$s") kernels_of[$s]=$kernels label_of[$s]=$label
    for k in $kernels; do label_of_kernel[$k]=$label; done
done <<<"$step_table"
# kernels_of_steps STEP...: their kernels, in that order
kernels_of_steps() {
    local s k ks=()
    for s in "$@"; do read -r -a k <<<"${kernels_of[$s]}" && ks+=("${k[@]}"); done
    echo "${ks[*]}"
}
tc_steps="tensor_cores dq_vectors wide_blocks"
hopper_steps="wgmma lean_loop dq_bulk dq_overlap warp_specialized" # steps 6 to 10
# shellcheck disable=SC2086 # one argument a step
hopper_kernels=$(kernels_of_steps $hopper_steps) # their kernels, in that order
last_hopper_step=${hopper_steps##* } last_hopper_kernel=${hopper_kernels##* } # the goals' and the source counters'
tile_steps="warp_tiles lean_tiles kv_registers dq_pairs dq_quads stat_copies dq_squares matrix_stores" # steps 11 to 18: mma.sync again, after step 5
kv_steps=${tile_steps#warp_tiles lean_tiles } # steps 13 on: Br is d's (128 at d = 64), fragments held in registers
last_mma_step=${tile_steps##* } # the mma.sync goal's
last_mma_kernel=${kernels_of[$last_mma_step]}
read -r -a tile_step_list <<<"$tile_steps"
last_mma_number=$((10 + ${#tile_step_list[@]})) # its number: steps 11 on are the tile steps

# the backward kernels with a row of their own in ncu.csv after the naive ones (and in ncu_stalls.csv)
bwd_kernels=$(kernels_of_steps "${step_names[@]:1}")
# the shape of the last Hopper step's source counters (the ncu stage): a point of the sweeps where its cuDNN goal is
sass_shape=(--dtype bf16 --batch 4 --heads 16 --seq 4096 --dim 128)
# steps 6 to 10 (the Hopper steps) where the GPU is sm_90 (Hopper), the only one that runs them
sm90=0
[ "$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d '[:space:]')" = 9.0 ] && sm90=1
[ $sm90 = 1 ] && tc_steps+=" $hopper_steps"
tc_steps+=" $tile_steps"
# the tensor-core steps of the sweeps: the last on mma.sync and the last on wgmma, whose goals are against
# FlashAttention-2 (and cuDNN) at every point (the article stage has every step; SWEEP_TC adds others, at about 11 s a
# run)
sweep_tc=${SWEEP_TC:-$last_mma_step$([ $sm90 = 1 ] && echo " $last_hopper_step")}
# small, ragged shapes for compute-sanitizer (N not a multiple of any tile; d = 128 with Br != Bc, or for dq_pass,
# whose tiles are square, at 64 x 64; the tensor-core steps: their one tile, both types)
san_shapes=("--batch 1 --heads 2 --seq 77 --dim 64 --causal" "--batch 2 --heads 3 --seq 33 --dim 128 --br 64 --bc 32")
san_pass_shapes=("--batch 1 --heads 2 --seq 77 --dim 64 --causal" "--batch 2 --heads 3 --seq 33 --dim 128 --br 64 --bc 64")
san_tc_shapes=("--batch 1 --heads 2 --seq 77 --dim 64 --causal" "--batch 2 --heads 3 --seq 33 --dim 128 --dtype bf16")
# and the Hopper steps and steps 11-18 at a shape whose blocks visit four query blocks (Br = 64): each of the two Q_i
# buffers or stages is filled a second time, which the two shapes above (two visits at most) never do; steps 13 to 18
# also at d = 64, where their Br is 128 (four visits: N = 450) and their fragments of K_j and V_j stay in registers
san_reuse_shape="--batch 1 --heads 1 --seq 200 --dim 128"
san_kvreg_shape="--batch 1 --heads 1 --seq 450 --dim 64 --causal"
# The records of the code measured (provenance.py check: a row stands on a record of the run that wrote its file),
# so that none vouches for a timing its run did not take. A whole run (no STAGE given) records provenance.json before
# anything is measured. A stage run on its own records, once it is done, NAME.provenance.json for the files it wrote
# (NAME.csv, NAME_*.csv): article, tiles, hopper, ncu. A sweep records each of its cells (a d and an N) in
# sweep.parts/dD_nN.json, and sweep.provenance.json is merged from the twelve cells' records (provenance.py merge)
# once every cell has one and all of them measured the same code on the same GPU: so a sweep can be measured in parts,
# over several calls, and a cell measured with other code holds the record back until the rest are measured again. The
# tests stage records tests_gpu.provenance.json (its files' record), the summary nothing (it reads the others').
[ $whole = 0 ] || bench_header 07 >/dev/null
shapes=$(mktemp "${TMPDIR:-/tmp}/peers.XXXXXX") || exit 1
trap 'rm -f "$shapes"' EXIT

# time_peers: the peers' backward at the shapes collected in $shapes (each line names its peers), in $rounds
# rounds, appended to peers.csv
time_peers() {
    local r csv=$out/peers.csv n=$rounds
    command -v python3 >/dev/null 2>&1 || { echo "bench: no python3: no peers"; return 0; }
    for r in $(seq 1 "$n"); do
        { echo "\$ python3 common/scripts/peers.py --backward --shapes FILE --csv $csv  (round $r)"
          sed 's/^/  shape: /' "$shapes"; } >>"$log"
        python3 common/scripts/peers.py --backward --shapes "$shapes" --csv "$csv" >>"$log" 2>&1 ||
            { echo "bench: FAILED: peers.py (see $log)"; status=1; }
    done
    tail -n 1 "$log" | grep '^peers: PyTorch' # says so when PyTorch or its GPU is absent
    : >"$shapes"
}

# record_sweep_cells D: the record of each cell of this run's sweep at d = D (its N: sweep_n), then the sweep's,
# merged from the records of all twelve cells where each has one (a message where they measured other code)
record_sweep_cells() {
    local parts=$out/sweep.parts N d cells=() one
    mkdir -p "$parts" && one=$(mktemp "${TMPDIR:-/tmp}/sweep_cell.XXXXXX") || return 1
    python3 "$BENCH_SCRIPTS/provenance.py" record "$one" >&2 || { rm -f "$one"; return 1; }
    for N in $sweep_n; do cp "$one" "$parts/d$1_n$N.json" || { rm -f "$one"; return 1; }; done
    rm -f "$one"
    for d in 64 128; do
        for N in $sweep_all_n; do
            [ -f "$parts/d${d}_n$N.json" ] || { echo "bench: sweep d = $d, N = $N not measured: no sweep record yet"; return 0; }
            cells+=("$parts/d${d}_n$N.json")
        done
    done
    python3 "$BENCH_SCRIPTS/provenance.py" merge "$out/sweep.provenance.json" "${cells[@]}" ||
        echo "bench: the sweep's cells measured other code (above): no sweep record until they are measured again"
}

causal_flag() { [ "$1" = 1 ] && echo --causal; }
# tiles_for STEP: the flash step's tiles wherever it runs (article, sweeps, ncu): 64 x 64, the fastest of its four at
# the article's size on the H200 (the tiles stage times all four). 107 KB of shared memory a block at d = 64, more
# than sm_75 allows, which is why the program's default stays the article's 32 x 32.
tiles_for() { case $1 in flash | dq_pass) echo --br 64 --bc 64 ;; esac; }
# step_args STEP: the program's options for a step, or for dq_pass, step 2 with its dQ in a kernel of its own
step_args() { if [ "$1" = dq_pass ]; then echo --kernel flash --dq pass; else echo --kernel "$1"; fi; }
# sanitizer_runs: the tests stage's compute-sanitizer runs, in order, one line each: STEP|TOOL|SHAPE (every step and
# dq_pass at its shapes: the tensor-core steps at theirs, the Hopper and tile steps at the reuse shape too, steps 13
# on at the d = 64 shape where their Br is 128)
sanitizer_runs() {
    local k s tool shapes_k
    for k in naive flash dq_pass $tc_steps; do
        shapes_k=("${san_shapes[@]}")
        case " $tc_steps " in *" $k "*) shapes_k=("${san_tc_shapes[@]}") ;; esac
        case " $hopper_steps $tile_steps " in *" $k "*) shapes_k+=("$san_reuse_shape") ;; esac
        case " $kv_steps " in *" $k "*) shapes_k+=("$san_kvreg_shape") ;; esac
        [ "$k" = dq_pass ] && shapes_k=("${san_pass_shapes[@]}")
        for s in "${shapes_k[@]}"; do
            for tool in memcheck racecheck synccheck; do echo "$k|$tool|$s"; done
        done
    done
}
# sanitizer_log STEP TOOL SHAPE: the log of that run (the names chapter 06's README block reads)
sanitizer_log() { echo "$out/sanitizer_${1}_${2}_$(echo "$3" | tr -d ' -').log"; }
# handover_only LOG: true when racecheck's log of step 10 reports hazards and each is between warp 1's reads of dQ_s
# (the instrumented build's, through registers: the line of its IO_ATOMIC_ADD) and the consumers' stores into it
# (store_dq's two lines), the hand-over the barriers order and racecheck does not follow (step 10's README section);
# any other hazard or error, false
handover_only() {
    local src=07_backward/10_warp_specialized.cu r w
    r=$(grep -n 'IO_ATOMIC_ADD(reinterpret_cast<float4 \*>(dst + k \* D + c)' $src | cut -d: -f1)
    w=$(grep -n 'reinterpret_cast<float2 \*>(dQ_b' $src | cut -d: -f1 | tr '\n' ' ')
    [ -n "$r" ] && [ -n "$w" ] || return 1
    awk -v r="$r" -v w=" $w" '
        /Error:/ && !/Race reported between/ { bad = 1 }
        match($0, /(Read|Write) access at .* in [^ ]+:[0-9]+/) {
            n = split(substr($0, RSTART, RLENGTH), f, /[ :]/); line = f[n]; file = f[n - 1]; races++
            if (file != "10_warp_specialized.cu") bad = 1
            else if (f[1] == "Read" && line != r) bad = 1
            else if (f[1] == "Write" && index(w, " " line " ") == 0) bad = 1
        }
        END { exit !(races > 0 && !bad) }' "$1"
}

# handover_clean FILE: true when the tests stage's handover.txt has step 10's way (unaligned, one consumer warp) run
# under both tools, the tile read right in each and neither reporting (racecheck: 0 hazards; synccheck: 0 errors)
handover_clean() {
    awk '/^\$ compute-sanitizer --tool (racecheck|synccheck) \.\/handover unaligned$/ { w = 1; runs++; next }
         /^\$/ { w = 0 }
         w && /^unaligned: out.*\(ok\)$/ { ok++ }
         w && /^(RACECHECK SUMMARY: 0 hazards|ERROR SUMMARY: 0 errors)/ { clean++ }
         END { exit !(runs == 2 && ok == 2 && clean == 2) }' "$1"
}

# ways_under_sanitizers SRC WAY...: a small kernel of tests/ch07 (SRC) built for this GPU and run in each WAY (its
# arguments) under racecheck and synccheck: each command, the kernel's result line (or its CUDA error) and the tool's
# summary line, on stdout (handover.txt, stage_release.txt: the README's blocks read them)
ways_under_sanitizers() {
    local src=$1 name b h tool san
    shift
    name=$(basename "$src" .cu)
    b=$(mktemp -d)/$name
    san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    echo "\$ nvcc -arch=native -Icommon -o $name $src"
    "${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}" -arch=native -Icommon -o "$b" "$src" 2>&1
    for h in "$@"; do
        for tool in racecheck synccheck; do
            echo "\$ compute-sanitizer --tool $tool ./$name $h"
            # shellcheck disable=SC2086  # the way's words
            "$san" --tool $tool "$b" $h 2>&1 | grep -a -E '^[a-z0-9 ]+: (out|[0-9]+ of|CUDA error)|(ERROR|RACECHECK) SUMMARY' |
                sed 's/^=* *//'
        done
    done
    rm -rf "$(dirname "$b")"
}

# stage_release_clean FILE: true when the tests stage's stage_release.txt has step 10's way (every lane arrives, 8
# consumer warps) run under both tools, the sums right in each and neither reporting
stage_release_clean() {
    awk '/^\$ compute-sanitizer --tool (racecheck|synccheck) \.\/stage_release every$/ { w = 1; runs++; next }
         /^\$/ { w = 0 }
         w && /^every: 0 of [0-9]+ sums wrong \(ok\)$/ { ok++ }
         w && /^(RACECHECK SUMMARY: 0 hazards|ERROR SUMMARY: 0 errors)/ { clean++ }
         END { exit !(runs == 2 && ok == 2 && clean == 2) }' "$1"
}

# kernel_regex LABEL: an ncu -k regex for the kernel function of a row label: its REGEX in 07_backward/kernels.txt
# (provenance.py's "LABEL  REGEX" over demangled names), cut where a template's '<' or the parameters' '\(' starts
# (ncu matches the function's base name), else LABEL_kernel where the file or the line is missing; unanchored, as
# chapters 05 and 06 match (ncu's base name may carry a namespace)
kernel_regex() {
    local r
    r=$(awk -v l="$1" '{ sub(/#.*/, "") } $1 == l { print $2; exit }' 07_backward/kernels.txt 2>/dev/null)
    r=${r%%<*}
    r=${r%%\\(*}
    echo "${r:-${1}_kernel}"
}

# ncu_function FILE: the kernel function of the first launch in an ncu CSV (as book.py reads it)
ncu_function() {
    python3 -B -c 'import sys; sys.path.insert(0, sys.argv[1]); from booklib.results import Ncu
print((Ncu(sys.argv[2]).functions or [""])[0])' "$BENCH_SCRIPTS" "$1" 2>/dev/null
}

for stage in "${stages[@]}"; do
    case $stage in
    tests)
        echo "bench tests: the GPU tests, compute-sanitizer on the steps (3-5 min)"
        bench_header 07 tests_gpu >/dev/null # this stage's record, tests_gpu.provenance.json
        gpu_tests tests/bin/test_ch07 "$out" || status=1
        rm -f "$out"/sanitizer_*.log
        : >"$out/sanitizer_summary.txt"
        # SAN_JOBS runs at a time (default 4: each is a small problem, and compute-sanitizer's time is mostly the
        # host's), each writing its rc and summary line to a file of its own; then, in the runs' order, the
        # summary (the same lines, in the same order, as one run at a time)
        san_tmp=$(mktemp -d "${TMPDIR:-/tmp}/sanitizer.XXXXXX") || exit 1
        i=0
        while IFS='|' read -r k tool s; do
            i=$((i + 1))
            read -r -a args <<<"$(step_args "$k")"
            # shellcheck disable=SC2086  # the shape: words
            { line=$(sanitizer_run "$(sanitizer_log "$k" $tool "$s")" $tool "$prog" "${args[@]}" $s --reps 1)
              echo "$? $line" >"$san_tmp/$i"; } </dev/null &
            while [ "$(jobs -rp | wc -l)" -ge "$san_jobs" ]; do wait -n; done
        done < <(sanitizer_runs)
        wait
        i=0
        while IFS='|' read -r k tool s; do
            i=$((i + 1))
            read -r -a args <<<"$(step_args "$k")"
            f=$(sanitizer_log "$k" $tool "$s")
            rc=1 line="no result (see $f)"
            [ -s "$san_tmp/$i" ] && read -r rc line <"$san_tmp/$i"
            # step 10's racecheck: its one known report, the dQ_s hand-over (handover_only), is not a failure
            known=
            [ "$rc" = 9 ] && [ $tool = racecheck ] && [ "$k" = warp_specialized ] && handover_only "$f" &&
                known=" (the dQ_s hand-over, which racecheck does not follow: step 10's README section)"
            echo "compute-sanitizer --tool $tool $prog ${args[*]} $s: rc=$rc $line$known" >>"$out/sanitizer_summary.txt"
            [ "$rc" = 0 ] || [ -n "$known" ] || { echo "bench: FAILED: compute-sanitizer $tool ${args[*]} $s (see $f)"; status=1; }
        done < <(sanitizer_runs)
        rm -rf "$san_tmp"
        sed 's/^/  /' "$out/sanitizer_summary.txt"
        # step 10's hand-over of dQ_s alone (tests/ch07/handover.cu) under racecheck and synccheck: its three ways to
        # meet DQ_FREE with one consumer warp (where warp 1 arrives, racecheck reports what PTX orders; where both
        # sides wait on bar.sync, synccheck reports the aligned barrier met at two instructions; step 10's unaligned
        # barrier, neither), then step 10's way with more consumer warps (2, 4, 8: step 10's), with its proxy fence,
        # with both sides waiting on DQ_READY too, and with the consumers' own barrier each visit (step 10's DS_READY)
        ways_under_sanitizers tests/ch07/handover.cu arrive aligned unaligned "unaligned 2" "unaligned 4" "unaligned 8" \
            "unaligned 8 arrive fence" "unaligned 8 wait" "unaligned 8 wait fence" "unaligned 8 arrive fence ds" \
            "unaligned 8 wait fence ds" >"$out/handover.txt"
        sed 's/^/  /' "$out/handover.txt"
        handover_clean "$out/handover.txt" ||
            { echo "bench: FAILED: the hand-over alone, step 10's way (see $out/handover.txt)"; status=1; }
        # step 10's stages of L_i and D_i alone (tests/ch07/stage_release.cu), each filled twice, under racecheck and
        # synccheck: the three ways a consumer warp can release a stage on its `empty` mbarrier (lane 0 alone; lane 0
        # after __syncwarp; every lane, step 10's)
        ways_under_sanitizers tests/ch07/stage_release.cu lane0 syncwarp every >"$out/stage_release.txt"
        sed 's/^/  /' "$out/stage_release.txt"
        stage_release_clean "$out/stage_release.txt" ||
            { echo "bench: FAILED: the stages alone, step 10's way (see $out/stage_release.txt)"; status=1; }
        ;;
    article)
        echo "bench article: the article's problem size, naive and flash in fp32, the tensor-core steps in bf16 and" \
            "fp16; the peers' backward (2-3 min)"
        rm -f "$out/article.csv"
        drop_rows "$out/peers.csv" H=64
        for c in 0 1; do
            for k in naive flash dq_pass; do
                # shellcheck disable=SC2046  # the step's options and the causal option: words
                csv_append "$out/article.csv" "$log" "${run[@]}" $(step_args $k) $(tiles_for $k) $(causal_flag $c) ||
                    status=1
            done
            for t in bf16 fp16; do
                for k in $tc_steps; do
                    # shellcheck disable=SC2046,SC2086
                    csv_append "$out/article.csv" "$log" "${run[@]}" --kernel $k --dtype $t $(causal_flag $c) ||
                        status=1
                done
                echo "10 64 1024 64 $t $c 20 sdpa_efficient,sdpa_flash,sdpa_cudnn" >>"$shapes"
            done
            echo "10 64 1024 64 fp32 $c 20 torch_3op,sdpa_efficient,sdpa_math" >>"$shapes"
        done
        time_peers
        ;;
    hopper)
        if [ $sm90 = 1 ]; then
            echo "bench hopper: steps 6 to 10 one after another, bf16, d = 64 and 128, N = 1024, 4096, 16384 (2.5 min)"
            rm -f "$out/hopper.csv"
            for d in 128 64; do
                for N in 1024 4096 16384; do
                    for c in 0 1; do
                        for k in $hopper_steps; do
                            # shellcheck disable=SC2046  # the causal option: none or one word
                            csv_append "$out/hopper.csv" "$log" "${run[@]}" --kernel $k --dtype bf16 \
                                --batch $((16384 / N)) --heads 16 --seq $N --dim $d --reps 5 --no-check \
                                $(causal_flag $c) || status=1
                        done
                    done
                done
            done
        else
            echo "bench hopper: not an sm_90 GPU: steps 6 to 10 do not run here"
        fi
        ;;
    tiles)
        echo "bench tiles: the article's problem size, the flash step at its four tiles, full and causal (1 min)"
        rm -f "$out/tiles.csv"
        for c in 0 1; do
            for br in 32 64; do
                for bc in 32 64; do
                    # shellcheck disable=SC2046  # the causal option: none or one word
                    csv_append "$out/tiles.csv" "$log" "${run[@]}" --kernel flash --br $br --bc $bc --reps 10 \
                        $(causal_flag $c) || status=1
                done
            done
        done
        ;;
    sweep64 | sweep128)
        d=${stage#sweep}
        echo "bench $stage: 16k tokens, H = 16, N = $sweep_n, d = $d: flash (naive to N = 2048), $sweep_tc" \
            "(bf16, fp16), the peers"
        for N in $sweep_n; do
            drop_rows "$out/sweep.csv" d="$d" N="$N"
            drop_rows "$out/peers.csv" H=16 d="$d" N="$N"
        done
        for N in $sweep_n; do
            B=$((16384 / N)) reps=10 check='' fp32_peers=sdpa_efficient
            [ "$N" -ge 4096 ] && reps=5
            [ "$N" = 16384 ] && check=--no-check # the float64 check's pass 1 would take 10-20 s a run (see above)
            # math and 3-op materialise B H N^2 scores and their gradients: from N = 4096 they would take most of the
            # peers' time, and they are not what the summary's goal compares with
            [ "$N" -le 2048 ] && fp32_peers+=,sdpa_math,torch_3op
            for c in 0 1; do
                steps=flash
                [ "$N" -le 2048 ] && steps="naive flash"
                for k in $steps; do
                    # shellcheck disable=SC2046,SC2086  # the causal option and $check: none or one word
                    csv_append "$out/sweep.csv" "$log" "${run[@]}" --kernel $k $(tiles_for $k) --batch $B --heads 16 --seq $N \
                        --dim $d --reps $reps $check $(causal_flag $c) || status=1
                done
                for t in bf16 fp16; do
                    for k in $sweep_tc; do
                        # shellcheck disable=SC2046,SC2086
                        csv_append "$out/sweep.csv" "$log" "${run[@]}" --kernel $k --dtype $t --batch $B \
                            --heads 16 --seq $N --dim $d --reps $reps $check $(causal_flag $c) || status=1
                    done
                    echo "$B 16 $N $d $t $c $reps sdpa_efficient,sdpa_flash,sdpa_cudnn" >>"$shapes"
                done
                echo "$B 16 $N $d fp32 $c $reps $fp32_peers" >>"$shapes"
            done
        done
        time_peers
        ;;
    ncu)
        if ncu=$(find_ncu); then
            echo "bench ncu: B=10 H=64 N=1024 d=64 (fp32; the tensor-core steps fp16), full, one launch of each" \
                "backward kernel (2-3 min)"
            rm -rf "$out/ncu" "$out/ncu_run.csv" "$out/ncu_kernels.txt" "$out"/ncu_sass_*.txt
            mkdir -p "$out/ncu"
            shape=(--batch 10 --heads 64 --seq 1024 --dim 64)
            for step in naive flash dq_pass $tc_steps; do
                read -r -a tiles <<<"$(tiles_for "$step")"
                read -r -a args <<<"$(step_args "$step")"
                seen=()
                kernels=${kernels_of[$step]}
                for k in $kernels; do
                    # the label's first launch: its pass launches each of the step's kernels once, in order, after the
                    # forward; where labels share a kernel function (none do today), the launch of that function
                    # that is theirs (skipping the earlier labels' launches of it)
                    re=$(kernel_regex "$k")
                    skip=0
                    for r in "${seen[@]}"; do [ "$r" = "$re" ] && skip=$((skip + 1)); done
                    seen+=("$re")
                    sel=(-k "regex:$re" --launch-skip "$skip" --launch-count 1)
                    echo "ncu $k: ${sel[*]}" >>"$log"
                    if ! "$ncu" "${NCU_FLAGS[@]}" "${sel[@]}" --metrics "$NCU_ALL,$NCU_ATOMICS" \
                        --log-file "$out/ncu/$k.csv" "${run[@]}" --profile "${args[@]}" "${tiles[@]}" "${shape[@]}" >>"$log" 2>&1; then
                        # a metric this ncu does not know fails the whole run: once more without the atomics'
                        echo "bench: ncu $k with the atomics' metrics failed; again without them (see $log)"
                        "$ncu" "${NCU_FLAGS[@]}" "${sel[@]}" --metrics "$NCU_ALL" --log-file "$out/ncu/$k.csv" \
                            "${run[@]}" --profile "${args[@]}" "${tiles[@]}" "${shape[@]}" >>"$log" 2>&1 ||
                            { echo "bench: FAILED: ncu $k"; status=1; }
                    fi
                    if [ "$step" != naive ]; then
                        "$ncu" "${NCU_FLAGS[@]}" "${sel[@]}" --metrics "$NCU_STALLS" \
                            --log-file "$out/ncu/${k}_stalls.csv" "${run[@]}" --profile "${args[@]}" "${tiles[@]}" "${shape[@]}" \
                            >>"$log" 2>&1 ||
                            { echo "bench: FAILED: ncu stalls $k"; status=1; }
                    fi
                    echo "$k $(ncu_function "$out/ncu/$k.csv")" >>"$out/ncu_kernels.txt"
                done
                csv_append "$out/ncu_run.csv" "$log" "${run[@]}" "${args[@]}" "${tiles[@]}" "${shape[@]}" --reps 5 || status=1
            done
            for k in ${kernels_of[naive]} $bwd_kernels; do
                [ -f "$out/ncu/$k.csv" ] && cat "$out/ncu/$k.csv"
            done >"$out/ncu.csv" 2>/dev/null
            for k in $bwd_kernels; do
                [ -f "$out/ncu/${k}_stalls.csv" ] && cat "$out/ncu/${k}_stalls.csv"
            done >"$out/ncu_stalls.csv" 2>/dev/null
            sed 's/^/  /' "$out/ncu_kernels.txt"
            # the last Hopper step's warp-state samples per instruction, by reason and its 30 busiest instructions: the
            # report exported as the SASS page of ncu's source view (CSV), summed by book.py ncu-sass
            if [ $sm90 = 1 ]; then
                k=$last_hopper_kernel
                src=$(mktemp -d "${TMPDIR:-/tmp}/ncu_src.XXXXXX") || exit 1
                echo "ncu source counters $k" >>"$log"
                if "$ncu" --clock-control none -k "regex:$(kernel_regex "$k")" --launch-count 1 \
                    --section SourceCounters --section WarpStateStats --import-source no -f -o "$src/rep" "${run[@]}" \
                    --profile --kernel "$last_hopper_step" "${sass_shape[@]}" >>"$log" 2>&1 &&
                    "$ncu" --import "$src/rep.ncu-rep" --page source --csv --print-source sass >"$src/sass.csv" 2>>"$log"; then
                    # the file says the shape it was taken at: the summary prints it as it is
                    { echo "ncu, ${sass_shape[*]}, full, one launch: where the warps wait"; book ncu-sass "$src/sass.csv" 30; } \
                        >"$out/ncu_sass_$k.txt" || status=1
                else
                    echo "bench: FAILED: ncu source counters $k (see $log)"
                    status=1
                fi
                rm -rf "$src"
            fi
        else
            echo "bench ncu: ncu not found (set NCU=/path/to/ncu): no ncu.csv"
            status=1
        fi
        ;;
    summary)
        {
            bench_header 07 - # the line alone: the record is that of the stages that measured
            [ -s "$out/peers.csv" ] || echo "(no PyTorch timings here: no peers; see runs.log)"
            # each peer's fastest round (the smallest median) at each shape and dtype
            declare -A P
            while IFS='|' read -r p b h n d t c ms; do
                k="$p,$b,$h,$n,$d,$t,$c"
                if [ -z "${P[$k]:-}" ] || awk -v a="$ms" -v b="${P[$k]}" 'BEGIN { exit !(a < b) }'; then P[$k]=$ms; fi
            done < <(csv_rows "$out/peers.csv" peer,B,H,N,d,dtype,causal,time_ms_median)
            ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "-" }'; }
            peers_cols="sdpa_efficient sdpa_math torch_3op sdpa_flash sdpa_cudnn"
            fmt='%5s %4s %6s %4s %5s %-6s %-5s %9s %7s %9s'
            hdr=(B H N d dtype mask step "ms" TFLOP/s rel_err)
            for p in $peers_cols; do fmt+=' %9s %6s'; hdr+=("${p#*_} ms" "ours/"); done
            fmt+='\n'
            echo "The backward of ours (the 'backward' row: its kernels, without the forward) beside each peer's"
            echo "backward at the same shape and dtype, the peer's fastest of its rounds; ours/: our time / the peer's"
            echo "(below 1: ours is faster)"
            # shellcheck disable=SC2059  # the format is built above
            printf "$fmt" "${hdr[@]}"
            for f in "$out/article.csv" "$out/sweep.csv"; do
                # a run's rows in order: its step's kernels, then its total, 'backward': the step from the kernels
                csv_rows "$f" kernel,B,H,N,d,dtype,causal,time_ms_median,tflops,rel_err |
                    while IFS='|' read -r kn b h n d t c ms tf e; do
                        if [ "$kn" = backward ]; then
                            k="$b,$h,$n,$d,$t,$c"
                            cols=()
                            for p in $peers_cols; do
                                pm=${P[${p}_bwd,$k]:-}
                                cols+=("${pm:--}" "$(ratio "$ms" "$pm")")
                            done
                            [ -z "$e" ] || e=$(printf '%.2e' "$e")
                            # shellcheck disable=SC2059
                            printf "$fmt" "$b" "$h" "$n" "$d" "$t" "$([ "$c" = 1 ] && echo causal || echo full)" "$step" \
                                "$ms" "$tf" "${e:--}" "${cols[@]}"
                        elif [ -n "${label_of_kernel[$kn]:-}" ]; then
                            step=${label_of_kernel[$kn]}
                        fi
                    done
            done
            # the steps whose label is not their name: the labels, then the names
            labels='' names=''
            for st in "${step_names[@]}"; do
                [ "${label_of[$st]}" = "$st" ] || labels+="${labels:+, }${label_of[$st]}" names+="${names:+, }$st"
            done
            echo "(rel_err: the worst of dQ, dK, dV against the float64 reference; - where unchecked (N = 16384, see" \
                "bench.sh); step dq_pass: flash --dq pass; $labels: $names; peers: their fastest of" \
                "$(peer_rounds "$out/peers.csv") rounds," \
                "'-' where not run" | fold -s -w 102 | sed -e 's/ *$//' -e '2,$s/^/ /'
            echo " (math and 3-op from N = 4096 and in 16 bits, flash and cuDNN in fp32, which they do not take)"
            echo
            echo "Goal at the article's size: the fp32 flash step no slower than the memory-efficient backend in fp32"
            csv_rows "$out/article.csv" kernel,B,H,N,d,dtype,causal,time_ms_median |
                awk -F'|' '$1 ~ /^(naive|flash|tc)_/ { step = $1 } $1 == "backward" && step == "flash_bwd"' |
                while IFS='|' read -r _ b h n d t c ms; do
                    pm=${P[sdpa_efficient_bwd,$b,$h,$n,$d,$t,$c]:-}
                    r=$(ratio "$ms" "$pm")
                    verdict="no peer time"
                    [ "$r" = - ] || verdict=$(awk -v r="$r" 'BEGIN { print (r <= 1 ? "met" : "not met") }')
                    echo "  $([ "$c" = 1 ] && echo causal || echo full): flash $ms ms, sdpa_efficient ${pm:--} ms:" \
                        "ours/efficient $r ($verdict)"
                done
            echo
            # goal KERNEL STEP PEER MIN [MIN_N MIN_D]: the runs whose main kernel is KERNEL (article and sweep), at
            # N >= MIN_N and d >= MIN_D, against PEER's fastest round: met where PEER's time / ours >= MIN
            goal() {
                local kern=$1 name=$2 peer=$3 min=$4 min_n=${5:-0} min_d=${6:-0}
                for f in "$out/article.csv" "$out/sweep.csv"; do
                    csv_rows "$f" kernel,B,H,N,d,dtype,causal,time_ms_median |
                        awk -F'|' -v k="$kern" -v n="$min_n" -v d="$min_d" \
                            '$1 ~ /^(naive|flash|tc)_/ { step = $1 } $1 == "backward" && step == k && $4 >= n && $5 >= d'
                done | {
                    met=0 points=0 runs=0
                    while IFS='|' read -r _ b h n d t c ms; do
                        runs=$((runs + 1))
                        pm=${P[${peer}_bwd,$b,$h,$n,$d,$t,$c]:-}
                        x=$(ratio "$pm" "$ms")
                        verdict="no peer time"
                        if [ "$x" != - ]; then
                            points=$((points + 1))
                            verdict=$(awk -v x="$x" -v m="$min" 'BEGIN { print (x >= m ? "met" : "not met") }')
                            [ "$verdict" = met ] && met=$((met + 1))
                        fi
                        echo "  B=$b H=$h N=$n d=$d $t $([ "$c" = 1 ] && echo causal || echo full): $name $ms ms," \
                            "$peer ${pm:--} ms: ${x}x ($verdict)"
                    done
                    if [ $runs = 0 ]; then
                        echo "  $name: no run$([ "$min_n" -gt 0 ] && echo " at d >= $min_d from N = $min_n")"
                    else
                        echo "  met at $met of $points points with a peer time"
                    fi
                }
            }
            echo "Goal: the last mma.sync step ($last_mma_number, $last_mma_step) >= 1.00x FlashAttention-2's backward at every point"
            echo "(sdpa_flash's fastest round over our time, article and sweep, bf16 and fp16, full and causal)"
            goal "$last_mma_kernel" "$last_mma_step" sdpa_flash 1.00
            echo "and the same goal of steps 16 (stat_copies) and 5 (wide_blocks), each set when it was the last," \
                "where they ran"
            for st in stat_copies wide_blocks; do goal "${kernels_of[$st]}" "$st" sdpa_flash 1.00; done
            echo
            echo "Goals of the last Hopper step (10, $last_hopper_step; steps 6 to 10 run on sm_90 only): >= 1.00x"
            echo "FlashAttention-2's backward at every point, and >= 0.80x cuDNN's at d = 128 from N = 4096 (the"
            echo "peer's fastest round over our time); steps 6 to 9 against the same, where they ran"
            # the last Hopper step first, then the others in order (hopper_kernels and hopper_steps pair up)
            read -r -a hk <<<"$hopper_kernels"
            read -r -a hs <<<"$hopper_steps"
            for x in $((${#hk[@]} - 1)) $(seq 0 $((${#hk[@]} - 2))); do
                goal "${hk[x]}" "${hs[x]}" sdpa_flash 1.00
                goal "${hk[x]}" "${hs[x]}" sdpa_cudnn 0.80 4096 128
            done
            echo
            if [ -s "$out/hopper.csv" ]; then
                echo "The Hopper steps one after another (hopper.csv, bf16, 5 repetitions, unchecked): the backward's"
                echo "median ms of steps 6 (wgmma), 7 (lean_loop), 8 (dq_bulk), 9 (dq_overlap) and 10 (warp_specialized),"
                echo "and each step's speed-up over the one before"
                # a column per Hopper step (its kernel's name between tc_ and _bwd), then each step's speed-up over
                # the one before, numbered from step 6
                csv_rows "$out/hopper.csv" kernel,B,H,N,d,causal,time_ms_median |
                    awk -F'|' -v ks="$hopper_kernels" -v first=6 '
                        BEGIN { m = split(ks, kern, " "); for (j = 1; j <= m; j++) is[kern[j]] }
                        $1 in is { step = $1 }
                        $1 == "backward" { k = $5 " " $4 " " $6; t[k, step] = $7; if (!(k in seen)) { seen[k]; o[++n] = k } }
                        function r(x, y) { return (x > 0 && y > 0) ? sprintf("%.2f", x / y) : "-" }
                        END { printf "  %4s %6s %-6s", "d", "N", "mask"
                              for (j = 1; j <= m; j++) { s = kern[j]; sub(/^tc_/, "", s); sub(/_bwd$/, "", s); printf " %9s", s }
                              for (j = 2; j <= m; j++) printf " %5s", (first + j - 1) "/" (first + j - 2)
                              printf "\n"
                              for (i = 1; i <= n; i++) { split(o[i], f, " ")
                                  printf "  %4s %6s %-6s", f[1], f[2], (f[3] == 1 ? "causal" : "full")
                                  for (j = 1; j <= m; j++) printf " %9s", t[o[i], kern[j]]
                                  for (j = 2; j <= m; j++) printf " %5s", r(t[o[i], kern[j - 1]], t[o[i], kern[j]])
                                  printf "\n" } }'
                echo
            fi
            echo "The peers' backward in bf16 and fp16 (the tensor-core steps' targets), fastest round, ms:"
            bfmt='%5s %4s %6s %4s %5s %-6s %10s %10s %10s\n'
            # shellcheck disable=SC2059
            printf "$bfmt" B H N d dtype mask flash cudnn efficient
            for t in bf16 fp16; do
                csv_rows "$out/peers.csv" B,H,N,d,causal dtype=$t | awk '!seen[$0]++' |
                    while IFS='|' read -r b h n d c; do
                        k="$b,$h,$n,$d,$t,$c"
                        # shellcheck disable=SC2059
                        printf "$bfmt" "$b" "$h" "$n" "$d" "$t" "$([ "$c" = 1 ] && echo causal || echo full)" \
                            "${P[sdpa_flash_bwd,$k]:--}" "${P[sdpa_cudnn_bwd,$k]:--}" "${P[sdpa_efficient_bwd,$k]:--}"
                    done
            done
            if [ -s "$out/ncu_kernels.txt" ]; then
                while read -r k fn; do
                    echo
                    [ -n "$fn" ] || { echo "ncu, $k: no launch in $out/ncu/$k.csv"; continue; }
                    ncu_summary "$out/ncu_run.csv" "$k" "$out/ncu/$k.csv" "$out/ncu/${k}_stalls.csv" "$fn"
                    red=$(ncu_value "$out/ncu/$k.csv" "$fn" l1tex__t_bytes_pipe_lsu_mem_global_op_red.sum)
                    atom=$(ncu_value "$out/ncu/$k.csv" "$fn" l1tex__t_bytes_pipe_lsu_mem_global_op_atom.sum)
                    st=$(ncu_value "$out/ncu/$k.csv" "$fn" l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum)
                    cw=$(csv_rows "$out/ncu_run.csv" counted_write_bytes kernel="$k" | head -n 1)
                    # the counted writes include the atomics (IO_ATOMIC_ADD counts its 4 bytes as written)
                    awk -v st="$st" -v red="$red" -v atom="$atom" -v cw="$cw" -v fn="$fn" -v row="$k" 'BEGIN {
                        printf "  row %s, kernel function %s: global reductions (op_red) %s B, atomics (op_atom) %s B\n",
                            row, fn, red == "" ? "-" : red, atom == "" ? "-" : atom
                        if (st != "" && cw > 0)
                            printf "  writes: l1tex st + red + atom %.0f B, counted %.0f B (ratio %.4f)\n",
                                st + red + atom, cw, (st + red + atom) / cw }'
                done <"$out/ncu_kernels.txt"
            fi
            for f in "$out"/ncu_sass_*.txt; do
                [ -f "$f" ] || continue
                echo
                cat "$f"
            done
            echo "bench: $((SECONDS - start)) s (${stages[*]})"
        } | tee "$out/summary.txt"
        ;;
    *)
        echo "bench: unknown stage $stage (tests, article, tiles, hopper, sweep, sweep64, sweep128, ncu, summary)" >&2
        exit 2
        ;;
    esac
    # the record of a stage run on its own, now that it is done (above)
    case $stage in
    article | tiles | hopper | ncu) [ $whole = 1 ] || bench_header 07 "$stage" >/dev/null ;;
    sweep64 | sweep128) [ $whole = 1 ] || record_sweep_cells "${stage#sweep}" || status=1 ;;
    esac
done
exit $status
