"""readme_blocks.py: the generated blocks of chapter 02's README (`make docs`): one function block_NAME(blk) per
<!-- MEASURED:NAME --> there, blk a common/scripts/booklib/blocks.py Blocks bound to a results folder (RESULTS,
results/NVIDIA_H200 by default), whose helpers read its files."""
from booklib.blocks import *  # noqa: F401,F403 (the helpers: booklib/blocks.py, __all__)


def block_ch02_article_bytes(blk):
    return blk.bytes_table("", "ch02/run.csv", "flash_v1", "ch02/ncu_article.csv", "flash_v1_kernel", "%.4f")


def block_ch02_vs_ch00(blk):
    """Chapter 00's total against flash_v1 over N (B=10 H=64 d=64 fp32), times and model bytes."""
    out = "| N | ch00 ms | ch02 ms | ch00 / ch02 time | ch00 model GB | ch02 model GB | ch00 / ch02 bytes |\n" \
          "|---:|---:|---:|---:|---:|---:|---:|\n"
    for n in (512, 1024, 2048, 4096):
        a, b = "ch02/ch00_n%d.csv" % n, "ch02/n%d.csv" % n
        ta = float(blk.pick(a, "time_ms_median", kernel="total"))
        tb = float(blk.pick(b, "time_ms_median", kernel="flash_v1"))
        ga = (float(blk.pick(a, "model_read_bytes", kernel="total")) +
              float(blk.pick(a, "model_write_bytes", kernel="total"))) / 1e9
        gb = (float(blk.pick(b, "model_read_bytes", kernel="flash_v1")) +
              float(blk.pick(b, "model_write_bytes", kernel="flash_v1"))) / 1e9
        out += "| %s | %.3f | %.3f | %.2f | %.3f | %.3f | %.2f |\n" % (n, ta, tb, ta / tb, ga, gb, ga / gb)
    return out + blk.caption("ch02/ch00_n1024.csv", names="ch02/{ch00_n,n}{512,1024,2048,4096}.csv")


def block_ch02_vs_ch03(blk):
    """flash_v1 against flash_v2 over N at 655,360 tokens (chapter 03's bench); the article's N in bold."""
    v1, v2 = "ch03/ch02_sweep.csv", "ch03/sweep.csv"
    out = "| N | H | ch02 blocks | ch02 (v1) ms | ch03 (v2) ms | v1 / v2 | v1 model GB | v2 model GB |\n" \
          "|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    two = {r["N"]: r for r in blk.rows(v2, kernel="flash_v2")}
    for r in blk.rows(v1, kernel="flash_v1"):
        k, s = r["N"], "**" if float(r["N"]) == 1024 else ""
        if k not in two:
            raise BadInput("%s: no flash_v2 row at N=%s" % (blk.path(v2), k))
        q = two[k]
        t1, t2 = float(r["time_ms_median"]), float(q["time_ms_median"])
        g1 = (float(r["model_read_bytes"]) + float(r["model_write_bytes"])) / 1e9
        g2 = (float(q["model_read_bytes"]) + float(q["model_write_bytes"])) / 1e9
        cells = [k, r["H"], with_commas(float(r["B"]) * float(r["H"])), "%.3f" % t1, "%.3f" % t2,
                 "%.2f" % (t1 / t2), "%.3f" % g1, "%.3f" % g2]
        out += "|" + "".join(" %s%s%s |" % (s, c, s) for c in cells) + "\n"
    return out + blk.caption(v1, v2)


def block_ch02_ncu(blk):
    """flash_v1 beside flash_v2 (chapter 03) under ncu at the article's configuration."""
    cols = [("flash_v1 (this chapter)", "ch02/ncu_article.csv", "ch02/ncu_article_stalls.csv", "flash_v1_kernel"),
            ("flash_v2 (chapter 03)", "ch03/ncu.csv", "ch03/ncu_stalls.csv", "flash_v2_kernel")]
    rows = [
        ("ncu", "gpu__time_duration.sum", "ms", "time under ncu (ms)"),
        ("ncu", RQ, "commas", "shared-load requests"),
        ("ncu", LD, "commas", "shared-load wavefronts"),
        ("ncu", CF, "commas", "shared-load bank conflicts"),
        ("percent", CF + "/" + LD, "%.1f%%", "conflicts / wavefronts"),
        ("ratio", LD + "/" + RQ, "%.2f", "wavefronts / request"),
        ("ncu", "l1tex__throughput.avg.pct_of_peak_sustained_active", "%.1f%%", "L1/shared-memory unit, % of peak"),
        ("ncu", "sm__warps_active.avg.pct_of_peak_sustained_active", "%.1f%%",
         "achieved occupancy (warps active / 64)"),
        ("ncu", "sm__maximum_warps_per_active_cycle_pct", "%.1f%%", "theoretical occupancy"),
        ("ncu", "launch__registers_per_thread", "%s", "registers per thread"),
        ("ncu", "smsp__average_warp_latency_per_inst_issued.ratio", "%.2f", "cycles between two instructions of a warp"),
        ("stalls", S + "short_scoreboard_per_issue_active.ratio", "%.2f", "... stalled on shared memory (short_scoreboard)"),
        ("stalls", S + "long_scoreboard_per_issue_active.ratio", "%.2f", "... on global memory (long_scoreboard)"),
        ("stalls", S + "mio_throttle_per_issue_active.ratio", "%.2f", "... on the MIO queue (mio_throttle)"),
        ("stalls", S + "barrier_per_issue_active.ratio", "%.2f", "... at a barrier"),
        ("ncu", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "%.1f%%", "FMA pipe, % of peak"),
        ("ncu", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "%.1f%%", "DRAM throughput, % of peak")]
    return blk.ncu_table(cols, rows) + blk.caption(
        "ch02/ncu_article.csv", names="ch02/ncu_article{,_stalls}.csv, ch03/ncu{,_stalls}.csv")


def block_ch02_tiles(blk):
    """flash_v1 over every tile at the article's configuration (tile_<Br>x<Bc>.csv, and the lines the run
    printed in tile_<Br>x<Bc>.log); the default tile (32 x 32) in bold."""
    out = "| Br | Bc | ms | model GB | TFLOP/s | registers | blocks per SM x warps | waves of the 640 blocks |\n" \
          "|---:|---:|---:|---:|---:|---:|---|---:|\n"
    for br in (16, 32, 64, 128):
        for bc in (16, 32, 64):
            f = "ch02/tile_%dx%d.csv" % (br, bc)
            regs, occ, waves = blk.resources(blk.path(f[:-4] + ".log"))
            g = lambda c: float(blk.pick(f, c, kernel="flash_v1"))
            s = "**" if br == 32 and bc == 32 else ""
            cells = [str(br), str(bc), "%.3f" % g("time_ms_median"),
                     "%.3f" % ((g("model_read_bytes") + g("model_write_bytes")) / 1e9), "%.2f" % g("tflops")]
            out += "|" + "".join(" %s%s%s |" % (s, c, s) for c in cells) + " %s | %s | %s |\n" % (regs, occ, waves)
    return out + blk.caption("ch02/tile_32x32.csv", names="ch02/tile_{16,32,64,128}x{16,32,64}.csv")
