"""The smaller commands: make profile (a chapter's bytes three ways, live or from captured files), and what the
benches and make reproduce read from their CSVs and from ncu's."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from . import profile
from .kernels import ROOT
from .results import BadInput, Table, ncu, shown

# the flags of every ncu run (bench-lib.sh's NCU_FLAGS and NCU_DRAM): no clock locking, plain function names,
# bytes in bytes, CSV; DRAM bytes read and written
NCU_FLAGS = ["--clock-control", "none", "--kernel-name-base", "function", "--print-units", "base", "--csv"]
NCU_DRAM = "dram__bytes_read.sum,dram__bytes_write.sum"

USAGE = ("usage: bash common/scripts/profile.sh CH [chapter options]     e.g. make profile CH=00\n"
         "       bash common/scripts/profile.sh --from REPORT_CSV NCU_CSV")


def write_beside(path, text):
    """path written whole or not at all: a file beside it, then renamed."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def join_and_print(report_csv, ncu_csv):
    """The joined table, printed; its CSV text returned."""
    rows = profile.join(report_csv, ncu_csv, ROOT)
    text = profile.to_csv(rows)
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "joined.csv")
        write_beside(p, text)
        sys.stdout.write(profile.profile_table(p))
    if any(r[1].startswith("other:") for r in rows):
        print("\nother:* rows are launches that match no report row (helpers, library kernels): DRAM only.")
    return text, rows[0][0] if rows else ""


def save(text, ch):
    """The joined table into $RESULTS_DIR/chCH/profile.csv when RESULTS_DIR is set."""
    d = os.environ.get("RESULTS_DIR")
    if d:
        path = os.path.join(d, "ch" + ch, "profile.csv")
        write_beside(path, text)
        print("wrote " + path)


def find_ncu():
    """$NCU when set (a path, or a name looked up in PATH), else ncu in PATH, else /usr/local/cuda/bin/ncu."""
    n = shutil.which(os.environ.get("NCU") or "ncu")
    if not n and not os.environ.get("NCU") and os.access("/usr/local/cuda/bin/ncu", os.X_OK):
        n = "/usr/local/cuda/bin/ncu"
    return n


def profile_main(args, root):
    """Live: ./chCH/run --csv (model and counted bytes), then ncu ... ./chCH/run --profile (DRAM bytes, one launch
    per kernel, caches flushed before each), joined. Exit 0 done; 1 a run failed; 2 usage or bad input; 3 ncu or
    the chapter's program missing; 4 no CUDA device."""
    if not args:
        print(USAGE, file=sys.stderr)
        return 2
    if args[0] == "--from":
        if len(args) != 3:
            print(USAGE, file=sys.stderr)
            return 2
        for f in args[1:]:
            if not os.access(f, os.R_OK):
                raise BadInput("cannot read %s" % f)
        text, ch = join_and_print(args[1], args[2])
        save(text, ch)
        return 0
    if not re.match(r"^[0-9]{1,2}$", args[0]):
        print("profile: CH must be a chapter number such as 00, got '%s'\n%s" % (args[0], USAGE), file=sys.stderr)
        return 2
    ch, opts = "%02d" % int(args[0]), args[1:]
    for a in opts:
        if a in ("--csv", "--profile", "--cpu", "--model", "--help") or a.startswith("--csv="):
            print("profile: %s is set by this script; pass only size and chapter options" % a, file=sys.stderr)
            return 2
    n = find_ncu()
    if not n:
        print("profile: ncu (Nsight Compute) not found%s; it comes with the CUDA toolkit (/usr/local/cuda/bin/ncu), "
              "or set NCU=/path/to/ncu" % (" at " + os.environ["NCU"] if os.environ.get("NCU") else ""),
              file=sys.stderr)
        return 3
    run = "./ch%s/run" % ch
    if not os.access(run, os.X_OK):
        print("profile: %s not found; build it first: make ch%s (run from the repository root)" % (run, ch),
              file=sys.stderr)
        return 3
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.csv")
        print("profile: 1/2 %s --csv TMP %s (model and counted bytes)" % (run, " ".join(opts)), flush=True)
        with open(os.path.join(tmp, "run.log"), "w") as log:
            rc = subprocess.call([run, "--csv", report] + opts, stdout=log, stderr=subprocess.STDOUT,
                                 env=dict(os.environ, REQUIRE_GPU="1"))
        if rc == 4:
            print("profile: no CUDA device: DRAM bytes need a GPU (and ncu)", file=sys.stderr)
            return 4
        if rc != 0:
            with open(os.path.join(tmp, "run.log")) as log:
                tail = log.read().splitlines()[-20:]
            print("profile: %s failed (exit %d):\n%s" % (run, rc, "\n".join(tail)), file=sys.stderr)
            return 1
        rows = Table(report).rows
        gpu = rows[0].get("gpu", "") if rows else ""
        if gpu in ("", "cpu"):
            print("profile: %s ran on the CPU (no CUDA device): DRAM bytes need a GPU" % run, file=sys.stderr)
            return 4
        print("profile: 2/2 ncu ... %s --profile %s (DRAM bytes, one launch per kernel)" % (run, " ".join(opts)),
              flush=True)
        ncu_csv, plog = os.path.join(tmp, "ncu.csv"), os.path.join(tmp, "profile.log")
        with open(plog, "w") as log:
            rc = subprocess.call([n] + NCU_FLAGS + ["--metrics", NCU_DRAM, "--log-file", ncu_csv, run, "--profile"]
                                 + opts, stdout=log, stderr=subprocess.STDOUT)
        # The table goes to the log file; should an ncu version print it to stdout instead, parse that.
        if not os.path.isfile(ncu_csv) or '"Metric Name"' not in open(ncu_csv, errors="replace").read():
            ncu_csv = plog
        if rc != 0:
            lines = [l for p in (ncu_csv, plog) if os.path.isfile(p)
                     for l in open(p, errors="replace").read().splitlines() if re.match(r"==(ERROR|WARNING)==", l)]
            print("profile: ncu exited with status %d:\n%s" % (rc, "\n".join(lines)), file=sys.stderr)
            return 1
        print("\nchapter %s on %s, options: %s" % (ch, gpu, " ".join(opts) or "(article configuration)"))
        text, _ = join_and_print(report, ncu_csv)
        save(text, ch)
    return 0


