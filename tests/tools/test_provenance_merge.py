"""provenance.py merge: the record of a run made in parts (a sweep measured over several calls) is written only when
every part measured the same code on the same GPU, and lists its parts; anything else writes nothing."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROVENANCE = os.path.join(ROOT, "common", "scripts", "provenance.py")


def record(date, digest="0123456789abcdef", gpu="NVIDIA H200", arch="sm_90", **more):
    kernel = {"program": "ch07/run", "build": "timed", "function": "k()", "name": "_Z1kv", "digest": digest,
              "instructions": 10}
    return dict({"commit": "c" + date[-2], "tree_clean": True, "date_utc": date, "gpu": gpu, "arch": arch,
                 "kernels": [kernel]}, **more)


class Merge(unittest.TestCase):
    def merge(self, parts):
        """provenance.py merge over {name: record}: (exit status, the merged record or None, stderr)."""
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for name, rec in parts.items():
                paths.append(os.path.join(d, name))
                with open(paths[-1], "w") as f:
                    f.write(rec if isinstance(rec, str) else json.dumps(rec))
            out = os.path.join(d, "whole.json")
            p = subprocess.run([sys.executable, PROVENANCE, "merge", out] + paths, capture_output=True, text=True)
            merged = None
            if os.path.exists(out):
                with open(out) as f:
                    merged = json.load(f)
            return p.returncode, merged, p.stderr

    def test_parts_of_the_same_code_make_the_newest_record_with_its_parts(self):
        rc, merged, err = self.merge({"b.json": record("2026-12-07T10:00:02Z", files=["sweep.csv"]),
                                      "a.json": record("2026-12-08T09:00:01Z"),
                                      "c.json": record("2026-12-07T10:00:02Z", tree_clean=False)})
        self.assertEqual(rc, 0, err)
        self.assertEqual(merged["date_utc"], "2026-12-08T09:00:01Z")
        self.assertNotIn("files", merged)
        self.assertEqual(merged["parts"], [
            {"part": "b.json", "commit": "c2", "tree_clean": True, "date_utc": "2026-12-07T10:00:02Z"},
            {"part": "c.json", "commit": "c2", "tree_clean": False, "date_utc": "2026-12-07T10:00:02Z"},
            {"part": "a.json", "commit": "c1", "tree_clean": True, "date_utc": "2026-12-08T09:00:01Z"}])

    def test_a_part_of_other_code_or_another_gpu_writes_nothing(self):
        for other, what in [(dict(digest="fedcba9876543210"), "kernels"), (dict(gpu="NVIDIA H100 80GB HBM3"), "GPU"),
                            (dict(arch="sm_80"), "architecture")]:
            rc, merged, err = self.merge({"old.json": record("2026-12-06T10:00:00Z", **other),
                                          "new.json": record("2026-12-07T10:00:00Z")})
            self.assertEqual((rc, merged), (1, None), other)
            self.assertIn("old.json measured other %s than new.json" % what, err)

    def test_bad_input_exits_2(self):
        rc, merged, err = self.merge({"a.json": record("2026-12-07T10:00:00Z"), "b.json": "{not json"})
        self.assertEqual((rc, merged), (2, None))
        self.assertIn("b.json: not JSON", err)
        p = subprocess.run([sys.executable, PROVENANCE, "merge", "only.json"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("usage: provenance.py merge OUT.json PART.json...", p.stderr)


if __name__ == "__main__":
    unittest.main()
