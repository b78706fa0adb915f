/* dq_pass.cu: chapter 07, step 2 with --dq pass: FlashAttention-2's backward with dQ in a pass of its own and no
 * atomics, the alternative to step 2's atomic adds that the README measures against them.
 *
 *   ./ch07/run --kernel flash --dq pass [--causal] [--br 32 --bc 32]   flash_dq (flash_dq_kernel), then
 *                                                                      flash_dkdv (flash_dkdv_kernel)
 *
 * What changes from step 2 (kernels.cu: flash_bwd_d, then flash_bwd):
 *   1. flash_dkdv is flash_bwd without dQ: one block per key block K_j, V_j sweeps the query blocks it sees, keeps
 *      dK_j and dV_j in registers, and adds nothing into dQ.
 *   2. flash_dq is that sweep turned around, the forward's loop order: one block per query block Q_i (grid
 *      (Tr, B*H)) keeps Q_i, dO_i, L_i and D_i, and for every key block j it sees recomputes S_ij, P_ij, dP_ij and
 *      dS_ij and adds scale dS_ij K_j into dQ_i, in registers. dQ_i goes to HBM once, with plain stores.
 *   3. flash_dq computes D_i = dO_i . O_i itself, from the dO_i it holds and O_i read once, and stores it for
 *      flash_dkdv, which runs after it: no flash_bwd_d, and no dQ to set to 0 first.
 *   4. The price: S_ij and dP_ij are computed in both kernels (seven N x N x d products where step 2 has five),
 *      and flash_dq reads K_j and V_j once per visit as flash_dkdv reads Q_i and dO_i.
 * The tiles, threads, paired lanes and padding are step 2's (tiles.h, and the comment above flash_dkdv); the float4
 * helpers are common/float4.cuh.
 */
#include <stdio.h>
#include <stdlib.h>

#include "float4.cuh"
#include "io_tally.cuh"
#include "kernels.h"
#include "tiles.h"

static constexpr float LOG2E = 1.4426950408889634f;

/* ---- flash_dq: one block per query block Q_i ----------------------------------------------------------------
 * Grid (Tr, B*H), step 2's 16 x 16 threads and paired lanes (flash_dkdv, below):
 *   S_ij, dP_ij (Br x Bc)   rows ty + 16a, keys tx + 16b; inner d, float4 along d
 *   dQ_i (Br x d)           rows ty + 16a, column groups tx + 16u; inner Bc, summed over every j in registers
 * D_i: a row is D/4 consecutive lanes, one float4 of dO_i (shared memory) and of O_i (HBM) each, their partial sums
 * meeting by shuffles (flash_bwd_d's order of the sums). Shared memory: K_j, V_j, Q_i, dO_i (rows d + 4 apart),
 * dS_ij (rows Bc + 8 apart), L_i and D_i; no P_ij, which never leaves the registers here. */
