/* forward.cu: chapter 07's forward pass, the one that makes O and L for the backward: chapter 03's flash_v2
 * kernel, copied (chapters stand alone). fp32, d = 32, 64, 128.
 *
 *   ./ch07/run ...                                   the forward row: fwd_flash_v2 (fwd_flash_v2_kernel)
 *
 * What changes from chapter 03 (`diff 03_flash_v2/kernels.cu 07_backward/forward.cu` shows exactly this):
 *   1. The names: fwd_ / FWD_ before every name of the kernel and of its tiles (forward_tiles.h), so that they
 *      and chapter 07's own meet without a clash.
 *   2. The tiles are fixed at FWD_BR x FWD_BC = 32 x 32 whatever the run's --br and --bc say (those are the
 *      backward's): one kernel per d, 2 Br = 64 threads.
 *   3. Chapter 03's float4 helpers (f4, component, dot4_add, axpy4) come from common/float4.cuh.
 * The kernel's body is chapter 03's, line for line, and so is its launch bound (chapter 03's largest Br): its
 * machine code at Bc = 32 is chapter 03's instruction for instruction. Chapter 03's README says what it does.
 */
#include <stdio.h>
#include <stdlib.h>

#include "float4.cuh"
#include "io_tally.cuh"
#include "kernels.h"
#include "forward_tiles.h"

static constexpr float LOG2E = 1.4426950408889634f;
static constexpr float LN2 = 0.6931471805599453f;

/* The 8 lanes of a row group are consecutive lanes of one warp: xor 4, 2, 1 stays inside the group. */
static __device__ __forceinline__ float row_max(float x) {
    for (int lanes = FWD_ROW_LANES / 2; lanes > 0; lanes /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, lanes));
    return x;
}
static __device__ __forceinline__ float row_sum(float x) {
    for (int lanes = FWD_ROW_LANES / 2; lanes > 0; lanes /= 2) x += __shfl_xor_sync(0xffffffffu, x, lanes);
    return x;
}

/* Grid (Tr, B*H), 2*Br threads. scale_log2 = log2(e)/sqrt(d): scores are kept in log2 units so that every
 * exponential is one exp2 (e^x = 2^(x log2 e)); m is in those units too. */
template <int D, int BC>
static __global__ void __launch_bounds__(FWD_MAX_BR / FWD_ROWS_PER_WARP * 32, 1)
    fwd_flash_v2_kernel(const float *__restrict__ Q, const float *__restrict__ K, const float *__restrict__ V,
                    float *__restrict__ O, float *__restrict__ L, int N, int Br, int causal, float scale_log2) {
    IO_TALLY;
    constexpr int TN = BC / FWD_ROW_LANES;        /* S columns per thread (FWD_TM rows) */
    constexpr int TD = D / (4 * FWD_ROW_LANES);   /* O float4 columns per thread        */
    constexpr int QS = D + FWD_Q_PAD;             /* row strides in shared memory       */
    constexpr int PS = BC + FWD_P_PAD;
    const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);

    extern __shared__ float4 smem[];
    float *Q_s = reinterpret_cast<float *>(smem); /* [Br][QS]                              */
    float *K_s = Q_s + Br * QS;                   /* [BC][D], as stored: not transposed    */
    float *V_s = K_s + BC * D;                    /* [BC][D]                               */
    float *P_s = V_s + BC * D;                    /* [Br][PS]                              */

    const int lane = threadIdx.x % 32;
    const int g = lane % FWD_ROW_LANES;                                             /* column group */
    const int r0 = threadIdx.x / 32 * FWD_ROWS_PER_WARP + lane / FWD_ROW_LANES; /* rows r0 + 4t */
    /* A row statistic in HBM (one float per row) moves as one 64-byte request per warp: lane x < 16 holds the
     * warp's row stat_row, which is row group x % 4's row t = x / 4, and shuffles carry it between the two. */
    const int stat_row = threadIdx.x / 32 * FWD_ROWS_PER_WARP + lane;

    /* With the causal mask the query blocks near the end of the sequence visit the most K/V blocks; the
     * hardware starts blocks roughly in index order, so those get the low indices and the cheap ones fill
     * the tail. */
    const int i = causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    const size_t head = (size_t)blockIdx.y * N; /* first row of this (batch, head) */
    const int q0 = i * Br;                      /* first query row of Q_i          */
    const int q_rows = min(Br, N - q0);

    /* Q_i: read from HBM once, kept in shared memory for the whole sweep. Rows past N are zeros. */
    const float4 *Q4 = reinterpret_cast<const float4 *>(Q + (head + q0) * D);
    for (int x = threadIdx.x; x < Br * D / 4; x += blockDim.x) {
        const int r = x / (D / 4), c = x % (D / 4);
        f4(&Q_s[r * QS + 4 * c]) = r < q_rows ? IO_LOAD(Q4[x]) : zero;
    }

    float m[FWD_TM], l[FWD_TM]; /* running row maximum (log2 units); this lane's share of the running row sum */
    float4 acc[FWD_TM][TD];     /* O_i, unnormalised, in registers for the whole sweep                      */
