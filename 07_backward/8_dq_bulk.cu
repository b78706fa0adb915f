/* 8_dq_bulk.cu: chapter 07, step 8: step 7 with dQ_i's share added into HBM by the copy engine (sm_90a).
 *
 *   ./ch07/run --kernel dq_bulk [--dtype fp16|bf16] [--causal]   tc_bwd_d (step 3's), then tc_bulk_bwd
 *                                                                (tc_bulk_bwd_kernel); an sm_90 GPU only
 *
 * What changes from step 7 (`diff 07_backward/7_lean_loop.cu 07_backward/8_dq_bulk.cu`): the way dQ_i's share leaves
 * the block. Steps 4 to 7 added it from the accumulators, every thread a 16-byte atomic per 4 floats after a quad
 * shuffle, with the tensor cores idle behind the last wgmma wait. Here the threads store the accumulators into a
 * shared tile dQ_s (fp32, rows padded by 32 bytes: each warp's 8-byte stores hit 32 banks), and one lane per warp,
 * elected (elect.sync), hands the copy engine a bulk reduction per row of its warp's 8 (cp.reduce.async.bulk
 * .add.f32, FlashAttention-3's way of writing dQ: the same fp32 adds in L2, issued by 8 lanes instead of 256 threads).
 * The instruction takes its operands from uniform registers: computed from values the same in every lane (the warp
 * read from lane 0), they are, and the compiler issues each reduction once (from a lane-dependent address it loops
 * over the lanes' values, a "waterfall"). The reduction runs while the next query block is computed: it is issued
 * after the next visit's first barrier, and waited on (its reads of dQ_s) before the barrier after which dQ_s is
 * written again. The bytes are step 7's: 4 d per real row per visit, counted as
 * the atomics were. Step 3's tc_bwd_d (D_i, and dQ = 0) runs before it unchanged. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "io_tally.cuh"
#include "kernels.h"
#include "ptx_sm90.cuh"
#include "storage16.cuh"
#include "tiles.h" /* and wgmma_layout.h */

/* ROWS x D elements from global (row 0 at src, row stride D) into a shared tile in wgmma's layout (sw128_offset) by
 * THREADS threads, 16 bytes at a time by copy16; rows >= real are zeros and read nothing. */
template <int D, int ROWS, int THREADS, typename T, typename Copy16>
static __device__ __forceinline__ void load_tile(Copy16 copy16, T *dst_s, const T *src, int real) {
    constexpr int CH = D / 8, STEP = THREADS / CH; /* 16-byte chunks per row; rows per pass */
    static_assert(THREADS % CH == 0 && STEP % 8 == 0 && ROWS % STEP == 0, "whole passes of whole rows");
    const int r0 = threadIdx.x / CH, c = threadIdx.x % CH;
    /* STEP is a multiple of 8: the swizzle's row term is the same in every pass, each pass STEP rows further */
    T *to = reinterpret_cast<T *>(reinterpret_cast<char *>(dst_s) + sw128_offset(ROWS, r0, 8 * c));
    const T *from = src + (size_t)r0 * D + 8 * c;
#pragma unroll
    for (int pass = 0; pass < ROWS / STEP; pass++) {
        const bool real_row = r0 + pass * STEP < real; /* rows past the end read nothing: zeros */
        copy16(to + pass * STEP * 64, real_row ? from + pass * STEP * D : src, real_row);
    }
}

/* The A operand of a product over the queries (k) from an accumulator of keys x queries (S^T as P^T, dP^T as dS^T),
 * packed to the storage type: for queries 16 kk .. 16 kk + 15, a[kk][0], a[kk][1] = rows frag_row, frag_row + 8 of
 * n8 group 2 kk, a[kk][2], a[kk][3] the same of group 2 kk + 1 (the accumulator's layout is the A fragment's:
 * ptx_sm90.cuh). */
template <typename T, int NS>
static __device__ __forceinline__ void pack_a(const float (&acc)[NS][4], uint32_t (&a)[NS / 2][4]) {
#pragma unroll
    for (int kk = 0; kk < NS / 2; kk++) {
        a[kk][0] = pack2<T>(acc[2 * kk][0], acc[2 * kk][1]);
        a[kk][1] = pack2<T>(acc[2 * kk][2], acc[2 * kk][3]);
        a[kk][2] = pack2<T>(acc[2 * kk + 1][0], acc[2 * kk + 1][1]);
        a[kk][3] = pack2<T>(acc[2 * kk + 1][2], acc[2 * kk + 1][3]);
    }
}

