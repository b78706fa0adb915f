#!/usr/bin/env python3
"""peers.py: what a user would pick instead of this book's kernels, timed the way the book times its own.

    python3 common/scripts/peers.py [--batch 10 --heads 64 --seq 1024 --dim 64] [--dtype fp32|fp16|bf16]
                                    [--causal] [--reps 20] [--peers NAME,...] [--csv FILE]
    python3 common/scripts/peers.py --shape B,H,N,d,dtype,causal[,reps[,peers]] [--shape ...] [--csv FILE]
    python3 common/scripts/peers.py --shapes FILE [--csv FILE]

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
"""
import argparse
import statistics
import sys

PEERS = ["torch_3op", "sdpa_efficient", "sdpa_flash", "sdpa_cudnn", "sdpa_math"]
DTYPES = ["fp32", "fp16", "bf16"]
HEADER = "peer,gpu,torch,B,H,N,d,dtype,causal,time_ms_median,time_ms_min,tflops,rel_err_vs_3op\n"


class Shape:
    def __init__(self, B, H, N, d, dtype, causal, reps, peers):
        self.B, self.H, self.N, self.d, self.dtype, self.causal = B, H, N, d, dtype, causal
        self.reps, self.peers = reps, peers

    def label(self):
        return (f"B={self.B} H={self.H} N={self.N} d={self.d} {self.dtype} "
                f"{'causal' if self.causal else 'full'}")


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


def time_shape(torch, F, SDPBackend, sdpa_kernel, s, flush, gpu):
    """Times the peers of one shape; returns its CSV rows (strings)."""
    dt = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[s.dtype]
    B, H, N, d = s.B, s.H, s.N, s.d
    # the same generator seed for every shape: a shape's inputs do not depend on the shapes before it
    g = torch.Generator(device="cuda").manual_seed(0)
    Q = (torch.rand(B, H, N, d, device="cuda", generator=g) * 4 - 2).to(dt)
    K = (torch.rand(B, H, N, d, device="cuda", generator=g) * 4 - 2).to(dt)
    V = (torch.rand(B, H, N, d, device="cuda", generator=g) * 2 - 1).to(dt)
    scale = d ** -0.5
    mask = torch.ones(N, N, device="cuda", dtype=torch.bool).tril() if s.causal else None

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

    fns = {"torch_3op": three_op, "sdpa_efficient": sdpa(SDPBackend.EFFICIENT_ATTENTION),
           "sdpa_flash": sdpa(SDPBackend.FLASH_ATTENTION), "sdpa_cudnn": sdpa(SDPBackend.CUDNN_ATTENTION),
           "sdpa_math": sdpa(SDPBackend.MATH)}
    ref = None
    rows = []
    flops = 4.0 * B * H * N * N * d / (2 if s.causal else 1)
    for name in [p for p in PEERS if p in s.peers]:  # the order of PEERS, whatever order was asked
        fn = fns[name]
        try:
            out = fn()
            torch.cuda.synchronize()
        except RuntimeError as e:  # a backend that refuses these inputs, or runs out of memory
            print(f"peers: {name}: not available for these inputs ({str(e).splitlines()[0][:100]})")
            continue
        if ref is None:
            try:
                ref = three_op().double()
            except RuntimeError as e:
                print(f"peers: the 3-op reference does not fit ({str(e).splitlines()[0][:100]}): no rel err")
                ref = False
        err = ((out.double() - ref).norm() / ref.norm()).item() if ref is not False else float("nan")
        del out
        for _ in range(3):
            fn()
        times = []
        for _ in range(s.reps):
            flush.zero_()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        med = statistics.median(times)
        print(f"peers: {name:15s} {med:9.3f} ms (min {min(times):.3f})  {flops / med / 1e9:7.1f} TFLOP/s  "
              f"rel err vs 3-op {err:.1e}")
        rows.append(f"{name},{gpu},{torch.__version__},{B},{H},{N},{d},{s.dtype},{int(s.causal)},"
                    f"{med:.4f},{min(times):.4f},{flops / med / 1e9:.2f},{err:.2e}\n")
    return rows


def main():
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
    p.add_argument("--list", action="store_true", help="print the shapes that would be timed and exit (no PyTorch)")
    p.add_argument("--csv", default=None, help="append rows to this CSV file ('-' for stdout)")
    a = p.parse_args()
    if a.reps < 1:
        p.error("--reps must be >= 1")
    try:
        shapes = shapes_from(a)
    except (ValueError, OSError) as e:
        p.error(str(e))
    if a.list:
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
    f = None
    if a.csv:
        f = sys.stdout if a.csv == "-" else open(a.csv, "a")
        if a.csv == "-" or f.tell() == 0:
            f.write(HEADER)
    failed = []
    try:
        for s in shapes:
            if len(shapes) > 1:
                print(f"peers: {s.label()}")
            try:
                rows = time_shape(torch, F, SDPBackend, sdpa_kernel, s, flush, gpu)
            except RuntimeError as e:  # e.g. the inputs themselves do not fit: the other shapes still run
                print(f"peers: {s.label()}: FAILED ({str(e).splitlines()[0][:100]})")
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
