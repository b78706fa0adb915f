/* kernels.cu: chapter 01's three softmax kernels over the rows of an R x N fp32 matrix (the S of chapter 00).
 *
 *   report row         CUDA kernels                            global memory per element of x
 *   softmax_3pass      softmax_3pass_kernel                    3 reads (max; sum of exp; normalise), 1 write
 *   softmax_online     softmax_online_kernel                   2 reads (running m and l; normalise), 1 write
 *   softmax_blockwise  softmax_blockwise_stats_kernel, then    2 reads, 1 write, plus the partial statistics:
 *                      softmax_blockwise_normalize_kernel      8 bytes written per chunk, 8*K read per chunk
 *
 * Run: ./ch01/run --seq N --rows R   (make ch01; see 01_online_softmax/README.md and bench.sh)
 *
 * softmax_3pass and softmax_online give each row one thread block, which loops over the row however long it
 * is. softmax_blockwise cuts every row into K = ceil(N/C) chunks of C elements and gives each chunk its own
 * block, so that one long row keeps many SMs busy; the chunks' (m_k, l_k) meet in global memory and are
 * merged by the second launch, as FlashAttention merges the statistics of its K/V blocks.
 *
 * Inside a block every thread walks its share of the row with float4 loads, UNROLL of them in flight, and keeps
 * its own statistic (a max, a sum, or an (m, l) pair); warp shuffles, then shared memory, combine them. The
 * (m, l) arithmetic is max_sum.h's, the same code the CPU version runs.
 *
 * IO counting (io_tally.cuh): every global access goes through IO_LOAD / IO_STORE. The row walkers below are
 * the only functions that touch x and y; each opens its own tally and flushes it when it returns, so the
 * kernels count what the walkers read and write plus their own accesses (the partial statistics). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "io_tally.cuh"
#include "kernels.h"
#include "max_sum.h"

/* float4 loads each thread issues before it uses any of them: memory-level parallelism for long rows. */
#define UNROLL 4

/* Blocks of MAX_THREADS threads that must fit on one SM together: all its thread slots (2048 on sm_80 and sm_90,
 * 1536 on sm_86/89, 1024 on sm_75). This caps the registers at 32 on sm_90, so that no kernel loses occupancy
 * (per-architecture __launch_bounds__, as in the CUDA programming guide). */
#if __CUDA_ARCH__ == 750
#define MIN_BLOCKS_PER_SM 2
#elif __CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890
#define MIN_BLOCKS_PER_SM 3
#else
#define MIN_BLOCKS_PER_SM 4
#endif

// ---- walking a row ---------------------------------------------------------------------------------------

/* Elements before the first 16-byte boundary of p: these, and the last (n - head) % 4, are read one float at
 * a time; everything between as float4. */
static __device__ __forceinline__ int aligned_head(const float *p, int n) {
    return min(n, (int)(((16 - ((uintptr_t)p & 15)) & 15) / 4));
}

/* This thread's share of x[0..n): calls visit(x_j) for each of its elements. Each element of x is read once by
 * the block. */
template <typename Visit>
static __device__ __forceinline__ void row_read(const float *__restrict__ x, int n, Visit visit) {
    IO_TALLY;
    const int t = threadIdx.x, T = blockDim.x;
    const int head = aligned_head(x, n);
    if (t < head) visit(IO_LOAD(x[t]));
    const float4 *x4 = reinterpret_cast<const float4 *>(x + head);
    const int n4 = (n - head) / 4;
    int i = t;
    for (; i + (UNROLL - 1) * T < n4; i += UNROLL * T) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = IO_LOAD(x4[i + u * T]);
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            visit(v[u].x);
            visit(v[u].y);
            visit(v[u].z);
            visit(v[u].w);
        }
    }
    for (; i < n4; i += T) {
        const float4 v = IO_LOAD(x4[i]);
        visit(v.x);
        visit(v.y);
        visit(v.z);
        visit(v.w);
    }
    const int tail = head + 4 * n4;
    if (tail + t < n) visit(IO_LOAD(x[tail + t]));
    IO_TALLY_FLUSH();
}

template <typename F>
static __device__ __forceinline__ float4 map4(F f, float4 v) {
    return make_float4(f(v.x), f(v.y), f(v.z), f(v.w));
}

