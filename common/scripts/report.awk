# report.awk: the table of common/scripts/report.sh (load csv.awk first, for with_commas).
#
#   awk -f csv.awk -f report.awk -v results=DIR FACTS ARTICLES.md CLAIMS
#
# FACTS:    KEY<TAB>VALUE lines (what report.sh read from the programs and the results files)
# ARTICLES: every claim id (<a id="..."></a>**ID**) and the text of its row (a table row, or a paragraph)
# CLAIMS:   id|claim|article regex|model|measured|source|ratio|chapter|note (report.sh explains the fields);
#           an id that starts with "+" is a row of ours that ARTICLES.md does not list (the PyTorch rows)
# Templates: {EXPR} is replaced by its value; EXPR is a fact KEY, a number, or ARTICLEn (the n-th number of the
# article's value as found), joined by * and / (left to right); {A~B} says whether A and B agree within 10%.
# Exit status 1 when an id of ARTICLES.md has no claim line, a claim has no id in ARTICLES.md, or an article
# pattern is not found in its row.
BEGIN { FS = "\t"; TOL = 0.10 }
FILENAME == ARGV[1] { fact[$1] = $2; next }
FILENAME == ARGV[2] {
    if (match($0, /<a id="[^"]*"><\/a>\*\*[^*]+\*\*/)) {
        s = substr($0, RSTART, RLENGTH); sub(/.*\*\*([^*]*)?/, "", s)
        s = substr($0, RSTART, RLENGTH); sub(/^.*<\/a>\*\*/, "", s); sub(/\*\*$/, "", s)
        cur = s; ids[++nid] = s; text[s] = $0; para = ($0 !~ /^\|/)
    } else if (cur != "" && para && $0 !~ /^[ \t]*$/) text[cur] = text[cur] " " $0
    else cur = ""
    next
}
{
    n = split($0, f, "|")
    id = f[1]
    if (substr(id, 1, 1) == "+") { id = id SUBSEP (++nextra); extra[nextra] = id }
    else if (id in claim) { print "report: claim " id " twice" > "/dev/stderr"; bad = 1 }
    claim[id] = $0
    if (substr(id, 1, 1) == "+") ;
    else if (!(id in text)) { print "report: claim " id " is not in ARTICLES.md" > "/dev/stderr"; bad = 1 }
    if (n != 9) { print "report: claim " id ": " n " fields, 9 expected" > "/dev/stderr"; bad = 1 }
}
END {
    print "# Claims of the two articles, reproduced on " (("gpu" in fact) ? fact["gpu"] : results)
    print ""
    print "Written by `make report` (common/scripts/report.sh) from " results "/ and the chapter programs' `--model --csv -`."
    print "Article: the value as ARTICLES.md quotes it (the article's GPU: a GeForce RTX 2070, " fact["rtx_gbs"] " GB/s)."
    print "Model: printed by this tree's programs, run when the report is made. Measured: from the file named"
    print "(paths under " results "/). ours/article: measured (else model) over the article's value, like for like."
    print ""
    print "| id | claim | article | our model | our measurement | from | ours/article | ch | note |"
    print "|---|---|---|---|---|---|---:|---|---|"
    for (i = 1; i <= nid; i++) row(ids[i])
    for (i = 1; i <= nextra; i++) row(extra[i])
    exit bad
}
function row(id,    f, n, art, m, model, meas, ratio, note, label) {
    if (!(id in claim)) {
        print "report: " id " (ARTICLES.md) has no line in report.sh's CLAIMS" > "/dev/stderr"; bad = 1
        printf "| %s | (no entry in common/scripts/report.sh) | | | | | | | |\n", id
        return
    }
    n = split(claim[id], f, "|")
    nart = 0; art = "-"
    if (f[3] != "") {
        if (match(text[id], f[3])) { art = substr(text[id], RSTART, RLENGTH); article_numbers(art) }
        else { print "report: " id ": the article pattern '" f[3] "' is not in its ARTICLES.md row" > "/dev/stderr"; bad = 1; art = "?" }
    }
    model = fill(f[4], "")
    meas = fill(f[5], f[6])
    ratio = f[7] == "" ? "-" : fmt(eval(f[7]))
    if (ratio == "") ratio = "-"
    note = fill(f[9], "")
    label = f[1]; sub(/^\+/, "", label)
    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", label, f[2], art, model == "" ? "-" : model, \
        meas == "" ? "-" : meas, f[6] == "" ? "-" : f[6], ratio, f[8] == "" ? "-" : f[8], note == "" ? "-" : note
}
function article_numbers(s,    t) {
    nart = 0; t = s
    # numbers that follow a letter are names (v1, H100), not values
    while (match(t, /[0-9][0-9,]*(\.[0-9]+)?/)) {
        if (RSTART == 1 || substr(t, RSTART - 1, 1) !~ /[A-Za-z_^]/) { anum[++nart] = substr(t, RSTART, RLENGTH); gsub(/,/, "", anum[nart]) }
        t = substr(t, RSTART + RLENGTH)
    }
}
# A template: "none: why" is a claim nothing measures; a fact that is missing makes the cell say so.
function fill(tpl, source,    out, e, v, missing) {
    if (tpl ~ /^none: /) return "not measured: " substr(tpl, 7)
    out = ""; missing = 0
    while (match(tpl, /\{[^}]*\}/)) {
        e = substr(tpl, RSTART + 1, RLENGTH - 2)
        v = (index(e, "~") ? agree(e) : (e ~ /^[A-Za-z_0-9]+$/ && (e in fact)) ? show(fact[e]) : fmt(eval(e)))
        if (v == "") missing = 1
        out = out substr(tpl, 1, RSTART - 1) v
        tpl = substr(tpl, RSTART + RLENGTH)
    }
    if (missing) return "not in this results folder" (source != "" ? " (" source ")" : "")
    return out tpl
}
function agree(e,    p, a, b, d) {
    split(e, p, "~"); a = eval(p[1]); b = eval(p[2])
    if (a == "" || b == "" || b + 0 == 0) return ""
    d = a / b - 1
    return (d <= TOL && d >= -TOL) ? sprintf("accounts for it (%+.0f%%)", 100 * d) : sprintf("does not account for it (%+.0f%%)", 100 * d)
}
# KEY, number or ARTICLEn joined by * and /, left to right; "" when an operand is missing.
function eval(e,    t, n, i, v, x, op) {
    n = split(e, t, /[*\/]/)
    op = e; gsub(/[^*\/]/, "", op)
    for (i = 1; i <= n; i++) {
        x = operand(t[i]); if (x == "") return ""
        if (i == 1) v = x
        else if (substr(op, i - 1, 1) == "*") v *= x
        else { if (x + 0 == 0) return ""; v /= x }
    }
    return v
}
function operand(s) {
    if (s ~ /^[0-9.]+(e[0-9]+)?$/) return s + 0
    if (s ~ /^ARTICLE[0-9]+$/) { s = substr(s, 8) + 0; return s <= nart ? anum[s] + 0 : "" }
    return (s in fact && fact[s] != "") ? fact[s] + 0 : ""
}
# A fact as read: integers of 5 digits or more with thousands separators, everything else as the file has it.
function show(v) { return (length(v) >= 5 && v ~ /^[0-9]+$/) ? with_commas(v) : v }
function fmt(v) {
    if (v == "") return ""
    if (v >= 10000 && v == int(v)) return with_commas(v)
    if (v >= 1000) return with_commas(v)
    if (v >= 100) return sprintf("%.0f", v)
    return sprintf("%.3g", v)
}
