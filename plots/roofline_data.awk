# roofline_data.awk: one chapter's report CSV (./chNN/run --csv FILE) -> the roofline data file.
#
#   awk -f plots/csv.awk -f plots/roofline_data.awk -v dat=OUT.dat ch00.csv
#       [-v profile=PROFILE.csv -v dram_dat=OUT_dram.dat]
#
# Columns are found by name in the CSV header (common/report.h: REPORT_CSV_HEADER), never by position.
# Writes to `dat` one tab-separated line per plotted row: label, intensity (FLOP/byte), performance (TFLOP/s),
# where FLOP = flops + softmax_ops (softmax counted as 5 ops per score element), intensity divides by the
# model bytes (read + write) and performance by the median time. Rows without a time or without any work are
# skipped (a point needs both coordinates > 0 on log axes). The "total" row is plotted only when the chapter
# has more than one plotted kernel row (otherwise it is that kernel's point again).
#
# With a profile (common/scripts/profile_join.awk's CSV: DRAM bytes per kernel, measured by ncu on the same
# configuration), also writes to `dram_dat` one line per plotted row that has DRAM bytes: label, model
# intensity, DRAM intensity (the same FLOPs over the DRAM bytes read + written), TFLOP/s, and the number of
# its model point in `dat` (1 = first data line).
#
# Prints one line for the caller, fields separated by "|": chapter, gpu, configuration, ceiling_gbs, ceiling_tflops,
# number of rows written, number of DRAM rows written. The ceilings are empty for a CPU run. Exits 2 when the header lacks a column.

BEGIN { FS = "\n"; nrow = 0 }

# read_profile(FILE): dram[kernel] = DRAM bytes read + written, for the rows where ncu measured both.
function read_profile(file,    line, pcol, f, n, k) {
    n = 0
    while ((getline line < file) > 0) {
        if (++n == 1) { csv_columns(line, pcol); continue }
        if (!("kernel" in pcol) || !("dram_read_bytes" in pcol) || !("dram_write_bytes" in pcol)) break
        csv_split(line, f)
        k = f[pcol["kernel"]]
        if (f[pcol["dram_read_bytes"]] != "" && f[pcol["dram_write_bytes"]] != "" && \
            f[pcol["dram_read_bytes"]] + f[pcol["dram_write_bytes"]] > 0)
            dram[k] = f[pcol["dram_read_bytes"]] + f[pcol["dram_write_bytes"]]
    }
    close(file)
}

NR == 1 || $0 == header {
    if (NR == 1) {
        header = $0
        csv_columns($0, col)
        split("chapter kernel gpu B H N d dtype flops softmax_ops model_read_bytes model_write_bytes rows br bc causal gemm " \
              "time_ms_median ceiling_gbs ceiling_tflops", need, " ")
        for (i = 1; i in need; i++)
            if (!(need[i] in col)) {
                printf "%s: no column '%s' in the header\n", FILENAME, need[i] > "/dev/stderr"
                bad = 2
                exit 2
            }
    }
    next
}

/^[ \t]*$/ { next }

{
    csv_split($0, f)
    nrow++
    kernel[nrow] = f[col["kernel"]]
    time_ms[nrow] = f[col["time_ms_median"]]
    work[nrow] = f[col["flops"]] + f[col["softmax_ops"]]
    bytes[nrow] = f[col["model_read_bytes"]] + f[col["model_write_bytes"]]
    tile[nrow] = f[col["br"]] != "" ? f[col["br"]] "x" f[col["bc"]] : ""
    if (tile[nrow] != tile[1]) mixed_tiles = 1
    if (kernel[nrow] != "total" && time_ms[nrow] + 0 > 0 && work[nrow] > 0 && bytes[nrow] > 0) kernel_rows++
    if (nrow == 1) {
        chapter = f[col["chapter"]]
        gpu = f[col["gpu"]]
        base = "B=" f[col["B"]] " H=" f[col["H"]] " N=" f[col["N"]] " d=" f[col["d"]] " " f[col["dtype"]]
        # Every row carries every option; name only those that change this chapter's kernels: tile sizes
        # from chapter 02 on (FlashAttention), the mask, a non-default GEMM, a row count that is not B*H*N.
        if (chapter + 0 >= 2 && f[col["br"]] != "") tiles = " Br=" f[col["br"]] " Bc=" f[col["bc"]]
        if (f[col["causal"]] == "1") mask = " causal"
        if (f[col["gemm"]] == "cublas") rest = rest " gemm=cublas"
        if (f[col["rows"]] != "" && f[col["rows"]] + 0 != f[col["B"]] * f[col["H"]] * f[col["N"]])
            rest = rest " rows=" f[col["rows"]]
    }
    if (gbs == "" && f[col["ceiling_gbs"]] != "") gbs = f[col["ceiling_gbs"]]
    if (tflops == "" && f[col["ceiling_tflops"]] != "") tflops = f[col["ceiling_tflops"]]
}

END {
    if (bad) exit bad
    # rows of different tiles (chapter 05's kernels): each point names its tile, the title none
    config = base (mixed_tiles ? "" : tiles) mask rest
    if (profile != "") read_profile(profile)
    written = 0
    if (gbs != "" && tflops != "") {
        print "# roofline points from " FILENAME > dat
        print "# label\tintensity (FLOP/byte)\tTFLOP/s   (FLOP = flops + softmax_ops, softmax = 5 ops per score element)" > dat
        for (r = 1; r <= nrow; r++) {
            if (kernel[r] == "total" && kernel_rows < 2) continue
            if (time_ms[r] == "" || time_ms[r] + 0 <= 0) {
                printf "%s: row '%s' has no time, not plotted\n", FILENAME, kernel[r] > "/dev/stderr"
                continue
            }
            if (work[r] <= 0 || bytes[r] <= 0) {
                printf "%s: row '%s' has no FLOPs or no bytes, not plotted\n", FILENAME, kernel[r] > "/dev/stderr"
                continue
            }
            printf "%s\t%.9g\t%.9g\n", kernel[r] (mixed_tiles && tile[r] != "" ? " " tile[r] : ""), work[r] / bytes[r],
                work[r] / (time_ms[r] * 1e-3) / 1e12 > dat
            written++
            if (profile != "" && (kernel[r] in dram))
                plotted_dram[r] = written
        }
        close(dat)
        dram_written = 0
        for (r = 1; r <= nrow; r++) {
            if (!(r in plotted_dram)) continue
            printf "%s\t%.9g\t%.9g\t%.9g\t%d\n", kernel[r], work[r] / bytes[r], work[r] / dram[kernel[r]],
                work[r] / (time_ms[r] * 1e-3) / 1e12, plotted_dram[r] > dram_dat
            dram_written++
        }
        if (dram_written) close(dram_dat)
    }
    printf "%s|%s|%s|%s|%s|%d|%d\n", chapter, gpu, config, gbs, tflops, written, dram_written
}
