#!/usr/bin/env python3
"""journey_data.py: the book's journey in one table: each chapter's time at the article's configuration, beside
the time the article gives for the same step.

    python3 plots/journey_data.py RESULTS_DIR ARTICLES.md OUT.dat

RESULTS_DIR/chNN/run.csv (./chNN/run --csv at the article's configuration): a chapter's time is its `total`
row where it has one (chapter 00's three kernels), else its one row that does attention's FLOPs and is not a
setup kernel (chapter 02's init is left out). A chapter without such a row (chapter 01: the softmax only), a row of
which counts more FLOPs than the forward's 4 B H N^2 d (a backward), or whose row has no time, is left out and named on
stdout, and so is a CPU run (gpu "cpu": its times are not the GPU's). The article's times are read from ARTICLES.md's rows (ARTICLE_TIMES below: the
claim id, and a pattern whose group is the time in ms); a chapter the article has no time for gets NaN.

Writes OUT.dat: one tab-separated line per chapter: chapter, x tic label, our median ms, the article's ms.
Prints one line for the caller, fields separated by "|": GPU, the configuration, the chapters left out; when
every chapter is left out, the GPU and the configuration are empty and no OUT.dat is written.
Exit status 2, with a message, for a missing or empty file, a missing column, a chapter with several candidate
rows, or an article pattern that is not found.
"""
import csv
import glob
import os
import re
import sys

# chapter -> (claim id in ARTICLES.md, pattern whose group 1 is the article's time in ms)
ARTICLE_TIMES = {
    "02": ("V2-time", r"v1 ([0-9.]+) ms"),
    "03": ("V2-time", r"v2 ([0-9.]+) ms"),
    "04": ("V2-pretranspose", r"-> ([0-9.]+) ms"),
}
NEED = ("chapter", "kernel", "gpu", "B", "H", "N", "d", "dtype", "flops", "setup", "time_ms_median", "br", "bc")


def fail(msg):
    print(f"journey_data: {msg}", file=sys.stderr)
    sys.exit(2)


def article_rows(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    rows = {}
    for line in text.splitlines():
        m = re.search(r'<a id="[^"]*"></a>\*\*([^*]+)\*\*', line)
        if m:
            rows[m.group(1)] = line
    return rows


def chapter_row(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    if not rows:
        fail(f"{path} has no data rows")
    missing = [c for c in NEED if c not in rows[0]]
    if missing:
        fail(f"{path}: no column {', '.join(missing)}")
    # attention's forward FLOPs, 4 B H N^2 d (halved for causal): a chapter with a row that counts more times
    # another pass (chapter 07's backward, 10 B H N^2 d), not a step of the forward's journey
    def forward_flops(r):
        f = 4 * int(r["B"]) * int(r["H"]) * int(r["N"]) ** 2 * int(r["d"])
        return f // 2 if r.get("causal") == "1" else f
    work = [r for r in rows if r["setup"] != "1" and r["flops"] not in ("", "0")]
    if any(int(r["flops"]) > forward_flops(r) for r in work):
        return None, None  # left out, and named
    total = [r for r in work if r["kernel"] == "total"]
    if total:
        row, name = total[0], f"{len(rows) - 1} kernels"
    elif len(work) > 1:
        fail(f"{path}: several attention rows ({', '.join(r['kernel'] for r in work)}) and no total")
    elif work:
        row, name = work[0], work[0]["kernel"]
    else:
        return None, None
    return (row, name) if row["time_ms_median"] not in ("", "0") else (None, None)


def main(argv):
    if len(argv) != 4:
        fail("usage: python3 plots/journey_data.py RESULTS_DIR ARTICLES.md OUT.dat")
    results, articles, out = argv[1:]
    csvs = sorted(glob.glob(os.path.join(results, "ch[0-9][0-9]", "run.csv")))
    if not csvs:
        fail(f"no chapter CSV (chNN/run.csv) in '{results}'")
    claims = article_rows(articles)
    lines, left_out, config, gpu = [], [], None, None
    for path in csvs:
        ch = os.path.basename(os.path.dirname(path))[2:]
        row, name = chapter_row(path)
        if row is None or row["gpu"] == "cpu":
            left_out.append(ch)
            continue
        shape = f"B={row['B']} H={row['H']} N={row['N']} d={row['d']}"
        if config is None:
            config, gpu = shape, row["gpu"]
        elif shape != config:
            fail(f"{path}: {shape}, not the configuration of the chapters before it ({config})")
        article = "NaN"
        if ch in ARTICLE_TIMES:
            cid, pattern = ARTICLE_TIMES[ch]
            m = re.search(pattern, claims.get(cid, ""))
            if not m:
                fail(f"{articles}: no '{pattern}' in the row of {cid}")
            article = m.group(1)
        tile = f", {row['br']}x{row['bc']}" if ch >= "02" and row["br"] else ""
        lines.append(f"{ch}\t{ch}: {name}\\n{row['dtype']}{tile}\t{float(row['time_ms_median']):.6g}\t{article}")
    if not lines:
        print(f"||{','.join(left_out)}")
        return
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# each chapter at the article's configuration ({config}), from {results}/chNN/run.csv;"
                f" the article's times from {os.path.basename(articles)} ({', '.join(sorted({c for c, _ in ARTICLE_TIMES.values()}))})\n")
        f.write("# chapter\tlabel\tour median ms\tthe article's ms (NaN: none given)\n")
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, out)
    print(f"{gpu}|{config}|{','.join(left_out)}")


if __name__ == "__main__":
    main(sys.argv)
