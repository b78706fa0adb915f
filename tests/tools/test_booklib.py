"""Unit tests of the book's Python tooling (common/scripts/booklib), Python's unittest: the numbers as the tables
print them, and the results files as the blocks read them (a program's CSV, Nsight Compute's CSV). Run by
tests/tools/check.sh, which reports them to `make test` as a Criterion binary does."""
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "scripts"))

from booklib.results import BadInput, Ncu, Table, fastest_rounds, fmt, shown, with_commas  # noqa: E402


def ch06_steps(text):
    """The kernels of chapter 06's CH06_KERNELS, in order, from its readme_blocks.py's text."""
    m = re.search(r"^CH06_KERNELS = \(([^)]*)\)", text, re.M)
    return re.findall(r'"(flash_\w+)"', m.group(1)) if m else []


class Numbers(unittest.TestCase):
    def test_a_last_five_rounds_away_from_zero_as_written(self):
        # 0.5075 and 2.675 are stored a little below their decimal text; the book rounds the text
        self.assertEqual(fmt("%.3f", 0.5075), "0.508")
        self.assertEqual(fmt("%.2f", 2.675), "2.68")
        self.assertEqual(fmt("%.3f", -0.5075), "-0.508")
        self.assertEqual(fmt("%.0f", 2.5), "3")
        self.assertEqual(fmt("%.0f", -2.5), "-3")

    def test_other_values_round_to_nearest(self):
        self.assertEqual(fmt("%.3f", 0.50749), "0.507")
        self.assertEqual(fmt("%.1f", 865.09), "865.1")
        self.assertEqual(fmt("%.2f", "1.0049"), "1.00")

    def test_the_format_around_the_number_is_kept(self):
        self.assertEqual(fmt("%.1f%%", 66.25), "66.3%")
        self.assertEqual(fmt(" (+ %.3f setup)", 0.0125), " (+ 0.013 setup)")
        self.assertEqual(fmt("%s", 3.0), "3")
        self.assertEqual(fmt("%s", 0.1234567), "0.123457")
        self.assertEqual(fmt("%d", 7.9), "7")

    def test_shown_and_commas(self):
        self.assertEqual(shown(42.0), "42")
        self.assertEqual(shown(2.5), "2.5")
        self.assertEqual(with_commas(11240734720), "11,240,734,720")
        self.assertEqual(with_commas(-1234567), "-1,234,567")
        self.assertEqual(with_commas(999), "999")


