# roofline_data.awk: one chapter's report CSV (./chNN/run --csv FILE) -> the roofline data file.
#
#   awk -f common/scripts/csv.awk -f plots/roofline_data.awk -v dat=OUT.dat ch00.csv
#
# Columns are found by name in the CSV header (common/report.h: REPORT_CSV_HEADER), never by position.
# Writes to `dat` one tab-separated line per plotted row: label, intensity (FLOP/byte), performance (TFLOP/s),
# where FLOP = flops + softmax_ops (softmax counted as 5 ops per score element), intensity divides by the
# model bytes (read + write) and performance by the median time. Rows without a time or without any work are
# skipped (a point needs both coordinates > 0 on log axes). The "total" row is plotted only when the chapter
# has more than one kernel row.
#
# Prints one line for the caller, fields separated by "|": chapter, gpu, configuration, ceiling_gbs, ceiling_tflops,
# number of rows written. The ceilings are empty for a CPU run. Exits 2 when the header lacks a column.

BEGIN { FS = "\n"; nrow = 0 }

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
    if (kernel[nrow] != "total") kernel_rows++
    if (nrow == 1) {
        chapter = f[col["chapter"]]
        gpu = f[col["gpu"]]
        config = "B=" f[col["B"]] " H=" f[col["H"]] " N=" f[col["N"]] " d=" f[col["d"]] " " f[col["dtype"]]
        # Every row carries every option; name only those that change this chapter's kernels: tile sizes
        # from chapter 02 on (FlashAttention), the mask, a non-default GEMM, a row count that is not B*H*N.
        if (chapter + 0 >= 2 && f[col["br"]] != "") config = config " Br=" f[col["br"]] " Bc=" f[col["bc"]]
        if (f[col["causal"]] == "1") config = config " causal"
        if (f[col["gemm"]] == "cublas") config = config " gemm=cublas"
        if (f[col["rows"]] != "" && f[col["rows"]] + 0 != f[col["B"]] * f[col["H"]] * f[col["N"]])
            config = config " rows=" f[col["rows"]]
    }
    if (gbs == "" && f[col["ceiling_gbs"]] != "") gbs = f[col["ceiling_gbs"]]
    if (tflops == "" && f[col["ceiling_tflops"]] != "") tflops = f[col["ceiling_tflops"]]
}

END {
    if (bad) exit bad
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
            printf "%s\t%.9g\t%.9g\n", kernel[r], work[r] / bytes[r], work[r] / (time_ms[r] * 1e-3) / 1e12 > dat
            written++
        }
        close(dat)
    }
    printf "%s|%s|%s|%s|%s|%d\n", chapter, gpu, config, gbs, tflops, written
}
