"""readme_blocks.py: the generated blocks of chapter 07's README (`make docs`): one function block_NAME(blk) per
<!-- MEASURED:NAME --> there, blk a common/scripts/booklib/blocks.py Blocks bound to a results folder (RESULTS,
results/NVIDIA_H200 by default), whose helpers read its files. Where the results folder has no file of the chapter's
bench yet, a block says so: the README's "not yet measured" is derived from the results like every number."""
from booklib.blocks import *  # noqa: F401,F403 (the helpers: booklib/blocks.py, __all__)

# the steps (--kernel) and the kernel row that ends each one's run in a CSV (the backward row follows it)
CH07_STEPS = (("naive", "naive_dk"), ("flash", "flash_bwd"), ("tensor_cores", "tc_bwd"), ("dq_vectors", "tc_vec_bwd"),
              ("wide_blocks", "tc_wide_bwd"), ("wgmma", "tc_wgmma_bwd"), ("lean_loop", "tc_lean_bwd"),
              ("dq_bulk", "tc_bulk_bwd"), ("dq_overlap", "tc_ovl_bwd"), ("warp_specialized", "tc_ws_bwd"),
              ("warp_tiles", "tc_tile_bwd"), ("lean_tiles", "tc_tile_lean_bwd"),
              ("kv_registers", "tc_kvreg_bwd"), ("dq_pairs", "tc_pairs_bwd"),
              ("dq_quads", "tc_quads_bwd"), ("stat_copies", "tc_stats_bwd"), ("dq_squares", "tc_squares_bwd"),
              ("matrix_stores", "tc_stores_bwd"))
# every run a CSV of ours holds: the steps, and step 2 with --dq pass (its last kernel flash_dkdv)
CH07_RUNS = CH07_STEPS + (("dq_pass", "flash_dkdv"),)
# a run's name as the tables print it
CH07_RUN_NAMES = {"dq_pass": "flash --dq pass"}
# the steps on tensor cores, in order
CH07_HOPPER_STEPS = ("wgmma", "lean_loop", "dq_bulk", "dq_overlap", "warp_specialized")  # steps 6 to 10, sm_90 alone
CH07_TILE_STEPS = ("warp_tiles", "lean_tiles", "kv_registers", "dq_pairs", "dq_quads",
                   "stat_copies", "dq_squares", "matrix_stores")  # steps 11-18: mma.sync again
CH07_TC_STEPS = ("tensor_cores", "dq_vectors", "wide_blocks") + CH07_HOPPER_STEPS + CH07_TILE_STEPS
# their goals: (step, peer, at least, from N, from d): the last mma.sync step's (matrix_stores) against FlashAttention-2
# at every point, and stat_copies' and wide_blocks' the same, each set when it was the last; the first, the one before
# the last and the last Hopper steps' (wgmma, dq_overlap, warp_specialized) the same, and against cuDNN at d = 128 from
# N = 4096
CH07_TC_GOALS = ((CH07_TILE_STEPS[-1], "flash", 1.00, 0, 0), ("stat_copies", "flash", 1.00, 0, 0),
                 ("wide_blocks", "flash", 1.00, 0, 0)) + tuple(
    g for s in ("wgmma",) + CH07_HOPPER_STEPS[-2:] for g in ((s, "flash", 1.00, 0, 0), (s, "cuDNN", 0.80, 4096, 128)))
# the peers of the fp32 table: peers.py --backward's rows
CH07_FP32_PEERS = ("sdpa_efficient_bwd", "sdpa_math_bwd", "torch_3op_bwd")


def mask(r):
    """A run's mask as the tables write it."""
    return "causal" if r["causal"] == "1" else "full"


def not_measured(blk, *files):
    """The sentence of a block whose results are missing, naming what is missing, or None when every file is there."""
    missing = [f for f in files if not os.path.isfile(blk.path(f))]
    if not missing:
        return None
    return "Not yet measured on a GPU: no %s in `%s/` (`bash 07_backward/bench.sh` writes %s).\n" % (
        " or ".join("`%s`" % f for f in missing), blk.R, "them" if len(missing) > 1 else "it")


def runs_with_kernels(blk, rel):
    """Each run of the program in a CSV of ours, in file order: (step, its forward row, {kernel: row} of the step's
    kernels, its backward row). A run is its rows forward, the step's kernels, backward; the step is the one whose
    last kernel precedes the backward (CH07_RUNS: dq_pass for step 2 with --dq pass)."""
    rows = blk.t(rel).rows
    blk.t(rel).need("kernel", "time_ms_median", "tflops", "B", "H", "N", "d", "dtype", "causal")
    out, fwd, last, kernels = [], None, None, {}
    for r in rows:
        if r["kernel"] == "forward":
            fwd, last, kernels = r, None, {}
        elif r["kernel"] == "backward":
            step = [s for s, k in CH07_RUNS if k == last]
            if not step or fwd is None:
                raise BadInput("%s: a backward row whose run has no forward row or no last kernel of a step" %
                               blk.path(rel))
            out.append((step[0], fwd, kernels, r))
            blk.note(rel, "backward")
        else:
            last = r["kernel"]
            kernels[last] = r
    return out


