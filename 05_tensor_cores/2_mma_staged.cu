/* 2_mma_staged.cu: chapter 05, step 2: FlashAttention-2 on tensor cores, fp16 or bf16 storage, fp32 accumulation
 * and softmax statistics.
 *
 *   ./ch05/run --kernel mma_staged                     flash_mma_staged (flash_mma_staged_kernel)
 *
 * What changes from step 1 (`diff 05_tensor_cores/1_wmma.cu 05_tensor_cores/2_mma_staged.cu`): the fragments by
 * hand. Both products: mma.sync.m16n8k16 (ptx_sm80.cuh), their operands loaded by ldmatrix (.trans for V_j) from step
 * 1's tiles; each lane stores its accumulators of S_ij to S_s, and loads and stores those of O_i from and to O_s, at
 * the rows and columns ptx_sm80.cuh gives it. The rest is step 1's: the softmax by rows, P_ij and O_i in shared memory.
 *
 * The steps, each a file of this folder and a --kernel: 1_wmma.cu (wmma), 2_mma_staged.cu (mma_staged),
 * 3_repack.cu (repack), 4_o_registers.cu (o_registers), 5_swizzle.cu (swizzle), 6_mma_plain.cu (mma_plain),
 * 7_unrolled_copy.cu (unrolled_copy), 8_edge_masks.cu (edge_masks), 9_mma.cu (mma), 10_cp_async.cu (cp_async),
 * kernels.cu (mma_async). The fragment layouts and the PTX are in ptx_sm80.cuh. On sm_75 the kernel runs on
 * mma.sync.m16n8k8 (two per k16) with plain loads (no cp.async there), fp16 only; bf16 needs sm_80 and is
 * rejected before launch (chapter.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "io_tally.cuh"
#include "kernels.h"
#include "ptx_sm80.cuh"
#include "storage16.cuh"
#include "wmma_tiles.h"

/* Element offset of 16-byte chunk c of row r in a [rows][D + 8] tile: rows padded by 16 bytes (step 1's tiles). */
template <int D>
static __device__ __forceinline__ int pad(int r, int c) {
    return r * (D + WMMA_PAD16) + 8 * c;
}

/* Grid (Tr, B*H), 2*Br threads. scale_log2 = log2(e)/sqrt(d): scores are kept in log2 units so that every
 * exponential is one exp2 (e^x = 2^(x log2 e)); m is in those units too. The kernel's work: flash_mma_staged_kernel
 * below calls it. */