/* ---- tc_bulk_bwd: one block per key block K_j, V_j ------------------------------------------------------------
 * Grid (Tc, B*H), TC_WG_THREADS threads: warpgroup g (threads 128 g ..) owns keys 64 g .. 64 g + 63 of K_j, its warp
 * w (of 4) the 16 rows 64 g + 16 w .. of every keys-by-something accumulator (wgmma's layout, ptx_sm90.cuh). For each
 * query block Q_i it sees:
 *   S_ij^T, dP_ij^T (64 keys x Br)        d/16 wgmma each, m64n64k16
 *   P_ij^T = exp2(S^T scale_log2 - L_i log2 e), dS_ij^T = P^T o (dP^T - D_i), both 0 where masked
 *   dV_j += P_ij^T dO_i, dK_j += dS_ij^T Q_i   Br/16 wgmma each, m64n{d}k16, A from registers
 * then, every warpgroup's dS_ij^T in shared memory (16-bit), dQ_i (Br x d): warpgroup g's half of the features
 *   dQ_i += scale dS_ij K_j                   Bc/16 wgmma, m64n{d/2}k16, then into dQ_s, added into dQ by the
 *                                             copy engine
 * scale_log2 = log2(e)/sqrt(d): P = exp2(S scale_log2 - L log2 e) = exp(scale S - L). */
