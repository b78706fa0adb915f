#!/usr/bin/env python3
"""sweep_data.py: a chapter's sweep beside PyTorch's kernels of the same run, as FlashAttention's papers draw it.

    python3 plots/sweep_data.py CHAPTER_DIR OUT.dat [DTYPE=fp16]

CHAPTER_DIR/sweep.csv: the chapter's kernels over N at a fixed number of tokens (./chNN/run --csv rows: one kernel,
or one per step); CHAPTER_DIR/chMM_sweep.csv, where the bench wrote one: another chapter's kernel at the same
shapes, in the same run; CHAPTER_DIR/peers.csv: PyTorch timed in the same bench (common/scripts/peers.py: peer, B,
H, N, d, dtype, causal, time_ms_median), possibly in several rounds: each peer's fastest; a peer named NAME_bwd
(peers.py --backward: the gradient call alone) is drawn as NAME, and makes the figure a backward pass's. Rows of a
setup kernel (setup = 1) are not drawn; where a file's runs are a setup row and several kernels after it (a
backward: the forward that makes O and L, then its kernels), each run is drawn as its last row, the run's total,
under the name of the kernel before it, the run's own. Every side's TFLOP/s is the chapter's FLOPs at that shape
(the flops column of its row there: the book's one convention, 4 B H N^2 d for a forward, 10 B H N^2 d for a
backward, halved when causal) over that side's median time, so that the sides cannot differ by convention.

Writes OUT.dat: four blocks separated by two blank lines (gnuplot's `index`), in the order d = 64 full, d = 64
causal, d = 128 full, d = 128 causal; each line N, then TFLOP/s of each series (NaN where it has no row): the other
chapters' kernels, then this chapter's in the order of sweep.csv, then sdpa_flash, sdpa_cudnn, sdpa_efficient (a
peer with no row at any of the sweep's shapes is left out). Prints one line for the caller, fields separated by "|": the
series' names and their colours, each ";"-separated ("KERNEL (chapter NN)", or the peer's name), GPU, dtype,
B x N (tokens), H, PyTorch's version, the N whose runs of this chapter were not checked against the reference
(empty rel_err), comma-separated, the chapter, the pass ("forward", or "backward" where the peers are), and its
FLOP convention ("4 B H N^2 d", or "10 B H N^2 d" for a backward). Exit
status 2, with a message, when a file is missing or empty, a column is missing, a row has no FLOPs, or a panel has
no row.
"""
import csv
import glob
import os
import sys

PEERS = ("sdpa_flash", "sdpa_cudnn", "sdpa_efficient")
PEER_NAMES = {"sdpa_flash": "FlashAttention-2 (SDPA flash)", "sdpa_cudnn": "cuDNN (SDPA cuDNN)",
              "sdpa_efficient": "SDPA memory-efficient"}
PEER_COLOURS = {"sdpa_flash": "#1f4e9c", "sdpa_cudnn": "#1b9e77", "sdpa_efficient": "#999999"}
# this chapter's kernels, the last (its latest step) darkest; another chapter's kernel in violet
OURS_COLOURS = ("#fdd49e", "#fdbb84", "#fc8d59", "#d95f02")
OTHER_COLOUR = "#8073ac"
PANELS = ((64, 0), (64, 1), (128, 0), (128, 1))
SHAPE = ("B", "H", "N", "d", "dtype", "causal")


def fail(msg):
    print(f"sweep_data: {msg}", file=sys.stderr)
    sys.exit(2)


def read(path, need):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    if not rows:
        fail(f"{path} has no data rows")
    missing = [c for c in need if c not in rows[0]]
    if missing:
        fail(f"{path}: no column {', '.join(missing)}")
    return rows


def tflops(flops, ms):
    return flops / (float(ms) * 1e-3) / 1e12


def drawn(rows):
    """The rows a sweep draws from a chapter's CSV (in order): no setup row; a run of several kernels after its
    setup row as its last row (the total), named after the kernel before it."""
    if not any(r.get("setup") == "1" for r in rows):
        return rows
    out, run = [], []
    for r in rows + [{"setup": "1"}]:  # a setup row ends the run before it (a sentinel ends the last)
        if r.get("setup") != "1":
            run.append(r)
            continue
        if len(run) == 1:
            out.append(run[0])
        elif run:
            out.append(dict(run[-1], kernel=run[-2]["kernel"]))
        run = []
    return out