template <int D, int BR, int BC>
static __global__ void __launch_bounds__(BWD_THREADS, BWD_BLOCKS_PER_SM(D))
    flash_dq_kernel(const float *__restrict__ Q, const float *__restrict__ K, const float *__restrict__ V,
                    const float *__restrict__ O, const float *__restrict__ dO, const float *__restrict__ L,
                    float *__restrict__ Dvec, float *__restrict__ dQ, int N, int causal, float scale,
                    float scale_log2) {
    IO_TALLY;
    constexpr int QS = D + BWD_PAD;          /* row stride of Q_i, dO_i, K_j, V_j in shared memory */
    constexpr int PS = BC + BWD_P_PAD;       /* row stride of dS_ij                                */
    constexpr int SR = BR / 16, SC = BC / 16; /* S_ij, dP_ij: rows and keys per thread              */
    constexpr int VW = D >= 64 ? 4 : 2;      /* columns per column group                           */
    constexpr int NU = D / (16 * VW);        /* column groups per thread (dQ_i)                    */
    constexpr int QR = BR / 16;              /* dQ_i: rows per thread                              */
    constexpr int LANES = D / 4;             /* D_i: lanes per row (8, 16 or 32)                   */
    constexpr int ROWS = BWD_THREADS / LANES; /* D_i: rows per pass of the block (a divisor of BR)  */
    const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);

    extern __shared__ float4 smem[];
    float *K_s = reinterpret_cast<float *>(smem); /* [BC][QS]                        */
    float *V_s = K_s + BC * QS;                   /* [BC][QS]                        */
    float *Q_s = V_s + BC * QS;                   /* [BR][QS]                        */
    float *dO_s = Q_s + BR * QS;                  /* [BR][QS]                        */
    float *dS_s = dO_s + BR * QS;                 /* [BR][PS]                        */
    float *L_s = dS_s + BR * PS;                  /* [BR]: L_i log2(e), log2 units   */
    float *D_s = L_s + BR;                        /* [BR]: D_i                       */

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int tx = warp % 2 * 8 + ((lane & 1) | (lane >> 2 & 1) << 1 | (lane >> 4 & 1) << 2); /* lane bits 0, 2, 4 */
    const int ty = warp / 2 * 4 + ((lane >> 1 & 1) | (lane >> 3 & 1) << 1);                  /* lane bits 1, 3 */

    const int i = blockIdx.x;
    const size_t head = (size_t)blockIdx.y * N; /* first row of this (batch, head) */
    const int q0 = i * BR;                      /* first query of Q_i              */
    const int q_rows = min(BR, N - q0);

    /* Q_i, dO_i, L_i: read from HBM once, kept for the whole sweep. Rows past N are zeros. */
    const float4 *Q4 = reinterpret_cast<const float4 *>(Q + (head + q0) * D);
    const float4 *dO4 = reinterpret_cast<const float4 *>(dO + (head + q0) * D);
    for (int x = threadIdx.x; x < BR * D / 4; x += BWD_THREADS) {
        const int r = x / (D / 4), c = x % (D / 4);
        const bool real = r < q_rows;
        f4(&Q_s[r * QS + 4 * c]) = real ? IO_LOAD(Q4[x]) : zero;
        f4(&dO_s[r * QS + 4 * c]) = real ? IO_LOAD(dO4[x]) : zero;
    }
    for (int r = threadIdx.x; r < BR; r += BWD_THREADS) L_s[r] = r < q_rows ? IO_LOAD(L[head + q0 + r]) * LOG2E : 0.f;
    __syncthreads(); /* dO_i is complete before D_i's lanes read rows other threads wrote */

    /* D_i = dO_i . O_i, stored for flash_dkdv and kept in D_s (0 for rows past N). Every lane of a warp reaches the
     * shuffles; the LANES lanes of a row are consecutive and LANES divides 32, so xor LANES/2, ..., 1 stays inside
     * the row. */
    const float4 *O4 = reinterpret_cast<const float4 *>(O + (head + q0) * D);
    for (int r0 = 0; r0 < BR; r0 += ROWS) {
        const int r = r0 + threadIdx.x / LANES, c = threadIdx.x % LANES;
        float dot = 0.f;
        if (r < q_rows) dot = dot4_add(f4(&dO_s[r * QS + 4 * c]), IO_LOAD(O4[r * (D / 4) + c]), 0.f);
        for (int lanes = LANES / 2; lanes > 0; lanes /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, lanes);
        if (c == 0) {
            D_s[r] = dot;
            if (r < q_rows) IO_STORE(Dvec[head + q0 + r], dot);
        }
    }

    float dq[QR][NU][VW]; /* dQ_i / scale, in registers for the whole sweep */
#pragma unroll
    for (int a = 0; a < QR; a++)
#pragma unroll
        for (int u = 0; u < NU; u++)
