"""readme_blocks.py: the generated blocks of chapter 01's README (`make docs`): one function block_NAME(blk) per
<!-- MEASURED:NAME --> there, blk a common/scripts/booklib/blocks.py Blocks bound to a results folder (RESULTS,
results/NVIDIA_H200 by default), whose helpers read its files."""
from booklib.blocks import *  # noqa: F401,F403 (the helpers: booklib/blocks.py, __all__)


def block_ch01_io_n1024(blk):
    return blk.profile_block("ch01/profile_n1024.csv")


def block_ch01_io_n65536(blk):
    return blk.profile_block("ch01/profile_n65536.csv")


def block_ch01_io_n1048576(blk):
    return blk.profile_block("ch01/profile_n1048576.csv")


def block_ch01_ratio(blk):
    """Chapter 01's time ratio 3-pass : online over N against the byte ratio 4 : 3, and the DRAM bytes per
    element where ncu measured them (profile_n<N>.csv); the article run (run.csv) under N = 1,024."""
    out = "| N | 3-pass ms | online ms | ratio | vs 4/3 | DRAM B/el, 3-pass : online | DRAM ratio |\n" \
          "|---|---|---|---|---|---|---|\n"
    for n in (1024, 4096, 16384, 65536, 262144, 1048576):
        f, p = "ch01/n%d.csv" % n, "ch01/profile_n%d.csv" % n
        rows = float(blk.pick(f, "rows", kernel="softmax_3pass"))
        t3 = float(blk.pick(f, "time_ms_median", kernel="softmax_3pass"))
        to = float(blk.pick(f, "time_ms_median", kernel="softmax_online"))
        r = t3 / to
        vs = "%.1f%%" % (100 * (r * 3 / 4 - 1))
        if os.path.isfile(blk.path(p)):
            el = n * rows
            a = sum(float(blk.pick(p, c, kernel="softmax_3pass")) for c in ("dram_read_bytes", "dram_write_bytes")) / el
            b = sum(float(blk.pick(p, c, kernel="softmax_online")) for c in ("dram_read_bytes", "dram_write_bytes")) / el
            dram = "%.3f : %.3f | %.3f" % (a, b, a / b)
        else:
            dram = "not measured |"
        out += "| %s | %.3f | %.3f | %.3f | %s | %s |\n" % (with_commas(n), t3, to, r, vs, dram)
        if n == 1024:
            t3 = float(blk.pick("ch01/run.csv", "time_ms_median", kernel="softmax_3pass"))
            to = float(blk.pick("ch01/run.csv", "time_ms_median", kernel="softmax_online"))
            r = t3 / to
            out += "| 1,024 (article run, ch01/run.log) | %.4f | %.4f | %.3f | %.1f%% | | |\n" % (
                t3, to, r, 100 * (r * 3 / 4 - 1))
    return out + blk.caption("ch01/n1024.csv", names="ch01/n{1024,4096,16384,65536,262144,1048576}.csv, "
                              "ch01/profile_n{1024,65536,1048576}.csv, ch01/run.csv")
