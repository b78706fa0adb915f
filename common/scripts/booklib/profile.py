"""A chapter's bytes three ways, per kernel: model (closed form) | counted (instrumented build) | DRAM (measured
by Nsight Compute), and the ncu block of a bench summary.

Join: a report row's kernels are those its chapter's kernels.txt names (its regex over the function names,
kernels.names_function), the most specific row winning where two rows' regexes name one function; a row whose regex
names only functions that other rows own is a sum of them (chapter 07's backward: its kernels' DRAM bytes added).
Where kernels.txt says nothing of a function, the name decides: the CUDA kernel of report row R is named R_kernel,
and a function goes to the report kernel with the longest name R such that the function's name starts with "R_".
Functions that match no row (helpers such as the poisoning of outputs, or library kernels such as cuBLAS's) are
listed after the total as other:<function>, without model or counted bytes. The total row's DRAM bytes are the
sum over the report's kernels, left empty when one of them matched no launch; setup rows (column setup = 1) are
left out of it, as the report leaves them out of its own total.

Where the warps wait, instruction by instruction (sass_stalls): ncu's source counters of one launch (--section
SourceCounters), exported as the SASS page of its source view (ncu --import REP --page source --csv --print-source
sass), summed by stall reason and listed for the instructions with the most samples."""
import csv
import io
import re

from .kernels import chapter_labels, names_function
from .results import BadInput, Table, ncu, shown, table, with_commas

COLUMNS = ["chapter", "kernel", "ncu_kernels", "launches", "model_read_bytes", "counted_read_bytes", "dram_read_bytes",
           "dram_read_over_model", "model_write_bytes", "counted_write_bytes", "dram_write_bytes",
           "dram_write_over_model"]
DRAM = ("dram__bytes_read.sum", "dram__bytes_write.sum")


def dram_per_function(path):
    """[(function, read bytes, write bytes, launches)] in the order of first launch."""
    n = ncu(path)
    out = []
    for f in n.functions:
        vals = [n.values.get((f, m)) for m in DRAM]
        if vals[0] is None and vals[1] is None:
            continue
        out.append((f, sum(vals[0] or []), sum(vals[1] or []), len(n.launches[f])))
    if not out:
        raise BadInput("%s: no dram__bytes_read.sum / dram__bytes_write.sum rows" % path)
    return out


def owners(kernels, functions, labels):
    """{function: the report row that owns it} and {row: the functions it sums} (rows whose regex names only
    functions of other rows), for the report rows `kernels`, the ncu functions and the chapter's {label: regex}."""
    named = {k: [f for f in functions if names_function(labels.get(k), f)] for k in kernels if k != "total"}
    owner = {}
    for f in functions:
        rows = [k for k in named if f in named[k]]
        if rows:  # the most specific row: the one whose regex names the fewest functions
            owner[f] = min(rows, key=lambda k: (len(named[k]), -len(k)))
            continue
        names = [k for k in kernels if k != "total" and f.startswith(k + "_")]
        if names:
            owner[f] = max(names, key=len)
    sums = {k: fs for k, fs in named.items() if fs and not any(owner[f] == k for f in fs)}
    return owner, sums


def join(report_csv, ncu_path, root=None):
    """The joined table: a list of rows (lists of texts) under COLUMNS. root: the book's folder, whose
    NN_topic/kernels.txt names the kernels of chapter NN's rows (None: the function names alone decide)."""
    rep = Table(report_csv)
    rep.need("chapter", "kernel", "model_read_bytes", "model_write_bytes", "counted_read_bytes", "counted_write_bytes")
    if not rep.rows:
        raise BadInput("%s: no data rows" % report_csv)
    funs = dram_per_function(ncu_path)
    chapter = rep.rows[0]["chapter"]
    labels = chapter_labels(root).get(chapter.zfill(2), {}) if root else {}
    owner, sums = owners([r["kernel"] for r in rep.rows], [f[0] for f in funs], labels)

    def ratio(dram, model):
        return "" if dram == "" or model == "" or float(model) == 0 else "%.4f" % (float(dram) / float(model))

    def row(kernel, names, launches, mr, cr, dr, mw, cw, dw):
        return [chapter, kernel, names, str(launches), mr, cr, dr, ratio(dr, mr), mw, cw, dw, ratio(dw, mw)]
    out, total, tr, tw, tl, all_matched = [], None, 0.0, 0.0, 0, True
    for r in rep.rows:
        if r["kernel"] == "total":
            total = r
            continue
        mine = [f for f in funs if f[0] in sums[r["kernel"]]] if r["kernel"] in sums else \
            [f for f in funs if owner.get(f[0]) == r["kernel"]]
        if not mine:
            all_matched = False
            out.append(row(r["kernel"], "", 0, r["model_read_bytes"], r["counted_read_bytes"], "",
                           r["model_write_bytes"], r["counted_write_bytes"], ""))
            continue
        dr, dw, n = sum(f[1] for f in mine), sum(f[2] for f in mine), sum(f[3] for f in mine)
        if r.get("setup", "0") not in ("1",) and r["kernel"] not in sums:
            tr, tw, tl = tr + dr, tw + dw, tl + n
        out.append(row(r["kernel"], " + ".join(f[0] for f in mine), n, r["model_read_bytes"], r["counted_read_bytes"],
                       "%.0f" % dr, r["model_write_bytes"], r["counted_write_bytes"], "%.0f" % dw))
    if total:
        out.append(row("total", "", tl, total["model_read_bytes"], total["counted_read_bytes"],
                       "%.0f" % tr if all_matched else "", total["model_write_bytes"], total["counted_write_bytes"],
                       "%.0f" % tw if all_matched else ""))
    for f, r, w, n in funs:
        if f not in owner:
            out.append(row("other:" + f, f, n, "", "", "%.0f" % r, "", "", "%.0f" % w))
    return out


