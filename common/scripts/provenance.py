#!/usr/bin/env python3
"""provenance.py: which code and which machine made a results folder, and whether its numbers still describe
the code of this tree.

    python3 common/scripts/provenance.py digest [--arch sm_90] [FILE...]
        one line per GPU kernel of the chapter programs (default chNN/run) or of FILE...: the digest of its
        machine code for ARCH, its instruction count, program:build:function (`make digest`)
    python3 common/scripts/provenance.py record OUT.json [--arch sm_XX] [--files NAME...]
        the record of a GPU run (`make reproduce` writes results/<GPU>/provenance.json, a bench its chNN/
        folder): commit and whether the tree was clean, nvcc, driver, ncu and PyTorch versions, GPU name,
        clocks as nvidia-smi reports them, date (UTC), the architecture (the GPU's, else sm_90) and the digest
        of every kernel of the build. Without a GPU the GPU fields say so; the digests need no GPU. --files: the
        names of the files the run wrote, beside the record: it vouches for those alone (a stage run on its own)
    python3 common/scripts/provenance.py merge OUT.json PART.json...
        the record of a run made in parts (a sweep measured over several calls, each part recorded on its own):
        written only when every PART measured the same code on the same GPU (equal kernels, digest for digest,
        and the same "gpu" and "arch"): the newest part's record, its "files" left out, with "parts" listing
        each part's file name, commit, whether its tree was clean, and date; else nothing written, exit 1,
        naming the part that differs
    python3 common/scripts/provenance.py check RESULTS_DIR
        the measured kernels of RESULTS_DIR whose code changed since a run that wrote their rows recorded it:
        RESULTS_DIR/provenance.json, a chapter's later chNN/provenance.json, or the record of a stage run on its
        own, chNN/NAME.provenance.json: for the files its "files" names, else for chNN/NAME.csv and NAME_*.csv
        (`make digest-check`); exit 1 when one did
    python3 common/scripts/provenance.py tools
        where cuobjdump and nvdisasm are; exit 2 when they are not here

The digest of a kernel is taken over its instruction words only (the hex of each instruction, scheduling bits
included), not over its name or the disassembler's text: equal digests mean the same machine code, so a
renamed kernel with the same code keeps its digest. Each chapter's .cu files are compiled twice into one
program (common/io_tally.cuh): "timed", and "counted" (-DCOUNT_IO), told apart by the counter that only the
counted build defines.

Which kernels a results row measured: each chapter declares it in NN_topic/kernels.txt, one line per label of
its CSVs' `kernel` column, "LABEL  REGEX" (REGEX over the demangled function names of that chapter's
program, a template's "void " left out, matched from the start; "-" for a row no kernel of the book produces, such as a cuBLAS call). A row
is stale when a kernel its label names now has code that the record does not hold; kernels no results row
names are "not measured", never stale.

For other tools: stale(results_dir) -> {(chapter_id, label): reason}, and ProvenanceError on a missing or
malformed record, a missing kernels.txt line, or no cuobjdump/nvdisasm. Bad input exits 2 with a message.

cuobjdump and nvdisasm: from the CUDA toolkit ($CUDA/bin, default /usr/local/cuda, or PATH), else from pip's
nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm, installed by common/scripts/ensure-deps.sh into
$XDG_CACHE_HOME/flash-attention-tools (default ~/.cache) or anywhere Python imports from.
"""
import concurrent.futures
import csv
import datetime
import fcntl
import glob
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys

from booklib import kernels

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT_ARCH = "sm_90"
COUNTER_SYMBOL = "io_counted_bytes"  # common/io_tally.cuh: defined only by a counted (-DCOUNT_IO) build
PIP_TOOLS = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "flash-attention-tools")
RECORD = "provenance.json"


class ProvenanceError(Exception):
    """Bad input or a missing tool: the message says which."""