def backward_runs(blk, rel):
    """runs_with_kernels without the kernels' rows: (step, its forward row, its backward row)."""
    return [(step, fwd, r) for step, fwd, _, r in runs_with_kernels(blk, rel)]


def block_ch07_article(blk):
    """Both steps at the article's size in fp32, full and causal, beside the fp32 backward of PyTorch's SDPA
    (memory-efficient, math) and of the three-op attention of the same run, each at its fastest round; vs: the
    peer's time / ours (above 1: ours faster)."""
    a, p = "ch07/article.csv", "ch07/peers.csv"
    missing = not_measured(blk, a, p)
    if missing:
        return missing
    peer = blk.peers_fastest(p)
    out = "| step (B=10 H=64 N=1024 d=64, fp32) | mask | backward ms | TFLOP/s | forward ms | mem-efficient ms " \
          "| math ms | 3-op ms | vs mem-efficient | vs math | vs 3-op |\n" \
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    r3 = lambda x: "-" if x is None else fmt("%.3f", x)
    goal = []  # per flash run: at the memory-efficient backend's time or faster
    for step, fwd, r in backward_runs(blk, a):
        if (r["B"], r["H"], r["N"], r["d"], r["dtype"]) != ("10", "64", "1024", "64", "fp32"):
            continue
        ours = float(r["time_ms_median"])
        times = [peer.get((r["B"], r["H"], r["N"], r["d"], "fp32", r["causal"], x)) for x in CH07_FP32_PEERS]
        if step == "flash":
            goal.append(times[0] is not None and times[0] >= ours)
        out += "| `%s` | %s | %.3f | %.1f | %.3f | %s | %s |\n" % (
            CH07_RUN_NAMES.get(step, step), mask(r), ours, float(r["tflops"]),
            float(fwd["time_ms_median"]), " | ".join(r3(t) for t in times), " | ".join(blk.ratio(t, ours) for t in times))
    out += "\nThe flash step's goal (vs mem-efficient at least 1.00, full and causal): %s.\n" % (
        "met" if goal and all(goal) else "not met" if goal else "no flash run")
    return out + blk.caption(a, p)


def block_ch07_dq(blk):
    """Step 2's two ways to dQ at the article's size in fp32, full and causal: the atomics (flash_bwd_d, flash_bwd)
    and the pass (flash_dq, flash_dkdv), each kernel's time and the backward's, the model's bytes (read + written),
    and the pass's time over the atomics' (above 1: the atomics faster)."""
    a = "ch07/article.csv"
    missing = not_measured(blk, a)
    if missing:
        return missing
    blk.t(a).need("model_read_bytes", "model_write_bytes")
    ways = {}  # (way, causal) -> {kernel: row}: the kernels of the run and its backward row
    for step, _, kernels, r in runs_with_kernels(blk, a):
        way = {"flash": "atomic", "dq_pass": "pass"}.get(step)
        if way and (r["B"], r["H"], r["N"], r["d"], r["dtype"]) == ("10", "64", "1024", "64", "fp32"):
            ways[(way, r["causal"])] = dict(kernels, backward=r)
    if not ways:
        return "Not yet measured on a GPU: no run of step 2 at the article's size in `%s/%s`.\n" % (blk.R, a)
    gb = lambda r: (int(r["model_read_bytes"]) + int(r["model_write_bytes"])) / 1e9
    out = "| dQ | mask | kernels (ms each) | backward ms | TFLOP/s | model GB (read + write) | pass / atomic |\n" \
          "|---|---|---|---:|---:|---:|---:|\n"
    verdict = []
    for c in ("0", "1"):
        base = ways.get(("atomic", c))
        for way, names in (("atomic", ("flash_bwd_d", "flash_bwd")), ("pass", ("flash_dq", "flash_dkdv"))):
            w = ways.get((way, c))
            if w is None:
                continue
            b = w["backward"]
            ms = float(b["time_ms_median"])
            ratio = "-" if base is None or way == "atomic" else fmt("%.2f", ms / float(base["backward"]["time_ms_median"]))
            if way == "pass" and ratio != "-":
                verdict.append("%s %s" % ("full" if c == "0" else "causal", ratio))
            out += "| %s | %s | %s | %.3f | %.1f | %s | %s |\n" % (
                way, "causal" if c == "1" else "full",
                ", ".join("`%s` %.3f" % (k, float(w[k]["time_ms_median"])) for k in names if k in w), ms,
                float(b["tflops"]), fmt("%.2f", gb(b)), ratio)
    if not any(w == "pass" for w, _ in ways):
        out += "\nThe pass: not yet measured on a GPU (no run of `flash --dq pass` in `%s/%s`; the bench's article " \
               "stage runs it).\n" % (blk.R, a)
    if verdict:
        out += "\nThe pass's time over the atomics' (%s): %s.\n" % (
            "; ".join(verdict), "the atomics are faster at both masks" if all(float(v.split()[1]) > 1 for v in verdict)
            else "the pass is faster at both masks" if all(float(v.split()[1]) < 1 for v in verdict)
            else "each is faster at one mask")
    return out + blk.caption(a)


