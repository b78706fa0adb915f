"""The claims of ARTICLES.md beside this book's model and measurements (`make report`).

    book.py report [RESULTS_DIR]   RESULTS_DIR: a GPU's results folder (default results/latest); only read, except
                                   RESULTS_DIR/REPORT.md, which this writes (REPORT=FILE to write elsewhere)
    ARTICLES=FILE                  the claims (default ARTICLES.md); every id there gets a row

No GPU needed. One row per claim id of ARTICLES.md: the article's value (read from ARTICLES.md itself with a
pattern), our model value (the chapter programs' --model output at the article's configuration or the claim's
shape, run here), our measured value and the files it comes from, measured / article, the chapter and a note.
What each claim takes, and the judgements no number makes, are data: common/scripts/claims.txt. A value is "not
measured" only when no results file has a row for it, and then the cell names the file and the row it looked for.
Exit status 1 when an id of ARTICLES.md has no claim line (or the reverse), or an article pattern is not found."""
import csv
import os
import re
import subprocess
import sys

from .results import STALE, BadInput, NOT_RECORDED, bench_header, fastest_rounds, ncu, provenance, stale_kernels, table, \
    with_commas

CLAIMS = "common/scripts/claims.txt"
TOL = 0.10


# ---- the model: the chapter programs, run here -------------------------------------------------------------
def model_out(ch, *args):
    prog = "./ch%s/run" % ch
    if not os.access(prog, os.X_OK):
        raise BadInput("%s is not built (make first)" % prog)
    p = subprocess.run([prog, "--model"] + list(args) + ["--csv", "-"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    return p.stdout


def model_csv(out, kernel, *cols):
    """Columns of one kernel's --model --csv row (the CSV lines are those that start with the chapter's number)."""
    rows = [l for l in out.splitlines() if re.match(r"^(chapter,kernel,|[0-9][0-9],)", l)]
    for r in csv.DictReader(rows):
        if r.get("kernel") == kernel:
            return [r.get(c, "") for c in cols]
    return [""] * len(cols)


def grab(out, pattern, n=1):
    """The n-th number (commas removed) in the matches of pattern on the first line that has one."""
    for line in out.splitlines():
        found = [m.group(0) for m in re.finditer(pattern, line)]
        if found:
            nums = [x for f in found for x in re.findall(r"[0-9][0-9,]*\.?[0-9]*", f)]
            return nums[n - 1].replace(",", "") if len(nums) >= n else ""
    return ""


def model_facts():
    f = {}
    m02 = model_out("02")
    f["m02_read"], f["m02_write"] = model_csv(m02, "flash_v1", "model_read_bytes", "model_write_bytes")
    f["m02_blocks"] = grab(m02, r"[0-9,]+ blocks of [0-9]+ threads, one per head")
    f["m02_tc"] = grab(m02, r"Tc x Tr = [0-9]+")
    f["m02_smem"] = grab(m02, r"shared memory per block: [0-9,]+ B")
    f["m02_smem_art"] = grab(m02, r"Triton v1.*: [0-9,]+ B", 5)
    f["m02_occ_art"] = grab(m02, r"Triton v1.*occupancy", 7)
    f["m02_occ_own"] = grab(m02, r"this kernel: .*occupancy", 5)
    for key, name in (("rtx", "RTX 2070"), ("a100", "A100"), ("h100", "H100")):
        # the datasheet row: HBM GB/s, FP32 TFLOP, FP16 tensor TFLOP, FP32 ridge, L2 MB (after the sm_NN column)
        row = next((l for l in m02.splitlines() if name in l), "")
        w = re.sub(r".*sm_[0-9]*", "", row).split()
        if len(w) >= 5:
            f[key + "_gbs"], f[key + "_fp32"], f[key + "_tc"], f[key + "_l2"] = w[0], w[1], w[2], w[4]
    m03 = model_out("03")
    f["m03_read"], f["m03_write"], f["m03_ideal_read"] = model_csv(
        m03, "flash_v2", "model_read_bytes", "model_write_bytes", "ideal_read_bytes")
    f["m03_blocks"] = grab(m03, r"[0-9,]+ blocks of [0-9]+ threads, one per query block")
    # chapter 04: the bank model (one --model run prints every layout): requests, wavefronts, conflicts, rate, N-way
    m04 = model_out("04")
    for l in ("naive", "transposed", "paired"):
        for line in m04.splitlines():
            w = line.split()
            if len(w) >= 6 and w[0] == l and re.match(r"^[0-9,]+$", w[1]):
                w = [x.replace(",", "").replace("%", "") for x in w]
                f["m04_wf_" + l], f["m04_rate_" + l], f["m04_way_" + l] = w[2], w[4], w[5]
                break
    # chapter 00 at article 2's worked example (N = 4096, d = 128, one head, fp16)
    m00 = model_out("00", "--dtype", "fp16", "--batch", "1", "--heads", "1", "--seq", "4096", "--dim", "128")
    f["m00_art_total"] = grab(m00, r"total [0-9,]+ \(8Nd \+ 10N\^2")
    ir, iw = model_csv(m00, "total", "ideal_read_bytes", "ideal_write_bytes")
    f["m00_comp_total"] = "%d" % (int(ir) + int(iw)) if ir and iw else ""
    f["m00_mem_ms"] = grab(m00, r"-> [0-9.]+ ms \(compulsory")
    f["m00_cmp_ms"] = grab(m00, r"vs compute [0-9,]+ FLOP -> [0-9.]+ ms", 2)
    f["m00_mem_over_cmp"] = grab(m00, r"ms: [0-9.]+x \(")
    f["m00_int_qk"] = grab(m00, r"S = QK\^T [0-9.]+ \(2d")
    f["m00_int_sm"] = grab(m00, r"softmax [0-9.]+ \(5 ops")
    f["m00_ridge_a100"] = grab(m00, r"A100 fp16 tensor [0-9]+", 3)
    f["m00_ridge_h200"] = grab(m00, r"H200 fp16 tensor [0-9]+", 3)
    # IO-scores at its own shape: S = the first kernel's writes, N = 8192, 32 heads, fp16
    m00s = model_out("00", "--dtype", "fp16", "--batch", "1", "--heads", "32", "--seq", "8192", "--dim", "64")
    f["m00_s32"] = model_csv(m00s, "qk_gemm", "model_write_bytes")[0]
    # IO-flashbytes at its shape (N = 4096, d = 128, one head; fp32, the dtype of chapter 03): compulsory bytes of
    # standard attention (chapter 00) over FlashAttention's (chapter 03), and the bytes each code requests
    shape = ("--batch", "1", "--heads", "1", "--seq", "4096", "--dim", "128")
    cols = ("ideal_read_bytes", "ideal_write_bytes", "model_read_bytes", "model_write_bytes")
    a, b, c, d = (float(x or 0) for x in model_csv(model_out("00", *shape), "total", *cols))
    e, g, h, i = (float(x or 0) for x in model_csv(model_out("03", *shape), "flash_v2", *cols))
    if e + g > 0:
        f["m_flash_comp"] = "%.1f" % ((a + b) / (e + g))
    if h + i > 0:
        f["m_flash_req"] = "%.2f" % ((c + d) / (h + i))
    return {k: v for k, v in f.items() if v != ""}


# ---- the measurements: the facts of claims.txt ---------------------------------------------------------
class Facts:
    def __init__(self, results):
        self.R = results
        self.value = {}
        self.missing = {}       # key -> the cell that says what is missing
        self.kernels = {}       # key -> {(chapter, kernel)} it was read from

    def measure(self, key, spec):
        kind, rest = spec[0], spec[1:]
        rel = rest[0] if kind != "max" else None
        if kind == "max":
            col, files = rest[0], rest[1:]
            vals = []
            for rel in files:
                if not os.path.isfile(os.path.join(self.R, rel)):
                    continue
                t = table(os.path.join(self.R, rel))
                t.need(col)
                vals += [float(r[col]) for r in t.rows if r[col] != ""]
            if vals:
                self.value[key] = "%.1e" % max(vals)
            else:
                self.missing[key] = "not measured: no %s in %s" % (col, ", ".join(files))
            return
        path = os.path.join(self.R, rel)
        if not os.path.isfile(path):
            self.missing[key] = "not in this results folder (%s)" % rel
            return
        ch = re.match(r"ch([0-9][0-9])", rel)
        if kind == "csv":
            cols, where = rest[1].split("+"), dict(w.split("=", 1) for w in rest[2:])
            t = table(path)
            t.need(*cols)
            rows = t.select(**where)
            if ch and "kernel" in where:
                self.kernels[key] = {(ch.group(1), where["kernel"])}
            if not rows:
                self.missing[key] = "not measured: no row of %s with %s" % (rel, " ".join(rest[2:]))
            elif len(cols) == 1:
                if "peer" in where and cols[0] == "time_ms_median":  # a peer timed in rounds: its fastest
                    rows = list(fastest_rounds(rows, lambda r: 0).values())
                self.value[key] = rows[0][cols[0]]
            else:
                self.value[key] = "%.0f" % sum(float(rows[0][c]) for c in cols)
        elif kind == "ncu":
            kernel, metrics = rest[1], rest[2].split("+")
            n = ncu(path)
            vals = [n.value(kernel, m, required=False) for m in metrics]
            if ch:
                self.kernels[key] = {(ch.group(1), re.sub(r"_kernel$", "", kernel))}
            if None in vals:
                self.missing[key] = "not measured: no %s of %s in %s" % (rest[2], kernel, rel)
            elif len(vals) == 1:
                self.value[key] = self.shown(vals[0])
            else:
                self.value[key] = "%.0f" % sum(vals)
        else:
            raise BadInput("%s: fact %s: no kind '%s' (csv, ncu or max)" % (CLAIMS, key, kind))

    @staticmethod
    def shown(v):
        return "%d" % v if v == int(v) else "%.6g" % v


# ---- the templates -----------------------------------------------------------------------------------------
def number(s):
    m = re.match(r"^\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?", s)
    return float(m.group(0)) if m else 0.0


class Row:
    def __init__(self, facts, article_numbers):
        self.facts = facts
        self.art = article_numbers
        self.used = set()

    def operand(self, s):
        if re.match(r"^[0-9.]+(e[0-9]+)?$", s):
            return float(s)
        if re.match(r"^ARTICLE[0-9]+$", s):
            i = int(s[7:])
            return float(self.art[i - 1]) if i <= len(self.art) else None
        self.used.add(s)
        v = self.facts.value.get(s, "")
        return number(v) if v != "" else None

    def eval(self, e):
        """KEY, number or ARTICLEn joined by * and /, left to right; None when an operand is missing."""
        terms, ops = re.split(r"[*/]", e), re.sub(r"[^*/]", "", e)
        v = None
        for i, t in enumerate(terms):
            x = self.operand(t)
            if x is None:
                return None
            if i == 0:
                v = x
            elif ops[i - 1] == "*":
                v *= x
            else:
                if x == 0:
                    return None
                v /= x
        return v

    def agree(self, e):
        a, b = (self.eval(x) for x in e.split("~"))
        if a is None or b is None or b == 0:
            return ""
        d = a / b - 1
        return ("accounts for it (%+.0f%%)" if -TOL <= d <= TOL else "does not account for it (%+.0f%%)") % (100 * d)

    @staticmethod
    def show(v):
        """A fact as read: integers of 5 digits or more with thousands separators, the rest as the file has it."""
        return with_commas(v) if len(v) >= 5 and v.isdigit() else v

    @staticmethod
    def fmt(v):
        if v is None:
            return ""
        if v >= 10000 and v == int(v) or v >= 1000:
            return with_commas(v)
        if v >= 100:
            return "%.0f" % v
        return "%.3g" % v

    def fill(self, tpl):
        """The template with its {EXPR} replaced; where a fact is missing, the cell says which file and row."""
        out, missing = "", []
        for piece in re.split(r"(\{[^}]*\})", tpl):
            if not (piece.startswith("{") and piece.endswith("}")):
                out += piece
                continue
            e = piece[1:-1]
            if "~" in e:
                v = self.agree(e)
            elif re.match(r"^[A-Za-z_0-9]+$", e) and e in self.facts.value:
                self.used.add(e)
                v = self.show(self.facts.value[e])
            else:
                v = self.fmt(self.eval(e))
            if v == "":
                missing += [self.facts.missing.get(k, "not printed by the model: %s" % k)
                            for k in re.split(r"[*/~]", e) if k in self.facts.missing or
                            (re.match(r"^[a-z][a-z_0-9]*$", k) and k not in self.facts.value)]
            out += v
        if missing:
            return "; ".join(sorted(set(missing)))
        return out


def article_numbers(s):
    """The numbers of the article's value as found; numbers that follow a letter are names (v1, H100)."""
    return [m.group(0).replace(",", "") for m in re.finditer(r"[0-9][0-9,]*(\.[0-9]+)?", s)
            if m.start() == 0 or not re.match(r"[A-Za-z_^]", s[m.start() - 1])]


def read_articles(path):
    """{id: its text} in the order of ARTICLES.md (a table row, or a paragraph)."""
    ids, text, cur, para = [], {}, None, False
    with open(path) as f:
        for line in f.read().split("\n"):
            m = re.search(r'<a id="[^"]*"></a>\*\*([^*]+)\*\*', line)
            if m:
                cur = m.group(1)
                ids.append(cur)
                text[cur] = line
                para = not line.startswith("|")
            elif cur and para and line.strip():
                text[cur] += " " + line
            else:
                cur = None
    return ids, text


def peer_rows(R, spec):
    """PyTorch beside our fastest kernel per shape and mask, from the same run (claims.txt's peers lines)."""
    pf, ours, kre, ch = spec.split("|")
    p = os.path.join(R, pf)
    if not os.path.isfile(p):
        return [("PyTorch (%s)" % pf, "PyTorch beside chapter %s" % ch, "-", "-", "not in this results folder (%s)" % pf,
                 pf, "-", "-", "-", set())]
    best, bk = {}, {}
    for f in ours.split():
        if not os.path.isfile(os.path.join(R, f)):
            continue
        for r in table(os.path.join(R, f)).rows:
            if not re.search(kre, r["kernel"]) or r.get("setup") == "1":
                continue
            k = (r["B"], r["H"], r["N"], r["d"], r["causal"])
            if k not in best or float(r["time_ms_median"]) < float(best[k]):
                best[k], bk[k] = r["time_ms_median"], "%s %sx%s" % (r["kernel"], r.get("br", ""), r.get("bc", ""))
    peers = table(p).rows
    shape_of = lambda r: (r["B"], r["H"], r["N"], r["d"], r["causal"])
    order = list(dict.fromkeys(shape_of(r) for r in peers))
    dt = {shape_of(r): r["dtype"] for r in peers}
    pm = {k: r["time_ms_median"]  # (shape, peer): the peer's fastest round
          for k, r in fastest_rounds(peers, lambda r: (shape_of(r), r["peer"])).items()}
    rows = []
    for k in order:
        shape = "B=%s H=%s N=%s d=%s %s%s" % (k[0], k[1], k[2], k[3], dt[k], " causal" if k[4] == "1" else "")
        if k not in best:
            rows.append(("PyTorch ch" + ch, shape, "-", "-", "not measured: no run of ours at this shape in " + ours,
                         pf, "-", "-", "-", set()))
            continue
        m = "ours %s %s ms" % (bk[k], best[k])
        for peer in ("torch_3op", "sdpa_efficient"):
            if (k, peer) in pm:
                m += "; %s %s ms (ours / it %.2f)" % (peer, pm[k, peer], float(best[k]) / float(pm[k, peer]))
        rows.append(("PyTorch ch" + ch, shape + ": our fastest kernel vs PyTorch", "-", "-", m, pf + ", " + ours, "-",
                     ch, "same run; %s on both sides" % dt[k], {(ch, bk[k].split()[0])}))
    return rows


def caption(R):
    """GPU, CUDA, driver, Nsight Compute and the date of the run: from its record (provenance.json), else from the
    benches' first lines (measured.txt, summary.txt); a field no file records says so."""
    rec = provenance(R)
    for ch in sorted(os.listdir(R)):
        rec = rec or bench_header(os.path.join(R, ch))
    src = os.path.relpath(rec["file"], R) if rec else None
    gpu, cuda, driver, ncu_v, date = (rec.get(k) for k in ("gpu", "cuda", "driver", "ncu", "date"))
    return "The run: %s, CUDA %s, driver %s, Nsight Compute %s, %s (from %s)." % (
        gpu or "GPU " + NOT_RECORDED, cuda or NOT_RECORDED, driver or NOT_RECORDED, ncu_v or NOT_RECORDED,
        (date or "")[:10] or "date " + NOT_RECORDED, src or "no file: nothing recorded")


def main(args, root):
    R = args[0] if args else "results/latest"
    if not os.path.isdir(R):
        raise BadInput("no results folder '%s'" % R)
    R = os.path.relpath(os.path.realpath(R), os.path.realpath(root)) \
        if os.path.realpath(R).startswith(os.path.realpath(root) + os.sep) else os.path.realpath(R)
    articles = os.environ.get("ARTICLES", "ARTICLES.md")
    out_path = os.environ.get("REPORT", os.path.join(R, "REPORT.md"))
    if not os.path.isfile(articles):
        raise BadInput("no %s" % articles)
    facts = Facts(R)
    claims, extra, bad = {}, [], False
    with open(CLAIMS) as f:
        for line in f.read().split("\n"):
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith("fact "):
                m = re.match(r"^fact ([A-Za-z_0-9]+) = (.*)$", line)
                if not m:
                    raise BadInput("%s: not a fact: %s" % (CLAIMS, line))
                facts.measure(m.group(1), m.group(2).split())
                continue
            if line.startswith("peers "):
                extra += peer_rows(R, line[len("peers "):])
                continue
            f9 = line.split("|")
            if len(f9) != 9:
                print("report: claim %s: %d fields, 9 expected" % (f9[0], len(f9)), file=sys.stderr)
                bad = True
            if f9[0] in claims:
                print("report: claim %s twice" % f9[0], file=sys.stderr)
                bad = True
            claims[f9[0]] = f9 + [""] * (9 - len(f9))
    for k, v in model_facts().items():
        facts.value.setdefault(k, v)
    ids, text = read_articles(articles)
    for c in claims:
        if c not in text:
            print("report: claim %s is not in %s" % (c, articles), file=sys.stderr)
            bad = True
    stale = stale_kernels(R)
    lines = [
        "# Claims of the two articles, reproduced on " + facts.value.get("gpu", R), "",
        "Written by `make report` (common/scripts/book.py report, the claims in %s) from %s/ and the chapter "
        "programs' `--model --csv -`." % (CLAIMS, R),
        "Article: the value as ARTICLES.md quotes it (the article's GPU: a GeForce RTX 2070, %s GB/s)."
        % facts.value.get("rtx_gbs", ""),
        "Model: printed by this tree's programs, run when the report is made. Measured: from the file named",
        "(paths under %s/). ours/article: measured (else model) over the article's value, like for like." % R,
        caption(R), "",
        "| id | claim | article | our model | our measurement | from | ours/article | ch | note |",
        "|---|---|---|---|---|---|---:|---|---|"]
    for cid in ids:
        if cid not in claims:
            print("report: %s (ARTICLES.md) has no line in %s" % (cid, CLAIMS), file=sys.stderr)
            bad = True
            lines.append("| %s | (no entry in %s) | | | | | | | |" % (cid, CLAIMS))
            continue
        _, claim, pattern, model, measured, source, ratio, chapter, note = claims[cid]
        art, nums = "-", []
        if pattern:
            m = re.search(pattern, text[cid])
            if m:
                art, nums = m.group(0), article_numbers(m.group(0))
            else:
                print("report: %s: the article pattern '%s' is not in its %s row" % (cid, pattern, articles),
                      file=sys.stderr)
                bad, art = True, "?"
        row = Row(facts, nums)
        model, measured, note = row.fill(model), row.fill(measured), row.fill(note)
        r = row.fmt(row.eval(ratio)) if ratio else ""
        kernels = set().union(*[facts.kernels.get(k, set()) for k in row.used])
        lines.append(cells(cid, claim, art, model, measured, source, r, chapter, note, kernels, stale))
    for label, claim, art, model, measured, source, r, chapter, note, kernels in extra:
        lines.append(cells(label, claim, art, model, measured, source, r, chapter, note, kernels, stale))
    text_out = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(out_path) or ".", exist_ok=True)
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text_out)
    os.replace(tmp, out_path)
    sys.stdout.write(text_out)
    print()
    print("report: written to %s" % out_path)
    return 1 if bad else 0


def cells(cid, claim, art, model, measured, source, ratio, chapter, note, kernels, stale):
    marks = sorted("ch%s %s: %s" % (c, k, stale[(c, k)]) for c, k in kernels if (c, k) in stale)
    if marks:
        note = "%s (%s)%s" % (STALE, "; ".join(marks), "; " + note if note and note != "-" else "")
    return "| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % tuple(
        v if v else "-" for v in (cid, claim, art, model, measured, source, ratio, chapter, note))
