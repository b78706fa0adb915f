# roofline.gp: one chapter's kernels on the roofline of the GPU they ran on, as PNG and SVG.
#
#   gnuplot -e 'datafile="plots/ch00_roofline.dat"; out="plots/ch00_roofline"; bw_gbs=4213.5; peak_tflops=59.8' \
#           -e 'title="Chapter 00 on NVIDIA H200: B=10 H=64 N=1024 d=64 fp32"' plots/roofline.gp
#
# Writes out.png (pngcairo) and out.svg. plots/render-all.sh builds the data file from a chapter's CSV and
# calls this script; the variables can also be given by hand:
#   datafile     tab-separated: label, intensity (FLOP/byte), performance (TFLOP/s); '#' starts a comment
#   out          output path without extension
#   bw_gbs       measured HBM bandwidth, GB/s (copy kernel: bytes read + written per second)
#   peak_tflops  measured FP32 FMA throughput, TFLOP/s
#   title        optional; bw_name and peak_name optional names of the two ceilings
#   dramfile     optional, tab-separated: label, model intensity, DRAM intensity, TFLOP/s (plots/roofline_data.awk):
#                each such kernel is drawn a second time at its DRAM intensity (open marker), joined to its
#                model point
#   xmin, xmax, ymin, ymax  optional axis ranges; the default is one range for the whole book (0.1 to 1,000
#                FLOP/B, 0.5 to 200 TFLOP/s), widened only should a point fall outside it
#   labels_out   optional file: one tab-separated line per point label, in pixels of the canvas (y upwards):
#                label, left, right, bottom, top, the roof's height at the left end and at the right end
#                (tests/common/test_plots.c checks with it that no label crosses a roof line)

if (!exists("datafile") || !exists("out") || !exists("bw_gbs") || !exists("peak_tflops")) {
    print "roofline.gp: set datafile, out, bw_gbs and peak_tflops with -e (see the top of this file)"
    exit status 2
}
if (!exists("title")) title = "Roofline"
if (!exists("bw_name")) bw_name = "HBM copy"
if (!exists("peak_name")) peak_name = "FP32 FMA peak"
if (!exists("peak_note")) peak_note = "(measured)"

# 4213 -> "4,213" (integers)
commas(n) = (n < 1000) ? sprintf("%d", n) : commas(int(n / 1000)) . sprintf(",%03d", int(n) % 1000)

bw_tbs = bw_gbs / 1000.0              # TFLOP/s per FLOP/byte of intensity
ridge = peak_tflops / bw_tbs          # FLOP/byte where the slope meets the peak

set datafile separator tab
set datafile commentschars "#"
stats datafile using 2 name "X" nooutput
stats datafile using 3 name "Y" nooutput
npoints = X_records

has_dram = exists("dramfile")
if (has_dram) {
    stats dramfile using 3 name "D" nooutput
    ndram = D_records
} else { ndram = 0 }

# Axes: one range for every chapter, so that the plots of the book compare at a glance; widened by whole
# decades only should a point (or the ridge) fall outside it.
decade_below(v) = 10.0 ** floor(log10(v))
decade_above(v) = 10.0 ** ceil(log10(v))
lo_x = (X_min < ridge ? X_min : ridge); hi_x = (X_max > ridge ? X_max : ridge)
if (has_dram) { hi_x = (D_max > hi_x ? D_max : hi_x) }
if (!exists("xmin")) { xmin = 0.1 }
if (!exists("xmax")) { xmax = 1000.0 }
if (!exists("ymin")) { ymin = 0.5 }
if (!exists("ymax")) { ymax = 200.0 }
if (lo_x / 2 < xmin) { xmin = decade_below(lo_x / 2) }
if (hi_x * 2 > xmax) { xmax = decade_above(hi_x * 2) }
if (Y_min / 2 < ymin) { ymin = decade_below(Y_min / 2) }
if (Y_max * 3 > ymax || peak_tflops * 3 > ymax) { ymax = (Y_max > peak_tflops ? Y_max : peak_tflops) * 3 }

