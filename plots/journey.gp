# journey.gp: the book's journey in one picture: each chapter's time at the article's configuration (log
# scale), the article's own time for the same step beside it where the article gives one.
#
#   gnuplot -e "datafile='plots/journey.dat'; out='plots/journey'; title='...'" plots/journey.gp
#
# Writes out.png (pngcairo) and out.svg. plots/render-all.sh writes the data file (plots/journey_data.py) and
# calls this script:
#   datafile  tab-separated: chapter, x tic label, our median ms, the article's ms (NaN where it gives none)
#   out       output path without extension
#   title     optional;  ours_name, article_name  optional legend entries;  note  optional line at the bottom

if (!exists("datafile") || !exists("out")) {
    print "journey.gp: set datafile and out with -e (see the top of this file)"
    exit status 2
}
if (!exists("title")) title = "Each chapter at the article's configuration"
if (!exists("ours_name")) ours_name = "this book"
if (!exists("article_name")) article_name = "the article"
if (!exists("note")) note = ""

set datafile separator tab
set datafile commentschars "#"
set datafile missing "NaN"
stats datafile using 3 name "OURS" nooutput
n = OURS_records
stats datafile using 4 name "ART" nooutput
art_max = exists("ART_max") ? ART_max : 0    # none when the article gives no time at all (stats warns)

# whole decades around every bar, with room above the tallest for its value
ymin = 10.0 ** floor(log10(OURS_min / 2))
ymax = 10.0 ** ceil(log10((art_max > OURS_max ? art_max : OURS_max) * 3))
w = 0.36                      # width of one bar; ours left of the chapter's x, the article's right of it

set logscale y 10
set yrange [ymin:ymax]
set xrange [-0.6:n - 0.4]
set format y "%g"
set ylabel "median time (ms), log scale"
set grid ytics mytics lc rgb "#e4e4e4", lc rgb "#f2f2f2"
set xtics nomirror scale 0 noenhanced
set ytics nomirror
set border 3
set key top right noenhanced font ",11" samplen 2 spacing 1.3
set title title noenhanced font ",14"
set style fill solid 0.9 border rgb "#ffffff"
set bmargin 6

width = 1250; height = 700
do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size width, height enhanced font "sans,11" background rgb "white"
    } else {
        set terminal svg size width, height dynamic enhanced font "sans,11" background rgb "white"
    }
    set output out . "." . fmt
    if (note ne "") { set label 1 note at screen 0.5, 0.025 center font ",10" noenhanced }
    plot datafile using ($0):3:($0 - w):($0):(ymin):3:xtic(2) with boxxyerror lc rgb "#d95f02" title ours_name, \
         datafile using ($0 + w / 2):4:($0):($0 + w):(ymin):4 with boxxyerror lc rgb "#8c8c8c" title article_name, \
         datafile using ($0 - w / 2):3:(sprintf("%.3g", $3)) with labels offset 0, 0.7 font ",10" tc rgb "#a04000" notitle, \
         datafile using ($0 + w / 2):4:(sprintf("%.5g", $4)) with labels offset 0, 0.7 font ",10" tc rgb "#555555" notitle, \
         datafile using ($0 + w / 2):(valid(4) ? NaN : ymin * 1.25):("no time in the article") with labels \
             rotate by 90 left font ",10" tc rgb "#777777" notitle
    unset label 1
    unset output
}
