#!/usr/bin/env python3
"""peers.py: what a user would pick instead of this book's kernels, timed the way the book times its own.

    python3 common/scripts/peers.py [--batch 10 --heads 64 --seq 1024 --dim 64] [--dtype fp32|fp16|bf16]
                                    [--causal] [--reps 20] [--peers NAME,...] [--backward] [--csv FILE]
    python3 common/scripts/peers.py --shape B,H,N,d,dtype,causal[,reps[,peers]] [--shape ...] [--csv FILE]
    python3 common/scripts/peers.py --shapes FILE [--backward] [--csv FILE]

Optional: nothing in the book needs it. It times, on the same GPU and with the book's method (CUDA events,
warm-up, the L2 flushed before every repetition, median and minimum), PyTorch's three-op attention (matmul,
softmax, matmul) and each backend of torch.nn.functional.scaled_dot_product_attention that takes the inputs:
memory-efficient, FlashAttention-2 ("flash", fp16/bf16 only), cuDNN, and the plain math one. Inputs are the
book's distribution (Q, K uniform in [-2, 2), V in [-1, 1)), shape [B, H, N, d]. FLOPs are the book's
convention, 4 B H N^2 d, halved with causal. Where PyTorch or a GPU is absent it says so and exits 0.

Several shapes in one process (--shape, repeated, or --shapes FILE): Python, PyTorch's import and the CUDA
context are paid once instead of once per shape. A shape is "B H N d dtype causal [reps [peers]]" (spaces in a
file, one shape a line, '#' starts a comment; commas after --shape): causal is 0/1 (or full/causal), reps
overrides --reps for that shape, peers (comma-separated in a file, '+'-separated after --shape) overrides
--peers. The CSV rows are the same as one process per shape would write, in the order of the shapes.

--backward: the backward pass instead (chapter 07's peers), every shape of the run. Q, K, V as above with
requires_grad, and the upstream gradient dO uniform in [-1, 1) as chapter 07 draws it (here after V from the
same generator, so that Q, K, V are those of the forward mode). One forward outside the timed region, then the
gradient call alone is timed: torch.autograd.grad(out, (Q, K, V), dO, retain_graph=True), with the same warm-up,
L2 flush, median and minimum. FLOPs: 10 B H N^2 d (five N x N x d products: S again, dV, dP, dQ, dK; chapter 07's convention),
halved with causal. Every peer has a backward (3-op through autograd, each SDPA backend its own kernel);
one that refuses the inputs (flash and cuDNN in fp32) is skipped with a line, as in the forward mode.
The rows are those of the forward mode, the peer's name with "_bwd" appended (sdpa_flash_bwd, torch_3op_bwd),
same header: a reader that picks rows by peer name (the chapter benches' summaries, the blocks of make docs,
make report's claims) can never take a backward time for a forward one, and every CSV written so far keeps its
header; a column saying the pass would have changed the header and been ignored by those readers, which would
then mix the two passes. rel_err_vs_3op in that mode: the worst relative L2 error of dQ, dK, dV against the
3-op's gradients in float64 (computed on the GPU from the same inputs, heads in chunks, so its N x N float64
intermediates stay within a few GB per chunk); "nan" where that reference could not be computed (out of memory),
as the forward mode writes where its reference does not fit.
"""
import argparse
import statistics
import sys

PEERS = ["torch_3op", "sdpa_efficient", "sdpa_flash", "sdpa_cudnn", "sdpa_math"]
DTYPES = ["fp32", "fp16", "bf16"]
HEADER = "peer,gpu,torch,B,H,N,d,dtype,causal,time_ms_median,time_ms_min,tflops,rel_err_vs_3op\n"
BACKWARD_SUFFIX = "_bwd"  # a backward row's peer: sdpa_flash_bwd (the docstring says why not a column)
REF_CHUNK_BYTES = 4 << 30  # the backward's float64 reference: N x N intermediates per chunk of heads, at most


class Shape:
    def __init__(self, B, H, N, d, dtype, causal, reps, peers):
        self.B, self.H, self.N, self.d, self.dtype, self.causal = B, H, N, d, dtype, causal
        self.reps, self.peers = reps, peers

    def label(self):
        return (f"B={self.B} H={self.H} N={self.N} d={self.d} {self.dtype} "
                f"{'causal' if self.causal else 'full'}")


