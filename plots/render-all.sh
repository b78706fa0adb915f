#!/usr/bin/env bash
# render-all.sh: a roofline plot per chapter from a results folder.
#
#   bash plots/render-all.sh RESULTS_DIR [OUT_DIR]      (make plots = bash plots/render-all.sh results/latest)
#
# For every chapter's main CSV, RESULTS_DIR/chNN/run.csv (./chNN/run --csv at the article's configuration), writes
# OUT_DIR/chNN_roofline.dat (label, intensity, TFLOP/s; see plots/roofline_data.awk) and renders
# OUT_DIR/chNN_roofline.png and .svg with plots/roofline.gp, using the ceilings measured on the GPU that
# wrote the CSV (columns ceiling_gbs, ceiling_tflops). A CSV from a CPU run has no ceilings and is skipped.
# OUT_DIR defaults to plots/. Where a chapter's bench wrote RESULTS_DIR/chNN/plot.csv (the same columns: chapter 05's
# three kernels at the article's size, one row each), that file is plotted instead of run.csv. Other CSVs of a
# chapter are not plotted here.
#
# Exit status: 0 when every chapter CSV was plotted or skipped as a CPU run; 2 for a missing folder or one
# without chapter CSVs; 3 when gnuplot is missing; 1 when a CSV could not be read or gnuplot failed.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: bash plots/render-all.sh RESULTS_DIR [OUT_DIR=plots]" >&2
    exit 2
fi
results=$1
out_dir=${2:-plots}

if [ ! -d "$results" ]; then
    echo "render-all: no results folder '$results' (make reproduce writes one)" >&2
    exit 2
fi
shopt -s nullglob
csvs=("$results"/ch[0-9][0-9]/run.csv)
if [ ${#csvs[@]} -eq 0 ]; then
    others=("$results"/ch[0-9][0-9]*.csv "$results"/ch[0-9][0-9]/*.csv)
    if [ ${#others[@]} -gt 0 ]; then
        echo "render-all: no chapter CSV (chNN/run.csv) in '$results', only: ${others[*]#$results/}" >&2
    else
        echo "render-all: no chapter CSV (chNN/run.csv) in '$results'" >&2
    fi
    exit 2
fi
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "render-all: gnuplot not found; install it: apt-get install gnuplot-nox" >&2
    exit 3
fi
mkdir -p "$out_dir" || exit 1

status=0
for csv in "${csvs[@]}"; do
    [ -f "${csv%/*}/plot.csv" ] && csv=${csv%/*}/plot.csv
    name=$(basename "$(dirname "$csv")")
    dat="$out_dir/${name}_roofline.dat"
    dram_dat="$out_dir/${name}_roofline_dram.dat"
    rm -f "$dram_dat"
    # DRAM bytes measured by ncu on the same configuration, when the chapter's folder has them.
    seq_n=$(awk -f "$root/common/scripts/csv.awk" -f "$root/common/scripts/csv_get.awk" -v columns=N -v row=1 "$csv")
    profile=
    for p in "${csv%/*}/profile.csv" "${csv%/*}/profile_article.csv" "${csv%/*}/profile_n$seq_n.csv"; do
        if [ -f "$p" ]; then profile=$p; break; fi
    done
    if ! meta=$(awk -f "$root/common/scripts/csv.awk" -f "$here/roofline_data.awk" -v dat="$dat" \
                   -v profile="$profile" -v dram_dat="$dram_dat" "$csv"); then
        echo "render-all: could not read $csv" >&2
        status=1
        continue
    fi
    IFS='|' read -r chapter gpu config gbs tflops rows dram_rows <<<"$meta"
    if [ -z "$chapter" ]; then
        echo "render-all: no data rows in $csv" >&2
        status=1
        continue
    fi
    if [ -z "$gbs" ] || [ -z "$tflops" ]; then
        echo "render-all: no GPU ceilings in $csv: CPU run, no roofline"
        continue
    fi
    number='^[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?$'
    if ! [[ $gbs =~ $number && $tflops =~ $number ]]; then
        echo "render-all: ceilings in $csv are not numbers: '$gbs', '$tflops'" >&2
        status=1
        continue
    fi
    if [ "$rows" -eq 0 ]; then
        echo "render-all: no timed row to plot in $csv" >&2
        status=1
        continue
    fi
    title="Chapter $chapter on $gpu: $config"
    # A compute roof above any GPU's FP32 peak (the datasheet's largest is 67 TFLOP/s) is the tensor cores'
    # (chapter 05: the datasheet's dense fp16 peak, not measured).
    peak_arg=
    if awk -v t="$tflops" 'BEGIN { exit !(t > 100) }'; then
        peak_arg="peak_name='fp16 tensor-core peak'; peak_note='(datasheet, dense)';"
    fi
    dram_arg=
    if [ "${dram_rows:-0}" -gt 0 ]; then dram_arg="dramfile='$dram_dat';"; fi
    if ! gnuplot -e "datafile='$dat'; $dram_arg $peak_arg out='$out_dir/${name}_roofline'; bw_gbs=$gbs; peak_tflops=$tflops" \
                 -e "title='${title//\'/}'" "$here/roofline.gp"; then
        echo "render-all: gnuplot failed on $dat" >&2
        status=1
        continue
    fi
    from="$csv"
    if [ "${dram_rows:-0}" -gt 0 ]; then from="$from, DRAM bytes from $profile"; fi
    echo "wrote $out_dir/${name}_roofline.png (and .svg, .dat: $rows points) from $from"
done
exit $status