def block_ch07_bytes(blk):
    """flash_bwd's bytes at the article's size: the model, the instrumented build's count, what the SMs requested
    (loads and stores; the dQ atomics are reductions, which ncu counts apart) and DRAM."""
    run, n = "ch07/ncu_run.csv", "ch07/ncu.csv"
    return not_measured(blk, run, n) or blk.bytes_table("flash_bwd", run, "flash_bwd", n, "flash_bwd_kernel", "%.2f")


def block_ch07_bytes_all(blk):
    """Every kernel the ncu stage profiled at the article's size (ncu_kernels.txt: a row and its kernel function), in
    that order: the model's bytes, the instrumented build's count, what the SMs requested (global loads; global
    stores plus reductions, the dQ atomics) and what DRAM saw, read and written."""
    run, n, k = "ch07/ncu_run.csv", "ch07/ncu.csv", "ch07/ncu_kernels.txt"
    missing = not_measured(blk, run, n, k)
    if missing:
        return missing
    metric = "l1tex__t_bytes_pipe_lsu_mem_global_op_%s.sum"
    c = lambda x: "-" if x is None else with_commas(x)
    out = "| kernel | read: model | counted | requested | DRAM | written: model | counted | requested (st + red) | DRAM " \
          "|\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    with open(blk.path(k)) as f:
        pairs = [line.split() for line in f if line.strip()]
    ratios = {"read": [], "write": []}  # (kernel, requested / counted) where they differ
    for pair in pairs:
        if len(pair) != 2:  # a row whose launch ncu did not find: the bench says so
            continue
        row, fn = pair
        rel = "ch07/ncu/%s.csv" % row
        if not os.path.isfile(blk.path(rel)):
            rel = n
        get = lambda m: blk.ncu(rel, fn, m, required=False)
        st, red = get(metric % "st"), get(metric % "red")
        requested = {"read": get(metric % "ld"), "write": None if st is None else st + (red or 0)}
        cells = []
        for rw in ("read", "write"):
            counted = float(blk.pick(run, "counted_%s_bytes" % rw, kernel=row))
            req = requested[rw]
            if req is not None and counted > 0 and req != counted:
                ratios[rw].append("`%s` %s" % (row, fmt("%.2f", req / counted)))
            cells += [c(blk.pick(run, "model_%s_bytes" % rw, kernel=row)), c(counted), c(req),
                      c(get("dram__bytes_%s.sum" % rw))]
        out += "| `%s` | %s |\n" % (row, " | ".join(cells))
    for rw, what in (("read", "Loads requested over the count"), ("write", "Stores and reductions requested over "
                                                                          "the count")):
        out += "\n%s: %s.\n" % (what, ", ".join(ratios[rw]) if ratios[rw] else "1.00 in every kernel")
    return out + blk.caption(run, n)


def block_ch07_sweep(blk):
    """The flash step over the 16k-token sweep (B = 16384/N, H = 16) in fp32 beside the memory-efficient backend's
    fp32 backward at its fastest round, full and causal side by side."""
    s, p = "ch07/sweep.csv", "ch07/peers.csv"
    missing = not_measured(blk, s, p)
    if missing:
        return missing
    peer = blk.peers_fastest(p)
    runs = {}
    for step, _, r in backward_runs(blk, s):
        if step == "flash" and r["dtype"] == "fp32":
            runs[(int(r["d"]), int(r["N"]), r["causal"])] = r
    out = "| d | N | B | full ms | TFLOP/s | vs mem-efficient | causal ms | TFLOP/s | vs mem-efficient |\n" \
          "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    for d, N in sorted(set((d, N) for d, N, _ in runs)):
        cells = []
        for c in ("0", "1"):
            r = runs.get((d, N, c))
            if r is None:
                cells.append("- | - | -")
                continue
            ours = float(r["time_ms_median"])
            eff = peer.get((r["B"], r["H"], r["N"], r["d"], "fp32", c, "sdpa_efficient_bwd"))
            cells.append("%.3f | %.1f | %s" % (ours, float(r["tflops"]), blk.ratio(eff, ours)))
        B = next(r["B"] for (dd, NN, _), r in runs.items() if (dd, NN) == (d, N))
        out += "| %d | %d | %s | %s |\n" % (d, N, B, " | ".join(cells))
    return out + blk.caption(s, p)


