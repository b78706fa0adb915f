# profile_table.awk: the CSV of profile_join.awk as two readable tables, bytes read then bytes written.
#
#   awk -f common/scripts/csv.awk -f common/scripts/profile_table.awk JOINED_CSV

BEGIN { FS = "\n" }
NR == 1 { csv_columns($0, col); next }
{ n++; csv_split($0, f); for (c in col) v[n, c] = f[col[c]] }

function num(x) { return x == "" ? "-" : with_commas(x) }

function table(what, title,    i, ratio) {
    printf "\n%-22s %8s %18s %18s %18s %10s\n", title, "launches", "model", "counted", "DRAM (ncu)", "DRAM/model"
    for (i = 1; i <= n; i++) {
        ratio = v[i, "dram_" what "_over_model"]
        printf "%-22s %8s %18s %18s %18s %10s\n", v[i, "kernel"], v[i, "launches"], num(v[i, "model_" what "_bytes"]),
            num(v[i, "counted_" what "_bytes"]), num(v[i, "dram_" what "_bytes"]), ratio == "" ? "-" : ratio
    }
}

END { table("read", "bytes read"); table("write", "bytes written") }
