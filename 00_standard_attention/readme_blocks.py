"""readme_blocks.py: the generated blocks of chapter 00's README (`make docs`): one function block_NAME(blk) per
<!-- MEASURED:NAME --> there, blk a common/scripts/booklib/blocks.py Blocks bound to a results folder (RESULTS,
results/NVIDIA_H200 by default), whose helpers read its files."""
from booklib.blocks import *  # noqa: F401,F403 (the helpers: booklib/blocks.py, __all__)


def block_ch00_h200_dram(blk):
    return blk.profile_block("ch00/profile.csv")


def ch00_table(blk, title, runs):
    """Chapter 00's runs, per kernel and the total (ms); runs: (label, file without .csv); a cuBLAS run's
    kernels are qk_cublas and pv_cublas."""
    out = "| %s | S = QK^T | softmax | O = PV | total |\n|---|---|---|---|---|\n" % title
    files = []
    for label, name in runs:
        f = "ch00/%s.csv" % name
        g = "cublas" if "cublas" in f else "gemm"
        out += "| %s | %s | %s | %s | **%s** |\n" % (label, blk.ms(f, "qk_" + g), blk.ms(f, "softmax"),
                                                    blk.ms(f, "pv_" + g), blk.ms(f, "total"))
        files.append(f)
    return out + blk.caption(*files)


def block_ch00_h200_article(blk):
    return ch00_table(blk, "B=10 H=64 N=1024 d=64", [
        ("fp32, own GEMMs", "article_fp32_own"), ("fp32, cuBLAS GEMMs", "article_fp32_cublas"),
        ("fp16, own GEMMs", "article_fp16_own"), ("fp16, cuBLAS GEMMs", "article_fp16_cublas")])


def block_ch00_h200_seed(blk):
    return ch00_table(blk, "B=1 H=32 N=4096 d=128 fp16", [
        ("own GEMMs", "seed_fp16_own"), ("cuBLAS GEMMs", "seed_fp16_cublas")])


def block_ch00_h200_n_sweep(blk):
    """Chapter 00 over N, fp32, own GEMMs: per kernel (ms), the growth of the total, each kernel's
    roofline_pct (the runs chapter 02's bench makes to compare with FlashAttention)."""
    files = ["ch02/ch00_n%d.csv" % n for n in (512, 1024, 2048, 4096)]
    out = "| N | S = QK^T ms | softmax ms | O = PV ms | total ms | total / previous N | softmax, % of copy " \
          "| GEMMs, % of FFMA peak |\n|---|---|---|---|---|---|---|---|\n"
    t, p, prev = {}, {}, None
    for f in files:
        blk.t(f).need("N", "kernel", "time_ms_median", "roofline_pct")
        for r in blk.t(f).rows:
            t[r["kernel"]], p[r["kernel"]] = float(r["time_ms_median"]), float(r["roofline_pct"] or 0)
            if r["kernel"] != "total":
                continue
            total = float(r["time_ms_median"])
            out += "| %d | %.3f | %.3f | %.3f | %.3f |%s| %.1f%% | %.1f%%, %.1f%% |\n" % (
                float(r["N"]), t["qk_gemm"], t["softmax"], t["pv_gemm"], total,
                " %.2fx " % (total / prev) if prev else " ", p["softmax"], p["qk_gemm"], p["pv_gemm"])
            prev = total
    return out + blk.caption(*files, names="ch02/ch00_n{512,1024,2048,4096}.csv")


def block_ch00_h200_targets(blk):
    """Chapter 00's speed targets: the softmax against the copy bandwidth measured in the same run
    (roofline_pct), our GEMMs against cuBLAS's (TFLOP/s, same shape), the cuBLAS pipeline against PyTorch's
    three ops (7.12 ms, ARTICLES.md)."""
    def sm(run):
        return fmt("%.1f", blk.pick("ch00/%s.csv" % run, "roofline_pct", kernel="softmax"))

    def gemms(run):
        own, cub = "ch00/%s_own.csv" % run, "ch00/%s_cublas.csv" % run
        a, b = float(blk.pick(own, "tflops", kernel="qk_gemm")), float(blk.pick(cub, "tflops", kernel="qk_cublas"))
        p, q = float(blk.pick(own, "tflops", kernel="pv_gemm")), float(blk.pick(cub, "tflops", kernel="pv_cublas"))
        return "`qk_gemm` %.1f%%, `pv_gemm` %.1f%% | %s" % (
            100 * a / b, 100 * p / q, "met" if a / b >= 0.5 and p / q >= 0.5 else "**missed**")
    s32, s16 = sm("article_fp32_own"), sm("article_fp16_own")
    t = float(blk.pick("ch00/article_fp32_cublas.csv", "time_ms_median", kernel="total"))
    out = "| target | measured | |\n|---|---|---|\n"
    out += "| softmax >= 80%% of copy bandwidth, article config | %s%% (fp32), %s%% (fp16) | %s |\n" % (
        s32, s16, "met" if float(s32) >= 80 and float(s16) >= 80 else "**missed**")
    out += "| own GEMMs >= 50%% of cuBLAS, fp32 (article) | %s |\n" % gemms("article_fp32")
    out += "| own GEMMs >= 50%% of cuBLAS, fp16 (article) | %s |\n" % gemms("article_fp16")
    out += "| own GEMMs >= 50%% of cuBLAS, fp16 (article 2's shape, `seed_fp16`) | %s |\n" % gemms("seed_fp16")
    out += "| cuBLAS pipeline, fp32 article, <= 1.2x PyTorch (7.12 ms) | %.3f ms = %.2fx | %s |\n" % (
        t, t / 7.12, "met" if t / 7.12 <= 1.2 else "**missed**")
    return out + blk.caption("ch00/article_fp32_own.csv",
                              names="ch00/{article_fp32,article_fp16,seed_fp16}_{own,cublas}.csv")