def block_ch07_sweep_figure(blk):
    """The sweeps' figure (plots/ch07_sweep.png: `make plots` draws it from ch07/sweep.csv and ch07/peers.csv, each
    tensor-core step of the sweeps beside PyTorch's backward, fp16): the image where the sweeps have run, else not
    measured."""
    s, p = "ch07/sweep.csv", "ch07/peers.csv"
    missing = not_measured(blk, s, p)
    if missing:
        return missing
    return ("![chapter 07's steps in the sweeps beside FlashAttention-2, cuDNN and SDPA memory-efficient: backward "
            "TFLOP/s against N, fp16](../plots/ch07_sweep.png)\n\n" + blk.caption(s, p))


def block_ch07_tc(blk):
    """The tensor-core steps in bf16 and fp16 at every shape of the article stage and the sweeps, beside the same
    dtype's backward of FlashAttention-2 (SDPA's flash backend) and cuDNN at their fastest round; vs: the peer's time
    / ours (above 1: ours faster). The goals (CH07_TC_GOALS): the last mma.sync step at least 1.00 against flash at
    every point, the first, the one before the last and the last Hopper steps (wgmma, dq_overlap, warp_specialized)
    the same, and at least 0.80 against cuDNN at d = 128 from N = 4096."""
    files = ["ch07/article.csv", "ch07/sweep.csv"]
    p = "ch07/peers.csv"
    missing = not_measured(blk, files[0], p)
    if missing:
        return missing
    peer = blk.peers_fastest(p)
    out = "| step | B | H | N | d | dtype | mask | backward ms | TFLOP/s | flash ms | cuDNN ms | vs flash | vs cuDNN |\n" \
          "|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|\n"
    r3 = lambda x: "-" if x is None else fmt("%.3f", x)
    read = [f for f in files if os.path.isfile(blk.path(f))]
    goals = {g: [] for g in CH07_TC_GOALS}  # per goal, per run of its step: met or not
    rows = []
    for f in read:
        for step, _, r in backward_runs(blk, f):
            if step not in CH07_TC_STEPS:
                continue
            rows.append((int(r["d"]), int(r["N"]), r["causal"], r["dtype"], CH07_TC_STEPS.index(step), step, r))
    # each shape's steps together, in step order
    for _, _, _, _, _, step, r in sorted(rows, key=lambda x: x[:5]):
        ours = float(r["time_ms_median"])
        key = (r["B"], r["H"], r["N"], r["d"], r["dtype"], r["causal"])
        times = [peer.get(key + (x,)) for x in ("sdpa_flash_bwd", "sdpa_cudnn_bwd")]
        for g in goals:
            gstep, gpeer, least, from_n, from_d = g
            t = times[0 if gpeer == "flash" else 1]
            if step == gstep and int(r["N"]) >= from_n and int(r["d"]) >= from_d and t is not None:
                goals[g].append(t >= least * ours)
        out += "| `%s` | %s | %s | %s | %s | %s | %s | %.3f | %.1f | %s | %s |\n" % (
            step, r["B"], r["H"], r["N"], r["d"], r["dtype"], mask(r), ours,
            float(r["tflops"]), " | ".join(r3(t) for t in times), " | ".join(blk.ratio(t, ours) for t in times))
    out += "\n"
    for (gstep, gpeer, least, from_n, from_d), goal in goals.items():
        where = "at every point" if not from_n else "at d = %d from N = %d" % (from_d, from_n)
        if not goal:
            out += "- The goal (`%s` vs %s at least %.2f %s): no point to judge it by, no `%s` run there with a %s " \
                   "time in these files%s.\n" % (gstep, gpeer, least, where, gstep, gpeer,
                                                 "" if "ch07/sweep.csv" in read else
                                                 "; the sweeps not yet run (no `ch07/sweep.csv`)")
            continue
        out += "- The goal (`%s` vs %s at least %.2f %s): %s, at least %.2f at %d of %d points%s.\n" % (
            gstep, gpeer, least, where, "met" if all(goal) else "not met", least, sum(goal), len(goal),
            "" if "ch07/sweep.csv" in read else "; the sweeps not yet run (no `ch07/sweep.csv`)")
    return out + blk.caption(*(read + [p]))


