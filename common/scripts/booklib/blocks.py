"""The generated blocks of the chapter READMEs: what every block shares (reading a results folder, remembering the
kernels read for the stale mark, the caption, the common kinds of table). The blocks themselves are the chapters':
each chapter's folder declares its own in NN_topic/readme_blocks.py, one function block_NAME(blk) per
<!-- MEASURED:NAME --> of its README, blk this module's Blocks (bound to a results folder); Blocks.block_NAME finds
it. A block returns a Markdown table, then its caption (the files, the GPU, CUDA and the date of the run). A
chapter's module imports the helpers below with `from booklib.blocks import *` (__all__)."""

import glob
import importlib.util
import math
import os
import re

from .kernels import ROOT
from .profile import profile_table
from .results import BadInput, NOT_RECORDED, STALE, Table, bench_header, fastest_rounds, fmt, ncu, provenance, \
    provenance_file, shown, stale_kernels, table, with_commas

S = "smsp__average_warps_issue_stalled_"
LD = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
CF = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
RQ = "smsp__sass_inst_executed_op_shared_ld.sum"
LDSM = "smsp__inst_executed_op_ldsm.sum"

# what a chapter's readme_blocks.py takes from here (from booklib.blocks import *)
__all__ = ["S", "LD", "CF", "RQ", "LDSM", "where_of", "lines", "Blocks", "BadInput", "NOT_RECORDED", "STALE", "Table",
           "bench_header", "fmt", "ncu", "provenance", "provenance_file", "shown", "stale_kernels", "table",
           "with_commas", "profile_table", "math", "os", "re"]


def where_of(spec):
    """'H=64,N=1024' -> {'H': '64', 'N': '1024'}"""
    return dict(kv.split("=", 1) for kv in spec.split(",") if kv)


def lines(*rows):
    return "".join(r + "\n" for r in rows)


# the repository (or a student's copy of one chapter, kernels.ROOT): its chapter folders hold the blocks
_CHAPTER_BLOCKS = None


def chapter_blocks(root=None):
    """{block_NAME: function(blk)} of every chapter folder's readme_blocks.py under root (default ROOT, loaded
    once). Two chapters declaring the same name is an error."""
    global _CHAPTER_BLOCKS
    if root is not None or _CHAPTER_BLOCKS is None:
        found = {}
        for path in sorted(glob.glob(os.path.join(root or ROOT, "[0-9][0-9]_*", "readme_blocks.py"))):
            name = "readme_blocks_" + os.path.basename(os.path.dirname(path))
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            for k, fn in vars(mod).items():
                if k.startswith("block_") and callable(fn):
                    if k in found:
                        raise BadInput("%s: %s is declared by another chapter too" % (path, k))
                    found[k] = fn
        if root is not None:
            return found
        _CHAPTER_BLOCKS = found
    return _CHAPTER_BLOCKS


