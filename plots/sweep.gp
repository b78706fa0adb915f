# sweep.gp: a chapter's kernels over N beside PyTorch's attention kernels of the same run, drawn as
# FlashAttention's papers draw their forward-pass benchmarks: TFLOP/s against N, four panels (d = 64 and 128,
# without and with the causal mask), one bar per implementation, the value on each bar.
#
#   gnuplot -e "datafile='plots/ch05_sweep.dat'; out='plots/ch05_sweep'; nseries=4" \
#           -e "name1='...'; colour1='#d95f02'; ... name4='...'; colour4='...'" -e "title='...'; note='...'" plots/sweep.gp
#
# Writes out.png (pngcairo) and out.svg. plots/render-all.sh writes the data file (plots/sweep_data.py, which also
# names the series and picks their colours) and calls this script:
#   datafile  four blocks (d = 64 full, d = 64 causal, d = 128 full, d = 128 causal), lines N, TFLOP/s of each
#             series; NaN where missing
#   out       output path without extension;  nseries  the series (columns 2 .. nseries + 1)
#   nameI, colourI  series I's key entry and colour
#   title     optional;  note  optional line under the panels

if (!exists("datafile") || !exists("out") || !exists("nseries")) {
    print "sweep.gp: set datafile, out, nseries and name1, colour1, ... with -e (see the top of this file)"
    exit status 2
}
if (!exists("title")) title = "Attention forward pass"
if (!exists("note")) note = ""

set datafile separator tab
set datafile commentschars "#"
set datafile missing "NaN"
ymax_all = 0
do for [c = 2:nseries + 1] {
    stats datafile using c nooutput    # a peer without any row: no STATS_max (stats warns)
    if (exists("STATS_max") && STATS_max > ymax_all) { ymax_all = STATS_max }
}
ytop = 100 * ceil(ymax_all * (nseries > 4 ? 1.3 : 1.18) / 100)

set style data histogram
set style histogram clustered gap 1
set style fill solid 0.9 border rgb "#ffffff"
set boxwidth 1
set yrange [0:ytop]
set ytics 100
set grid ytics lc rgb "#e4e4e4"
set xtics nomirror scale 0
set ytics nomirror
set border 3
set ylabel "TFLOP/s"
set xlabel "sequence length N"

array panel_title[4] = ["d = 64, no mask", "d = 64, causal", "d = 128, no mask", "d = 128, causal"]
# bar j of a cluster of nseries with gap 1: centred at its cluster's x plus (j - (nseries + 1) / 2) / (nseries + 1)
off(j) = (j - (nseries + 1) / 2.0) / (nseries + 1.0)
name(j) = value(sprintf("name%d", j))
keycols = nseries > 4 ? 4 : 2
colour(j) = value(sprintf("colour%d", j))

width = nseries > 4 ? 1800 : 1400; height = 1000
do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size width, height enhanced font "sans,11" background rgb "white"
    } else {
        set terminal svg size width, height dynamic enhanced font "sans,11" background rgb "white"
    }
    set output out . "." . fmt
    set multiplot layout 2, 2 title title noenhanced font ",15" margins 0.07, 0.98, 0.12, 0.90 spacing 0.07, 0.12
    do for [p = 1:4] {
        set title panel_title[p] font ",13"
        if (p == 1) {
            set key top left horizontal maxcols keycols noenhanced font ",11" samplen 2
            if (note ne "") { set label 1 note at screen 0.5, 0.03 center font ",10" noenhanced }
        } else { set key off; unset label 1 }
        plot for [c = 2:nseries + 1] datafile index (p - 1) using c:xtic(1) lc rgb colour(c - 1) title name(c - 1), \
             for [c = 2:nseries + 1] datafile index (p - 1) using ($0 + off(c - 1)):(column(c)):(sprintf("%.0f", column(c))) \
                 with labels rotate by 90 left offset 0, 0.3 font ",8" tc rgb "#333333" notitle
    }
    unset multiplot
    unset label 1
    unset output
}
