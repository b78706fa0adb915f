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
    peer = blk.peers(p)
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
    peer = blk.peers(p)
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
    row), and the causal time. A step with no row in steps.csv is said to be not yet measured."""
    f, out, before = "ch05/steps.csv", "", None
    out += "| step | kernel | what it changes | fp16 ms | TFLOP/s | vs the step before | causal ms (fp16) |\n" \
           "|---|---|---|---:|---:|---:|---:|\n"
    art = dict(B=10, H=64, N=1024, d=64, dtype="fp16")
    for i, (k, src, idea) in enumerate(CH05_STEPS, 1):
        ms = blk.pick(f, "time_ms_median", required=False, kernel=k, causal=0, **art)
        if ms is None:
            out += "| %d | `%s` (`%s`) | %s | not yet measured | - | - | - |\n" % (i, k, src, idea)
            continue
        ms = float(ms)
        vs = "-" if before is None else "%.2fx" % (before[1] / ms) + ("" if before[0] == i - 1 else
                                                                     " (vs step %d)" % before[0])
        out += "| %d | `%s` (`%s`) | %s | %s | %s | %s | %s |\n" % (
            i, k, src, idea, fmt("%.3f", ms), fmt("%.1f", blk.pick(f, "tflops", kernel=k, causal=0, **art)), vs,
            fmt("%.3f", blk.pick(f, "time_ms_median", kernel=k, causal=1, **art)))
        before = (i, ms)
    return out + blk.caption(f)
