"""readme_blocks.py: the generated blocks of chapter 06's README (`make docs`): one function block_NAME(blk) per
<!-- MEASURED:NAME --> there, blk a common/scripts/booklib/blocks.py Blocks bound to a results folder (RESULTS,
results/NVIDIA_H200 by default), whose helpers read its files."""
from booklib.blocks import *  # noqa: F401,F403 (the helpers: booklib/blocks.py, __all__)


# chapter 06's steps as its program names them (--kernel wgmma, tma, warp_specialized, pingpong, overlap, zigzag,
# queue, tma_store, dispatch), each measured by bench.sh; the last, dispatch, has no kernel of its own (it runs tma's
# or tma_store's): ncu profiles the others
CH06_KERNELS = ("flash_wgmma", "flash_tma", "flash_warp_specialized", "flash_pingpong", "flash_overlap", "flash_zigzag",
                "flash_queue", "flash_tma_store", "flash_dispatch")
CH06_OWN_KERNELS = CH06_KERNELS[:-1]

# FlashAttention-3's paper's figures for the steps it measured, kept with the chapter (06_flash_v3/fa3_paper.csv)
CH06_PAPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fa3_paper.csv")


def block_ch06_article(blk):
    """Chapter 06's steps at the article's size (B=10 H=64 N=1024), d = 64 and 128, fp16 and bf16, full and
    causal side by side, each step at its default tiles (article.csv, one run; "full / causal" where the two
    differ), beside cuDNN's fastest round of the same run (peers.csv)."""
    f, p = "ch06/article.csv", "ch06/peers.csv"
    peer = blk.peers_fastest(p)
    out = "| step (B=10 H=64 N=1024) | d | dtype | Br x Bc | full ms | TFLOP/s | vs cuDNN | causal ms | TFLOP/s " \
          "| vs cuDNN |\n|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n"
    for k in CH06_KERNELS:
        first = True
        for d in (64, 128):
            for dt in ("fp16", "bf16"):
                cells, tiles = [], []
                for c in (0, 1):
                    w = dict(kernel=k, B=10, H=64, N=1024, d=d, dtype=dt, causal=c)
                    ms = float(blk.pick(f, "time_ms_median", **w))
                    t = "%s x %s" % (blk.pick(f, "br", **w), blk.pick(f, "bc", **w))
                    tiles += [] if t in tiles else [t]
                    cu = peer.get(("10", "64", "1024", str(d), dt, str(c), "sdpa_cudnn"))
                    cells += ["%.3f" % ms, fmt("%.1f", blk.pick(f, "tflops", **w)), blk.ratio(cu, ms)]
                out += "|%s| %d | %s | %s | %s |\n" % (" %s " % k if first else " ", d, dt, " / ".join(tiles),
                                                      " | ".join(cells))
                first = False
    return out + blk.caption(f, p)


def block_ch06_tiles(blk):
    """warp_specialized's tiles (tiles.csv, one run): at two shapes, d = 64 and 128, bf16, each tile's time and
    TFLOP/s, full and causal; the fastest of each column in bold."""
    f = "ch06/tiles.csv"
    out = "| shape (bf16) | d | Br x Bc | consumers | stages | full ms | TFLOP/s | causal ms | TFLOP/s |\n" \
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    shapes = []
    for r in blk.rows(f, kernel="flash_warp_specialized"):
        key = (r["B"], r["H"], r["N"])
        if key not in shapes:
            shapes.append(key)
    if not shapes:
        raise BadInput("%s: no flash_warp_specialized rows" % blk.path(f))
    for B, H, N in sorted(shapes, key=lambda x: -int(x[2])):
        for d in ("64", "128"):
            rows = blk.rows(f, kernel="flash_warp_specialized", B=B, H=H, N=N, d=d)
            tiles = sorted({(int(r["br"]), int(r["bc"])) for r in rows})
            best = {}
            for c in ("0", "1"):
                best[c] = min(float(r["time_ms_median"]) for r in rows if r["causal"] == c)
            first = True
            for br, bc in tiles:
                cells = []
                for c in ("0", "1"):
                    w = dict(kernel="flash_warp_specialized", B=B, H=H, N=N, d=d, br=br, bc=bc, causal=c)
                    ms = float(blk.pick(f, "time_ms_median", **w))
                    bold = "**" if ms == best[c] else ""
                    cells += ["%s%.3f%s" % (bold, ms, bold), fmt("%.1f", blk.pick(f, "tflops", **w))]
                stages = (232448 - 4 * br * int(d) - 16) // (4 * bc * int(d) + 16)  # FA3_WS_STAGES (tiles.h)
                out += "|%s| %s | %d x %d | %d | %d | %s |\n" % (
                    " B=%s H=%s N=%s " % (B, H, N) if first and d == "64" else " ", d, br, bc, br // 64, stages,
                    " | ".join(cells))
                first = False
    return out + blk.caption(f)


