"""readme_blocks.py: the generated blocks of chapter 04's README (`make docs`): one function block_NAME(blk) per
<!-- MEASURED:NAME --> there, blk a common/scripts/booklib/blocks.py Blocks bound to a results folder (RESULTS,
results/NVIDIA_H200 by default), whose helpers read its files."""
from booklib.blocks import *  # noqa: F401,F403 (the helpers: booklib/blocks.py, __all__)


def block_ch04_tiles(blk):
    """Chapter 04's paired layout (the default) over tiles at the article's configuration."""
    t, lc, x = "ch04/tiles.csv", "ch04/layouts_causal.csv", "ch04/extra.csv"
    tiles = [(16, 16), (32, 32), (64, 32), (64, 64), (128, 32), (128, 64)]
    best = min(tiles, key=lambda b: (float(blk.pick(t, "time_ms_median", br=b[0], bc=b[1])), "%dx%d" % b))

    def row(label, col, form, causal=False):
        out = "| %s |" % label
        for br, bc in tiles:
            if not causal:
                v = blk.pick(t, col, False, br=br, bc=bc)
            elif (br, bc) == (32, 32):
                v = blk.pick(lc, col, False, kernel="flash_v4_paired", br=br, bc=bc)
            else:
                v = blk.pick(x, col, False, kernel="flash_v4_paired", H=64, N=1024, d=64, causal=1, br=br, bc=bc)
            v = fmt(form, v) if v else ""
            if v and (br, bc) == best:
                v = "**%s**" % v
            out += " %s |" % v if v else " |"
        return out + "\n"
    out = "| Br x Bc |" + "".join(" %d x %d |" % b for b in tiles) + "\n|---|" + "---:|" * len(tiles) + "\n"
    out += row("ms", "time_ms_median", "%.3f") + row("TFLOP/s", "tflops", "%.2f")
    out += row("causal ms", "time_ms_median", "%.3f", True)
    return out + blk.caption(t, lc, x)


def block_ch04_shapes(blk):
    """Chapter 04 over N and d beside chapter 03 and PyTorch. A cell: (file, where) of the run's time, or None;
    ours (the two paired columns) in bold where faster."""
    out = "| shape (B=10, fp32) | ch03 ms | paired 32 x 32 ms | paired 64 x 64 ms " \
          "| PyTorch SDPA memory-efficient ms | PyTorch 3-op ms |\n|---|---:|---:|---:|---:|---:|\n"
    e = "ch04/extra.csv:kernel=flash_v4_paired,br=64,bc=64,"
    p = "ch04/peers_64.csv:peer="
    rows = [
        ("H=64 N=1024 d=64", "ch04/ch03_sweep.csv:H=64", "ch04/sweep.csv:H=64", e + "H=64,d=64,causal=0", "H=64,causal=0"),
        ("same, causal", "ch03/causal.csv:H=64,N=1024", "ch04/causal.csv:H=64", e + "H=64,d=64,causal=1", "H=64,causal=1"),
        ("H=16 N=4096 d=64", "ch04/ch03_sweep.csv:H=16", "ch04/sweep.csv:H=16", e + "H=16,causal=0", "H=16,causal=0"),
        ("same, causal", None, "ch04/causal.csv:H=16", e + "H=16,causal=1", "H=16,causal=1"),
        ("H=4 N=16384 d=64", "ch04/ch03_sweep.csv:H=4", "ch04/sweep.csv:H=4", e + "H=4,causal=0", "H=4,causal=0"),
        ("same, causal", None, "ch04/causal.csv:H=4", e + "H=4,causal=1", "H=4,causal=1"),
        ("H=64 N=1024 d=32", None, "ch04/extra.csv:kernel=flash_v4_paired,br=32,d=32", e + "d=32", None),
        ("H=64 N=1024 d=128", None, "ch04/extra.csv:kernel=flash_v4_paired,br=32,d=128", e + "d=128", None)]

    def cell(spec):
        if spec is None:
            return ""
        f, w = spec.split(":", 1)
        v = blk.pick(f, "time_ms_median", False, **where_of(w))
        return fmt("%.3f", v) if v else ""
    for label, c3, p32, p64, peer in rows:
        c3, p32, p64 = cell(c3), cell(p32), cell(p64)
        eff = cell(p + "sdpa_efficient," + peer if peer else None)
        op3 = cell(p + "torch_3op," + peer if peer else None)
        if float(p64 or 0) < float(p32 or 0):
            p64 = "**%s**" % p64
        else:
            p32 = "**%s**" % p32
        out += "| %s |" % label + "".join(" %s |" % v if v else " |" for v in (c3, p32, p64, eff, op3)) + "\n"
    return out + blk.caption("ch04/ch03_sweep.csv", "ch03/causal.csv", "ch04/sweep.csv", "ch04/causal.csv",
                              "ch04/extra.csv", "ch04/peers_64.csv")


