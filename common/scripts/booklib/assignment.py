"""A student's copy of one chapter (`make assignment`), and the list of the book's assignments.

An assignment is a block of a chapter's own source, between
    /* ASSIGNMENT BEGIN name [suite...]: ... */
    /* ASSIGNMENT STUB name
    ...the stub: what the student starts from (only // comments inside)...
    */
    ...the book's lines: the solution...
    /* ASSIGNMENT END name */
In the copy the STUB comment and the solution are replaced by the stub's lines; the BEGIN and END lines stay to
show where to write. A block in a .cu file is graded by the GPU tests (gpu), any other by the CPU tests (cpu);
[suite...] names the test suites of the chapter that catch the stub (a Criterion filter, make grade TESTS=...).
A block in a header that the kernels include too (chapter 04's layouts.h) is cpu, its stub caught by a CPU suite;
naming gpu among its suites grades the kernels built on the student's lines as well, where a GPU is.

The copy holds the chapter, common/, the chapter's tests, the Makefile, README.md and LICENSE (a buildable tree
in which `make grade CH=NN` grades the student's work), and the plot scripts with the chapter's plots and its
committed results under results/latest, so that `make plots` and `make reproduce` work there as in the book."""
import glob
import os
import re
import shutil
import sys


class Malformed(Exception):
    pass


def blocks(path):
    """[(name, filter)] of one file's blocks, their shape checked (Malformed names the line)."""
    out, name, begin, filt = [], None, 0, ""
    with open(path, errors="replace") as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        w = line.split()
        if "/* ASSIGNMENT BEGIN " in line:
            if name:
                raise Malformed("%s:%d: BEGIN inside %s" % (path, n, name))
            name, begin = w[3].rstrip(":"), n
            m = re.search(r"\[([^]]*)\]", line)
            if not m or not m.group(1).strip():
                raise Malformed("%s:%d: BEGIN %s names no [suites]" % (path, n, name))
            filt = "@(%s)/*" % "|".join(m.group(1).split())
        elif "/* ASSIGNMENT STUB " in line and name and w[3] != name:
            raise Malformed("%s:%d: STUB %s inside %s" % (path, n, w[3], name))
        elif "/* ASSIGNMENT END " in line:
            if w[3] != name:
                raise Malformed("%s:%d: END %s without its BEGIN" % (path, n, w[3]))
            out.append((name, filt))
            name = None
    if name:
        raise Malformed("%s:%d: BEGIN %s without its END" % (path, begin, name))
    return out


def marked(d):
    return [f for f in sorted(glob.glob(d + "/*")) if os.path.isfile(f) and "ASSIGNMENT BEGIN " in open(f, errors="replace").read()]


def listing():
    for d in sorted(x.rstrip("/") for x in glob.glob("[0-9][0-9]_*/")):
        for f in marked(d):
            for name, filt in blocks(f):
                print(d[:2], name, f, "gpu" if f.endswith(".cu") else "cpu", filt)


def cut(path, src, chosen):
    """The file's text with the chosen blocks' solutions replaced by their stubs."""
    out, state = [], 0
    for n, line in enumerate(src.split("\n"), 1):
        if state == 0 and "/* ASSIGNMENT BEGIN " in line and line.split()[3].rstrip(":") in chosen:
            state, name = 1, line.split()[3].rstrip(":")
        elif state == 1:
            if "/* ASSIGNMENT STUB " not in line:
                raise Malformed("%s:%d: no STUB line after BEGIN %s" % (path, n, name))
            state = 2
            continue
        elif state == 2 and re.match(r"^[ \t]*\*/[ \t]*$", line):
            state = 3                   # the end of the stub
            continue
        elif state == 3:
            if "/* ASSIGNMENT END " not in line:
                continue                # a line of the solution
            state = 0
        out.append(line)
    return "\n".join(out)


def copy(ch, dest, shown, names):
    """Chapter ch's copy into dest (shown: dest as given), with the named assignments (default all) cut."""
    dirs = [d.rstrip("/") for d in sorted(glob.glob(ch + "_*/")) if os.path.isfile(d + "kernels.cu")] if ch else []
    if not dirs:
        print("cut-assignment: no chapter %s here (CH=NN, one of: %s)"
              % (ch, " ".join(d[:2] for d in sorted(glob.glob("[0-9][0-9]_*/")))), file=sys.stderr)
        return 2
    d = dirs[0]
    if os.path.exists(dest) and os.listdir(dest):
        print("cut-assignment: %s exists and is not empty; remove it or give another DEST" % shown, file=sys.stderr)
        return 2
    available = [n for f in marked(d) for n, _ in blocks(f)]
    if not available:
        print("cut-assignment: chapter %s has no assignment" % ch, file=sys.stderr)
        return 2
    for n in names:
        if n not in available:
            print("cut-assignment: chapter %s has no assignment %s (it has: %s)" % (ch, n, " ".join(available)),
                  file=sys.stderr)
            return 2
    chosen = names or available
    os.makedirs(os.path.join(dest, "tests"), exist_ok=True)
    for f in ("Makefile", "README.md", "LICENSE", ".gitignore"):
        shutil.copy2(f, dest)
    for t in ("common", d, "tests/ch" + ch):
        shutil.copytree(t, os.path.join(dest, t), symlinks=True)
    for f in glob.glob("tests/*.h"):
        shutil.copy2(f, os.path.join(dest, "tests"))
    # The plot scripts and the chapter's own plots (its README shows them); the chapter's results under the folder
    # results/latest names, so that make plots redraws its roofline before the student's first make reproduce.
    os.makedirs(os.path.join(dest, "plots"), exist_ok=True)
    for f in sorted(glob.glob("plots/*.sh") + glob.glob("plots/*.gp") + glob.glob("plots/*.awk") +
                    glob.glob("plots/ch%s_*" % ch)):
        shutil.copy2(f, os.path.join(dest, "plots"))
    latest = os.readlink("results/latest") if os.path.islink("results/latest") else ""
    if latest and os.path.isdir("results/%s/ch%s" % (latest, ch)):
        shutil.copytree("results/%s/ch%s" % (latest, ch), os.path.join(dest, "results", latest, "ch" + ch))
        os.symlink(latest, os.path.join(dest, "results", "latest"))
    for f in marked(d):
        with open(f) as src:
            text = src.read()
        stub = cut(f, text, chosen)
        with open(os.path.join(dest, f), "w") as out:
            out.write(stub)
        # A file that no chosen assignment changed keeps its time as well as its mode: make sees it as old as the
        # book's, so a build seeded with the book's objects does not compile what includes it again.
        (shutil.copystat if stub == text else shutil.copymode)(f, os.path.join(dest, f))
    print("assignment: chapter %s (%s) written to %s" % (ch, ", ".join(chosen), shown))
    print("            cd %s && make grade CH=%s       (a stub compiles, and fails the tests until it is written: "
          "a kernel's, on a GPU)" % (shown, ch))
    return 0


def main(args, root):
    dest_abs = [os.path.abspath(a) for a in args[1:2]]
    os.chdir(root)
    try:
        if args[:1] == ["--list"]:
            listing()
            return 0
        if len(args) < 2:
            print("usage: cut-assignment.sh CH DEST [NAME...]   or   cut-assignment.sh --list", file=sys.stderr)
            return 2
        return copy(args[0], dest_abs[0], args[1], args[2:])
    except Malformed as e:
        print(e, file=sys.stderr)
        return 1
