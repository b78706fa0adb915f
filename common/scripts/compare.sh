#!/usr/bin/env bash
# compare.sh BASE NEW: a run's results against a reference run (`make compare BASE=results/NVIDIA_H200 NEW=DIR`).
#
# For every chapter folder chNN in both, every CSV of the book's report format (run.csv and the bench CSVs, the
# columns of common/report.h) that both hold: rows are matched by kernel and shape (kernel, B, H, N, d, dtype,
# br, bc, causal, rows). Bytes must be equal (model and counted, read and write); times are compared as
# NEW / BASE of the median. A regression: NEW slower than BASE by more than the tolerance (COMPARE_TOL, a
# fraction, default 0.10), or any byte count different. Prints a table either way; exits 1 on a regression,
# 2 when nothing could be compared (a folder missing, no file in common), 0 otherwise.
# Files in only one of the two folders are listed, not compared.
set -u -o pipefail
cd "$(dirname "$0")/../.."
base=${1:-}; new=${2:-}
tol=${COMPARE_TOL:-0.10}
if [ -z "$base" ] || [ -z "$new" ]; then
    echo "usage: make compare BASE=results/<GPU> NEW=<a run's results folder> [COMPARE_TOL=0.05]" >&2; exit 2
fi
for d in "$base" "$new"; do
    [ -d "$d" ] || { echo "compare: no results folder '$d'" >&2; exit 2; }
done
awk -v t="$tol" 'BEGIN { exit !(t ~ /^[0-9]*\.?[0-9]+$/ && t + 0 >= 0) }' ||
    { echo "compare: COMPARE_TOL must be a fraction such as 0.05, not '$tol'" >&2; exit 2; }

is_report_csv() { head -n1 "$1" 2>/dev/null | grep -q '^chapter,kernel,gpu,.*model_read_bytes,.*time_ms_median'; }
KEY=kernel,B,H,N,d,dtype,br,bc,causal,rows
COLS=$KEY,model_read_bytes,model_write_bytes,counted_read_bytes,counted_write_bytes,time_ms_median

echo "compare: $new against $base; times NEW/BASE (median), a regression above $(awk -v t="$tol" 'BEGIN { printf "%g", 1 + t }'); bytes must be equal"
pairs=0
rows=$(mktemp "${TMPDIR:-/tmp}/compare.XXXXXX") || exit 1
trap 'rm -f "$rows"' EXIT
for chdir in "$base"/ch[0-9][0-9]; do
    ch=${chdir##*/}
    if [ ! -d "$new/$ch" ]; then echo "  $ch: not in $new (not compared)"; continue; fi
    for f in "$chdir"/*.csv; do
        [ -f "$f" ] && is_report_csv "$f" || continue
        name=${f##*/}
        if [ ! -f "$new/$ch/$name" ]; then echo "  $ch/$name: not in $new (not compared)"; continue; fi
        pairs=$((pairs + 1))
        csv_b=$(awk -f common/scripts/csv.awk -f common/scripts/csv_get.awk -v columns="$COLS" "$f" | sed 's/^/B|/')
        csv_n=$(awk -f common/scripts/csv.awk -f common/scripts/csv_get.awk -v columns="$COLS" "$new/$ch/$name" | sed 's/^/N|/')
        printf '%s\n%s\n' "$csv_b" "$csv_n" | sed "s#^#$ch/$name|#" >>"$rows"
    done
done
for chdir in "$new"/ch[0-9][0-9]; do
    [ -d "$chdir" ] && [ ! -d "$base/${chdir##*/}" ] && echo "  ${chdir##*/}: not in $base (not compared)"
done
if [ $pairs = 0 ]; then echo "compare: no results file in common between $base and $new" >&2; exit 2; fi

# file|B or N|kernel|B|H|N|d|dtype|br|bc|causal|rows|mr|mw|cr|cw|ms
awk -F'|' -v tol="$tol" '
    $2 == "B" || $2 == "N" {
        k = $1 "|" $3 "|" $4 "|" $5 "|" $6 "|" $7 "|" $8 "|" $9 "|" $10 "|" $11 "|" $12
        if (!(k in seen)) { seen[k] = ++n; key[n] = k }
        side = $2; occ[k, side]++
        if (occ[k, side] > 1) next                       # a repeated row: the first one counts
        bytes[k, side] = $13 "|" $14 "|" $15 "|" $16; ms[k, side] = $17
    }
    END {
        printf "%-22s %-22s %-26s %12s %12s %8s  %s\n", "file", "kernel", "shape", "base ms", "new ms", "new/base", "verdict"
        bad = 0
        for (i = 1; i <= n; i++) {
            k = key[i]; split(k, p, "|")
            shape = sprintf("B%s H%s N%s d%s %s %sx%s%s", p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10] == 1 ? " causal" : "")
            if (!((k, "B") in ms)) { printf "%-22s %-22s %-26s %12s %12s %8s  %s\n", p[1], p[2], shape, "-", ms[k, "N"], "-", "new row (not compared)"; continue }
            if (!((k, "N") in ms)) { printf "%-22s %-22s %-26s %12s %12s %8s  %s\n", p[1], p[2], shape, ms[k, "B"], "-", "-", "missing in NEW (not compared)"; continue }
            verdict = "ok"; r = "-"
            if (bytes[k, "B"] != bytes[k, "N"]) {
                split(bytes[k, "B"], b, "|"); split(bytes[k, "N"], m, "|")
                split("model_read model_write counted_read counted_write", nm, " ")
                verdict = "BYTES DIFFER:"
                for (j = 1; j <= 4; j++) if (b[j] != m[j]) verdict = verdict " " nm[j] " " b[j] " -> " m[j]
                bad++
            }
            if (ms[k, "B"] + 0 > 0 && ms[k, "N"] != "") {
                r = sprintf("%.3f", ms[k, "N"] / ms[k, "B"])
                if (ms[k, "N"] / ms[k, "B"] > 1 + tol) {
                    verdict = (verdict == "ok" ? "" : verdict "; ") sprintf("SLOWER by %.0f%% (tolerance %.0f%%)", 100 * (ms[k, "N"] / ms[k, "B"] - 1), 100 * tol)
                    bad++
                } else if (verdict == "ok" && ms[k, "N"] / ms[k, "B"] < 1 - tol) verdict = "faster"
            }
            printf "%-22s %-22s %-26s %12s %12s %8s  %s\n", p[1], p[2], shape, ms[k, "B"], ms[k, "N"] == "" ? "-" : ms[k, "N"], r, verdict
            if (verdict != "ok" && verdict != "faster") regress[++nr] = p[1] " " p[2] " " shape ": " verdict
        }
        print ""
        if (bad) {
            printf "compare: %d regression(s):\n", nr
            for (i = 1; i <= nr; i++) print "  " regress[i]
            exit 1
        }
        printf "compare: no regression (%d rows; tolerance %.0f%%)\n", n, 100 * tol
    }' "$rows"
