# bench-lib.sh: what every chapter's bench.sh and common/scripts/profile.sh share; sourced, not run:
#
#   . common/scripts/bench-lib.sh          (bash; defines the functions and variables below, runs nothing)
#
#   find_ncu                  the ncu binary: $NCU when set (a path, or a name looked up in PATH), else ncu in
#                             PATH, else /usr/local/cuda/bin/ncu; prints it, or returns 1 when there is none
#   csv_rows CSV COLS [COL=VALUE...]
#                             the columns COLS (comma-separated names) of every data row of CSV, joined by
#                             '|', one line per row; only the rows whose COL is VALUE (book.py csv-rows)
#   csv_field CSV COL [ROW]   one value: column COL of data row ROW (default 1)
#   ncu_values NCU_CSV KERNEL every metric ncu reported for the kernel function KERNEL: metric|unit|value
#   ncu_value NCU_CSV KERNEL METRIC    one of them, or nothing
#   profile_join REPORT_CSV NCU_CSV    model | counted | DRAM bytes per kernel, a CSV on stdout (book.py)
#   bench_header NN [NAME|- [FILE...]]  the first line of a bench's record, "== chapter NN bench on GPU, DATE,
#                             CUDA V": the start of summary.txt (chapters 03-05) or all of measured.txt (00-02); make
#                             docs takes its tables' GPU, date and CUDA version from it
#                             and, into the bench's folder $out, provenance.json (common/scripts/provenance.py), or
#                             with NAME NAME.provenance.json: the record of a stage run on its own (its files'
#                             captions read it), which leaves the record of the bench's timings as it was, and with
#                             FILE... vouches for those files of $out alone (else for NAME.csv and NAME_*.csv); with
#                             - no record (a stage that measures nothing: a summary of what the others measured)
#   ncu_summary RUN_CSV ROW NCU_CSV STALLS_CSV KERNEL
#                             the ncu block of a bench summary, the same lines in every chapter (book.py
#                             ncu-summary: its docstring lists them)
#
# The metric lists, defined here once (ncu --metrics takes them comma-separated):
#   NCU_FLAGS       the flags of every ncu run: no clock locking, plain function names, bytes in bytes, CSV
#   NCU_DRAM        DRAM bytes read and written
#   NCU_GLOBAL      bytes of global loads and stores through L1TEX (what the kernel asked for: compare with
#                   the counted bytes)
#   NCU_SHARED      shared-memory loads: requests (instructions, ld and ldsm), wavefronts, bank conflicts
#   NCU_OCCUPANCY   registers, what limits the blocks per SM, theoretical and achieved occupancy
#   NCU_TIME        kernel time, DRAM throughput, cycles per issued instruction, MIO throttle
#   NCU_ALL         all of the above: one ncu run (several replay passes, the caches flushed before each)
#   NCU_STALLS      every warp stall reason, cycles per issued instruction (a run of its own: many passes)

BENCH_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

NCU_FLAGS=(--clock-control none --kernel-name-base function --print-units base --csv)
NCU_DRAM=dram__bytes_read.sum,dram__bytes_write.sum
NCU_GLOBAL=l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum
NCU_SHARED=smsp__sass_inst_executed_op_shared_ld.sum,smsp__inst_executed_op_ldsm.sum
NCU_SHARED+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
NCU_OCCUPANCY=launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
NCU_OCCUPANCY+=,launch__occupancy_limit_warps,sm__maximum_warps_per_active_cycle_pct
NCU_OCCUPANCY+=,sm__warps_active.avg.pct_of_peak_sustained_active
NCU_TIME=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
NCU_TIME+=,smsp__average_warp_latency_per_inst_issued.ratio
NCU_TIME+=,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio
NCU_TIME+=,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__throughput.avg.pct_of_peak_sustained_active
NCU_ALL=$NCU_DRAM,$NCU_GLOBAL,$NCU_SHARED,$NCU_OCCUPANCY,$NCU_TIME
NCU_STALLS='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'

# drop_rows CSV COL=VALUE...: drop CSV's data rows where every column COL is VALUE (the header and every other row
# kept): a stage run again replaces its rows
drop_rows() {
    local csv=$1
    shift
    [ -s "$csv" ] || return 0
    awk -F, -v conds="$*" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; n = split(conds, c, " "); print; next }
        { mine = 1; for (j = 1; j <= n; j++) { split(c[j], kv, "="); if ($col[kv[1]] != kv[2]) mine = 0 } }
        !mine' "$csv" >"$csv.tmp" && mv "$csv.tmp" "$csv"
}

# csv_append CSV LOG PROGRAM ARGS...: one run of PROGRAM with --csv, its rows appended to CSV (the header once),
# its output to LOG followed by its wall time, "(wall 1.2 s)"; returns the program's exit status.
csv_append() {
    local csv=$1 log=$2 tmp rc t0
    shift 2
    tmp=$(mktemp "${TMPDIR:-/tmp}/bench.XXXXXX") || return 1
    echo "\$ $*" >>"$log"
    t0=$(date +%s.%N)
    "$@" --csv "$tmp" >>"$log" 2>&1
    rc=$?
    # the wall time of the whole process (start-up, inputs, timing, counted run, check): where a bench's time goes
    awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "(wall %.1f s)\n", b - a }' >>"$log"
    if [ $rc = 0 ]; then
        if [ -s "$csv" ]; then tail -n +2 "$tmp" >>"$csv"; else cat "$tmp" >"$csv"; fi
    else
        echo "bench: FAILED (exit $rc): $* (see $log)"
    fi
    rm -f "$tmp"
    return $rc
}