template <int D, typename T>
static __global__ void __launch_bounds__(TC_WG_THREADS, 1)
    tc_bulk_bwd_kernel(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V,
                        const T *__restrict__ dO, const float *__restrict__ L, const float *__restrict__ Dvec,
                        float *__restrict__ dQ, T *__restrict__ dK, T *__restrict__ dV, int N, int causal, float scale,
                        float scale_log2) {
    IO_TALLY;
    constexpr int BR = TC_WG_BR, BC = TC_WG_BC, THREADS = TC_WG_THREADS;
    constexpr int NS = BR / 8;            /* n8 tiles of S_ij^T, dP_ij^T (queries)           */
    constexpr int ND = D / 8;             /* n8 tiles of dK_j, dV_j (features)               */
    constexpr int DQN = D / 2, NQ = DQN / 8; /* a warpgroup's features of dQ_i; its n8 tiles */
    static_assert(BC == 2 * 64 && BR == 64 && THREADS == 256, "two warpgroups of 64 keys; Br = wgmma's M");
    /* 1024-byte aligned: the swizzle pattern's period; every tile below is a multiple of 1024 bytes */
    extern __shared__ __align__(1024) uint4 smem[];
    T *K_s = reinterpret_cast<T *>(smem);                   /* [BC][D], wgmma's layout          */
    T *V_s = K_s + BC * D;                                  /* [BC][D]                          */
    T *Q_s = V_s + BC * D;                                  /* [2][BR][D]: two buffers          */
    T *dO_s = Q_s + 2 * BR * D;                             /* [2][BR][D]                       */
    T *dS_s = dO_s + 2 * BR * D;                            /* [BC][BR]: dS_ij^T, one panel     */
    float *L_s = reinterpret_cast<float *>(dS_s + BC * BR); /* [2][BR]: L_i log2(e), log2 units */
    float *D_s = L_s + 2 * BR;                              /* [2][BR]: D_i                     */
    float *dQ_s = D_s + 2 * BR;                             /* [BR][TC_BULK_DQ_STRIDE]: dQ_i's  */
    constexpr int DQS = TC_BULK_DQ_STRIDE(D);               /* share, fp32, rows of d + 8       */

    const int warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;
    /* the warpgroup, read from lane 0: the compiler then knows it is one value across the warp, and keeps what
     * derives from it (K_j's and V_j's descriptors) in uniform registers, where wgmma reads descriptors */
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
    const int frag_row = lane / 4, frag_col = lane % 4; /* the fragment coordinates (ptx_sm80.cuh) */
    const int j = blockIdx.x; /* blocks in index order: with the causal mask the low j see the most query blocks */
    const size_t head = (size_t)blockIdx.y * N;
    const int k0 = j * BC, kv_rows = min(BC, N - k0);
    const int w0 = 64 * wg + 16 * warp; /* this warp's first key in K_j */
    const int Tr = (N + BR - 1) / BR;
    const int i_first = causal ? k0 / BR : 0; /* the query blocks before it have only rows < k0: all masked */

    /* 16 bytes from global to shared memory: cp.async; in the instrumented build through a register (IO_LOAD
     * counts it). */
    auto copy16 = [&](T *to, const T *from, bool real) {
#if !defined(COUNT_IO)
        cp_async16(to, from, real);
#else
        *reinterpret_cast<uint4 *>(to) =
            real ? IO_LOAD(*reinterpret_cast<const uint4 *>(from)) : make_uint4(0, 0, 0, 0);
#endif
    };
    /* Q_i, dO_i (copies), L_i, D_i (plain loads: a row's 4 bytes are not 16-byte aligned) into buffer buf; rows past
     * N: zeros, never NaN into a product (their P and dS are masked to 0 as well). */
    auto load_q = [&](int i, int buf) {
        const int q0 = i * BR, q_rows = min(BR, N - q0);
        load_tile<D, BR, THREADS>(copy16, Q_s + buf * BR * D, Q + (head + q0) * D, q_rows);
        load_tile<D, BR, THREADS>(copy16, dO_s + buf * BR * D, dO + (head + q0) * D, q_rows);
        for (int r = threadIdx.x; r < BR; r += THREADS) {
            const bool real = r < q_rows;
            L_s[buf * BR + r] = real ? IO_LOAD(L[head + q0 + r]) * LOG2E : 0.f;
            D_s[buf * BR + r] = real ? IO_LOAD(Dvec[head + q0 + r]) : 0.f;
        }
    };

    /* dQ_s (this block's share of dQ_i) added into dQ by the copy engine: warp w (of 8) has rows 8 w .. 8 w + 7 added,
     * one bulk reduction of 4 d bytes per real row, issued by one lane (elect.sync), one bulk group. Every operand is
     * the same across the warp (w read from lane 0), so the compiler keeps them in uniform registers, where the
     * instruction takes them. In the instrumented build the same adds as 16-byte atomics, counted. */
    const int block_warp = __shfl_sync(0xffffffffu, threadIdx.x / 32, 0); /* 0 .. 7 */
    auto reduce_dq = [&](int i) {
        const int r0 = BR / 8 * block_warp, n = max(0, min(BR / 8, N - i * BR - r0)); /* this warp's real rows */
        float *dst = dQ + (head + i * BR + r0) * D;
        const float *src = dQ_s + r0 * DQS;
#if !defined(COUNT_IO)
        if (elect_one()) {
            for (int k = 0; k < n; k++) bulk_reduce_add_f32(dst + k * D, smem_addr(src + k * DQS), D * 4);
            bulk_commit();
        }
#else
        if (lane == 0)
            for (int k = 0; k < n; k++)
#pragma unroll 1
                for (int c = 0; c < D; c += 4)
                    IO_ATOMIC_ADD(reinterpret_cast<float4 *>(dst + k * D + c),
                                  *reinterpret_cast<const float4 *>(src + k * DQS + c));
#endif
    };

    /* This warpgroup's 64 rows of K_j and V_j (A of S^T and dP^T, K-major), and its features of K_j (B of dQ_i,
     * MN-major: d/2 of them, a whole panel at d = 128, half of one at d = 64). */
    const unsigned K_a = smem_addr(K_s), V_a = smem_addr(V_s), dS_a = smem_addr(dS_s);
    const unsigned K_rows = K_a + tc_wg_key_rows(wg), V_rows = V_a + tc_wg_key_rows(wg);
    const unsigned K_cols = K_a + tc_wg_dq_cols(wg, D);
    /* their descriptors, and dS_ij^T's (A of dQ_i), built once: step kk's is one of these advanced by a constant */
    const uint64_t K_desc = wgmma_desc_k_major(K_rows, BC, 0), V_desc = wgmma_desc_k_major(V_rows, BC, 0);
    const uint64_t Kt_desc = wgmma_desc_mn_major(K_cols, BC, 0), dS_desc = wgmma_desc_mn_major(dS_a, BC, 0);

    float dk[ND][4], dv[ND][4]; /* dK_j / scale and dV_j: rows w0 + frag_row, + 8, columns 8 n + 2 frag_col, +1 */
#pragma unroll
    for (int n = 0; n < ND; n++)
#pragma unroll
        for (int e = 0; e < 4; e++) dk[n][e] = dv[n][e] = 0.f;

    load_tile<D, BC, THREADS>(copy16, K_s, K + (head + k0) * D, kv_rows); /* K_j, V_j: once, for the whole sweep */
    load_tile<D, BC, THREADS>(copy16, V_s, V + (head + k0) * D, kv_rows);
    load_q(i_first, 0);
    cp_async_commit();

    for (int i = i_first; i < Tr; i++) {
        const int buf = (i - i_first) % 2, q0 = i * BR;
        cp_async_wait_all();
        fence_proxy_async();
        __syncthreads(); /* this block's Q_i, dO_i, L_i, D_i (and on the first visit K_j, V_j) are in shared memory,
                            visible to wgmma, for every warp; and every warpgroup's wgmma of the last visit have
                            completed (waited on): the buffer the next copies overwrite, and dS_s, are free; the
                            last visit's dQ_s is complete, visible to the copy engine */
        const unsigned Q_a = smem_addr(Q_s + buf * BR * D), dO_a = smem_addr(dO_s + buf * BR * D);
        const float *L_b = L_s + buf * BR, *D_b = D_s + buf * BR;
        /* Q_i's and dO_i's descriptors, once a visit: read K-major (S^T, dP^T) and MN-major (dK_j, dV_j) */
        const uint64_t Q_desc = wgmma_desc_k_major(Q_a, BR, 0), dO_desc = wgmma_desc_k_major(dO_a, BR, 0);
        const uint64_t Qt_desc = wgmma_desc_mn_major(Q_a, BR, 0), dOt_desc = wgmma_desc_mn_major(dO_a, BR, 0);

        /* S_ij^T = K_j Q_i^T and dP_ij^T = V_j dO_i^T, two groups: S^T's first, so that the exponentials start while
         * dP^T is still computed. S^T becomes P^T in place, dP^T dS^T. Zeroed in every visit, although the first
         * wgmma (scale-d = 0) overwrites them: to the compiler the instruction reads its accumulators, and values
         * defined here are dead from the last use of a visit to the next (64 registers dK_j, dV_j and dQ_i need). */
        float s[NS][4], dp[NS][4];
#pragma unroll
        for (int n = 0; n < NS; n++)
#pragma unroll
            for (int e = 0; e < 4; e++) s[n][e] = dp[n][e] = 0.f;
        wgmma_fence_operands(s);
        wgmma_fence_operands(dp);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++)
            wgmma_m64nNk16_ss<T, BR>(s, wgmma_desc_advance(K_desc, wgmma_k_major_step(BC, kk)),
                                     wgmma_desc_advance(Q_desc, wgmma_k_major_step(BR, kk)), kk > 0);
        wgmma_commit();
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++)
            wgmma_m64nNk16_ss<T, BR>(dp, wgmma_desc_advance(V_desc, wgmma_k_major_step(BC, kk)),
                                     wgmma_desc_advance(dO_desc, wgmma_k_major_step(BR, kk)), kk > 0);
        wgmma_commit();
        if (i + 1 < Tr) load_q(i + 1, buf ^ 1); /* issued behind the products, runs during this block's math */
        cp_async_commit();
        if (i > i_first) reduce_dq(i - 1); /* the last visit's dQ_s, complete and visible since the barrier */

        /* Only a warp whose 16 keys reach past N, whose block reaches past N, or (causal) whose last key is after
         * the block's first query tests each score against the mask: a branch, taken by the warps on the diagonal
         * and in the last blocks, skipped by the others. */
        const bool masked = k0 + w0 + 16 > N || q0 + BR > N || (causal && k0 + w0 + 15 > q0);

        /* P_ij^T = exp(scale S - L_i), in place: this lane's keys w0 + frag_row (e < 2) and w0 + frag_row + 8
         * (e >= 2), queries 8 n + 2 frag_col + e % 2. Masked entries are 0: keys or queries past N and, with the
         * causal mask, keys after the query, their scores -infinity first. Then dV_j += P_ij^T dO_i, A packed from
         * the accumulators as in step 5, B = dO_i's rows k (the queries), read transposed. */
        wgmma_wait<1>(); /* S^T's group is done; dP^T's may still run */
        wgmma_fence_operands(s);
        if (masked) {
#pragma unroll
            for (int n = 0; n < NS; n++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int r = 8 * n + 2 * frag_col + e % 2, key = k0 + w0 + frag_row + 8 * (e / 2);
                    if (key >= N || q0 + r >= N || (causal && key > q0 + r)) s[n][e] = -INFINITY;
                }
        }