class InFolder(unittest.TestCase):
    """A test with a folder of its own for the files it writes."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path


class Files(InFolder):
    def test_a_table_picks_rows_by_their_columns_as_text(self):
        t = Table(self.write("run.csv", "kernel,N,time_ms_median\nflash_a,1024,0.5\nflash_b,1024,0.25\n"))
        self.assertEqual(t.pick("time_ms_median", kernel="flash_b", N=1024), "0.25")
        self.assertEqual(len(t.select(N="1024")), 2)
        self.assertIsNone(t.pick("time_ms_median", required=False, kernel="flash_c"))
        with self.assertRaises(BadInput):
            t.pick("time_ms_median", kernel="flash_c")
        with self.assertRaises(BadInput):
            t.pick("no_such_column", kernel="flash_a")

    def test_a_peer_timed_in_rounds_is_taken_at_its_fastest(self):
        # numbers, not text: 10.5 is slower than 9.75 (as text it sorts first); each key on its own
        t = Table(self.write("peers.csv", "peer,N,time_ms_median\nflash,1024,9.75\ncudnn,1024,4.0\n"
                                          "flash,1024,10.5\nflash,2048,30\ncudnn,1024,3.5\nflash,1024,9.9\n"))
        best = fastest_rounds(t.rows, lambda r: (r["peer"], r["N"]))
        self.assertEqual({k: r["time_ms_median"] for k, r in best.items()},
                         {("flash", "1024"): "9.75", ("cudnn", "1024"): "3.5", ("flash", "2048"): "30"})

    def test_an_empty_or_missing_table_is_bad_input(self):
        with self.assertRaises(BadInput):
            Table(self.write("empty.csv", ""))
        with self.assertRaises(BadInput):
            Table(os.path.join(self.dir.name, "absent.csv"))

    def test_ncu_values_by_kernel_and_metric_with_thousands_separators(self):
        header = '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
        path = self.write("ncu.csv", "==PROF== Connected\n" + header +
                          '"0","void flash_x_kernel<64>(int)","dram__bytes_read.sum","byte","4,628,736"\n'
                          '"0","void flash_x_kernel<64>(int)","gpu__time_duration.sum","nsecond","3574000"\n')
        n = Ncu(path)
        self.assertEqual(n.value("flash_x_kernel", "dram__bytes_read.sum"), 4628736)
        self.assertEqual(n.value("flash_x_kernel", "gpu__time_duration.sum"), 3574000)
        self.assertIsNone(n.value("flash_x_kernel", "sm__throughput.avg", required=False))
        with self.assertRaises(BadInput):
            n.value("flash_y_kernel", "dram__bytes_read.sum")


class Commands(InFolder):
    """book.py's commands as the bench scripts call them (common/scripts/bench-lib.sh): output on stdout, bad
    input exit 2 with a message."""

    BOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "scripts", "book.py")

    def book(self, *args):
        import subprocess
        p = subprocess.run([sys.executable, self.BOOK] + list(args), capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    def test_csv_rows_selects_and_joins(self):
        path = self.write("s.csv", "kernel,d,causal,time_ms_median\nflash_a,64,0,0.5\nflash_a,64,1,0.3\n"
                                   "flash_b,128,0,0.9\n")
        rc, out, _ = self.book("csv-rows", path, "kernel,time_ms_median", "d=64")
        self.assertEqual((rc, out), (0, "flash_a|0.5\nflash_a|0.3\n"))
        rc, out, _ = self.book("csv-rows", path, "kernel,no_such", "causal=0")
        self.assertEqual((rc, out), (0, "flash_a|\nflash_b|\n"), "a column the file lacks is empty")
        rc, out, _ = self.book("csv-rows", path, "kernel", "no_such=1")
        self.assertEqual((rc, out), (0, ""), "a condition on a missing column matches no row")

    def test_ncu_value_one_metric_or_all(self):
        path = self.write("ncu.csv", '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
                                     '"0","void flash_x_kernel<64>(int)","dram__bytes_read.sum","byte","1,024"\n')
        self.assertEqual(self.book("ncu-value", path, "flash_x_kernel", "dram__bytes_read.sum")[:2], (0, "1024\n"))
        self.assertEqual(self.book("ncu-value", path, "flash_x_kernel")[:2], (0, "dram__bytes_read.sum|byte|1024\n"))
        self.assertEqual(self.book("ncu-value", path, "flash_x_kernel", "sm__absent.sum")[:2], (0, ""))

    def test_ncu_summary_names_the_run_it_describes(self):
        run = self.write("run.csv", "kernel,B,H,N,d,dtype,causal,model_read_bytes,counted_read_bytes,"
                                    "model_write_bytes,counted_write_bytes\n"
                                    "flash_x,1,16,16384,128,bf16,0,2048,2048,512,512\n")
        ncu_csv = self.write("ncu.csv", '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
                                        '"0","void flash_x_kernel<64>(int)","gpu__time_duration.sum","nsecond","3,574,000"\n'
                                        '"0","void flash_x_kernel<64>(int)","dram__bytes_read.sum","byte","1,024"\n')
        rc, out, err = self.book("ncu-summary", run, "flash_x", ncu_csv, os.path.join(self.dir.name, "none.csv"),
                                 "flash_x_kernel")
        self.assertEqual(rc, 0, err)
        self.assertTrue(out.startswith("ncu, B=1 H=16 N=16384 d=128 bf16, flash_x_kernel, one launch"), out)
        self.assertIn("kernel time 3.574 ms", out)
        # read: model 2,048, counted 2,048, no l1tex metric, DRAM 1,024: half the model
        self.assertRegex(out, r"read +2,048 +2,048 +- +1,024 +- +0\.5000")

    def test_profile_join_gives_each_row_its_kernels_dram_bytes(self):
        # two report rows whose names are prefixes of each other's functions (flash_bwd, flash_bwd_d): each function
        # goes to the longest row name it starts with; the total sums the kernels' DRAM bytes
        rep = self.write("run.csv", "chapter,kernel,model_read_bytes,model_write_bytes,counted_read_bytes,"
                                    "counted_write_bytes,setup\n"
                                    "07,flash_bwd_d,200,100,200,100,0\n07,flash_bwd,1000,400,1000,400,0\n"
                                    "07,total,1200,500,1200,500,0\n")
        ncu_csv = self.write("ncu.csv", '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
                                        '"0","void flash_bwd_d_kernel<64>(int)","dram__bytes_read.sum","byte","150"\n'
                                        '"0","void flash_bwd_d_kernel<64>(int)","dram__bytes_write.sum","byte","100"\n'
                                        '"1","void flash_bwd_kernel<64, 32, 32>(int)","dram__bytes_read.sum","byte","1,500"\n'
                                        '"1","void flash_bwd_kernel<64, 32, 32>(int)","dram__bytes_write.sum","byte","400"\n')
        rc, out, err = self.book("profile-join", rep, ncu_csv)
        self.assertEqual(rc, 0, err)
        rows = [line.split(",") for line in out.strip().split("\n")]
        self.assertEqual(rows[0][:4], ["chapter", "kernel", "ncu_kernels", "launches"])
        by = {r[1]: r for r in rows[1:]}
        self.assertEqual(by["flash_bwd_d"][2:4], ["flash_bwd_d_kernel", "1"])
        self.assertEqual(by["flash_bwd"][2:4], ["flash_bwd_kernel", "1"])
        self.assertEqual(by["flash_bwd"][6:8], ["1500", "1.5000"], "DRAM read and its ratio to the model")
        self.assertEqual(by["total"][6], "1650", "the total: the kernels' DRAM reads summed")

    def test_profile_join_reads_the_chapters_kernels_txt(self):
        # chapter 07's rows as its report writes them: the forward (a setup row) runs fwd_flash_v2_kernel, a name
        # no row is a prefix of, and the total row is labelled backward; ncu prints bare function names
        # (--kernel-name-base function). kernels.txt names each row's kernels, and backward's regex names them all
        rep = self.write("run.csv", "chapter,kernel,model_read_bytes,model_write_bytes,counted_read_bytes,"
                                    "counted_write_bytes,setup\n"
                                    "07,forward,500,50,500,50,1\n07,tc_bwd_d,200,100,200,100,0\n"
                                    "07,tc_bwd,1000,400,1000,400,0\n07,backward,1200,500,1200,500,0\n")
        rows = "".join('"%d","%s","dram__bytes_%s.sum","byte","%s"\n' % (i, f, rw, v) for i, f, rw, v in (
            (0, "fill_kernel", "read", "0"), (0, "fill_kernel", "write", "64"),
            (1, "fwd_flash_v2_kernel", "read", "600"), (1, "fwd_flash_v2_kernel", "write", "50"),
            (2, "tc_bwd_d_kernel", "read", "150"), (2, "tc_bwd_d_kernel", "write", "100"),
            (3, "tc_bwd_kernel", "read", "1,500"), (3, "tc_bwd_kernel", "write", "400")))
        ncu_csv = self.write("ncu.csv", '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n' + rows)
        rc, out, err = self.book("profile-join", rep, ncu_csv)
        self.assertEqual(rc, 0, err)
        by = {r[1]: r for r in (line.split(",") for line in out.strip().split("\n")[1:])}
        self.assertEqual(by["forward"][2:4], ["fwd_flash_v2_kernel", "1"])
        self.assertEqual(by["forward"][6], "600")
        self.assertEqual(by["tc_bwd_d"][2], "tc_bwd_d_kernel")
        self.assertEqual(by["tc_bwd"][2], "tc_bwd_kernel", "tc_bwd's regex, not backward's, owns it")
        self.assertEqual(by["backward"][2:4], ["tc_bwd_d_kernel + tc_bwd_kernel", "2"])
        self.assertEqual((by["backward"][6], by["backward"][10]), ("1650", "500"), "backward: its kernels summed")
        self.assertEqual(by["other:fill_kernel"][6], "0", "a helper no row names stays other")
        self.assertNotIn("total", by)

    def test_summary_prints_the_total_row_else_every_row(self):
        both = self.write("t.csv", "kernel,time_ms_median,tflops,gbs_model,rel_err,setup\n"
                                   "qk,1.0,5,100,,0\ntotal,3.0,2,50,1e-06,0\n")
        rc, out, _ = self.book("summary", "00", both)
        self.assertEqual(rc, 0)
        self.assertEqual(out.count("\n"), 1, out)
        self.assertRegex(out, r"^  ch00 total +3\.0 ms +2 TFLOP/s +50 GB/s\(model\) +rel_err 1e-06$")
        rows = self.write("r.csv", "kernel,time_ms_median,tflops,gbs_model,rel_err,setup\n"
                                   "forward,0.5,9,,,1\nflash_bwd,2.0,7,80,2e-06,0\n")
        rc, out, _ = self.book("summary", "07", rows)
        lines = out.strip().split("\n")
        self.assertEqual(len(lines), 2, out)
        self.assertTrue(lines[0].endswith("(setup)") and "- GB/s(model)" in lines[0], lines[0])
        self.assertIn("ch07 flash_bwd", lines[1])

    def test_ncu_sass_sums_the_reasons_and_lists_the_busiest_instructions(self):
        # ncu's SASS source page: the kernel's line, the header, one row per instruction (absolute addresses; the
        # "(Not Issued)" columns are a subset of the samples and not counted again)
        hdr = ('"Address","Source","Warp Stall Sampling (All Samples)","stall_barrier","stall_long_sb",'
               '"stall_selected","stall_barrier (Not Issued)"\n')
        rows = ['"0x7f0000001000","  HGMMA.64x64x16.F32.BF16 R152, gdesc[UR8], RZ","10","0","0","10","0"',
                '"0x7f0000001010","  @P0   BRA 0x7f0000001000","60","0","55","5","0"',
                '"0x7f0000001020","  BAR.SYNC.DEFER_BLOCKING 0x0","30","27","0","3","27"',
                '"0x7f0000001030","  EXIT","0","0","0","0","0"']
        path = self.write("src.csv", '"Kernel Name","void k<64>(int)",\n' + hdr + "\n".join(rows) + "\n")
        rc, out, err = self.book("ncu-sass", path, "2")
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        self.assertEqual(lines[0], "ncu source counters of void k<64>(int): 100 warp-state samples over 4 instructions")
        self.assertEqual(lines[1], "by reason (share of all samples): long_sb 55.0%, barrier 27.0%, selected 18.0%")
        # the two busiest, in program order, at their offset in the kernel; the branch's target rewritten the same way
        self.assertRegex(lines[4], r"^  0010  60\.0%  @P0 +BRA 0000 +long_sb 55$")
        self.assertRegex(lines[5], r"^  0020  30\.0%  BAR\.SYNC\.DEFER_BLOCKING 0x0 +barrier 27$")
        self.assertEqual(len(lines), 6)
        rc, _, err = self.book("ncu-sass", self.write("bad.csv", '"Kernel Name","k",\n"ID","Metric Name"\n'))
        self.assertEqual(rc, 2)
        self.assertIn("no header row", err)
        rc, _, err = self.book("ncu-sass", self.write("short.csv", hdr + '"0x10","EXIT","1"\n'))
        self.assertEqual(rc, 2)
        self.assertIn("a row of 3 fields", err)

    def test_bad_input_exits_2_with_a_message(self):
        rc, _, err = self.book("csv-rows", os.path.join(self.dir.name, "absent.csv"), "kernel")
        self.assertEqual(rc, 2)
        self.assertIn("absent.csv", err)
        rc, _, err = self.book("ncu-value")
        self.assertEqual(rc, 2)
        self.assertIn("usage", err)


class Assignment(InFolder):
    """make assignment's copy of a chapter (booklib/assignment.py)."""

    def test_a_file_no_chosen_assignment_changes_keeps_its_time(self):
        from booklib import assignment
        root = self.dir.name
        for folder in ("98_demo", "common", "tests/ch98"):
            os.makedirs(os.path.join(root, folder))
        for f in ("Makefile", "README.md", "LICENSE", ".gitignore", "98_demo/kernels.cu"):
            self.write(f, "")
        block = ("int {0}(void) {{\n/* ASSIGNMENT BEGIN {0} [cpu]: x */\n/* ASSIGNMENT STUB {0}\n"
                 "    return 0;\n*/\n    return 1;\n/* ASSIGNMENT END {0} */\n}}\n")
        a, b = self.write("98_demo/a.c", block.format("a")), self.write("98_demo/b.c", block.format("b"))
        for f in (a, b):
            os.utime(f, (1e9, 1e9))
        here = os.getcwd()
        os.chdir(root)
        try:
            with open(os.devnull, "w") as quiet:
                old, sys.stdout = sys.stdout, quiet
                try:
                    rc = assignment.copy("98", os.path.join(root, "copy"), "copy", ["a"])
                finally:
                    sys.stdout = old
        finally:
            os.chdir(here)
        self.assertEqual(rc, 0)
        copy_a, copy_b = (os.path.join(root, "copy", "98_demo", f) for f in ("a.c", "b.c"))
        with open(copy_a) as f:
            self.assertIn("    return 0;", f.read())  # the stub
        self.assertGreater(os.stat(copy_a).st_mtime, 1e9)  # changed: new, so that make compiles it
        with open(copy_b) as f, open(b) as g:
            self.assertEqual(f.read(), g.read())
        self.assertEqual(os.stat(copy_b).st_mtime, 1e9)  # unchanged: as old as the book's (its objects reused)