#pragma unroll
    for (int t = 0; t < FWD_TM; t++) {
        m[t] = -INFINITY;
        l[t] = 0.f;
#pragma unroll
        for (int u = 0; u < TD; u++) acc[t][u] = zero;
    }

    /* K/V blocks to visit: all Tc of them, or with the causal mask only those holding a key at or before
     * the last real query row of Q_i. The blocks above the diagonal are never loaded nor computed. */
    const int Tc = (N + BC - 1) / BC;
    const int Tc_i = causal ? min(Tc, (q0 + q_rows - 1) / BC + 1) : Tc;

    for (int j = 0; j < Tc_i; j++) {
        const int k0 = j * BC, kv_rows = min(BC, N - k0);
        const float4 *K4 = reinterpret_cast<const float4 *>(K + (head + k0) * D);
        const float4 *V4 = reinterpret_cast<const float4 *>(V + (head + k0) * D);
        __syncthreads(); /* every warp is done with K_j-1, V_j-1 before they are overwritten */
        for (int x = threadIdx.x; x < BC * D / 4; x += blockDim.x) {
            const bool real = x / (D / 4) < kv_rows; /* rows past N: zeros, never NaN into P V */
            f4(&K_s[4 * x]) = real ? IO_LOAD(K4[x]) : zero;
            f4(&V_s[4 * x]) = real ? IO_LOAD(V4[x]) : zero;
        }
        __syncthreads(); /* K_j and V_j (and, at j = 0, Q_i) are complete before any warp reads them */

        /* S_ij = Q_i K_j^T. Lane g takes keys g, g+8, ...: per float4 read, the 8 lanes of a row group
         * read 8 rows of K_s that are D floats apart, and D*4 bytes is a multiple of 128, so all 8 land
         * in the same 4 banks and come out one after another (the other 3 row groups read the same
         * addresses, a broadcast). This is the article's tl.trans(kj) access, kept for chapter 04. */
        float s[FWD_TM][TN];
#pragma unroll
        for (int t = 0; t < FWD_TM; t++)
#pragma unroll
            for (int c = 0; c < TN; c++) s[t][c] = 0.f;
#pragma unroll(D * BC >= 64 * 64 ? 2 : 4)
        for (int k = 0; k < D; k += 4) {
            float4 q[FWD_TM];
#pragma unroll
            for (int t = 0; t < FWD_TM; t++) q[t] = f4(&Q_s[(r0 + 4 * t) * QS + k]);
#pragma unroll
            for (int c = 0; c < TN; c++) {
                const float4 kc = f4(&K_s[(g + FWD_ROW_LANES * c) * D + k]);
#pragma unroll
                for (int t = 0; t < FWD_TM; t++) s[t][c] = dot4_add(q[t], kc, s[t][c]);
            }
        }

        /* Online softmax. Masked: keys past N (a ragged last block) and, with the causal mask, keys after
         * the query. They become -inf, so exp2 gives exactly 0 and nothing of them reaches l or O. */
#pragma unroll
        for (int t = 0; t < FWD_TM; t++) {
            const int query = q0 + r0 + 4 * t;
            float block_max = -INFINITY;
#pragma unroll
            for (int c = 0; c < TN; c++) {
                const int key = k0 + g + FWD_ROW_LANES * c;
                s[t][c] = key >= N || (causal && key > query) ? -INFINITY : s[t][c] * scale_log2;
                block_max = fmaxf(block_max, s[t][c]);
            }
            const float m_new = fmaxf(m[t], row_max(block_max));
            /* A row whose keys are all masked so far has m_new = -inf; subtracting 0 instead keeps every
             * exponent at -inf (p = 0) rather than -inf - (-inf) = NaN. */
            const float m_ref = m_new == -INFINITY ? 0.f : m_new;
            const float alpha = exp2f(m[t] - m_ref); /* rescales what was summed against the old maximum */
            m[t] = m_new;
            l[t] *= alpha;
#pragma unroll
            for (int u = 0; u < TD; u++) {
                acc[t][u].x *= alpha;
                acc[t][u].y *= alpha;
                acc[t][u].z *= alpha;
                acc[t][u].w *= alpha;
            }
#pragma unroll
            for (int c = 0; c < TN; c++) {
                const float p = exp2f(s[t][c] - m_ref);
                l[t] += p; /* this lane's columns only; row_sum adds the 8 shares */
                P_s[(r0 + 4 * t) * PS + g + FWD_ROW_LANES * c] = p;
            }
        }
        __syncwarp(); /* a row of P_ij is written by its 8 lanes, all in this warp, and read whole by each */

        /* O_i += P_ij V_j: lane g reads V_j's float4 columns g, g+8, ...: the 8 lanes of a row group read
         * 8 consecutive float4 of one row, 32 different banks, no conflict. */
#pragma unroll 2
        for (int c = 0; c < BC; c += 4) {
            float4 p[FWD_TM];
#pragma unroll
            for (int t = 0; t < FWD_TM; t++) p[t] = f4(&P_s[(r0 + 4 * t) * PS + c]);
#pragma unroll
            for (int e = 0; e < 4; e++)
#pragma unroll
                for (int u = 0; u < TD; u++) {
                    const float4 v = f4(&V_s[(c + e) * D + 4 * (g + FWD_ROW_LANES * u)]);
#pragma unroll
                    for (int t = 0; t < FWD_TM; t++) axpy4(component(p[t], e), v, acc[t][u]);
                }
        }
    }

    /* Delayed normalisation: one reciprocal per row, after the sweep. Then O_i and L_i go to HBM once. */
    float4 *O4 = reinterpret_cast<float4 *>(O + (head + q0) * D);
    float L_stat = 0.f; /* lane x < 16: the warp's row stat_row */
