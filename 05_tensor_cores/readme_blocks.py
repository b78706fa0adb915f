"""readme_blocks.py: the generated blocks of chapter 05's README (`make docs`): one function block_NAME(blk) per
<!-- MEASURED:NAME --> there, blk a common/scripts/booklib/blocks.py Blocks bound to a results folder (RESULTS,
results/NVIDIA_H200 by default), whose helpers read its files."""
from booklib.blocks import *  # noqa: F401,F403 (the helpers: booklib/blocks.py, __all__)


# chapter 05's kernels as its bench names them in article.csv (--kernel wmma, mma, mma_async), in the order shown
CH05_KERNELS = ("flash_wmma", "flash_mma", "flash_mma_async")

# chapter 05's eleven steps (--kernel wmma ... mma_async): kernel, file, the one idea of the step
CH05_STEPS = (
    ("flash_wmma", "1_wmma.cu", "both products through the WMMA API; S, P and O through shared memory"),
    ("flash_mma_staged", "2_mma_staged.cu", "`mma.sync` and `ldmatrix` by hand; S, P and O still through shared memory"),
    ("flash_repack", "3_repack.cu", "the softmax on the accumulators, P repacked as the A operand: S and P in registers"),
    ("flash_o_registers", "4_o_registers.cu", "O (and Q's fragments) in registers for the whole sweep"),
    ("flash_swizzle", "5_swizzle.cu", "rows swizzled instead of padded"),
    ("flash_mma_plain", "6_mma_plain.cu", "`ex2.approx`, the scale folded into one FFMA per score"),
    ("flash_unrolled_copy", "7_unrolled_copy.cu", "copy loops with trip counts known at compile time"),
    ("flash_edge_masks", "8_edge_masks.cu", "the masks only in the blocks that reach past N or across the diagonal"),
    ("flash_mma", "9_mma.cu", "ldmatrix addresses as one XOR per step (and a register fence)"),
    ("flash_cp_async", "10_cp_async.cu", "`cp.async` into two K/V buffers"),
    ("flash_mma_async", "kernels.cu", "32 query rows per warp: two m16 tiles (Br = 128)"))


def block_ch05_article(blk):
    """Chapter 05's kernels at the article's size beside PyTorch's SDPA backends of the same run: one row per
    kernel, storage type and mask, each kernel at the tiles it picks (the br, bc columns)."""
    a, p = "ch05/article.csv", "ch05/peers.csv"
    peer = blk.peers_fastest(p)
    out = "| kernel (B=10 H=64 N=1024 d=64) | dtype | mask | Br x Bc | ours ms | TFLOP/s | FA-2 ms | cuDNN ms " \
          "| mem-efficient ms | vs FA-2 | vs cuDNN |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    r3 = lambda x: "-" if x is None else fmt("%.3f", x)
    for k in CH05_KERNELS:
        for i, dt in enumerate(("fp16", "bf16")):
            for c in ("0", "1"):
                r = blk.rows(a, kernel=k, B=10, H=64, N=1024, d=64, dtype=dt, causal=c)
                if not r:
                    raise BadInput("%s: no run of %s at %s causal=%s" % (blk.path(a), k, dt, c))
                r = r[-1]
                o = float(r["time_ms_median"])
                s = ("10", "64", "1024", "64", dt, c)
                f, cu, eff = (peer.get(s + (x,)) for x in ("sdpa_flash", "sdpa_cudnn", "sdpa_efficient"))
                out += "|%s| %s | %s | %s | %.3f | %.1f | %s | %s | %s | %s | %s |\n" % (
                    " " if i or c == "1" else " %s " % k, dt, "causal" if c == "1" else "full",
                    r["br"] if r["bc"] == "" else "%s x %s" % (r["br"], r["bc"]), o, float(r["tflops"]),
                    r3(f), r3(cu), r3(eff), blk.ratio(f, o), blk.ratio(cu, o))
    return out + blk.caption(a, p)


