/* 3_repack.cu: chapter 05, step 3: FlashAttention-2 on tensor cores, fp16 or bf16 storage, fp32 accumulation
 * and softmax statistics.
 *
 *   ./ch05/run --kernel repack                         flash_repack (flash_repack_kernel)
 *
 * What changes from step 2 (`diff 05_tensor_cores/2_mma_staged.cu 05_tensor_cores/3_repack.cu`): S_ij and P_ij
 * stay in registers. The softmax runs on S_ij's accumulators (each lane holds parts of two rows, ptx_sm80.cuh; a row's
 * maximum and sum are two shuffles among its 4 lanes, a quad), and P_ij's accumulators, packed two to a register,
 * are the A operand of P_ij V_j: no value moves between lanes. O_i stays in O_s, rescaled by alpha as it is loaded.
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

/* The 4 lanes of a quad (one frag_row) hold a row's columns: xor 1 and 2 stay in the quad. */
static __device__ __forceinline__ float quad_max(float x) {
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
    return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
static __device__ __forceinline__ float quad_sum(float x) {
    x += __shfl_xor_sync(0xffffffffu, x, 1);
    return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

/* Grid (Tr, B*H), 2*Br threads. scale_log2 = log2(e)/sqrt(d): scores are kept in log2 units so that every
 * exponential is one exp2 (e^x = 2^(x log2 e)); m is in those units too. The kernel's work: flash_repack_kernel
 * below calls it. */
template <int D, typename T>
static __device__ __forceinline__ void flash_repack_forward(const T *__restrict__ Q, const T *__restrict__ K,
                                                               const T *__restrict__ V, T *__restrict__ O,
                                                               float *__restrict__ L, int N, int causal,
                                                               float scale_log2) {
    IO_TALLY;
    constexpr int BR = WMMA_BR, BC = WMMA_BC, THREADS = WMMA_THREADS;
    constexpr int CH = D / 8;                  /* 16-byte chunks per row of Q, K, V, O                  */
    constexpr int ROWS = WMMA_ROWS_PER_WARP, MT = ROWS / 16; /* query rows per warp, m16 tiles per warp */
    constexpr int NS = BC / 8;                 /* n8 tiles of S                                         */
    constexpr int LDT = D + WMMA_PAD16;        /* row length of Q_s, K_s, V_s (elements of T)           */
    constexpr int LDO = D + WMMA_PAD32;        /* row length of O_s (floats)                            */
    static_assert(MT == 1, "a warp owns one m16 tile of query rows (two from step 11 on)");
    static_assert(LDT % 8 == 0, "ldmatrix's rows of Q_s, K_s and V_s 16-byte aligned");

    extern __shared__ uint4 smem[];
    T *Q_s = reinterpret_cast<T *>(smem);                  /* [BR][LDT] */
    T *K_s = Q_s + BR * LDT;                               /* [BC][LDT] */
    T *V_s = K_s + BC * LDT;                               /* [BC][LDT] */
    float *O_s = reinterpret_cast<float *>(V_s + BC * LDT); /* [BR][LDO] */

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

    /* Q_i: read from HBM once, kept in shared memory for the whole sweep. Rows past N are zeros. */
    for (int x = threadIdx.x; x < BR * CH; x += THREADS) {
        const int row = x / CH, c = x % CH;
        *reinterpret_cast<uint4 *>(&Q_s[row * LDT + 8 * c]) =
            row < q_rows ? IO_LOAD(*reinterpret_cast<const uint4 *>(&Q[(head + q0 + row) * D + 8 * c]))
                         : make_uint4(0, 0, 0, 0);
    }
    for (int x = lane; x < ROWS * D; x += 32) O_s[(w0 + x / D) * LDO + x % D] = 0.f; /* O_i: 0 */

    float m[MT][2], l[MT][2]; /* rows frag_row, + 8 of each m tile: running max (log2 units), running sum */
#pragma unroll
    for (int mt = 0; mt < MT; mt++) m[mt][0] = m[mt][1] = -INFINITY, l[mt][0] = l[mt][1] = 0.f;

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

        /* Online softmax of rows frag_row and frag_row + 8 of each m tile, as step 1's: the scores scaled into log2
         * units, keys past N and, with the causal mask, keys after the query -inf, then p = exp2(score - m). */
        float alpha[MT][2]; /* rescales O_i's rows as they are loaded below */
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int h = 0; h < 2; h++) { /* h = 0: row frag_row, h = 1: row frag_row + 8 */
                float bmax = -INFINITY;
                const int query = q0 + w0 + 16 * mt + frag_row + 8 * h;
#pragma unroll
                for (int n = 0; n < NS; n++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const int key = k0 + 8 * n + 2 * frag_col + e;
                        s[mt][n][2 * h + e] *= scale_log2;
                        if (key >= N || (causal && key > query)) s[mt][n][2 * h + e] = -INFINITY;
                    }
#pragma unroll
                for (int n = 0; n < NS; n++) bmax = fmaxf(bmax, fmaxf(s[mt][n][2 * h], s[mt][n][2 * h + 1]));
                const float m_new = fmaxf(m[mt][h], quad_max(bmax));
                const float m_ref = m_new == -INFINITY ? 0.f : m_new; /* a row with every key masked: p = 0 */
                alpha[mt][h] = exp2f(m[mt][h] - m_ref);
                m[mt][h] = m_new;
                l[mt][h] *= alpha[mt][h];
#pragma unroll
                for (int n = 0; n < NS; n++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const float p = exp2f(s[mt][n][2 * h + e] - m_ref);
                        l[mt][h] += p; /* this lane's columns; quad_sum adds the 4 shares at the end */
                        s[mt][n][2 * h + e] = p;
                    }
            }

        /* O_i += P_ij V_j, 16 columns at a time: each lane's accumulators loaded from O_s and rescaled by alpha,
         * BC / 16 steps of k, stored back. A = P_ij: its accumulator layout is the A one (ptx_sm80.cuh): for keys 16 kk
         * .. 16 kk + 15, a0/a1 = rows frag_row/frag_row + 8 of S tile 2 kk, a2/a3 = the same of tile 2 kk + 1, packed
         * to 16 bits. V_j's rows are B's rows (k = key), so ldmatrix.trans, as in step 2. */
        uint32_t pf[MT][BC / 16][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int kk = 0; kk < BC / 16; kk++) {
                uint32_t *a = pf[mt][kk];
                /* ASSIGNMENT BEGIN mma-repack-p [gpu]: what `make assignment CH=05` replaces with the stub below */
                /* ASSIGNMENT STUB mma-repack-p
                // TODO: the A fragment of P_ij for keys 16 kk .. 16 kk + 15 of m tile mt, straight from this lane's
                // accumulators s[mt][2 kk] and s[mt][2 kk + 1] (rows frag_row and frag_row + 8, columns 2 frag_col
                // and 2 frag_col + 1 of two 8-column tiles: ptx_sm80.cuh), two values per register with pack2<T>; no
                // value moves between lanes. Needs a GPU to grade. README: "Step 3", S and P stay in registers.
                a[0] = a[1] = a[2] = a[3] = 0u;
                */
                a[0] = pack2<T>(s[mt][2 * kk][0], s[mt][2 * kk][1]);         /* row frag_row,     keys 2fc, +1     */
                a[1] = pack2<T>(s[mt][2 * kk][2], s[mt][2 * kk][3]);         /* row frag_row + 8, keys 2fc, +1     */
                a[2] = pack2<T>(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]); /* row frag_row,     keys 8 + 2fc, +1 */
                a[3] = pack2<T>(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]); /* row frag_row + 8, keys 8 + 2fc, +1 */
                /* ASSIGNMENT END mma-repack-p */
            }
