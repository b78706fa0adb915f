# ncu_metrics.awk: the metrics of Nsight Compute's CSV output, per kernel function (the one parser of ncu's
# CSV: profile.sh and every bench.sh, through bench-lib.sh).
#
#   awk -f common/scripts/csv.awk -f common/scripts/ncu_metrics.awk -v kernel=flash_v2_kernel NCU_OUTPUT
#       every metric of the kernel function named exactly `kernel`, one line each:  metric|unit|value
#   awk -f common/scripts/csv.awk -f common/scripts/ncu_metrics.awk -v format=dram NCU_OUTPUT
#       DRAM bytes per kernel function in the order of first launch:  function|read_bytes|write_bytes|launches
#       (the input of profile_join.awk)
#
# Input: what `ncu --csv --metrics ...` prints: one row per (launch, metric) under a header with the columns
# "ID", "Kernel Name", "Metric Name", "Metric Unit" and "Metric Value" (found by name). Lines before the
# header and lines that are not rows of that table (==PROF== messages, the program's own output) are ignored.
# A kernel name is reduced to its function (parameters, template arguments and return type removed, in case
# --kernel-name-base was not "function"); launches are counted by ID. Values in scaled byte units (Kbyte,
# Mbyte, ...; ncu's default without --print-units base) are converted to bytes, thousands separators removed.
# A metric of several launches is their sum when its name ends in .sum, else their mean.
#
# Exits 1 with a message when there is no such table, no row for `kernel`, or (format=dram) no DRAM metric,
# an unknown unit or a value that is not a number in a DRAM row.

BEGIN {
    FS = "\n"
    unit_scale["byte"] = 1;   unit_scale["Kbyte"] = 1e3;  unit_scale["Mbyte"] = 1e6
    unit_scale["Gbyte"] = 1e9; unit_scale["Tbyte"] = 1e12
    unit_scale["KB"] = 1e3;   unit_scale["MB"] = 1e6;     unit_scale["GB"] = 1e9;  unit_scale["TB"] = 1e12
    unit_scale["KiB"] = 1024; unit_scale["MiB"] = 1048576; unit_scale["GiB"] = 1073741824
    nfunc = 0; nmetric = 0; nrows = 0
    dram = (format == "dram")
}

/^==(ERROR|WARNING)==/ { errors = errors "\n  " $0 }

!have_header && /"Kernel Name"/ && /"Metric Name"/ && /"Metric Value"/ {
    ncols = csv_columns($0, col)
    have_header = 1
    next
}

function fail(msg) { printf "ncu_metrics: %s\n", msg > "/dev/stderr"; bad = 1; exit 1 }

have_header && /^"/ {
    if (csv_split($0, f) != ncols) next
    metric = f[col["Metric Name"]]
    is_dram = (metric == "dram__bytes_read.sum" || metric == "dram__bytes_write.sum")
    if (dram && !is_dram) next

    name = f[col["Kernel Name"]]
    sub(/\(.*/, "", name)              # parameters, if the name base is "demangled"
    sub(/<.*/, "", name)               # template arguments
    sub(/.* /, "", name)               # a return type
    if (!dram && name != kernel) next
    if (!(name in launches)) { func_order[++nfunc] = name; launches[name] = 0; read[name] = 0; write[name] = 0 }
    launch = ("ID" in col) ? f[col["ID"]] : NR
    if (!((name, launch) in seen)) { seen[name, launch] = 1; launches[name]++ }

    unit = f[col["Metric Unit"]]
    value = f[col["Metric Value"]]
    gsub(/[, ]/, "", value)
    if (value !~ /^-?[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?$/) {
        if (dram) fail(sprintf("value '%s' of %s for %s is not a number", f[col["Metric Value"]], metric, name))
        next
    }
    if (unit in unit_scale) {
        value *= unit_scale[unit]
        if (unit != "byte") { scaled = 1; unit = "byte" }
    } else if (dram) fail(sprintf("unknown unit '%s' for %s of %s", unit, metric, name))
    nrows++
    if (dram) {
        if (metric == "dram__bytes_read.sum") read[name] += value
        else write[name] += value
        next
    }
    if (!(metric in sum)) { order[++nmetric] = metric; count[metric] = 0 }
    unit_of[metric] = unit
    sum[metric] += value
    count[metric]++
}

END {
    if (bad) exit 1
    if (scaled)
        print "ncu_metrics: ncu printed scaled units (Kbyte, Mbyte, ...): byte counts are rounded; pass --print-units base" > "/dev/stderr"
    if (nrows == 0) {
        if (!have_header)
            printf "ncu_metrics: no ncu CSV table (no header with \"Kernel Name\", \"Metric Name\", \"Metric Value\") in %s%s\n", \
                FILENAME, errors > "/dev/stderr"
        else if (dram)
            printf "ncu_metrics: no dram__bytes_read.sum / dram__bytes_write.sum rows in %s%s\n", FILENAME, errors > "/dev/stderr"
        else
            printf "ncu_metrics: no metric rows for the kernel function %s in %s%s\n", kernel, FILENAME, errors > "/dev/stderr"
        exit 1
    }
    if (dram) {
        for (i = 1; i <= nfunc; i++) {
            name = func_order[i]
            printf "%s|%.0f|%.0f|%d\n", name, read[name], write[name], launches[name]
        }
        exit 0
    }
    for (i = 1; i <= nmetric; i++) {
        m = order[i]
        v = (m ~ /\.sum$/) ? sum[m] : sum[m] / count[m]
        if (v == int(v)) printf "%s|%s|%.0f\n", m, unit_of[m], v
        else printf "%s|%s|%.6g\n", m, unit_of[m], v
    }
}