def block_ch05_sweep(blk):
    """The 16k-token sweep (B = 16384/N, H = 16) of chapter 05's fastest kernel beside FlashAttention-2 and
    cuDNN of the same run: one row per N, d and storage type, full and causal side by side."""
    s, p, k = "ch05/sweep.csv", "ch05/peers.csv", "flash_mma_async"
    peer = blk.peers_fastest(p)
    out = "| N (%s) | B | d | dtype | full ms | TFLOP/s | vs FA-2 | vs cuDNN | causal ms | TFLOP/s | vs FA-2 " \
          "| vs cuDNN |\n|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n" % k
    runs, order = {}, []
    for r in blk.rows(s, kernel=k):
        key = (r["B"], r["H"], r["N"], r["d"], r["dtype"])
        runs[key + (r["causal"],)] = r
        if key not in order:
            order.append(key)
    if not order:
        raise BadInput("%s: no %s rows" % (blk.path(s), k))

    def cell(key, c):
        r = runs.get(key + (c,))
        if r is None:
            return " - | - | - | - |"
        o = float(r["time_ms_median"])
        return " %.3f | %.1f | %s | %s |" % (o, float(r["tflops"]), blk.ratio(peer.get(key + (c, "sdpa_flash")), o),
                                             blk.ratio(peer.get(key + (c, "sdpa_cudnn")), o))
    last = None
    for key in order:
        out += "|%s| %s | %s | %s |%s%s\n" % (" " if key[2] == last else " %s " % key[2], key[0], key[3], key[4],
                                             cell(key, "0"), cell(key, "1"))
        last = key[2]
    return out + blk.caption(s, p)


def block_ch05_steps(blk):
    """Chapter 05's steps at the article's size, fp16, from one run (steps.csv): each step's time beside the step
    before it (its time / this one's; beside the last step measured before it, named, where the step before has no
    row), the causal time, and what ncu saw in one full-mask launch of the step's kernel (ncu_tensor.csv,
    ncu_stalls.csv): the warp instructions executed, the tensor pipe's active cycles (% of peak) and the largest
    stall reason (warp cycles per issued instruction; "selected", the issuing itself, left out). A step with no row
    in steps.csv is said to be not yet measured; one with no ncu launch, '-'."""
    f, t, st, out, before = "ch05/steps.csv", "ch05/ncu_tensor.csv", "ch05/ncu_stalls.csv", "", None
    out += "| step | kernel | what it changes | fp16 ms | TFLOP/s | vs the step before | causal ms (fp16) " \
           "| instructions (ncu) | tensor pipe | largest stall |\n|---|---|---|---:|---:|---:|---:|---:|---:|---|\n"
    art = dict(B=10, H=64, N=1024, d=64, dtype="fp16")
    tensor = ncu(blk.path(t)) if os.path.isfile(blk.path(t)) else None
    stalls = ncu(blk.path(st)) if os.path.isfile(blk.path(st)) else None
    for i, (k, src, idea) in enumerate(CH05_STEPS, 1):
        ms = blk.pick(f, "time_ms_median", required=False, kernel=k, causal=0, **art)
        if ms is None:
            out += "| %d | `%s` (`%s`) | %s | not yet measured | - | - | - | - | - | - |\n" % (i, k, src, idea)
            continue
        ms = float(ms)
        vs = "-" if before is None else "%.2fx" % (before[1] / ms) + ("" if before[0] == i - 1 else
                                                                     " (vs step %d)" % before[0])
        fn = k + "_kernel"
        inst = tensor and tensor.value(fn, "smsp__inst_executed.sum", required=False)
        pipe = tensor and tensor.value(fn, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
                                       required=False)
        stall = "-"
        if stalls and fn in stalls.functions:
            r = [(stalls.value(fn, m), re.sub(r"^smsp__average_warps_issue_stalled_(.*)_per_issue_active\.ratio$",
                                               r"\1", m)) for m in stalls.metrics(fn)]
            v, name = max((v, n) for v, n in r if n != "selected")
            stall = "`%s` %.2f" % (name, v)
        out += "| %d | `%s` (`%s`) | %s | %s | %s | %s | %s | %s | %s | %s |\n" % (
            i, k, src, idea, fmt("%.3f", ms), fmt("%.1f", blk.pick(f, "tflops", kernel=k, causal=0, **art)), vs,
            fmt("%.3f", blk.pick(f, "time_ms_median", kernel=k, causal=1, **art)),
            "-" if not inst else "%.0f M" % (inst / 1e6), "-" if pipe is None else "%.1f%%" % pipe, stall)
        before = (i, ms)
    return out + blk.caption(*[x for x in (f, t, st) if os.path.isfile(blk.path(x))])


