# csv.awk: CSV helpers of the plot scripts (plots/render-all.sh, plots/roofline_data.awk; POSIX awk; mawk works); the book's
# other tools read CSVs with Python's csv module (common/scripts/book.py).
# Load it before a script that uses it: awk -f plots/csv.awk -f other.awk ...
#
#   csv_split(line, f)      splits one CSV line into f[1..n], removing quotes ("a,b" stays one field); returns n
#   csv_columns(line, col)  reads a header line: col[name] = position
#   with_commas(x)          11240734720 -> "11,240,734,720" (x rounded to an integer)
#
# Large byte counts are printed with "%.0f", never "%d": mawk's %d stops at 2^31 - 1.

function csv_split(line, f,    n, i, c, field, quoted) {
    sub(/\r$/, "", line)
    n = 0; field = ""; quoted = 0
    for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (quoted) {
            if (c == "\"" && substr(line, i + 1, 1) == "\"") { field = field "\""; i++ }
            else if (c == "\"") quoted = 0
            else field = field c
        } else if (c == "\"") quoted = 1
        else if (c == ",") { f[++n] = field; field = "" }
        else field = field c
    }
    f[++n] = field
    return n
}

function csv_columns(line, col,    f, n, i) {
    n = csv_split(line, f)
    for (i = 1; i <= n; i++) col[f[i]] = i
    return n
}

function with_commas(x,    s, neg, out) {
    s = sprintf("%.0f", x)
    neg = substr(s, 1, 1) == "-"
    if (neg) s = substr(s, 2)
    out = ""
    while (length(s) > 3) {
        out = "," substr(s, length(s) - 2) out
        s = substr(s, 1, length(s) - 3)
    }
    return (neg ? "-" : "") s out
}
