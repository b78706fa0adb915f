"""Chapter 06's bench.sh without a GPU: which records each run writes. A row's timing stands on the record of the run
that wrote its file (common/scripts/provenance.py check), so a stage run on its own must record the files it wrote,
and no others: a whole run the chapter's provenance.json, before anything is measured; a stage NAME.provenance.json
naming its files, the sweep's only once both sweeps have run in one call (each rewrites only its d's rows of the
files they share); the summary none. The bench runs with a stand-in for nvidia-smi and the chapters' programs as built
here (which find no GPU, so every run fails fast and nothing is measured)."""
import json
import os
import tempfile
import unittest

from bench_records import ROOT, Folder, run_bench


class StageRecords(unittest.TestCase):
    def test_each_run_records_what_it_timed(self):
        for program in ("ch05/run", "ch06/run"):
            if not os.access(os.path.join(ROOT, program), os.X_OK):
                self.skipTest("%s is not built here (make ch05 ch06)" % program)
        with tempfile.TemporaryDirectory() as d:
            ch06 = Folder(os.path.join(d, "ch06"))

            def bench(*stages):
                return run_bench(os.path.join("06_flash_v3", "bench.sh"), d, stages, NCU="/nonexistent")

            def files_of(name):
                with open(os.path.join(ch06.path, name + ".provenance.json")) as f:
                    return json.load(f)["files"]

            # the summary: the header line, no record
            p = bench("summary")
            self.assertIn("== chapter 06 bench on Stand-in, ", p.stdout)
            self.assertEqual(ch06.records(), ["provenance.json"], p.stdout + p.stderr)
            # stages on their own: each the record of its files, and only of those
            p = bench("tiles", "ncu", "ncu_short")
            self.assertEqual(ch06.records(), ["ncu.provenance.json", "ncu_short.provenance.json", "provenance.json",
                                              "tiles.provenance.json"], p.stdout + p.stderr)
            self.assertEqual(files_of("tiles"), ["tiles.csv"])
            self.assertEqual(files_of("ncu"), ["ncu.csv", "ncu_stalls.csv", "ncu_tensor.csv", "ncu_run.csv"])
            self.assertEqual(files_of("ncu_short"), ["ncu_short.csv", "ncu_short_run.csv"])
            self.assertTrue(ch06.whole_record_kept())
            # one sweep: no record of the files both sweeps write; both in one call: theirs
            bench("sweep64")
            self.assertNotIn("sweep.provenance.json", ch06.records())
            p = bench("sweep128", "sweep64")
            self.assertIn("sweep.provenance.json", ch06.records(), p.stdout + p.stderr)
            self.assertEqual(files_of("sweep"), ["sweep.csv", "ch05_sweep.csv", "peers.csv"])
            self.assertTrue(ch06.whole_record_kept())
            # a whole run: the chapter's record
            p = bench()
            self.assertFalse(ch06.whole_record_kept(), p.stdout + p.stderr)
            with open(os.path.join(ch06.path, "provenance.json")) as f:
                self.assertIn('"date_utc"', f.read())


if __name__ == "__main__":
    unittest.main()
