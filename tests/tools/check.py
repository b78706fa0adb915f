#!/usr/bin/env python3
"""check.py [--tap=FILE] [--jobs N]: the unit tests of the book's Python tooling (tests/tools/test_*.py, unittest),
reported the way a Criterion test binary reports ([PASS] / [FAIL] lines, the "Synthesis" line, a TAP file), so
that `make test` (common/scripts/run-tests.sh) counts them with the other tests. Exit status 1 when one failed."""
import os
import sys
import unittest


def tap_name(test):
    """A test's name as the TAP file and the [PASS]/[FAIL]/[SKIP] lines give it: tools::module_Class_test."""
    return "tools::%s" % test.id().split(".", 1)[1].replace(".", "_")


def main(argv):
    tap = next((a.split("=", 1)[1] for a in argv if a.startswith("--tap=")), None)
    here = os.path.dirname(os.path.abspath(__file__))
    suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py", top_level_dir=here)
    lines, passed, failed = [], 0, 0

    class Result(unittest.TestResult):
        def addSuccess(self, test):
            nonlocal passed
            passed += 1
            name = tap_name(test)
            print("[PASS] %s" % name)
            lines.append("ok - %s" % name)

        def _fail(self, test, err):
            nonlocal failed
            failed += 1
            name = tap_name(test)
            print("[----] %s" % self._exc_info_to_string(err, test).rstrip().replace("\n", "\n[----] "))
            print("[FAIL] %s" % name)
            lines.append("not ok - %s" % name)

        addFailure = _fail
        addError = _fail

        def addSkip(self, test, reason):
            # as Criterion reports a skip: not in the Synthesis line, an "ok ... # SKIP reason" line in the TAP file
            # (run-tests.sh counts those, with their reasons)
            name = tap_name(test)
            print("[SKIP] %s: %s" % (name, reason))
            lines.append("ok - %s # SKIP %s" % (name, reason))

    suite.run(Result())
    if tap:
        with open(tap, "w") as f:
            f.write("TAP version 13\n1..%d\n%s" % (len(lines), "".join(l + "\n" for l in lines)))
    print("[====] Synthesis: Tested: %d | Passing: %d | Failing: %d | Crashing: 0 " % (passed + failed, passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
