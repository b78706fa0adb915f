# sweep.gp: chapter 05's kernel over N beside PyTorch's attention kernels of the same run, drawn as
# FlashAttention's papers draw their forward-pass benchmarks: TFLOP/s against N, four panels (d = 64 and 128,
# without and with the causal mask), one bar per implementation, the value on each bar.
#
#   gnuplot -e "datafile='plots/ch05_sweep.dat'; out='plots/ch05_sweep'; ours='flash_mma_async'" \
#           -e "title='...'; note='...'" plots/sweep.gp
#
# Writes out.png (pngcairo) and out.svg. plots/render-all.sh writes the data file (plots/sweep_data.py) and
# calls this script:
#   datafile  four blocks (d = 64 full, d = 64 causal, d = 128 full, d = 128 causal), lines N, TFLOP/s of ours,
#             FlashAttention-2 (SDPA flash), cuDNN (SDPA cuDNN), SDPA memory-efficient; NaN where missing
#   out       output path without extension;  ours  our kernel's name
#   title     optional;  note  optional line under the panels

if (!exists("datafile") || !exists("out") || !exists("ours")) {
    print "sweep.gp: set datafile, out and ours with -e (see the top of this file)"
    exit status 2
}
if (!exists("title")) title = "Attention forward pass"
if (!exists("note")) note = ""

set datafile separator tab
set datafile commentschars "#"
set datafile missing "NaN"
ymax_all = 0
do for [c = 2:5] {
    stats datafile using c nooutput    # a peer without any row: no STATS_max (stats warns)
    if (exists("STATS_max") && STATS_max > ymax_all) { ymax_all = STATS_max }
}
ytop = 100 * ceil(ymax_all * 1.18 / 100)

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
array colour[4] = ["#d95f02", "#1f4e9c", "#1b9e77", "#999999"]
array name[4]
name[1] = ours . " (this book)"; name[2] = "FlashAttention-2 (SDPA flash)"
name[3] = "cuDNN (SDPA cuDNN)"; name[4] = "SDPA memory-efficient"
# bar j of a cluster of 4 with gap 1: centred at its cluster's x plus (j - 2.5) / 5
off(j) = (j - 2.5) / 5.0

width = 1400; height = 1000
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
            set key top left horizontal maxcols 2 noenhanced font ",11" samplen 2
            if (note ne "") { set label 1 note at screen 0.5, 0.03 center font ",10" noenhanced }
        } else { set key off; unset label 1 }
        plot for [c = 2:5] datafile index (p - 1) using c:xtic(1) lc rgb colour[c - 1] title name[c - 1], \
             for [c = 2:5] datafile index (p - 1) using ($0 + off(c - 1)):(column(c)):(sprintf("%.0f", column(c))) \
                 with labels rotate by 90 left offset 0, 0.3 font ",8" tc rgb "#333333" notitle
    }
    unset multiplot
    unset label 1
    unset output
}
