# ncu_dram.awk: DRAM bytes per kernel function from Nsight Compute's CSV output.
#
#   awk -f common/scripts/csv.awk -f common/scripts/ncu_dram.awk NCU_OUTPUT
#
# Input: what `ncu --csv --kernel-name-base function --metrics dram__bytes_read.sum,dram__bytes_write.sum`
# prints: one row per (launch, metric) under a header with the columns "ID", "Kernel Name", "Metric Name",
# "Metric Unit" and "Metric Value" (found by name). Lines before the header and lines that are not rows of
# that table (==PROF== messages, the program's own output) are ignored. Values in scaled units (Kbyte,
# Mbyte, ...; ncu's default without --print-units base) are converted to bytes; thousands separators are
# removed.
#
# Output, one line per kernel function in the order of first launch: function|read_bytes|write_bytes|launches
# Exits 1 with a message when there is no such table or it holds no DRAM metric.

BEGIN {
    FS = "\n"
    unit_scale["byte"] = 1;   unit_scale["Kbyte"] = 1e3;  unit_scale["Mbyte"] = 1e6
    unit_scale["Gbyte"] = 1e9; unit_scale["Tbyte"] = 1e12
    unit_scale["KB"] = 1e3;   unit_scale["MB"] = 1e6;     unit_scale["GB"] = 1e9;  unit_scale["TB"] = 1e12
    unit_scale["KiB"] = 1024; unit_scale["MiB"] = 1048576; unit_scale["GiB"] = 1073741824
    nfunc = 0; nrows = 0
}

/^==(ERROR|WARNING)==/ { errors = errors "\n  " $0 }

!have_header && /"Kernel Name"/ && /"Metric Name"/ && /"Metric Value"/ {
    ncols = csv_columns($0, col)
    have_header = 1
    next
}

have_header && /^"/ {
    if (csv_split($0, f) != ncols) next
    metric = f[col["Metric Name"]]
    if (metric != "dram__bytes_read.sum" && metric != "dram__bytes_write.sum") next

    name = f[col["Kernel Name"]]
    sub(/\(.*/, "", name)              # parameters, if the name base is "demangled"
    sub(/<.*/, "", name)               # template arguments
    sub(/.* /, "", name)               # a return type
    if (!(name in launches)) { func_order[++nfunc] = name; launches[name] = 0; read[name] = 0; write[name] = 0 }

    launch = ("ID" in col) ? f[col["ID"]] : nrows
    if (!((name, launch) in seen)) { seen[name, launch] = 1; launches[name]++ }

    unit = f[col["Metric Unit"]]
    if (!(unit in unit_scale)) {
        printf "ncu_dram: unknown unit '%s' for %s of %s\n", unit, metric, name > "/dev/stderr"
        bad = 1
        exit 1
    }
    value = f[col["Metric Value"]]
    gsub(/[, ]/, "", value)
    if (value !~ /^[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?$/) {
        printf "ncu_dram: value '%s' of %s for %s is not a number\n", f[col["Metric Value"]], metric, name > "/dev/stderr"
        bad = 1
        exit 1
    }
    bytes = value * unit_scale[unit]
    if (unit != "byte") scaled = 1
    if (metric == "dram__bytes_read.sum") read[name] += bytes
    else write[name] += bytes
    nrows++
}

END {
    if (bad) exit 1
    if (scaled)
        print "ncu_dram: ncu printed scaled units (Kbyte, Mbyte, ...): byte counts are rounded; pass --print-units base" > "/dev/stderr"
    if (nrows == 0) {
        if (!have_header)
            printf "ncu_dram: no ncu CSV table (no header with \"Kernel Name\", \"Metric Name\", \"Metric Value\") in %s%s\n", \
                FILENAME, errors > "/dev/stderr"
        else
            printf "ncu_dram: no dram__bytes_read.sum / dram__bytes_write.sum rows in %s%s\n", FILENAME, errors > "/dev/stderr"
        exit 1
    }
    for (i = 1; i <= nfunc; i++) {
        name = func_order[i]
        printf "%s|%.0f|%.0f|%d\n", name, read[name], write[name], launches[name]
    }
}