# Plot area pinned in screen fractions, so that the slope's label can be turned to the slope's angle.
width = 1100; height = 720
left = 0.09; right = 0.97; bottom = 0.17; top = 0.91
slope_angle = atan(((top - bottom) * height / log10(ymax / ymin)) / ((right - left) * width / log10(xmax / xmin))) * 180 / pi

set lmargin at screen left; set rmargin at screen right
set bmargin at screen bottom; set tmargin at screen top
set logscale xy 10
set xrange [xmin:xmax]
set yrange [ymin:ymax]
set format x "%g"
set format y "%g"
set xlabel "arithmetic intensity (FLOP per byte of model traffic; open markers: per byte of DRAM traffic)"
set ylabel "performance (TFLOP/s)"
set title title noenhanced font ",14"
set grid xtics ytics mxtics mytics lc rgb "#e4e4e4" lw 1, lc rgb "#f2f2f2" lw 1
set key off
# Point colours, dark enough for the labels written in them.
set linetype 1 lc rgb "#d95f02"; set linetype 2 lc rgb "#7570b3"; set linetype 3 lc rgb "#1b9e77"
set linetype 4 lc rgb "#e7298a"; set linetype 5 lc rgb "#66a61e"; set linetype 6 lc rgb "#a6761d"
set linetype 7 lc rgb "#0072b2"; set linetype 8 lc rgb "#444444"; set linetype cycle 8

# The roof: the HBM slope up to the ridge, the peak after it; each continued faintly past the ridge.
slope_x0 = (ymin / bw_tbs > xmin) ? ymin / bw_tbs : xmin
# (the faint slope stops below the notes written at the top left)
slope_x1 = (ymax / 2.5 / bw_tbs < xmax) ? ymax / 2.5 / bw_tbs : xmax
set arrow 1 from slope_x0, slope_x0 * bw_tbs to ridge, peak_tflops nohead lw 3 lc rgb "#1f4e9c" front
set arrow 2 from ridge, peak_tflops to xmax, peak_tflops nohead lw 3 lc rgb "#b22222" front
set arrow 3 from ridge, peak_tflops to slope_x1, slope_x1 * bw_tbs nohead lw 1 dt 2 lc rgb "#1f4e9c" back
set arrow 4 from xmin, peak_tflops to ridge, peak_tflops nohead lw 1 dt 2 lc rgb "#b22222" back
set arrow 5 from ridge, ymin to ridge, peak_tflops nohead lw 1 dt 3 lc rgb "#777777" back

bw_label_x = ridge / 14.0   # low on the slope, ending before the ridge (kernels sit near the ends)
set label 1 sprintf("%s %s GB/s (measured)", bw_name, commas(int(bw_gbs + 0.5))) at bw_label_x, bw_label_x * bw_tbs \
    rotate by slope_angle left offset 0, 0.8 tc rgb "#1f4e9c" noenhanced
set label 2 sprintf("%s %.1f TFLOP/s %s", peak_name, peak_tflops, peak_note) at xmax, peak_tflops \
    right offset -1, 0.8 tc rgb "#b22222" noenhanced
# The ridge: a ring where the roofs meet, named at the foot of its dotted line (away from the roof labels).
set label 3 "" at ridge, peak_tflops point pt 6 ps 2.2 lc rgb "#555555"
set label 9 sprintf("ridge %.1f FLOP/B", ridge) at ridge, ymin left offset 0.5, 1.0 tc rgb "#555555" noenhanced
set label 4 "intensity = (FLOPs + softmax ops) / model bytes read + written;  performance = (FLOPs + softmax ops) / median time" \
    at screen 0.5, 0.055 center font ",10" noenhanced
set label 5 "softmax ops counted as 5 per score element (max, subtract, exp, sum, scale);  ceilings measured on this GPU (copy kernel, FFMA loop)" \
    at screen 0.5, 0.025 center font ",10" noenhanced

