"""A run's results against a reference run (`make compare BASE=results/NVIDIA_H200 NEW=DIR`).

For every chapter folder chNN in both, every CSV of the book's report format (run.csv and the bench CSVs, the
columns of the programs' --csv) that both hold: rows are matched by kernel and shape (kernel, B, H, N, d, dtype,
br, bc, causal, rows). Bytes must be equal (model and counted, read and write); times are compared as NEW / BASE
of the median. A regression: NEW slower than BASE by more than the tolerance (COMPARE_TOL, a fraction, default
0.10), or any byte count different. Prints a table either way; exits 1 on a regression, 2 when nothing could be
compared (a folder missing, no file in common) or a file is unreadable, 0 otherwise. Files in only one of the two
folders are listed, not compared."""
import glob
import os
import re
import sys

from .results import table

KEY = ("kernel", "B", "H", "N", "d", "dtype", "br", "bc", "causal", "rows")
BYTES = ("model_read_bytes", "model_write_bytes", "counted_read_bytes", "counted_write_bytes")


def is_report_csv(path):
    with open(path, errors="replace") as f:
        return re.match(r"^chapter,kernel,gpu,.*model_read_bytes,.*time_ms_median", f.readline()) is not None


def main(args):
    if len(args) != 2 or not all(args):
        print("usage: make compare BASE=results/<GPU> NEW=<a run's results folder> [COMPARE_TOL=0.05]", file=sys.stderr)
        return 2
    base, new = args
    for d in (base, new):
        if not os.path.isdir(d):
            print("compare: no results folder '%s'" % d, file=sys.stderr)
            return 2
    tol_text = os.environ.get("COMPARE_TOL", "0.10")
    if not re.match(r"^[0-9]*\.?[0-9]+$", tol_text):
        print("compare: COMPARE_TOL must be a fraction such as 0.05, not '%s'" % tol_text, file=sys.stderr)
        return 2
    tol = float(tol_text)
    print("compare: %s against %s; times NEW/BASE (median), a regression above %g; bytes must be equal"
          % (new, base, 1 + tol))
    order, rows = [], {}
    pairs = 0
    for chdir in sorted(d for d in glob.glob(os.path.join(base, "ch[0-9][0-9]")) if os.path.isdir(d)):
        ch = os.path.basename(chdir)
        if not os.path.isdir(os.path.join(new, ch)):
            print("  %s: not in %s (not compared)" % (ch, new))
            continue
        for f in sorted(glob.glob(os.path.join(chdir, "*.csv"))):
            if not is_report_csv(f):
                continue
            name = ch + "/" + os.path.basename(f)
            if not os.path.isfile(os.path.join(new, name)):
                print("  %s: not in %s (not compared)" % (name, new))
                continue
            pairs += 1
            for side, path in (("B", f), ("N", os.path.join(new, name))):
                for r in table(path).rows:
                    k = (name,) + tuple(r.get(c, "") for c in KEY)
                    if k not in rows:
                        order.append(k)
                        rows[k] = {}
                    rows[k].setdefault(side, r)          # a repeated row: the first one counts
    for chdir in sorted(glob.glob(os.path.join(new, "ch[0-9][0-9]"))):
        if os.path.isdir(chdir) and not os.path.isdir(os.path.join(base, os.path.basename(chdir))):
            print("  %s: not in %s (not compared)" % (os.path.basename(chdir), base))
    if pairs == 0:
        print("compare: no results file in common between %s and %s" % (base, new), file=sys.stderr)
        return 2
    line = "%-22s %-22s %-26s %12s %12s %8s  %s"
    print(line % ("file", "kernel", "shape", "base ms", "new ms", "new/base", "verdict"))
    regress = []
    for k in order:
        shape = "B%s H%s N%s d%s %s %sx%s%s" % (k[2], k[3], k[4], k[5], k[6], k[7], k[8],
                                               " causal" if k[9] == "1" else "")
        b, n = rows[k].get("B"), rows[k].get("N")
        if b is None:
            print(line % (k[0], k[1], shape, "-", n.get("time_ms_median", ""), "-", "new row (not compared)"))
            continue
        if n is None:
            print(line % (k[0], k[1], shape, b.get("time_ms_median", ""), "-", "-", "missing in NEW (not compared)"))
            continue
        bms, nms = b.get("time_ms_median", ""), n.get("time_ms_median", "")
        verdict, r = "ok", "-"
        if any(b.get(c, "") != n.get(c, "") for c in BYTES):
            verdict = "BYTES DIFFER:" + "".join(" %s %s -> %s" % (c[:-len("_bytes")], b.get(c, ""), n.get(c, ""))
                                                 for c in BYTES if b.get(c, "") != n.get(c, ""))
        if float(bms or 0) > 0 and nms != "":
            q = float(nms) / float(bms)
            r = "%.3f" % q
            if q > 1 + tol:
                verdict = ("" if verdict == "ok" else verdict + "; ") + \
                    "SLOWER by %.0f%% (tolerance %.0f%%)" % (100 * (q - 1), 100 * tol)
            elif verdict == "ok" and q < 1 - tol:
                verdict = "faster"
        print(line % (k[0], k[1], shape, bms, nms or "-", r, verdict))
        if verdict not in ("ok", "faster"):
            regress.append("%s %s %s: %s" % (k[0], k[1], shape, verdict))
    print()
    if regress:
        print("compare: %d regression(s):" % len(regress))
        for x in regress:
            print("  " + x)
        return 1
    print("compare: no regression (%d rows; tolerance %.0f%%)" % (len(order), 100 * tol))
    return 0
