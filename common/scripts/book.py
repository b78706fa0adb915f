#!/usr/bin/env python3
"""book.py COMMAND ...: the book's tooling over its results files (Python 3 standard library only).

  docs [--check] [README...]        the measured tables of the chapter READMEs (make docs, make docs-check)
  report [RESULTS_DIR]              the claims of ARTICLES.md beside our model and measurements (make report)
  compare BASE NEW                  a run's results against a reference run (make compare)
  profile CH [options] | profile --from REPORT_CSV NCU_CSV
                                    model | counted | DRAM bytes per kernel (make profile)
  profile-join REPORT_CSV NCU_CSV   the joined CSV on stdout (the benches)
  profile-table JOINED_CSV          a joined CSV as two tables
  ncu-summary RUN_CSV ROW NCU_CSV STALLS_CSV KERNEL
                                    the ncu block of a bench summary
  ncu-value NCU_CSV KERNEL METRIC   one metric of a kernel function (nothing when ncu did not report it)
  ncu-sass SOURCE_CSV [TOP]         where the warps wait: ncu's source counters (its SASS page as CSV) by stall
                                    reason, and the TOP instructions (default 30) with the most samples
  csv-rows CSV COLS [COL=VALUE...]  columns COLS (comma-separated) of the matching rows, joined by '|'
  summary CH CSV                    a chapter's total row (else its kernels' rows), as make reproduce prints it
  grade TEST_BINARY [XML [FILTER]]  the grade sheet of a chapter's tests (make grade)
  assignment CH DEST [NAME...] | assignment --list
                                    a student's copy of a chapter (make assignment), the book's assignments

Bad input (a file missing, empty or truncated, a column missing): a message on stderr and exit 2; nothing
half-written (files are written beside their target, then renamed)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True          # nothing written into the tree but what a command is for

from booklib import assignment, compare, docs, grade, report, tools  # noqa: E402
from booklib.results import BadInput  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    cmd, args = argv[0], argv[1:]
    commands = {
        "docs": lambda: docs.main(args),
        "report": lambda: report.main(args, ROOT),
        "compare": lambda: compare.main(args),
        "profile": lambda: tools.profile_main(args, ROOT),
        "profile-join": lambda: tools.profile_join(args),
        "profile-table": lambda: tools.profile_table(args),
        "ncu-summary": lambda: tools.ncu_summary(args),
        "ncu-value": lambda: tools.ncu_value(args),
        "ncu-sass": lambda: tools.ncu_sass(args),
        "csv-rows": lambda: tools.csv_rows(args),
        "summary": lambda: tools.summary(args),
        "grade": lambda: grade.main(args),
        "assignment": lambda: assignment.main(args, ROOT),
    }
    if cmd not in commands:
        print("book: no command '%s' (one of: %s)" % (cmd, ", ".join(commands)), file=sys.stderr)
        return 2
    if cmd in ("docs", "report", "compare"):
        os.chdir(ROOT)          # their paths are relative to the repository, as make gives them
    try:
        status = commands[cmd]()
        sys.stdout.flush()
        return status
    except BadInput as e:
        print("%s: %s" % (cmd, e), file=sys.stderr)
        return 2
    except BrokenPipeError:
        sys.stdout = None           # the reader has gone: nothing more to say, and no error at exit
        return 0
    except OSError as e:            # stdout not writable (a full disk, /dev/full)
        sys.stdout = None
        print("%s: cannot write its output: %s" % (cmd, e.strerror), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