# Point labels "name  intensity, performance", coloured like their point, never across a roof line: each
# label lies wholly under the roof or wholly over it. Three places are tried, to the right of the point, to
# its left, and under or over it ending at the plot's right edge; each is moved down under the roof or up over
# it until it clears it, and the one that ends up nearest its point wins (the first of them on a tie), a label
# on the other side of the roof than its point counting as 100 pixels further. A label that would then overlap one placed before it (higher points first) or
# a point moves further from the roof; a label away from its point gets a thin leader. Sizes in pixels of the
# canvas above.
char_px = 8.0; line_px = 17; gap_px = 11; dot_px = 7; roof_gap_px = 4; other_side_px = 100
px(x) = (left + (right - left) * log10(x / xmin) / log10(xmax / xmin)) * width
py(y) = (bottom + (top - bottom) * log10(y / ymin) / log10(ymax / ymin)) * height
# the roof's height in pixels at the canvas column x_px (the slope up to the ridge, the peak after it)
x_at(x_px) = xmin * 10.0 ** ((x_px / width - left) / (right - left) * log10(xmax / xmin))
roof_py(x_px) = py(x_at(x_px) * bw_tbs < peak_tflops ? x_at(x_px) * bw_tbs : peak_tflops)

nmodel = npoints
npoints = nmodel + ndram
# Points 1..nmodel: model intensity; nmodel+1..npoints: the same kernels at their DRAM intensity (colour C of
# their model point).
array X[npoints]; array Y[npoints]; array T[npoints]; array C[npoints]
stats datafile using (X[int($0) + 1] = $2, Y[int($0) + 1] = $3, C[int($0) + 1] = int($0) + 1, \
      T[int($0) + 1] = sprintf("%s  %.3g FLOP/B, %.3g TFLOP/s", strcol(1), $2, $3), 1) nooutput
if (has_dram) {
    stats dramfile using (X[nmodel + int($0) + 1] = $3, Y[nmodel + int($0) + 1] = $4, C[nmodel + int($0) + 1] = $5, \
          T[nmodel + int($0) + 1] = sprintf("%s DRAM  %.3g FLOP/B", strcol(1), $3), 1) nooutput
}

# Model points above the HBM roof: their model bytes count re-reads that the L2 cache serves; say so.
above = ""
do for [i = 1:nmodel] {
    if (Y[i] > 1.02 * X[i] * bw_tbs) { above = above . (above eq "" ? "" : ", ") . substr(T[i], 1, strstrt(T[i], "  ") - 1) }
}
note_y = top - 0.03
if (above ne "") {
    set label 6 sprintf("above the HBM roof (%s): their model bytes include re-reads that hit in the L2 cache", above) \
        at screen left + 0.01, note_y left font ",10" tc rgb "#444444" noenhanced front
    note_y = note_y - 0.03
}
if (has_dram) {
    set label 7 "filled: intensity on the IO model's bytes;  open: on the DRAM bytes ncu measured (same FLOPs, same time)" \
        at screen left + 0.01, note_y left font ",10" tc rgb "#444444" noenhanced front
}

# A model point and its DRAM twin are joined by a dashed line at their height: a label that would lie on that
# line (the model point's, to its right; the DRAM point's, to its left) is shifted off it, up or down.
array twin[npoints]
do for [i = 1:npoints] { twin[i] = 0 }
do for [i = nmodel + 1:npoints] { twin[C[i]] = 1 }
off_line_px = 0.7 * line_px

