#!/usr/bin/env bash
# gpu-checks.sh OUTDIR [checks|bench|all] [CHAPTER_IDS...]: everything a GPU machine should run, in one go,
# on binaries built beforehand (make ARCH=90 all tests/bin/...). It does not call make: the GPU machine may lack
# Criterion's headers. When it also lacks Criterion's runtime, stage it first on the build machine: copy the
# libcriterion runtime libraries and their dependencies (what `ldd tests/bin/test_common` lists for them) into
# .gpu/lib of the repository (ignored by git); this script puts .gpu/lib first in LD_LIBRARY_PATH.
#   checks: every test binary with REQUIRE_GPU=1 (its log ends with Criterion's TAP report: every test's name and
#           verdict, skips with their reason), compute-sanitizer memcheck, racecheck and synccheck on small shapes
#   bench:  common/scripts/reproduce.sh (article configuration, each chapter's bench.sh, plots)
# First the record of the run, OUTDIR/provenance.json (common/scripts/provenance.py: commit, versions, clocks,
# the digest of every kernel). Logs and results are packed into OUTDIR/gpu-checks.tgz; a short table is printed last.
set -u -o pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: gpu-checks.sh OUTDIR [checks|bench|all] [CHAPTER_IDS...]}
mode=${2:-all}
shift 2 2>/dev/null || shift $#
chapters=("$@")
[ ${#chapters[@]} -gt 0 ] || chapters=($(ls -d ch[0-9][0-9] 2>/dev/null | sed 's/ch//'))
mkdir -p "$out/logs"
export LD_LIBRARY_PATH=".gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export REQUIRE_GPU=1
summary="$out/logs/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

note "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>&1 | head -n1)"
note "== $(nvcc --version 2>/dev/null | grep release)"
note "== commit $(git rev-parse HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' (tree modified)')"
python3 common/scripts/provenance.py record "$out/provenance.json"

if [ "$mode" = checks ] || [ "$mode" = all ]; then
    for t in tests/bin/test_common $(for c in "${chapters[@]}"; do echo tests/bin/test_ch$c; done); do
        [ -x "$t" ] || { note "MISSING $t"; continue; }
        s=$(date +%s)
        log="$out/logs/$(basename "$t").log"
        "$t" --jobs 1 --tap="$log.tap" >"$log" 2>&1
        rc=$?
        { echo "### TAP report"; cat "$log.tap"; } >>"$log" 2>&1 && rm -f "$log.tap"
        note "$(basename "$t"): rc=$rc $(grep -a 'Synthesis' "$log" | tail -n1), skipped $(grep -ac '# SKIP' "$log") ($(( $(date +%s) - s )) s)"
    done
    for c in "${chapters[@]}"; do
        [ -x ch$c/run ] || continue
        # small shapes, ragged on purpose; each chapter's own options where it has them
        case $c in
        00) shapes=("--batch 2 --heads 3 --seq 33 --dim 64 --reps 1" "--batch 1 --heads 2 --seq 264 --dim 128 --dtype fp16 --reps 1" "--batch 1 --heads 2 --seq 1028 --dim 32 --reps 1");;
        01) shapes=("--seq 1000 --rows 7 --reps 1" "--seq 20000 --rows 2 --reps 1");;
        02) shapes=("--batch 2 --heads 3 --seq 77 --dim 64 --br 16 --bc 64 --reps 1" "--batch 1 --heads 2 --seq 33 --dim 128 --br 128 --bc 16 --reps 1");;
        03) shapes=("--batch 2 --heads 3 --seq 77 --dim 64 --br 16 --bc 64 --causal --reps 1" "--batch 1 --heads 2 --seq 33 --dim 128 --br 64 --bc 16 --reps 1");;
        *) shapes=("--batch 1 --heads 2 --seq 33 --reps 1");;
        esac
        for tool in memcheck racecheck synccheck; do
            for args in "${shapes[@]}"; do
                log="$out/logs/sanitizer_ch${c}_$tool.log"
                echo "### compute-sanitizer --tool $tool ./ch$c/run $args" >>"$log"
                compute-sanitizer --tool $tool --error-exitcode 9 ./ch$c/run $args >>"$log" 2>&1
                rc=$?
                note "compute-sanitizer --tool $tool ./ch$c/run $args: rc=$rc $(grep -a -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n1)"
            done
        done
    done
fi

if [ "$mode" = bench ] || [ "$mode" = all ]; then
    s=$(date +%s)
    bash common/scripts/reproduce.sh "${chapters[@]}" >"$out/logs/reproduce.log" 2>&1
    note "reproduce: rc=$? ($(( $(date +%s) - s )) s)"
    sed -n '/^summary/,$p' "$out/logs/reproduce.log" >>"$summary"
fi

tar czf "$out/gpu-checks.tgz" -C . "$out/logs" "$out/provenance.json" $(ls -d results/*/ 2>/dev/null) plots/*.png plots/*.svg plots/*.dat 2>/dev/null
echo
cat "$summary"
