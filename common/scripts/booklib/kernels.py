"""Which kernels make each row of a chapter's results: the chapter declares it in NN_topic/kernels.txt, one line
per label of its CSVs' kernel column, "LABEL  REGEX" (a regex over the demangled function names of the chapter's
program, matched from the name's start; "-" for a row measured in no kernel of ours, such as a library call);
'#' starts a comment. provenance.py checks measured rows against these; the profile join gives a row the ncu
launches its regex names."""
import glob
import os
import re

from .results import BadInput

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))  # the book's


def chapter_labels(root=ROOT, error=BadInput):
    """{chapter_id: {label: compiled regex, or None for "-"}} from every NN_topic/kernels.txt under root; error
    (an exception class) on a malformed line."""
    labels = {}
    for path in sorted(glob.glob(os.path.join(root, "[0-9][0-9]_*", "kernels.txt"))):
        ch = os.path.basename(os.path.dirname(path))[:2]
        labels[ch] = {}
        with open(path) as f:
            for n, line in enumerate(f, 1):
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                parts = line.split(None, 1)
                if len(parts) != 2:
                    raise error("%s:%d: not \"LABEL  REGEX\"" % (os.path.relpath(path, root), n))
                try:
                    labels[ch][parts[0]] = None if parts[1] == "-" else re.compile(parts[1])
                except re.error as e:
                    raise error("%s:%d: bad regex (%s)" % (os.path.relpath(path, root), n, e))
    return labels


def names_function(regex, function):
    """Whether regex names the kernel function: matched from the start of its demangled name, or, for a bare
    function name such as ncu prints with --kernel-name-base function (no template arguments, no parameters), of
    that name followed by "<" or "(", the way every demangled name of it begins."""
    if regex is None:
        return False
    if "<" in function or "(" in function:
        return regex.match(function) is not None
    return any(regex.match(function + c) for c in "<(")