#pragma unroll
            for (int v = 0; v < VW; v++) dq[a][u][v] = 0.f;

    /* Key blocks to visit: all Tc, or with the causal mask those up to the one holding Q_i's last real row (the
     * forward's rule): every key of a later block is after every query of Q_i. */
    const int Tc = (N + BC - 1) / BC;
    const int j_end = causal ? (q0 + q_rows - 1) / BC + 1 : Tc;

    for (int j = 0; j < j_end; j++) {
        const int k0 = j * BC, kv_rows = min(BC, N - k0);
        const float4 *K4 = reinterpret_cast<const float4 *>(K + (head + k0) * D);
        const float4 *V4 = reinterpret_cast<const float4 *>(V + (head + k0) * D);
        __syncthreads(); /* every warp is done with the last visit's K_j and dS_ij (dQ_i's product) before they
                            change */
        for (int x = threadIdx.x; x < BC * D / 4; x += BWD_THREADS) {
            const int r = x / (D / 4), c = x % (D / 4);
            const bool real = r < kv_rows; /* keys past N: zeros, never NaN into dS K_j */
            f4(&K_s[r * QS + 4 * c]) = real ? IO_LOAD(K4[x]) : zero;
            f4(&V_s[r * QS + 4 * c]) = real ? IO_LOAD(V4[x]) : zero;
        }
        __syncthreads(); /* K_j, V_j (and, at the first visit, Q_i, L_i, D_i) are complete before any warp reads
                            them */

        /* S_ij = Q_i K_j^T, then dP_ij = dO_i V_j^T: flash_bwd's loops. */
        float s[SR][SC], dp[SR][SC];
#pragma unroll
        for (int a = 0; a < SR; a++)
#pragma unroll
            for (int b = 0; b < SC; b++) s[a][b] = dp[a][b] = 0.f;
#pragma unroll 1
        for (int k = 0; k < D; k += 4) {
            float4 q[SR];
#pragma unroll
            for (int a = 0; a < SR; a++) q[a] = f4(&Q_s[(ty + 16 * a) * QS + k]);
#pragma unroll
            for (int b = 0; b < SC; b++) {
                const float4 kb = f4(&K_s[(tx + 16 * b) * QS + k]);
#pragma unroll
                for (int a = 0; a < SR; a++) s[a][b] = dot4_add(q[a], kb, s[a][b]);
            }
        }
#pragma unroll 1
        for (int k = 0; k < D; k += 4) {
            float4 o[SR];
#pragma unroll
            for (int a = 0; a < SR; a++) o[a] = f4(&dO_s[(ty + 16 * a) * QS + k]);
#pragma unroll
            for (int b = 0; b < SC; b++) {
                const float4 vb = f4(&V_s[(tx + 16 * b) * QS + k]);
#pragma unroll
                for (int a = 0; a < SR; a++) dp[a][b] = dot4_add(o[a], vb, dp[a][b]);
            }
        }

        /* dS_ij = P_ij o (dP_ij - D_i), P_ij = exp(scale S_ij - L_i) in a register only; 0 where masked (rows and
         * keys past N, and with the causal mask keys after the query). */
#pragma unroll
        for (int a = 0; a < SR; a++) {
            const int r = ty + 16 * a, query = q0 + r;
#pragma unroll
            for (int b = 0; b < SC; b++) {
                const int c = tx + 16 * b, key = k0 + c;
                const bool visible = r < q_rows && c < kv_rows && !(causal && key > query);
                const float p = visible ? exp2f(s[a][b] * scale_log2 - L_s[r]) : 0.f;
                dS_s[r * PS + c] = visible ? p * (dp[a][b] - D_s[r]) : 0.f;
            }
        }
        __syncthreads(); /* dS_ij is complete: dQ_i's product reads entries other threads wrote */

        /* dQ_i += dS_ij K_j (times scale at the end): per 4 keys, a thread reads a float4 of dS_ij in each of its
         * rows and its column groups of the 4 rows of K_j. */
#pragma unroll 2
        for (int c = 0; c < BC; c += 4) {
            float4 ds[QR];
#pragma unroll
            for (int a = 0; a < QR; a++) ds[a] = f4(&dS_s[(ty + 16 * a) * PS + c]);
#pragma unroll
            for (int e = 0; e < 4; e++)
#pragma unroll
                for (int u = 0; u < NU; u++) {
                    float kc[VW];
                    load_vec(kc, &K_s[(c + e) * QS + (tx + 16 * u) * VW]);
#pragma unroll
                    for (int a = 0; a < QR; a++)
#pragma unroll
                        for (int v = 0; v < VW; v++) dq[a][u][v] = fmaf(component(ds[a], e), kc[v], dq[a][u][v]);
                }
        }
    }

    /* dQ_i goes to HBM once, its real rows only, a column group per store. */
