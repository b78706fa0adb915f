"""The grade sheet of one chapter's Criterion test binary (`make grade`): one line per test (PASS, FAIL with its
message, or NOT GRADED with the reason), then the totals, from Criterion's TAP report. Tests that skip for want
of a CUDA device are not graded: they need a GPU. Exit status 1 when a test failed or crashed, or the binary did
not run to its end."""
import os
import re
import subprocess
import sys
import tempfile


def sheet(tap, filtered):
    """(lines of the sheet, passed, failed, not graded for want of a GPU, other not graded)."""
    out, passed, failed, gpu, other = [], 0, 0, 0, 0
    test, msg, where = None, [], ""

    def flush():
        if test is not None:
            out.append("%-11s %s" % ("FAIL", test))
            out.extend("            " + m for m in (msg[:6] or ["(no message)"]))
            if len(msg) > 6:
                out.append("            (%d more lines: run the test binary for all of them)" % (len(msg) - 6))
    for line in tap.splitlines():
        if line.startswith("ok - "):
            flush()
            test, msg = None, []
            name = line.split()[2]
            if "# SKIP" in line:
                reason = re.sub(r".*# SKIP *", "", line)
                if filtered and reason == "test was skipped":
                    continue                # outside the filter: not part of this grade
                if reason.startswith("no CUDA device"):
                    out.append("%-11s %s: needs a GPU" % ("NOT GRADED", name))
                    gpu += 1
                else:
                    out.append("%-11s %s: %s" % ("NOT GRADED", name, reason))
                    other += 1
            else:
                out.append("%-11s %s" % ("PASS", name))
                passed += 1
        elif line.startswith("not ok - "):
            flush()
            test, msg, where = line.split()[3], [], ""
            failed += 1
            rest = re.sub(r"^\([0-9.]*s\) *$", "", re.sub(r"^not ok - [^ ]* *", "", line))
            if rest:
                msg.append(rest)
        elif test is not None and re.match(r"^  - .*: \|\+$", line):
            where = line[4:-3]
        elif test is not None and line.startswith("      "):
            msg.append((where + " " if where else "") + line.strip())
            where = ""
    flush()
    return out, passed, failed, gpu, other


def jobs():
    """Tests one at a time where a CUDA device is (GPU tests must not share it); without one, TEST_JOBS at a time
    (default 2), as run-tests.sh runs them."""
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    except OSError:
        listed = b""
    return "1" if re.search(rb"^GPU", listed, re.M) else os.environ.get("TEST_JOBS", "2")


def main(args):
    if not args:
        print("usage: grade.sh TEST_BINARY [XML_FILE [FILTER]]", file=sys.stderr)
        return 2
    binary, xml, filt = (args + ["", ""])[:3]
    print("== grade: %s%s" % (binary, " (tests %s)" % filt if filt else ""), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        tap = os.path.join(tmp, "tap")
        cmd = [binary, "--jobs", jobs(), "--tap=" + tap] + (["--xml=" + xml] if xml else []) + \
            (["--filter=" + filt] if filt else [])
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        log = p.stdout.decode(errors="replace")
        if "Synthesis: Tested" not in log or not os.path.isfile(tap):
            sys.stdout.write(log)
            print("grade: FAIL: %s did not run to its end (exit status %d); nothing was graded"
                  % (binary, p.returncode if p.returncode >= 0 else 128 - p.returncode))
            return 1
        with open(tap, errors="replace") as f:
            lines, passed, failed, gpu, other = sheet(f.read(), bool(filt))
    total = "grade: %d passed, %d failed" % (passed, failed)
    if gpu:
        total += "; not graded: %d test%s that need%s a GPU (none here: run make grade on a machine with a CUDA GPU)" % (
            gpu, "" if gpu == 1 else "s", "s" if gpu == 1 else "")
    if other:
        total += "; not graded: %d other skipped test%s (reason above)" % (other, "" if other == 1 else "s")
    print("\n".join(lines + [total]))
    if xml:
        print("grade: JUnit XML written to " + xml)
    if not lines:
        print("grade: FAIL: no test ran%s" % (" (no test matches %s)" % filt if filt else ""))
        return 1
    if failed or p.returncode:
        print("grade: FAIL")
        return 1
    print("grade: PASS (every graded test passed)")
    return 0
