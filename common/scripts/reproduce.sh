#!/usr/bin/env bash
# reproduce.sh CHAPTER_IDS...: the main job behind `make reproduce`.
#   With a GPU: runs every chapter at the article's configuration (B=10 H=64 N=1024 d=64 fp32) into
#   results/<GPU>/chNN/run.csv (+ run.log), then each chapter's bench.sh (sweeps, ncu) when present, points
#   results/latest at that folder, renders the roofline plots, prints a summary and ends with the claims
#   report (common/scripts/book.py report: results/<GPU>/REPORT.md), where ARTICLES.md is (not in a student's copy
#   of one chapter, make assignment's). Progress: each step as it starts ([3/12] ...),
#   its time when done, the total at the end; first an estimate from the bench times the committed summary.txt
#   (else bench.log) files of this GPU recorded.
#   All it prints also goes to results/<GPU>/reproduce.log.
#   Without a GPU: prints each chapter's IO model and runs its CPU version at a small size, clearly
#   labelled, into results/cpu/chNN/; the committed plots (drawn from results/latest) are left as they are.
# Set BENCH=0 to skip the bench.sh sweeps.
set -u -o pipefail
cd "$(dirname "$0")/../.."
chapters=("$@")
[ ${#chapters[@]} -gt 0 ] || { echo "reproduce: no chapters given" >&2; exit 2; }
dir_of() { ls -d "$1"_*/ 2>/dev/null | head -n1 | sed 's:/$::'; }

# Progress: "[3/12] ch01: run ...", each step's time when it ends, the total at the end.
t_start=$(date +%s); step=0; nsteps=0
step_start() { step=$((step + 1)); t_step=$(date +%s); echo "[$step/$nsteps] $1"; }
step_done() { echo "  done in $(($(date +%s) - t_step)) s"; }
# estimate OUT: the bench times that the committed summary.txt (else bench.log) files of this GPU's folder recorded
# ("bench: 98 s")
estimate() {
    local ch f s line= sum=0 known=0 unknown=
    for ch in "${chapters[@]}"; do
        # summary.txt where the bench writes one (chapters 02-05), else the bench's output that this script keeps
        s=
        for f in "$1/ch$ch/summary.txt" "$1/ch$ch/bench.log"; do
            [ -n "$s" ] || s=$(sed -n 's/^bench: \([0-9][0-9]*\) s.*/\1/p' "$f" 2>/dev/null | tail -n1)
        done
        if [ -n "$s" ]; then line+=" ch$ch $s s,"; sum=$((sum + s)); known=$((known + 1)); else unknown+=" ch$ch"; fi
    done
    if [ $known = 0 ]; then echo "reproduce: no bench time recorded for this GPU ($1/chNN/summary.txt, bench.log): no estimate"; return; fi
    echo "reproduce: estimate from the last run on this GPU ($1/chNN/summary.txt or bench.log): bench:${line%,}; about $sum s in all${unknown:+ plus the benches with no recorded time (${unknown# })}"
}

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1)
status=0
if [ -n "$gpu_name" ]; then
    slug=$(echo "$gpu_name" | sed 's/[^A-Za-z0-9-]/_/g')
    out="results/$slug"
    mkdir -p "$out"
    # everything this run prints, also into the results: its steps, their times and the total (results/README.md)
    exec > >(tee "$out/reproduce.log") 2>&1
    echo "reproduce: GPU '$gpu_name', CUDA $(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $(date -u +%Y-%m-%d)"
    echo "reproduce: results go to $out/"
    python3 common/scripts/provenance.py record "$out/provenance.json" || status=1   # commit, versions, clocks, digests
    # the steps: each chapter's run, its bench where it has one (BENCH=0: none), the plots, the report (only in
    # the book: a student's copy of one chapter lacks the other chapters and the ARTICLES.md it compares)
    nsteps=1
    [ -f ARTICLES.md ] && nsteps=2
    # a chapter built for one architecture only (chapter 06: sm_90a) says which in its kernels.txt's "# arch:" line
    # and is skipped, with one line, on any other GPU
    cc=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d '.[:space:]')
    kept=()
    for ch in "${chapters[@]}"; do
        d=$(dir_of "$ch"); only=$([ -n "$d" ] && awk '$1 == "#" && $2 == "arch:" { print $3 }' "$d/kernels.txt" 2>/dev/null)
        if [ -n "$only" ] && [ "${only%a}" != "$cc" ]; then
            echo "reproduce: ch$ch skipped: its kernels are $only code, and this GPU is $cc"; continue
        fi
        kept+=("$ch")
    done
    chapters=("${kept[@]}")
    for ch in "${chapters[@]}"; do
        d=$(dir_of "$ch"); nsteps=$((nsteps + 1))
        [ "${BENCH:-1}" != 0 ] && [ -n "$d" ] && [ -f "$d/bench.sh" ] && nsteps=$((nsteps + 1))
    done
    [ "${BENCH:-1}" != 0 ] && estimate "$out"
    for ch in "${chapters[@]}"; do
        mkdir -p "$out/ch$ch"
        step_start "ch$ch: run at the article's configuration (./ch$ch/run --csv $out/ch$ch/run.csv)"
        if ! ./ch$ch/run --csv "$out/ch$ch/run.csv" >"$out/ch$ch/run.log" 2>&1; then
            echo "  FAILED (see $out/ch$ch/run.log)"; status=1
        fi
        step_done
        d=$(dir_of "$ch")
        if [ "${BENCH:-1}" != 0 ] && [ -n "$d" ] && [ -f "$d/bench.sh" ]; then
            step_start "ch$ch: bench, sweeps and ncu (bash $d/bench.sh $out; output in $out/ch$ch/bench.log)"
            bash "$d/bench.sh" "$out" >"$out/ch$ch/bench.log" 2>&1 || { echo "  FAILED (see $out/ch$ch/bench.log)"; status=1; }
            step_done
        fi
    done
    ln -sfn "$slug" results/latest