#pragma unroll
    for (int a = 0; a < QR; a++) {
        const int r = ty + 16 * a;
        if (r < q_rows) {
            float *dQ_row = dQ + (head + q0 + r) * D;
#pragma unroll
            for (int u = 0; u < NU; u++) {
                float *at = &dQ_row[(tx + 16 * u) * VW];
                if constexpr (VW == 4)
                    IO_STORE(*reinterpret_cast<float4 *>(at), make_float4(scale * dq[a][u][0], scale * dq[a][u][1],
                                                                          scale * dq[a][u][2], scale * dq[a][u][3]));
                else
                    IO_STORE(*reinterpret_cast<float2 *>(at), make_float2(scale * dq[a][u][0], scale * dq[a][u][1]));
            }
        }
    }
    IO_TALLY_FLUSH();
}

/* ---- flash_dkdv: flash_bwd without dQ_i's share, one block per key block K_j, V_j ----------------------------
 * Grid (Tc, B*H), BWD_THREADS = 256 threads as 16 x 16, thread (ty, tx): 8 warps, 2 across and 4 down, each 4
 * values of ty x 8 of tx. Every product maps its output onto them the same way:
 *   S_ij, dP_ij (Br x Bc)   rows ty + 16a (a < Br/16), keys tx + 16b (b < Bc/16); inner d, float4 along d
 *   dK_j, dV_j (Bc x d)     keys ty KR + e (e < KR = Bc/16, consecutive), column groups tx + 16u; inner Br
 * A column group is VW consecutive columns (VW = 4, or 2 at d = 32), read as one float4 (float2): group g is
 * columns VW g .. VW g + VW - 1, and a thread has d/16 columns of each output.
 * Paired lanes (chapter 04): a lane's ty comes from lane bits 1 and 3, its tx from bits 0, 2 and 4, so lanes n
 * and n^1 read the same row operand (Q_i, dO_i, P_ij, dS_ij) and lanes n and n^2 the same column operand (K_j,
 * V_j, and the column groups): every vector load is served in 2 half-warp phases, not 4. In a phase the 4 values
 * of ty (of tx) read 4 rows (keys), and the padding (tiles.h) puts them in different banks: rows of Q_i, dO_i,
 * K_j, V_j are d + 4 floats apart (4 banks on), rows of P_ij, dS_ij Bc + 8 apart (8 or 24 banks on), which also
 * keeps the warp's scalar writes of P_ij and dS_ij (4 rows x 8 consecutive keys) in 32 different banks. Every
 * other read is consecutive floats of one row.
 * scale_log2 = log2(e)/sqrt(d): P = exp2(S scale_log2 - L log2 e) = exp(scale S - L). */
