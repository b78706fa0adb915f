"""Reading the results files: the programs' CSVs (columns by name, csv module), Nsight Compute's CSV, the logs,
the captions' provenance (GPU, CUDA, driver, ncu, date) and the stale kernels.

Bad input (a file missing, empty or truncated, a column missing, no row where one is needed) raises BadInput:
the commands print its message and exit 2."""
import csv
import decimal
import json
import os
import re
import sys


class BadInput(Exception):
    pass


NOT_RECORDED = "not recorded"
STALE = "stale: kernel changed since measured"


# ---- numbers as the book prints them ---------------------------------------------------------------------
def with_commas(x):
    """11240734720 -> '11,240,734,720' (x rounded to an integer)."""
    s = "%.0f" % float(x)
    neg = s.startswith("-")
    s = s.lstrip("-")
    groups = []
    while len(s) > 3:
        groups.insert(0, s[-3:])
        s = s[:-3]
    return ("-" if neg else "") + ",".join([s] + groups)


_FIXED = re.compile(r"%([-+ 0#]*)(\d*)\.(\d+)f")


def fmt(f, x):
    """printf with a number rounded as written by hand: a last 5 away from zero (0.5075 -> 0.508, -0.5075 -> -0.508
    at %.3f), the number taken as its shortest decimal text (repr), not its binary value (0.5075 is stored as
    0.50749999...). f holds one conversion: %.Nf (rounded so), %s (shown), or another (printf's own)."""
    if f == "%s":
        return f % shown(x)
    m = _FIXED.search(f)
    if not m:
        return f % float(x)
    places = decimal.Decimal(1).scaleb(-int(m.group(3)))
    d = decimal.Decimal(repr(float(x))).quantize(places, rounding=decimal.ROUND_HALF_UP)
    return f % d


def shown(v):
    """A number as a text: an integer without decimals, else 6 significant digits."""
    v = float(v)
    return "%d" % v if v == int(v) else "%.6g" % v


# ---- CSV files ---------------------------------------------------------------------------------------------
class Table:
    """One CSV file: its header and its data rows (dicts); a header repeated inside the file (CSVs appended)
    and blank lines are skipped."""

    def __init__(self, path):
        self.path = path
        if not os.path.exists(path) or os.path.isdir(path):
            raise BadInput("%s: no such file" % path)
        with open(path, newline="") as f:
            lines = list(csv.reader(f))
        if not lines or not lines[0]:
            raise BadInput("%s: empty (no header line)" % path)
        self.header = lines[0]
        self.rows = []
        for n, r in enumerate(lines[1:], 2):
            if r == self.header or not any(c.strip() for c in r):
                continue
            if len(r) != len(self.header):
                raise BadInput("%s:%d: %d fields where the header has %d (a truncated or malformed line)"
                               % (path, n, len(r), len(self.header)))
            self.rows.append(dict(zip(self.header, r)))

    def need(self, *cols):
        for c in cols:
            if c not in self.header:
                raise BadInput("%s: no column '%s' (the header has: %s)" % (self.path, c, ",".join(self.header)))

    def select(self, **where):
        """The rows whose columns hold the values given (compared as text)."""
        self.need(*where)
        return [r for r in self.rows if all(r[c] == str(v) for c, v in where.items())]

    def pick(self, col, required=True, **where):
        """Column col of the first row that matches; None (or BadInput when required) if none."""
        self.need(col)
        rows = self.select(**where)
        if not rows:
            if required:
                raise BadInput("%s: no row with %s" % (self.path, " ".join("%s=%s" % kv for kv in where.items())))
            return None
        return rows[0][col]


def fastest_rounds(rows, key):
    """{key(row): the row with the smallest time_ms_median among those of that key}: a peer timed in several
    rounds (a row each) at its fastest, the side that favours the peer in any comparison with ours."""
    out = {}
    for r in rows:
        k = key(r)
        if k not in out or float(r["time_ms_median"]) < float(out[k]["time_ms_median"]):
            out[k] = r
    return out


_tables = {}


def table(path):
    if path not in _tables:
        _tables[path] = Table(path)
    return _tables[path]


