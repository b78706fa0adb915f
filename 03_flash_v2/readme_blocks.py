"""readme_blocks.py: the generated blocks of chapter 03's README (`make docs`): one function block_NAME(blk) per
<!-- MEASURED:NAME --> there, blk a common/scripts/booklib/blocks.py Blocks bound to a results folder (RESULTS,
results/NVIDIA_H200 by default), whose helpers read its files."""
from booklib.blocks import *  # noqa: F401,F403 (the helpers: booklib/blocks.py, __all__)


def block_ch03_bytes(blk):
    return blk.bytes_table("bytes", "ch03/run.csv", "flash_v2", "ch03/ncu.csv", "flash_v2_kernel", "%.2g", True)


def block_ch03_sweep(blk):
    """Chapter 03 over N at 655,360 tokens beside chapter 02 and its own causal runs; the largest ch02 / ch03
    in bold. The last column is arithmetic: (Tr + 1) / (2 Tr) of the K/V blocks, Tr = N / 32."""
    v2, v1, vc = "ch03/sweep.csv", "ch03/ch02_sweep.csv", "ch03/causal.csv"
    out = "| N | H | ch02 blocks | ch03 ms | ch03 TFLOP/s | ch02 ms | ch02 TFLOP/s | ch02 / ch03 | causal ms " \
          "| causal / full | K/V blocks visited, causal / full |\n" \
          "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    two = blk.rows(v2, kernel="flash_v2")
    one = {r["N"]: r for r in blk.rows(v1, kernel="flash_v1")}
    cau = {r["N"]: r for r in blk.rows(vc, kernel="flash_v2")}
    for r in two:
        if r["N"] not in one or r["N"] not in cau:
            raise BadInput("%s or %s: no row at N=%s" % (blk.path(v1), blk.path(vc), r["N"]))
    ratio = lambda r: float(one[r["N"]]["time_ms_median"]) / float(r["time_ms_median"])
    most = max([ratio(r) for r in two] + [0])
    for r in two:
        k, t2, t1 = r["N"], float(r["time_ms_median"]), float(one[r["N"]]["time_ms_median"])
        tc, tr = float(cau[k]["time_ms_median"]), float(k) / 32
        out += "| %s | %s | %s | %.3f | %.2f | %.3f | %.2f | %s | %.3f | %.2f | %.3f |\n" % (
            k, r["H"], with_commas(float(r["B"]) * float(r["H"])), t2, float(r["tflops"]), t1,
            float(one[k]["tflops"]), ("**%.2f**" if ratio(r) == most else "%.2f") % ratio(r), tc, tc / t2,
            (tr + 1) / (2 * tr))
    return out + blk.caption(v2, v1, vc)


def block_ch03_tiles(blk):
    """Chapter 03 over tiles at the article's configuration; registers and occupancy from the lines each run
    printed (runs.log); the default tile (32 x 32) in bold."""
    t, log = "ch03/tiles.csv", "ch03/runs.log"
    out = "| Br | Bc | ms | TFLOP/s | registers | theoretical occupancy |\n|---:|---:|---:|---:|---:|---:|\n"
    regs = occ = None
    res = {}
    with open(blk.path(log)) as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r".*: ([0-9]*) registers per thread", line)
            if m:
                regs = m.group(1)
            m = re.match(r".*occupancy: ([0-9]*) blocks per SM x ([0-9]*) warps = .*\(([0-9.]*%)\)", line)
            if m:
                occ = "%s x %s%s%s" % (m.group(1), m.group(2), " warp, " if m.group(2) == "1" else " warps, ",
                                       m.group(3))
            m = re.match(r"^chapter 03 on .*: B=10 H=64 N=1024 d=64 fp32 Br=([0-9]*) Bc=([0-9]*)$", line)
            if m:
                res.setdefault(m.group(1) + "x" + m.group(2), (regs, occ))
    for r in blk.rows(t, kernel="flash_v2"):
        tile = r["br"] + "x" + r["bc"]
        if tile not in res:
            raise BadInput("%s: no run at Br=%s Bc=%s" % (blk.path(log), r["br"], r["bc"]))
        s = "**" if tile == "32x32" else ""
        cells = [r["br"], r["bc"], "%.3f" % float(r["time_ms_median"]), "%.2f" % float(r["tflops"])]
        out += "|" + "".join(" %s%s%s |" % (s, c, s) for c in cells) + " %s | %s |\n" % res[tile]
    return out + blk.caption(t, log)