template <int D, typename T>
static __device__ __forceinline__ void flash_mma_staged_forward(const T *__restrict__ Q, const T *__restrict__ K,
                                                               const T *__restrict__ V, T *__restrict__ O,
                                                               float *__restrict__ L, int N, int causal,
                                                               float scale_log2) {
    IO_TALLY;
    constexpr int BR = WMMA_BR, BC = WMMA_BC, THREADS = WMMA_THREADS;
    constexpr int CH = D / 8;                  /* 16-byte chunks per row of Q, K, V, O                  */
    constexpr int ROWS = WMMA_ROWS_PER_WARP, MT = ROWS / 16; /* query rows per warp, m16 tiles per warp */
    constexpr int NS = BC / 8;                 /* n8 tiles of S                                         */
    constexpr int LDT = D + WMMA_PAD16;        /* row length of Q_s, K_s, V_s (elements of T)           */
    constexpr int LDS = BC + WMMA_PAD32;       /* row length of S_s (floats)                            */
    constexpr int LDP = 2 * LDS;               /* row length of P_s (elements of T): P_s aliases S_s    */
    constexpr int LDO = D + WMMA_PAD32;        /* row length of O_s (floats)                            */
    constexpr int KEYS_PER_LANE = BC / 2;      /* softmax: two lanes per row, each half of the keys     */
    constexpr int COLS_PER_LANE = D / 2;       /* rescaling: each lane half of its row of O_i           */
    static_assert(MT == 1, "a warp owns one m16 tile of query rows (two from step 11 on)");
    static_assert(LDT % 8 == 0, "ldmatrix's rows of Q_s, K_s and V_s 16-byte aligned");
    static_assert(LDP % 8 == 0 && LDS % 2 == 0, "ldmatrix's rows of P_s 16-byte aligned; S_s's pairs of floats 8-byte");

    extern __shared__ uint4 smem[];
    T *Q_s = reinterpret_cast<T *>(smem);                  /* [BR][LDT] */
    T *K_s = Q_s + BR * LDT;                               /* [BC][LDT] */
    T *V_s = K_s + BC * LDT;                               /* [BC][LDT] */
    float *S_s = reinterpret_cast<float *>(V_s + BC * LDT); /* [BR][LDS] */
    T *P_s = reinterpret_cast<T *>(S_s);                   /* [BR][LDP]: row r over the first half of S's row r */
    float *O_s = S_s + BR * LDS;                           /* [BR][LDO] */

    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int frag_row = lane / 4, frag_col = lane % 4; /* the fragment coordinates (ptx_sm80.cuh) */
    const int w0 = warp * ROWS; /* this warp's first row in Q_i */

    /* With the causal mask the query blocks near the end of the sequence visit the most K/V blocks; the
     * hardware starts blocks roughly in index order, so those get the low indices and the cheap ones fill
     * the tail. */
    const int i = causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    const size_t head = (size_t)blockIdx.y * N; /* first row of this (batch, head) */
    const int q0 = i * BR;                      /* first query row of Q_i          */
    const int q_rows = min(BR, N - q0);
    /* K/V blocks to visit: all Tc of them, or with the causal mask only those holding a key at or before
     * the last real query row of Q_i. The blocks above the diagonal are never loaded nor computed. */
    const int Tc = (N + BC - 1) / BC;
    const int Tc_i = causal ? min(Tc, (q0 + q_rows - 1) / BC + 1) : Tc;

    /* The softmax's lanes: keys h * 32 .. h * 32 + 31 of row r of S_ij, columns h * D/2 .. of row r of O_i. */
    const int r = w0 + lane / 2, h = lane % 2;
    const int query = q0 + r;

    /* Where this lane points ldmatrix, in bytes from the start of a tile: row and chunk of matrix j = lane / 8 of
     * an x4 load, in rows padded by 16 bytes (pad):
     *   K_j (B of S, no .trans):         rows 16 nn + lane % 8 + 8 (j / 2), chunk 2 kk + j % 2
     *   V_j (B of P V, .trans), Q_i (A): rows 16 kk + lane % 8 + 8 (j % 2), chunk 2 dn + j / 2 */
    auto k_at = [&](int nn, int kk) { return 2 * pad<D>(16 * nn + lane % 8 + 8 * (lane / 16), 2 * kk + lane / 8 % 2); };
    auto v_at = [&](int kk, int dn) { return 2 * pad<D>(16 * kk + lane % 8 + 8 * (lane / 8 % 2), 2 * dn + lane / 16); };
    const unsigned Q_a = smem_addr(Q_s) + 2 * w0 * LDT, K_a = smem_addr(K_s), V_a = smem_addr(V_s);
    /* A fragments of Q_i for m tile mt and features 16 kk .. 16 kk + 15: matrices (rows 0-7 | 8-15) x
     * (features 0-7 | 8-15), the same lane pattern as V's. */
    auto load_q = [&](uint32_t a[4], int mt, int kk) { ldmatrix_x4(a, Q_a + v_at(mt, kk)); };
    /* A fragments of P_ij for m tile mt and keys 16 kk .. 16 kk + 15: Q's lane pattern, in P_s's rows of LDP. */
    const unsigned P_a = smem_addr(P_s) + 2 * w0 * LDP;
    auto load_p = [&](uint32_t a[4], int mt, int kk) {
        ldmatrix_x4(a, P_a + 2 * ((16 * mt + lane % 8 + 8 * (lane / 8 % 2)) * LDP + 8 * (2 * kk + lane / 16)));
    };

    /* Q_i: read from HBM once, kept in shared memory for the whole sweep. Rows past N are zeros. */
    for (int x = threadIdx.x; x < BR * CH; x += THREADS) {
        const int row = x / CH, c = x % CH;
        *reinterpret_cast<uint4 *>(&Q_s[row * LDT + 8 * c]) =
            row < q_rows ? IO_LOAD(*reinterpret_cast<const uint4 *>(&Q[(head + q0 + row) * D + 8 * c]))
                         : make_uint4(0, 0, 0, 0);
    }
    for (int x = lane; x < ROWS * D; x += 32) O_s[(w0 + x / D) * LDO + x % D] = 0.f; /* O_i: 0 */

    float m = -INFINITY, l = 0.f; /* row r: running maximum (log2 units); this lane's share of the running sum */

    for (int j = 0; j < Tc_i; j++) {
        const int k0 = j * BC, kv_rows = min(BC, N - k0);
        if (j > 0) __syncthreads(); /* every warp is done with K_j-1, V_j-1 before they are overwritten */
        for (int x = threadIdx.x; x < BC * CH; x += THREADS) {
            const int row = x / CH, c = x % CH;
            const size_t at = (head + k0 + row) * D + 8 * c;
            const bool real = row < kv_rows;
            *reinterpret_cast<uint4 *>(&K_s[row * LDT + 8 * c]) =
                real ? IO_LOAD(*reinterpret_cast<const uint4 *>(&K[at])) : make_uint4(0, 0, 0, 0);
            *reinterpret_cast<uint4 *>(&V_s[row * LDT + 8 * c]) =
                real ? IO_LOAD(*reinterpret_cast<const uint4 *>(&V[at])) : make_uint4(0, 0, 0, 0);
        }
        __syncthreads(); /* K_j and V_j (and, at j = 0, Q_i and O_i's zeros) are complete before any warp reads them */

        /* S_ij = Q_i K_j^T: K_j's rows are B's columns, so ldmatrix without .trans gives B fragments: matrices
         * (keys 0-7 | 8-15 of 16) x (features 0-7 | 8-15). One B fragment serves the warp's MT m tiles. */
        float s[MT][NS][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int n = 0; n < NS; n++) s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++) {
            uint32_t a[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++) load_q(a[mt], mt, kk);
#pragma unroll
            for (int nn = 0; nn < NS / 2; nn++) {
                uint32_t b[4];
                ldmatrix_x4(b, K_a + k_at(nn, kk));
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    mma16816<T>(s[mt][2 * nn], a[mt], b[0], b[1]);
                    mma16816<T>(s[mt][2 * nn + 1], a[mt], b[2], b[3]);
                }
            }
        }
        /* Each lane's accumulators to S_s: rows frag_row, + 8 of each m tile, columns 8 n + 2 frag_col, + 1 */
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int n = 0; n < NS; n++) {
                float *at = &S_s[(w0 + 16 * mt + frag_row) * LDS + 8 * n + 2 * frag_col];
                *reinterpret_cast<float2 *>(at) = make_float2(s[mt][n][0], s[mt][n][1]);
                *reinterpret_cast<float2 *>(at + 8 * LDS) = make_float2(s[mt][n][2], s[mt][n][3]);
            }
        __syncwarp(); /* the warp's rows of S_ij (each lane stored parts of two) are in shared memory */

        /* Online softmax. Masked: keys past N (a ragged last block) and, with the causal mask, keys after
         * the query. They become -inf, so exp2 gives exactly 0 and nothing of them reaches l or O. Lane h of
         * row r: keys k0 + 32 h .. + 31; only the blocks that reach past N or across the diagonal need the test. */
        const bool masked = k0 + BC > N || (causal && k0 + BC - 1 > q0 + w0);
        float p[KEYS_PER_LANE];
        float bmax = -INFINITY;
