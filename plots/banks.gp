# banks.gp: one warp's K_j load as a picture, lanes (rows) x shared-memory banks (columns), each cell coloured
# and numbered by the wavefront that delivers that lane's word from that bank; PNG and SVG.
#
#   gnuplot -e 'datafile="plots/ch04_banks_naive.dat"; out="plots/ch04_banks_naive"' \
#           -e 'layout="naive"; waves=32; phases=4; bytes=16; d=64; bc=32' plots/banks.gp
#
# plots/render-banks.sh reads the variables from the data file's '#' header (banks.c's bank_picture) and calls
# this script; by hand they are:
#   datafile   32 rows (lanes 0..31) of 32 numbers (banks 0..31): wavefront 1.. of the load, 0 = no word there
#   out        output path without extension
#   layout, waves, phases, bytes, d, bc   for the title: the load takes `waves` wavefronts where `phases`
#              (one per half- or quarter-warp) would be conflict-free; `bytes` per lane
#
# One colour per wavefront of this load (the scale runs from the first to the last), so a conflict-free load
# shows as a few flat colours and a conflicted one as a staircase; the lines between lanes mark the phases the hardware splits the warp into.

if (!exists("datafile") || !exists("out") || !exists("layout") || !exists("waves") || !exists("phases")) {
    print "banks.gp: set datafile, out, layout, waves and phases with -e (see the top of this file)"
    exit status 2
}
if (!exists("bytes")) bytes = 16
sizes = exists("d") && exists("bc") ? sprintf(", d=%d, Bc=%d", d, bc) : ""
conflicts = waves - phases
verdict = conflicts == 0 ? "no conflict" : sprintf("%d-way conflict", waves / phases)
title = sprintf("first K_{j} load of S_{ij}, %s layout%s: %d-byte loads, %d wavefront%s for %d phase%s (%s)", \
                layout, sizes, bytes, waves, waves == 1 ? "" : "s", phases, phases == 1 ? "" : "s", verdict)

set datafile commentschars "#"
unset key
set size ratio -1
set xrange [-0.5:31.5]
set yrange [31.5:-0.5]                 # lane 0 at the top, as in a table
set xtics 0, 4, 28 out nomirror
set ytics 0, 4, 28 out nomirror
set mxtics 4
set mytics 4
set xlabel "bank (4-byte word offset mod 32)"
set ylabel "lane"
set grid mxtics mytics lc rgb "#e6e6e6" lw 0.5 front
set cbrange [0.5:waves + 0.5]
set palette defined (0 "#fde725", 0.25 "#7ad151", 0.5 "#22a884", 0.75 "#2a788e", 1 "#414487")
set cblabel "wavefront"
cb_step = waves <= 8 ? 1 : 4
set cbtics cb_step out
set colorbox

# Phase boundaries: after every 32 / phases lanes.
lanes_per_phase = 32 / phases
do for [p = 1:phases - 1] {
    set arrow from graph 0, first (p * lanes_per_phase - 0.5) to graph 1, first (p * lanes_per_phase - 0.5) \
        nohead lc rgb "#c00000" lw 2 front
}
set label 1 sprintf("red lines: phase boundaries (%d lanes each)", lanes_per_phase) at graph 0, graph -0.11 \
    textcolor rgb "#c00000" font ",10"

# Empty cells are skipped (NaN), so only the words the load moves are drawn.
cell(v, y) = v > 0 ? y : NaN
text_colour(v) = (v - 0.5) / waves > 0.55 ? 0xffffff : 0x000000   # white on the dark end of the palette

set terminal pngcairo size 1000, 1000 font "sans,11"
set output out . ".png"
set title title font ",12"
plot datafile matrix using 1:(cell($3, $2)):(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder lc palette, \
     datafile matrix using 1:(cell($3, $2)):(sprintf("%d", $3)):(text_colour($3)) with labels tc rgb variable \
        font ",7"

set terminal svg size 1000, 1000 dynamic font "sans,11"
set output out . ".svg"
replot
unset output