#pragma unroll
        for (int n = 0; n < NS; n++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                s[n][e] = fast_exp2(fmaf(s[n][e], scale_log2, -L_b[8 * n + 2 * frag_col + e % 2]));
        uint32_t pa[BR / 16][4], da[BR / 16][4];
        pack_a<T>(s, pa);
        wgmma_fence_operands(dv);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BR / 16; kk++)
            wgmma_m64nNk16_rs<T, D>(dv, pa[kk], wgmma_desc_advance(dOt_desc, wgmma_mn_major_step(kk)));
        wgmma_commit();

        /* dS_ij^T = P^T o (dP^T - D_i), and dK_j += dS_ij^T Q_i the same way. */
        wgmma_wait<1>(); /* dP^T's group is done; dV_j's may still run */
        wgmma_fence_operands(dp);
#pragma unroll
        for (int n = 0; n < NS; n++)
#pragma unroll
            for (int e = 0; e < 4; e++) dp[n][e] = s[n][e] * (dp[n][e] - D_b[8 * n + 2 * frag_col + e % 2]);
        pack_a<T>(dp, da);
        /* dS_ij^T to shared memory for dQ_i (rows: keys; one panel of Br = 64 queries), the values packed above;
         * before dK_j's product, which takes da as its A: a register a running wgmma reads is not to be touched,
         * read included, until the wait. */
        char *dS_b = reinterpret_cast<char *>(dS_s);