def flops(s, backward=False):
    """The book's FLOP count of one attention pass over shape s: the forward's two N x N x d products,
    4 B H N^2 d, or the backward's five (S again, dV, dP, dQ, dK), 10 B H N^2 d; halved with the causal mask."""
    return (10.0 if backward else 4.0) * s.B * s.H * s.N * s.N * s.d / (2 if s.causal else 1)


def row_name(peer, backward=False):
    """The CSV's peer column: the peer's name, with BACKWARD_SUFFIX for a backward row."""
    return peer + BACKWARD_SUFFIX if backward else peer


def csv_row(peer, gpu, torch_version, s, med, mn, err, backward=False):
    """One CSV row (HEADER's columns): times in ms, TFLOP/s from the median, err the relative error (nan where
    not computed)."""
    return (f"{row_name(peer, backward)},{gpu},{torch_version},{s.B},{s.H},{s.N},{s.d},{s.dtype},{int(s.causal)},"
            f"{med:.4f},{mn:.4f},{flops(s, backward) / med / 1e9:.2f},{err:.2e}\n")


def parse_peers(text, where):
    names = [p for p in text.replace("+", ",").split(",") if p]
    bad = [p for p in names if p not in PEERS]
    if bad or not names:
        raise ValueError(f"{where}: unknown peer(s) {','.join(bad) or '(none)'}; known: {','.join(PEERS)}")
    return names