class Blocks:
    def __getattr__(self, name):
        """block_NAME: a chapter's block (its readme_blocks.py), bound to these results."""
        fn = chapter_blocks().get(name) if name.startswith("block_") else None
        if fn is None:
            raise AttributeError(name)
        return lambda: fn(self)

    def __init__(self, results):
        self.R = results
        self.used = set()           # (chapter, kernel) read by the block being generated
        self.stale = stale_kernels(results)

    # ---- reading, with the kernels read remembered (for the stale mark) --------------------------------
    def path(self, rel):
        return os.path.join(self.R, rel)

    def t(self, rel):
        return table(self.path(rel))

    def note(self, rel, kernel):
        ch = re.match(r"ch([0-9][0-9])", rel)
        if ch and kernel:
            self.used.add((ch.group(1), kernel))

    def pick(self, rel, col, required=True, **where):
        self.note(rel, where.get("kernel"))
        return self.t(rel).pick(col, required, **where)

    def rows(self, rel, **where):
        self.note(rel, where.get("kernel"))
        return self.t(rel).select(**where)

    def ncu(self, rel, kernel, metric, required=True):
        self.note(rel, kernel[:-len("_kernel")] if kernel.endswith("_kernel") else kernel)
        return ncu(self.path(rel)).value(kernel, metric, required)

    def ms(self, rel, kernel):
        return fmt("%.3f", self.pick(rel, "time_ms_median", kernel=kernel))

    def caption(self, *files, names=None):
        """One line under a table: the files (relative to RESULTS; or names, a shorter way to name them), the GPU,
        CUDA and the date of the run. From the run's record where there is one (the first file's own,
        chNN/<name>.provenance.json beside chNN/<name>.csv, else its chapter's, else its GPU's provenance.json), else: the GPU
        from the first file's gpu column (else its chapter's run.csv), CUDA and the date from the bench's header
        line (measured.txt, else summary.txt). A field no file records is printed as not recorded."""
        first = self.path(files[0])
        d = os.path.dirname(first)
        own = os.path.splitext(first)[0] + ".provenance.json"
        rec = provenance_file(own) if os.path.isfile(own) else provenance(d, self.R)
        hdr = bench_header(d)
        gpu = rec.get("gpu") or self.gpu_of(first) or self.gpu_of(os.path.join(d, "run.csv"))
        cuda = rec.get("cuda") or hdr.get("cuda")
        date = rec.get("date") or hdr.get("date")
        named = "`%s`" % names if names else ", ".join("`%s`" % f for f in files)
        out = "\nGenerated by `make docs` from %s (in `%s/`): %s, CUDA %s, %s.\n" % (
            named, self.R, gpu or "GPU " + NOT_RECORDED, cuda or NOT_RECORDED,
            "measured " + date if date else "date " + NOT_RECORDED)
        stale = sorted("ch%s %s (%s)" % (ch, k, self.stale[(ch, k)]) for ch, k in self.used if (ch, k) in self.stale)
        self.used = set()
        if stale:
            out += "\n%s: %s.\n" % (STALE, "; ".join(stale))
        return out

    def short_gpu(self, rel):
        """The GPU of a run as the tables name it: its gpu column less the maker's name."""
        return re.sub(r"^NVIDIA ", "", self.t(rel).pick("gpu") or "GPU " + NOT_RECORDED)

    @staticmethod
    def gpu_of(path):
        try:
            t = Table(path)
        except BadInput:
            return None
        return t.rows[0].get("gpu") if t.rows else None

    def ncu_table(self, columns, rows, corner=""):
        """Nsight Compute's metrics, one column per (title, ncu CSV, stalls CSV, kernel function), one row per
        (source, metric, format, label). source: ncu (the first file), stalls (the second), ratio or percent
        (metric A/B: A / B or 100 A / B, of the first file), or another ncu CSV of the same kernels (its path under
        the results); format: a printf format, commas or ms (ns as ms). corner: the header's first cell."""
        out = "| %s |" % corner if corner else "| |"
        out += "".join(" %s |" % c[0] for c in columns) + "\n|---|" + "---:|" * len(columns) + "\n"
        for src, metric, form, label in rows:
            out += "| %s |" % label
            for _, n, st, k in columns:
                if src == "ncu":
                    v = self.ncu(n, k, metric)
                elif src == "stalls":
                    v = self.ncu(st, k, metric)
                elif src in ("ratio", "percent"):
                    a, b = metric.split("/")
                    v = float(shown((100 if src == "percent" else 1) * self.ncu(n, k, a) / self.ncu(n, k, b)))
                else:
                    v = self.ncu(src, k, metric)
                if form == "commas":
                    v = with_commas(v)
                elif form == "ms":
                    v = "%.3f" % (v / 1e6)
                else:
                    v = fmt(form, v)
                out += " %s |" % v
            out += "\n"
        return out

    # ---- tables of several blocks --------------------------------------------------------------------
    def profile_block(self, rel):
        """A profile table (model, counted and DRAM bytes per kernel) as the bench printed it."""
        return "```\n" + profile_table(self.path(rel)).split("\n", 1)[1] + "```\n" + self.caption(rel)

    def io_bytes(self, run, row, ncu_csv, ncu_kernel, required=True):
        """A run's bytes, read then written: [(direction, model, counted, requested, DRAM)], the model and the
        instrumented build's count from its row of run (a CSV of ours), what the SMs requested (l1tex, cp.async's
        included) and DRAM's from ncu_csv's launches of ncu_kernel (None where ncu has none and not required)."""
        self.t(run).need("model_read_bytes", "model_write_bytes", "counted_read_bytes", "counted_write_bytes")
        return [(rw, float(row["model_%s_bytes" % rw]), float(row["counted_%s_bytes" % rw]),
                 self.ncu(ncu_csv, ncu_kernel, "l1tex__t_bytes_pipe_lsu_mem_global_op_%s.sum" % op, required),
                 self.ncu(ncu_csv, ncu_kernel, "dram__bytes_%s.sum" % rw, required))
                for rw, op in (("read", "ld"), ("write", "st"))]

    def bytes_table(self, corner, run, kernel, ncu_csv, ncu_kernel, form, compulsory=False):
        """One kernel's bytes read and written, as the model and the instrumented build count them (run), as the
        SMs request them and as DRAM sees them (ncu); DRAM / model in form; compulsory adds the ideal bytes."""
        out = "|%s| model | counted | requested (ncu l1tex) | DRAM (ncu) | DRAM / model |%s\n" % (
            " %s " % corner if corner else " ", " compulsory (Q+K+V; O+L) |" if compulsory else "")
        out += "|---|---:|---:|---:|---:|---:|%s\n" % ("---:|" if compulsory else "")
        rows = self.rows(run, kernel=kernel)
        if not rows:
            raise BadInput("%s: no row with kernel=%s" % (self.path(run), kernel))
        for rw, model, counted, req, dram in self.io_bytes(run, rows[0], ncu_csv, ncu_kernel):
            out += ("| %s | %s | %s | %s | %s | " + form + " |") % (
                rw, with_commas(model), with_commas(counted), with_commas(req), with_commas(dram), dram / model)
            if compulsory:
                out += " %s |" % with_commas(self.pick(run, "ideal_%s_bytes" % rw, kernel=kernel))
            out += "\n"
        return out + self.caption(run, ncu_csv)

    @staticmethod
    def resources(log):
        """(registers, 'blocks x warps', waves) from the lines a run printed."""
        with open(log) as f:
            text = f.read()
        regs = re.findall(r".*: ([0-9]*) registers per thread", text)
        occ = re.findall(r".*occupancy: ([0-9]*) blocks per SM x ([0-9]*) warps.* take ([0-9]*) wave", text)
        if not regs or not occ:
            raise BadInput("%s: no 'registers per thread' or 'occupancy:' line" % log)
        return regs[0], "%s x %s" % occ[0][:2], occ[0][2]

    def mma_sync_ceiling(self, rel):
        """(TFLOP/s, % of the datasheet's peak) of the mma.sync ceiling a program measured and printed into the log
        rel (common/device.c's line; the % None where the line has none), or None where the log has no such line."""
        with open(self.path(rel)) as f:
            m = re.search(r"mma\.sync ceiling \(measured[^)]*\): ([0-9.]+) TFLOP/s(?:, ([0-9]+)% of the datasheet)?",
                          f.read())
        return (float(m.group(1)), m.group(2)) if m else None

    # ---- checks on the GPU (a bench's tests stage) -------------------------------------------------------------
    def gpu_tests_line(self, rel):
        """A list item: what the GPU tests said (a Criterion log: its last "Synthesis" line), or that none ran."""
        if not os.path.isfile(self.path(rel)):
            return "- GPU tests: not yet run on a GPU (no `%s`).\n" % rel
        with open(self.path(rel)) as f:
            m = re.findall(r"Synthesis: Tested: (\d+) \| Passing: (\d+) \| Failing: (\d+) \| Crashing: (\d+)", f.read())
        if not m:
            raise BadInput("%s: no Criterion synthesis line" % self.path(rel))
        t, p, fl, c = m[-1]
        return "- GPU tests (`%s`): %s of %s passed%s.\n" % (
            os.path.basename(rel), p, t, "" if p == t else "; %s failed, %s crashed" % (fl, c))

    def sanitizer_lines(self, rel, label):
        """List items: what compute-sanitizer said (a bench's sanitizer_summary.txt: a line a run, "compute-sanitizer
        --tool TOOL PROGRAM ARGS SHAPE: rc=N SUMMARY [(NOTE)]", the shape from its --batch on), every run counted,
        each run that reported named: label(ARGS) names the kernel run. A line it cannot read is an error."""
        if not os.path.isfile(self.path(rel)):
            return "- compute-sanitizer: not yet run on a GPU (no `%s`).\n" % rel
        runs, steps, shapes, reports = 0, [], {}, []
        with open(self.path(rel)) as f:
            for line in f:
                m = re.match(r"compute-sanitizer --tool (\w+) \S+ (.*?) (--batch .*?): rc=(\d+) "
                             r"(?:ERROR SUMMARY: (\d+) errors?|RACECHECK SUMMARY: (\d+) hazards? displayed)"
                             r"(?: \(\d+ errors?, \d+ warnings?\))?(?: \((.*)\))?\s*$", line)
                if not m:
                    raise BadInput("%s: a line this block does not read: %s" % (self.path(rel), line.strip()))
                runs += 1
                tool, args, shape, rc, n = m.group(1), m.group(2), m.group(3), m.group(4), m.group(5) or m.group(6)
                if label(args) not in steps:
                    steps.append(label(args))
                shapes.setdefault(label(args), set()).add(shape)
                if rc != "0" or n != "0":
                    what = "%s %s" % (n, ("hazard" if tool == "racecheck" else "error") + ("" if n == "1" else "s"))
                    reports.append("%s, %s at `%s`: %s%s" % (label(args), tool, shape, what,
                                                            " (%s)" % m.group(7) if m.group(7) else ""))
        words = {1: "one", 2: "two", 3: "three", 4: "four"}
        n = sorted({len(x) for x in shapes.values()})
        at = "each at %s small ragged shape%s" % (words.get(n[0], n[0]), "" if n == [1] else "s") if len(n) == 1 else \
            "at %s to %s small ragged shapes each" % (words.get(n[0], n[0]), words.get(n[-1], n[-1])) if n else "none"
        out = "- compute-sanitizer (`%s`): memcheck, racecheck and synccheck, %d runs (%d choices of kernel, %s): " \
              "%s\n" % (os.path.basename(rel), runs, len(steps), at,
                         "clean but for %d:" % len(reports) if reports else "all clean.")
        return out + "".join("  - %s.\n" % r for r in reports)

    # ---- PyTorch beside ours (peers.csv, common/scripts/peers.py) ----------------------------------------
    @staticmethod
    def ratio(a, b):
        return "%.2f" % (a / b) if a and b and a > 0 and b > 0 else "-"

    @staticmethod
    def peer_ratios(runs, peer, names):
        """{name: [the peer's time / ours, at each of runs (rows of ours) where the peer has a time]}, for each peer
        of names; peer, peers_fastest's dict (each peer at its fastest round)."""
        out = {name: [] for name in names}
        for r in runs:
            key = (r["B"], r["H"], r["N"], r["d"], r["dtype"], r["causal"])
            for name in names:
                t = peer.get(key + (name,))
                if t:
                    out[name].append(t / float(r["time_ms_median"]))
        return out

    def peers_fastest(self, rel):
        """{(B, H, N, d, dtype, causal, peer): the smallest median of the peer's rounds} (the side that favours the
        peer: a bench times each peer in several rounds)."""
        cols = ("B", "H", "N", "d", "dtype", "causal", "peer")
        self.t(rel).need(*cols, "time_ms_median")
        return {k: float(r["time_ms_median"])
                for k, r in fastest_rounds(self.t(rel).rows, lambda r: tuple(r[c] for c in cols)).items()}
