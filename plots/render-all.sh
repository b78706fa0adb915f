#!/usr/bin/env bash
# render-all.sh: a roofline plot per chapter from a results folder, each bench's sweep beside PyTorch's kernels,
# and the book's journey (every chapter's time at the article's configuration beside the article's).
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
# Then, for every RESULTS_DIR/chNN with sweep.csv and peers.csv: OUT_DIR/chNN_sweep.dat, .png, .svg
# (plots/sweep_data.py, plots/sweep.gp): TFLOP/s against N of the chapter's kernels (each step of it, and another
# chapter's kernel its bench ran at the same shapes, chMM_sweep.csv), FlashAttention-2, cuDNN and SDPA
# memory-efficient (their backward where the bench timed PyTorch's backward: the figure is then a backward pass's),
# in four panels (d = 64, 128; without and with the causal mask). And where ARTICLES.md is beside plots/ (not in a
# student's copy of one chapter): OUT_DIR/journey.dat, .png, .svg (plots/journey_data.py, plots/journey.gp):
# every chapter's chNN/run.csv time at the article's configuration, log scale, with the article's own times from
# ARTICLES.md beside them.
#
# Exit status: 0 when every chapter CSV was plotted or skipped as a CPU run; 2 for a missing folder or one
# without chapter CSVs; 3 when gnuplot is missing; 1 when a CSV could not be read, gnuplot failed, or python3
# (for the sweep and the journey) is missing.
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
    seq_n=$(awk -f "$here/csv.awk" -f "$here/csv_get.awk" -v columns=N -v row=1 "$csv")
    profile=
    for p in "${csv%/*}/profile.csv" "${csv%/*}/profile_article.csv" "${csv%/*}/profile_n$seq_n.csv"; do
        if [ -f "$p" ]; then profile=$p; break; fi
    done
    if ! meta=$(awk -f "$here/csv.awk" -f "$here/roofline_data.awk" -v dat="$dat" \
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
    # A compute roof above any GPU's FP32 peak (the datasheet's largest is 67 TFLOP/s) is the tensor cores': the
    # datasheet's dense fp16 peak, unless the chapter's kernels.txt names its roof ("# roof: NAME | NOTE": a ceiling
    # the chapter measures itself)
    peak_arg=
    if awk -v t="$tflops" 'BEGIN { exit !(t > 100) }'; then
        peak_arg="peak_name='fp16 tensor-core peak'; peak_note='(datasheet, dense)';"
        declared=$(for k in "$root"/"$chapter"_*/kernels.txt; do
            [ -f "$k" ] && sed -n 's/^# roof: *//p' "$k"; done | head -n 1)
        if [ -n "$declared" ]; then
            IFS='|' read -r roof_name roof_note <<<"$declared"
            roof_name=${roof_name% }
            peak_arg="peak_name='${roof_name//\'/}'; peak_note='${roof_note# }';"
        fi
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

# python3 FILE ARGS...: a data script of this folder; says so when python3 is missing
data_script() {
    command -v python3 >/dev/null 2>&1 || { echo "render-all: python3 not found: no ${1%_data.py} plot" >&2; return 1; }
    python3 "$here/$@"
}

# each chapter's sweep beside PyTorch's kernels timed in the same bench, where its bench wrote one (sweep.csv and
# peers.csv; a copy of the book without plots/sweep_data.py keeps the committed pictures, and says so)
for folder in "$results"/ch[0-9][0-9]; do
    [ -f "$folder/sweep.csv" ] && [ -f "$folder/peers.csv" ] || continue
    name=$(basename "$folder")
    if [ ! -f "$here/sweep_data.py" ]; then
        echo "render-all: no plots/sweep_data.py here: the sweep of $folder is not redrawn"
        continue
    fi
    # the figure is of the fp16 runs (FlashAttention's papers draw fp16): a sweep without any is not drawn here
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "dtype") k = i; next } k && $k == "fp16" { found = 1; exit }
        END { exit !found }' "$folder/sweep.csv" || continue
    meta=$(data_script sweep_data.py "$folder" "$out_dir/${name}_sweep.dat" fp16) || { status=1; continue; }
    IFS='|' read -r names colours gpu dtype tokens heads torch unchecked chapter pass work <<<"$meta"
    IFS=';' read -r -a name_list <<<"$names"
    IFS=';' read -r -a colour_list <<<"$colours"
    series="nseries=${#name_list[@]}"
    for i in "${!name_list[@]}"; do
        series="$series; name$((i + 1))='${name_list[$i]//\'/}'; colour$((i + 1))='${colour_list[$i]}'"
    done
    title="Chapter $chapter on $gpu: attention $pass pass, $dtype, B x N = $tokens tokens, H = $heads"
    note="TFLOP/s = $work / median time (halved when causal) for every bar; PyTorch $torch timed in the same bench ($name/peers.csv, the fastest round of each peer)"
    [ -n "$unchecked" ] && note="$note; ours at N = $unchecked not checked against the reference (--no-check)"
    if gnuplot -e "datafile='$out_dir/${name}_sweep.dat'; out='$out_dir/${name}_sweep'; $series" \
               -e "title='${title//\'/}'; note='${note//\'/}'" "$here/sweep.gp"; then
        echo "wrote $out_dir/${name}_sweep.png (and .svg, .dat) from $folder/sweep.csv and $folder/peers.csv"
    else
        echo "render-all: gnuplot failed on $out_dir/${name}_sweep.dat" >&2
        status=1
    fi
done

# the journey: every chapter at the article's configuration, the article's own times beside
if [ -f "$root/ARTICLES.md" ]; then
    if meta=$(data_script journey_data.py "$results" "$root/ARTICLES.md" "$out_dir/journey.dat"); then
        IFS='|' read -r gpu config left_out <<<"$meta"
        if [ -z "$gpu" ]; then
            echo "render-all: no chapter with a GPU time in $results: no journey plot"
        else
            note="the times of article 1: ARTICLES.md, rows V2-time and V2-pretranspose"
            [ -n "$left_out" ] && note="$note;  left out (no time of the forward pass on a GPU in this folder): chapter ${left_out//,/, }"
            title="Each chapter at the configuration of article 1, $config"
            if gnuplot -e "datafile='$out_dir/journey.dat'; out='$out_dir/journey'" \
                       -e "title='${title//\'/}'; note='${note//\'/}'; ours_name='this book, ${gpu//\'/}'; article_name='article 1 (Triton, fp32, an sm_75 GPU)'" \
                       "$here/journey.gp"; then
                echo "wrote $out_dir/journey.png (and .svg, .dat) from $results/chNN/run.csv and ARTICLES.md"
            else
                echo "render-all: gnuplot failed on $out_dir/journey.dat" >&2
                status=1
            fi
        fi
    else
        status=1
    fi
fi
exit $status
