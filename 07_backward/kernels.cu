/* kernels.cu: chapter 07, step 2: FlashAttention-2's backward pass in fp32 (FFMA, no tensor cores).
 *
 *   ./ch07/run --kernel flash [--causal] [--br 32 --bc 32]   flash_bwd_d (flash_bwd_d_kernel), then
 *                                                             flash_bwd (flash_bwd_kernel)
 *
 * What changes from step 1 (1_naive.cu: six kernels, P, dP and dS through HBM):
 *   1. P, dP and dS never reach HBM. A block owns one key block K_j, V_j (grid (Tc, B*H)), loads it once, and
 *      for every query block Q_i it sees recomputes S_ij = Q_i K_j^T and P_ij = exp(scale S_ij - L_i) from the
 *      forward's L, then dP_ij = dO_i V_j^T and dS_ij = P_ij o (dP_ij - D_i), all in registers and shared memory.
 *   2. dK_j and dV_j stay in registers for the whole sweep over i and go to HBM once, at the end.
 *   3. dQ_i is a sum over every j: each block adds its share, scale dS_ij K_j, into dQ in HBM with fp32 atomic
 *      adds. flash_bwd_d sets dQ to 0 first.
 *   4. D_i = dO_i . O_i, the row sum of P o dP, is computed once per row by flash_bwd_d (FlashAttention-2's
 *      preprocessing) and read back as one number per row, like L_i.
 *   5. With the causal mask key block j starts at query block floor(j Bc / Br), the first with a row >= j Bc:
 *      the blocks above the diagonal are never loaded nor computed.
 * Every product is FFMAs on shared-memory tiles with one thread mapping (16 x 16 threads, paired lanes: below).
 * f4, component, dot4_add and load_vec: common/float4.cuh.
 */
#include <stdio.h>
#include <stdlib.h>

#include "float4.cuh"
#include "io_tally.cuh"
#include "kernels.h"
#include "tiles.h"

static constexpr float LOG2E = 1.4426950408889634f;

#define BWD_D_THREADS 256 /* flash_bwd_d: a row is d/4 consecutive lanes, one float4 each */

/* ---- flash_bwd_d: D_i = dO_i . O_i, and dQ = 0 ---------------------------------------------------------------
 * The rows of every head are one array of B H N rows. A row is D/4 consecutive lanes of a warp, each with one
 * float4 of dO_i and of O_i; the lanes' partial sums meet by shuffles. Reads dO and O once, writes D and dQ. */
template <int D>
static __global__ void __launch_bounds__(BWD_D_THREADS)
    flash_bwd_d_kernel(const float *__restrict__ dO, const float *__restrict__ O, float *__restrict__ Dvec,
                       float *__restrict__ dQ, long long rows) {
    IO_TALLY;
    constexpr int LANES = D / 4;                /* lanes per row: 8, 16 or 32 */
    constexpr int ROWS = BWD_D_THREADS / LANES; /* rows per block             */
    const long long row = (long long)blockIdx.x * ROWS + threadIdx.x / LANES;
    const int c = threadIdx.x % LANES; /* this lane's float4 of the row */

    float dot = 0.f;
    if (row < rows) {
        const size_t at = (size_t)row * LANES + c;
        const float4 g = IO_LOAD(reinterpret_cast<const float4 *>(dO)[at]);
        const float4 o = IO_LOAD(reinterpret_cast<const float4 *>(O)[at]);
        dot = dot4_add(g, o, 0.f);
        IO_STORE(reinterpret_cast<float4 *>(dQ)[at], make_float4(0.f, 0.f, 0.f, 0.f));
    }
    /* The LANES lanes of a row are consecutive and LANES divides 32: xor LANES/2, ..., 1 stays inside the row.
     * Every lane of the warp takes part (no lane has left). */
    for (int lanes = LANES / 2; lanes > 0; lanes /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, lanes);
    if (row < rows && c == 0) IO_STORE(Dvec[row], dot);
    IO_TALLY_FLUSH();
}

/* ---- flash_bwd: one block per key block K_j, V_j --------------------------------------------------------------
 * Grid (Tc, B*H), BWD_THREADS = 256 threads as 16 x 16, thread (ty, tx): 8 warps, 2 across and 4 down, each 4
 * values of ty x 8 of tx. Every product maps its output onto them the same way:
 *   S_ij, dP_ij (Br x Bc)   rows ty + 16a (a < Br/16), keys tx + 16b (b < Bc/16); inner d, float4 along d
 *   dK_j, dV_j (Bc x d)     keys ty KR + e (e < KR = Bc/16, consecutive), column groups tx + 16u; inner Br
 *   dQ_i's share (Br x d)   rows ty + 16a, column groups tx + 16u; inner Bc
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
    flash_bwd_kernel(const float *__restrict__ Q, const float *__restrict__ K, const float *__restrict__ V,
                     const float *__restrict__ dO, const float *__restrict__ L, const float *__restrict__ Dvec,
                     float *__restrict__ dQ, float *__restrict__ dK, float *__restrict__ dV, int N, int causal,
                     float scale, float scale_log2) {
    IO_TALLY;
    constexpr int QS = D + BWD_PAD;          /* row stride of Q_i, dO_i, K_j, V_j in shared memory */
    constexpr int PS = BC + BWD_P_PAD;       /* row stride of P_ij, dS_ij                          */
    constexpr int SR = BR / 16, SC = BC / 16; /* S_ij, dP_ij: rows and keys per thread              */
    constexpr int KR = BC / 16;              /* dK_j, dV_j: keys per thread                        */
    constexpr int VW = D >= 64 ? 4 : 2;      /* columns per column group                           */
    constexpr int NU = D / (16 * VW);        /* column groups per thread (dK_j, dV_j, dQ_i)        */
    constexpr int QR = BR / 16;              /* dQ_i: rows per thread                              */
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

        /* dQ_i += scale dS_ij K_j: per 4 keys, a thread reads a float4 of dS_ij in each of its rows and its column
         * groups of the 4 rows of K_j; then one fp32 atomic add into HBM per element of its real rows. */
        float dq[QR][NU][VW];
