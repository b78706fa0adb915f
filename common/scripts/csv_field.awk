# csv_field.awk: prints one field of a CSV file, found by column name: data row `row` (1 = first after the
# header) of column `column`.
#
#   awk -f common/scripts/csv.awk -f common/scripts/csv_field.awk -v column=gpu -v row=1 FILE

BEGIN { FS = "\n" }
NR == 1 { csv_columns($0, col); next }
NR == row + 1 { if (column in col) { csv_split($0, f); print f[col[column]] } exit }