def block_ch07_hopper(blk):
    """The Hopper steps one after another (bench.sh's hopper stage, ch07/hopper.csv): at each point the backward's
    median ms of each step (CH07_HOPPER_STEPS; a step's number is its place in CH07_STEPS), the TFLOP/s of the last
    one that ran there, and each step's speed-up over the one before (its time over the next one's); then the range of
    each speed-up per d."""
    rel = "ch07/hopper.csv"
    missing = not_measured(blk, rel)
    if missing:
        return missing
    steps = CH07_HOPPER_STEPS
    number = {s: n for n, (s, _) in enumerate(CH07_STEPS, 1)}
    times = {}
    for step, _, r in backward_runs(blk, rel):
        if step in steps:
            times.setdefault((int(r["d"]), int(r["N"]), r["causal"]), {})[step] = r
    pairs = range(len(steps) - 1)  # step i + 1 over step i
    out = "| d | N | mask | %s | TFLOP/s | %s |\n" % (
        " | ".join("`%s` ms" % x for x in steps),
        " | ".join("step %d over %d" % (number[steps[i + 1]], number[steps[i]]) for i in pairs))
    out += "|---:|---:|---|%s---:|%s\n" % ("---:|" * len(steps), "---:|" * len(pairs))
    gains = {}
    for (d, N, c), k in sorted(times.items(), key=lambda x: (-x[0][0], x[0][1], x[0][2])):
        ms = [float(k[s]["time_ms_median"]) if s in k else None for s in steps]
        out += "| %d | %d | %s | %s | %s | %s |\n" % (
            d, N, "causal" if c == "1" else "full", " | ".join("-" if m is None else "%.3f" % m for m in ms),
            "%.1f" % float(k[[s for s in steps if s in k][-1]]["tflops"]),
            " | ".join(blk.ratio(ms[i], ms[i + 1]) for i in pairs))
        for i in pairs:
            if ms[i] and ms[i + 1]:
                gains.setdefault((d, i), []).append(ms[i] / ms[i + 1])
    out += "\n"
    for d in sorted({d for d, _ in gains}, reverse=True):
        out += "- d = %d: %s.\n" % (d, ", ".join(
            "step %d over step %d %s" % (number[steps[i + 1]], number[steps[i]], (
                "%s to %s at %d points" % (fmt("%.2f", min(g)), fmt("%.2f", max(g)), len(g)) if g else "no point"))
            for i in pairs for g in [gains.get((d, i), [])]))
    return out + blk.caption(rel)


def block_ch07_tiles(blk):
    """The flash step at each of its tiles (Br, Bc) at the article's size, full and causal; vs fastest: the fastest
    tile's time / this one's for the same mask (1.00: the fastest)."""
    t = "ch07/tiles.csv"
    missing = not_measured(blk, t)
    if missing:
        return missing
    blk.t(t).need("br", "bc")
    runs = [r for step, _, r in backward_runs(blk, t) if step == "flash"]
    best = {}
    for r in runs:
        ms = float(r["time_ms_median"])
        best[r["causal"]] = min(ms, best.get(r["causal"], ms))
    out = "| Br | Bc | mask | backward ms | TFLOP/s | vs fastest |\n|---:|---:|---|---:|---:|---:|\n"
    for r in sorted(runs, key=lambda r: (r["causal"], int(r["br"]), int(r["bc"]))):
        ms = float(r["time_ms_median"])
        out += "| %s | %s | %s | %.3f | %.1f | %s |\n" % (r["br"], r["bc"], mask(r),
                                                         ms, float(r["tflops"]), blk.ratio(best[r["causal"]], ms))
    return out + blk.caption(t)