def block_ch06_sweep(blk):
    """The 16k-token sweep (B = 16384/N, H = 16, N = 512 .. 16384, fp16 and bf16) of every step, beside
    FlashAttention-2 and cuDNN (their fastest round) and chapter 05's mma_async, all of one run: per step, d and
    mask, the range over the 12 points of TFLOP/s and of each time ratio (theirs / ours: above 1 ours is
    faster), and the bf16 point at N = 16384."""
    s, p, c5 = "ch06/sweep.csv", "ch06/peers.csv", "ch06/ch05_sweep.csv"
    peer = blk.peers_fastest(p)
    ch05 = {(r["B"], r["H"], r["N"], r["d"], r["dtype"], r["causal"]): float(r["time_ms_median"])
            for r in blk.rows(c5, kernel="flash_mma_async")}
    out = "| step | d | mask | TFLOP/s | vs cuDNN | vs FA-2 | vs ch05 `mma_async` | TFLOP/s at N = 16384 (bf16) " \
          "| cuDNN's TFLOP/s there |\n|---|---:|---|---:|---:|---:|---:|---:|---:|\n"
    span = lambda xs: fmt("%.2f", min(xs)) + "-" + fmt("%.2f", max(xs)) if xs else "-"
    for k in CH06_KERNELS:
        first = True
        for d in ("64", "128"):
            for c in ("0", "1"):
                rows = blk.rows(s, kernel=k, d=d, causal=c)
                if not rows:
                    raise BadInput("%s: no %s rows at d=%s causal=%s" % (blk.path(s), k, d, c))
                tf, cu, fl, m5 = [], [], [], []
                top = top_cu = None
                for r in rows:
                    key = (r["B"], r["H"], r["N"], r["d"], r["dtype"], r["causal"])
                    ms = float(r["time_ms_median"])
                    tf.append(float(r["tflops"]))
                    for lst, theirs in ((cu, peer.get(key + ("sdpa_cudnn",))), (fl, peer.get(key + ("sdpa_flash",))),
                                        (m5, ch05.get(key))):
                        if theirs:
                            lst.append(theirs / ms)
                    if r["N"] == "16384" and r["dtype"] == "bf16":
                        top, top_cu = float(r["tflops"]), peer.get(key + ("sdpa_cudnn",))
                tfs = "%.0f-%.0f" % (min(tf), max(tf))
                out += "|%s| %s | %s | %s | %s | %s | %s | %s | %s |\n" % (
                    " `%s` " % k if first else " ", d, "causal" if c == "1" else "full", tfs, span(cu), span(fl),
                    span(m5), fmt("%.0f", top) if top else "-",
                    "%.0f" % (4 * 16 * 16384 ** 2 * int(d) / (2 if c == "1" else 1) / (top_cu * 1e-3) / 1e12)
                    if top_cu else "-")
                first = False
    return out + blk.caption(s, p, c5)