# ---- the tools ----------------------------------------------------------------------------------------------
def find_tools():
    """(cuobjdump, nvdisasm): the toolkit's, else pip's; ProvenanceError when either is missing."""
    cuda_bin = os.path.join(os.environ.get("CUDA", "/usr/local/cuda"), "bin")
    dirs = [cuda_bin] + os.environ.get("PATH", "").split(os.pathsep)
    for base in [PIP_TOOLS] + sys.path:
        dirs += sorted(glob.glob(os.path.join(base or ".", "nvidia", "*", "bin")))
    for d in dirs:
        c, n = os.path.join(d, "cuobjdump"), os.path.join(d, "nvdisasm")
        if os.path.isfile(c) and os.path.isfile(n):
            try:
                for t in (c, n):
                    if not os.access(t, os.X_OK):
                        os.chmod(t, 0o755)  # pip's wheels may drop the executable bit
            except OSError:
                continue
            return c, n
    raise ProvenanceError(
        "no cuobjdump with nvdisasm beside it (looked in %s, PATH and pip's nvidia/*/bin); the CUDA toolkit has "
        "them, or: bash common/scripts/ensure-deps.sh sass (pip install nvidia-cuda-cuobjdump "
        "nvidia-cuda-nvdisasm)" % cuda_bin)


# ---- digests ------------------------------------------------------------------------------------------------
INSTR_WORD = re.compile(r"/\* 0x([0-9a-f]+) \*/")
INSTR_ADDR = re.compile(r"^\s*/\*[0-9a-f]+\*/")


def sass_kernels(path, arch):
    """[{build, name, digest, instructions}] for every kernel of the ARCH code in PATH (object or program)."""
    cuobjdump, nvdisasm = find_tools()
    env = dict(os.environ, PATH=os.path.dirname(nvdisasm) + os.pathsep + os.environ.get("PATH", ""))
    p = subprocess.run([cuobjdump, "-sass", "-symbols", "-arch", arch, path], capture_output=True, text=True,
                       env=env)
    if p.returncode != 0:
        raise ProvenanceError("cuobjdump -sass -arch %s %s failed: %s" % (arch, path, p.stderr.strip()))
    kernels = []
    # one section per cubin: "Fatbin elf code:", its functions' SASS, then "symbols:"
    cubins = p.stdout.split("Fatbin elf code:")
    for cubin in cubins[1:] if len(cubins) > 1 else cubins:  # a bare .cubin has no fatbin header
        sass, _, symbols = cubin.partition("\nsymbols:")
        build = "counted" if re.search(r"\s%s\s*$" % COUNTER_SYMBOL, symbols, re.M) else "timed"
        for part in re.split(r"^\s*Function : ", sass, flags=re.M)[1:]:
            name, _, body = part.partition("\n")
            words = INSTR_WORD.findall(body)
            n = sum(1 for line in body.splitlines() if INSTR_ADDR.match(line))
            kernels.append({"build": build, "name": name.strip(), "instructions": n,
                            "digest": hashlib.sha256("".join(words).encode()).hexdigest()[:16]})
    return kernels


def demangle(names):
    """{mangled: demangled} by c++filt (binutils, beside every C compiler); the names as they are without it."""
    names = sorted(set(names))
    try:
        p = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True, text=True, check=True)
        out = p.stdout.splitlines()
        if len(out) == len(names):
            return dict(zip(names, out))
    except (OSError, subprocess.CalledProcessError):
        pass
    return {n: n for n in names}


def programs():
    """The chapter programs of this tree, relative to its root: chNN/run, one per chapter."""
    return sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "ch[0-9][0-9]", "run")))


def device_code_stamp(path):
    """What a file's digests depend on: the sha256 of its device code, the ELF section .nv_fatbin of a program or
    an object (a program linked again from the same CUDA objects, with other host code, keeps it: the sanitized
    build's links), else of the whole file."""
    with open(path, "rb") as f:
        data = f.read()
    body = data
    if data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1:  # 64-bit little-endian ELF
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        sections = [struct.unpack_from("<IIQQQQ", data, shoff + x * shentsize) for x in range(shnum)]
        if 0 <= shstrndx < shnum:
            names_at = sections[shstrndx][4]
            for name, kind, _, _, offset, size in sections:
                end = data.index(b"\0", names_at + name)
                if data[names_at + name:end] == b".nv_fatbin" and kind != 8:  # 8: SHT_NOBITS, no bytes in the file
                    body = data[offset:offset + size]
                    break
    return hashlib.sha256(body).hexdigest()