def block_ch07_wgmma_checks(blk):
    """Step 6's first GPU run (ch07/wgmma_checks.txt, written from the run's output): its checks against the float64
    reference, GPU tests and compute-sanitizer runs counted with their verdicts; its times beside step 5's at the
    sweep points timed, and beside the peers' where the same call timed them (one round: a first look, not the
    bench's fastest of several)."""
    rel = "ch07/wgmma_checks.txt"
    missing = not_measured(blk, rel)
    if missing:
        return missing
    head, checks, tests, san, times, peers, ncu_lines = {}, [], [], [], {}, {}, []
    with open(blk.path(rel)) as f:
        for line in f:
            line = line.strip()
            m = re.match(r"(gpu|cuda|date): (\S+(?: \S+)?)", line)
            if m and m.group(1) not in head:
                head[m.group(1)] = m.group(2).split(" (")[0]
            m = re.match(r"B=.*: rc=(\d+), counted != model lines: (\d+) \| .* (\S+)$", line)
            if m:
                checks.append(m.group(1) == "0" and m.group(2) == "0" and m.group(3) == "ok")
            m = re.match(r"gpu/.*: Tested: (\d+) \| Passing: (\d+) \| Failing: (\d+)", line)
            if m:
                tests.append(tuple(int(x) for x in m.groups()))
            m = re.match(r"(memcheck|synccheck|racecheck) .*: rc=(\d+) (ERROR|RACECHECK) SUMMARY: 0 (errors|hazards)",
                         line)
            if re.match(r"(memcheck|synccheck|racecheck) ", line):
                san.append(bool(m) and m.group(2) == "0")
            m = re.match(r"d=(\d+) N=(\d+) c=(\d) (wide_blocks|wgmma): \S+ ([0-9.]+) [0-9.]+ ([0-9.]+) ", line)
            if m:
                times.setdefault((int(m.group(1)), int(m.group(2)), m.group(3)), {})[m.group(4)] = (
                    float(m.group(5)), float(m.group(6)))
            m = re.match(r"d=(\d+): duration ([0-9.]+) ms; SM \(compute\) throughput ([0-9.]+)%, L1/TEX ([0-9.]+)%.*"
                         r"achieved occupancy ([0-9.]+)%", line)
            if m:
                ncu_lines.append(m.groups())
            m = re.match(r"(sdpa_flash|sdpa_cudnn)_bwd,\d+,\d+,(\d+),(\d+),\w+,(\d),([0-9.]+),", line)
            if m:
                peers[(int(m.group(3)), int(m.group(2)), m.group(4), m.group(1))] = float(m.group(5))
    tested = sum(t[0] for t in tests)
    out = ("Checks against the float64 reference: %d of %d pass (counted bytes equal to the model's in each). GPU "
           "tests: %d of %d pass. compute-sanitizer: %d of %d runs without an error or a hazard.\n\n" % (
               sum(checks), len(checks), sum(t[1] for t in tests), tested, sum(san), len(san)))
    out += "| d | N | mask | `wide_blocks` ms | `wgmma` ms | TFLOP/s | step 5 / step 6 | flash ms | cuDNN ms | " \
           "vs flash | vs cuDNN |\n|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    # the points both steps ran at, each with its peers' times (None where the call timed none)
    points = [(d, N, c, k["wide_blocks"][0], k["wgmma"], {p: peers.get((d, N, c, "sdpa_" + p.lower()))
                                                          for p in ("flash", "cuDNN")})
              for (d, N, c), k in sorted(times.items(), key=lambda x: (-x[0][0], x[0][1], x[0][2]))
              if "wgmma" in k and "wide_blocks" in k]
    for d, N, c, wide, (ms, tf), pt in points:
        out += "| %d | %d | %s | %.3f | %.3f | %.1f | %s | %s | %s | %s |\n" % (
            d, N, "causal" if c == "1" else "full", wide, ms, tf, blk.ratio(wide, ms),
            " | ".join("-" if pt[p] is None else "%.3f" % pt[p] for p in ("flash", "cuDNN")),
            blk.ratio(pt["flash"], ms), blk.ratio(pt["cuDNN"], ms))
    # how each goal of step 6 reads after its speed-up over step 5 (the goal against flash first, then cuDNN's)
    says = {"flash": "; FlashAttention-2's time over step 6's at least %s at %d of %d points with a peer time",
            "cuDNN": ", cuDNN's at least %s at %d of %d"}
    for d in sorted({p[0] for p in points}, reverse=True):
        pts = [p for p in points if p[0] == d]
        speed = [wide / ms for _, _, _, wide, (ms, _), _ in pts]
        out += "\n- d = %d: step 6 over step 5 %s to %s at the %d points" % (
            d, fmt("%.2f", min(speed)), fmt("%.2f", max(speed)), len(pts))
        # step 6's goals (CH07_TC_GOALS) where they apply: at this d, at their N
        for gstep, gpeer, least, from_n, from_d in CH07_TC_GOALS:
            if gstep != "wgmma" or d < from_d:
                continue
            x = [pt[gpeer] / ms for _, N, _, _, (ms, _), pt in pts if N >= from_n and pt[gpeer]]
            out += says[gpeer] % (fmt("%.2f", least), sum(v >= least for v in x), len(x))
        out += "."
    for d, dur, sm, l1, occ in ncu_lines:
        out += ("\n- ncu at d = %s: %s ms; SM (compute) throughput %s%%, L1/TEX %s%%; achieved occupancy %s%%." % (
            d, dur, sm, l1, occ))
    out += "\n"
    return out + "\nGenerated by `make docs` from `%s` (in `%s/`): %s, CUDA %s, measured %s.\n" % (
        rel, blk.R, head.get("gpu", "GPU " + NOT_RECORDED), head.get("cuda", NOT_RECORDED), head.get("date", NOT_RECORDED))