#pragma unroll
    for (int t = 0; t < FWD_TM; t++) {
        const int r = r0 + 4 * t;
        const float l_row = row_sum(l[t]);
        const float inv_l = l_row > 0.f ? 1.f / l_row : 0.f; /* no visible key: O = 0, L = -inf */
        if (r < q_rows) {
#pragma unroll
            for (int u = 0; u < TD; u++) {
                const float4 a = acc[t][u];
                IO_STORE(O4[r * (D / 4) + g + FWD_ROW_LANES * u],
                         make_float4(a.x * inv_l, a.y * inv_l, a.z * inv_l, a.w * inv_l));
            }
        }
        const float L_row = l_row > 0.f ? (m[t] + log2f(l_row)) * LN2 : -INFINITY;
        const float L_t = __shfl_sync(0xffffffffu, L_row, lane % 4 * FWD_ROW_LANES);
        if (lane / 4 == t) L_stat = L_t;
    }
    if (lane < FWD_ROWS_PER_WARP && stat_row < q_rows) IO_STORE(L[head + q0 + stat_row], L_stat);
    IO_TALLY_FLUSH();
}

typedef void (*KernelFn)(const float *, const float *, const float *, float *, float *, int, int, int, float);

/* The compiled d: 3 instantiations per build, each at Bc = FWD_BC; Br = FWD_BR is passed as chapter 03 passes it. */
static KernelFn kernel_for(int d) {
#define CASE(D_) \
    if (d == D_) return fwd_flash_v2_kernel<D_, FWD_BC>;
    CASE(32) CASE(64) CASE(128)
#undef CASE
    return nullptr;
}

/* The kernel for d, with its dynamic shared memory allowed past the 48 KB default. Validation (chapter.c)
 * rejects an unsupported d first; reaching here with one is a programming error. */
static KernelFn prepared_kernel(int d, size_t smem) {
    KernelFn kernel = kernel_for(d);
    if (!kernel) {
        fprintf(stderr, "fwd_flash_v2: no kernel compiled for d=%d\n", d);
        exit(2);
    }
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    return kernel;
}

/* a->Br and a->Bc are not read: the forward's tiles are FWD_BR x FWD_BC. */
extern "C" void IO_VARIANT(fwd_flash_v2_launch)(const AttnArgs *a) {
    const size_t smem = fwd_smem_bytes(a->d);
    KernelFn kernel = prepared_kernel(a->d, smem);
    const dim3 grid((unsigned)ceil_div(a->N, FWD_BR), (unsigned)(a->B * a->H));
    kernel<<<grid, FWD_THREADS, smem>>>(static_cast<const float *>(a->Q), static_cast<const float *>(a->K),
                                        static_cast<const float *>(a->V), static_cast<float *>(a->O), a->L, a->N,
                                        FWD_BR, a->causal, LOG2E / sqrtf((float)a->d));
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(fwd_flash_v2_resources)(int d, KernelResources *r) {
    const size_t smem = fwd_smem_bytes(d);
    kernel_resources((const void *)prepared_kernel(d, smem), FWD_THREADS, smem, r);
}
