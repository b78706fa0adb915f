/* 10_dq_tma.cu: chapter 07, step 10: step 9 with dQ_i's share added by one tensor copy (sm_90a).
 *
 *   ./ch07/run --kernel dq_tma [--dtype fp16|bf16] [--causal]   tc_bwd_d (step 3's), then tc_tma_bwd
 *                                                               (tc_tma_bwd_kernel); an sm_90 GPU only
 *
 * What changes from step 9 (`diff 07_backward/9_dq_overlap.cu 07_backward/10_dq_tma.cu`): how dQ_s reaches dQ. Step 9
 * had the elected lane of each of the 8 warps issue one bulk reduction per row of dQ_i (Br of them, d floats each),
 * and each waited for the last to take its operands before the next: ncu's warp-state samples put about a sixth of
 * all the warps' time on those few instructions, on the way to the next visit's barrier. Here one thread issues one
 * tensor reduction per 32-feature panel of dQ_i (d/32 of them), through a tensor map of dQ ([B*H][N][d], fp32),
 * and the copy engine walks the rows itself; rows past N lie outside the map, and it adds nothing there. A box of
 * the map is 32 floats (128 bytes) wide, so dQ_s is laid out as the engine reads it: panels of Br rows of 128 bytes
 * in the 128-byte swizzle, the layout of every 16-bit tile here, which also keeps the accumulator's stores free of
 * bank conflicts without step 8's padding. The bytes are step 9's. */
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cudaTypedefs.h> /* PFN_cuTensorMapEncodeTiled */
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

/* ---- tc_tma_bwd: one block per key block K_j, V_j ------------------------------------------------------------
 * Grid (Tc, B*H), TC_WG_THREADS threads: warpgroup g (threads 128 g ..) owns keys 64 g .. 64 g + 63 of K_j, its warp
 * w (of 4) the 16 rows 64 g + 16 w .. of every keys-by-something accumulator (wgmma's layout, ptx_sm90.cuh). For each
 * query block Q_i it sees:
 *   S_ij^T, dP_ij^T (64 keys x Br)        d/16 wgmma each, m64n64k16
 *   P_ij^T = exp2(S^T scale_log2 - L_i log2 e), dS_ij^T = P^T o (dP^T - D_i), both 0 where masked
 *   dV_j += P_ij^T dO_i, dK_j += dS_ij^T Q_i   Br/16 wgmma each, m64n{d}k16, A from registers
 * then, every warpgroup's dS_ij^T in shared memory (16-bit, buffer i % 2), dQ_i (Br x d): warpgroup g's half of the
 * features
 *   dQ_i = scale dS_ij K_j                    Bc/16 wgmma, m64n{d/2}k16, waited on in the next visit, then into
 *                                             dQ_s, added into dQ by the copy engine: d/32 tensor
 *                                             reductions
 * scale_log2 = log2(e)/sqrt(d): P = exp2(S scale_log2 - L log2 e) = exp(scale S - L). */
