# ncu_metrics.awk: every metric ncu reported for one kernel, from its CSV output (ncu --csv --print-units base
# --metrics ...), one line each:  metric|unit|value   (values of several launches added; separators removed)
#
#   awk -f common/scripts/csv.awk -f 03_flash_v2/ncu_metrics.awk -v kernel=flash_v2_kernel NCU_OUTPUT
#
# Rows are those whose "Kernel Name" contains `kernel`; columns are found by name in ncu's header. Exits 1
# with a message when there is no such row.

BEGIN { FS = "\n"; n = 0 }

/^==(ERROR|WARNING)==/ { errors = errors "\n  " $0 }

!have_header && /"Kernel Name"/ && /"Metric Name"/ && /"Metric Value"/ {
    ncols = csv_columns($0, col)
    have_header = 1
    next
}

have_header && /^"/ {
    if (csv_split($0, f) != ncols || index(f[col["Kernel Name"]], kernel) == 0) next
    metric = f[col["Metric Name"]]
    value = f[col["Metric Value"]]
    gsub(/[, ]/, "", value)
    if (value !~ /^-?[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?$/) next
    if (!(metric in sum)) order[++n] = metric
    unit[metric] = f[col["Metric Unit"]]
    sum[metric] += value
}

END {
    if (n == 0) {
        printf "ncu_metrics: no metric rows for a kernel named *%s* in %s%s\n", kernel, FILENAME, errors > "/dev/stderr"
        exit 1
    }
    for (i = 1; i <= n; i++) {
        m = order[i]
        if (sum[m] == int(sum[m])) printf "%s|%s|%.0f\n", m, unit[m], sum[m]
        else printf "%s|%s|%.6g\n", m, unit[m], sum[m]
    }
}