#pragma unroll
        for (int kk = 0; kk < BR / 16; kk++)
#pragma unroll
            for (int h = 0; h < 4; h++)
                *reinterpret_cast<uint32_t *>(dS_b + sw128_offset(BC, w0 + frag_row + 8 * (h % 2),
                                                                  16 * kk + 8 * (h / 2) + 2 * frag_col)) = da[kk][h];
        wgmma_fence_operands(dk);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BR / 16; kk++)
            wgmma_m64nNk16_rs<T, D>(dk, da[kk], wgmma_desc_advance(Qt_desc, wgmma_mn_major_step(kk)));
        wgmma_commit();
        fence_proxy_async();
#if !defined(COUNT_IO)
        bulk_wait_read<0>(); /* the last visit's reductions (the elected lane's) have read dQ_s */
#endif
        __syncthreads(); /* dS_ij^T is complete in dS_s and visible to wgmma: dQ_i below reads every warpgroup's keys;
                            dQ_s is free: written below */

        /* dQ_i += scale dS_ij K_j, this warpgroup's DQN features: A = dS_ij (m = query, k = key) from dS_ij^T
         * stored [key][query], B = K_j (k = key, n = feature) stored [key][feature]: both MN-major. Rows of the
         * accumulator: queries 16 warp + frag_row, + 8; columns DQN wg + 8 u + 2 frag_col, +1. */
        float acc[NQ][4];
#pragma unroll
        for (int u = 0; u < NQ; u++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[u][e] = 0.f;
        wgmma_fence_operands(acc);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BC / 16; kk++)
            wgmma_m64nNk16_ss_tt<T, DQN>(acc, wgmma_desc_advance(dS_desc, wgmma_mn_major_step(kk)),
                                         wgmma_desc_advance(Kt_desc, wgmma_mn_major_step(kk)), kk > 0);
        wgmma_commit();
        wgmma_wait<0>(); /* dV_j, dK_j and dQ_i's groups are done: pa, da may be overwritten next visit */
        wgmma_fence_operands(acc);
        wgmma_fence_operands(dv);
        wgmma_fence_operands(dk);

        /* this thread's dQ_i accumulator into dQ_s, times scale: rows 16 warp + frag_row, + 8, columns
         * DQN wg + 8 u + 2 frag_col, +1, a pair per 8-byte store */
        float *dQ_b = dQ_s + (16 * warp + frag_row) * DQS + DQN * wg + 2 * frag_col;