template <int D, typename T>
static __global__ void __launch_bounds__(TC_WG_THREADS, 1)
    tc_tma_bwd_kernel(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V,
                        const T *__restrict__ dO, const float *__restrict__ L, const float *__restrict__ Dvec,
                      float *__restrict__ dQ, const __grid_constant__ CUtensorMap tm_dQ, T *__restrict__ dK,
                      T *__restrict__ dV, int N, int causal, float scale, float scale_log2) {
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
    T *dS_s = dO_s + 2 * BR * D;                            /* [2][BC][BR]: dS_ij^T, one panel  */
    float *dQ_s = reinterpret_cast<float *>(dS_s + 2 * BC * BR); /* [BR][D]: dQ_i's share, fp32, in  */
                                                            /* panels of 32 features, swizzled  */
    float *L_s = dQ_s + BR * D;                             /* [2][BR]: L_i                     */
    float *D_s = L_s + 2 * BR;                              /* [2][BR]: D_i                     */

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
    /* 4 bytes the same way: cp.async of one float (a row's L_i, D_i: 4-byte aligned only). Step 8 loaded them into
     * registers, and a warp waited for the load where it stored them to shared memory: at the visit's start there,
     * behind the products; here, where the copies are issued, at the end of a visit, it would hold back dQ_i's
     * store and the next dP^T. */
    auto copy4 = [&](float *to, const float *from, bool real) {
#if !defined(COUNT_IO)
        cp_async4(to, from, real);
#else
        *to = real ? IO_LOAD(*from) : 0.f;
#endif
    };
    /* Q_i, dO_i, L_i, D_i (copies) into buffer buf; rows past N: zeros, never NaN into a product (their P and dS are
     * masked to 0 as well). */
    auto load_q = [&](int i, int buf) {
        const int q0 = i * BR, q_rows = min(BR, N - q0);
        load_tile<D, BR, THREADS>(copy16, Q_s + buf * BR * D, Q + (head + q0) * D, q_rows);
        load_tile<D, BR, THREADS>(copy16, dO_s + buf * BR * D, dO + (head + q0) * D, q_rows);
        for (int r = threadIdx.x; r < BR; r += THREADS) {
            const bool real = r < q_rows;
            copy4(L_s + buf * BR + r, real ? L + head + q0 + r : L, real);
            copy4(D_s + buf * BR + r, real ? Dvec + head + q0 + r : Dvec, real);
        }
    };

    /* dQ_s (this block's share of dQ_i) added into dQ by the copy engine: one tensor reduction per panel of 32
     * features, the box of Br rows from row i Br of this head, all issued by one lane of warp 0 (elected: under
     * `threadIdx.x == 0` the compiler wraps each in a loop over the lanes' values of its operands, step 8's
     * waterfall), one bulk group. In the instrumented build the same adds as 16-byte atomics, counted: warp w (of 8)
     * adds rows 8 w .. 8 w + 7, the real ones. */
    auto reduce_dq = [&](int i) {
#if !defined(COUNT_IO)
        if (wg == 0 && warp == 0 && elect_one()) {
#pragma unroll
            for (int p = 0; p < D / 32; p++)
                tma_reduce_add_3d(&tm_dQ, smem_addr(dQ_s) + p * BR * 128, 32 * p, i * BR, (int)blockIdx.y);
            bulk_commit();
        }
#else
        const int r0 = BR / 8 * (threadIdx.x / 32), n = max(0, min(BR / 8, N - i * BR - r0)); /* this warp's rows */
        float *dst = dQ + (head + i * BR + r0) * D;
        if (lane == 0)
            for (int k = 0; k < n; k++)
#pragma unroll 1
                for (int c = 0; c < D; c += 4)
                    IO_ATOMIC_ADD(reinterpret_cast<float4 *>(dst + k * D + c),
                                  *reinterpret_cast<const float4 *>(reinterpret_cast<const char *>(dQ_s) +
                                                                    sw128_offset(BR, r0 + k, 2 * c)));
#endif
    };
    float acc[NQ][4]; /* dQ_i / scale, this warpgroup's features: issued in visit i, waited on and stored in the next;
                         zeroed once (each visit's first wgmma, scale-d = 0, overwrites it) */
#pragma unroll
    for (int u = 0; u < NQ; u++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[u][e] = 0.f;
    /* this thread's dQ_i accumulator into dQ_s, times scale: rows 16 warp + frag_row, + 8, columns DQN wg + 8 u +
     * 2 frag_col, +1, a pair per 8-byte store, at their place in the swizzle (a column of fp32 is two 16-bit columns
     * to sw128_offset): a warp's store covers 8 rows whose pairs the swizzle spreads over all 32 banks. Where the
     * pair of u sits is the place of u = 0 with bits 5-6 (the 16-byte chunk's upper two bits) xor u % 4, and u / 4
     * panels further: the chunk is 2 (u % 4) + frag_col / 2, xor the row's frag_row, and nothing else in the offset
     * touches those bits (panels are 1024-byte aligned). */
    static_assert(DQN % 32 == 0, "a warpgroup's features start on a panel of 32 floats");
    const int dq_at = (int)sw128_offset(BR, 16 * warp + frag_row, 2 * (DQN * wg + 2 * frag_col)); /* u = 0 */
    auto store_dq = [&]() {
        /* dq_at, copied anew each visit (an opaque move): the places of u = 1 .. 3 do not change from visit to
         * visit, and the compiler would compute them once and hold them in registers through the loop, which at
         * d = 128 has none to spare (it spilled them); it now computes each where it is used */
        int at;
        asm volatile("mov.b32 %0, %1;\n" : "=r"(at) : "r"(dq_at));
        char *dQ_b = reinterpret_cast<char *>(dQ_s);
#pragma unroll
        for (int u = 0; u < NQ; u++) {
            const int o = (at ^ ((u % 4) << 5)) + u / 4 * BR * 128; /* rows r, then r + 8: 8 rows of 128 bytes on */
            *reinterpret_cast<float2 *>(dQ_b + o) = make_float2(scale * acc[u][0], scale * acc[u][1]);
            *reinterpret_cast<float2 *>(dQ_b + o + 8 * 128) = make_float2(scale * acc[u][2], scale * acc[u][3]);
        }
    };

    /* This warpgroup's 64 rows of K_j and V_j (A of S^T and dP^T, K-major), and its features of K_j (B of dQ_i,
     * MN-major: d/2 of them, a whole panel at d = 128, half of one at d = 64). */
    const unsigned K_a = smem_addr(K_s), V_a = smem_addr(V_s), dS_a = smem_addr(dS_s);
    const unsigned K_rows = K_a + tc_wg_key_rows(wg), V_rows = V_a + tc_wg_key_rows(wg);
    const unsigned K_cols = K_a + tc_wg_dq_cols(wg, D);
    /* their descriptors, and dS_ij^T's (A of dQ_i; buffer 0's), built once: step kk's is one of these advanced by a
     * constant */
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

    /* The start of a visit: its Q_i, dO_i, L_i, D_i in shared memory for every warp. */
    auto sync_visit = [&]() {
        cp_async_wait_all();
        fence_proxy_async();
#if !defined(COUNT_IO)
        bulk_wait_read<0>(); /* the last visit's reductions (warp 0's) have read dQ_s */
#endif
        __syncthreads(); /* this block's Q_i, dO_i, L_i, D_i (and on the first visit K_j, V_j) are in shared memory,
                            visible to wgmma, for every warp; every warpgroup's dV_j and dK_j products of the last
                            visit have completed (waited on): the buffer the next copies overwrite is free; dQ_s is
                            free. The last visit's dQ product may still run: it reads the other buffer of dS_s */
    };
    /* S_ij^T = K_j Q_i^T from Q_i's descriptor (K-major), issued, not waited on. Zeroed first, although the first
     * wgmma (scale-d = 0) overwrites it: to the compiler the instruction reads its accumulators. */
    float s[NS][4]; /* S_ij^T, then P_ij^T in place: issued at the end of the visit before (the first: before the loop) */
    auto issue_s = [&](uint64_t Q_desc) {
#pragma unroll
        for (int n = 0; n < NS; n++)
#pragma unroll
            for (int e = 0; e < 4; e++) s[n][e] = 0.f;
        wgmma_fence_operands(s);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++)
            wgmma_m64nNk16_ss<T, BR>(s, wgmma_desc_advance(K_desc, wgmma_k_major_step(BC, kk)),
                                     wgmma_desc_advance(Q_desc, wgmma_k_major_step(BR, kk)), kk > 0);
        wgmma_commit();
    };

    sync_visit();
    issue_s(wgmma_desc_k_major(smem_addr(Q_s), BR, 0));
    if (i_first + 1 < Tr) load_q(i_first + 1, 1); /* a visit ahead, as every visit's below */
    cp_async_commit();
    wgmma_wait<0>(); /* S^T's group is done */
    for (int i = i_first; i < Tr; i++) {
        const int buf = (i - i_first) % 2, q0 = i * BR;
        const unsigned Q_a = smem_addr(Q_s + buf * BR * D), dO_a = smem_addr(dO_s + buf * BR * D);
        const float *L_b = L_s + buf * BR, *D_b = D_s + buf * BR;
        /* dO_i's descriptor, read K-major (dP^T), and Q_i's and dO_i's read MN-major (dK_j, dV_j), once a visit */
        const uint64_t dO_desc = wgmma_desc_k_major(dO_a, BR, 0);
        const uint64_t Qt_desc = wgmma_desc_mn_major(Q_a, BR, 0), dOt_desc = wgmma_desc_mn_major(dO_a, BR, 0);
        wgmma_fence_operands(s);

        /* dP_ij^T = V_j dO_i^T, one group, while the exponentials of S^T (done) are taken; dP^T becomes dS^T in
         * place. Zeroed as S^T was. */
        float dp[NS][4];
#pragma unroll
        for (int n = 0; n < NS; n++)
#pragma unroll
            for (int e = 0; e < 4; e++) dp[n][e] = 0.f;
        wgmma_fence_operands(dp);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++)
            wgmma_m64nNk16_ss<T, BR>(dp, wgmma_desc_advance(V_desc, wgmma_k_major_step(BC, kk)),
                                     wgmma_desc_advance(dO_desc, wgmma_k_major_step(BR, kk)), kk > 0);
        wgmma_commit();

        /* Only a warp whose 16 keys reach past N, whose block reaches past N, or (causal) whose last key is after
         * the block's first query tests each score against the mask: a branch, taken by the warps on the diagonal
         * and in the last blocks, skipped by the others. */
        const bool masked = k0 + w0 + 16 > N || q0 + BR > N || (causal && k0 + w0 + 15 > q0);

        /* P_ij^T = exp(scale S - L_i), in place: this lane's keys w0 + frag_row (e < 2) and w0 + frag_row + 8
         * (e >= 2), queries 8 n + 2 frag_col + e % 2. Masked entries are 0: keys or queries past N and, with the
         * causal mask, keys after the query, their scores -infinity first. Then dV_j += P_ij^T dO_i, A packed from
         * the accumulators as in step 5, B = dO_i's rows k (the queries), read transposed. */
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
                s[n][e] = fast_exp2(fmaf(s[n][e], scale_log2, -LOG2E * L_b[8 * n + 2 * frag_col + e % 2]));
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
        /* dS_ij^T to shared memory for dQ_i (rows: keys; one panel of Br = 64 queries, buffer i % 2), the values
         * packed above; before dK_j's product, which takes da as its A: a register a running wgmma reads is not to be
         * touched, read included, until the wait. */
        char *dS_b = reinterpret_cast<char *>(dS_s + buf * BC * BR);
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
        __syncthreads(); /* dS_ij^T is complete in dS_s and visible to wgmma: dQ_i below reads every warpgroup's keys;
                            dQ_{i-1} is complete in dQ_s, visible to the copy engine (its reductions: below, behind
                            dQ_i's product) */

        /* dQ_i = scale dS_ij K_j, this warpgroup's DQN features: A = dS_ij (m = query, k = key) from dS_ij^T
         * stored [key][query], B = K_j (k = key, n = feature) stored [key][feature]: both MN-major. Rows of the
         * accumulator: queries 16 warp + frag_row, + 8; columns DQN wg + 8 u + 2 frag_col, +1. Waited on only after
         * the next visit has begun: it runs while this warpgroup meets the other at that visit's first barrier, and
         * the next S^T is queued behind it. */
        wgmma_fence();
        const uint64_t dS_buf = wgmma_desc_advance(dS_desc, buf * BC * BR * (unsigned)sizeof(T));
#pragma unroll
        for (int kk = 0; kk < BC / 16; kk++)
            wgmma_m64nNk16_ss_tt<T, DQN>(acc, wgmma_desc_advance(dS_buf, wgmma_mn_major_step(kk)),
                                         wgmma_desc_advance(Kt_desc, wgmma_mn_major_step(kk)), kk > 0);
        wgmma_commit();
        if (i > i_first) reduce_dq(i - 1);
        wgmma_wait<1>(); /* dV_j's and dK_j's groups are done: pa, da may be overwritten, and (every warpgroup's, at
                            the next barrier) the buffer of Q_i and dO_i */
        wgmma_fence_operands(dv);
        wgmma_fence_operands(dk);
        /* the next visit's Q_{i+1} (the other buffer): its descriptor before the barrier, S^T right after it */
        const uint64_t Qn_desc = wgmma_desc_k_major(smem_addr(Q_s + (buf ^ 1) * BR * D), BR, 0);
        sync_visit();
        if (i + 1 < Tr) {
            issue_s(Qn_desc);
            /* Q_{i+2}, dO_{i+2}, L, D into this visit's buffer, free since the barrier: a whole visit ahead of their
             * use, as step 8's copies were (issued after the next S^T, dQ_i's wait below reads none of it) */
            if (i + 2 < Tr) load_q(i + 2, buf);
        } else { /* an empty group in place of the next S^T's: the wait below is then the same on every path, as ptxas
                  needs to see that it covers dQ_i's group (else warning C7514: every wgmma of the kernel serialized) */
            wgmma_fence();
            wgmma_commit();
        }
        cp_async_commit();
        wgmma_wait<1>(); /* dQ_i's group is done; the next S^T's may still run */
        wgmma_fence_operands(acc);
        store_dq();
        wgmma_wait<0>(); /* the next S^T's group is done: no wgmma runs across the loop's end (else warning C7515) */
    }
    fence_proxy_async(); /* the last dQ_s's stores, visible to the copy engine after the barrier */
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
using BwdKernelFn = void (*)(const T *, const T *, const T *, const T *, const float *, const float *, float *,
                             const CUtensorMap, T *, T *, int, int, float, float);

