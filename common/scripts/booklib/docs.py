"""The measured tables of the chapter READMEs, from the committed results (`make docs` writes them, `make
docs-check` compares).

    <!-- MEASURED:NAME -->                 a generated block: replaced by what the generator NAME (NN_topic/readme_blocks.py)
    ...                                    writes, a table from the files of RESULTS/chNN/ and a one-line caption
    <!-- /MEASURED -->                     naming those files, the GPU, the CUDA version and the date
    <!-- MEASURED:NAME source=manual -->   a block written by hand (a log quoted): kept as it is

A generated block without a generator is an error (exit 1). --check writes nothing: it prints the differences
and exits 1 when a README is not what would be generated. Bad input (a results file missing, empty or truncated,
a column missing): a message and exit 2, every README left as it was."""
import difflib
import glob
import os
import re
import sys

from . import blocks
from .results import BadInput

OPEN = re.compile(r"^<!-- MEASURED:([A-Za-z0-9_]*) -->$")
CLOSE = "<!-- /MEASURED -->"


def generate(readme, gen):
    """The README's text with every generated block replaced; (text, names without a generator)."""
    with open(readme) as f:
        lines = f.read().split("\n")
    out, unknown, inside = [], [], False
    for line in lines:
        if inside:
            if line == CLOSE:
                inside = False
                out.append(line)
            continue
        out.append(line)
        m = OPEN.match(line)
        if not m:
            continue
        name = m.group(1)
        fn = getattr(gen, "block_" + name, None)
        if fn is None:
            unknown.append(name)
            continue
        out.extend(fn().rstrip("\n").split("\n"))
        inside = True
    if inside:
        raise BadInput("%s: a <!-- MEASURED --> block without its %s line" % (readme, CLOSE))
    return "\n".join(out), unknown


def main(args):
    check = bool(args) and args[0] == "--check"
    if check:
        args = args[1:]
    results = os.environ.get("RESULTS", "results/NVIDIA_H200")
    readmes = args or sorted(glob.glob("[0-9][0-9]_*/README.md"))
    gen = blocks.Blocks(results)
    new = {}
    status = 0
    for readme in readmes:
        text, unknown = generate(readme, gen)
        for name in unknown:
            print("docs: %s: block %s has no generator (block_%s in the chapter folder's readme_blocks.py);"
                  " mark it source=manual if it is written by hand" % (readme, name, name), file=sys.stderr)
            status = 1
        new[readme] = text
    for readme, text in new.items():
        with open(readme) as f:
            old = f.read()
        if old == text:
            continue
        if check:
            print("docs: %s differs from what `make docs` generates from %s:" % (readme, results))
            diff = difflib.unified_diff(old.split("\n"), text.split("\n"), lineterm="", n=3)
            for line in list(diff)[2:]:
                print(line)
            status = 1
        else:
            tmp = readme + ".tmp"
            with open(tmp, "w") as f:
                f.write(text)
            os.replace(tmp, readme)
            print("docs: %s updated" % readme)
    return status