def block_ch04_stalls(blk):
    """Chapter 04's stall reasons per layout (cycles per issued instruction) and the units' use."""
    cols = [(l, "ch04/ncu_%s.csv" % l, "ch04/ncu_%s_stalls.csv" % l, "flash_v4_kernel")
            for l in ("naive", "padded", "swizzled", "transposed", "paired")]
    rows = [
        ("ncu", "smsp__average_warp_latency_per_inst_issued.ratio", "%.2f", "cycles between two instructions of a warp"),
        ("stalls", S + "short_scoreboard_per_issue_active.ratio", "%.2f", "short_scoreboard (waiting for shared memory)"),
        ("stalls", S + "mio_throttle_per_issue_active.ratio", "%.2f", "mio_throttle (the shared-memory queue full)"),
        ("stalls", S + "long_scoreboard_per_issue_active.ratio", "%.2f", "long_scoreboard (global memory, mostly L2)"),
        ("stalls", S + "selected_per_issue_active.ratio", "%.2f", "selected (issuing)"),
        ("stalls", S + "not_selected_per_issue_active.ratio", "%.2f", "not_selected (eligible, another warp issued)"),
        ("stalls", S + "dispatch_stall_per_issue_active.ratio", "%.2f", "dispatch_stall"),
        ("ncu", "l1tex__throughput.avg.pct_of_peak_sustained_active", "%.1f%%", "L1/shared-memory unit, % of peak"),
        ("ncu", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "%.1f%%", "FMA pipe, % of peak"),
        ("ncu", "sm__warps_active.avg.pct_of_peak_sustained_active", "%.1f%%", "achieved occupancy")]
    return blk.ncu_table(cols, rows) + blk.caption(
        "ch04/ncu_naive.csv", names="ch04/ncu_{naive,padded,swizzled,transposed,paired}{,_stalls}.csv")


def block_ch04_layouts(blk):
    """Chapter 04's five layouts at the article's configuration: time, causal time, shared-memory loads by
    ncu and the wavefronts the bank model predicts (banks.txt, ./ch04/run --model); the fastest in bold."""
    t, tc, b = "ch04/layouts.csv", "ch04/layouts_causal.csv", blk.path("ch04/banks.txt")
    layouts = ("naive", "transposed", "padded", "swizzled", "paired")
    ms = {l: float(blk.pick(t, "time_ms_median", kernel="flash_v4_" + l)) for l in layouts}
    best = min(layouts, key=lambda l: (ms[l], l))
    predicted = {}
    with open(b) as f:
        for line in f:
            w = line.split()
            if len(w) >= 3 and w[0] in layouts and w[0] not in predicted and re.match(r"^[0-9,]+$", w[1]):
                predicted[w[0]] = w[2]
    out = "| layout | ms | TFLOP/s | vs naive | causal ms | shared-load requests | wavefronts (ncu) | predicted " \
          "| conflicts / wavefronts | wavefronts / request |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    for l in layouts:
        n = "ch04/ncu_%s.csv" % l
        setup = fmt(" (+ %.3f setup)", blk.pick(t, "time_ms_median", kernel="k_transpose")) \
            if l == "transposed" else ""
        req, wf = blk.ncu(n, "flash_v4_kernel", RQ), blk.ncu(n, "flash_v4_kernel", LD)
        c = 100 * blk.ncu(n, "flash_v4_kernel", CF) / wf
        s = "**" if l == best else ""
        if l not in predicted:
            raise BadInput("%s: no line for the layout %s" % (b, l))
        out += ("| %s%s%s | %s%.3f%s%s | %s%.2f%s | %s%.2f%s | %s%.3f%s | %s | %s | %s | "
                + ("%.1f" if c >= 10 else "%.2f") + "%% | %.2f |\n") % (
            s, l, s, s, ms[l], setup, s, s, float(blk.pick(t, "tflops", kernel="flash_v4_" + l)), s,
            s, ms["naive"] / ms[l], s, s, float(blk.pick(tc, "time_ms_median", kernel="flash_v4_" + l)), s,
            with_commas(req), with_commas(wf), predicted[l], c, wf / req)
    return out + blk.caption(t, names="ch04/layouts{,_causal}.csv, "
                              "ch04/ncu_{naive,transposed,padded,swizzled,paired}.csv, ch04/banks.txt")