#pragma unroll
        for (int c = 0; c < KEYS_PER_LANE; c++) {
            float x = S_s[r * LDS + h * KEYS_PER_LANE + c] * scale_log2;
            const int key = k0 + h * KEYS_PER_LANE + c;
            if (masked && (key >= N || (causal && key > query))) x = -INFINITY;
            p[c] = x;
            bmax = fmaxf(bmax, x);
        }
        bmax = fmaxf(bmax, __shfl_xor_sync(0xffffffffu, bmax, 1)); /* the row's other half, in lane ^ 1 */
        const float m_new = fmaxf(m, bmax);
        /* A row whose keys are all masked so far has m_new = -inf; subtracting 0 instead keeps every
         * exponent at -inf (p = 0) rather than -inf - (-inf) = NaN. */
        const float m_ref = m_new == -INFINITY ? 0.f : m_new;
        const float alpha = exp2f(m - m_ref); /* rescales what was summed against the old maximum */
        m = m_new;
        l *= alpha;
#pragma unroll
        for (int c = 0; c < KEYS_PER_LANE; c++) {
            p[c] = exp2f(p[c] - m_ref);
            l += p[c];
        }
        for (int c = 0; c < COLS_PER_LANE; c++) O_s[r * LDO + h * COLS_PER_LANE + c] *= alpha;
        __syncwarp(); /* both lanes of row r have read their scores before P_ij overwrites them (row r of P
                         lies over scores 0-31 of row r: lane 1's keys over lane 0's scores 16-31) */