#pragma unroll
        for (int u = 0; u < NQ; u++) {
            *reinterpret_cast<float2 *>(dQ_b + 8 * u) = make_float2(scale * acc[u][0], scale * acc[u][1]);
            *reinterpret_cast<float2 *>(dQ_b + 8 * DQS + 8 * u) = make_float2(scale * acc[u][2], scale * acc[u][3]);
        }
    }
    fence_proxy_async(); /* as at the loop's top: dQ_s's stores, visible to the copy engine after the barrier */
    __syncthreads(); /* the last visit's dQ_s is complete */
    reduce_dq(Tr - 1);
#if !defined(COUNT_IO)
    bulk_wait<0>(); /* done before the block's shared memory goes */
#endif

    /* dK_j (times scale) and dV_j go to HBM once, in the storage type, their real rows only: a pair of columns per
     * 4-byte store. */
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int key = w0 + frag_row + 8 * h;
        if (key < kv_rows) {
            uint32_t *dK_row = reinterpret_cast<uint32_t *>(dK + (head + k0 + key) * D);
            uint32_t *dV_row = reinterpret_cast<uint32_t *>(dV + (head + k0 + key) * D);
#pragma unroll
            for (int n = 0; n < ND; n++) {
                IO_STORE(dK_row[4 * n + frag_col], pack2<T>(scale * dk[n][2 * h], scale * dk[n][2 * h + 1]));
                IO_STORE(dV_row[4 * n + frag_col], pack2<T>(dv[n][2 * h], dv[n][2 * h + 1]));
            }
        }
    }
    IO_TALLY_FLUSH();
}

/* ---- launchers ----------------------------------------------------------------------------------------------- */

template <typename T>
using BwdKernelFn = void (*)(const T *, const T *, const T *, const T *, const float *, const float *, float *, T *,
                             T *, int, int, float, float);

/* The compiled d: 2 instantiations per storage type. Validation (chapter.c) rejects other shapes, and GPUs other
 * than sm_90, first; reaching the end with one is a programming error. */
template <typename T>
static BwdKernelFn<T> prepared_kernel(int d, size_t smem) {
    BwdKernelFn<T> kernel = d == 64 ? tc_bulk_bwd_kernel<64, T> : d == 128 ? tc_bulk_bwd_kernel<128, T> : nullptr;
    if (!kernel) {
        fprintf(stderr, "tc_bulk_bwd: no kernel compiled for d=%d\n", d);
        exit(2);
    }
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    return kernel;
}

template <typename T>
static void launch(const BwdArgs *a) {
    const size_t smem = tc_bulk_smem_bytes(TC_WG_BR, TC_WG_BC, a->d, sizeof(T));
    BwdKernelFn<T> kernel = prepared_kernel<T>(a->d, smem);
    const dim3 grid((unsigned)ceil_div(a->N, TC_WG_BC), (unsigned)(a->B * a->H));
    kernel<<<grid, TC_WG_THREADS, smem>>>(static_cast<const T *>(a->Qt), static_cast<const T *>(a->Kt),
                                         static_cast<const T *>(a->Vt), static_cast<const T *>(a->dOt), a->L, a->D,
                                         a->dQ, static_cast<T *>(a->dKt), static_cast<T *>(a->dVt), a->N, a->causal,
                                         1.f / sqrtf((float)a->d), LOG2E / sqrtf((float)a->d));
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(tc_bulk_bwd_launch)(const BwdArgs *a) {
    if (a->dtype == DTYPE_BF16) launch<__nv_bfloat16>(a);
    else launch<__half>(a);
}

extern "C" void IO_VARIANT(tc_bulk_bwd_resources)(int d, int dtype, KernelResources *r) {
    const size_t smem = tc_bulk_smem_bytes(TC_WG_BR, TC_WG_BC, d, 2);
    const void *kernel = dtype == DTYPE_BF16 ? (const void *)prepared_kernel<__nv_bfloat16>(d, smem)
                                             : (const void *)prepared_kernel<__half>(d, smem);
    kernel_resources(kernel, TC_WG_THREADS, smem, r);
}