template <int D, int BR, int BC>
static __global__ void __launch_bounds__(BWD_THREADS, BWD_BLOCKS_PER_SM(D))
    flash_dkdv_kernel(const float *__restrict__ Q, const float *__restrict__ K, const float *__restrict__ V,
                      const float *__restrict__ dO, const float *__restrict__ L, const float *__restrict__ Dvec,
                      float *__restrict__ dK, float *__restrict__ dV, int N, int causal, float scale,
                      float scale_log2) {
    IO_TALLY;
    constexpr int QS = D + BWD_PAD;          /* row stride of Q_i, dO_i, K_j, V_j in shared memory */
    constexpr int PS = BC + BWD_P_PAD;       /* row stride of P_ij, dS_ij                          */
    constexpr int SR = BR / 16, SC = BC / 16; /* S_ij, dP_ij: rows and keys per thread              */
    constexpr int KR = BC / 16;              /* dK_j, dV_j: keys per thread                        */
    constexpr int VW = D >= 64 ? 4 : 2;      /* columns per column group                           */
    constexpr int NU = D / (16 * VW);        /* column groups per thread (dK_j, dV_j)              */
    const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);

    extern __shared__ float4 smem[];
    float *K_s = reinterpret_cast<float *>(smem); /* [BC][QS]                        */
    float *V_s = K_s + BC * QS;                   /* [BC][QS]                        */
    float *Q_s = V_s + BC * QS;                   /* [BR][QS]                        */
    float *dO_s = Q_s + BR * QS;                  /* [BR][QS]                        */
    float *P_s = dO_s + BR * QS;                  /* [BR][PS]                        */
    float *dS_s = P_s + BR * PS;                  /* [BR][PS]                        */
    float *L_s = dS_s + BR * PS;                  /* [BR]: L_i log2(e), log2 units   */
    float *D_s = L_s + BR;                        /* [BR]: D_i                       */

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int tx = warp % 2 * 8 + ((lane & 1) | (lane >> 2 & 1) << 1 | (lane >> 4 & 1) << 2); /* lane bits 0, 2, 4 */
    const int ty = warp / 2 * 4 + ((lane >> 1 & 1) | (lane >> 3 & 1) << 1);                  /* lane bits 1, 3 */

    /* Blocks in index order: with the causal mask the low j see the most query blocks, and start first. */
    const int j = blockIdx.x;
    const size_t head = (size_t)blockIdx.y * N; /* first row of this (batch, head) */
    const int k0 = j * BC;                      /* first key of K_j                */
    const int kv_rows = min(BC, N - k0);

    /* K_j, V_j: read from HBM once, kept in shared memory for the whole sweep. Rows past N are zeros, so that
     * no garbage reaches dS K_j. */
    const float4 *K4 = reinterpret_cast<const float4 *>(K + (head + k0) * D);
    const float4 *V4 = reinterpret_cast<const float4 *>(V + (head + k0) * D);
    for (int x = threadIdx.x; x < BC * D / 4; x += BWD_THREADS) {
        const int r = x / (D / 4), c = x % (D / 4);
        const bool real = r < kv_rows;
        f4(&K_s[r * QS + 4 * c]) = real ? IO_LOAD(K4[x]) : zero;
        f4(&V_s[r * QS + 4 * c]) = real ? IO_LOAD(V4[x]) : zero;
    }

    float dK_acc[KR][NU][VW], dV_acc[KR][NU][VW]; /* dK_j / scale and dV_j, in registers for the whole sweep */
#pragma unroll
    for (int e = 0; e < KR; e++)
#pragma unroll
        for (int u = 0; u < NU; u++)