def digest_files(files, arch):
    """[{program, build, name, function, digest, instructions}] in file, build, name order. Cached per program
    in build/provenance/, keyed by the program's device code (device_code_stamp), so that a second look costs
    nothing; the programs not in the cache are read on as many threads as there are CPUs, and concurrent callers
    (tests running side by side) take turns, the later ones reading what the first wrote."""
    cache_path = os.path.join(ROOT, "build", "provenance", "digests-%s.json" % arch)
    os.makedirs(os.path.dirname(cache_path), exist_ok=True)
    with open(cache_path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        try:
            with open(cache_path) as f:
                cache = json.load(f)
        except (OSError, ValueError):
            cache = {}
        fulls, stamps = [], {}
        for path in files:
            full = os.path.abspath(os.path.join(ROOT, path))
            if not os.path.isfile(full):
                raise ProvenanceError("%s: no such file (build it first: make ARCH=%s all)" % (path, arch[3:]))
            fulls.append(full)
            stamps[full] = device_code_stamp(full)
        todo = sorted({f for f in fulls if cache.get(f, {}).get("stamp") != stamps[f]})
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            for full, kernels in zip(todo, pool.map(lambda f: sass_kernels(f, arch), todo)):
                cache[full] = {"stamp": stamps[full], "kernels": kernels}
        if todo:
            tmp = "%s.%d.tmp" % (cache_path, os.getpid())
            with open(tmp, "w") as f:
                json.dump({p: v for p, v in cache.items() if os.path.exists(p)}, f)
            os.replace(tmp, cache_path)
    rows = []
    for path, full in zip(files, fulls):
        if not cache[full]["kernels"]:
            raise ProvenanceError("%s holds no %s code (built for another architecture? make ARCH=%s)"
                                  % (path, arch, arch[3:]))
        rows += [dict(k, program=path) for k in cache[full]["kernels"]]
    functions = demangle(r["name"] for r in rows)
    for r in rows:
        r["function"] = functions[r["name"]]
    rows.sort(key=lambda r: (r["program"], r["build"], r["function"], r["name"]))
    return [{k: r[k] for k in ("program", "build", "function", "name", "digest", "instructions")} for r in rows]


# ---- the record ---------------------------------------------------------------------------------------------
def run_text(cmd):
    """stdout of cmd, or None when it cannot run or fails."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout.rstrip() if p.returncode == 0 else None


def nvidia_smi(fields):
    """{field: value as nvidia-smi prints it} for the first GPU, or None without nvidia-smi or a GPU."""
    out = run_text(["nvidia-smi", "--query-gpu=" + ",".join(fields), "--format=csv,noheader"])
    if not out:
        return None
    values = [v.strip() for v in out.splitlines()[0].split(",")]
    return dict(zip(fields, values)) if len(values) == len(fields) else None


def versions():
    cuda = os.environ.get("CUDA", "/usr/local/cuda")
    nvcc = os.environ.get("NVCC") or (os.path.join(cuda, "bin", "nvcc") if os.path.exists(os.path.join(cuda, "bin", "nvcc"))
                                      else "nvcc")
    m = re.search(r"release ([0-9.]+), (V[0-9.]+)", run_text([nvcc, "--version"]) or "")
    ncu = shutil.which(os.environ.get("NCU", "ncu")) or (
        os.path.join(cuda, "bin", "ncu") if not os.environ.get("NCU") and os.path.exists(os.path.join(cuda, "bin", "ncu"))
        else None)
    ncu_version = run_text([ncu, "--version"]) if ncu else None
    n = re.search(r"Version (\S+)", ncu_version or "")
    torch = run_text([sys.executable, "-c", "import torch; print(torch.__version__)"])
    return {"nvcc": "%s (%s)" % m.groups() if m else "not installed",
            "ncu": n.group(1) if n else ("not installed" if not ncu else "not recorded: ncu --version failed"),
            "torch": torch.splitlines()[-1] if torch else "not installed"}


def git_state():
    commit = run_text(["git", "rev-parse", "HEAD"])
    if commit is None:
        return {"commit": "not recorded: not a git checkout", "tree_clean": "not recorded"}
    changes = run_text(["git", "status", "--porcelain", "--untracked-files=no"])
    state = {"commit": commit, "tree_clean": changes == ""}
    if changes:
        state["tree_changes"] = changes.splitlines()
    return state


def make_record(arch=None):
    gpu = nvidia_smi(["name", "driver_version", "compute_cap", "clocks.sm", "clocks.mem", "clocks.max.sm",
                      "clocks.max.mem", "clocks.applications.graphics", "clocks.applications.memory"])
    if arch is None:
        arch = "sm_" + gpu["compute_cap"].replace(".", "") if gpu else DEFAULT_ARCH
    record = {"date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    record.update(git_state())
    record.update(versions())
    if gpu:
        record["driver"] = gpu.pop("driver_version")
        record["gpu"] = gpu.pop("name")
        gpu.pop("compute_cap")
        record["clocks"] = gpu
    else:
        none = "not installed" if shutil.which("nvidia-smi") is None else "none: nvidia-smi reports no GPU"
        record.update(driver=none, gpu=none, clocks=none)
    record["arch"] = arch
    files = programs()
    record["digests_from"] = "this build at the commit above: " + " ".join(files)
    try:
        record["kernels"] = digest_files(files, arch)
    except ProvenanceError as e:
        record["kernels"] = "not recorded: %s" % e
    return record


KEY_ORDER = ["commit", "tree_clean", "tree_changes", "date_utc", "gpu", "clocks", "nvcc", "driver", "ncu", "torch",
             "arch", "digests_from", "sources"]


def dump_record(record, path):
    """JSON, one kernel a line (a diff of two records reads kernel by kernel); written aside, then renamed."""
    keys = [k for k in KEY_ORDER if k in record] + sorted(set(record) - set(KEY_ORDER) - {"kernels"})
    lines = ["  %s: %s" % (json.dumps(k), json.dumps(record[k], indent=2).replace("\n", "\n  ")) for k in keys]
    kernels = record["kernels"]
    if isinstance(kernels, list):
        lines.append('  "kernels": [\n' + ",\n".join("    " + json.dumps(k) for k in kernels) + "\n  ]")
    else:
        lines.append('  "kernels": ' + json.dumps(kernels))
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("{\n" + ",\n".join(lines) + "\n}\n")
    os.replace(tmp, path)


def load_record(results_dir):
    return load_record_file(os.path.join(results_dir, RECORD))


def load_record_file(path):
    try:
        with open(path) as f:
            record = json.load(f)
    except OSError as e:
        raise ProvenanceError("%s: cannot read the record (%s)" % (path, e.strerror))
    except ValueError as e:
        raise ProvenanceError("%s: not JSON (%s)" % (path, e))
    fields = {"program": str, "build": str, "function": str, "name": str, "digest": str, "instructions": int}
    if not isinstance(record, dict) or not isinstance(record.get("arch"), str) or not isinstance(record.get("kernels"), list):
        raise ProvenanceError("%s: no \"arch\" or no list of \"kernels\"" % path)
    for i, k in enumerate(record["kernels"]):
        if not isinstance(k, dict) or any(not isinstance(k.get(f), t) for f, t in fields.items()) \
                or not re.fullmatch(r"[0-9a-f]{16}", k["digest"]):
            raise ProvenanceError("%s: kernel %d is not {%s} with a 16-hex-digit digest"
                                  % (path, i + 1, ", ".join(fields)))
    if not record["kernels"]:
        raise ProvenanceError("%s: no kernels recorded" % path)
    if "files" in record and (not isinstance(record["files"], list) or not record["files"]
                              or any(not isinstance(f, str) for f in record["files"])):
        raise ProvenanceError("%s: \"files\" is not a list of the names of the files the run wrote" % path)
    return record


# ---- labels and the check -----------------------------------------------------------------------------------
def chapter_labels():
    """{chapter_id: {label: compiled regex, or None for "-"}} from every NN_topic/kernels.txt."""
    return kernels.chapter_labels(ROOT, ProvenanceError)


def bare(function):
    """A demangled name without the return type c++filt puts before a template: flash_v2_kernel<32, 32>(...)."""
    return function[5:] if function.startswith("void ") else function


def measured_labels(results_dir):
    """{(chapter_id, label): [every CSV holding a row of it]} over RESULTS_DIR/chNN/*.csv with chapter,kernel."""
    found = {}
    for path in sorted(glob.glob(os.path.join(results_dir, "ch[0-9][0-9]", "*.csv"))):
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            if not reader.fieldnames or "chapter" not in reader.fieldnames or "kernel" not in reader.fieldnames:
                continue
            rel = os.path.relpath(path, results_dir)
            for row in reader:
                if row["chapter"] and row["kernel"]:
                    where = found.setdefault((row["chapter"], row["kernel"]), [])
                    if rel not in where:
                        where.append(rel)
    return found


def vouches(record_rel, csv_rel, files=None):
    """Whether the record at RECORD_REL (relative to the results folder) is of a run that wrote CSV_REL: a record
    that names its files (FILES, its "files": a stage run on its own) of those alone; else the folder's
    provenance.json of every CSV, a chapter's chNN/provenance.json (a chapter measured whole) of every CSV of its
    folder, and chNN/NAME.provenance.json of chNN/NAME.csv and chNN/NAME_*.csv only, so that the record of a stage
    that timed nothing (a tests stage's tests_gpu.provenance.json) vouches for no timing."""
    folder, name = os.path.split(record_rel)
    where, base = os.path.split(csv_rel)
    if files is not None:
        return where == folder and base in files
    if name == RECORD:
        return folder == "" or where == folder
    stem = name[:-len("." + RECORD)]
    return where == folder and (base == stem + ".csv" or base.startswith(stem + "_"))


def compare(results_dir):
    """(stale, measured, unmeasured): stale {(ch, label): reason}; measured {(ch, label): a CSV of it, the first
    or, for a stale label, the first whose runs did not measure its code};
    unmeasured the kernels of this build that no measured label names."""
    now = digest_files(programs(), load_record(results_dir)["arch"])
    labels = chapter_labels()
    measured = measured_labels(results_dir)
    # The folder's record, and the record of every later run of a chapter beside its files (chNN/provenance.json
    # for a chapter measured whole, chNN/<name>.provenance.json for a stage run on its own: for the files its
    # "files" names, else chNN/<name>.csv): a row stands when its kernel's code is the code that one of the runs
    # that wrote its CSV measured (vouches).
    # A kernel none of those records names (program, build and function) is new since: it made none of the rows,
    # so a label whose regex also matches it (a total row over every step, a new instantiation) stands on the
    # kernels that were there; a label none of whose kernels those records name is stale (renamed, or not the
    # code measured).
    records = [(RECORD, load_record(results_dir))] + [
        (os.path.relpath(p, results_dir), load_record_file(p))
        for p in sorted(glob.glob(os.path.join(results_dir, "ch[0-9][0-9]", "*" + RECORD)))]
    vouched = {}  # (csv, program): (the digests, the (build, function)s) of the records of the runs that wrote it

    def records_of(rel, program):
        if (rel, program) not in vouched:
            ks = [k for record_rel, r in records if vouches(record_rel, rel, r.get("files")) for k in r["kernels"]
                  if k["program"] == program]
            vouched[rel, program] = ({k["digest"] for k in ks}, {(k["build"], k["function"]) for k in ks})
        return vouched[rel, program]

    in_csv = {}  # csv: the labels with rows in it
    for (ch, label), where in measured.items():
        for rel in where:
            in_csv.setdefault(rel, set()).add((ch, label))
    named, stale, first = set(), {}, {key: where[0] for key, where in measured.items()}
    for (ch, label), where in sorted(measured.items()):
        if label not in labels.get(ch, {}):
            raise ProvenanceError("%s has rows of chapter %s's %s, and no %s_*/kernels.txt line says which "
                                  "kernels make them" % (where[0], ch, label, ch))
        regex = labels[ch][label]
        if regex is None:
            continue
        program = "ch%s/run" % ch
        mine = [k for k in now if k["program"] == program and regex.match(bare(k["function"]))]
        if not mine:
            stale[(ch, label)] = "no kernel of %s matches %s (kernels.txt)" % (program, regex.pattern)
            continue
        for rel in where:
            # A total row (a label whose regex matches the kernels of other labels: a step's kernels, summed)
            # stands on the kernels of the rows beside it in its CSV, the runs it totals: of its kernels, those
            # another label of the same CSV matches; all of them where none does.
            others = [labels[ch][other] for c, other in in_csv[rel]
                      if c == ch and other != label and labels[ch].get(other) is not None]
            totalled = [k for k in mine if any(r.match(bare(k["function"])) for r in others)] or mine
            recorded, names = records_of(rel, program)
            known = [k for k in totalled if (k["build"], k["function"]) in names] or totalled
            named.update(id(k) for k in known)
            changed = sorted({"%s (%s)" % (k["function"], k["build"]) for k in known if k["digest"] not in recorded})
            if changed:
                stale[(ch, label)] = "kernel changed since measured: " + "; ".join(changed)
                first[(ch, label)] = rel
                break
    unmeasured = [k for k in now if id(k) not in named]
    return stale, first, unmeasured