def block_ch03_ncu(blk):
    """flash_v2 under ncu at the article's configuration: the headline metrics, then the eight largest stall
    reasons with their share of the cycles between two instructions of a warp."""
    n, st, k = "ch03/ncu.csv", "ch03/ncu_stalls.csv", "flash_v2_kernel"
    lat = blk.ncu(n, k, "smsp__average_warp_latency_per_inst_issued.ratio")
    mio = blk.ncu(st, k, S + "mio_throttle_per_issue_active.ratio")
    pct = lambda f, m: fmt(f, blk.ncu(n, k, m))
    out = "| metric | value |\n|---|---:|\n"
    out += "| kernel time under ncu | %.3f ms |\n" % (blk.ncu(n, k, "gpu__time_duration.sum") / 1e6)
    out += "| achieved occupancy (`sm__warps_active.avg.pct_of_peak_sustained_active`) | %s%% (theoretical %s%%) |\n" % (
        pct("%.2f", "sm__warps_active.avg.pct_of_peak_sustained_active"),
        pct("%.1f", "sm__maximum_warps_per_active_cycle_pct"))
    out += "| L1/shared-memory unit, %% of peak (`l1tex__throughput`) | %s%% |\n" % pct(
        "%.1f", "l1tex__throughput.avg.pct_of_peak_sustained_active")
    out += "| FMA pipe, %% of peak (`sm__pipe_fma_cycles_active`) | %s%% |\n" % pct(
        "%.1f", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active")
    out += "| warp latency per issued instruction | %.2f cycles |\n" % lat
    out += "| MIO throttle | %.2f cycles, %.1f%% of the %.2f |\n\n" % (mio, float(shown(100 * mio / lat)), lat)
    out += "| stall reason (cycles per issued instruction) | cycles | share of %.2f |\n|---|---:|---:|\n" % lat
    stalls = []
    for m in ncu(blk.path(st)).metrics(k):
        name = re.match(r"^%s(.*)_per_issue_active.ratio$" % S, m)
        if name:
            stalls.append((ncu(blk.path(st)).value(k, m), name.group(1)))
    for v, name in sorted(stalls, reverse=True)[:8]:
        out += "| %s | %.2f | %.1f%% |\n" % (name, v, 100 * v / lat)
    return out + blk.caption(n, st)


def block_ch03_bank_conflicts(blk):
    """The shared loads of flash_v2 and flash_v1 under ncu (the same launches as the tables above)."""
    out = "| kernel | requests | wavefronts | bank conflicts | conflicts / wavefronts | wavefronts / request |\n" \
          "|---|---:|---:|---:|---:|---:|\n"
    for f, k, label in (("ch03/ncu.csv", "flash_v2_kernel", "flash_v2 (this chapter), " + blk.short_gpu("ch03/run.csv")),
                        ("ch02/ncu_article.csv", "flash_v1_kernel",
                         "flash_v1 (chapter 02, the same tile code), " + blk.short_gpu("ch02/run.csv"))):
        q, w, c = blk.ncu(f, k, RQ), blk.ncu(f, k, LD), blk.ncu(f, k, CF)
        ldsm = blk.ncu(f, k, LDSM, required=False)
        out += "| %s | %s (+ %s ldsm) | %s | %s | %.2f%% | %.2f |\n" % (
            label, with_commas(q), "" if ldsm is None else shown(ldsm), with_commas(w), with_commas(c),
            100 * c / w, w / q)
    return out + blk.caption("ch03/ncu.csv", "ch02/ncu_article.csv")


def block_ch03_v1_v2(blk):
    """flash_v1 (chapter 02) and flash_v2 at the article's configuration, from the runs of make reproduce."""
    v1, v2 = "ch02/run.csv", "ch03/run.csv"
    a = [float(blk.pick(v1, c, kernel="flash_v1")) for c in ("time_ms_median", "tflops")]
    b = [float(blk.pick(v2, c, kernel="flash_v2")) for c in ("time_ms_median", "tflops")]
    out = "| | v1 (chapter 02) | v2 (this chapter) | v1 time / v2 time |\n|---|---:|---:|---:|\n"
    out += "| this book, %s, CUDA C fp32 | %.4f ms, %.2f TFLOP/s | %.4f ms, %.2f TFLOP/s | **%.2f** |\n" % (
        blk.short_gpu(v2), a[0], a[1], b[0], b[1], a[0] / b[0])
    return out + blk.caption(v1, v2)


def block_ch03_long(blk):
    """Chapter 03 at N = 65536 (long.csv), full and causal; ok: the relative error within the programs'
    tolerance, 1e-5 x max(1, sqrt(N / 1024)) (attn_tolerance in common/)."""
    f = "ch03/long.csv"
    out = ""
    for i, r in enumerate(blk.rows(f, kernel="flash_v2")):
        n, err = float(r["N"]), float(r["rel_err"])
        tol = 1e-5 * (math.sqrt(n / 1024) if n > 1024 else 1)
        if i == 0:
            out += "| run | ms | TFLOP/s | rel err (tolerance %s) |\n|---|---:|---:|---:|\n" % (
                ("%.0e" % tol).replace("e-0", "e-"))
        out += "| chapter 03%s | %.3f | %.2f | %.3e, %s |\n" % (
            ", causal" if r["causal"] == "1" else "", float(r["time_ms_median"]), float(r["tflops"]), err,
            "ok" if err <= tol else "FAILED")
    return out + blk.caption(f)