find_ncu() {
    local n
    n=$(command -v "${NCU:-ncu}" 2>/dev/null) || n=
    if [ -z "$n" ] && [ -z "${NCU:-}" ] && [ -x /usr/local/cuda/bin/ncu ]; then n=/usr/local/cuda/bin/ncu; fi
    [ -n "$n" ] || return 1
    echo "$n"
}

book() { python3 "$BENCH_SCRIPTS/book.py" "$@"; }
# shellcheck disable=SC2086 # the COL=VALUE conditions are words
csv_rows() { [ -s "$1" ] || return 0; book csv-rows "$1" "$2" ${3:-}; }
csv_field() { csv_rows "$1" "$2" | sed -n "${3:-1}p"; }
ncu_values() { [ -s "$1" ] || return 0; book ncu-value "$1" "$2" 2>/dev/null; }
ncu_value() { [ -s "$1" ] || return 0; book ncu-value "$1" "$2" "$3" 2>/dev/null; }
profile_join() { book profile-join "$1" "$2"; }
# gpu_tests TEST OUTDIR: a test binary's GPU tests (--filter=gpu/*) into OUTDIR/tests_gpu.log and tests_gpu.tap,
# Criterion's runtime taken from .gpu/lib where it is staged there; one line of what they said; false when they
# failed or the binary is missing
gpu_tests() {
    local t=$1 dir=$2 rc
    if [ ! -x "$t" ]; then
        echo "bench: $t not found (make $t): no GPU tests"
        return 1
    fi
    { echo "\$ REQUIRE_GPU=1 $t --filter=gpu/* --jobs 4"
      LD_LIBRARY_PATH=".gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 300 "$t" --filter='gpu/*' --jobs 4 \
          --tap="$dir/tests_gpu.tap" 2>&1; } >"$dir/tests_gpu.log"
    rc=$?
    echo "  $(basename "$t") gpu/*: rc=$rc $(grep -a 'Synthesis' "$dir/tests_gpu.log" | tail -n 1)"
    [ $rc = 0 ] || { echo "bench: FAILED: $t (see $dir/tests_gpu.log)"; return 1; }
}
# sanitizer_run LOG TOOL PROGRAM ARGS...: one compute-sanitizer run (--tool TOOL --error-exitcode 9, at most 5
# minutes), the command and everything it printed into LOG; prints the tool's summary line ("ERROR SUMMARY: ..." or
# "RACECHECK SUMMARY: ...") and returns the run's exit status (9: the tool reported)
sanitizer_run() {
    local log=$1 tool=$2 rc san
    shift 2
    san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    { echo "\$ compute-sanitizer --tool $tool --error-exitcode 9 $*"
      timeout 300 "$san" --tool "$tool" --error-exitcode 9 "$@" 2>&1; } >"$log"
    rc=$?
    grep -a -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 1 | sed 's/^=* *//'
    return $rc
}
# peers_fastest CSV: each peer's fastest round at each shape of a peers.csv (common/scripts/peers.py, a row per
# round): "peer|B|H|N|d|dtype|causal|ms", the smallest median, one line a peer and shape in the order first seen
peers_fastest() {
    csv_rows "$1" peer,B,H,N,d,dtype,causal,time_ms_median | awk -F'|' '{ k = $1; for (i = 2; i <= 7; i++) k = k "|" $i }
        !(k in ms) { order[++n] = k; ms[k] = $8; next }
        $8 + 0 < ms[k] + 0 { ms[k] = $8 }
        END { for (i = 1; i <= n; i++) print order[i] "|" ms[order[i]] }'
}

# peer_rounds CSV: how many rounds a peer's fastest is the fastest of, as CSV (peers.py's, a row a round) has them,
# not as this run's ROUNDS would (the stages that timed the peers may have run with others): "N" where every peer has
# N rows at each of its shapes, "LO to HI" where they differ, 0 where CSV has none
peer_rounds() {
    csv_rows "$1" peer,B,H,N,d,dtype,causal | sort | uniq -c |
        awk 'NR == 1 || $1 < lo { lo = $1 } $1 > hi { hi = $1 } END { print (NR ? (lo == hi ? lo : lo " to " hi) : 0) }'
}

bench_header() {
    local gpu cuda
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1)
    cuda=$(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')
    echo "== chapter $1 bench on ${gpu:-?}, $(date -u +%Y-%m-%d), CUDA ${cuda:-?}"
    [ -z "${out:-}" ] || [ "${2:-}" = - ] ||
        python3 "$BENCH_SCRIPTS/provenance.py" record "$out/${2:+$2.}provenance.json" ${3:+--files "${@:3}"} >&2
}

ncu_summary() { book ncu-summary "$@"; }