/* This thread's share of y[j] = f(x[j]), j in [0, n). x and y share their alignment modulo 16 bytes. */
template <typename F>
static __device__ __forceinline__ void row_map(const float *__restrict__ x, float *__restrict__ y, int n, F f) {
    IO_TALLY;
    const int t = threadIdx.x, T = blockDim.x;
    const int head = aligned_head(x, n);
    if (t < head) IO_STORE(y[t], f(IO_LOAD(x[t])));
    const float4 *x4 = reinterpret_cast<const float4 *>(x + head);
    float4 *y4 = reinterpret_cast<float4 *>(y + head);
    const int n4 = (n - head) / 4;
    int i = t;
    for (; i + (UNROLL - 1) * T < n4; i += UNROLL * T) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = IO_LOAD(x4[i + u * T]);
#pragma unroll
        for (int u = 0; u < UNROLL; u++) IO_STORE(y4[i + u * T], map4(f, v[u]));
    }
    for (; i < n4; i += T) IO_STORE(y4[i], map4(f, IO_LOAD(x4[i])));
    const int tail = head + 4 * n4;
    if (tail + t < n) IO_STORE(y[tail + t], f(IO_LOAD(x[tail + t])));
    IO_TALLY_FLUSH();
}

// ---- combining the threads' statistics -------------------------------------------------------------------

struct Max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct Sum {
    __device__ float operator()(float a, float b) const { return a + b; }
};
struct Merge {
    __device__ MaxSum operator()(MaxSum a, MaxSum b) const { return max_sum_merge(a, b); }
};

static __device__ __forceinline__ float shfl_xor(float v, int mask) {
    return __shfl_xor_sync(0xffffffffu, v, mask);
}
static __device__ __forceinline__ MaxSum shfl_xor(MaxSum s, int mask) {
    return max_sum(shfl_xor(s.m, mask), shfl_xor(s.l, mask));
}

/* Butterfly: after it every lane holds op over the 32 lanes. */
template <typename T, typename Op>
static __device__ __forceinline__ T warp_reduce(T v, Op op) {
#pragma unroll
    for (int mask = 16; mask > 0; mask /= 2) v = op(v, shfl_xor(v, mask));
    return v;
}

/* op over every thread of the block, returned to every thread. blockDim.x is a multiple of 32 (at most 1024);
 * scratch is 33 elements of shared memory, reusable by the next call without a barrier in between. */
template <typename T, typename Op>
static __device__ __forceinline__ T block_reduce(T v, Op op, T identity, T *scratch) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    v = warp_reduce(v, op);
    if (lane == 0) scratch[warp] = v;
    __syncthreads(); // every warp's value is in scratch[0..warps) before warp 0 reads them
    if (warp == 0) {
        v = warp_reduce(lane < warps ? scratch[lane] : identity, op);
        if (lane == 0) scratch[32] = v;
    }
    __syncthreads(); // the block's value is in scratch[32] before anyone reads it (and, in a next call,
                     // every thread has read scratch[32] before warp 0 may overwrite it)
    return scratch[32];
}

// ---- the kernels -----------------------------------------------------------------------------------------

/* 1. Safe softmax in three passes over the row. */
static __global__ void __launch_bounds__(MAX_THREADS, MIN_BLOCKS_PER_SM)
    softmax_3pass_kernel(const float *__restrict__ x, float *__restrict__ y, int N) {
    __shared__ float scratch[33];
    const float *x_row = x + (size_t)blockIdx.x * N;
    float *y_row = y + (size_t)blockIdx.x * N;

    float m = -INFINITY; // pass 1: m = max_j x_j
    row_read(x_row, N, [&](float v) { m = fmaxf(m, v); });
    m = block_reduce(m, Max(), -INFINITY, scratch);

    const float m_shift = shift_for_exp(m); // pass 2: l = sum_j exp(x_j - m)
    float l = 0.f;
    row_read(x_row, N, [&](float v) { l += expf(v - m_shift); });
    l = block_reduce(l, Sum(), 0.f, scratch);

    const Normaliser z = normaliser(max_sum(m, l)); // pass 3: y_j = exp(x_j - m) / l
    row_map(x_row, y_row, N, [&](float v) { return normalise(z, v); });
}

