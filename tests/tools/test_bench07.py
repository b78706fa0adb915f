"""Chapter 07's bench.sh, the parts that judge a log without a GPU: handover_only, which lets step 10's racecheck
pass when its one report is the dQ_s hand-over (warp 1's reads in the instrumented build against the consumers'
stores, which the barriers order and racecheck does not follow) and fails it on anything else; handover_clean, which
passes the tests stage's run of the hand-over alone (tests/ch07/handover.cu) only when step 10's way of meeting
DQ_FREE (an unaligned barrier.sync on both sides) reads the tile right and neither racecheck nor synccheck reports;
stage_release_clean, the same verdict on step 10's stages of L_i and D_i alone (tests/ch07/stage_release.cu), which
passes only when step 10's way of releasing a stage (every lane arrives) sums right and neither tool reports;
ways_under_sanitizers, which writes both files (with stand-ins for nvcc and compute-sanitizer); and the two kernels
themselves, which compile wherever nvcc is."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from bench_records import Folder, run_bench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, "07_backward", "10_warp_specialized.cu")


def function(name):
    """The text of a bash function of bench.sh, from its first line to its closing brace."""
    with open(os.path.join(ROOT, "07_backward", "bench.sh")) as f:
        text = f.read()
    m = re.search(r"^%s\(\) \{\n.*?^\}\n" % name, text, re.S | re.M)
    assert m, "no function %s in bench.sh" % name
    return m.group(0)


def line_of(pattern, nth=0):
    with open(SRC) as f:
        return [i for i, l in enumerate(f, 1) if pattern in l][nth]


def passes(name, text):
    """Whether bench.sh's verdict function NAME returns true on a file holding TEXT."""
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
        f.write(text)
    try:
        return subprocess.run(["bash", "-c", function(name) + '%s "$1"' % name, "-", f.name], cwd=ROOT).returncode == 0
    finally:
        os.unlink(f.name)


class HandoverOnly(unittest.TestCase):
    def judge(self, log):
        return passes("handover_only", log)

    def race(self, read, writes):
        k = "void tc_ws_bwd_kernel<(int)64, __half>(CUtensorMap_st, const float *, float *, int, float)"
        out = "========= COMPUTE-SANITIZER\n========= Error: Race reported between Read access at %s+0x4670 in " \
              "10_warp_specialized.cu:%d\n" % (k, read)
        for w in writes:
            out += "=========     and Write access at %s::[lambda() (instance 1)]::operator ()() const+0x39e0 in " \
                   "10_warp_specialized.cu:%d [5120 hazards]\n" % (k, w)
        return out + "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n"

    def test_the_hand_over_alone_passes_anything_else_fails(self):
        read = line_of("IO_ATOMIC_ADD(reinterpret_cast<float4 *>(dst + k * D + c)")
        w1, w2 = line_of("reinterpret_cast<float2 *>(dQ_b"), line_of("reinterpret_cast<float2 *>(dQ_b", 1)
        self.assertTrue(self.judge(self.race(read, [w1, w2, w1, w2])))
        self.assertFalse(self.judge(self.race(read, [w1, w2 + 1])), "a write elsewhere")
        self.assertFalse(self.judge(self.race(read + 1, [w1])), "a read elsewhere")
        self.assertFalse(self.judge(self.race(read, [w1]).replace("10_warp_specialized.cu:%d [" % w1,
                                                                   "9_dq_overlap.cu:%d [" % w1)), "another file")
        self.assertFalse(self.judge(self.race(read, [w1]) + "========= Error: Barrier error detected.\n"),
                         "another error")
        self.assertFalse(self.judge("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"),
                         "no hazard: not the known report (rc 0 passes on its own)")


def run(way, tool, result="ok", reports=0):
    """One run's lines of handover.txt, as the tests stage writes them (compute-sanitizer's '=' prefix cut)."""
    out = "$ compute-sanitizer --tool %s ./handover %s\n" % (tool, way)
    if result:
        out += "%s: out[0] = %s (%s)\n" % (way, "130" if result == "ok" else "126", result)
    else:
        out += "%s: CUDA error: unspecified launch failure\n" % way
    if tool == "racecheck":
        return out + "RACECHECK SUMMARY: %d hazards displayed (%d errors, 0 warnings)\n" % (reports, reports)
    return out + "ERROR SUMMARY: %d errors\n" % reports