#pragma unroll
        for (int c = 0; c < KEYS_PER_LANE; c += 2)
            *reinterpret_cast<uint32_t *>(&P_s[r * LDP + h * KEYS_PER_LANE + c]) = pack2<T>(p[c], p[c + 1]);
        __syncwarp(); /* the warp's rows of P_ij and the rescaled O_i are written before its fragments load them */

        /* O_i += P_ij V_j, 16 columns at a time: each lane's accumulators loaded from O_s, BC / 16 steps of k,
         * stored back. A = P_ij by ldmatrix from P_s; V_j's rows are B's rows (k = key), so ldmatrix.trans: matrices
         * (keys 0-7 | 8-15) x (features 0-7 | 8-15). */
        uint32_t pf[MT][BC / 16][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int kk = 0; kk < BC / 16; kk++) load_p(pf[mt][kk], mt, kk);
#pragma unroll
        for (int dn = 0; dn < D / 16; dn++) {
            float of[MT][2][4]; /* n8 tiles 2 dn, 2 dn + 1: rows frag_row, + 8 of each m tile, columns 8 n + 2 fc, +1 */
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int n = 0; n < 2; n++) {
                    const float *at = &O_s[(w0 + 16 * mt + frag_row) * LDO + 16 * dn + 8 * n + 2 * frag_col];
                    of[mt][n][0] = at[0], of[mt][n][1] = at[1];                     /* row frag_row     */
                    of[mt][n][2] = at[8 * LDO], of[mt][n][3] = at[8 * LDO + 1];     /* row frag_row + 8 */
                }