def stale(results_dir):
    """{(chapter_id, label): reason} for every label with committed rows in RESULTS_DIR whose kernels' code is
    not the code RESULTS_DIR/provenance.json recorded; {} when every measured kernel is unchanged."""
    return compare(results_dir)[0]


# ---- the commands -------------------------------------------------------------------------------------------
def cmd_digest(args):
    arch = DEFAULT_ARCH
    if args[:1] == ["--arch"]:
        if len(args) < 2:
            raise ProvenanceError("--arch needs a value (sm_90)")
        arch, args = args[1], args[2:]
    files = args or programs()
    if not files:
        raise ProvenanceError("no chapter programs (chNN/run) here: build them first (make ARCH=90 all)")
    for k in digest_files(files, arch):
        print("%s %6d %s:%s:%s" % (k["digest"], k["instructions"], k["program"], k["build"], k["function"]))
    return 0


def cmd_record(args):
    usage = "usage: provenance.py record OUT.json [--arch sm_XX] [--files NAME...]"
    if not args or args[0].startswith("-"):
        raise ProvenanceError(usage)
    out, rest, arch, files = args[0], args[1:], None, None
    if rest[:1] == ["--arch"]:
        if len(rest) < 2:
            raise ProvenanceError(usage)
        arch, rest = rest[1], rest[2:]
    if rest[:1] == ["--files"]:
        files = rest[1:]
        if not files or any(os.sep in f or f.startswith("-") for f in files):
            raise ProvenanceError("--files: the names of the files beside the record the run wrote, at least one")
    elif rest:
        raise ProvenanceError(usage)
    record = make_record(arch)
    if files is not None:
        record["files"] = files
    dump_record(record, out)
    if not isinstance(record["kernels"], list):
        print("provenance: %s written without digests: %s" % (args[0], record["kernels"]), file=sys.stderr)
    return 0