HEAD = "$ nvcc -arch=native -Icommon -o handover tests/ch07/handover.cu\n"
# what an H100 said of the three ways (2026-12-06): arrive, 4 hazards; aligned, 32 synccheck errors and no result;
# unaligned, neither
MEASURED = (HEAD + run("arrive", "racecheck", reports=4) + run("arrive", "synccheck") + run("aligned", "racecheck") +
            run("aligned", "synccheck", result=None, reports=32) + run("unaligned", "racecheck") +
            run("unaligned", "synccheck"))


class HandoverClean(unittest.TestCase):
    def judge(self, text):
        return passes("handover_clean", text)

    def test_step_10s_way_clean_passes_whatever_the_others_say(self):
        self.assertTrue(self.judge(MEASURED))
        self.assertTrue(self.judge(HEAD + run("unaligned", "racecheck") + run("unaligned", "synccheck")))

    def test_anything_wrong_with_step_10s_way_fails(self):
        good_r, good_s = run("unaligned", "racecheck"), run("unaligned", "synccheck")
        cases = {
            "a hazard": run("unaligned", "racecheck", reports=1) + good_s,
            "a synccheck error": good_r + run("unaligned", "synccheck", reports=2),
            "the tile read wrong": run("unaligned", "racecheck", result="wrong") + good_s,
            "the kernel failed": good_r + run("unaligned", "synccheck", result=None),
            "synccheck not run": good_r,
            "racecheck not run": good_s,
            "nothing run": "",
            "only the other ways clean": run("arrive", "racecheck") + run("arrive", "synccheck"),
        }
        for what, text in cases.items():
            self.assertFalse(self.judge(HEAD + text), what)


def release(way, tool, wrong=0, reports=0):
    """One run's lines of stage_release.txt, as the tests stage writes them."""
    out = "$ compute-sanitizer --tool %s ./stage_release %s\n%s: %d of 256 sums wrong (%s)\n" % (
        tool, way, way, wrong, "wrong" if wrong else "ok")
    if tool == "racecheck":
        return out + "RACECHECK SUMMARY: %d hazards displayed (%d errors, 0 warnings)\n" % (reports, reports)
    return out + "ERROR SUMMARY: %d errors\n" % reports


class StageReleaseClean(unittest.TestCase):
    def judge(self, text):
        return passes("stage_release_clean", text)

    def test_step_10s_way_clean_passes_anything_wrong_with_it_fails(self):
        head = "$ nvcc -arch=native -Icommon -o stage_release tests/ch07/stage_release.cu\n"
        others = release("lane0", "racecheck", reports=24) + release("lane0", "synccheck")
        good = release("every", "racecheck") + release("every", "synccheck")
        self.assertTrue(self.judge(head + others + good), "the other ways may report")
        cases = {
            "a hazard": release("every", "racecheck", reports=1) + release("every", "synccheck"),
            "a synccheck error": release("every", "racecheck") + release("every", "synccheck", reports=1),
            "a sum wrong": release("every", "racecheck", wrong=3) + release("every", "synccheck"),
            "synccheck not run": release("every", "racecheck"),
            "only another way clean": release("syncwarp", "racecheck") + release("syncwarp", "synccheck"),
        }
        for what, text in cases.items():
            self.assertFalse(self.judge(head + others + text), what)


class SummaryRounds(unittest.TestCase):
    """The summary says how many rounds each peer's fastest is the fastest of as peers.csv has them (a row a round),
    not as this run's ROUNDS would have them: the stages that timed the peers may have run with other ROUNDS."""

    def test_it_counts_the_rounds_in_peers_csv(self):
        if not os.access(os.path.join(ROOT, "ch07", "run"), os.X_OK):
            self.skipTest("ch07/run is not built here (make ch07)")
        with tempfile.TemporaryDirectory() as d:
            ch07 = Folder(os.path.join(d, "ch07"))
            row = "sdpa_flash_bwd,G,T,%d,16,%d,64,bf16,0,1.0,1.0,1.0,0"
            with open(os.path.join(ch07.path, "peers.csv"), "w") as f:
                f.write("\n".join(["peer,gpu,torch,B,H,N,d,dtype,causal,time_ms_median,time_ms_min,tflops,"
                                   "rel_err_vs_3op"] + [row % (4, 4096)] * 2 + [row % (2, 8192)] * 3) + "\n")
            p = run_bench(os.path.join("07_backward", "bench.sh"), d, ["summary"])  # ROUNDS=1
            with open(os.path.join(ch07.path, "summary.txt")) as f:
                text = " ".join(f.read().split())
            self.assertIn("peers: their fastest of 2 to 3 rounds,", text, p.stdout + p.stderr)