# ---- Nsight Compute's CSV ----------------------------------------------------------------------------------
class Ncu:
    """What `ncu --csv --print-units base --metrics ...` printed: one row per (launch, metric) under a header with
    "ID", "Kernel Name", "Metric Name", "Metric Unit" and "Metric Value". Lines that are not rows of that table
    (==PROF== messages, the program's own output) are ignored. A kernel name is reduced to its function."""

    UNITS = {"", "%", "block", "byte", "cycle", "inst", "ns", "register/thread", "warp", "thread", "sector",
             "request", "byte/second", "cycle/nsecond", "Hz", "msecond", "usecond", "second", "nsecond"}

    def __init__(self, path):
        self.path = path
        if not os.path.isfile(path):
            raise BadInput("%s: no such file" % path)
        with open(path, newline="", errors="replace") as f:
            text = f.read().splitlines()
        head = next((i for i, l in enumerate(text)
                     if '"Kernel Name"' in l and '"Metric Name"' in l and '"Metric Value"' in l), None)
        if head is None:
            errors = "".join("\n  " + l for l in text if re.match(r"==(ERROR|WARNING)==", l))
            raise BadInput('%s: no ncu CSV table (no header with "Kernel Name", "Metric Name", "Metric Value")%s'
                           % (path, errors))
        header = next(csv.reader([text[head]]))
        col = {c: i for i, c in enumerate(header)}
        self.functions = []        # in the order of first launch
        self.launches = {}         # function -> set of IDs
        self.values = {}           # (function, metric) -> [values]
        self.units = {}
        for line in csv.reader(l for l in text[head + 1:] if l.startswith('"')):
            if len(line) != len(header) or line == header:
                continue
            name = line[col["Kernel Name"]].split("(")[0].split("<")[0].split(" ")[-1]
            metric, unit = line[col["Metric Name"]], line[col["Metric Unit"]]
            raw = line[col["Metric Value"]].replace(",", "").replace(" ", "")
            if name not in self.launches:
                self.functions.append(name)
                self.launches[name] = set()
            self.launches[name].add(line[col["ID"]] if "ID" in col else len(self.launches[name]))
            if unit not in self.UNITS and unit.endswith("byte"):
                raise BadInput("%s: %s of %s in %s: pass ncu --print-units base (bytes as bytes)"
                               % (path, metric, name, unit))
            try:
                v = float(raw)
            except ValueError:
                continue
            self.values.setdefault((name, metric), []).append(v)
            self.units[metric] = unit

    def value(self, kernel, metric, required=True):
        """The metric of the kernel function: the sum over its launches for a .sum metric, else their mean;
        6 significant digits where it is not an integer."""
        vs = self.values.get((kernel, metric))
        if not vs:
            if required:
                raise BadInput("%s: no %s for the kernel function %s" % (self.path, metric, kernel))
            return None
        v = sum(vs) if metric.endswith(".sum") else sum(vs) / len(vs)
        return float(shown(v))

    def metrics(self, kernel):
        return [m for (k, m) in self.values if k == kernel]


_ncus = {}


def ncu(path):
    if path not in _ncus:
        _ncus[path] = Ncu(path)
    return _ncus[path]


# ---- what the run recorded: captions and stale kernels ----------------------------------------------------
def provenance(*dirs):
    """The record of the GPU run (provenance.json: commit, versions, GPU, clocks, date, kernel digests) of the
    first of dirs that holds one (a chapter's folder, then its GPU's): the fields a caption prints, {} if none."""
    for d in dirs:
        p = os.path.join(d, "provenance.json")
        if os.path.isfile(p):
            return provenance_file(p)
    return {}


def provenance_file(p):
    """The caption's fields of one record (a folder's provenance.json, or chNN/<name>.provenance.json: the record
    of the run that wrote chNN/<name>.csv)."""
    try:
        with open(p) as f:
            rec = json.load(f)
    except ValueError as e:
        raise BadInput("%s: not JSON (%s)" % (p, e))
    cuda = re.match(r"^([0-9.]+)", str(rec.get("nvcc", "")))
    return {"gpu": rec.get("gpu"), "cuda": cuda.group(1) if cuda else rec.get("nvcc"), "driver": rec.get("driver"),
            "ncu": rec.get("ncu"), "date": str(rec.get("date_utc", ""))[:10], "file": p}


def bench_header(chdir):
    """CUDA and date from a bench's first line, "== chapter NN bench on GPU, DATE, CUDA V" (measured.txt, else the
    first line of summary.txt): {'cuda':..., 'date':..., 'gpu':..., 'file':...} or {}."""
    for name in ("measured.txt", "summary.txt"):
        p = os.path.join(chdir, name)
        if os.path.isfile(p):
            with open(p) as f:
                first = f.readline().rstrip("\n")
            m = re.match(r"^== .* bench on (.*), ([0-9-]*), CUDA ([0-9.]*)$", first)
            return {"gpu": m.group(1), "date": m.group(2), "cuda": m.group(3), "file": p} if m else {}
    return {}


def stale_kernels(results):
    """(chapter, kernel) -> why, for the kernels whose code changed since they were measured (provenance.py's
    stale(), where the results folder has a record); {} otherwise."""
    if not os.path.isfile(os.path.join(results, "provenance.json")):
        return {}
    try:
        import provenance as prov
        found = prov.stale(results)
    except ImportError:
        return {}
    except Exception as e:          # no digests here (no build, no cuobjdump): said, and nothing marked
        print("stale kernels not checked: %s" % e, file=sys.stderr)
        return {}
    return {(str(ch).replace("ch", "").zfill(2), kernel): re.sub("^" + STALE[len("stale: "):] + ": ", "", why)
            for (ch, kernel), why in found.items()}