#pragma unroll
        for (int dn = 0; dn < D / 16; dn++) {
            float of[MT][2][4]; /* n8 tiles 2 dn, 2 dn + 1: rows frag_row, + 8 of each m tile, columns 8 n + 2 fc, +1 */
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int n = 0; n < 2; n++) {
                    const float *at = &O_s[(w0 + 16 * mt + frag_row) * LDO + 16 * dn + 8 * n + 2 * frag_col];
                    of[mt][n][0] = at[0] * alpha[mt][0], of[mt][n][1] = at[1] * alpha[mt][0]; /* row frag_row */
                    of[mt][n][2] = at[8 * LDO] * alpha[mt][1], of[mt][n][3] = at[8 * LDO + 1] * alpha[mt][1]; /* + 8 */
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
    }

    /* Delayed normalisation: one reciprocal per row, after the sweep, of its quad's 4 shares of l; 1/l and L gathered
     * into lanes 0 .. ROWS-1 (lane x: row x of the warp). Then O_i and L_i go to HBM once. */
    float inv[MT][2], L_row[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const float l_row = quad_sum(l[mt][h]);
            inv[mt][h] = l_row > 0.f ? 1.f / l_row : 0.f;
            L_row[mt][h] = l_row > 0.f ? (m[mt][h] + log2f(l_row)) * LN2 : -INFINITY;
        }
    float inv_mine = 0.f, L_mine = 0.f; /* lane x < ROWS: row x = m tile x / 16, half x / 8 % 2, frag_row x % 8 */
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const float u = __shfl_sync(0xffffffffu, inv[mt][h], (lane % 8) * 4);
            const float v = __shfl_sync(0xffffffffu, L_row[mt][h], (lane % 8) * 4);
            if (lane / 16 == mt && lane / 8 % 2 == h) inv_mine = u, L_mine = v;
        }
    __syncwarp(); /* this warp's rows of O_i (4 lanes stored parts of each) are in O_s before the lanes read rows */

    /* O_i: the warp's 16 rows, 16 bytes per store; row x / CH's 1/l shuffled from the lane that holds it */
    for (int x = lane; x < ROWS * CH; x += 32) {
        const int row = x / CH, c = x % CH;
        const float s = __shfl_sync(0xffffffffu, inv_mine, row);
        if (w0 + row < q_rows) {
            const float *o = &O_s[(w0 + row) * LDO + 8 * c];
            const uint4 v = make_uint4(pack2<T>(o[0] * s, o[1] * s), pack2<T>(o[2] * s, o[3] * s),
                                       pack2<T>(o[4] * s, o[5] * s), pack2<T>(o[6] * s, o[7] * s));
            IO_STORE_V4(reinterpret_cast<uint4 *>(&O[(head + q0 + w0 + row) * D + 8 * c]), v);
        }
    }
    if (lane < ROWS && w0 + lane < q_rows) IO_STORE(L[head + q0 + w0 + lane], L_mine);
    IO_TALLY_FLUSH();
}