class StageRecords(unittest.TestCase):
    """Which records each run writes (their kernel digests vouch for the timings of the files the run wrote:
    provenance.py check): a whole run the chapter's provenance.json; a stage run on its own NAME.provenance.json for
    its files, the sweep's only when both sweeps ran at every N; the tests stage its own; the summary none. The bench
    runs with stand-ins for nvidia-smi, nvcc and compute-sanitizer, and the chapter's program as built here (which
    finds no GPU)."""

    def bench(self, out, *stages, **env):
        return run_bench(os.path.join("07_backward", "bench.sh"), out, stages, {
            "nvcc": "exit 1", "compute-sanitizer": 'echo "========= ERROR SUMMARY: 0 errors"'}, **env)

    def test_each_run_records_what_it_timed(self):
        if not os.access(os.path.join(ROOT, "ch07", "run"), os.X_OK):
            self.skipTest("ch07/run is not built here (make ch07)")
        with tempfile.TemporaryDirectory() as d:
            ch07 = Folder(os.path.join(d, "ch07"))
            # the summary: the header line, no record
            p = self.bench(d, "summary")
            self.assertIn("== chapter 07 bench on Stand-in, ", p.stdout)
            self.assertEqual(ch07.records(), ["provenance.json"], p.stdout + p.stderr)
            # the tests stage: its own; a timing stage run on its own: the record of its files
            p = self.bench(d, "tests", "tiles", "hopper")
            self.assertEqual(ch07.records(), ["hopper.provenance.json", "provenance.json", "tests_gpu.provenance.json",
                                              "tiles.provenance.json"], p.stdout + p.stderr)
            self.assertTrue(ch07.whole_record_kept())
            # one sweep, or both at some N: the records of its cells, none of sweep.csv (its other rows are not this
            # run's); the last cell: the sweep's, merged from the twelve
            p = self.bench(d, "sweep64")
            self.assertIn("bench: sweep d = 128, N = 512 not measured: no sweep record yet", p.stdout)
            self.bench(d, "sweep", SWEEP_N="512")
            self.assertNotIn("sweep.provenance.json", ch07.records())
            cells = ["d%d_n%d.json" % (dd, n) for dd in (128, 64) for n in (512, 1024, 2048, 4096, 8192, 16384)]
            self.assertEqual(sorted(os.listdir(os.path.join(ch07.path, "sweep.parts"))),
                             sorted(c for c in cells if c.startswith("d64_") or c == "d128_n512.json"))
            p = self.bench(d, "sweep128", SWEEP_N="1024 2048 4096 8192 16384")
            self.assertIn("sweep.provenance.json", ch07.records(), p.stdout + p.stderr)
            with open(os.path.join(ch07.path, "sweep.provenance.json")) as f:
                self.assertEqual(sorted(part["part"] for part in json.load(f)["parts"]), sorted(cells))
            self.assertTrue(ch07.whole_record_kept())
            # a cell measured with other code (its record altered): the next sweep's record is not written
            os.remove(os.path.join(ch07.path, "sweep.provenance.json"))
            with open(os.path.join(ch07.path, "sweep.parts", "d64_n512.json")) as f:
                other = json.load(f)
            other["kernels"][0]["digest"] = "0" * 16
            with open(os.path.join(ch07.path, "sweep.parts", "d64_n512.json"), "w") as f:
                json.dump(other, f)
            p = self.bench(d, "sweep128", SWEEP_N="512")
            self.assertIn("d64_n512.json measured other kernels", p.stderr)
            self.assertNotIn("sweep.provenance.json", ch07.records())
            # N not of the sweep: bad input
            p = self.bench(d, "sweep64", SWEEP_N="512 300")
            self.assertEqual((p.returncode, p.stderr.strip()),
                             (2, "bench: SWEEP_N: N from 512 1024 2048 4096 8192 16384 (got '300')"))
            # a whole run: the chapter's record
            p = self.bench(d)
            self.assertFalse(ch07.whole_record_kept(), p.stdout + p.stderr)
            with open(os.path.join(ch07.path, "provenance.json")) as f:
                self.assertIn('"date_utc"', f.read())