def main(argv):
    if len(argv) not in (3, 4):
        fail("usage: python3 plots/sweep_data.py CHAPTER_DIR OUT.dat [DTYPE=fp16]")
    folder, out = argv[1], argv[2]
    dtype = argv[3] if len(argv) == 4 else "fp16"
    need = SHAPE + ("chapter", "kernel", "gpu", "time_ms_median", "rel_err", "flops")
    ours = [r for r in drawn(read(f"{folder}/sweep.csv", need)) if r["dtype"] == dtype]
    others = []
    for path in sorted(glob.glob(f"{folder}/ch[0-9][0-9]_sweep.csv")):
        others += [r for r in drawn(read(path, need)) if r["dtype"] == dtype]
    peers = read(f"{folder}/peers.csv", SHAPE + ("peer", "torch", "time_ms_median"))
    backward = any(r["peer"].endswith("_bwd") for r in peers)
    work = "10 B H N^2 d" if backward else "4 B H N^2 d"  # the convention the flops column follows
    for r in peers:
        r["peer"] = r["peer"][:-len("_bwd")] if r["peer"].endswith("_bwd") else r["peer"]
    if not ours:
        fail(f"{folder}/sweep.csv: no {dtype} row")
    for r in others + ours:
        if not r["flops"].isdigit():
            fail(f"{folder}: {r['kernel']} at N = {r['N']}, d = {r['d']}: no FLOPs (flops column '{r['flops']}')")
    flops = {}  # shape -> the chapter's FLOPs there (its first row at that shape), for every side
    for r in ours:
        flops.setdefault(tuple(r[c] for c in SHAPE), int(r["flops"]))
    series = []  # (chapter, kernel), in the order drawn
    for r in others + ours:
        if (r["chapter"], r["kernel"]) not in series:
            series.append((r["chapter"], r["kernel"]))
    time = {}  # (chapter, kernel) + shape -> ms; a shape timed twice: its first row
    for r in others + ours:
        time.setdefault((r["chapter"], r["kernel"]) + tuple(r[c] for c in SHAPE), float(r["time_ms_median"]))
    peer_ms = {}  # peer + shape -> its fastest round
    for r in peers:
        k = (r["peer"],) + tuple(r[c] for c in SHAPE)
        peer_ms[k] = min(peer_ms.get(k, float("inf")), float(r["time_ms_median"]))
    shapes = {tuple(r[c] for c in SHAPE) for r in ours}
    present = [p for p in PEERS if any(k[0] == p and k[1:] in shapes for k in peer_ms)]
    chapter = ours[0]["chapter"]
    blocks = []
    for d, causal in PANELS:
        points = sorted({tuple(r[c] for c in SHAPE) for r in ours if int(r["d"]) == d and int(r["causal"]) == causal},
                        key=lambda s: int(s[2]))
        if not points:
            fail(f"{folder}/sweep.csv: no {dtype} row at d = {d}{' causal' if causal else ''}")
        names = [f"{k} (chapter {c})" for c, k in series] + present
        lines = [f"# d = {d}, {'causal' if causal else 'no mask'}: N, TFLOP/s of " + ", ".join(names)]
        for s in points:
            r = dict(zip(SHAPE, s))
            cells = [time.get(ck + s) for ck in series] + [peer_ms.get((p,) + s) for p in present]
            lines.append(r["N"] + "".join("\tNaN" if ms is None else f"\t{tflops(flops[s], ms):.4f}" for ms in cells))
        blocks.append("\n".join(lines))
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# from {folder}/sweep.csv" + "".join(f", {p}" for p in sorted(glob.glob(f"{folder}/ch[0-9][0-9]_sweep.csv")))
                + f" and {folder}/peers.csv, {dtype}; TFLOP/s = the chapter's FLOPs at each shape (its flops column: "
                + f"{work}, halved when causal) / median time\n")
        f.write("\n\n\n".join(blocks) + "\n")
    os.replace(tmp, out)
    unchecked = sorted({int(r["N"]) for r in ours if r["rel_err"] == ""})
    tokens = {int(r["B"]) * int(r["N"]) for r in ours}
    heads = {r["H"] for r in ours}
    names = [f"{k} (chapter {c})" for c, k in series] + [PEER_NAMES[p] for p in present]
    mine = [ck for ck in series if ck[0] == chapter]
    colours = [OTHER_COLOUR if c != chapter else OURS_COLOURS[max(0, len(OURS_COLOURS) - len(mine) + mine.index((c, k)))]
               for c, k in series] + [PEER_COLOURS[p] for p in present]
    print("|".join([";".join(names), ";".join(colours), ours[0]["gpu"], dtype, ",".join(map(str, sorted(tokens))),
                    ",".join(sorted(heads)), ",".join(sorted({r["torch"] for r in peers})),
                    ",".join(map(str, unchecked)), chapter, "backward" if backward else "forward", work]))


if __name__ == "__main__":
    main(sys.argv)