/* 2. Online softmax: the max and the sum in one pass, (m, l) updated score by score, then normalise. */
static __global__ void __launch_bounds__(MAX_THREADS, MIN_BLOCKS_PER_SM)
    softmax_online_kernel(const float *__restrict__ x, float *__restrict__ y, int N) {
    __shared__ MaxSum scratch[33];
    const float *x_row = x + (size_t)blockIdx.x * N;
    float *y_row = y + (size_t)blockIdx.x * N;

    MaxSum s = max_sum_empty(); // pass 1: this thread's (m, l), then the block's
    row_read(x_row, N, [&](float v) { s = max_sum_add(s, v); });
    s = block_reduce(s, Merge(), max_sum_empty(), scratch);

    const Normaliser z = normaliser(s); // pass 2
    row_map(x_row, y_row, N, [&](float v) { return normalise(z, v); });
}

/* 3a. Blockwise, launch 1: block b = row * K + k reduces chunk k of its row to (m_k, l_k). */
static __global__ void __launch_bounds__(MAX_THREADS, MIN_BLOCKS_PER_SM)
    softmax_blockwise_stats_kernel(const float *__restrict__ x, float2 *__restrict__ ml, int N, int C, int K) {
    IO_TALLY;
    __shared__ MaxSum scratch[33];
    const size_t row = blockIdx.x / K;
    const int k = blockIdx.x % K;
    const int begin = k * C, n = min(C, N - begin);

    MaxSum s = max_sum_empty();
    row_read(x + row * N + begin, n, [&](float v) { s = max_sum_add(s, v); });
    s = block_reduce(s, Merge(), max_sum_empty(), scratch);
    if (threadIdx.x == 0) IO_STORE(ml[blockIdx.x], make_float2(s.m, s.l));
    IO_TALLY_FLUSH();
}

/* 3b. Blockwise, launch 2: every block merges all K pairs of its row (the same pairs in the same order in every
 * block of the row, so all of them agree on (m, l) to the bit), then normalises its own chunk. */
static __global__ void __launch_bounds__(MAX_THREADS, MIN_BLOCKS_PER_SM)
    softmax_blockwise_normalize_kernel(const float *__restrict__ x, const float2 *__restrict__ ml,
                                       float *__restrict__ y, int N, int C, int K) {
    IO_TALLY;
    __shared__ MaxSum scratch[33];
    const size_t row = blockIdx.x / K;
    const int k = blockIdx.x % K;
    const int begin = k * C, n = min(C, N - begin);

    MaxSum s = max_sum_empty();
    for (int j = threadIdx.x; j < K; j += blockDim.x) {
        const float2 p = IO_LOAD(ml[row * K + j]);
        s = max_sum_merge(s, max_sum(p.x, p.y));
    }
    s = block_reduce(s, Merge(), max_sum_empty(), scratch);

    const Normaliser z = normaliser(s);
    row_map(x + row * N + begin, y + row * N + begin, n, [&](float v) { return normalise(z, v); });
    IO_TALLY_FLUSH();
}

// ---- launchers -------------------------------------------------------------------------------------------

static void require_same_alignment(const float *x, const float *y) {
    if (((uintptr_t)x ^ (uintptr_t)y) & 15) {
        fprintf(stderr, "error: softmax input %p and output %p differ in alignment modulo 16 bytes\n",
                (const void *)x, (const void *)y);
        exit(2);
    }
}

extern "C" void IO_VARIANT(softmax_3pass)(const float *x, float *y, long long rows, int N) {
    require_same_alignment(x, y);
    softmax_3pass_kernel<<<(unsigned)rows, threads_per_block(N)>>>(x, y, N);
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(softmax_online)(const float *x, float *y, long long rows, int N) {
    require_same_alignment(x, y);
    softmax_online_kernel<<<(unsigned)rows, threads_per_block(N)>>>(x, y, N);
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(softmax_blockwise)(const float *x, float *y, float *ml, long long rows, int N,
                                              int C) {
    require_same_alignment(x, y);
    const int K = blockwise_chunks(N, C);
    const unsigned blocks = (unsigned)(rows * K);
    const int threads = threads_per_block(N < C ? N : C);
    float2 *ml2 = reinterpret_cast<float2 *>(ml);
    softmax_blockwise_stats_kernel<<<blocks, threads>>>(x, ml2, N, C, K);
    KERNEL_CHECK();
    softmax_blockwise_normalize_kernel<<<blocks, threads>>>(x, ml2, y, N, C, K);
    KERNEL_CHECK();
}
