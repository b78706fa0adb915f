#!/usr/bin/env bash
# render-banks.sh: chapter 04's bank pictures, one per layout of K_j, from the data files the chapter writes.
#
#   bash plots/render-banks.sh DATA_DIR [OUT_DIR]
#
# For every DATA_DIR/ch04_banks_<layout>.dat (banks.c's banks_pictures: 32 lanes x 32 banks, each cell the
# wavefront that delivers the lane's word, with a '#' header naming the layout, d, Bc, the bytes per lane, the
# load's wavefronts and its phases), renders OUT_DIR/ch04_banks_<layout>.png and .svg with plots/banks.gp.
# OUT_DIR defaults to plots/.
#
# Exit status: 0 when every data file was rendered; 2 for a missing folder or one without data files; 3 when
# gnuplot is missing; 1 when a data file has no usable header or gnuplot failed on it.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: bash plots/render-banks.sh DATA_DIR [OUT_DIR=plots]" >&2
    exit 2
fi
data_dir=$1
out_dir=${2:-plots}

if [ ! -d "$data_dir" ]; then
    echo "render-banks: no folder '$data_dir'" >&2
    exit 2
fi
shopt -s nullglob
dats=("$data_dir"/ch04_banks_*.dat)
if [ ${#dats[@]} -eq 0 ]; then
    echo "render-banks: no ch04_banks_<layout>.dat in '$data_dir'" >&2
    exit 2
fi
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "render-banks: gnuplot not found; install it: apt-get install gnuplot-nox" >&2
    exit 3
fi
mkdir -p "$out_dir" || exit 1

status=0
for dat in "${dats[@]}"; do
    name=$(basename "$dat" .dat)
    # The header line: "# layout NAME d D Bc BC bytes W wavefronts N phases P" (keyword, value pairs).
    header=$(awk '/^# layout / { for (i = 2; i < NF; i += 2) printf "%s=%s ", $i, $(i + 1); exit }' "$dat")
    layout= d= Bc= bytes= wavefronts= phases=
    for kv in $header; do
        case ${kv%%=*} in
            layout|d|Bc|bytes|wavefronts|phases) printf -v "${kv%%=*}" '%s' "${kv#*=}" ;;
        esac
    done
    number='^[0-9]+$'
    if ! [[ $layout =~ ^[a-z]+$ && $d =~ $number && $Bc =~ $number && $bytes =~ $number \
            && $wavefronts =~ $number && $phases =~ $number ]] || [ "$phases" -eq 0 ]; then
        echo "render-banks: $dat has no '# layout ... phases P' header (banks.c's bank_picture writes it)" >&2
        status=1
        continue
    fi
    if ! gnuplot -e "datafile='$dat'; out='$out_dir/$name'; layout='$layout'; waves=$wavefronts" \
                 -e "phases=$phases; bytes=$bytes; d=$d; bc=$Bc" "$here/banks.gp"; then
        echo "render-banks: gnuplot failed on $dat" >&2
        status=1
        continue
    fi
    echo "wrote $out_dir/$name.png (and .svg): $layout, $wavefronts wavefronts for $phases phases"
done
exit $status
