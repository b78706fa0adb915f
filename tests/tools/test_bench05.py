"""Chapter 05's bench.sh where it needs no GPU: a bad ROUNDS or an unknown stage is refused (exit 2) before the GPU
is looked for; and bench-lib.sh's parts the benches share: peers_fastest, which the summaries of chapters 05 and 06
read the peers through (each peer's fastest round at each shape, the side that favours the peer), and gpu_tests and
sanitizer_run, the tests stages' run of a test binary's GPU tests and of one compute-sanitizer check (chapters 05
and 07); bench_header's named record (a stage's own, beside the timings')."""
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def bench(*args, rounds=None):
    env = dict(os.environ)
    env.pop("ROUNDS", None)
    if rounds is not None:
        env["ROUNDS"] = rounds
    with tempfile.TemporaryDirectory() as d:
        return subprocess.run(["bash", os.path.join(ROOT, "05_tensor_cores", "bench.sh"), d] + list(args), env=env,
                              capture_output=True, text=True, cwd=ROOT)


class Arguments(unittest.TestCase):
    def test_a_bad_rounds_or_stage_is_refused(self):
        for r in ("0", "x", "-1", "2.5", "03", " "):
            p = bench(rounds=r)
            self.assertEqual(p.returncode, 2, "ROUNDS=%r" % r)
            self.assertIn("ROUNDS must be a whole number", p.stderr)
        for ch in ("06_flash_v3", "07_backward"):  # the other benches that time the peers in rounds
            env = dict(os.environ, ROUNDS="x")
            p = subprocess.run(["bash", os.path.join(ROOT, ch, "bench.sh"), "/nonexistent"], env=env,
                               capture_output=True, text=True, cwd=ROOT)
            self.assertEqual(p.returncode, 2, ch)
            self.assertIn("ROUNDS must be a whole number", p.stderr)
        p = bench("sweep")
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown stage 'sweep'", p.stderr)

    def test_good_arguments_pass_the_checks(self):
        # past the checks, the script looks for a GPU: without one it says so and exits 0; with one it would measure,
        # which a unit test must not start
        if subprocess.run("nvidia-smi -L 2>/dev/null | grep -q '^GPU'", shell=True).returncode == 0:
            self.skipTest("a GPU is here: the bench would run")
        for args, r in (((), None), (("tests",), "2"), ((), "12")):
            p = bench(*args, rounds=r)
            self.assertEqual(p.returncode, 0, (args, r, p.stderr))
            self.assertIn("needs a CUDA device", p.stdout)


class PeersFastest(unittest.TestCase):
    def test_each_peer_and_shape_keeps_its_smallest_median(self):
        csv = ("peer,gpu,torch,B,H,N,d,dtype,causal,time_ms_median,time_ms_min\n"
               "sdpa_flash,G,t,4,16,4096,128,bf16,0,2.50,2.4\n"
               "sdpa_cudnn,G,t,4,16,4096,128,bf16,0,1.90,1.8\n"
               "sdpa_flash,G,t,4,16,4096,128,bf16,1,1.30,1.2\n"
               "sdpa_flash,G,t,4,16,4096,128,bf16,0,2.45,2.4\n"
               "sdpa_cudnn,G,t,4,16,4096,128,bf16,0,10.5,1.8\n"
               "sdpa_flash,G,t,4,16,4096,128,fp16,0,2.60,2.4\n")
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.write(csv)
        try:
            p = subprocess.run(["bash", "-c", '. common/scripts/bench-lib.sh; peers_fastest "$1"', "-", f.name],
                               cwd=ROOT, capture_output=True, text=True, check=True)
        finally:
            os.unlink(f.name)
        self.assertEqual(p.stdout.splitlines(), [
            "sdpa_flash|4|16|4096|128|bf16|0|2.45",   # the second round's, smaller
            "sdpa_cudnn|4|16|4096|128|bf16|0|1.90",   # 10.5 is larger by value, not by text
            "sdpa_flash|4|16|4096|128|bf16|1|1.30",   # another mask: another shape
            "sdpa_flash|4|16|4096|128|fp16|0|2.60"])  # another storage type: another shape


