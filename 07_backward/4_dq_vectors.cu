/* 4_dq_vectors.cu: chapter 07, step 4: step 3 with dQ_i's share in wider tiles, added 16 bytes per atomic.
 *
 *   ./ch07/run --kernel dq_vectors [--dtype fp16|bf16] [--causal]   tc_bwd_d (step 3's), then tc_vec_bwd
 *                                                                   (tc_vec_bwd_kernel)
 *
 * What changes from step 3 (`diff 07_backward/3_tensor_cores.cu 07_backward/4_dq_vectors.cu`): only the product
 * dQ_i += scale dS_ij K_j and its way out. Step 3 dealt dQ_i's 16 x 16 tiles to the warps: two ldmatrix for every
 * two mma.sync, and four scalar fp32 atomic adds per lane and tile; the atomics were 2.68 of its 2.85 GB of writes
 * and ncu's top stall. Here a warp computes a 16 x TC_DQ_COLS strip of dQ_i (tiles.h: 64 columns): the A fragment
 * of dS_ij (ldmatrix.trans) serves TC_DQ_COLS / 8 mma.sync, and the strip's fragments leave in 16-byte atomic adds
 * (red.global.add.v4.f32, sm_90): the two lanes of a pair (frag_col 2 p, 2 p + 1) hold columns 4 p .. 4 p + 3 of
 * rows frag_row and frag_row + 8 between them, so one shuffle each way gives the even lane row frag_row's four
 * floats and the odd lane row frag_row + 8's. The bytes are the same; the atomic instructions are a quarter. Before
 * sm_90 the four floats go as four scalar adds. Steps 3's tc_bwd_d (D_i, and dQ = 0) runs before it unchanged. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "io_tally.cuh"
#include "kernels.h"
#include "ptx_sm80.cuh"
#include "storage16.cuh"
#include "tiles.h"

/* Element offset of 16-byte chunk c of row r in a [rows][W] tile of 16-bit elements, chunks swizzled (tiles.h). */
template <int W>
static __device__ __forceinline__ int swz(int r, int c) {
    return r * W + (tc_bwd_swizzled_chunk(r, c) << 3);
}

/* ROWS x D elements from global (row 0 at src, row stride D) into a swizzled shared tile by THREADS threads, 16
 * bytes at a time by copy16; rows >= real are zeros and read nothing. Chapter 05's load_tile (10_cp_async.cu). */
template <int D, int ROWS, int THREADS, typename T, typename Copy16>
static __device__ __forceinline__ void load_tile(Copy16 copy16, T *dst_s, const T *src, int real) {
    constexpr int CH = D / 8, STEP = THREADS / CH; /* 16-byte chunks per row; rows per pass */
    static_assert(THREADS % CH == 0 && STEP % 8 == 0 && ROWS % STEP == 0, "whole passes of whole rows");
    const int r0 = threadIdx.x / CH, c = threadIdx.x % CH;
    T *to = &dst_s[swz<D>(r0, c)];
    const T *from = src + (size_t)r0 * D + 8 * c;
#pragma unroll
    for (int pass = 0; pass < ROWS / STEP; pass++) {
        const bool real_row = r0 + pass * STEP < real; /* rows past the end read nothing: zeros */
        copy16(to + pass * STEP * D, real_row ? from + pass * STEP * D : src, real_row);
    }
}

/* ---- tc_vec_bwd: one block per key block K_j, V_j -------------------------------------------------------------------
 * Grid (Tc, B*H), TC_BWD_THREADS threads: warp w owns keys 16 w .. 16 w + 15 of K_j (Bc = 16 x the warps). For
 * each query block Q_i it sees, in QC-query chunks of Q_i (QC = Br, or 32 at d = 128: fewer live registers beside
 * dK_j, dV_j):
 *   S_ij^T, dP_ij^T (16 keys x QC queries)  A = K_j, V_j rows (ldmatrix), B = Q_i, dO_i rows (ldmatrix: a row of
 *                                           Q_i is a column n of B, stored along k = the features)
 *   P_ij^T = exp2(S^T scale_log2 - L_i log2 e), dS_ij^T = P^T o (dP^T - D_i), both 0 where masked
 *   dV_j += P_ij^T dO_i, dK_j += dS_ij^T Q_i   A = P^T, dS^T from the accumulators (packed to 16 bits), B = dO_i,
 *                                           Q_i rows (ldmatrix.trans: a row of dO_i is a row k of B)
 * then, every warp's dS_ij^T in shared memory (16-bit), dQ_i's share (Br x d) in 16 x TC_DQ_COLS strips spread over
 * the warps:
 *   dQ_i += scale dS_ij K_j                  A = dS_ij from dS_ij^T (ldmatrix.trans), B = K_j rows (ldmatrix.trans),
 *                                           a 16-byte fp32 atomic add per 4 elements of a real row
 * scale_log2 = log2(e)/sqrt(d): P = exp2(S scale_log2 - L log2 e) = exp(scale S - L). */