def tool_runs(blk, rel, prog, way_re):
    """A small kernel of the tests stage under racecheck and synccheck, as bench.sh logs it in REL: for each way the
    kernel ran (its arguments, matching WAY_RE) and each tool, the command ("$ compute-sanitizer --tool TOOL ./PROG
    WAY"), the kernel's result line ("WAY: ... (ok)" or "(wrong)") or its CUDA error, and the tool's summary line.
    Returns the ways in the order they ran, and for each (way, tool) what the kernel's result said ("right", "wrong",
    "no result") and what the tool said ("N hazards", "N errors", "no summary")."""
    ways, read, said, run = [], {}, {}, None
    with open(blk.path(rel)) as f:
        for line in f:
            line = line.strip()
            m = re.match(r"\$ compute-sanitizer --tool (racecheck|synccheck) \./%s (%s)$" % (prog, way_re), line)
            if m:
                run = (m.group(2), m.group(1))
                if run[0] not in ways:
                    ways.append(run[0])
                read[run], said[run] = "no result", "no summary"
                continue
            if line.startswith("$ "):  # another command (the build, a way this block does not know): not a run's
                run = None
            if run is None:
                continue
            m = re.match(r"(.+?): .*\((ok|wrong)\)$", line)
            if m and m.group(1) == run[0]:
                read[run] = "right" if m.group(2) == "ok" else "wrong"
            m = re.match(r"RACECHECK SUMMARY: (\d+) hazards? displayed", line)
            if m and run[1] == "racecheck":
                said[run] = "%s hazard%s" % (m.group(1), "" if m.group(1) == "1" else "s")
            m = re.match(r"ERROR SUMMARY: (\d+) errors?", line)
            if m and run[1] == "synccheck":
                said[run] = "%s error%s" % (m.group(1), "" if m.group(1) == "1" else "s")
    return ways, read, said


def block_ch07_handover(blk):
    """What compute-sanitizer's racecheck and synccheck say of step 10's hand-over of dQ_s alone (bench.sh's tests
    stage, ch07/handover.txt: for each way the kernel ran and each tool, the command, the kernel's result or its CUDA
    error, and the tool's summary line), one row per way, in the order they ran. A way is the kernel's arguments:
    FREE [WARPS [READY [fence] [ds]]] (tests/ch07/handover.cu)."""
    rel = "ch07/handover.txt"
    missing = not_measured(blk, rel)
    if missing:
        return missing
    tools = ("racecheck", "synccheck")
    ways, read, said = tool_runs(blk, rel, "handover",
                                 r"(?:arrive|aligned|unaligned)(?: [1-8](?: (?:arrive|wait)(?: fence)?(?: ds)?)?)?")
    free = {"arrive": "warp 1 arrives (`bar.arrive`), the consumers wait (`bar.sync`)",
            "aligned": "both wait (`bar.sync`)", "unaligned": "both wait (`barrier.sync`)"}
    ready = {"arrive": "the consumers arrive (`bar.arrive`), warp 1 waits (`bar.sync`)",
             "wait": "both wait (`barrier.sync`)"}
    out = ("| consumer warps | DQ_FREE | DQ_READY | proxy fence | the consumers' own barrier | the tile read "
           "(racecheck's run, synccheck's) | racecheck | synccheck |\n|---:|---|---|---|---|---|---|---|\n")
    for w in ways:
        words = w.split() + ["1", "arrive"][len(w.split()) - 1:]
        r = [read.get((w, t), "not run") for t in tools]
        out += "| %s | %s | %s | %s | %s | %s | %s | %s |\n" % (
            words[1] + (" (step 10's way)" if words == ["unaligned", "8", "arrive", "fence", "ds"] else ""),
            free[words[0]], ready[words[2]], "yes" if "fence" in words[3:] else "no",
            "yes" if "ds" in words[3:] else "no", r[0] if r[0] == r[1] else "%s, %s" % tuple(r),
            said.get((w, "racecheck"), "not run"), said.get((w, "synccheck"), "not run"))
    # where racecheck loses the order: the ways with both sides waiting on DQ_FREE (step 10's), by what the consumers
    # do on DQ_READY, the number of consumer warps (and the fence, the consumers' own barrier) at which it is clean
    # and at which it reports
    verdicts = []
    for how, name in (("arrive", "the consumers arriving on DQ_READY"), ("wait", "both sides waiting on DQ_READY")):
        clean, reports = [], []
        for w in ways:
            words = w.split() + ["1", "arrive"][len(w.split()) - 1:]
            if words[0] != "unaligned" or words[2] != how:
                continue
            extra = [x for x, on in (("the fence", "fence" in words[3:]), ("their own barrier", "ds" in words[3:])) if on]
            label = words[1] + (" (%s)" % " and ".join(extra) if extra else "")
            r = said.get((w, "racecheck"), "")
            if r == "0 hazards":
                clean.append(label)
            elif r.endswith(("hazard", "hazards")):
                reports.append(label)
        if clean or reports:
            verdicts.append("%s, clean at %s, reporting at %s" % (name, ", ".join(clean) or "none",
                                                                   ", ".join(reports) or "none"))
    if verdicts:
        out += ("\nracecheck with both sides waiting on DQ_FREE (step 10's way), by consumer warps: %s.\n"
                % "; ".join(verdicts))
    return out + blk.caption(rel)