class WaysUnderSanitizers(unittest.TestCase):
    def test_it_builds_runs_each_way_under_both_tools_and_keeps_the_lines_the_blocks_read(self):
        # stand-ins: an nvcc that writes a kernel program printing its way's result (and a line no block reads), and
        # a compute-sanitizer that runs it and prints its summary under the '=' prefix
        with tempfile.TemporaryDirectory() as d:
            nvcc = os.path.join(d, "nvcc")
            with open(nvcc, "w") as f:
                f.write('#!/bin/bash\nwhile [ "$1" != -o ]; do shift; done\n'
                        'printf \'#!/bin/bash\\necho "$*: 0 of 32 sums wrong (ok)"\\necho "a line of its own"\\n\' > "$2"\n'
                        'chmod +x "$2"\n')
            san = os.path.join(d, "compute-sanitizer")
            with open(san, "w") as f:
                f.write('#!/bin/bash\ntool=$2; shift 2\n"$@"\n'
                        '[ $tool = racecheck ] && echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, '
                        '0 warnings)" || echo "========= ERROR SUMMARY: 0 errors"\n')
            for x in (nvcc, san):
                os.chmod(x, 0o755)
            p = subprocess.run(["bash", "-c", function("ways_under_sanitizers") + 'ways_under_sanitizers "$@"', "-",
                                "tests/ch07/stage_release.cu", "every", "lane0 2"], cwd=ROOT, capture_output=True,
                               text=True, env=dict(os.environ, NVCC=nvcc, PATH=d + os.pathsep + os.environ["PATH"]))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.splitlines(), [
            "$ nvcc -arch=native -Icommon -o stage_release tests/ch07/stage_release.cu",
            "$ compute-sanitizer --tool racecheck ./stage_release every", "every: 0 of 32 sums wrong (ok)",
            "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)",
            "$ compute-sanitizer --tool synccheck ./stage_release every", "every: 0 of 32 sums wrong (ok)",
            "ERROR SUMMARY: 0 errors",
            "$ compute-sanitizer --tool racecheck ./stage_release lane0 2", "lane0 2: 0 of 32 sums wrong (ok)",
            "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)",
            "$ compute-sanitizer --tool synccheck ./stage_release lane0 2", "lane0 2: 0 of 32 sums wrong (ok)",
            "ERROR SUMMARY: 0 errors"])


class Kernels(unittest.TestCase):
    def build(self, name):
        # the tests stage compiles them on the GPU machine: they compile here too (sm_90)
        nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
        if not nvcc:
            self.skipTest("nvcc is not installed here: tests/ch07/%s.cu not compiled" % name)
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        exe = os.path.join(d, name)
        subprocess.run([nvcc, "-arch=sm_90", "-I" + os.path.join(ROOT, "common"), "-o", exe,
                        os.path.join(ROOT, "tests", "ch07", name + ".cu")], check=True)
        return exe

    def refuses(self, exe, bad):
        p = subprocess.run([exe] + bad, capture_output=True, text=True)
        self.assertEqual(p.returncode, 2, bad)
        self.assertIn("usage:", p.stderr)

    def test_the_hand_over_builds_and_refuses_a_bad_argument(self):
        exe = self.build("handover")
        for bad in (["both"], [], ["arrive", "aligned"], ["unaligned", "0"], ["unaligned", "9"],
                    ["unaligned", "8x"], ["unaligned", "8", "both"], ["unaligned", "8", "wait", "fences"],
                    ["unaligned", "8", "wait", "fence", "more"], ["unaligned", "8", "wait", "ds", "fence"],
                    ["unaligned", "8", "wait", "fence", "fence"], ["unaligned", "8", "wait", "fence", "ds", "ds"]):
            self.refuses(exe, bad)

    def test_the_stages_build_and_refuse_a_bad_argument(self):
        exe = self.build("stage_release")
        for bad in ([], ["lane1"], ["every", "0"], ["every", "9"], ["every", "8x"], ["every", "8", "more"]):
            self.refuses(exe, bad)


if __name__ == "__main__":
    unittest.main()