template <int D, typename T>
static __global__ void __launch_bounds__(TC_BWD_THREADS, 1)
    tc_vec_bwd_kernel(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V,
                      const T *__restrict__ dO, const float *__restrict__ L, const float *__restrict__ Dvec,
                      float *__restrict__ dQ, T *__restrict__ dK, T *__restrict__ dV, int N, int causal, float scale,
                      float scale_log2) {
    IO_TALLY;
    constexpr int BR = TC_BWD_BR, BC = TC_BWD_BC, THREADS = TC_BWD_THREADS, WARPS = TC_BWD_WARPS;
    constexpr int QC = D >= 128 ? 32 : BR; /* queries per chunk of S_ij^T and dP_ij^T */
    constexpr int NS = QC / 8;             /* n8 tiles of a chunk (queries)           */
    constexpr int ND = D / 8;              /* n8 tiles of dK_j, dV_j (features)       */
    static_assert(BC == 16 * WARPS && BR % QC == 0 && QC % 16 == 0, "a warp's 16 keys; whole k16 steps");
    extern __shared__ uint4 smem[];
    T *K_s = reinterpret_cast<T *>(smem);                  /* [BC][D], swizzled                     */
    T *V_s = K_s + BC * D;                                 /* [BC][D]                               */
    T *Q_s = V_s + BC * D;                                 /* [2][BR][D]: two buffers               */
    T *dO_s = Q_s + 2 * BR * D;                            /* [2][BR][D]                            */
    T *dS_s = dO_s + 2 * BR * D;                           /* [BC][BR]: dS_ij^T, swizzled           */
    float *L_s = reinterpret_cast<float *>(dS_s + BC * BR); /* [2][BR]: L_i log2(e), log2 units      */
    float *D_s = L_s + 2 * BR;                             /* [2][BR]: D_i                          */

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int frag_row = lane / 4, frag_col = lane % 4; /* the fragment coordinates (ptx_sm80.cuh) */
    const int j = blockIdx.x; /* blocks in index order: with the causal mask the low j see the most query blocks */
    const size_t head = (size_t)blockIdx.y * N;
    const int k0 = j * BC, kv_rows = min(BC, N - k0);
    const int w0 = 16 * warp; /* this warp's first key in K_j */
    const int Tr = (N + BR - 1) / BR;
    const int i_first = causal ? k0 / BR : 0; /* the query blocks before it have only rows < k0: all masked */

    /* 16 bytes from global to shared memory: cp.async from sm_80 on; before sm_80, and in the instrumented build,
     * through a register (IO_LOAD counts it). */
    auto copy16 = [&](T *to, const T *from, bool real) {
#if __CUDA_ARCH__ >= 800 && !defined(COUNT_IO)
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

    /* Where this lane points ldmatrix (x4: lane l gives a row of matrix l / 8), in bytes from a tile's start, for
     * the four 8 x 8 matrices of a 16 x 16 operand at rows r0 .. r0 + 15, chunks 2 c0 and 2 c0 + 1 of a [rows][W]
     * tile (r0 a multiple of 8):
     *   at_a: matrices (rows 0-7, chunk 2c0), (8-15, 2c0), (0-7, 2c0+1), (8-15, 2c0+1): without .trans, an A
     *         operand stored [m][k] (a0..a3); with .trans, a B operand stored [k][n] (b0, b1 of n tile 2 c0, then
     *         b0, b1 of n tile 2 c0 + 1)
     *   at_b: matrices (rows 0-7, chunk 2c0), (0-7, 2c0+1), (8-15, 2c0), (8-15, 2c0+1): without .trans, a B operand
     *         stored [n][k] (b0, b1 of n tile r0/8, then of r0/8 + 1); with .trans, an A operand stored [k][m]
     *         (a0..a3 of the tile's transpose)
     * The swizzle's row term is lane % 8 throughout, so chunk 2 c0 + b lands at 2 c0 ^ (b ^ lane % 8): this lane's
     * offset for (0, 0) XOR 32 c0 bytes, plus 2 W bytes per row (chapter 05's addressing, 10_cp_async.cu). */
    int a_lane = 2 * ((lane % 8 + 8 * (lane / 8 % 2)) * D + (((lane / 16) ^ (lane % 8)) << 3));
    int b_lane = 2 * ((lane % 8 + 8 * (lane / 16)) * D + (((lane / 8 % 2) ^ (lane % 8)) << 3));
    int ds_lane = 2 * ((lane % 8 + 8 * (lane / 16)) * BR + (((lane / 8 % 2) ^ (lane % 8)) << 3));
    auto at_a = [&](int r0, int c0) { return (a_lane ^ (32 * c0)) + 2 * D * r0; };
    auto at_b = [&](int r0, int c0) { return (b_lane ^ (32 * c0)) + 2 * D * r0; };
    auto at_ds = [&](int r0, int c0) { return (ds_lane ^ (32 * c0)) + 2 * BR * r0; }; /* at_b in dS_s */
    const unsigned K_a = smem_addr(K_s), V_a = smem_addr(V_s), dS_a = smem_addr(dS_s);

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
        /* The compiler would otherwise keep every step's offset (a_lane ^ 32 c0, ...) in a register of its own for
         * the whole loop, registers that dK_j and dV_j need: an empty asm makes the lane offsets new values in every
         * visit, so each XOR is redone where it is used (chapter 05's remedy). */
        asm volatile("" : "+r"(a_lane), "+r"(b_lane), "+r"(ds_lane));
        const int buf = (i - i_first) % 2, q0 = i * BR;
        cp_async_wait_all();
        __syncthreads(); /* this block's Q_i, dO_i, L_i, D_i (and on the first visit K_j, V_j) are in shared memory
                            for every warp, and every warp is done with the last visit: its buffer, which the next
                            copies overwrite, and dS_s */
        if (i + 1 < Tr) load_q(i + 1, buf ^ 1); /* runs during this block's math */
        cp_async_commit();
        const unsigned Q_a = smem_addr(Q_s + buf * BR * D), dO_a = smem_addr(dO_s + buf * BR * D);
        const float *L_b = L_s + buf * BR, *D_b = D_s + buf * BR;
        /* Only a warp whose 16 keys reach past N, whose block reaches past N, or (causal) whose last key is after
         * the block's first query tests each score against the mask. */
        const bool masked = k0 + w0 + 16 > N || q0 + BR > N || (causal && k0 + w0 + 15 > q0);

#pragma unroll
        for (int c = 0; c < BR; c += QC) {
            /* S_ij^T = K_j Q_i^T and dP_ij^T = V_j dO_i^T for queries c .. c + QC - 1: one A fragment of K_j (V_j)
             * per k16 step of the features serves the chunk's NS / 2 B fragments of Q_i (dO_i). Unrolled by 2 only:
             * fully unrolled, the compiler hoists the later steps' ldmatrix loads into registers that dK_j and dV_j
             * need, and d = 128 spilled (ptxas). */
            float s[NS][4], dp[NS][4];
#pragma unroll
            for (int n = 0; n < NS; n++)
#pragma unroll
                for (int e = 0; e < 4; e++) s[n][e] = dp[n][e] = 0.f;
#pragma unroll 2
            for (int kk = 0; kk < D / 16; kk++) {
                uint32_t ka[4], va[4];
                ldmatrix_x4(ka, K_a + at_a(w0, kk));
                ldmatrix_x4(va, V_a + at_a(w0, kk));
#pragma unroll
                for (int nn = 0; nn < NS / 2; nn++) {
                    uint32_t b[4];
                    ldmatrix_x4(b, Q_a + at_b(c + 16 * nn, kk));
                    mma16816<T>(s[2 * nn], ka, b[0], b[1]);
                    mma16816<T>(s[2 * nn + 1], ka, b[2], b[3]);
                    ldmatrix_x4(b, dO_a + at_b(c + 16 * nn, kk));
                    mma16816<T>(dp[2 * nn], va, b[0], b[1]);
                    mma16816<T>(dp[2 * nn + 1], va, b[2], b[3]);
                }
            }

            /* P_ij^T = exp(scale S - L_i) and dS_ij^T = P o (dP - D_i), in place: this lane's keys w0 + frag_row
             * (e < 2) and w0 + frag_row + 8 (e >= 2), queries c + 8 n + 2 frag_col + e % 2. Masked entries are 0 in
             * both: keys or queries past N and, with the causal mask, keys after the query. */
#pragma unroll
            for (int n = 0; n < NS; n++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int r = c + 8 * n + 2 * frag_col + e % 2, key = k0 + w0 + frag_row + 8 * (e / 2);
                    float p = fast_exp2(fmaf(s[n][e], scale_log2, -L_b[r]));
                    if (masked && (key >= N || q0 + r >= N || (causal && key > q0 + r))) p = 0.f;
                    s[n][e] = p;
                    dp[n][e] = p * (dp[n][e] - D_b[r]);
                }

            /* dS_ij^T to shared memory for dQ_i (rows: keys, chunks: 8 queries), rounded to the storage type. */
#pragma unroll
            for (int n = 0; n < NS; n++)
#pragma unroll
                for (int h = 0; h < 2; h++)
                    *reinterpret_cast<uint32_t *>(&dS_s[swz<BR>(w0 + frag_row + 8 * h, c / 8 + n) + 2 * frag_col]) =
                        pack2<T>(dp[n][2 * h], dp[n][2 * h + 1]);

            /* dV_j += P_ij^T dO_i and dK_j += dS_ij^T Q_i over the chunk's queries (k). The accumulators of S^T tiles
             * 2 kk, 2 kk + 1 are k step kk's A operand (ptx_sm80.cuh), packed to the storage type; dO_i's and Q_i's
             * rows are B's rows k, so ldmatrix.trans. */
#pragma unroll
            for (int kk = 0; kk < QC / 16; kk++) {
                const uint32_t pa[4] = {pack2<T>(s[2 * kk][0], s[2 * kk][1]), pack2<T>(s[2 * kk][2], s[2 * kk][3]),
                                        pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                        pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
                const uint32_t da[4] = {pack2<T>(dp[2 * kk][0], dp[2 * kk][1]), pack2<T>(dp[2 * kk][2], dp[2 * kk][3]),
                                        pack2<T>(dp[2 * kk + 1][0], dp[2 * kk + 1][1]),
                                        pack2<T>(dp[2 * kk + 1][2], dp[2 * kk + 1][3])};
#pragma unroll
                for (int dn = 0; dn < D / 16; dn++) {
                    uint32_t b[4];
                    ldmatrix_x4_trans(b, dO_a + at_a(c + 16 * kk, dn));
                    mma16816<T>(dv[2 * dn], pa, b[0], b[1]);
                    mma16816<T>(dv[2 * dn + 1], pa, b[2], b[3]);
                    ldmatrix_x4_trans(b, Q_a + at_a(c + 16 * kk, dn));
                    mma16816<T>(dk[2 * dn], da, b[0], b[1]);
                    mma16816<T>(dk[2 * dn + 1], da, b[2], b[3]);
                }
            }
        }
        __syncthreads(); /* dS_ij^T is complete in dS_s: the dQ product below reads every warp's keys */

        /* dQ_i += scale dS_ij K_j, strip (mt, g) = rows 16 mt .. + 15, columns TC_DQ_COLS g .. + TC_DQ_COLS - 1 of
         * dQ_i, the strips dealt to the warps in turn. A = dS_ij (m = query, k = key) from dS_ij^T stored
         * [key][query]: ldmatrix.trans, once per k16 step for the strip's NQ n8 tiles; B = K_j (k = key, n = feature),
         * stored [key][feature]: ldmatrix.trans. */
        constexpr int DQC = D < TC_DQ_COLS ? D : TC_DQ_COLS, NQ = DQC / 8; /* a strip's columns; its n8 tiles */
        for (int t = warp; t < (BR / 16) * (D / DQC); t += WARPS) {
            const int mt = t / (D / DQC), g = t % (D / DQC);
            float acc[NQ][4];
#pragma unroll
            for (int u = 0; u < NQ; u++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[u][e] = 0.f;
#pragma unroll
            for (int kk = 0; kk < BC / 16; kk++) {
                uint32_t a[4];
                ldmatrix_x4_trans(a, dS_a + at_ds(16 * kk, mt));
#pragma unroll
                for (int dn = 0; dn < NQ / 2; dn++) {
                    uint32_t b[4];
                    ldmatrix_x4_trans(b, K_a + at_a(16 * kk, DQC / 16 * g + dn));
                    mma16816<T>(acc[2 * dn], a, b[0], b[1]);
                    mma16816<T>(acc[2 * dn + 1], a, b[2], b[3]);
                }
            }
            /* Lanes 2 p and 2 p + 1 of a quad (odd = frag_col % 2) swap half their fragment: the even lane sends row
             * frag_row + 8's pair and receives the odd lane's pair of row frag_row (the next two columns), the odd
             * lane the reverse; then each holds four consecutive floats of one row, columns 8 u + 4 (frag_col / 2).
             * Every lane shuffles (rows past N included); only real rows are added. */
            const int odd = frag_col & 1, r = 16 * mt + frag_row + 8 * odd;
            float *dQ_row = dQ + (head + q0 + r) * D + DQC * g + 4 * (frag_col / 2);
#pragma unroll
            for (int u = 0; u < NQ; u++) {
                const float sent0 = odd ? acc[u][0] : acc[u][2], sent1 = odd ? acc[u][1] : acc[u][3];
                const float got0 = __shfl_xor_sync(0xffffffffu, sent0, 1);
                const float got1 = __shfl_xor_sync(0xffffffffu, sent1, 1);
                const float4 v = odd ? make_float4(scale * got0, scale * got1, scale * acc[u][2], scale * acc[u][3])
                                     : make_float4(scale * acc[u][0], scale * acc[u][1], scale * got0, scale * got1);
                if (q0 + r < N) {
#if __CUDA_ARCH__ >= 900
                    IO_ATOMIC_ADD(reinterpret_cast<float4 *>(&dQ_row[8 * u]), v);
#else
                    IO_ATOMIC_ADD(&dQ_row[8 * u], v.x);
                    IO_ATOMIC_ADD(&dQ_row[8 * u + 1], v.y);
                    IO_ATOMIC_ADD(&dQ_row[8 * u + 2], v.z);
                    IO_ATOMIC_ADD(&dQ_row[8 * u + 3], v.w);
#endif
                }
            }
        }
    }

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

/* The compiled d: 2 instantiations per storage type. Validation (chapter.c) rejects other shapes first; reaching
 * the end with one is a programming error. */
template <typename T>
static BwdKernelFn<T> prepared_kernel(int d, size_t smem) {
    BwdKernelFn<T> kernel = d == 64 ? tc_vec_bwd_kernel<64, T> : d == 128 ? tc_vec_bwd_kernel<128, T> : nullptr;
    if (!kernel) {
        fprintf(stderr, "tc_vec_bwd: no kernel compiled for d=%d\n", d);
        exit(2);
    }
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    return kernel;
}

template <typename T>
static void launch(const BwdArgs *a) {
    const size_t smem = tc_bwd_smem_bytes(TC_BWD_BR, TC_BWD_BC, a->d, sizeof(T));
    BwdKernelFn<T> kernel = prepared_kernel<T>(a->d, smem);
    const dim3 grid((unsigned)ceil_div(a->N, TC_BWD_BC), (unsigned)(a->B * a->H));
    kernel<<<grid, TC_BWD_THREADS, smem>>>(static_cast<const T *>(a->Qt), static_cast<const T *>(a->Kt),
                                           static_cast<const T *>(a->Vt), static_cast<const T *>(a->dOt), a->L, a->D,
                                           a->dQ, static_cast<T *>(a->dKt), static_cast<T *>(a->dVt), a->N, a->causal,
                                           1.f / sqrtf((float)a->d), LOG2E / sqrtf((float)a->d));
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(tc_vec_bwd_launch)(const BwdArgs *a) {
    if (a->dtype == DTYPE_BF16) launch<__nv_bfloat16>(a);
    else launch<__half>(a);
}

extern "C" void IO_VARIANT(tc_vec_bwd_resources)(int d, int dtype, KernelResources *r) {
    const size_t smem = tc_bwd_smem_bytes(TC_BWD_BR, TC_BWD_BC, d, 2);
    const void *kernel = dtype == DTYPE_BF16 ? (const void *)prepared_kernel<__nv_bfloat16>(d, smem)
                                             : (const void *)prepared_kernel<__half>(d, smem);
    kernel_resources(kernel, TC_BWD_THREADS, smem, r);
}