#pragma unroll
            for (int kk = 0; kk < BC / 16; kk++) {
                uint32_t b[4];
                ldmatrix_x4_trans(b, V_a + v_at(kk, dn));
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    mma16816<T>(of[mt][0], pf[mt][kk], b[0], b[1]);
                    mma16816<T>(of[mt][1], pf[mt][kk], b[2], b[3]);
                }
            }
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int n = 0; n < 2; n++) {
                    float *at = &O_s[(w0 + 16 * mt + frag_row) * LDO + 16 * dn + 8 * n + 2 * frag_col];
                    at[0] = of[mt][n][0], at[1] = of[mt][n][1];
                    at[8 * LDO] = of[mt][n][2], at[8 * LDO + 1] = of[mt][n][3];
                }
        }
        __syncwarp(); /* O_i's accumulator stores (4 lanes per row) are visible before the lanes read rows */
    }

    /* Delayed normalisation: one reciprocal per row, after the sweep. Then O_i and L_i go to HBM once. */
    const float l_row = l + __shfl_xor_sync(0xffffffffu, l, 1); /* the two lanes' shares */
    const float inv = l_row > 0.f ? 1.f / l_row : 0.f;
    const float L_row = l_row > 0.f ? (m + log2f(l_row)) * LN2 : -INFINITY;

    /* O_i: the warp's 16 rows, 16 bytes per store; row x / CH's 1/l shuffled from the lane that holds it */
    for (int x = lane; x < ROWS * CH; x += 32) {
        const int row = x / CH, c = x % CH;
        const float s = __shfl_sync(0xffffffffu, inv, 2 * row);
        if (w0 + row < q_rows) {
            const float *o = &O_s[(w0 + row) * LDO + 8 * c];
            const uint4 v = make_uint4(pack2<T>(o[0] * s, o[1] * s), pack2<T>(o[2] * s, o[3] * s),
                                       pack2<T>(o[4] * s, o[5] * s), pack2<T>(o[6] * s, o[7] * s));
            IO_STORE_V4(reinterpret_cast<uint4 *>(&O[(head + q0 + w0 + row) * D + 8 * c]), v);
        }
    }
    if (h == 0 && r < q_rows) IO_STORE(L[head + query], L_row);
    IO_TALLY_FLUSH();
}

template <int D, typename T>
static __global__ void __launch_bounds__(WMMA_THREADS, 1) /* plan for 1 block per SM: else ptxas spills */
    flash_mma_staged_kernel(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V,
                            T *__restrict__ O, float *__restrict__ L, int N, int causal, float scale_log2) {
    flash_mma_staged_forward<D, T>(Q, K, V, O, L, N, causal, scale_log2);
}

template <typename T>
using KernelFn = void (*)(const T *, const T *, const T *, T *, float *, int, int, float);

/* The kernel for (d, Br, Bc), with its dynamic shared memory allowed past the 48 KB default. Validation
 * (chapter.c) rejects unsupported tiles first; reaching here with one is a programming error. */
template <typename T>
static KernelFn<T> prepared_kernel(int d, int Br, int Bc, size_t smem) {
    KernelFn<T> kernel =
        d == 64 ? flash_mma_staged_kernel<64, T> : d == 128 ? flash_mma_staged_kernel<128, T> : nullptr;
    if (!kernel || !wmma_br_supported(Br) || !wmma_bc_supported(Bc)) {
        fprintf(stderr, "flash_mma_staged: no kernel compiled for d=%d Br=%d Bc=%d\n", d, Br, Bc);
        exit(2);
    }
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    return kernel;
}

template <typename T>
static void launch(const AttnArgs *a) {
    const size_t smem = wmma_smem_bytes(a->Br, a->Bc, a->d);
    KernelFn<T> kernel = prepared_kernel<T>(a->d, a->Br, a->Bc, smem);
    const dim3 grid((unsigned)ceil_div(a->N, a->Br), (unsigned)(a->B * a->H));
    kernel<<<grid, WMMA_THREADS, smem>>>(static_cast<const T *>(a->Q), static_cast<const T *>(a->K),
                                         static_cast<const T *>(a->V), static_cast<T *>(a->O), a->L, a->N,
                                         a->causal, LOG2E / sqrtf((float)a->d));
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(flash_mma_staged_launch)(const AttnArgs *a) {
    if (a->dtype == DTYPE_BF16) launch<__nv_bfloat16>(a);
    else launch<__half>(a);
}

extern "C" void IO_VARIANT(flash_mma_staged_resources)(int d, int Br, int Bc, int dtype, KernelResources *r) {
    const size_t smem = wmma_smem_bytes(Br, Bc, d);
    const void *kernel = dtype == DTYPE_BF16 ? (const void *)prepared_kernel<__nv_bfloat16>(d, Br, Bc, smem)
                                             : (const void *)prepared_kernel<__half>(d, Br, Bc, smem);
    kernel_resources(kernel, WMMA_THREADS, smem, r);
}