def block_ch07_stage_release(blk):
    """What racecheck and synccheck say of step 10's stages of L_i and D_i alone (bench.sh's tests stage,
    ch07/stage_release.txt, written as handover.txt is): one row per way a consumer warp releases a stage, in the order
    they ran. A way is the kernel's arguments: lane0|syncwarp|every [WARPS] (tests/ch07/stage_release.cu)."""
    rel = "ch07/stage_release.txt"
    missing = not_measured(blk, rel)
    if missing:
        return missing
    tools = ("racecheck", "synccheck")
    ways, read, said = tool_runs(blk, rel, "stage_release", r"(?:lane0|syncwarp|every)(?: [1-8])?")
    how = {"lane0": "lane 0 arrives, after the warp's reads",
           "syncwarp": "`__syncwarp()`, then lane 0 arrives",
           "every": "every lane arrives (step 10's way)"}
    out = ("| consumer warps | how a warp releases the stage on `empty` | the sums (racecheck's run, synccheck's) "
           "| racecheck | synccheck |\n|---:|---|---|---|---|\n")
    for w in ways:
        words = w.split() + ["8"][len(w.split()) - 1:]
        r = [read.get((w, t), "not run") for t in tools]
        out += "| %s | %s | %s | %s | %s |\n" % (words[1], how[words[0]], r[0] if r[0] == r[1] else "%s, %s" % tuple(r),
                                              said.get((w, "racecheck"), "not run"),
                                              said.get((w, "synccheck"), "not run"))
    return out + blk.caption(rel)


def block_ch07_status(blk):
    """What of the chapter has been measured, and what its checks on the GPU said: the steps with a run at the
    article's size (article.csv), the GPU tests (tests_gpu.log: Criterion's closing line) and compute-sanitizer's
    runs (sanitizer_summary.txt: one line a tool, step and shape, ending in the tool's summary), each step named by
    its number; a missing file is said to be not yet measured."""
    art, tests, san = "ch07/article.csv", "ch07/tests_gpu.log", "ch07/sanitizer_summary.txt"
    number = {s: i for i, (s, _) in enumerate(CH07_STEPS, 1)}
    number["dq_pass"] = 2
    label = lambda s: "step %d (`%s`)" % (number[s], CH07_RUN_NAMES.get(s, s))
    out, files = "", []
    if os.path.isfile(blk.path(art)):
        files.append(art)
        done = {s for s, _, r in backward_runs(blk, art) if (r["B"], r["H"], r["N"], r["d"]) == ("10", "64", "1024", "64")}
        steps = [s for s, _ in CH07_RUNS]
        missing = [s for s in steps if s not in done]
        out += "- At the article's size (B=10 H=64 N=1024 d=64, `article.csv`): %s, each run checked against the " \
               "float64 reference.\n" % (
                   "every step, 1 to %d, and step 2 with `--dq pass`" % len(CH07_STEPS) if not missing else
                   "every step but %s (not yet measured there)" % ", ".join(label(s) for s in missing))
    else:
        out += "- At the article's size: not yet measured (no `%s`).\n" % art
    out += blk.gpu_tests_line(tests) + blk.sanitizer_lines(san, lambda args: label(
        "dq_pass" if args.endswith("--dq pass") else args.split()[-1]))
    if os.path.isfile(blk.path(san)):
        # the steps the tests stage's last run had (its sanitizer runs name them): a step added since is not in it
        with open(blk.path(san)) as f:
            ran = set(re.findall(r"compute-sanitizer --tool \w+ \S+ --kernel (\w+)", f.read()))
        missing = [s for s, _ in CH07_STEPS if s not in ran]
        if missing:
            out += "- Not in that run of the tests stage (the GPU tests and compute-sanitizer above): %s.\n" % \
                ", ".join(label(s) for s in missing)
        if not os.path.isfile(blk.path("ch07/tests_gpu.provenance.json")):
            out += "- That run has no record of the code it tested (`ch07/tests_gpu.provenance.json`): a kernel changed " \
                   "since is not told apart.\n"
    files += [x for x in (tests, san) if os.path.isfile(blk.path(x))]
    return out + (blk.caption(*files) if files else "")