def block_ch05_tiles(blk):
    """mma_async's two tiles side by side, fp16: Br = 64 (step 10's machine code) and Br = 128 (the default) at the
    article's size (tiles.csv, article.csv) and at three sweep shapes (tiles_sweep.csv), full and causal, with
    Br = 128's speed-up over Br = 64 (the time at 64 / the time at 128)."""
    k, out = "flash_mma_async", "| shape (fp16) | mask | Br = 64 ms | Br = 128 ms | 128 vs 64 |\n|---|---|---:|---:|---:|\n"
    art = ("10", "64", "1024", "64")
    shapes = [art]
    for r in blk.rows("ch05/tiles_sweep.csv", kernel=k, dtype="fp16"):
        s = (r["B"], r["H"], r["N"], r["d"])
        if s not in shapes:
            shapes.append(s)
    for s in shapes:
        files = ("ch05/tiles.csv", "ch05/article.csv") if s == art else ("ch05/tiles_sweep.csv",) * 2
        for c in ("0", "1"):
            where = dict(kernel=k, B=s[0], H=s[1], N=s[2], d=s[3], dtype="fp16", causal=c)
            t64 = blk.pick(files[0], "time_ms_median", required=False, br=64, **where)
            t128 = blk.pick(files[1], "time_ms_median", required=False, br=128, **where)
            name = "B=%s H=%s N=%s d=%s%s" % (s + (" (article)" if s == art else "",))
            out += "|%s| %s | %s | %s | %s |\n" % (
                " %s " % name if c == "0" else " ", "causal" if c == "1" else "full", "-" if t64 is None else fmt("%.3f", t64),
                "-" if t128 is None else fmt("%.3f", t128),
                "-" if t64 is None or t128 is None else "%.2fx" % (float(t64) / float(t128)))
    return out + blk.caption("ch05/tiles.csv", "ch05/article.csv", "ch05/tiles_sweep.csv")


def block_ch05_verdict(blk):
    """The chapter's last step against PyTorch, read from the two tables above (article.csv and sweep.csv beside
    peers.csv, each peer at its fastest round): the range of each ratio (the peer's time / ours) over every point
    both ran, how many points ours is the faster at, how many of our runs were not checked (an empty rel_err:
    --no-check), and its TFLOP/s at the article's size and at the sweep's largest d and N beside the mma.sync
    ceiling the program measured (run.log)."""
    k, a, s, p = "flash_mma_async", "ch05/article.csv", "ch05/sweep.csv", "ch05/peers.csv"
    peer = blk.peers_fastest(p)
    runs = [r for r in blk.rows(a, kernel=k) if r["br"] == "128"] + blk.rows(s, kernel=k)
    if not runs:
        raise BadInput("%s, %s: no %s rows" % (blk.path(a), blk.path(s), k))
    ratios = blk.peer_ratios(runs, peer, ("sdpa_flash", "sdpa_efficient", "sdpa_cudnn"))
    rounds = {}
    for r in blk.rows(p):
        key = (r["peer"], r["B"], r["H"], r["N"], r["d"], r["dtype"], r["causal"])
        rounds[key] = rounds.get(key, 0) + 1
    n = max(rounds.values(), default=0)
    out = "- PyTorch timed in %d round%s (the most rows of one peer at one shape in `peers.csv`).\n" % (
        n, "" if n == 1 else "s")
    for name, label in (("sdpa_flash", "FlashAttention-2 (SDPA `flash`)"), ("sdpa_efficient", "the memory-efficient "
                                                                                              "backend"),
                        ("sdpa_cudnn", "cuDNN")):
        v = ratios[name]
        if not v:
            out += "- Against %s: no `%s` time in `peers.csv`.\n" % (label, name)
            continue
        out += "- Against %s: %s-%sx, ours the faster at %d of %d points.\n" % (
            label, "%.2f" % min(v), "%.2f" % max(v), sum(x > 1 for x in v), len(v))
    unchecked = [r for r in runs if r["rel_err"] == ""]
    out += "- Checked against the float64 reference: %d of the %d runs%s.\n" % (
        len(runs) - len(unchecked), len(runs), "" if not unchecked else " (the other %d, at N = %s, ran with "
        "`--no-check`)" % (len(unchecked), ", ".join(sorted({r["N"] for r in unchecked}, key=int))))
    ceiling = (blk.mma_sync_ceiling("ch05/run.log") or (None,))[0]
    art = [r for r in runs if (r["B"], r["H"], r["N"], r["d"], r["dtype"], r["causal"]) ==
           ("10", "64", "1024", "64", "fp16", "0")]
    big = max(blk.rows(s, kernel=k, dtype="fp16", causal=0), key=lambda r: (int(r["d"]), int(r["N"])), default=None)
    pct = lambda r: "" if not ceiling else " (%.0f%% of the mma.sync ceiling of `run.log`, %s TFLOP/s)" % (
        100 * float(r["tflops"]) / ceiling, fmt("%.0f", ceiling))
    if art:
        out += "- %s TFLOP/s at the article's size, fp16, full mask%s" % (fmt("%.1f", art[0]["tflops"]), pct(art[0]))
        out += (";" if big else ".") + "\n"
    if big:
        out += "  %s TFLOP/s at d = %s, N = %s, fp16, full mask%s.\n" % (fmt("%.1f", big["tflops"]), big["d"],
                                                                           big["N"], pct(big))
    return out + blk.caption(a, s, p)