/* The compiled d: 2 instantiations per storage type. Validation (chapter.c) rejects other shapes, and GPUs other
 * than sm_90, first; reaching the end with one is a programming error. */
template <typename T>
static BwdKernelFn<T> prepared_kernel(int d, size_t smem) {
    BwdKernelFn<T> kernel = d == 64 ? tc_tma_bwd_kernel<64, T> : d == 128 ? tc_tma_bwd_kernel<128, T> : nullptr;
    if (!kernel) {
        fprintf(stderr, "tc_tma_bwd: no kernel compiled for d=%d\n", d);
        exit(2);
    }
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    return kernel;
}

/* dQ ([B*H][N][d], fp32) as the copy engine sees it: 3 dimensions, innermost first, boxes of 32 features x Br rows x
 * 1 head, read from shared memory in the 128-byte swizzle (the box is 128 bytes wide); rows past N are outside. The
 * driver's encoder is reached through the runtime, so that the program needs no -lcuda. */
static CUtensorMap dq_tensor_map(const BwdArgs *a) {
    static PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    if (!encode) {
        void *fn = NULL;
        cudaDriverEntryPointQueryResult found;
        CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
        if (found != cudaDriverEntryPointSuccess || !fn) {
            fprintf(stderr, "error: the CUDA driver has no cuTensorMapEncodeTiled (step 10 needs CUDA 12 on)\n");
            exit(3);
        }
        encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    }
    const cuuint64_t dims[3] = {(cuuint64_t)a->d, (cuuint64_t)a->N, (cuuint64_t)a->B * a->H};
    const cuuint64_t strides[2] = {(cuuint64_t)a->d * 4, (cuuint64_t)a->N * a->d * 4}; /* bytes, dimensions 1, 2 */
    const cuuint32_t box[3] = {32, TC_WG_BR, 1}, steps[3] = {1, 1, 1};
    CUtensorMap map;
    const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, a->dQ, dims, strides, box, steps,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "error: cuTensorMapEncodeTiled failed (CUresult %d) for B*H=%d N=%d d=%d\n", (int)r,
                a->B * a->H, a->N, a->d);
        exit(3);
    }
    return map;
}

