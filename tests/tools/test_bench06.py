"""Chapter 06's bench.sh without a GPU: which records each run writes. A row's timing stands on the record of the run
that wrote its file (common/scripts/provenance.py check), so a stage run on its own must record the files it wrote,
and no others: a whole run the chapter's provenance.json, before anything is measured; a stage NAME.provenance.json
naming its files, the sweep's only once both sweeps have run in one call (each rewrites only its d's rows of the
files they share); the summary none. The bench runs with a stand-in for nvidia-smi and the chapters' programs as built
here (which find no GPU, so every run fails fast and nothing is measured)."""
import json
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class StageRecords(unittest.TestCase):
    def bench(self, out, *stages):
        with tempfile.TemporaryDirectory() as bin_dir:
            with open(os.path.join(bin_dir, "nvidia-smi"), "w") as f:
                f.write('#!/bin/bash\ncase "$*" in -L) echo "GPU 0: Stand-in (UUID: GPU-0)";; '
                        '*compute_cap*) echo 9.0;; *name*) echo Stand-in;; esac\n')
            os.chmod(os.path.join(bin_dir, "nvidia-smi"), 0o755)
            env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"], ROUNDS="1", NCU="/nonexistent")
            return subprocess.run(["bash", os.path.join(ROOT, "06_flash_v3", "bench.sh"), out] + list(stages),
                                  cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)

    def test_each_run_records_what_it_timed(self):
        for program in ("ch05/run", "ch06/run"):
            if not os.access(os.path.join(ROOT, program), os.X_OK):
                self.skipTest("%s is not built here (make ch05 ch06)" % program)
        with tempfile.TemporaryDirectory() as d:
            ch06 = os.path.join(d, "ch06")
            os.makedirs(ch06)
            with open(os.path.join(ch06, "provenance.json"), "w") as f:
                f.write("the timings' record\n")

            def records():
                return sorted(f for f in os.listdir(ch06) if f.endswith("provenance.json"))

            def files_of(name):
                with open(os.path.join(ch06, name + ".provenance.json")) as f:
                    return json.load(f)["files"]

            def whole_record_kept():
                with open(os.path.join(ch06, "provenance.json")) as f:
                    return f.read() == "the timings' record\n"

            # the summary: the header line, no record
            p = self.bench(d, "summary")
            self.assertIn("== chapter 06 bench on Stand-in, ", p.stdout)
            self.assertEqual(records(), ["provenance.json"], p.stdout + p.stderr)
            # stages on their own: each the record of its files, and only of those
            p = self.bench(d, "tiles", "ncu", "ncu_short")
            self.assertEqual(records(), ["ncu.provenance.json", "ncu_short.provenance.json", "provenance.json",
                                         "tiles.provenance.json"], p.stdout + p.stderr)
            self.assertEqual(files_of("tiles"), ["tiles.csv"])
            self.assertEqual(files_of("ncu"), ["ncu.csv", "ncu_stalls.csv", "ncu_tensor.csv", "ncu_run.csv"])
            self.assertEqual(files_of("ncu_short"), ["ncu_short.csv", "ncu_short_run.csv"])
            self.assertTrue(whole_record_kept())
            # one sweep: no record of the files both sweeps write; both in one call: theirs
            self.bench(d, "sweep64")
            self.assertNotIn("sweep.provenance.json", records())
            p = self.bench(d, "sweep128", "sweep64")
            self.assertIn("sweep.provenance.json", records(), p.stdout + p.stderr)
            self.assertEqual(files_of("sweep"), ["sweep.csv", "ch05_sweep.csv", "peers.csv"])
            self.assertTrue(whole_record_kept())
            # a whole run: the chapter's record
            p = self.bench(d)
            self.assertFalse(whole_record_kept(), p.stdout + p.stderr)
            with open(os.path.join(ch06, "provenance.json")) as f:
                self.assertIn('"date_utc"', f.read())


if __name__ == "__main__":
    unittest.main()