def block_ch05_bytes(blk):
    """Every step's bytes at the article's size, fp16, full mask: the model, the instrumented build's count
    (article.csv) and what ncu saw in one launch (ncu.csv): the bytes the SMs requested (l1tex, cp.async's
    included) and DRAM's; a row per step and direction, DRAM / model last."""
    a, n = "ch05/article.csv", "ch05/ncu.csv"
    out = "| step | kernel | | model | counted | requested (ncu l1tex) | DRAM (ncu) | DRAM / model |\n" \
          "|---:|---|---|---:|---:|---:|---:|---:|\n"
    where = dict(B=10, H=64, N=1024, d=64, dtype="fp16", causal=0)
    for i, (k, _, _) in enumerate(CH05_STEPS, 1):
        r = [x for x in blk.rows(a, kernel=k, **where) if x["br"] == ("128" if k == "flash_mma_async" else "64")]
        if not r:
            out += "| %d | `%s` | | not yet measured | | | | |\n" % (i, k)
            continue
        for rw, model, counted, req, dram in blk.io_bytes(a, r[-1], n, k + "_kernel", required=False):
            out += "%s %s | %s | %s | %s | %s | %s |\n" % (
                "| %d | `%s` |" % (i, k) if rw == "read" else "| | |", rw, with_commas(model), with_commas(counted),
                "-" if req is None else with_commas(req), "-" if dram is None else with_commas(dram),
                "-" if dram is None else "%.4f" % (dram / model))
    return out + blk.caption(a, n)


def block_ch05_status(blk):
    """What the chapter's checks said on the GPU: the GPU tests (tests_gpu.log: Criterion's closing line) and
    compute-sanitizer's runs of every step (sanitizer_summary.txt: one line a tool, step and shape, ending in the
    tool's summary), each step named by its number; a missing file is said to be not yet run."""
    tests, san = "ch05/tests_gpu.log", "ch05/sanitizer_summary.txt"
    number = {k[len("flash_"):]: i for i, (k, _, _) in enumerate(CH05_STEPS, 1)}

    def label(args):
        k = args.split()[-1]
        if k not in number:
            raise BadInput("%s: a run of --kernel %s, which is no step of chapter 05" % (blk.path(san), k))
        return "step %d (`%s`)" % (number[k], k)
    out = blk.gpu_tests_line(tests) + blk.sanitizer_lines(san, label)
    files = [x for x in (tests, san) if os.path.isfile(blk.path(x))]
    return out + (blk.caption(*files) if files else "")
