#!/usr/bin/env python3
"""peers.py: what a user would pick instead of this book's kernels, timed the way the book times its own.

    python3 common/scripts/peers.py [--batch 10 --heads 64 --seq 1024 --dim 64] [--dtype fp32|fp16|bf16]
                                    [--causal] [--reps 20] [--csv FILE]

Optional: nothing in the book needs it. It times, on the same GPU and with the book's method (CUDA events,
warm-up, the L2 flushed before every repetition, median and minimum), PyTorch's three-op attention (matmul,
softmax, matmul) and each backend of torch.nn.functional.scaled_dot_product_attention that takes the inputs:
memory-efficient, FlashAttention-2 ("flash", fp16/bf16 only), cuDNN, and the plain math one. Inputs are the
book's distribution (Q, K uniform in [-2, 2), V in [-1, 1)), shape [B, H, N, d]. FLOPs are the book's
convention, 4 B H N^2 d, halved with --causal. Where PyTorch or a GPU is absent it says so and exits 0.
"""
import argparse
import statistics
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=10)
    p.add_argument("--heads", type=int, default=64)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--dtype", choices=["fp32", "fp16", "bf16"], default="fp32")
    p.add_argument("--causal", action="store_true")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--csv", default=None, help="append rows to this CSV file ('-' for stdout)")
    a = p.parse_args()
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

    dt = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[a.dtype]
    B, H, N, d = a.batch, a.heads, a.seq, a.dim
    g = torch.Generator(device="cuda").manual_seed(0)
    Q = (torch.rand(B, H, N, d, device="cuda", generator=g) * 4 - 2).to(dt)
    K = (torch.rand(B, H, N, d, device="cuda", generator=g) * 4 - 2).to(dt)
    V = (torch.rand(B, H, N, d, device="cuda", generator=g) * 2 - 1).to(dt)
    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size // 4 + 1, device="cuda")
    scale = d ** -0.5
    mask = torch.ones(N, N, device="cuda", dtype=torch.bool).tril() if a.causal else None

    def three_op():
        S = torch.matmul(Q, K.transpose(-1, -2)) * scale
        if mask is not None:
            S = S.masked_fill(~mask, float("-inf"))
        return torch.matmul(torch.softmax(S, dim=-1), V)

    def sdpa(backend):
        def run():
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(Q, K, V, is_causal=a.causal)
        return run

    candidates = [("torch_3op", three_op)]
    for name, backend in [("sdpa_efficient", SDPBackend.EFFICIENT_ATTENTION),
                          ("sdpa_flash", SDPBackend.FLASH_ATTENTION),
                          ("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION),
                          ("sdpa_math", SDPBackend.MATH)]:
        candidates.append((name, sdpa(backend)))

    ref = None
    rows = []
    flops = 4.0 * B * H * N * N * d / (2 if a.causal else 1)
    gpu = torch.cuda.get_device_name(0)
    for name, fn in candidates:
        try:
            out = fn()
            torch.cuda.synchronize()
        except RuntimeError as e:
            print(f"peers: {name}: not available for these inputs ({str(e).splitlines()[0][:100]})")
            continue
        if ref is None:
            ref = three_op().double()
        err = ((out.double() - ref).norm() / ref.norm()).item()
        for _ in range(3):
            fn()
        times = []
        for _ in range(a.reps):
            flush.zero_()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        med = statistics.median(times)
        rows.append((name, med, min(times), flops / med / 1e9, err))
        print(f"peers: {name:15s} {med:9.3f} ms (min {min(times):.3f})  {flops / med / 1e9:7.1f} TFLOP/s  "
              f"rel err vs 3-op {err:.1e}")

    if a.csv:
        f = sys.stdout if a.csv == "-" else open(a.csv, "a")
        if a.csv == "-" or f.tell() == 0:
            f.write("peer,gpu,torch,B,H,N,d,dtype,causal,time_ms_median,time_ms_min,tflops,rel_err_vs_3op\n")
        for name, med, mn, tf, err in rows:
            f.write(f"{name},{gpu},{torch.__version__},{B},{H},{N},{d},{a.dtype},{int(a.causal)},"
                    f"{med:.4f},{mn:.4f},{tf:.2f},{err:.2e}\n")
        if f is not sys.stdout:
            f.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