def merge_records(parts):
    """{name: record} of the parts of one run -> the record of the whole (merge), or a str: why there is none."""
    names = sorted(parts, key=lambda n: (parts[n].get("date_utc", ""), n))
    newest = parts[names[-1]]
    same = (("GPU", lambda r: r.get("gpu")), ("architecture", lambda r: r["arch"]),
            ("kernels", lambda r: sorted(json.dumps(k, sort_keys=True) for k in r["kernels"])))
    for n in names:
        for what, of in same:
            if of(parts[n]) != of(newest):
                return "%s measured other %s than %s" % (n, what, names[-1])
    record = {k: v for k, v in newest.items() if k != "files"}
    record["parts"] = [{"part": n, "commit": parts[n].get("commit"), "tree_clean": parts[n].get("tree_clean"),
                        "date_utc": parts[n].get("date_utc")} for n in names]
    return record


def cmd_merge(args):
    if len(args) < 2 or any(a.startswith("-") for a in args):
        raise ProvenanceError("usage: provenance.py merge OUT.json PART.json...")
    parts = {}
    for p in args[1:]:
        if os.path.basename(p) in parts:
            raise ProvenanceError("%s: two parts of one name" % os.path.basename(p))
        parts[os.path.basename(p)] = load_record_file(p)
    record = merge_records(parts)
    if isinstance(record, str):
        print("provenance: no record of the whole written: %s" % record, file=sys.stderr)
        return 1
    dump_record(record, args[0])
    return 0


def cmd_check(args):
    if len(args) != 1:
        raise ProvenanceError("usage: provenance.py check RESULTS_DIR")
    bad, measured, unmeasured = compare(args[0])
    for (ch, label), reason in sorted(bad.items()):
        print("stale: chapter %s %s (%s): %s" % (ch, label, measured[(ch, label)], reason))
    names = sorted({bare(k["function"]).split("(")[0].split("<")[0] for k in unmeasured})
    print("provenance: %d measured labels in %s, %d stale; %d kernels of this build not measured there%s"
          % (len(measured), args[0], len(bad), len(unmeasured), (" (" + ", ".join(names) + ")") if names else ""))
    return 1 if bad else 0


def cmd_tools(args):
    print("cuobjdump %s\nnvdisasm %s" % find_tools())
    return 0


COMMANDS = {"digest": cmd_digest, "record": cmd_record, "merge": cmd_merge, "check": cmd_check, "tools": cmd_tools}


def main(argv):
    if not argv or argv[0] not in COMMANDS:
        print("usage:\n" + __doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        return COMMANDS[argv[0]](argv[1:])
    except ProvenanceError as e:
        print("provenance: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
