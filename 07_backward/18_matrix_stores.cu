/* 18_matrix_stores.cu: chapter 07, step 18: step 17 with P_ij^T and dS_ij^T stored to shared memory by stmatrix
 * (sm_90), four 8 x 8 matrices an instruction, instead of one 4-byte pair a lane.
 *
 *   ./ch07/run --kernel matrix_stores [--dtype fp16|bf16] [--causal] tc_bwd_d (step 3's), then tc_stores_bwd
 *                                                                    (tc_stores_bwd_kernel)
 *
 * What changes from step 17 (`diff 07_backward/17_dq_squares.cu 07_backward/18_matrix_stores.cu`): how a warp writes
 * its S_ij^T and dP_ij^T chunks, turned into P_ij^T and dS_ij^T in the storage type, to P_s and dS_s. Step 17 stores
 * each lane's pair of queries of a key by a 4-byte store: 16 a chunk of 32 queries and tensor, 32 a warp and visit at
 * d = 128 (64 at d = 64, two chunks). An accumulator fragment is laid out as ldmatrix delivers one, so sm_90's
 * stmatrix.x4, ldmatrix's inverse, stores four of its 8 x 8 matrices (an m16 tile's two n8 tiles) at once from the
 * registers as they are, each lane giving the address of one matrix row: 4 instructions a chunk and tensor, a
 * quarter of the store instructions through the same MIO queue as the ldmatrix, the same bytes and the same
 * swizzled places. Before sm_90 the 4-byte stores stay. Step 3's tc_bwd_d (D_i, and dQ = 0) runs before it
 * unchanged. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <type_traits>

#include "io_tally.cuh"
#include "kernels.h"
#include "ptx_sm80.cuh"
#include "ptx_sm90.cuh" /* stmatrix_x4 */
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

/* load_tile for a tile whose ROWS rows are all real: no row tests, no zeros. */
template <int D, int ROWS, int THREADS, typename T, typename Copy16>
static __device__ __forceinline__ void load_whole_tile(Copy16 copy16, T *dst_s, const T *src) {
    constexpr int CH = D / 8, STEP = THREADS / CH; /* 16-byte chunks per row; rows per pass */
    static_assert(THREADS % CH == 0 && STEP % 8 == 0 && ROWS % STEP == 0, "whole passes of whole rows");
    const int r0 = threadIdx.x / CH, c = threadIdx.x % CH;
    T *to = &dst_s[swz<D>(r0, c)];
    const T *from = src + (size_t)r0 * D + 8 * c;
#pragma unroll
    for (int pass = 0; pass < ROWS / STEP; pass++) copy16(to + pass * STEP * D, from + pass * STEP * D, true);
}

/* ---- tc_stores_bwd: one block per key block K_j, V_j ----------------------------------------------------------------
 * Grid (Tc, B*H), TC_TILE_THREADS threads, one block per SM, Br = TC_KV_BR(d) (128 at d = 64, 64 at d = 128),
 * Bc = 128. Warp w = (kg, qh) = (w % 4, w / 4) owns keys kw = 32 kg .. kw + 31 of K_j in every product; for each
 * query block Q_i it sees:
 *   S_ij^T, dP_ij^T (32 keys x the Br/2 queries qw = Br/2 qh ..)   A = K_j, V_j rows (at d = 64 held in registers
 *                                           since the sweep began, at d = 128 ldmatrix, two m16 tiles), B = Q_i,
 *                                           dO_i rows (ldmatrix), in chunks of QC = TC_KV_QC queries: each B
 *                                           fragment serves both m16 tiles, each A fragment the chunk's n8 tiles
 *   P_ij^T = exp2(S^T scale_log2 - L_i log2 e), dS_ij^T scale = P^T o (dP^T scale - D_i scale), both 0 where
 *                                           masked, both to shared memory (16-bit; on sm_90 by stmatrix.x4, an
 *                                           m16 tile's two n8 tiles an instruction): the products below need the
 *                                           block's other queries
 *   dV_j += P_ij^T dO_i, dK_j += dS_ij^T Q_i  (32 keys x the d/2 features fw = d/2 qh ..) A = P^T, dS^T from shared
 *                                           memory (ldmatrix), B = dO_i, Q_i rows (ldmatrix.trans), over all Br
 *                                           queries
 * then dQ_i's share (Br x d) in 8 squares of 32 rows x 32 columns, one a warp (tiles.h: Br/32 x d/32 of them):
 *   dQ_i += (scale dS_ij) K_j                A = scale dS_ij from dS_ij^T (ldmatrix.trans, two m16 tiles), B = K_j
 *                                           rows from Kq_s, the copy with interleaved features (ldmatrix.trans,
 *                                           two 16-feature groups): each fragment serves two of the others; a
 *                                           16-byte fp32 atomic add per 4 elements of a real row
 * scale_log2 = log2(e)/sqrt(d): P = exp2(S scale_log2 - L log2 e) = exp(scale S - L). */