/* The map of the last launch, kept: a benchmark launches the same problem many times, and encoding (host work)
 * would otherwise sit between its timed launches. */
static const CUtensorMap *dq_map_for(const BwdArgs *a) {
    static CUtensorMap map;
    static BwdArgs last;
    static int valid = 0;
    if (!valid || last.dQ != a->dQ || last.B != a->B || last.H != a->H || last.N != a->N || last.d != a->d) {
        map = dq_tensor_map(a);
        last = *a;
        valid = 1;
    }
    return &map;
}

template <typename T>
static void launch(const BwdArgs *a) {
    const size_t smem = tc_tma_smem_bytes(TC_WG_BR, TC_WG_BC, a->d, sizeof(T));
    BwdKernelFn<T> kernel = prepared_kernel<T>(a->d, smem);
    const dim3 grid((unsigned)ceil_div(a->N, TC_WG_BC), (unsigned)(a->B * a->H));
    kernel<<<grid, TC_WG_THREADS, smem>>>(static_cast<const T *>(a->Qt), static_cast<const T *>(a->Kt),
                                         static_cast<const T *>(a->Vt), static_cast<const T *>(a->dOt), a->L, a->D,
                                         a->dQ, *dq_map_for(a), static_cast<T *>(a->dKt), static_cast<T *>(a->dVt),
                                         a->N, a->causal, 1.f / sqrtf((float)a->d), LOG2E / sqrtf((float)a->d));
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(tc_tma_bwd_launch)(const BwdArgs *a) {
    if (a->dtype == DTYPE_BF16) launch<__nv_bfloat16>(a);
    else launch<__half>(a);
}

extern "C" void IO_VARIANT(tc_tma_bwd_resources)(int d, int dtype, KernelResources *r) {
    const size_t smem = tc_tma_smem_bytes(TC_WG_BR, TC_WG_BC, d, 2);
    const void *kernel = dtype == DTYPE_BF16 ? (const void *)prepared_kernel<__nv_bfloat16>(d, smem)
                                             : (const void *)prepared_kernel<__half>(d, smem);
    kernel_resources(kernel, TC_WG_THREADS, smem, r);
}