class PeerRounds(unittest.TestCase):
    """peer_rounds: the rounds each peer's fastest is the fastest of, counted in the file (a row a round)."""

    def rounds(self, rows):
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.write("peer,gpu,torch,B,H,N,d,dtype,causal,time_ms_median\n" + "".join(r + "\n" for r in rows))
        try:
            return subprocess.run(["bash", "-c", '. common/scripts/bench-lib.sh; peer_rounds "$1"', "-", f.name],
                                  cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        finally:
            os.unlink(f.name)

    def test_it_counts_the_rows_of_each_peer_and_shape(self):
        a, b = "sdpa_flash,G,t,4,16,4096,128,bf16,0,2.5", "sdpa_cudnn,G,t,4,16,4096,128,bf16,0,1.9"
        c = "sdpa_flash,G,t,4,16,4096,128,bf16,1,1.3"  # another mask: another shape
        self.assertEqual(self.rounds([a, b, a, b]), "2")
        self.assertEqual(self.rounds([a, b, c, a, b, a, c]), "2 to 3")
        self.assertEqual(self.rounds([]), "0")



class GpuTests(unittest.TestCase):
    def run_with(self, script):
        """bench-lib's gpu_tests on a stand-in test binary (a script printing what Criterion would): its exit status,
        what it printed, and the log and the TAP file's path it was given."""
        with tempfile.TemporaryDirectory() as d:
            t = os.path.join(d, "test_chXX")
            if script is not None:
                with open(t, "w") as f:
                    f.write("#!/bin/bash\necho \"args: $*\"\n" + script)
                os.chmod(t, 0o755)
            p = subprocess.run(["bash", "-c", '. common/scripts/bench-lib.sh; gpu_tests "$1" "$2"', "-", t, d],
                               cwd=ROOT, capture_output=True, text=True)
            log = open(os.path.join(d, "tests_gpu.log")).read() if os.path.exists(os.path.join(d, "tests_gpu.log")) \
                else None
            return p.returncode, p.stdout, log, d

    def test_it_reports_the_synthesis_and_fails_with_the_tests(self):
        rc, out, log, d = self.run_with("echo '[====] Synthesis: Tested: 3 | Passing: 3 | Failing: 0 | Crashing: 0'\n")
        self.assertEqual(rc, 0, out)
        self.assertIn("test_chXX gpu/*: rc=0 [====] Synthesis: Tested: 3 | Passing: 3", out)
        self.assertTrue(log.startswith("$ REQUIRE_GPU=1 "), log)
        self.assertIn("args: --filter=gpu/* --jobs 4 --tap=%s/tests_gpu.tap" % d, log)
        rc, out, log, _ = self.run_with("echo '[====] Synthesis: Tested: 3 | Passing: 2 | Failing: 1 | Crashing: 0'\n"
                                        "exit 1\n")
        self.assertEqual(rc, 1, out)
        self.assertIn("bench: FAILED", out)
        rc, out, log, _ = self.run_with(None)
        self.assertEqual(rc, 1, out)
        self.assertIn("not found", out)
        self.assertIsNone(log)


class SanitizerRun(unittest.TestCase):
    def test_it_logs_the_run_prints_the_summary_and_returns_the_status(self):
        # a stand-in compute-sanitizer first on PATH: it prints its arguments and a summary line, and exits as asked
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "compute-sanitizer"), "w") as f:
                f.write("#!/bin/bash\necho \"args: $*\"\necho '========= RACECHECK SUMMARY: 1 hazard displayed "
                        "(1 error, 0 warnings)'\nexit ${RC:-0}\n")
            os.chmod(os.path.join(d, "compute-sanitizer"), 0o755)
            log = os.path.join(d, "run.log")
            for rc in (0, 9):
                p = subprocess.run(["bash", "-c", '. common/scripts/bench-lib.sh; sanitizer_run "$@"', "-", log,
                                    "racecheck", "./chXX/run", "--kernel", "k", "--seq", "77"], cwd=ROOT,
                                   capture_output=True, text=True,
                                   env=dict(os.environ, PATH=d + os.pathsep + os.environ["PATH"], RC=str(rc)))
                self.assertEqual(p.returncode, rc)
                self.assertEqual(p.stdout, "RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n")
                with open(log) as f:
                    text = f.read()
                self.assertTrue(text.startswith("$ compute-sanitizer --tool racecheck --error-exitcode 9 ./chXX/run "
                                                "--kernel k --seq 77\n"), text)
                self.assertIn("args: --tool racecheck --error-exitcode 9 ./chXX/run --kernel k --seq 77\n", text)

class BenchHeader(unittest.TestCase):
    def test_a_named_record_leaves_the_benchs_own(self):
        # bench_header NN NAME records NAME.provenance.json in $out (a stage run on its own: chapter 05's tests), and
        # leaves provenance.json, the record of the timings, as it was; with - it records nothing; without NAME it
        # writes provenance.json
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "provenance.json"), "w") as f:
                f.write("the timings' record\n")
            sh = '. common/scripts/bench-lib.sh; out=$1; bench_header 05 %s'
            p = subprocess.run(["bash", "-c", sh % "tests_gpu", "-", d], cwd=ROOT, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(p.stdout.startswith("== chapter 05 bench on "), p.stdout)
            with open(os.path.join(d, "provenance.json")) as f:
                self.assertEqual(f.read(), "the timings' record\n")
            with open(os.path.join(d, "tests_gpu.provenance.json")) as f:
                self.assertIn('"date_utc"', f.read())
            # with - the line alone (a summary): no record written
            p = subprocess.run(["bash", "-c", sh % "-", "-", d], cwd=ROOT, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(p.stdout.startswith("== chapter 05 bench on "), p.stdout)
            self.assertEqual(sorted(os.listdir(d)), ["provenance.json", "tests_gpu.provenance.json"])
            with open(os.path.join(d, "provenance.json")) as f:
                self.assertEqual(f.read(), "the timings' record\n")
            p = subprocess.run(["bash", "-c", sh % "", "-", d], cwd=ROOT, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(os.path.join(d, "provenance.json")) as f:
                self.assertIn('"date_utc"', f.read())


if __name__ == "__main__":
    unittest.main()