def block_ch06_goal(blk):
    """The chapter's goal, each point of the 16k-token sweep at 1.00x cuDNN's fastest round or better, for its last
    step (CH06_KERNELS[-1]): per d and mask the points that meet it, the range of the time ratio (cuDNN's / ours),
    the points below 1.00; then which step is the fastest at how many of the sweep's points (sweep.csv, peers.csv)."""
    s, p = "ch06/sweep.csv", "ch06/peers.csv"
    peer = blk.peers_fastest(p)
    last = CH06_KERNELS[-1]
    out = "| `%s` against cuDNN | points at 1.000x or better | time ratio (cuDNN / ours) | points below 1.000x " \
          "(N, dtype: ratio) |\n|---|---:|---:|---|\n" % last
    met_all = True
    for d in ("64", "128"):
        for c in ("0", "1"):
            rows = blk.rows(s, kernel=last, d=d, causal=c)
            if not rows:
                raise BadInput("%s: no %s rows at d=%s causal=%s" % (blk.path(s), last, d, c))
            rs, below = [], []
            for r in sorted(rows, key=lambda r: (int(r["N"]), r["dtype"])):
                cu = peer.get((r["B"], r["H"], r["N"], r["d"], r["dtype"], r["causal"], "sdpa_cudnn"))
                if not cu:
                    raise BadInput("%s: no sdpa_cudnn round at N=%s d=%s %s causal=%s" % (
                        blk.path(p), r["N"], d, r["dtype"], c))
                x = cu / float(r["time_ms_median"])
                rs.append(x)
                if x < 1.0:  # strictly: 0.999 is below, though it prints as 1.00 at two decimals
                    below.append("%s, %s: %s" % (r["N"], r["dtype"], fmt("%.3f", x)))
            met_all = met_all and not below
            out += "| d = %s, %s | %d of %d | %s-%s | %s |\n" % (
                d, "causal" if c == "1" else "full", len(rs) - len(below), len(rs), fmt("%.3f", min(rs)),
                fmt("%.3f", max(rs)),
                "; ".join(below) if below else "none")
    out += "\nThe goal, every point at 1.000x cuDNN or better: **%s**.\n" % ("met" if met_all else "not met")
    times = {}  # {point: {step: ms}}, one pass over the sweep
    for k in CH06_KERNELS:
        for r in blk.rows(s, kernel=k):
            times.setdefault((r["B"], r["H"], r["N"], r["d"], r["dtype"], r["causal"]), {})[k] = float(
                r["time_ms_median"])
    fastest = {}
    for ms in times.values():
        best = min(ms, key=ms.get)
        fastest[best] = fastest.get(best, 0) + 1
    out += "\nThe fastest step at each of the sweep's %d points: %s.\n" % (len(times), ", ".join(
        "`%s` at %d" % (k, fastest[k]) for k in CH06_KERNELS if k in fastest))
    return out + blk.caption(s, p)