template <int D, typename T>
static __global__ void __launch_bounds__(TC_TILE_THREADS, 1)
    tc_stores_bwd_kernel(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V,
                         const T *__restrict__ dO, const float *__restrict__ L, const float *__restrict__ Dvec,
                         float *__restrict__ dQ, T *__restrict__ dK, T *__restrict__ dV, int N, int causal,
                         float scale, float scale_log2) {
    IO_TALLY;
    constexpr int BR = TC_KV_BR(D), BC = TC_TILE_BC, THREADS = TC_TILE_THREADS, WARPS = TC_TILE_WARPS;
    constexpr int QC = TC_KV_QC;      /* queries per chunk of S_ij^T and dP_ij^T            */
    constexpr bool HELD = TC_KV_HELD(D); /* K_j's and V_j's A fragments in registers        */
    constexpr int NS = QC / 8;        /* n8 tiles of a chunk (queries)                      */
    constexpr int DH = D / 2;         /* features of a warp's dK_j, dV_j                    */
    constexpr int NH = DH / 8;        /* their n8 tiles                                     */
    static_assert(WARPS == 8 && BC == 4 * 32 && (BR / 2) % QC == 0, "4 x 2 warps of 32 keys, Br/2 queries");
    extern __shared__ uint4 smem[];
    T *K_s = reinterpret_cast<T *>(smem);                  /* [BC][D], swizzled                     */
    T *V_s = K_s + BC * D;                                 /* [BC][D]                               */
    T *Q_s = V_s + BC * D;                                 /* [2][BR][D]: two buffers               */
    T *dO_s = Q_s + 2 * BR * D;                            /* [2][BR][D]                            */
    T *P_s = dO_s + 2 * BR * D;                            /* [BC][BR]: P_ij^T, swizzled            */
    T *dS_s = P_s + BC * BR;                               /* [BC][BR]: dS_ij^T, swizzled           */
    float *L_s = reinterpret_cast<float *>(dS_s + BC * BR); /* [2][BR]: L_i log2(e), log2 units      */
    float *D_s = L_s + 2 * BR;                             /* [2][BR]: D_i scale                    */
    T *Kq_s = reinterpret_cast<T *>(D_s + 2 * BR);         /* [BC][D]: K_j, features interleaved    */

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int frag_row = lane / 4, frag_col = lane % 4; /* the fragment coordinates (ptx_sm80.cuh) */
    const int j = blockIdx.x; /* blocks in index order: with the causal mask the low j see the most query blocks */
    const size_t head = (size_t)blockIdx.y * N;
    const int k0 = j * BC, kv_rows = min(BC, N - k0);
    const int kw = tc_tile_key0(warp);        /* this warp's first key in K_j (tiles.h)          */
    const int qw = tc_tile_query0(warp, BR);  /* its first query in Q_i (S_ij^T, dP_ij^T)        */
    const int fw = tc_tile_feature0(warp, D); /* its first feature (dK_j, dV_j)                  */
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
    /* 4 bytes the same way: cp.async of one float (a row's L_i, D_i: 4-byte aligned only). */
    auto copy4 = [&](float *to, const float *from, bool real) {
#if __CUDA_ARCH__ >= 800 && !defined(COUNT_IO)
        cp_async4(to, from, real);
#else
        *to = real ? IO_LOAD(*from) : 0.f;
#endif
    };
    /* Q_i, dO_i (copies: a whole block's without row tests), L_i, D_i (copies, unscaled) into buffer buf;
     * rows past N: zeros, never NaN into a product (their P and dS are masked to 0 as well). */
    auto load_q = [&](int i, int buf) {
        const int q0 = i * BR, q_rows = min(BR, N - q0);
        if (q_rows == BR) { /* the same in every thread: no divergence */
            load_whole_tile<D, BR, THREADS>(copy16, Q_s + buf * BR * D, Q + (head + q0) * D);
            load_whole_tile<D, BR, THREADS>(copy16, dO_s + buf * BR * D, dO + (head + q0) * D);
        } else {
            load_tile<D, BR, THREADS>(copy16, Q_s + buf * BR * D, Q + (head + q0) * D, q_rows);
            load_tile<D, BR, THREADS>(copy16, dO_s + buf * BR * D, dO + (head + q0) * D, q_rows);
        }
        for (int r = threadIdx.x; r < BR; r += THREADS) {
            const bool real = r < q_rows;
            copy4(L_s + buf * BR + r, real ? L + head + q0 + r : L, real);
            copy4(D_s + buf * BR + r, real ? Dvec + head + q0 + r : Dvec, real);
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
     * offset for (0, 0) XOR 32 c0 bytes, plus 2 W bytes per row (chapter 05's addressing, 10_cp_async.cu). W = D for
     * K_j, V_j, Q_i, dO_i; W = BR for P_ij^T and dS_ij^T (at_pa: at_a there; at_ds: at_b there). */
    int a_lane = 2 * ((lane % 8 + 8 * (lane / 8 % 2)) * D + (((lane / 16) ^ (lane % 8)) << 3));
    int b_lane = 2 * ((lane % 8 + 8 * (lane / 16)) * D + (((lane / 8 % 2) ^ (lane % 8)) << 3));
    int ds_lane = 2 * ((lane % 8 + 8 * (lane / 16)) * BR + (((lane / 8 % 2) ^ (lane % 8)) << 3));
    int pa_lane = 2 * ((lane % 8 + 8 * (lane / 8 % 2)) * BR + (((lane / 16) ^ (lane % 8)) << 3));
    auto at_a = [&](int r0, int c0) { return (a_lane ^ (32 * c0)) + 2 * D * r0; };
    auto at_b = [&](int r0, int c0) { return (b_lane ^ (32 * c0)) + 2 * D * r0; };
    auto at_ds = [&](int r0, int c0) { return (ds_lane ^ (32 * c0)) + 2 * BR * r0; }; /* at_b in dS_s       */
    auto at_pa = [&](int r0, int c0) { return (pa_lane ^ (32 * c0)) + 2 * BR * r0; }; /* at_a in P_s, dS_s */
    const unsigned K_a = smem_addr(K_s), V_a = smem_addr(V_s), P_a = smem_addr(P_s), dS_a = smem_addr(dS_s);

    /* dK_j and dV_j: rows kw + 16 mt + frag_row (+ 8), columns fw + 8 n + 2 frag_col (+ 1) */
    float dk[2][NH][4], dv[2][NH][4];
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int n = 0; n < NH; n++)
#pragma unroll
            for (int e = 0; e < 4; e++) dk[mt][n][e] = dv[mt][n][e] = 0.f;

    load_tile<D, BC, THREADS>(copy16, K_s, K + (head + k0) * D, kv_rows); /* K_j, V_j: once, for the whole sweep */
    load_tile<D, BC, THREADS>(copy16, V_s, V + (head + k0) * D, kv_rows);
    load_q(i_first, 0);
    cp_async_commit();

    /* At d = 64 (HELD): this warp's A fragments of K_j and V_j, its 32 keys (m16 tiles mt = 0, 1) at every k16 step of
     * the features, loaded once for the whole sweep: 64 registers. */
    constexpr int HK = HELD ? D / 16 : 1; /* k16 steps held (1: an unused array the compiler drops) */
    uint32_t k_frag[2][HK][4], v_frag[2][HK][4];
    cp_async_wait_all();
    __syncthreads(); /* K_j and V_j are in shared memory for every warp: the fragments (d = 64) and Kq_s read them */
    if constexpr (HELD) {
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int kk = 0; kk < HK; kk++) {
                ldmatrix_x4(k_frag[mt][kk], K_a + at_a(kw + 16 * mt, kk));
                ldmatrix_x4(v_frag[mt][kk], V_a + at_a(kw + 16 * mt, kk));
            }
    }
    /* Kq_s: K_j for dQ's product, each 16-feature group's 16-byte chunks 2q and 2q + 1 (4-byte words w0..w7, a word a
     * pair of features) rewritten as (w0, w2, w4, w6) and (w1, w3, w5, w7), at the same swizzled places as K_s's, once
     * for the whole sweep; the loop's first barrier orders these stores before any warp reads them. */
    for (int t = threadIdx.x; t < BC * D / 16; t += THREADS) {
        const int r = t / (D / 16), q = t % (D / 16);
        const uint4 lo = *reinterpret_cast<const uint4 *>(&K_s[swz<D>(r, 2 * q)]);
        const uint4 hi = *reinterpret_cast<const uint4 *>(&K_s[swz<D>(r, 2 * q + 1)]);
        *reinterpret_cast<uint4 *>(&Kq_s[swz<D>(r, 2 * q)]) = make_uint4(lo.x, lo.z, hi.x, hi.z);
        *reinterpret_cast<uint4 *>(&Kq_s[swz<D>(r, 2 * q + 1)]) = make_uint4(lo.y, lo.w, hi.y, hi.w);
    }
    const unsigned Kq_a = smem_addr(Kq_s);

    for (int i = i_first; i < Tr; i++) {
        /* The compiler would otherwise keep every step's offset (a_lane ^ 32 c0, ...) in a register of its own for
         * the whole loop, registers that dK_j and dV_j need: an empty asm makes the lane offsets new values in every
         * visit, so each XOR is redone where it is used (chapter 05's remedy). */
        asm volatile("" : "+r"(a_lane), "+r"(b_lane), "+r"(ds_lane), "+r"(pa_lane));
        const int buf = (i - i_first) % 2, q0 = i * BR;
        cp_async_wait_all();
        __syncthreads(); /* this block's Q_i, dO_i, L_i, D_i (and on the first visit Kq_s) are in shared memory
                            for every warp, and every warp is done with the last visit: its buffer, which the next
                            copies overwrite, P_s and dS_s */
        if (i + 1 < Tr) load_q(i + 1, buf ^ 1); /* runs during this block's math */
        cp_async_commit();
        const unsigned Q_a = smem_addr(Q_s + buf * BR * D), dO_a = smem_addr(dO_s + buf * BR * D);
        const float *L_b = L_s + buf * BR, *D_b = D_s + buf * BR;
        /* Only a warp whose 32 keys reach past N, whose block reaches past N, or (causal) whose last key is after
         * its first query tests each score against the mask: the same in every lane, so a branch, not a test a
         * score. */
        const bool masked = k0 + kw + 32 > N || q0 + BR > N || (causal && k0 + kw + 31 > q0 + qw);

#pragma unroll
        for (int c = qw; c < qw + BR / 2; c += QC) {
            /* S_ij^T = K_j Q_i^T and dP_ij^T = V_j dO_i^T for this warp's 32 keys (m16 tiles mt = 0, 1) and queries
             * c .. c + QC - 1: per k16 step of the features, the two A fragments of K_j (V_j) serve the chunk's
             * NS / 2 B fragments of Q_i (dO_i), and each B fragment both A fragments. Step 0 writes the accumulators
             * (no zeroing before it), the others add to them: unrolled whole, so that each knows which it is. */
            float s[2][NS][4], dp[2][NS][4];
            auto mma = [&](int kk, float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
                if (kk == 0) mma16816_first<T>(c, a, b0, b1);
                else mma16816<T>(c, a, b0, b1);
            };
#pragma unroll
            for (int kk = 0; kk < D / 16; kk++) {
                uint32_t ka[2][4], va[2][4];
#pragma unroll
                for (int mt = 0; mt < 2; mt++) {
                    if constexpr (HELD) { /* the registers' copies: renamed away */
#pragma unroll
                        for (int e = 0; e < 4; e++) ka[mt][e] = k_frag[mt][kk][e], va[mt][e] = v_frag[mt][kk][e];
                    } else {
                        ldmatrix_x4(ka[mt], K_a + at_a(kw + 16 * mt, kk));
                        ldmatrix_x4(va[mt], V_a + at_a(kw + 16 * mt, kk));
                    }
                }
#pragma unroll
                for (int nn = 0; nn < NS / 2; nn++) {
                    uint32_t b[4];
                    ldmatrix_x4(b, Q_a + at_b(c + 16 * nn, kk));
#pragma unroll
                    for (int mt = 0; mt < 2; mt++) {
                        mma(kk, s[mt][2 * nn], ka[mt], b[0], b[1]);
                        mma(kk, s[mt][2 * nn + 1], ka[mt], b[2], b[3]);
                    }
                    ldmatrix_x4(b, dO_a + at_b(c + 16 * nn, kk));
#pragma unroll
                    for (int mt = 0; mt < 2; mt++) {
                        mma(kk, dp[mt][2 * nn], va[mt], b[0], b[1]);
                        mma(kk, dp[mt][2 * nn + 1], va[mt], b[2], b[3]);
                    }
                }
            }

            /* P_ij^T = exp(scale S - L_i) and dS_ij^T scale = P o (dP scale - D_i scale), in place: this lane's keys
             * kw + 16 mt + frag_row (e < 2) and + 8 (e >= 2), queries c + 8 n + 2 frag_col + e % 2. Masked entries
             * are 0 in both: keys or queries past N and, with the causal mask, keys after the query; with_mask, a
             * type (true or false), makes two copies, with the tests and without. */
            auto grads = [&](auto with_mask) {
#pragma unroll
                for (int mt = 0; mt < 2; mt++)
#pragma unroll
                    for (int n = 0; n < NS; n++)
#pragma unroll
                        for (int e = 0; e < 4; e++) {
                            const int r = c + 8 * n + 2 * frag_col + e % 2;
                            const int key = k0 + kw + 16 * mt + frag_row + 8 * (e / 2);
                            float p = fast_exp2(fmaf(s[mt][n][e], scale_log2, -LOG2E * L_b[r]));
                            if (decltype(with_mask)::value && (key >= N || q0 + r >= N || (causal && key > q0 + r)))
                                p = 0.f;
                            s[mt][n][e] = p;
                            dp[mt][n][e] = p * fmaf(dp[mt][n][e], scale, -scale * D_b[r]);
                        }
            };
            if (masked) grads(std::true_type{});
            else grads(std::false_type{});

            /* P_ij^T and dS_ij^T to shared memory (rows: keys, chunks: 8 queries), rounded to the storage type: the
             * products below take them for all Br queries, half of them this warp's partner's (warp w ^ 4). */
#if __CUDA_ARCH__ >= 900
            /* stmatrix.x4 (sm_90): the matrices (keys 0-7, n8 tile 2 nn), (8-15, 2 nn), (0-7, 2 nn + 1),
             * (8-15, 2 nn + 1) of m16 tile mt, register j a lane's pair of matrix j (the accumulator's layout); lane l
             * gives the address of row l % 8 of matrix l / 8: key kw + 16 mt + l % 8 + 8 (l / 8 % 2), chunk
             * c / 8 + 2 nn + l / 16. */
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
#pragma unroll
                for (int nn = 0; nn < NS / 2; nn++) {
                    const int o = 2 * swz<BR>(kw + 16 * mt + lane % 8 + 8 * (lane / 8 % 2), c / 8 + 2 * nn + lane / 16);
                    const float *s0 = s[mt][2 * nn], *s1 = s[mt][2 * nn + 1];
                    const float *d0 = dp[mt][2 * nn], *d1 = dp[mt][2 * nn + 1];
                    stmatrix_x4(P_a + o, pack2<T>(s0[0], s0[1]), pack2<T>(s0[2], s0[3]), pack2<T>(s1[0], s1[1]),
                                pack2<T>(s1[2], s1[3]));
                    stmatrix_x4(dS_a + o, pack2<T>(d0[0], d0[1]), pack2<T>(d0[2], d0[3]), pack2<T>(d1[0], d1[1]),
                                pack2<T>(d1[2], d1[3]));
                }
#else
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
#pragma unroll
                for (int n = 0; n < NS; n++)
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        const int o = swz<BR>(kw + 16 * mt + frag_row + 8 * h, c / 8 + n) + 2 * frag_col;
                        *reinterpret_cast<uint32_t *>(&P_s[o]) = pack2<T>(s[mt][n][2 * h], s[mt][n][2 * h + 1]);
                        *reinterpret_cast<uint32_t *>(&dS_s[o]) = pack2<T>(dp[mt][n][2 * h], dp[mt][n][2 * h + 1]);
                    }
#endif
        }
        __syncthreads(); /* P_ij^T and dS_ij^T are complete in P_s and dS_s: the products below read every warp's */

        /* dV_j += P_ij^T dO_i and dK_j += dS_ij^T Q_i for this warp's 32 keys x features fw .. fw + d/2 - 1, over the
         * block's Br queries (k): A = P^T, dS^T rows from shared memory (ldmatrix, each serving the strip's NH n8
         * tiles), B = dO_i, Q_i rows k (ldmatrix.trans, each serving both m16 tiles). */
#pragma unroll
        for (int kq = 0; kq < BR / 16; kq++) {
            uint32_t pa[2][4], da[2][4];
#pragma unroll
            for (int mt = 0; mt < 2; mt++) {
                ldmatrix_x4(pa[mt], P_a + at_pa(kw + 16 * mt, kq));
                ldmatrix_x4(da[mt], dS_a + at_pa(kw + 16 * mt, kq));
            }
#pragma unroll
            for (int dn = 0; dn < DH / 16; dn++) {
                uint32_t b[4];
                ldmatrix_x4_trans(b, dO_a + at_a(16 * kq, fw / 16 + dn));
#pragma unroll
                for (int mt = 0; mt < 2; mt++) {
                    mma16816<T>(dv[mt][2 * dn], pa[mt], b[0], b[1]);
                    mma16816<T>(dv[mt][2 * dn + 1], pa[mt], b[2], b[3]);
                }
                ldmatrix_x4_trans(b, Q_a + at_a(16 * kq, fw / 16 + dn));
#pragma unroll
                for (int mt = 0; mt < 2; mt++) {
                    mma16816<T>(dk[mt][2 * dn], da[mt], b[0], b[1]);
                    mma16816<T>(dk[mt][2 * dn + 1], da[mt], b[2], b[3]);
                }
            }
        }

        /* dQ_i += (scale dS_ij) K_j, square (r0, c0) = rows r0 .. r0 + 31, columns c0 .. c0 + 31 of dQ_i: 8 squares,
         * one a warp. A = dS_ij (m = query, k = key) from dS_ij^T stored [key][query]: ldmatrix.trans, per k16 step
         * one for each of the square's two m16 tiles; B = K_j (k = key, n = feature) from Kq_s, stored [key][feature]
         * with the features interleaved: ldmatrix.trans, one for each of its two 16-feature groups (n8 tiles 2 dn,
         * 2 dn + 1). Each A fragment serves both groups, each B fragment both m16 tiles. */
        static_assert((BR / 32) * (D / 32) == WARPS, "a square a warp");
        {
            const int r0 = tc_sq_dq_row0(warp, D), c0 = tc_sq_dq_col0(warp, D);
            float acc[2][4][4];
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
#pragma unroll
                for (int u = 0; u < 4; u++)
#pragma unroll
                    for (int e = 0; e < 4; e++) acc[mt][u][e] = 0.f;
#pragma unroll
            for (int kk = 0; kk < BC / 16; kk++) {
                uint32_t a[2][4];
#pragma unroll
                for (int mt = 0; mt < 2; mt++) ldmatrix_x4_trans(a[mt], dS_a + at_ds(16 * kk, r0 / 16 + mt));
#pragma unroll
                for (int dn = 0; dn < 2; dn++) {
                    uint32_t b[4];
                    ldmatrix_x4_trans(b, Kq_a + at_a(16 * kk, c0 / 16 + dn));
#pragma unroll
                    for (int mt = 0; mt < 2; mt++) {
                        mma16816<T>(acc[mt][2 * dn], a[mt], b[0], b[1]);
                        mma16816<T>(acc[mt][2 * dn + 1], a[mt], b[2], b[3]);
                    }
                }
            }
            /* This lane's quads: from Kq_s, n8 tiles 2 dn and 2 dn + 1 of m16 tile mt hold features 4 frag_col, + 1
             * (acc[mt][2 dn][0], [1]) and 4 frag_col + 2, + 3 (acc[mt][2 dn + 1][0], [1]) of the 16 from c0 + 16 dn,
             * row r0 + 16 mt + frag_row; [2], [3] that row + 8. Each four added by one 16-byte atomic where its row is
             * real; a whole query block adds them with no row test (step 14). */
            float *dQ_sq = dQ + (head + q0 + r0 + frag_row) * D + c0 + 4 * frag_col;
            auto add_quads = [&](auto whole) {
#pragma unroll
                for (int mt = 0; mt < 2; mt++)
#pragma unroll
                    for (int dn = 0; dn < 2; dn++)
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            const int r = r0 + 16 * mt + frag_row + 8 * h; /* the row in Q_i */
                            float *to = dQ_sq + (16 * mt + 8 * h) * D + 16 * dn;
                            const float *lo = acc[mt][2 * dn], *hi = acc[mt][2 * dn + 1];
                            if (decltype(whole)::value || q0 + r < N) {
#if __CUDA_ARCH__ >= 900
                                IO_ATOMIC_ADD(reinterpret_cast<float4 *>(to),
                                              make_float4(lo[2 * h], lo[2 * h + 1], hi[2 * h], hi[2 * h + 1]));
#else
                                IO_ATOMIC_ADD(to, lo[2 * h]);
                                IO_ATOMIC_ADD(to + 1, lo[2 * h + 1]);
                                IO_ATOMIC_ADD(to + 2, hi[2 * h]);
                                IO_ATOMIC_ADD(to + 3, hi[2 * h + 1]);
#endif
                            }
                        }
            };
            if (q0 + BR <= N) add_quads(std::true_type{});
            else add_quads(std::false_type{});
        }
    }

    /* dK_j and dV_j go to HBM once, in the storage type, their real rows only: a pair of columns per
     * 4-byte store. */
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int key = kw + 16 * mt + frag_row + 8 * h;
            if (key < kv_rows) {
                uint32_t *dK_row = reinterpret_cast<uint32_t *>(dK + (head + k0 + key) * D);
                uint32_t *dV_row = reinterpret_cast<uint32_t *>(dV + (head + k0 + key) * D);
#pragma unroll
                for (int n = 0; n < NH; n++) {
                    IO_STORE(dK_row[fw / 2 + 4 * n + frag_col], pack2<T>(dk[mt][n][2 * h], dk[mt][n][2 * h + 1]));
                    IO_STORE(dV_row[fw / 2 + 4 * n + frag_col], pack2<T>(dv[mt][n][2 * h], dv[mt][n][2 * h + 1]));
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
    BwdKernelFn<T> kernel = d == 64 ? tc_stores_bwd_kernel<64, T> : d == 128 ? tc_stores_bwd_kernel<128, T> : nullptr;
    if (!kernel) {
        fprintf(stderr, "tc_stores_bwd: no kernel compiled for d=%d\n", d);
        exit(2);
    }
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    return kernel;
}

template <typename T>
static void launch(const BwdArgs *a) {
    const size_t smem = tc_quads_smem_bytes(TC_KV_BR(a->d), TC_TILE_BC, a->d, sizeof(T));
    BwdKernelFn<T> kernel = prepared_kernel<T>(a->d, smem);
    const dim3 grid((unsigned)ceil_div(a->N, TC_TILE_BC), (unsigned)(a->B * a->H));
    kernel<<<grid, TC_TILE_THREADS, smem>>>(static_cast<const T *>(a->Qt), static_cast<const T *>(a->Kt),
                                           static_cast<const T *>(a->Vt), static_cast<const T *>(a->dOt), a->L, a->D,
                                           a->dQ, static_cast<T *>(a->dKt), static_cast<T *>(a->dVt), a->N, a->causal,
                                           1.f / sqrtf((float)a->d), LOG2E / sqrtf((float)a->d));
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(tc_stores_bwd_launch)(const BwdArgs *a) {
    if (a->dtype == DTYPE_BF16) launch<__nv_bfloat16>(a);
    else launch<__half>(a);
}

extern "C" void IO_VARIANT(tc_stores_bwd_resources)(int d, int dtype, KernelResources *r) {
    const size_t smem = tc_quads_smem_bytes(TC_KV_BR(d), TC_TILE_BC, d, 2);
    const void *kernel = dtype == DTYPE_BF16 ? (const void *)prepared_kernel<__nv_bfloat16>(d, smem)
                                             : (const void *)prepared_kernel<__half>(d, smem);
    kernel_resources(kernel, TC_TILE_THREADS, smem, r);
}