def to_csv(rows):
    s = io.StringIO()
    w = csv.writer(s, lineterminator="\n")
    w.writerow(COLUMNS)
    w.writerows(rows)
    return s.getvalue()


def profile_table(path):
    """The joined CSV as two readable tables, bytes read then bytes written."""
    rows = table(path).rows
    table(path).need(*COLUMNS[1:])
    num = lambda x: "-" if x == "" else with_commas(x)
    out = ""
    for what, title in (("read", "bytes read"), ("write", "bytes written")):
        out += "\n%-22s %8s %18s %18s %18s %10s\n" % (title, "launches", "model", "counted", "DRAM (ncu)", "DRAM/model")
        for r in rows:
            out += "%-22s %8s %18s %18s %18s %10s\n" % (
                r["kernel"], r["launches"], num(r["model_%s_bytes" % what]), num(r["counted_%s_bytes" % what]),
                num(r["dram_%s_bytes" % what]), r["dram_%s_over_model" % what] or "-")
    return out


def ncu_summary(run_csv, row, ncu_csv, stalls_csv, kernel):
    """The ncu block of a bench summary, the same lines for every chapter: kernel time, bytes model | counted |
    l1tex global | DRAM of report row `row` (its kernel function `kernel`), shared loads, registers and
    occupancy, stall reasons. A metric ncu did not report prints '-'."""
    r = Table(run_csv).select(kernel=row)
    shape = " ".join("%s=%s" % (c, r[0][c]) for c in ("B", "H", "N", "d") if r and r[0].get(c)) if r else ""
    if r and r[0].get("dtype"):
        shape += " " + r[0]["dtype"] + (" causal" if r[0].get("causal") == "1" else "")
    out = "ncu, %s, %s, one launch (--profile; ncu flushes the caches first):\n" % (shape or "configuration not recorded",
                                                                                   kernel)
    try:
        n = ncu(ncu_csv)
    except BadInput:
        return out + "  - (no ncu output: %s)\n" % ncu_csv
    b = [r[0].get(c, "") if r else "" for c in
         ("model_read_bytes", "counted_read_bytes", "model_write_bytes", "counted_write_bytes")]
    v = {m: n.value(kernel, m) for m in n.metrics(kernel)}
    stall = {}
    try:
        st = ncu(stalls_csv)
        stall = {m: st.value(kernel, m) for m in st.metrics(kernel)}
    except BadInput:
        pass
    val = lambda m: shown(v[m]) if m in v else "-"
    num = lambda x: "-" if x in ("", "-") else with_commas(x)
    ratio = lambda a, c: "-" if a in ("", "-") or c in ("", "-") or float(c) == 0 else "%.4f" % (float(a) / float(c))
    if "gpu__time_duration.sum" in v:
        out += "  kernel time %.3f ms\n" % (v["gpu__time_duration.sum"] / 1e6)
    dr, dw = val("dram__bytes_read.sum"), val("dram__bytes_write.sum")
    gr, gw = val("l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum"), val("l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum")
    line = "  %-6s %16s %16s %16s %16s %10s %10s\n"
    out += line % ("bytes", "model", "counted", "l1tex global", "DRAM", "l1tex/cnt", "DRAM/model")
    out += line % ("read", num(b[0]), num(b[1]), num(gr), num(dr), ratio(gr, b[1]), ratio(dr, b[0]))
    out += line % ("write", num(b[2]), num(b[3]), num(gw), num(dw), ratio(gw, b[3]), ratio(dw, b[2]))
    q = val("smsp__sass_inst_executed_op_shared_ld.sum")
    l = v.get("smsp__inst_executed_op_ldsm.sum", 0)
    w = val("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
    c = val("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
    if q != "-" or w != "-" or c != "-":
        out += "  shared loads: requests %s (+ ldsm %s), wavefronts %s, bank conflicts %s\n" % (
            num(q), num(l), num(w), num(c))
        if w != "-" and float(w) > 0 and q != "-" and float(q) + l > 0 and c != "-":
            out += "  conflict rate %.2f%% (conflicts / wavefronts), %.2f-way (wavefronts / requests)\n" % (
                100 * float(c) / float(w), float(w) / (float(q) + l))
    if "launch__registers_per_thread" in v:
        out += "  registers/thread %s; blocks/SM limited by registers %s, shared memory %s, warps %s\n" % (
            val("launch__registers_per_thread"), val("launch__occupancy_limit_registers"),
            val("launch__occupancy_limit_shared_mem"), val("launch__occupancy_limit_warps"))
    pct = lambda m: val(m) + "%" if m in v else "-"
    if "sm__warps_active.avg.pct_of_peak_sustained_active" in v:
        out += "  occupancy: theoretical %s, achieved %s; DRAM throughput %s of peak\n" % (
            pct("sm__maximum_warps_per_active_cycle_pct"), pct("sm__warps_active.avg.pct_of_peak_sustained_active"),
            pct("dram__throughput.avg.pct_of_peak_sustained_elapsed"))
    mio = "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio"
    m = v.get(mio, stall.get(mio))
    lat = v.get("smsp__average_warp_latency_per_inst_issued.ratio")
    if m is not None and lat:
        out += "  MIO throttle: %.2f of %.2f cycles per issued instruction (%.1f%%)\n" % (m, lat, 100 * m / lat)
    pre, post = "smsp__average_warps_issue_stalled_", "_per_issue_active.ratio"
    reasons = sorted(((x, s[len(pre):-len(post)]) for s, x in stall.items()
                      if s.startswith(pre) and s.endswith(post) and x > 0.005), key=lambda p: -p[0])
    if reasons:
        out += "  stall reasons, cycles per issued instruction (largest first):\n"
        for x, s in reasons[:8]:
            out += "    %-22s %6.2f\n" % (s, x)
    return out


SAMPLES = "Warp Stall Sampling (All Samples)"


def sass_stalls(path, top=30):
    """The stall samples of ncu's SASS source page (a CSV: a line naming the kernel, then a header starting with
    "Address", then one row per instruction): their total, the share of each stall reason (the stall_* columns, not
    the "(Not Issued)" ones), and the `top` instructions with the most samples in program order, each with its
    offset in the kernel (as cuobjdump -sass prints it; branch targets inside the kernel rewritten the same way), its
    share of the samples, and the reasons that hold at least 15% of its own."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        raise BadInput("%s: %s" % (path, e.strerror))
    kernel = rows[0][1] if rows and len(rows[0]) > 1 and rows[0][0] == "Kernel Name" else "-"
    head = next((i for i, r in enumerate(rows) if r and r[0] == "Address"), None)
    if head is None:
        raise BadInput("%s: no header row (Address, Source, ...): not ncu's SASS source page" % path)
    hdr = rows[head]
    for c in ("Source", SAMPLES):
        if c not in hdr:
            raise BadInput("%s: no column '%s' (ncu's source counters: --section SourceCounters)" % (path, c))
    ix = {c: i for i, c in enumerate(hdr)}
    reasons = [c for c in hdr if c.startswith("stall_") and "(Not Issued)" not in c]
    insts = []
    for r in rows[head + 1:]:
        if len(r) != len(hdr):
            raise BadInput("%s: a row of %d fields under a header of %d" % (path, len(r), len(hdr)))
        try:
            insts.append((int(r[ix["Address"]], 16), r[ix["Source"]].strip(), int(r[ix[SAMPLES]] or 0),
                          {c: int(r[ix[c]] or 0) for c in reasons}))
        except ValueError:
            raise BadInput("%s: not a number in the row of %s" % (path, r[0]))
    if not insts:
        raise BadInput("%s: no instruction" % path)
    total = sum(i[2] for i in insts)
    first, last = insts[0][0], insts[-1][0]
    where = lambda a: "%04x" % (a - first)
    local = lambda m: where(int(m.group(0), 16)) if first <= int(m.group(0), 16) <= last else m.group(0)
    out = "ncu source counters of %s: %s warp-state samples over %d instructions\n" % (
        kernel, with_commas(str(total)), len(insts))
    if total == 0:
        return out + "  no samples\n"
    by = sorted(((sum(i[3][c] for i in insts), c[len("stall_"):]) for c in reasons), key=lambda p: (-p[0], p[1]))
    out += "by reason (share of all samples): %s\n" % ", ".join(
        "%s %.1f%%" % (c, 100.0 * n / total) for n, c in by if n)
    chosen = sorted(sorted(range(len(insts)), key=lambda k: (-insts[k][2], k))[:top])
    out += ("the %d instructions with the most samples, in program order (offset in the kernel, share of all "
            "samples, the reasons\nwith at least 15%% of its own):\n" % len(chosen))
    for k in chosen:
        a, src, n, st = insts[k]
        main = " ".join("%s %d" % (c[len("stall_"):], st[c]) for c in reasons if n and st[c] >= 0.15 * n)
        out += "  %s %5.1f%%  %-60s %s\n" % (where(a), 100.0 * n / total,
                                            re.sub(r"0x[0-9a-f]{5,}", local, src), main)
    return out