def parse_shape(fields, where, reps, peers):
    """fields: B H N d dtype causal [reps [peers]] as strings; raises ValueError with `where` in the message."""
    if not 6 <= len(fields) <= 8:
        raise ValueError(f"{where}: expected 'B H N d dtype causal [reps [peers]]', got {' '.join(fields)!r}")
    try:
        B, H, N, d = (int(x) for x in fields[:4])
    except ValueError:
        raise ValueError(f"{where}: B, H, N and d must be integers, got {' '.join(fields[:4])!r}") from None
    if min(B, H, N, d) < 1:
        raise ValueError(f"{where}: B, H, N and d must be >= 1")
    dtype = fields[4]
    if dtype not in DTYPES:
        raise ValueError(f"{where}: dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    c = fields[5].lower()
    if c not in ("0", "1", "full", "causal"):
        raise ValueError(f"{where}: causal must be 0, 1, full or causal, got {fields[5]!r}")
    if len(fields) > 6:
        try:
            reps = int(fields[6])
        except ValueError:
            reps = 0
        if reps < 1:
            raise ValueError(f"{where}: reps must be an integer >= 1, got {fields[6]!r}")
    if len(fields) > 7:
        peers = parse_peers(fields[7], where)
    return Shape(B, H, N, d, dtype, c in ("1", "causal"), reps, peers)


def shapes_from(a):
    """The shapes to time, in order: --shapes FILE's lines, then every --shape; else the single-shape options."""
    peers = parse_peers(a.peers, "--peers") if a.peers else list(PEERS)
    shapes = []
    if a.shapes:
        with open(a.shapes) as f:
            for i, line in enumerate(f, 1):
                fields = line.split("#", 1)[0].split()
                if fields:
                    shapes.append(parse_shape(fields, f"{a.shapes}:{i}", a.reps, peers))
    for s in a.shape or []:
        shapes.append(parse_shape(s.split(","), f"--shape {s}", a.reps, peers))
    if not shapes:
        shapes.append(Shape(a.batch, a.heads, a.seq, a.dim, a.dtype, a.causal, a.reps, peers))
    return shapes


def time_calls(torch, fn, reps, flush):
    """The book's method: 3 warm-up calls, then reps calls each timed alone by CUDA events, the L2 flushed (its
    twice-size buffer zeroed) before each; returns (median, min) in ms."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), min(times)


def inputs(torch, s, backward):
    """Q, K, V (and, backward, dO; Q, K, V then require grad) of shape s, whatever shapes came before."""
    dt = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[s.dtype]
    shape = (s.B, s.H, s.N, s.d)
    # the same generator seed for every shape: a shape's inputs do not depend on the shapes before it
    g = torch.Generator(device="cuda").manual_seed(0)
    Q = (torch.rand(*shape, device="cuda", generator=g) * 4 - 2).to(dt)
    K = (torch.rand(*shape, device="cuda", generator=g) * 4 - 2).to(dt)
    V = (torch.rand(*shape, device="cuda", generator=g) * 2 - 1).to(dt)
    if not backward:
        return Q, K, V, None
    dO = (torch.rand(*shape, device="cuda", generator=g) * 2 - 1).to(dt)
    return Q.requires_grad_(), K.requires_grad_(), V.requires_grad_(), dO


def attention_fns(torch, F, SDPBackend, sdpa_kernel, s, Q, K, V):
    """{peer: a function computing attention's output O from Q, K, V}"""
    scale = s.d ** -0.5
    mask = torch.ones(s.N, s.N, device="cuda", dtype=torch.bool).tril() if s.causal else None

    def three_op():
        S = torch.matmul(Q, K.transpose(-1, -2)) * scale
        if mask is not None:
            S = S.masked_fill(~mask, float("-inf"))
        return torch.matmul(torch.softmax(S, dim=-1), V)

    def sdpa(backend):
        def run():
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(Q, K, V, is_causal=s.causal)
        return run

    return {"torch_3op": three_op, "sdpa_efficient": sdpa(SDPBackend.EFFICIENT_ATTENTION),
            "sdpa_flash": sdpa(SDPBackend.FLASH_ATTENTION), "sdpa_cudnn": sdpa(SDPBackend.CUDNN_ATTENTION),
            "sdpa_math": sdpa(SDPBackend.MATH)}


def first_line(e):
    return str(e).splitlines()[0][:100] if str(e) else type(e).__name__


def time_shape(torch, F, SDPBackend, sdpa_kernel, s, flush, gpu):
    """Times the peers' forward at one shape; returns its CSV rows (strings)."""
    Q, K, V, _ = inputs(torch, s, False)
    fns = attention_fns(torch, F, SDPBackend, sdpa_kernel, s, Q, K, V)
    ref = None
    rows = []
    for name in [p for p in PEERS if p in s.peers]:  # the order of PEERS, whatever order was asked
        fn = fns[name]
        try:
            out = fn()
            torch.cuda.synchronize()
        except RuntimeError as e:  # a backend that refuses these inputs, or runs out of memory
            print(f"peers: {name}: not available for these inputs ({first_line(e)})")
            continue
        if ref is None:
            try:
                ref = fns["torch_3op"]().double()
            except RuntimeError as e:
                print(f"peers: the 3-op reference does not fit ({first_line(e)}): no rel err")
                ref = False
        err = ((out.double() - ref).norm() / ref.norm()).item() if ref is not False else float("nan")
        del out
        med, mn = time_calls(torch, fn, s.reps, flush)
        print(f"peers: {name:15s} {med:9.3f} ms (min {mn:.3f})  {flops(s) / med / 1e9:7.1f} TFLOP/s  "
              f"rel err vs 3-op {err:.1e}")
        rows.append(csv_row(name, gpu, torch.__version__, s, med, mn, err))
    return rows


def reference_gradients(torch, Q, K, V, dO, causal, chunk_bytes=REF_CHUNK_BYTES):
    """dQ, dK, dV of the 3-op attention in float64 (autograd through matmul, softmax, matmul), from the inputs as
    the peers see them (already rounded to their dtype). Heads are independent: they go through in chunks whose
    N x N float64 intermediates (scores, probabilities and their gradients: about six N x N arrays a head) stay
    within chunk_bytes, one head at a time where a head alone is larger."""
    B, H, N, d = Q.shape
    flat = [x.detach().reshape(B * H, N, d) for x in (Q, K, V, dO)]
    chunk = max(1, chunk_bytes // (6 * 8 * N * N))
    scale = d ** -0.5
    mask = torch.ones(N, N, device="cuda", dtype=torch.bool).tril() if causal else None
    grads = [torch.empty(B * H, N, d, device="cuda", dtype=torch.float64) for _ in range(3)]
    for i in range(0, B * H, chunk):
        q, k, v = (x[i:i + chunk].double().requires_grad_() for x in flat[:3])
        S = torch.matmul(q, k.transpose(-1, -2)) * scale
        if mask is not None:
            S = S.masked_fill(~mask, float("-inf"))
        o = torch.matmul(torch.softmax(S, dim=-1), v)
        for into, g in zip(grads, torch.autograd.grad(o, (q, k, v), flat[3][i:i + chunk].double())):
            into[i:i + chunk] = g
        del q, k, v, S, o
    return [g.reshape(B, H, N, d) for g in grads]


def time_shape_backward(torch, F, SDPBackend, sdpa_kernel, s, flush, gpu):
    """Times the peers' backward at one shape (--backward); returns its CSV rows (strings)."""
    Q, K, V, dO = inputs(torch, s, True)
    fns = attention_fns(torch, F, SDPBackend, sdpa_kernel, s, Q, K, V)
    try:
        ref = reference_gradients(torch, Q, K, V, dO, s.causal)
    except RuntimeError as e:  # out of memory: the times are still worth having
        print(f"peers: the float64 3-op gradients do not fit ({first_line(e)}): no rel err")
        ref = None
    torch.cuda.empty_cache()
    rows = []
    for name in [p for p in PEERS if p in s.peers]:
        try:
            out = fns[name]()  # the forward: outside the timed region, its graph kept for every gradient call
            grads = torch.autograd.grad(out, (Q, K, V), dO, retain_graph=True)
            torch.cuda.synchronize()
        except RuntimeError as e:  # a backend that refuses these inputs (or their backward), or out of memory
            print(f"peers: {row_name(name, True)}: not available for these inputs ({first_line(e)})")
            out = grads = None
            torch.cuda.empty_cache()
            continue
        err = float("nan")
        if ref is not None:  # the worst of dQ, dK, dV
            err = max(((g.double() - r).norm() / r.norm()).item() for g, r in zip(grads, ref))
        del grads

        def backward():
            torch.autograd.grad(out, (Q, K, V), dO, retain_graph=True)

        med, mn = time_calls(torch, backward, s.reps, flush)
        del out
        print(f"peers: {row_name(name, True):19s} {med:9.3f} ms (min {mn:.3f})  "
              f"{flops(s, True) / med / 1e9:7.1f} TFLOP/s  rel err vs float64 3-op (worst of dQ, dK, dV) {err:.1e}")
        rows.append(csv_row(name, gpu, torch.__version__, s, med, mn, err, backward=True))
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=10)
    p.add_argument("--heads", type=int, default=64)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--dtype", choices=DTYPES, default="fp32")
    p.add_argument("--causal", action="store_true")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--peers", default=None, help=f"comma-separated, of {','.join(PEERS)} (default: all)")
    p.add_argument("--shape", action="append", metavar="B,H,N,d,dtype,causal[,reps[,peers]]",
                   help="a shape to time (repeatable; replaces --batch .. --causal)")
    p.add_argument("--shapes", metavar="FILE", help="shapes to time, one a line: B H N d dtype causal [reps [peers]]")
    p.add_argument("--backward", action="store_true",
                   help="time the backward (the gradient call alone; rows PEER_bwd, FLOPs 10 B H N^2 d)")
    p.add_argument("--list", action="store_true", help="print the shapes that would be timed and exit (no PyTorch)")
    p.add_argument("--csv", default=None, help="append rows to this CSV file ('-' for stdout)")
    a = p.parse_args(argv)
    if a.reps < 1:
        p.error("--reps must be >= 1")
    try:
        shapes = shapes_from(a)
    except (ValueError, OSError) as e:
        p.error(str(e))
    if a.list:
        if a.backward:  # a comment: the list stays a valid --shapes file
            print(f"# backward: rows PEER{BACKWARD_SUFFIX}, FLOPs 10 B H N^2 d (halved causal)")
        for s in shapes:
            print(f"{s.B} {s.H} {s.N} {s.d} {s.dtype} {int(s.causal)} {s.reps} {','.join(s.peers)}")
        return 0
    try:
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        print("peers: PyTorch is not installed here; nothing timed (the book's own runs do not need it)")
        return 0
    if not torch.cuda.is_available():
        print("peers: PyTorch sees no CUDA device; nothing timed")
        return 0

    gpu = torch.cuda.get_device_name(0)
    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size // 4 + 1, device="cuda")
    time_one = time_shape_backward if a.backward else time_shape
    f = None
    if a.csv:
        f = sys.stdout if a.csv == "-" else open(a.csv, "a")
        if a.csv == "-" or f.tell() == 0:
            f.write(HEADER)
    failed = []
    try:
        for s in shapes:
            if len(shapes) > 1:
                print(f"peers: {s.label()}{' backward' if a.backward else ''}")
            try:
                rows = time_one(torch, F, SDPBackend, sdpa_kernel, s, flush, gpu)
            except RuntimeError as e:  # e.g. the inputs themselves do not fit: the other shapes still run
                print(f"peers: {s.label()}: FAILED ({first_line(e)})")
                failed.append(s.label())
                rows = []
            if f:
                f.writelines(rows)
                f.flush()  # each shape's rows as soon as they exist: a later shape that fails keeps them
            torch.cuda.empty_cache()  # the next shape's tensors may be larger: give the cache back
    finally:
        if f and f is not sys.stdout:
            f.close()
    if failed:
        print(f"peers: {len(failed)} of {len(shapes)} shape(s) failed: {'; '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
