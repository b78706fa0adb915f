# profile_join.awk: a chapter's report CSV joined with the DRAM bytes ncu measured, per kernel.
#
#   awk -f common/scripts/csv.awk -f common/scripts/profile_join.awk REPORT_CSV NCU_SUMMARY
#
# REPORT_CSV: ./chNN/run --csv FILE (columns found by name: chapter, kernel, model_* and counted_* bytes).
# NCU_SUMMARY: the output of ncu_metrics.awk -v format=dram, function|read_bytes|write_bytes|launches.
#
# Join: the CUDA kernel of report row R is named R_kernel; a row may launch several kernels, all named
# R_something. A function goes to the report kernel with the longest name R such that the function's name
# starts with "R_". Functions that match no row (helpers such as the poisoning of outputs, or library
# kernels such as cuBLAS's) are listed after the total as other:<function>, without model or counted bytes.
#
# Output: a CSV with the header below; bytes as integers, ratios DRAM / model with 4 decimals, empty where a
# number is missing. The total row's DRAM bytes are the sum over the report's kernels, left empty when one
# of them matched no launch; setup rows (column setup = 1, e.g. chapter 02's init) are left out of it, as the
# report leaves them out of its own total.

BEGIN {
    FS = "\n"
    print "chapter,kernel,ncu_kernels,launches,model_read_bytes,counted_read_bytes,dram_read_bytes,dram_read_over_model," \
          "model_write_bytes,counted_write_bytes,dram_write_bytes,dram_write_over_model"
}

FNR == NR && FNR == 1 {
    csv_columns($0, col)
    split("chapter kernel model_read_bytes model_write_bytes counted_read_bytes counted_write_bytes", need, " ")
    for (i = 1; i in need; i++)
        if (!(need[i] in col)) {
            printf "profile_join: no column '%s' in the header of %s\n", need[i], FILENAME > "/dev/stderr"
            bad = 1
            exit 1
        }
    header = $0
    next
}

FNR == NR {
    if ($0 == header || $0 ~ /^[ \t\r]*$/) next
    csv_split($0, f)
    nrep++
    rep_kernel[nrep] = f[col["kernel"]]
    rep_chapter[nrep] = f[col["chapter"]]
    model_r[nrep] = f[col["model_read_bytes"]];     model_w[nrep] = f[col["model_write_bytes"]]
    counted_r[nrep] = f[col["counted_read_bytes"]]; counted_w[nrep] = f[col["counted_write_bytes"]]
    setup[nrep] = ("setup" in col) ? f[col["setup"]] + 0 : 0
    next
}

NF > 0 {
    n = split($0, g, "|")
    if (n != 4) {
        printf "profile_join: bad line in %s: %s\n", FILENAME, $0 > "/dev/stderr"
        bad = 1
        exit 1
    }
    nfun++
    fun_name[nfun] = g[1]; fun_r[nfun] = g[2]; fun_w[nfun] = g[3]; fun_launches[nfun] = g[4]
}

function ratio(dram, model) { return (dram == "" || model == "" || model + 0 == 0) ? "" : sprintf("%.4f", dram / model) }

function row(chapter, kernel, names, launches, mr, cr, dr, mw, cw, dw) {
    printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", chapter, kernel, names, launches,
        mr, cr, dr, ratio(dr, mr), mw, cw, dw, ratio(dw, mw)
}

END {
    if (bad) exit 1
    chapter = rep_chapter[1]
    for (k = 1; k <= nfun; k++) {
        owner[k] = 0
        for (r = 1; r <= nrep; r++) {
            name = rep_kernel[r]
            if (name == "total" || index(fun_name[k], name "_") != 1) continue
            if (owner[k] == 0 || length(name) > length(rep_kernel[owner[k]])) owner[k] = r
        }
    }
    total_r = 0; total_w = 0; all_matched = 1
    for (r = 1; r <= nrep; r++) {
        if (rep_kernel[r] == "total") { total_row = r; continue }
        names = ""; launches = 0; dr = 0; dw = 0
        for (k = 1; k <= nfun; k++)
            if (owner[k] == r) {
                names = names (names == "" ? "" : " + ") fun_name[k]
                launches += fun_launches[k]; dr += fun_r[k]; dw += fun_w[k]
            }
        if (names == "") {
            all_matched = 0
            row(chapter, rep_kernel[r], "", 0, model_r[r], counted_r[r], "", model_w[r], counted_w[r], "")
            continue
        }
        if (!setup[r]) { total_r += dr; total_w += dw; total_launches += launches }
        row(chapter, rep_kernel[r], names, launches, model_r[r], counted_r[r], sprintf("%.0f", dr),
            model_w[r], counted_w[r], sprintf("%.0f", dw))
    }
    if (total_row)
        row(chapter, "total", "", total_launches + 0, model_r[total_row], counted_r[total_row],
            all_matched ? sprintf("%.0f", total_r) : "", model_w[total_row], counted_w[total_row],
            all_matched ? sprintf("%.0f", total_w) : "")
    for (k = 1; k <= nfun; k++)
        if (owner[k] == 0)
            row(chapter, "other:" fun_name[k], fun_name[k], fun_launches[k], "", "", fun_r[k], "", "", fun_w[k])
}