array order[npoints]; array placed[npoints]
array box_x0[npoints]; array box_x1[npoints]; array box_y[npoints]
do for [i = 1:npoints] { order[i] = i; placed[i] = 0 }
do for [i = 1:npoints] {
    do for [j = i + 1:npoints] {
        if (Y[order[j]] > Y[order[i]]) { tmp = order[i]; order[i] = order[j]; order[j] = tmp }
    }
}
if (exists("labels_out")) { set print labels_out }
do for [k = 1:npoints] {
    i = order[k]
    w = strlen(T[i]) * char_px
    p_x = px(X[i]); p_y = py(Y[i])
    # off the dashed line to a twin: a model point's label to its right, a DRAM point's to its left
    lift_r = (i <= nmodel && twin[i]) ? off_line_px : 0; lift_l = (i > nmodel) ? -off_line_px : 0
    p_side = (p_y > roof_py(p_x) + 1) ? 1 : -1    # the point's own side of the roof
    best = -1
    do for [c = 1:3] {
        x0 = (c == 1) ? p_x + gap_px : (c == 2) ? p_x - gap_px - w : right * width - 8 - w
        fits = (c == 1) ? (x0 + w < right * width) : (c == 2) ? (x0 > left * width) : 1
        do for [e = 0:1] {
            sd = 2 * e - 1
            # a label that covers its own point horizontally starts clear of the point's dot
            y = (c == 3 && x0 < p_x + dot_px) ? p_y + sd * (line_px / 2.0 + dot_px + 1) : p_y + (c == 1 ? lift_r : c == 2 ? lift_l : 0)
            # below the roof (sd = -1): the label's top under the roof at its left end (the roof rises to the
            # right); above it (sd = 1): the label's bottom over the roof at its right end
            y = (sd < 0) ? ((y + line_px / 2.0 > roof_py(x0) - roof_gap_px) ? roof_py(x0) - roof_gap_px - line_px / 2.0 : y) \
                         : ((y - line_px / 2.0 < roof_py(x0 + w) + roof_gap_px) ? roof_py(x0 + w) + roof_gap_px + line_px / 2.0 : y)
            # cost: how far the label ends up from its point, up or down and sideways, and a penalty for the
            # other side of the roof than its point's
            cost = abs(y - p_y) + (x0 > p_x ? x0 - p_x : (x0 + w < p_x ? p_x - x0 - w : 0)) + (sd == p_side ? 0 : other_side_px)
            if (fits && y - line_px / 2.0 > bottom * height && y + line_px / 2.0 < top * height && (best < 0 || cost < best)) {
                best = cost; box_x0[i] = x0; box_y[i] = y; side = sd
            }
        }
    }
    box_x1[i] = box_x0[i] + w
    moved = 1
    while (moved) {
        moved = 0
        do for [j = 1:npoints] {
            if (placed[j] && box_x0[i] < box_x1[j] && box_x0[j] < box_x1[i] && abs(box_y[i] - box_y[j]) < line_px) {
                box_y[i] = box_y[j] + side * line_px
                moved = 1
            }
            if (box_x0[i] < px(X[j]) + dot_px && px(X[j]) - dot_px < box_x1[i] \
                && abs(box_y[i] - py(Y[j])) < line_px / 2.0 + dot_px) {
                box_y[i] = py(Y[j]) + side * (line_px / 2.0 + dot_px + 1)
                moved = 1
            }
        }
    }
    placed[i] = 1
    if (exists("labels_out")) {
        print sprintf("%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f", T[i], box_x0[i], box_x1[i], box_y[i] - line_px / 2.0, \
                      box_y[i] + line_px / 2.0, roof_py(box_x0[i]), roof_py(box_x1[i]))
    }
    set label 100 + i T[i] at screen box_x0[i] / width, box_y[i] / height left tc lt C[i] noenhanced front
    if (abs(box_y[i] - p_y) > line_px / 2.0 + 1) {
        # the leader ends at the label's near side, or at its near edge when the label spans the point
        lead_x = (box_x0[i] > p_x) ? box_x0[i] - 2 : (box_x1[i] < p_x) ? box_x1[i] + 2 : p_x
        lead_y = (box_x0[i] > p_x || box_x1[i] < p_x) ? box_y[i] : box_y[i] - side * line_px / 2.0
        set arrow 100 + i from first X[i], first Y[i] to screen lead_x / width, lead_y / height nohead lw 0.5 lc C[i]
    }
}

if (exists("labels_out")) { unset print }

do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size width, height enhanced font "sans,11" background rgb "white"
    } else {
        set terminal svg size width, height dynamic enhanced font "sans,11" background rgb "white"
    }
    set output out . "." . fmt
    if (has_dram) {
        plot dramfile using 2:4:($3 - $2):(0):5 with vectors nohead lw 1.5 dt 2 lc variable notitle, \
             datafile using 2:3:($0 + 1) with points pt 7 ps 1.6 lc variable notitle, \
             dramfile using 3:4:5 with points pt 6 ps 1.8 lw 2 lc variable notitle
    } else {
        plot datafile using 2:3:($0 + 1) with points pt 7 ps 1.6 lc variable notitle
    }
    unset output
}