def profile_join(args):
    if len(args) != 2:
        raise BadInput("usage: book.py profile-join REPORT_CSV NCU_CSV")
    sys.stdout.write(profile.to_csv(profile.join(args[0], args[1], ROOT)))
    return 0


def profile_table(args):
    if len(args) != 1:
        raise BadInput("usage: book.py profile-table JOINED_CSV")
    sys.stdout.write(profile.profile_table(args[0]))
    return 0


def ncu_summary(args):
    if len(args) != 5:
        raise BadInput("usage: book.py ncu-summary RUN_CSV ROW NCU_CSV STALLS_CSV KERNEL")
    sys.stdout.write(profile.ncu_summary(*args))
    return 0


def ncu_sass(args):
    if len(args) not in (1, 2) or (len(args) == 2 and not args[1].isdigit()):
        raise BadInput("usage: book.py ncu-sass SOURCE_CSV [TOP]")
    sys.stdout.write(profile.sass_stalls(args[0], int(args[1]) if len(args) == 2 else 30))
    return 0


def ncu_value(args):
    """One metric of a kernel function (sum over launches for .sum metrics, else the mean), nothing when ncu did
    not report it; without METRIC, every metric of the kernel as metric|unit|value."""
    if len(args) not in (2, 3):
        raise BadInput("usage: book.py ncu-value NCU_CSV KERNEL [METRIC]")
    n = ncu(args[0])
    for m in args[2:] or n.metrics(args[1]):
        v = n.value(args[1], m, required=False)
        if v is not None:
            print(shown(v) if len(args) == 3 else "|".join((m, n.units[m], shown(v))))
    return 0


def csv_rows(args):
    """Columns COLS of every row that matches every COL=VALUE, joined by '|'; a column the file lacks is empty,
    a COL=VALUE on such a column matches no row."""
    if len(args) < 2:
        raise BadInput("usage: book.py csv-rows CSV COLS [COL=VALUE...]")
    t = Table(args[0])
    where = dict(w.split("=", 1) for w in args[2:])
    for r in t.rows:
        if all(r.get(c) == v for c, v in where.items()):
            print("|".join(r.get(c, "") for c in args[1].split(",")))
    return 0


def summary(args):
    """A chapter's total row where it has one (chapter 00's pipeline), else its kernels' rows (setup rows
    marked), as make reproduce prints them."""
    if len(args) != 2:
        raise BadInput("usage: book.py summary CH CSV")
    rows = Table(args[1]).rows
    totals = [r for r in rows if r.get("kernel") == "total"]
    val = lambda r, c: r.get(c) or "-"
    for r in totals[-1:] or rows:
        print("  ch%s %-18s %10s ms  %8s TFLOP/s  %9s GB/s(model)  rel_err %s%s" % (
            args[0], r.get("kernel", ""), val(r, "time_ms_median"), val(r, "tflops"), val(r, "gbs_model"),
            val(r, "rel_err"), "  (setup)" if r.get("setup") == "1" else ""))
    return 0