#pragma unroll
        for (int a = 0; a < QR; a++)
#pragma unroll
            for (int u = 0; u < NU; u++)
#pragma unroll
                for (int v = 0; v < VW; v++) dq[a][u][v] = 0.f;
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
#pragma unroll
        for (int a = 0; a < QR; a++) {
            const int r = ty + 16 * a;
            if (r < q_rows) {
                float *dQ_row = dQ + (head + q0 + r) * D;
#pragma unroll
                for (int u = 0; u < NU; u++) {
                    float *at = &dQ_row[(tx + 16 * u) * VW];
#if __CUDA_ARCH__ >= 900
                    /* sm_90 adds 4 consecutive floats in one reduction (red.global.add.v4.f32): a quarter of the
                     * instructions for the same 16 bytes; before sm_90, and for 2-float groups, one per float */
                    if constexpr (VW == 4)
                        IO_ATOMIC_ADD(reinterpret_cast<float4 *>(at), make_float4(scale * dq[a][u][0], scale * dq[a][u][1],
                                                                                  scale * dq[a][u][2], scale * dq[a][u][3]));
                    else
#endif
#pragma unroll
                    for (int v = 0; v < VW; v++) IO_ATOMIC_ADD(&at[v], scale * dq[a][u][v]);
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

typedef void (*DKernelFn)(const float *, const float *, float *, float *, long long);
typedef void (*BwdKernelFn)(const float *, const float *, const float *, const float *, const float *,
                            const float *, float *, float *, float *, int, int, float, float);

static DKernelFn d_kernel_for(int d) {
    if (d == 32) return flash_bwd_d_kernel<32>;
    if (d == 64) return flash_bwd_d_kernel<64>;
    if (d == 128) return flash_bwd_d_kernel<128>;
    fprintf(stderr, "flash_bwd_d: no kernel compiled for d=%d\n", d);
    exit(2);
}

/* The compiled (d, Br, Bc): 3 x 2 x 2 instantiations per build (each costs compile time on every architecture of
 * the default build; 16-row tiles, a quarter of a warp's worth of rows per thread row, were left out). */
static BwdKernelFn kernel_for(int d, int Br, int Bc) {
#define CASE(D_, BR_, BC_) \
    if (d == D_ && Br == BR_ && Bc == BC_) return flash_bwd_kernel<D_, BR_, BC_>;
    CASE(32, 32, 32) CASE(32, 32, 64) CASE(32, 64, 32) CASE(32, 64, 64)
    CASE(64, 32, 32) CASE(64, 32, 64) CASE(64, 64, 32) CASE(64, 64, 64)
    CASE(128, 32, 32) CASE(128, 32, 64) CASE(128, 64, 32) CASE(128, 64, 64)
#undef CASE
    return nullptr;
}

/* The kernel for (d, Br, Bc), with its dynamic shared memory allowed past the 48 KB default. Validation
 * (chapter.c) rejects unsupported tiles first; reaching here with one is a programming error. */
static BwdKernelFn prepared_kernel(int d, int Br, int Bc, size_t smem) {
    BwdKernelFn kernel = kernel_for(d, Br, Bc);
    if (!kernel) {
        fprintf(stderr, "flash_bwd: no kernel compiled for d=%d Br=%d Bc=%d\n", d, Br, Bc);
        exit(2);
    }
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    return kernel;
}

extern "C" void IO_VARIANT(flash_bwd_d_launch)(const BwdArgs *a) {
    const long long rows = (long long)a->B * a->H * a->N;
    const int rows_per_block = BWD_D_THREADS / (a->d / 4);
    DKernelFn kernel = d_kernel_for(a->d);
    kernel<<<(unsigned)ceil_div(rows, rows_per_block), BWD_D_THREADS>>>(a->dO, a->O, a->D, a->dQ, rows);
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(flash_bwd_launch)(const BwdArgs *a) {
    const size_t smem = bwd_smem_bytes(a->Br, a->Bc, a->d);
    BwdKernelFn kernel = prepared_kernel(a->d, a->Br, a->Bc, smem);
    const dim3 grid((unsigned)ceil_div(a->N, a->Bc), (unsigned)(a->B * a->H));
    kernel<<<grid, BWD_THREADS, smem>>>(a->Q, a->K, a->V, a->dO, a->L, a->D, a->dQ, a->dK, a->dV, a->N, a->causal,
                                        1.f / sqrtf((float)a->d), LOG2E / sqrtf((float)a->d));
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(flash_bwd_resources)(int d, int Br, int Bc, KernelResources *r) {
    const size_t smem = bwd_smem_bytes(Br, Bc, d);
    kernel_resources((const void *)prepared_kernel(d, Br, Bc, smem), BWD_THREADS, smem, r);
}
