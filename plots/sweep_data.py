#!/usr/bin/env python3
"""sweep_data.py: chapter 05's sweep beside PyTorch's kernels of the same run, as FlashAttention's papers draw it.

    python3 plots/sweep_data.py CH05_DIR OUT.dat [DTYPE=fp16]

CH05_DIR/sweep.csv: our kernel over N at a fixed number of tokens (./ch05/run --csv rows, one kernel);
CH05_DIR/peers.csv: PyTorch timed in the same bench (common/scripts/peers.py: peer, B, H, N, d, dtype, causal,
time_ms_median). Both sides' TFLOP/s are computed here from the median time with the book's one convention,
4 B H N^2 d FLOPs, halved when causal, so that the two sides cannot differ by convention.

Writes OUT.dat: four blocks separated by two blank lines (gnuplot's `index`), in the order d = 64 full, d = 64
causal, d = 128 full, d = 128 causal; each line N, then TFLOP/s of ours, sdpa_flash, sdpa_cudnn, sdpa_efficient
(NaN where a peer has no row). Prints one line for the caller, fields separated by "|": our kernel, GPU, dtype,
B x N (tokens), H, PyTorch's version, the N whose runs were not checked against the reference (empty rel_err), comma-separated.
Exit status 2, with a message, when a file is missing or empty, a column is missing, or a panel has no row.
"""
import csv
import os
import sys

PEERS = ("sdpa_flash", "sdpa_cudnn", "sdpa_efficient")
PANELS = ((64, 0), (64, 1), (128, 0), (128, 1))


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


def tflops(r, ms):
    work = 4 * int(r["B"]) * int(r["H"]) * int(r["N"]) ** 2 * int(r["d"])
    return (work / 2 if r["causal"] == "1" else work) / (float(ms) * 1e-3) / 1e12


def main(argv):
    if len(argv) not in (3, 4):
        fail("usage: python3 plots/sweep_data.py CH05_DIR OUT.dat [DTYPE=fp16]")
    folder, out = argv[1], argv[2]
    dtype = argv[3] if len(argv) == 4 else "fp16"
    shape = ("B", "H", "N", "d", "dtype", "causal")
    ours = read(f"{folder}/sweep.csv", shape + ("kernel", "gpu", "time_ms_median", "rel_err"))
    peers = read(f"{folder}/peers.csv", shape + ("peer", "torch", "time_ms_median"))
    ours = [r for r in ours if r["dtype"] == dtype]
    kernels = sorted({r["kernel"] for r in ours})
    if len(kernels) != 1:
        fail(f"{folder}/sweep.csv: one kernel expected in {dtype}, found {kernels or 'none'}")
    peer_ms = {tuple(r[c] for c in shape) + (r["peer"],): r["time_ms_median"] for r in peers}
    blocks = []
    for d, causal in PANELS:
        rows = sorted((r for r in ours if int(r["d"]) == d and int(r["causal"]) == causal), key=lambda r: int(r["N"]))
        if not rows:
            fail(f"{folder}/sweep.csv: no {dtype} row at d = {d}{' causal' if causal else ''}")
        lines = [f"# d = {d}, {'causal' if causal else 'no mask'}: N, TFLOP/s of {kernels[0]}, " + ", ".join(PEERS)]
        for r in rows:
            cells = [tflops(r, r["time_ms_median"])]
            for p in PEERS:
                ms = peer_ms.get(tuple(r[c] for c in shape) + (p,))
                cells.append(tflops(r, ms) if ms else None)
            lines.append(r["N"] + "".join("\tNaN" if v is None else f"\t{v:.4f}" for v in cells))
        blocks.append("\n".join(lines))
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# from {folder}/sweep.csv and {folder}/peers.csv, {dtype}; TFLOP/s = 4 B H N^2 d (halved when causal) / median time\n")
        f.write("\n\n\n".join(blocks) + "\n")
    os.replace(tmp, out)
    unchecked = sorted({int(r["N"]) for r in ours if r["rel_err"] == ""})
    tokens = {int(r["B"]) * int(r["N"]) for r in ours}
    heads = {r["H"] for r in ours}
    print("|".join([kernels[0], ours[0]["gpu"], dtype, ",".join(map(str, sorted(tokens))), ",".join(sorted(heads)),
                    ",".join(sorted({r["torch"] for r in peers})), ",".join(map(str, unchecked))]))


if __name__ == "__main__":
    main(sys.argv)