#pragma unroll
            for (int v = 0; v < VW; v++) dK_acc[e][u][v] = dV_acc[e][u][v] = 0.f;

    /* Query blocks to visit: all Tr, or with the causal mask those from the one holding row k0 on; the ones
     * before it have only rows < k0, whose every key of K_j is masked. */
    const int Tr = (N + BR - 1) / BR;
    const int i_first = causal ? k0 / BR : 0;

    for (int i = i_first; i < Tr; i++) {
        const int q0 = i * BR, q_rows = min(BR, N - q0);
        const float4 *Q4 = reinterpret_cast<const float4 *>(Q + (head + q0) * D);
        const float4 *dO4 = reinterpret_cast<const float4 *>(dO + (head + q0) * D);
        __syncthreads(); /* every warp is done with the last visit's Q_i, dO_i, P_ij, dS_ij before they change */
        for (int x = threadIdx.x; x < BR * D / 4; x += BWD_THREADS) {
            const int r = x / (D / 4), c = x % (D / 4);
            const bool real = r < q_rows; /* rows past N: zeros, never NaN into P^T dO or dS^T Q */
            f4(&Q_s[r * QS + 4 * c]) = real ? IO_LOAD(Q4[x]) : zero;
            f4(&dO_s[r * QS + 4 * c]) = real ? IO_LOAD(dO4[x]) : zero;
        }
        for (int r = threadIdx.x; r < BR; r += BWD_THREADS) {
            const bool real = r < q_rows;
            L_s[r] = real ? IO_LOAD(L[head + q0 + r]) * LOG2E : 0.f;
            D_s[r] = real ? IO_LOAD(Dvec[head + q0 + r]) : 0.f;
        }
        __syncthreads(); /* Q_i, dO_i, L_i, D_i (and, at the first visit, K_j, V_j) are complete before any warp
                            reads them */

        /* S_ij = Q_i K_j^T, then dP_ij = dO_i V_j^T: per float4 along d, a thread reads its SR rows of Q_i (dO_i)
         * and its SC keys of K_j (V_j). The loops over d are not unrolled: each pass is already SR SC float4 dot products,
         * and unrolling them took the 64 x 64 tile at d = 64 past the 128 registers of two blocks per SM (tiles.h). */
        float s[SR][SC], dp[SR][SC];
#pragma unroll
        for (int a = 0; a < SR; a++)
#pragma unroll
            for (int b = 0; b < SC; b++) s[a][b] = dp[a][b] = 0.f;
#pragma unroll 1
        for (int k = 0; k < D; k += 4) {
            float4 q[SR];
#pragma unroll
            for (int a = 0; a < SR; a++) q[a] = f4(&Q_s[(ty + 16 * a) * QS + k]);
#pragma unroll
            for (int b = 0; b < SC; b++) {
                const float4 kb = f4(&K_s[(tx + 16 * b) * QS + k]);
#pragma unroll
                for (int a = 0; a < SR; a++) s[a][b] = dot4_add(q[a], kb, s[a][b]);
            }
        }
#pragma unroll 1
        for (int k = 0; k < D; k += 4) {
            float4 o[SR];
#pragma unroll
            for (int a = 0; a < SR; a++) o[a] = f4(&dO_s[(ty + 16 * a) * QS + k]);
#pragma unroll
            for (int b = 0; b < SC; b++) {
                const float4 vb = f4(&V_s[(tx + 16 * b) * QS + k]);
#pragma unroll
                for (int a = 0; a < SR; a++) dp[a][b] = dot4_add(o[a], vb, dp[a][b]);
            }
        }

        /* P_ij = exp(scale S_ij - L_i) and dS_ij = P_ij o (dP_ij - D_i). Masked entries are 0 in both: rows and
         * keys past N (a ragged last block) and, with the causal mask, keys after the query. */
#pragma unroll
        for (int a = 0; a < SR; a++) {
            const int r = ty + 16 * a, query = q0 + r;
#pragma unroll
            for (int b = 0; b < SC; b++) {
                const int c = tx + 16 * b, key = k0 + c;
                const bool visible = r < q_rows && c < kv_rows && !(causal && key > query);
                const float p = visible ? exp2f(s[a][b] * scale_log2 - L_s[r]) : 0.f;
                P_s[r * PS + c] = p;
                dS_s[r * PS + c] = visible ? p * (dp[a][b] - D_s[r]) : 0.f;
            }
        }
        __syncthreads(); /* P_ij and dS_ij are complete: the products below read entries other threads wrote */

        /* dV_j += P_ij^T dO_i and dK_j += dS_ij^T Q_i (times scale at the end): per query row r, a thread reads
         * its KR keys of P_ij's and dS_ij's row r (one vector load each) and its column groups of dO_i and Q_i. */
#pragma unroll 4
        for (int r = 0; r < BR; r++) {
            float p[KR], ds[KR];
            load_vec(p, &P_s[r * PS + ty * KR]);
            load_vec(ds, &dS_s[r * PS + ty * KR]);
#pragma unroll
            for (int u = 0; u < NU; u++) {
                float o[VW], q[VW];
                load_vec(o, &dO_s[r * QS + (tx + 16 * u) * VW]);
                load_vec(q, &Q_s[r * QS + (tx + 16 * u) * VW]);
#pragma unroll
                for (int e = 0; e < KR; e++)
#pragma unroll
                    for (int v = 0; v < VW; v++) {
                        dV_acc[e][u][v] = fmaf(p[e], o[v], dV_acc[e][u][v]);
                        dK_acc[e][u][v] = fmaf(ds[e], q[v], dK_acc[e][u][v]);
                    }
            }
        }
    }

    /* dK_j and dV_j go to HBM once, their real rows only. */
#pragma unroll
    for (int e = 0; e < KR; e++) {
        const int key = ty * KR + e;
        if (key < kv_rows) {
            float *dK_row = dK + (head + k0 + key) * D;
            float *dV_row = dV + (head + k0 + key) * D;
#pragma unroll
            for (int u = 0; u < NU; u++)
#pragma unroll
                for (int v = 0; v < VW; v++) {
                    const int col = (tx + 16 * u) * VW + v;
                    IO_STORE(dK_row[col], scale * dK_acc[e][u][v]);
                    IO_STORE(dV_row[col], dV_acc[e][u][v]);
                }
        }
    }
    IO_TALLY_FLUSH();
}

/* ---- launchers ----------------------------------------------------------------------------------------------- */

