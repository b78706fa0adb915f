# csv_get.awk: columns of a CSV file found by name, one line per data row, the values joined by '|'
# (plots/render-all.sh; the benches use book.py csv-rows through bench-lib.sh's csv_rows).
#
#   awk -f plots/csv.awk -f plots/csv_get.awk -v columns=N,time_ms_median \
#       [-v where=kernel=flash_v2] [-v row=1] FILE
#
# columns: comma-separated column names; a name the header lacks gives an empty value.
# where:   COL=VALUE, only the rows whose column COL holds VALUE (a missing COL matches no row); several,
#          separated by spaces (kernel=flash_v4_paired causal=1), only the rows that match them all.
# row:     only the row-th of the rows selected (1 = the first), then stop.
# Quoted fields are handled (csv.awk); a header line repeated inside the file (CSVs appended) is skipped.

BEGIN {
    FS = "\n"
    ncols = split(columns, want, ",")
    nwhere = split(where, cond, " ")
    for (i = 1; i <= nwhere; i++) {
        eq = index(cond[i], "=")
        where_col[i] = substr(cond[i], 1, eq - 1); where_val[i] = substr(cond[i], eq + 1)
    }
    seen = 0
}
NR == 1 { header = $0; csv_columns($0, col); next }
$0 == header || $0 ~ /^[ \t\r]*$/ { next }
{
    csv_split($0, f)
    for (i = 1; i <= nwhere; i++) if (!(where_col[i] in col) || f[col[where_col[i]]] != where_val[i]) next
    seen++
    if (row != "" && seen != row + 0) next
    line = ""
    for (i = 1; i <= ncols; i++) line = line (i > 1 ? "|" : "") (want[i] in col ? f[col[want[i]]] : "")
    print line
    if (row != "") exit
}