template <int D, typename T>
static __global__ void __launch_bounds__(WMMA_THREADS, 1) /* plan for 1 block per SM: else ptxas spills */
    flash_repack_kernel(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V,
                            T *__restrict__ O, float *__restrict__ L, int N, int causal, float scale_log2) {
    flash_repack_forward<D, T>(Q, K, V, O, L, N, causal, scale_log2);
}

template <typename T>
using KernelFn = void (*)(const T *, const T *, const T *, T *, float *, int, int, float);

/* The kernel for (d, Br, Bc), with its dynamic shared memory allowed past the 48 KB default. Validation
 * (chapter.c) rejects unsupported tiles first; reaching here with one is a programming error. */
template <typename T>
static KernelFn<T> prepared_kernel(int d, int Br, int Bc, size_t smem) {
    KernelFn<T> kernel =
        d == 64 ? flash_repack_kernel<64, T> : d == 128 ? flash_repack_kernel<128, T> : nullptr;
    if (!kernel || !wmma_br_supported(Br) || !wmma_bc_supported(Bc)) {
        fprintf(stderr, "flash_repack: no kernel compiled for d=%d Br=%d Bc=%d\n", d, Br, Bc);
        exit(2);
    }
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    return kernel;
}

template <typename T>
static void launch(const AttnArgs *a) {
    const size_t smem = repack_smem_bytes(a->Br, a->Bc, a->d);
    KernelFn<T> kernel = prepared_kernel<T>(a->d, a->Br, a->Bc, smem);
    const dim3 grid((unsigned)ceil_div(a->N, a->Br), (unsigned)(a->B * a->H));
    kernel<<<grid, WMMA_THREADS, smem>>>(static_cast<const T *>(a->Q), static_cast<const T *>(a->K),
                                         static_cast<const T *>(a->V), static_cast<T *>(a->O), a->L, a->N,
                                         a->causal, LOG2E / sqrtf((float)a->d));
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(flash_repack_launch)(const AttnArgs *a) {
    if (a->dtype == DTYPE_BF16) launch<__nv_bfloat16>(a);
    else launch<__half>(a);
}

extern "C" void IO_VARIANT(flash_repack_resources)(int d, int Br, int Bc, int dtype, KernelResources *r) {
    const size_t smem = repack_smem_bytes(Br, Bc, d);
    const void *kernel = dtype == DTYPE_BF16 ? (const void *)prepared_kernel<__nv_bfloat16>(d, Br, Bc, smem)
                                             : (const void *)prepared_kernel<__half>(d, Br, Bc, smem);
    kernel_resources(kernel, WMMA_THREADS, smem, r);
}