typedef void (*DqKernelFn)(const float *, const float *, const float *, const float *, const float *, const float *,
                           float *, float *, int, int, float, float);
typedef void (*DkdvKernelFn)(const float *, const float *, const float *, const float *, const float *,
                             const float *, float *, float *, int, int, float, float);

/* Step 2's d at its square tiles, Br = Bc = 32 (the program's default) and 64 (the bench's), for each kernel: the
 * comparison needs no more, and each instantiation costs compile time on every architecture of the default build. */
static DqKernelFn dq_kernel_for(int d, int Br, int Bc) {
#define CASE(D_, BR_, BC_) \
    if (d == D_ && Br == BR_ && Bc == BC_) return flash_dq_kernel<D_, BR_, BC_>;
    CASE(32, 32, 32) CASE(32, 64, 64) CASE(64, 32, 32) CASE(64, 64, 64) CASE(128, 32, 32) CASE(128, 64, 64)
#undef CASE
    return nullptr;
}
static DkdvKernelFn dkdv_kernel_for(int d, int Br, int Bc) {
#define CASE(D_, BR_, BC_) \
    if (d == D_ && Br == BR_ && Bc == BC_) return flash_dkdv_kernel<D_, BR_, BC_>;
    CASE(32, 32, 32) CASE(32, 64, 64) CASE(64, 32, 32) CASE(64, 64, 64) CASE(128, 32, 32) CASE(128, 64, 64)
#undef CASE
    return nullptr;
}

/* The kernel for (d, Br, Bc) with its dynamic shared memory allowed past the 48 KB default; validation (chapter.c)
 * rejects other tiles first, so a missing one is a programming error. */
static void prepare(const void *kernel, const char *name, int d, int Br, int Bc, size_t smem) {
    if (!kernel) {
        fprintf(stderr, "%s: no kernel compiled for d=%d Br=%d Bc=%d\n", name, d, Br, Bc);
        exit(2);
    }
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
}

extern "C" void IO_VARIANT(flash_dq_launch)(const BwdArgs *a) {
    const size_t smem = dq_smem_bytes(a->Br, a->Bc, a->d);
    DqKernelFn kernel = dq_kernel_for(a->d, a->Br, a->Bc);
    prepare((const void *)kernel, "flash_dq", a->d, a->Br, a->Bc, smem);
    const dim3 grid((unsigned)ceil_div(a->N, a->Br), (unsigned)(a->B * a->H));
    kernel<<<grid, BWD_THREADS, smem>>>(a->Q, a->K, a->V, a->O, a->dO, a->L, a->D, a->dQ, a->N, a->causal,
                                        1.f / sqrtf((float)a->d), LOG2E / sqrtf((float)a->d));
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(flash_dkdv_launch)(const BwdArgs *a) {
    const size_t smem = bwd_smem_bytes(a->Br, a->Bc, a->d);
    DkdvKernelFn kernel = dkdv_kernel_for(a->d, a->Br, a->Bc);
    prepare((const void *)kernel, "flash_dkdv", a->d, a->Br, a->Bc, smem);
    const dim3 grid((unsigned)ceil_div(a->N, a->Bc), (unsigned)(a->B * a->H));
    kernel<<<grid, BWD_THREADS, smem>>>(a->Q, a->K, a->V, a->dO, a->L, a->D, a->dK, a->dV, a->N, a->causal,
                                        1.f / sqrtf((float)a->d), LOG2E / sqrtf((float)a->d));
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(flash_dq_resources)(int d, int Br, int Bc, KernelResources *r) {
    const size_t smem = dq_smem_bytes(Br, Bc, d);
    const void *kernel = (const void *)dq_kernel_for(d, Br, Bc);
    prepare(kernel, "flash_dq", d, Br, Bc, smem);
    kernel_resources(kernel, BWD_THREADS, smem, r);
}

extern "C" void IO_VARIANT(flash_dkdv_resources)(int d, int Br, int Bc, KernelResources *r) {
    const size_t smem = bwd_smem_bytes(Br, Bc, d);
    const void *kernel = (const void *)dkdv_kernel_for(d, Br, Bc);
    prepare(kernel, "flash_dkdv", d, Br, Bc, smem);
    kernel_resources(kernel, BWD_THREADS, smem, r);
}