else
    out="results/cpu"
    mkdir -p "$out"
    echo "reproduce: no GPU found (nvidia-smi reports none). Printing each chapter's IO model at the article's"
    echo "configuration and running its CPU version at a small size; these are NOT GPU measurements."
    for ch in "${chapters[@]}"; do
        mkdir -p "$out/ch$ch"
        echo; echo "=============== chapter $ch ==============="
        ./ch$ch/run --csv "$out/ch$ch/run.csv" 2>&1 | tee "$out/ch$ch/run.log" || status=1
    done
fi

echo
if [ -z "$gpu_name" ]; then
    # A CPU run has no ceilings, hence no roofline; the committed plots stay as they are.
    echo "reproduce: plots/ kept as committed (drawn from results/latest = $(readlink results/latest 2>/dev/null || echo ?)); a CPU run has no roofline"
elif [ -d results/latest ]; then
    step_start "plots: roofline plots from results/latest (plots/)"
    bash plots/render-all.sh results/latest plots
    rc=$?
    # 3: no gnuplot (only when this script is called without make's dependency step): the CSVs are there,
    # `make plots` draws them later. Anything else is a failure.
    [ $rc = 0 ] || [ $rc = 3 ] || status=1
    step_done
fi

echo
echo "summary ($out): each chapter's total row where it has one (chapter 00's three-kernel pipeline), else its"
echo "kernels' rows (chapters 01-03; setup rows such as chapter 02's flash_v1_init are marked)"
for ch in "${chapters[@]}"; do
    f="$out/ch$ch/run.csv"
    [ -f "$f" ] || continue
    python3 common/scripts/book.py summary "$ch" "$f"
done
if [ -n "$gpu_name" ] && [ -f ARTICLES.md ]; then
    echo
    step_start "report: the claims of ARTICLES.md beside this run (common/scripts/book.py report $out)"
    python3 common/scripts/book.py report "$out" || status=1
    step_done
    echo
    echo "reproduce: $step steps in $(($(date +%s) - t_start)) s; results in $out/ (report: $out/REPORT.md)"
elif [ -n "$gpu_name" ]; then
    echo
    echo "reproduce: $step steps in $(($(date +%s) - t_start)) s; results in $out/ (no ARTICLES.md here: no report)"
fi
exit $status