def block_ch06_ablation(blk):
    """FlashAttention-3's ablation replayed: each step's TFLOP/s at d = 128, full mask, 16k tokens (N = 8192 and
    16384; sweep.csv, one run), its time against the step before's, beside the paper's figure for the same
    configuration (an H100, fp16, d = 128, 8k tokens: 06_flash_v3/fa3_paper.csv)."""
    s = "ch06/sweep.csv"
    paper = {r["kernel"]: r for r in Table(CH06_PAPER).rows}
    out = "| step | TFLOP/s fp16, N = 8192 | fp16, N = 16384 | bf16, N = 16384 | time of the step before / this " \
          "one (bf16, N = 16384) | FlashAttention-3's paper (H100, fp16, N = 8192), TFLOP/s | its configuration " \
          "|\n|---|---:|---:|---:|---:|---:|---|\n"
    before = None
    for k in CH06_KERNELS:
        cell = lambda N, dt, col: blk.pick(s, col, kernel=k, B=16384 // N, H=16, N=N, d=128, dtype=dt, causal=0)
        ms = float(cell(16384, "bf16", "time_ms_median"))
        p = paper.get(k)
        out += "| `%s` | %s | %s | %s | %s | %s | %s |\n" % (
            k, fmt("%.0f", cell(8192, "fp16", "tflops")), fmt("%.0f", cell(16384, "fp16", "tflops")),
            fmt("%.0f", cell(16384, "bf16", "tflops")), "-" if before is None else "%.2fx" % (before / ms),
            p["paper_tflops"] if p else "-", "%s (%s)" % (p["paper_configuration"], p["paper_where"]) if p else "-")
        before = ms
    return out + blk.caption(s)


def block_ch06_gpu_checks(blk):
    """What the GPU tests and compute-sanitizer said on the H200 (tests_gpu.log: the command, "$ ...", then
    Criterion's last line;
    sanitizer_<kernel>_<tool>_<shape>.log: each tool's summary line), one row per log."""
    out = "| check | result |\n|---|---|\n"
    log = blk.path("ch06/tests_gpu.log")
    try:
        with open(log, errors="replace") as f:
            lines = f.readlines()
    except OSError:
        raise BadInput("%s: cannot read" % log)
    synth = [l.strip() for l in lines if "Synthesis" in l]
    if not synth:
        raise BadInput("%s: no Criterion synthesis line" % log)
    cmd = [l[2:].strip() for l in lines if l.startswith("$ ")]
    if not cmd:
        raise BadInput("%s: no command line (a first line \"$ REQUIRE_GPU=1 tests/bin/test_ch06 ...\")" % log)
    out += "| `%s` | %s |\n" % (cmd[0], synth[-1].replace("[====] Synthesis: ", "").replace(" | ", ", "))
    d = os.path.dirname(log)
    for name in sorted(os.listdir(d)):
        m = re.match(r"^sanitizer_([a-z_]+)_(memcheck|racecheck|synccheck)_(.*)\.log$",
                     name)
        if not m:
            continue
        with open(os.path.join(d, name), errors="replace") as f:
            summ = [l.strip().lstrip("= ").strip() for l in f if "SUMMARY" in l]
        out += "| `compute-sanitizer --tool %s ./ch06/run --kernel %s` (%s) | %s |\n" % (
            m.group(2), m.group(1), m.group(3), summ[-1] if summ else "no summary line")
    return out + blk.caption("ch06/run.csv", names="ch06/tests_gpu.log, ch06/sanitizer_*.log")


def block_ch06_tma_bytes(blk):
    """The bytes the copy engine moved under ncu (l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld: bytes
    from L2 into the SM for TMA loads) beside the model (= the counted bytes, which the tests require), and
    the difference computed from the shape: the rows past N of every box that reaches past the end of a head
    (the engine fills them with zeros, and ncu counts them as delivered). Full mask only."""
    n, m = "ch06/ncu_tma_bytes.csv", "ch06/ncu_tma_bytes_model.csv"
    metric = "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum"
    out = "| kernel | shape | tile | model read bytes (= counted) | rows past N in the boxes, bytes | sum " \
          "| ncu: TMA bytes into the SMs | DRAM read |\n|---|---|---:|---:|---:|---:|---:|---:|\n"
    for k in ("flash_tma", "flash_warp_specialized"):
        r = blk.rows(m, kernel=k)
        if not r:
            raise BadInput("%s: no row of %s" % (blk.path(m), k))
        r = r[0]
        if r["causal"] != "0":
            raise BadInput("%s: %s: the closed form here is the full mask's" % (blk.path(m), k))
        B, H, N, d, br, bc = (int(r[c]) for c in ("B", "H", "N", "d", "br", "bc"))
        past = lambda t: (t - N % t) % t  # rows of the last tile past N
        Tr = -(-N // br)
        oob = B * H * 2 * d * (past(br) + 2 * Tr * past(bc))  # Q once, K and V per query tile (every one visits the last block)
        model = int(r["model_read_bytes"])
        got = blk.ncu(n, "%s_kernel" % k, metric)
        dram = blk.ncu(n, "%s_kernel" % k, "dram__bytes_read.sum")
        out += "| `%s` | B=%d H=%d N=%d d=%d | %d x %d | %s | %s | %s | %s%s | %s |\n" % (
            k, B, H, N, d, br, bc, with_commas(model), with_commas(oob), with_commas(model + oob),
            with_commas(got), "" if got == model + oob else " (differs)", with_commas(dram))
    return out + blk.caption(n, m)


def block_ch06_sections(blk):
    """Steps 5-7 under ncu at one causal shape whose K and V outgrow L2 (ncu_sections.csv: one launch of each,
    the caches flushed first), beside the model's read bytes (every K/V block from global memory, as the kernel
    asks for it) and the compulsory ones (Q, K, V once) of the same runs (ncu_sections_run.csv); the run's own
    median time beside ncu's."""
    n, r = "ch06/ncu_sections.csv", "ch06/ncu_sections_run.csv"
    out = "| kernel (causal, bf16) | shape | time, ms (run / under ncu) | model read bytes | compulsory read bytes " \
          "| DRAM read bytes (ncu) | DRAM read / compulsory | DRAM busy (% of peak) |\n" \
          "|---|---|---:|---:|---:|---:|---:|---:|\n"
    for k in ("flash_overlap", "flash_zigzag", "flash_queue"):
        rows = blk.rows(r, kernel=k)
        if not rows:
            raise BadInput("%s: no row of %s" % (blk.path(r), k))
        w = rows[0]
        if w["causal"] != "1":
            raise BadInput("%s: %s: this table is the causal mask's" % (blk.path(r), k))
        dram = blk.ncu(n, "%s_kernel" % k, "dram__bytes_read.sum")
        ideal = int(w["ideal_read_bytes"])
        out += "| `%s` | B=%s H=%s N=%s d=%s | %s / %s | %s | %s | %s | %s | %s |\n" % (
            k, w["B"], w["H"], w["N"], w["d"], fmt("%.3f", w["time_ms_median"]),
            fmt("%.3f", blk.ncu(n, "%s_kernel" % k, "gpu__time_duration.sum") / 1e6),
            with_commas(int(w["model_read_bytes"])), with_commas(ideal), with_commas(dram), fmt("%.2f", dram / ideal),
            fmt("%.1f", blk.ncu(n, "%s_kernel" % k, "dram__throughput.avg.pct_of_peak_sustained_elapsed")))
    return out + blk.caption(n, r)


def block_ch06_ncu(blk):
    """Each step under ncu at B=1 H=16 N=16384 d=128 bf16, full mask, one launch: the launch's shape, how busy the
    tensor pipe and the issue slots were, and the largest stall reasons (cycles per issued instruction)."""
    n, st, tn = "ch06/ncu.csv", "ch06/ncu_stalls.csv", "ch06/ncu_tensor.csv"
    profiled = [k for k in CH06_OWN_KERNELS if ncu(blk.path(n)).metrics("%s_kernel" % k)]
    cols = [("`%s`" % k, n, st, "%s_kernel" % k) for k in profiled]
    out = blk.ncu_table(cols, (
        ("ncu", "gpu__time_duration.sum", "ms", "kernel time under ncu (ms)"),
        ("ncu", "launch__registers_per_thread", "%.0f", "registers per thread"),
        ("ncu", "sm__maximum_warps_per_active_cycle_pct", "%.2f", "theoretical occupancy (%)"),
        ("ncu", "sm__warps_active.avg.pct_of_peak_sustained_active", "%.2f", "achieved occupancy (%)"),
        (tn, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "%.1f",
         "tensor pipe active (% of peak)"),
        (tn, "smsp__issue_active.avg.pct_of_peak_sustained_active", "%.1f", "issue slots busy (%)"),
        (tn, "sm__throughput.avg.pct_of_peak_sustained_elapsed", "%.1f", "SM throughput (% of peak)"),
        (tn, "sm__inst_executed_pipe_tensor_op_hmma.sum", "commas", "HGMMA instructions executed"),
        (tn, "smsp__inst_executed.sum", "commas", "warp instructions executed"),
        ("ncu", "smsp__average_warp_latency_per_inst_issued.ratio", "%.2f", "cycles per issued instruction (a warp)"),
    ), corner="B=1 H=16 N=16384 d=128 bf16")
    out += "| the four largest stall reasons (cycles per issued instruction; `selected` left out) |"
    for k, _, _, fn in cols:
        stalls = []
        for m in ncu(blk.path(st)).metrics(fn):
            name = re.match(r"^%s(.*)_per_issue_active.ratio$" % S, m)
            if name and name.group(1) != "selected":
                stalls.append((ncu(blk.path(st)).value(fn, m), name.group(1)))
        blk.note(st, fn[:-len("_kernel")])
        out += " %s |" % ", ".join("%s %.2f" % (nm, v) for v, nm in sorted(stalls, reverse=True)[:4])
    out += "\n"
    missing = [k for k in CH06_OWN_KERNELS if k not in profiled]
    if missing:
        out += "\nNot yet measured under ncu: %s.\n" % ", ".join("`%s`" % k for k in missing)
    return out + blk.caption(n, st, tn)


def block_ch06_dispatch(blk):
    """Step 9's choice against the sweep: at each point, step 8's time over step 2's (above 1, step 2's kernel is
    the faster), the tile step 9 ran (Br x Bc: 64 x 64 is step 2's kernel) and its time against the faster of the
    two; then at how many points it ran the faster kernel (sweep.csv, one run)."""
    s = "ch06/sweep.csv"
    t = {}
    for k in ("flash_tma", "flash_tma_store", "flash_dispatch"):
        for r in blk.rows(s, kernel=k):
            t[(k, r["d"], r["N"], r["dtype"], r["causal"])] = r
    out = "| d | N | step 8 / step 2, full fp16 | full bf16 | causal fp16 | causal bf16 | step 9 ran (Br x Bc) " \
          "| step 9 / the faster of the two (time) |\n|---|---:|---:|---:|---:|---:|---|---:|\n"
    right = total = 0
    for d in ("64", "128"):
        for N in ("512", "1024", "2048", "4096", "8192", "16384"):
            cells, ran, vs = [], [], []
            for c in ("0", "1"):
                for dt in ("fp16", "bf16"):
                    rows = [t.get((k, d, N, dt, c)) for k in ("flash_tma", "flash_tma_store", "flash_dispatch")]
                    if None in rows:
                        raise BadInput("%s: no tma, tma_store and dispatch rows at d=%s N=%s %s causal=%s" % (
                            blk.path(s), d, N, dt, c))
                    ms = [float(r["time_ms_median"]) for r in rows]
                    cells.append(fmt("%.2f", ms[1] / ms[0]))
                    tile = "%s x %s" % (rows[2]["br"], rows[2]["bc"])
                    ran += [] if tile in ran else [tile]
                    vs.append(ms[2] / min(ms[:2]))
                    small = rows[2]["br"] == rows[0]["br"] and rows[2]["bc"] == rows[0]["bc"]
                    right += (ms[0] < ms[1]) == small
                    total += 1
            out += "| %s | %s | %s | %s | %s-%s |\n" % (d, N, " | ".join(cells), " / ".join(ran),
                                                        fmt("%.2f", min(vs)), fmt("%.2f", max(vs)))
    out += "\nStep 9 ran the faster of the two kernels at %d of the %d points.\n" % (right, total)
    return out + blk.caption(s)


def block_ch06_short_ncu(blk):
    """Step 2's and step 8's kernels under ncu where step 9 picks step 2's (B=16 H=16 N=1024 d=64 bf16 causal, one
    launch each): warps per scheduler, issue slots, tensor pipe, occupancy (ncu_short.csv), and their times in
    the run beside it (ncu_short_run.csv)."""
    n, r = "ch06/ncu_short.csv", "ch06/ncu_short_run.csv"
    cols = [("`%s`" % k, n, None, "%s_kernel" % k) for k in ("flash_tma", "flash_tma_store")]
    out = blk.ncu_table(cols, (
        ("ncu", "gpu__time_duration.sum", "ms", "kernel time under ncu (ms)"),
        ("ncu", "launch__registers_per_thread", "%.0f", "registers per thread"),
        ("ncu", "sm__warps_active.avg.pct_of_peak_sustained_active", "%.2f", "achieved occupancy (%)"),
        ("ncu", "smsp__warps_active.avg.per_cycle_active", "%.2f", "warps active per scheduler"),
        ("ncu", "smsp__warps_eligible.avg.per_cycle_active", "%.2f", "warps eligible per scheduler"),
        ("ncu", "smsp__issue_active.avg.pct_of_peak_sustained_active", "%.1f", "issue slots busy (%)"),
        ("ncu", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "%.1f",
         "tensor pipe active (% of peak)"),
    ), corner="B=16 H=16 N=1024 d=64 bf16 causal")
    ms = [float(blk.pick(r, "time_ms_median", kernel=k, causal=1)) for k in ("flash_tma", "flash_tma_store")]
    out += "| median time, the run beside it (ms) | %.4f | %.4f |\n" % tuple(ms)
    return out + blk.caption(n, r)


def block_ch06_recheck(blk):
    """The sweep's points at N = 512 and 1024 again, in a call of their own (bench.sh recheck): step 9's time and
    cuDNN's in 5 rounds, its fastest and slowest, and the ratio against the fastest (recheck.csv,
    recheck_peers.csv)."""
    r, p = "ch06/recheck.csv", "ch06/recheck_peers.csv"
    rounds = {}
    for x in blk.rows(p, peer="sdpa_cudnn"):
        rounds.setdefault((x["B"], x["H"], x["N"], x["d"], x["dtype"], x["causal"]), []).append(
            float(x["time_ms_median"]))
    out = "| N | d | mask | dtype | step 9 (ms) | cuDNN, fastest round (ms) | slowest round (ms) | cuDNN / step 9 " \
          "|\n|---:|---:|---|---|---:|---:|---:|---:|\n"
    met = total = 0
    for x in sorted(blk.rows(r, kernel="flash_dispatch"),
                    key=lambda x: (int(x["N"]), int(x["d"]), x["causal"], x["dtype"])):
        k = (x["B"], x["H"], x["N"], x["d"], x["dtype"], x["causal"])
        if k not in rounds:
            raise BadInput("%s: no sdpa_cudnn round at N=%s d=%s %s causal=%s" % (blk.path(p), *k[2:]))
        ms, cu = float(x["time_ms_median"]), rounds[k]
        total += 1
        met += min(cu) >= ms
        out += "| %s | %s | %s | %s | %.4f | %.4f | %.4f | %s |\n" % (
            x["N"], x["d"], "causal" if x["causal"] == "1" else "full", x["dtype"], ms, min(cu), max(cu),
            fmt("%.3f", min(cu) / ms))
    out += "\nStep 9 at cuDNN's fastest round or faster: %d of %d points.\n" % (met, total)
    return out + blk.caption(r, p)


def block_ch06_problem(blk):
    """Where chapter 05 stopped, from its committed run (ch05/: article.csv, tiles.csv, sweep.csv, peers.csv, each
    peer at its fastest round, and run.log's mma.sync ceiling): its last step at the article's size beside
    FlashAttention-2 and cuDNN, at Br = 64 too; the sweep's ranges; at the sweep's largest d and N, full mask, its
    TFLOP/s and cuDNN's in each storage type; the ceiling."""
    k, a, t, s, p = "flash_mma_async", "ch05/article.csv", "ch05/tiles.csv", "ch05/sweep.csv", "ch05/peers.csv"
    peer = blk.peers_fastest(p)
    art = dict(kernel=k, B=10, H=64, N=1024, d=64, dtype="fp16", causal=0)
    r = [x for x in blk.rows(a, **art) if x["br"] == "128"]
    if not r:
        raise BadInput("%s: no %s run at the article's size, Br = 128" % (blk.path(a), k))
    r = r[-1]
    ms, key = float(r["time_ms_median"]), ("10", "64", "1024", "64", "fp16", "0")
    fa2, cu = peer.get(key + ("sdpa_flash",)), peer.get(key + ("sdpa_cudnn",))
    r64 = [x for x in blk.rows(t, **art) if x["br"] == "64"]
    out = "From chapter 05's committed run (`results/NVIDIA_H200/ch05/`):\n\n"
    out += "- `%s` at the article's size, fp16, full mask: %s ms, %s TFLOP/s; FlashAttention-2 %s ms, cuDNN %s ms: " \
           "%sx FlashAttention-2, **%sx cuDNN** (`article.csv`, `peers.csv`)." % (
               k, fmt("%.3f", ms), fmt("%.1f", r["tflops"]), fmt("%.3f", fa2), fmt("%.3f", cu), blk.ratio(fa2, ms),
               blk.ratio(cu, ms))
    if r64:
        out += " At Br = 64, the tile this chapter starts from: %s ms, %s TFLOP/s (`tiles.csv`)." % (
            fmt("%.3f", r64[-1]["time_ms_median"]), fmt("%.1f", r64[-1]["tflops"]))
    out += "\n"
    runs = blk.rows(s, kernel=k)
    if runs:
        tf = [float(x["tflops"]) for x in runs]
        ratios = blk.peer_ratios(runs, peer, ("sdpa_flash", "sdpa_cudnn"))
        rf, rc = ratios["sdpa_flash"], ratios["sdpa_cudnn"]
        rng = lambda v: "%.2f-%.2f" % (min(v), max(v)) if v else "-"
        out += "- The 16k-token sweep (N = %s .. %s, d = 64 and 128, fp16 and bf16, full and causal): %s-%s TFLOP/s, " \
               "%sx FlashAttention-2, **%sx cuDNN** (`sweep.csv`, `peers.csv`)." % (
                   min((x["N"] for x in runs), key=int), max((x["N"] for x in runs), key=int), fmt("%.0f", min(tf)),
                   fmt("%.0f", max(tf)), rng(rf), rng(rc))
        big = max(runs, key=lambda x: (int(x["d"]), int(x["N"])))
        cells = []
        for dt in ("fp16", "bf16"):
            x = [y for y in runs if (y["N"], y["d"], y["dtype"], y["causal"]) == (big["N"], big["d"], dt, "0")]
            c = x and peer.get((x[0]["B"], x[0]["H"], x[0]["N"], x[0]["d"], dt, "0", "sdpa_cudnn"))
            if x and c:
                cells.append("%s TFLOP/s against cuDNN's %s (%s)" % (
                    fmt("%.0f", x[0]["tflops"]), fmt("%.0f", float(x[0]["flops"]) / (c * 1e9)), dt))
        if cells:
            out += " At N = %s, d = %s, full mask: %s." % (big["N"], big["d"], "; ".join(cells))
        out += "\n"
    ceiling = blk.mma_sync_ceiling("ch05/run.log")
    if ceiling and ceiling[1]:
        out += "- A loop of independent `mma.sync.m16n8k16` in every warp of a full grid: **%s TFLOP/s** " \
               "(`run.log`), %s%% of the datasheet's dense fp16 peak of 989 TFLOP/s.\n" % (fmt("%g", ceiling[0]),
                                                                                      ceiling[1])
    return out + blk.caption(a, t, s, p)