class ChapterBlocks(InFolder):
    """The README blocks are the chapters' own (NN_topic/readme_blocks.py); booklib finds them."""

    ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

    def chapter_results(self, ch):
        """A results folder of this test's, holding an empty folder of chapter CH, and every chapter's block
        generators (blocks.chapter_blocks): (its path, the generators by name)."""
        from booklib import blocks
        res = os.path.join(self.dir.name, "res")
        os.makedirs(os.path.join(res, ch))
        return res, blocks.chapter_blocks()

    def chapter(self, folder, text):
        os.makedirs(os.path.join(self.dir.name, folder), exist_ok=True)
        return self.write(os.path.join(folder, "readme_blocks.py"), text)

    def test_the_books_chapters_declare_their_blocks(self):
        from booklib import blocks
        found = blocks.chapter_blocks()
        for name in ("block_ch00_h200_article", "block_ch05_steps", "block_ch06_sweep", "block_ch06_ablation"):
            self.assertIn(name, found)

    def test_a_new_step_appears_in_a_block_with_nothing_changed_in_common(self):
        # chapter 06's module, copied with one more step in its list of steps, over a results folder that has it
        from booklib import blocks
        with open(os.path.join(self.ROOT, "06_flash_v3", "readme_blocks.py")) as f:
            text = f.read()
        steps = ch06_steps(text)
        self.assertGreater(len(steps), 1)
        self.chapter("06_flash_v3", text.replace('"%s")' % steps[-1], '"%s", "flash_next")' % steps[-1], 1))
        found = blocks.chapter_blocks(self.dir.name)
        res = os.path.join(self.dir.name, "res")
        os.makedirs(os.path.join(res, "ch06"))
        rows, peers = ["kernel,B,H,N,d,dtype,causal,time_ms_median,tflops"], ["peer,B,H,N,d,dtype,causal,time_ms_median"]
        for k in steps + ["flash_next"]:
            for d in (64, 128):
                for c in (0, 1):
                    rows.append("%s,1,16,16384,%d,bf16,%d,2.0,500.0" % (k, d, c))
        for d in (64, 128):
            for c in (0, 1):
                peers.append("sdpa_cudnn,1,16,16384,%d,bf16,%d,2.2" % (d, c))
        self.write("res/ch06/sweep.csv", "\n".join(rows) + "\n")
        self.write("res/ch06/peers.csv", "\n".join(peers) + "\n")
        self.write("res/ch06/ch05_sweep.csv", "kernel,B,H,N,d,dtype,causal,time_ms_median\n"
                                              "flash_mma_async,1,16,16384,64,bf16,0,3.0\n")
        out = found["block_ch06_sweep"](blocks.Blocks(res))
        self.assertIn("| `flash_next` | 64 | full | 500-500 | 1.10-1.10 |", out)

    def test_the_goal_is_met_only_where_every_point_is_at_cudnn_or_faster(self):
        # chapter 06's goal block over a sweep of 16 points (N = 512, 1024; both d, dtypes, masks) of the last step
        from booklib import blocks
        found = blocks.chapter_blocks()
        with open(os.path.join(self.ROOT, "06_flash_v3", "readme_blocks.py")) as f:
            last = ch06_steps(f.read())[-1]
        def goal(slow):  # a results folder of its own each time (the tables are read once per path)
            res = os.path.join(self.dir.name, "res%s" % (slow is not None))
            os.makedirs(os.path.join(res, "ch06"))
            rows = ["kernel,B,H,N,d,dtype,causal,time_ms_median"]
            peers = ["peer,B,H,N,d,dtype,causal,time_ms_median"]
            for N in (512, 1024):
                for d in (64, 128):
                    for t in ("fp16", "bf16"):
                        for c in (0, 1):
                            ours = 1.001 if (N, d, t, c) == slow else 0.9
                            rows.append("%s,%d,16,%d,%d,%s,%d,%s" % (last, 16384 // N, N, d, t, c, ours))
                            # two rounds of cuDNN: the block takes the faster, 1.0
                            peers += ["sdpa_cudnn,%d,16,%d,%d,%s,%d,%s" % (16384 // N, N, d, t, c, ms)
                                      for ms in (1.3, 1.0)]
            self.write(os.path.join(res, "ch06", "sweep.csv"), "\n".join(rows) + "\n")
            self.write(os.path.join(res, "ch06", "peers.csv"), "\n".join(peers) + "\n")
            return found["block_ch06_goal"](blocks.Blocks(res))

        out = goal(None)
        self.assertIn("| d = 64, causal | 4 of 4 | 1.111-1.111 | none |", out)
        self.assertIn("**met**", out)
        out = goal((1024, 64, "bf16", 1))
        self.assertIn("| d = 64, causal | 3 of 4 | 0.999-1.111 | 1024, bf16: 0.999 |", out)
        self.assertIn("**not met**", out)
        self.assertIn("| d = 128, full | 4 of 4 |", out)

    def test_chapter_07_blocks_say_what_is_missing_then_read_the_runs(self):
        # without the bench's files a block names them; with them, each backward row goes to the step whose last
        # kernel precedes it, beside each peer's fastest round
        from booklib import blocks
        res, found = self.chapter_results("ch07")
        out = found["block_ch07_article"](blocks.Blocks(res))
        self.assertTrue(out.startswith("Not yet measured on a GPU: no `ch07/article.csv` or `ch07/peers.csv`"), out)
        head = "kernel,gpu,B,H,N,d,dtype,causal,time_ms_median,tflops"
        run = lambda k, c, t: ["forward,G,10,64,1024,64,fp32,%d,0.5,9.0" % c] + \
            ["%s,G,10,64,1024,64,fp32,%d,1.0,1.0" % (x, c) for x in k] + ["backward,G,10,64,1024,64,fp32,%d,%s,40.0" % (c, t)]
        rows = [head] + run(["naive_p", "naive_dk"], 0, "8.0") + run(["flash_bwd_d", "flash_bwd"], 0, "2.0") + \
            run(["flash_bwd_d", "flash_bwd"], 1, "1.25")
        self.write("res/ch07/article.csv", "\n".join(rows) + "\n")
        peers = ["peer,B,H,N,d,dtype,causal,time_ms_median"]
        for c in (0, 1):
            for t in ("3.0", "2.5"):  # two rounds: the fastest counts
                peers.append("sdpa_efficient_bwd,10,64,1024,64,fp32,%d,%s" % (c, t))
        self.write("res/ch07/peers.csv", "\n".join(peers) + "\n")
        out = found["block_ch07_article"](blocks.Blocks(res))
        self.assertIn("| `naive` | full | 8.000 | 40.0 | 0.500 | 2.500 | - | - | 0.31 | - | - |", out)
        self.assertIn("| `flash` | full | 2.000 | 40.0 | 0.500 | 2.500 | - | - | 1.25 | - | - |", out)
        self.assertIn("| `flash` | causal | 1.250 | 40.0 | 0.500 | 2.500 | - | - | 2.00 | - | - |", out)

    def test_chapter_07_dq_block_sets_the_pass_beside_the_atomics(self):
        # step 2's runs at the article's size: the atomics (flash_bwd_d, flash_bwd) and the pass (flash_dq,
        # flash_dkdv), each with its kernels' times and the model's bytes; the pass's time over the atomics' per mask
        from booklib import blocks
        res, found = self.chapter_results("ch07")
        head = "kernel,gpu,B,H,N,d,dtype,causal,time_ms_median,tflops,model_read_bytes,model_write_bytes"
        run = lambda k, c, t: ["forward,G,10,64,1024,64,fp32,%d,0.5,9.0,1,1" % c] + \
            ["%s,G,10,64,1024,64,fp32,%d,%s,1.0,1,1" % (x, c, ms) for x, ms in k] + \
            ["backward,G,10,64,1024,64,fp32,%d,%s,40.0,3000000000,1000000000" % (c, t)]
        atomic, dq_pass = [("flash_bwd_d", "0.1"), ("flash_bwd", "1.9")], [("flash_dq", "1.2"), ("flash_dkdv", "1.6")]
        self.write("res/ch07/article.csv", "\n".join([head] + run(atomic, 0, "2.0") + run(atomic, 1, "1.0")) + "\n")
        out = found["block_ch07_dq"](blocks.Blocks(res))
        self.assertIn("| atomic | full | `flash_bwd_d` 0.100, `flash_bwd` 1.900 | 2.000 | 40.0 | 4.00 | - |", out)
        self.assertIn("The pass: not yet measured on a GPU", out)
        res = os.path.join(self.dir.name, "res2")  # another folder: a results file is read once per path
        os.makedirs(os.path.join(res, "ch07"))
        self.write("res2/ch07/article.csv", "\n".join([head] + run(atomic, 0, "2.0") + run(dq_pass, 0, "2.8") +
                                                      run(atomic, 1, "1.0") + run(dq_pass, 1, "0.9")) + "\n")
        out = found["block_ch07_dq"](blocks.Blocks(res))
        self.assertIn("| pass | full | `flash_dq` 1.200, `flash_dkdv` 1.600 | 2.800 | 40.0 | 4.00 | 1.40 |", out)
        self.assertIn("| pass | causal | `flash_dq` 1.200, `flash_dkdv` 1.600 | 0.900 | 40.0 | 4.00 | 0.90 |", out)
        self.assertIn("The pass's time over the atomics' (full 1.40; causal 0.90): each is faster at one mask.", out)
        self.assertNotIn("not yet measured", out)
        # the article block names the pass's runs apart from the flash step's
        self.write("res2/ch07/peers.csv", "peer,B,H,N,d,dtype,causal,time_ms_median\n")
        out = found["block_ch07_article"](blocks.Blocks(res))
        self.assertIn("| `flash --dq pass` | full | 2.800 |", out)

    def test_chapter_07_bytes_of_every_profiled_kernel(self):
        # each row of ncu_kernels.txt with its function, from its own ncu file: model and counted from ncu_run.csv,
        # requested loads, stores plus reductions, DRAM; the requested / counted ratios where they differ; a row
        # whose launch ncu did not find (no function) is left out
        from booklib import blocks
        res = os.path.join(self.dir.name, "res")
        os.makedirs(os.path.join(res, "ch07", "ncu"))
        found = blocks.chapter_blocks()
        self.assertTrue(found["block_ch07_bytes_all"](blocks.Blocks(res)).startswith("Not yet measured on a GPU"))
        self.write("res/ch07/ncu_run.csv", "kernel,gpu,model_read_bytes,counted_read_bytes,model_write_bytes,"
                   "counted_write_bytes\nforward,G,1,1,1,1\nk_a,G,1000,1000,400,400\nk_b,G,2000,2000,100,100\n")
        self.write("res/ch07/ncu_kernels.txt", "k_a k_a_kernel\nk_b k_b_kernel\nk_c\n")
        head = '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
        metric = lambda f, m, v: '"0","%s","%s","byte","%s"\n' % (f, m, v)
        l1 = "l1tex__t_bytes_pipe_lsu_mem_global_op_%s.sum"
        self.write("res/ch07/ncu/k_a.csv", head + metric("k_a_kernel", l1 % "ld", "1,000") +
                   metric("k_a_kernel", l1 % "st", "200") + metric("k_a_kernel", l1 % "red", "600") +
                   metric("k_a_kernel", "dram__bytes_read.sum", "500") + metric("k_a_kernel", "dram__bytes_write.sum", "300"))
        self.write("res/ch07/ncu/k_b.csv", head + metric("k_b_kernel", l1 % "ld", "2,000") +
                   metric("k_b_kernel", l1 % "st", "100") + metric("k_b_kernel", "dram__bytes_read.sum", "2,000"))
        self.write("res/ch07/ncu.csv", head)
        out = found["block_ch07_bytes_all"](blocks.Blocks(res))
        self.assertIn("| `k_a` | 1,000 | 1,000 | 1,000 | 500 | 400 | 400 | 800 | 300 |", out)
        self.assertIn("| `k_b` | 2,000 | 2,000 | 2,000 | 2,000 | 100 | 100 | 100 | - |", out)
        self.assertNotIn("k_c", out)
        self.assertIn("Loads requested over the count: 1.00 in every kernel.", out)
        self.assertIn("Stores and reductions requested over the count: `k_a` 2.00.", out)

    def test_chapter_07_tc_block_reads_the_tensor_cores_runs(self):
        # the tensor-core steps' runs (the last kernel tc_bwd, tc_vec_bwd, ..., tc_stores_bwd names the step) in the
        # article and sweep files, each beside the same dtype's flash and cuDNN backward at their fastest round; the
        # fp32 steps' runs are left to the other blocks; the goal counts the last mma.sync step's runs only
        from booklib import blocks
        res, found = self.chapter_results("ch07")
        head = "kernel,gpu,B,H,N,d,dtype,causal,time_ms_median,tflops"
        def run(k, t, c, ms, N="1024", B="10", H="64"):
            return ["forward,G,%s,%s,%s,64,%s,%d,0.5,9.0" % (B, H, N, t, c)] + \
                ["%s,G,%s,%s,%s,64,%s,%d,1.0,1.0" % (x, B, H, N, t, c) for x in k] + \
                ["backward,G,%s,%s,%s,64,%s,%d,%s,40.0" % (B, H, N, t, c, ms)]
        k3, k18 = ["tc_bwd_d", "tc_bwd"], ["tc_bwd_d", "tc_stores_bwd"]
        rows = [head] + run(["flash_bwd_d", "flash_bwd"], "fp32", 0, "2.0") + run(k3, "bf16", 0, "0.5") + \
            run(k3, "fp16", 1, "0.4") + run(k18, "bf16", 0, "0.45")
        self.write("res/ch07/article.csv", "\n".join(rows) + "\n")
        self.write("res/ch07/sweep.csv", "\n".join([head] + run(k3, "bf16", 0, "1.0", "4096", "4", "16") +
                                                   run(k18, "bf16", 0, "1.0", "4096", "4", "16")) + "\n")
        peers = ["peer,B,H,N,d,dtype,causal,time_ms_median",
                 "sdpa_flash_bwd,10,64,1024,64,bf16,0,0.6", "sdpa_flash_bwd,10,64,1024,64,bf16,0,0.55",
                 "sdpa_cudnn_bwd,10,64,1024,64,bf16,0,0.25", "sdpa_flash_bwd,4,16,4096,64,bf16,0,0.9"]
        self.write("res/ch07/peers.csv", "\n".join(peers) + "\n")
        out = found["block_ch07_tc"](blocks.Blocks(res))
        tc, last = "| `tensor_cores` | ", "| `matrix_stores` | "
        self.assertIn(tc + "10 | 64 | 1024 | 64 | bf16 | full | 0.500 | 40.0 | 0.550 | 0.250 | 1.10 | 0.50 |", out)
        self.assertIn(tc + "10 | 64 | 1024 | 64 | fp16 | causal | 0.400 | 40.0 | - | - | - | - |", out)
        self.assertIn(tc + "4 | 16 | 4096 | 64 | bf16 | full | 1.000 | 40.0 | 0.900 | - | 0.90 | - |", out)
        self.assertIn(last + "10 | 64 | 1024 | 64 | bf16 | full | 0.450 | 40.0 | 0.550 | 0.250 | 1.22 | 0.56 |", out)
        # a shape's steps together, in step order
        shape = "10 | 64 | 1024 | 64 | bf16 | full"
        self.assertLess(out.index(tc + shape), out.index(last + shape))
        # the goals: matrix_stores at 1.22 (met) and 0.90 (not met); tensor_cores' rows do not count; no wgmma run, and
        # none of stat_copies, whose goal (set when it was the last) is kept
        self.assertIn("The goal (`matrix_stores` vs flash at least 1.00 at every point): not met, at least 1.00 at 1 "
                      "of 2 points.", out)
        self.assertIn("The goal (`stat_copies` vs flash at least 1.00 at every point): no point to judge it by, no "
                      "`stat_copies` run", out)
        self.assertIn("The goal (`wgmma` vs flash at least 1.00 at every point): no point to judge it by, no `wgmma` run "
                      "there with a flash time in these files.", out)
        self.assertNotIn("0 of 0", out)
        self.assertIn("The goal (`wgmma` vs cuDNN at least 0.80 at d = 128 from N = 4096): no point to judge it by, no "
                      "`wgmma` run", out)
        self.assertNotIn("fp32", out.split("Generated")[0])

    def test_chapter_07_tc_block_counts_the_wgmma_goals(self):
        # step 6's two goals: against flash at every point, against cuDNN (at least 0.80) at d = 128 from N = 4096
        # only: the d = 64 run and the N = 1024 run do not count for the second
        from booklib import blocks
        res, found = self.chapter_results("ch07")
        head = "kernel,gpu,B,H,N,d,dtype,causal,time_ms_median,tflops"
        def run(N, d, ms):
            return ["forward,G,1,16,%s,%s,bf16,0,0.5,9.0" % (N, d), "tc_bwd_d,G,1,16,%s,%s,bf16,0,0.1,1.0" % (N, d),
                    "tc_wgmma_bwd,G,1,16,%s,%s,bf16,0,1.0,1.0" % (N, d), "backward,G,1,16,%s,%s,bf16,0,%s,40" % (N, d, ms)]
        self.write("res/ch07/article.csv", head + "\n")
        self.write("res/ch07/sweep.csv", "\n".join([head] + run(4096, 128, "1.0") + run(8192, 128, "2.0") +
                                                   run(1024, 128, "1.0") + run(4096, 64, "1.0")) + "\n")
        peers = ["peer,B,H,N,d,dtype,causal,time_ms_median"]
        for N, d, flash, cudnn in ((4096, 128, 1.5, 0.9), (8192, 128, 2.5, 1.5), (1024, 128, 1.2, 0.5),
                                   (4096, 64, 0.9, 0.5)):
            peers += ["sdpa_flash_bwd,1,16,%d,%d,bf16,0,%s" % (N, d, flash),
                      "sdpa_cudnn_bwd,1,16,%d,%d,bf16,0,%s" % (N, d, cudnn)]
        self.write("res/ch07/peers.csv", "\n".join(peers) + "\n")
        out = found["block_ch07_tc"](blocks.Blocks(res))
        self.assertIn("| `wgmma` | 1 | 16 | 4096 | 128 | bf16 | full | 1.000 | 40.0 | 1.500 | 0.900 | 1.50 | 0.90 |", out)
        self.assertIn("The goal (`wgmma` vs flash at least 1.00 at every point): not met, at least 1.00 at 3 of 4 "
                      "points.", out)
        self.assertIn("The goal (`wgmma` vs cuDNN at least 0.80 at d = 128 from N = 4096): not met, at least 0.80 at 1 "
                      "of 2 points.", out)
        self.assertIn("The goal (`matrix_stores` vs flash at least 1.00 at every point): no point to judge it by, no "
                      "`matrix_stores` run", out)

    def test_chapter_07_wgmma_checks_block_counts_and_compares(self):
        # step 6's first run, from its text file: a failed check and a sanitizer hazard are counted as such; the
        # table pairs each point's two steps and the peers; the verdict lines per d; no file: not measured
        from booklib import blocks
        res, found = self.chapter_results("ch07")
        self.assertIn("Not yet measured", found["block_ch07_wgmma_checks"](blocks.Blocks(res)))
        text = "\n".join([
            "# a comment", "gpu: NVIDIA H200", "cuda: 13.0 (runtime)", "date: 2026-12-05",
            "B=3 H=5 N=300 d=128 fp16 full: rc=0, counted != model lines: 0 | tc_wgmma_bwd 0.03 0.03 1 1 1 1% 1e-4 1e-4 ok",
            "B=1 H=3 N=17 d=64 bf16 causal: rc=1, counted != model lines: 0 | tc_wgmma_bwd 0.03 0.03 1 1 1 1% 1 1 FAIL",
            "gpu/tc_N_3*: Tested: 2 | Passing: 2 | Failing: 0",
            "memcheck --seq 77: rc=0 ERROR SUMMARY: 0 errors",
            "racecheck --seq 77: rc=9 RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)",
            "d=128 N=4096 c=0 wide_blocks: tc_wide_bwd 6.0 6.0 228.0 1481.6 154.59 35.3%",
            "d=128 N=4096 c=0 wgmma: tc_wgmma_bwd 4.0 4.0 340.0 2217.9 154.59 52.9%",
            "d=64 N=1024 c=1 wide_blocks: tc_wide_bwd 1.0 1.0 200.0 1 1 1%",
            "d=64 N=1024 c=1 wgmma: tc_wgmma_bwd 0.9 0.9 210.0 1 1 1%",
            "sdpa_flash_bwd,4,16,4096,128,bf16,0,5.0,4.8,280",
            "sdpa_cudnn_bwd,4,16,4096,128,bf16,0,3.6,3.4,500",
            "d=64: duration 2.83 ms; SM (compute) throughput 48.65%, L1/TEX 46.45%, L2 34.36%, DRAM 2.35%; achieved "
            "occupancy 12.48% (theoretical 12.50%)"]) + "\n"
        self.write("res/ch07/wgmma_checks.txt", text)
        out = found["block_ch07_wgmma_checks"](blocks.Blocks(res))
        self.assertIn("Checks against the float64 reference: 1 of 2 pass", out)
        self.assertIn("GPU tests: 2 of 2 pass. compute-sanitizer: 1 of 2 runs without an error or a hazard.", out)
        self.assertIn("| 128 | 4096 | full | 6.000 | 4.000 | 340.0 | 1.50 | 5.000 | 3.600 | 1.25 | 0.90 |", out)
        self.assertIn("| 64 | 1024 | causal | 1.000 | 0.900 | 210.0 | 1.11 | - | - | - | - |", out)
        self.assertIn("- d = 128: step 6 over step 5 1.50 to 1.50 at the 1 points; FlashAttention-2's time over step "
                      "6's at least 1.00 at 1 of 1 points with a peer time, cuDNN's at least 0.80 at 1 of 1.", out)
        # d = 64: the goal against cuDNN (d = 128 only) does not apply
        self.assertIn("- d = 64: step 6 over step 5 1.11 to 1.11 at the 1 points; FlashAttention-2's time over step "
                      "6's at least 1.00 at 0 of 0 points with a peer time.\n", out)
        self.assertIn("- ncu at d = 64: 2.83 ms; SM (compute) throughput 48.65%, L1/TEX 46.45%; achieved occupancy "
                      "12.48%.", out)
        self.assertIn("NVIDIA H200, CUDA 13.0, measured 2026-12-05.", out)

    def test_chapter_07_sweep_figure_only_where_the_sweeps_ran(self):
        # no sweep.csv: not measured (the figure would be stale or missing); with the sweeps and the peers: the
        # image make plots draws, and the caption of the files it is drawn from
        from booklib import blocks
        res, found = self.chapter_results("ch07")
        self.assertIn("Not yet measured", found["block_ch07_sweep_figure"](blocks.Blocks(res)))
        self.write("res/ch07/sweep.csv", "kernel,gpu,B,H,N,d,dtype,causal,time_ms_median,tflops\n"
                   "backward,NVIDIA H200,1,16,16384,128,fp16,0,10.0,440.0\n")
        self.assertIn("Not yet measured", found["block_ch07_sweep_figure"](blocks.Blocks(res)))
        self.write("res/ch07/peers.csv", "peer,gpu,torch,B,H,N,d,dtype,causal,time_ms_median\n"
                   "sdpa_flash_bwd,NVIDIA H200,2.11.0,1,16,16384,128,fp16,0,18.0\n")
        out = found["block_ch07_sweep_figure"](blocks.Blocks(res))
        self.assertTrue(out.startswith("![chapter 07's steps in the sweeps") and "(../plots/ch07_sweep.png)\n" in out, out)
        self.assertIn("`ch07/sweep.csv`, `ch07/peers.csv`", out)

    def test_chapter_07_hopper_block_pairs_the_steps(self):
        # the hopper stage's runs: each point's steps in a row, the speed-ups between neighbours, a point where steps
        # 8 to 10 did not run (a '-'; its TFLOP/s the last step's that ran), the ranges per d; no file: not measured
        from booklib import blocks
        res, found = self.chapter_results("ch07")
        self.assertIn("Not yet measured", found["block_ch07_hopper"](blocks.Blocks(res)))
        head = "kernel,gpu,B,H,N,d,dtype,causal,time_ms_median,tflops"
        def run(kern, N, d, c, ms, tf):
            return ["forward,G,1,16,%s,%s,bf16,%s,0.5,9.0" % (N, d, c),
                    "tc_bwd_d,G,1,16,%s,%s,bf16,%s,0.1,1" % (N, d, c), "%s,G,1,16,%s,%s,bf16,%s,1.0,1.0" % (kern, N, d, c),
                    "backward,G,1,16,%s,%s,bf16,%s,%s,%s" % (N, d, c, ms, tf)]
        rows = (run("tc_wgmma_bwd", 4096, 128, 0, "4.0", "340") + run("tc_lean_bwd", 4096, 128, 0, "3.2", "400") +
                run("tc_bulk_bwd", 4096, 128, 0, "3.0", "420.04") + run("tc_ovl_bwd", 4096, 128, 0, "2.5", "500.04") +
                run("tc_ws_bwd", 4096, 128, 0, "2.0", "625.0") +
                run("tc_wgmma_bwd", 1024, 64, 1, "1.0", "200") + run("tc_lean_bwd", 1024, 64, 1, "0.8", "250"))
        self.write("res/ch07/hopper.csv", "\n".join([head] + rows) + "\n")
        out = found["block_ch07_hopper"](blocks.Blocks(res))
        self.assertIn("| d | N | mask | `wgmma` ms | `lean_loop` ms | `dq_bulk` ms | `dq_overlap` ms | `warp_specialized` ms "
                      "| TFLOP/s | step 7 over 6 | step 8 over 7 | step 9 over 8 | step 10 over 9 |\n"
                      "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n", out)
        self.assertIn("| 128 | 4096 | full | 4.000 | 3.200 | 3.000 | 2.500 | 2.000 | 625.0 | 1.25 | 1.07 | 1.20 | 1.25 |",
                      out)
        self.assertIn("| 64 | 1024 | causal | 1.000 | 0.800 | - | - | - | 250.0 | 1.25 | - | - | - |", out)
        self.assertIn("- d = 128: step 7 over step 6 1.25 to 1.25 at 1 points, step 8 over step 7 1.07 to 1.07 at 1 "
                      "points, step 9 over step 8 1.20 to 1.20 at 1 points, step 10 over step 9 1.25 to 1.25 at 1 "
                      "points.", out)
        self.assertIn("- d = 64: step 7 over step 6 1.25 to 1.25 at 1 points, step 8 over step 7 no point, step 9 over "
                      "step 8 no point, step 10 over step 9 no point.", out)
        self.assertLess(out.index("| 128 |"), out.index("| 64 |"), "d = 128 first")

    def test_chapter_07_handover_block_reads_both_tools(self):
        # the tests stage's handover.txt (as bench.sh writes it): a row for each way the kernel ran (its arguments:
        # FREE [WARPS [READY [fence]]]), in the order they ran, with the kernel's result under each tool and each
        # tool's count; a run that printed no result or no summary says so, a tool missing says "not run"; step 10's
        # own way marked; no file: not measured
        from booklib import blocks
        res, found = self.chapter_results("ch07")
        self.assertIn("Not yet measured", found["block_ch07_handover"](blocks.Blocks(res)))
        self.write("res/ch07/handover.txt",
                   "$ nvcc -arch=native -Icommon -o handover tests/ch07/handover.cu\n"
                   "$ compute-sanitizer --tool racecheck ./handover arrive\n"
                   "arrive: out[0] = 130 (ok)\n"
                   "RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n"
                   "$ compute-sanitizer --tool synccheck ./handover arrive\n"
                   "arrive: out[0] = 130 (ok)\n"
                   "ERROR SUMMARY: 0 errors\n"
                   "$ compute-sanitizer --tool racecheck ./handover aligned\n"
                   "aligned: out[0] = 130 (ok)\n"
                   "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
                   "$ compute-sanitizer --tool synccheck ./handover aligned\n"
                   "aligned: CUDA error: unspecified launch failure\n"
                   "ERROR SUMMARY: 32 errors\n"
                   "$ compute-sanitizer --tool racecheck ./handover unaligned\n"
                   "unaligned: out[0] = 126 (wrong)\n"
                   "$ compute-sanitizer --tool racecheck ./handover unaligned 8 arrive fence ds\n"
                   "unaligned 8 arrive fence ds: out[0] = 1028 (ok)\n"
                   "RACECHECK SUMMARY: 3 hazards displayed (3 errors, 0 warnings)\n"
                   "$ compute-sanitizer --tool synccheck ./handover unaligned 8 arrive fence ds\n"
                   "unaligned: out[0] = 1028 (ok)\n"
                   "ERROR SUMMARY: 0 errors\n"
                   "$ compute-sanitizer --tool racecheck ./handover unaligned 4 wait\n"
                   "unaligned 4 wait: out[0] = 508 (ok)\n"
                   "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
                   "$ compute-sanitizer --tool racecheck ./handover unaligned 9\n"
                   "unaligned 9: out[0] = 1 (ok)\n"
                   "RACECHECK SUMMARY: 7 hazards displayed (7 errors, 0 warnings)\n")
        out = found["block_ch07_handover"](blocks.Blocks(res))
        ready = "the consumers arrive (`bar.arrive`), warp 1 waits (`bar.sync`)"
        self.assertIn("| 1 | warp 1 arrives (`bar.arrive`), the consumers wait (`bar.sync`) | %s | no | no | right | "
                      "1 hazard | 0 errors |\n" % ready, out)
        self.assertIn("| 1 | both wait (`bar.sync`) | %s | no | no | right, no result | 0 hazards | 32 errors |\n"
                      % ready, out)
        self.assertIn("| 1 | both wait (`barrier.sync`) | %s | no | no | wrong, not run | no summary | not run |\n"
                      % ready, out)
        # synccheck's result line names another way: not this run's result
        self.assertIn("| 8 (step 10's way) | both wait (`barrier.sync`) | %s | yes | yes | right, no result | "
                      "3 hazards | 0 errors |\n" % ready, out)
        self.assertIn("| 4 | both wait (`barrier.sync`) | both wait (`barrier.sync`) | no | no | right, not run | "
                      "0 hazards | not run |\n", out)
        self.assertNotIn("| 9 |", out, "not a way the kernel takes")
        # the line under the table: where racecheck loses the order, from the same runs (a run without a summary
        # counted on neither side)
        self.assertIn("\nracecheck with both sides waiting on DQ_FREE (step 10's way), by consumer warps: the consumers "
                      "arriving on DQ_READY, clean at none, reporting at 8 (the fence and their own barrier); both "
                      "sides waiting on DQ_READY, clean at 4, reporting at none.\n", out)
        self.assertLess(out.index("| 1 | warp 1"), out.index("| 8 (step"), "in the order they ran")
        self.assertLess(out.index("| 8 (step"), out.index("| 4 |"), "in the order they ran")
        self.assertIn("`ch07/handover.txt`", out)

    def test_chapter_07_stage_release_block_reads_both_tools(self):
        # the tests stage's stage_release.txt: a row for each way (lane0|syncwarp|every [WARPS]) in the order they ran,
        # the sums under each tool and each tool's count, as the hand-over's block reads its file; no file: not measured
        from booklib import blocks
        res, found = self.chapter_results("ch07")
        self.assertIn("Not yet measured", found["block_ch07_stage_release"](blocks.Blocks(res)))
        self.write("res/ch07/stage_release.txt",
                   "$ nvcc -arch=native -Icommon -o stage_release tests/ch07/stage_release.cu\n"
                   "$ compute-sanitizer --tool racecheck ./stage_release lane0\n"
                   "lane0: 0 of 256 sums wrong (ok)\n"
                   "RACECHECK SUMMARY: 24 hazards displayed (24 errors, 0 warnings)\n"
                   "$ compute-sanitizer --tool synccheck ./stage_release lane0\n"
                   "lane0: 0 of 256 sums wrong (ok)\n"
                   "ERROR SUMMARY: 0 errors\n"
                   "$ compute-sanitizer --tool racecheck ./stage_release every 2\n"
                   "every 2: 3 of 64 sums wrong (wrong)\n"
                   "RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n"
                   "$ compute-sanitizer --tool racecheck ./stage_release every\n"
                   "every: CUDA error: unspecified launch failure\n"
                   "$ compute-sanitizer --tool racecheck ./stage_release all\n"
                   "all: 0 of 256 sums wrong (ok)\n")
        out = found["block_ch07_stage_release"](blocks.Blocks(res))
        self.assertIn("| 8 | lane 0 arrives, after the warp's reads | right | 24 hazards | 0 errors |\n", out)
        self.assertIn("| 2 | every lane arrives (step 10's way) | wrong, not run | 1 hazard | not run |\n", out)
        self.assertIn("| 8 | every lane arrives (step 10's way) | no result, not run | no summary | not run |\n", out)
        self.assertNotIn("all", out.split("\nGenerated")[0], "not a way the kernel takes")
        self.assertLess(out.index("| 8 | lane 0"), out.index("| 2 | every"), "in the order they ran")
        self.assertIn("`ch07/stage_release.txt`", out)

    def test_chapter_07_status_block_reads_the_verdicts(self):
        # the Status section's verdicts: the steps with a run at the article's size (a step missing is named), the
        # GPU tests' synthesis line, and each sanitizer run that reported, with the note bench.sh put beside it;
        # no files: not yet measured; a sanitizer line it cannot read is an error, never a silent "clean"
        from booklib import blocks
        res, found = self.chapter_results("ch07")
        out = found["block_ch07_status"](blocks.Blocks(res))
        self.assertIn("At the article's size: not yet measured", out)
        self.assertIn("GPU tests: not yet run on a GPU", out)
        self.assertIn("compute-sanitizer: not yet run on a GPU", out)
        head = "kernel,gpu,B,H,N,d,dtype,causal,time_ms_median,tflops"
        run = lambda k, B=10, H=64, N=1024: ["forward,G,%d,%d,%d,64,fp32,0,1,1" % (B, H, N),
                                              "%s,G,%d,%d,%d,64,fp32,0,1,1" % (k, B, H, N),
                                              "backward,G,%d,%d,%d,64,fp32,0,1,1" % (B, H, N)]
        kernels = ("naive_dk", "flash_bwd", "flash_dkdv", "tc_bwd", "tc_vec_bwd", "tc_wide_bwd", "tc_wgmma_bwd",
                   "tc_lean_bwd", "tc_bulk_bwd", "tc_ovl_bwd", "tc_tile_bwd", "tc_tile_lean_bwd", "tc_kvreg_bwd", "tc_pairs_bwd",
                   "tc_quads_bwd", "tc_stats_bwd", "tc_squares_bwd", "tc_stores_bwd")
        self.write("res/ch07/article.csv", "\n".join([head] + sum((run(k) for k in kernels), []) +
                                                       run("tc_ws_bwd", 16, 16)) + "\n")
        self.write("res/ch07/tests_gpu.log", "[====] Synthesis: Tested: 13 | Passing: 12 | Failing: 1 | Crashing: 0\n")
        san = ("compute-sanitizer --tool memcheck ./ch07/run --kernel flash --dq pass --batch 1 --seq 77: rc=0 "
               "ERROR SUMMARY: 0 errors\n"
               "compute-sanitizer --tool racecheck ./ch07/run --kernel warp_specialized --batch 1 --seq 77: rc=9 "
               "RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings) (the hand-over: step 10's section)\n"
               "compute-sanitizer --tool synccheck ./ch07/run --kernel wgmma --batch 2 --seq 33: rc=0 ERROR SUMMARY: 2 errors\n")
        self.write("res/ch07/sanitizer_summary.txt", san)
        out = found["block_ch07_status"](blocks.Blocks(res))
        self.assertIn("every step but step 10 (`warp_specialized`) (not yet measured there)", out, "not at B=16 H=16")
        self.assertIn("GPU tests (`tests_gpu.log`): 12 of 13 passed; 1 failed, 0 crashed.", out)
        self.assertIn("3 runs (3 choices of kernel, each at one small ragged shape): clean but for 2:\n", out)
        self.assertIn("  - step 10 (`warp_specialized`), racecheck at `--batch 1 --seq 77`: 1 hazard (the hand-over: "
                      "step 10's section).\n", out)
        self.assertIn("  - step 6 (`wgmma`), synccheck at `--batch 2 --seq 33`: 2 errors.\n", out)
        self.assertIn("`ch07/article.csv`, `ch07/tests_gpu.log`, `ch07/sanitizer_summary.txt`", out)
        # the steps that run of the tests stage did not have (none of its sanitizer runs names them), and its record
        self.assertIn("- Not in that run of the tests stage (the GPU tests and compute-sanitizer above): step 1 (`naive`), "
                      "step 3 (`tensor_cores`), step 4 (`dq_vectors`), step 5 (`wide_blocks`), step 7 (`lean_loop`), "
                      "step 8 (`dq_bulk`), step 9 (`dq_overlap`), step 11 (`warp_tiles`), step 12 (`lean_tiles`), "
                      "step 13 (`kv_registers`), step 14 (`dq_pairs`), step 15 (`dq_quads`), step 16 (`stat_copies`), "
                      "step 17 (`dq_squares`), step 18 (`matrix_stores`).\n", out)
        self.assertIn("- That run has no record of the code it tested (`ch07/tests_gpu.provenance.json`)", out)
        self.write("res/ch07/tests_gpu.provenance.json", "{}\n")
        self.assertNotIn("no record of the code", found["block_ch07_status"](blocks.Blocks(res)))
        self.write("res/ch07/article.csv", "\n".join([head] + sum((run(k) for k in kernels + ("tc_ws_bwd",)), [])) +
                   "\n")
        from booklib import results
        results._tables.clear()  # the tables are read once a path: this one was rewritten
        self.write("res/ch07/sanitizer_summary.txt", san.splitlines(True)[0])
        out = found["block_ch07_status"](blocks.Blocks(res))
        self.assertIn("every step, 1 to 18, and step 2 with `--dq pass`", out)
        self.assertIn("1 runs (1 choices of kernel, each at one small ragged shape): all clean.", out)
        self.write("res/ch07/sanitizer_summary.txt", san.splitlines(True)[0] + san.splitlines(True)[0].replace(
            "--seq 77", "--seq 33") + san.splitlines(True)[1])
        out = found["block_ch07_status"](blocks.Blocks(res))
        self.assertIn("3 runs (2 choices of kernel, at one to two small ragged shapes each): clean but for 1:", out,
                      "the shapes counted for each kernel")
        self.write("res/ch07/sanitizer_summary.txt", san + "compute-sanitizer --tool racecheck ./ch07/run --kernel "
                   "flash --batch 1: rc=0 RACECHECK SUMMARY: hazards\n")
        with self.assertRaises(blocks.BadInput):
            found["block_ch07_status"](blocks.Blocks(res))

    def test_chapter_05_status_block_reads_the_checks(self):
        # the GPU tests' synthesis line and each sanitizer run that reported, its step named by number; no files:
        # not yet run; a run of a kernel that is no step, or a line it cannot read, is an error
        from booklib import blocks
        res, found = self.chapter_results("ch05")
        out = found["block_ch05_status"](blocks.Blocks(res))
        self.assertIn("GPU tests: not yet run on a GPU", out)
        self.assertIn("compute-sanitizer: not yet run on a GPU", out)
        self.write("res/ch05/tests_gpu.log", "[====] Synthesis: Tested: 19 | Passing: 19 | Failing: 0 | Crashing: 0\n")
        run = "compute-sanitizer --tool %s ./ch05/run --kernel %s --batch 2 --heads 3 --seq 77: rc=%s %s\n"
        san = (run % ("memcheck", "wmma", 0, "ERROR SUMMARY: 0 errors") +
               run % ("racecheck", "swizzle", 9, "RACECHECK SUMMARY: 2 hazards displayed (0 errors, 2 warnings)") +
               run % ("synccheck", "mma_async", 0, "ERROR SUMMARY: 0 errors"))
        self.write("res/ch05/sanitizer_summary.txt", san)
        out = found["block_ch05_status"](blocks.Blocks(res))
        self.assertIn("GPU tests (`tests_gpu.log`): 19 of 19 passed.", out)
        self.assertIn("3 runs (3 choices of kernel, each at one small ragged shape): clean but for 1:\n", out)
        self.assertIn("  - step 5 (`swizzle`), racecheck at `--batch 2 --heads 3 --seq 77`: 2 hazards.\n", out)
        self.assertIn("`ch05/tests_gpu.log`, `ch05/sanitizer_summary.txt`", out)
        self.write("res/ch05/sanitizer_summary.txt", san.replace("mma_async", "mma_sync"))
        with self.assertRaises(blocks.BadInput):
            found["block_ch05_status"](blocks.Blocks(res))
        self.write("res/ch05/sanitizer_summary.txt", "compute-sanitizer on NVIDIA H200, every kernel of chapter 05:\n")
        with self.assertRaises(blocks.BadInput):
            found["block_ch05_status"](blocks.Blocks(res))

    def test_chapter_05_verdict_and_chapter_06_problem_read_the_same_run(self):
        # chapter 05's last step against PyTorch (each peer at its fastest round), the unchecked runs counted, the
        # mma.sync ceiling of run.log; chapter 06's opening block reads the same files
        from booklib import blocks
        res = os.path.join(self.dir.name, "res")
        os.makedirs(os.path.join(res, "ch05"))
        head = "kernel,gpu,B,H,N,d,dtype,causal,br,flops,time_ms_median,tflops,rel_err\n"
        self.write("res/ch05/article.csv", head + "flash_mma_async,G,10,64,1024,64,fp16,0,128,171798691840,0.5,343.6,2e-4\n"
                   "flash_mma,G,10,64,1024,64,fp16,0,64,171798691840,0.9,190.9,2e-4\n")
        self.write("res/ch05/tiles.csv", head + "flash_mma_async,G,10,64,1024,64,fp16,0,64,171798691840,0.6,286.3,2e-4\n")
        self.write("res/ch05/sweep.csv", head + "flash_mma_async,G,1,16,16384,128,fp16,0,128,2199023255552,4.0,549.8,2e-4\n"
                   "flash_mma_async,G,16,16,1024,64,fp16,0,128,68719476736,0.25,274.9,\n")
        peers = "peer,gpu,torch,B,H,N,d,dtype,causal,time_ms_median\n"
        for rnd in (0, 1):
            peers += "sdpa_flash,G,t,10,64,1024,64,fp16,0,%s\n" % ("0.7" if rnd else "0.6")
            peers += "sdpa_cudnn,G,t,10,64,1024,64,fp16,0,%s\n" % ("0.4" if rnd else "0.45")
            peers += "sdpa_flash,G,t,1,16,16384,128,fp16,0,6.0\nsdpa_cudnn,G,t,1,16,16384,128,fp16,0,%s\n" % (
                "4.4" if rnd else "4.0")
        self.write("res/ch05/peers.csv", peers)
        self.write("res/ch05/run.log", "mma.sync ceiling (measured: fp16 in, fp32 accumulate, the instruction this "
                   "chapter uses): 687.2 TFLOP/s, 69% of the datasheet's peak\n")
        found = blocks.chapter_blocks()
        out = found["block_ch05_verdict"](blocks.Blocks(res))
        self.assertIn("- PyTorch timed in 2 rounds", out)
        self.assertIn("- Against FlashAttention-2 (SDPA `flash`): 1.20-1.50x, ours the faster at 2 of 2 points.\n", out)
        self.assertIn("- Against the memory-efficient backend: no `sdpa_efficient` time in `peers.csv`.", out)
        self.assertIn("- Against cuDNN: 0.80-1.00x, ours the faster at 0 of 2 points.\n", out)
        self.assertIn("- Checked against the float64 reference: 2 of the 3 runs (the other 1, at N = 1024, ran with "
                      "`--no-check`).\n", out)
        self.assertIn("- 343.6 TFLOP/s at the article's size, fp16, full mask (50% of the mma.sync ceiling of "
                      "`run.log`, 687 TFLOP/s);\n  549.8 TFLOP/s at d = 128, N = 16384", out)
        out = found["block_ch06_problem"](blocks.Blocks(res))
        self.assertIn("0.500 ms, 343.6 TFLOP/s; FlashAttention-2 0.600 ms, cuDNN 0.400 ms: 1.20x FlashAttention-2, "
                      "**0.80x cuDNN**", out)
        self.assertIn("At Br = 64, the tile this chapter starts from: 0.600 ms, 286.3 TFLOP/s", out)
        self.assertIn("(N = 1024 .. 16384, d = 64 and 128, fp16 and bf16, full and causal): 275-550 TFLOP/s, "
                      "1.50-1.50x FlashAttention-2, **1.00-1.00x cuDNN**", out)
        self.assertIn("At N = 16384, d = 128, full mask: 550 TFLOP/s against cuDNN's 550 (fp16).", out)
        self.assertIn("**687.2 TFLOP/s** (`run.log`), 69% of the datasheet's", out)

    def test_a_block_two_chapters_declare_is_an_error(self):
        from booklib import blocks
        self.chapter("98_a", "def block_same(blk):\n    return 'a'\n")
        self.chapter("99_b", "def block_same(blk):\n    return 'b'\n")
        with self.assertRaises(BadInput):
            blocks.chapter_blocks(self.dir.name)


if __name__ == "__main__":
    unittest.main()
