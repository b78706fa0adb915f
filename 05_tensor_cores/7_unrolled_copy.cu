/* 7_unrolled_copy.cu: chapter 05, step 7: FlashAttention-2 on tensor cores, fp16 or bf16 storage, fp32
 * accumulation and softmax statistics.
 *
 *   ./ch05/run --kernel unrolled_copy                  flash_unrolled_copy (flash_unrolled_copy_kernel)
 *
 * What changes from step 6 (`diff 05_tensor_cores/6_mma_plain.cu 05_tensor_cores/7_unrolled_copy.cu`): the copy
 * loops. Step 6's loops run `for (x = threadIdx.x; x < rows * CH; x += THREADS)`, a trip count the compiler cannot
 * know, with a division, a swizzle and a bounds test per 16 bytes. load_tile's trip count is known at compile
 * time: each thread copies one chunk of rows r0, r0 + STEP, ..., one constant offset apart, unrolled into straight
 * copies, and the test per row only in the last K/V block.
 *
 * The steps, each a file of this folder and a --kernel: 1_wmma.cu (wmma), 2_mma_staged.cu (mma_staged),
 * 3_repack.cu (repack), 4_o_registers.cu (o_registers), 5_swizzle.cu (swizzle), 6_mma_plain.cu (mma_plain),
 * 7_unrolled_copy.cu (unrolled_copy), 8_edge_masks.cu (edge_masks), 9_mma.cu (mma), 10_cp_async.cu (cp_async),
 * kernels.cu (mma_async). The fragment layouts and the PTX are in ptx_sm80.cuh. On sm_75 the kernel runs on
 * mma.sync.m16n8k8 (two per k16) with plain loads (no cp.async there), fp16 only; bf16 needs sm_80 and is
 * rejected before launch (chapter.c). */
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

/* Element offset of 16-byte chunk c of row r in a [rows][D] tile: chunks swizzled by the row (tiles.h). */
template <int D>
static __device__ __forceinline__ int swz(int r, int c) {
    return r * D + (tc_swizzled_chunk(r, c) << 3);
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

/* ROWS x D elements from global (row 0 at src, row stride D) into a swizzled shared tile by THREADS threads, 16
 * bytes at a time by copy16 (the kernel's, through a register: IO_LOAD counts into the kernel's tally); rows >=
 * real are zeros and read nothing. */
template <int D, int ROWS, int THREADS, typename T, typename Copy16>
static __device__ __forceinline__ void load_tile(Copy16 copy16, T *dst_s, const T *src, int real) {
    /* Thread x copies chunk x % CH of rows x / CH, + STEP, + 2 STEP, ...: a trip count known at compile time, so
     * the loop unrolls into straight copies; STEP is a multiple of 8, so the swizzle's row term (r mod 8) is the
     * same in every pass and each pass is one constant offset further. */
    constexpr int CH = D / 8, STEP = THREADS / CH; /* 16-byte chunks per row; rows per pass */
    static_assert(THREADS % CH == 0 && STEP % 8 == 0 && ROWS % STEP == 0, "whole passes of whole rows");
    const int r0 = threadIdx.x / CH, c = threadIdx.x % CH;
    T *to = &dst_s[swz<D>(r0, c)];
    const T *from = src + (size_t)r0 * D + 8 * c;
    auto copy = [&](int pass, const T *at, bool real_row) { copy16(to + pass * STEP * D, at, real_row); };
    if (real >= ROWS) { /* every block but the last: no test per row */
#pragma unroll
        for (int pass = 0; pass < ROWS / STEP; pass++) copy(pass, from + pass * STEP * D, true);
    } else {
#pragma unroll
        for (int pass = 0; pass < ROWS / STEP; pass++) {
            const bool real_row = r0 + pass * STEP < real; /* rows past the end read nothing: zeros */
            copy(pass, real_row ? from + pass * STEP * D : src, real_row);
        }
    }
}

/* The kernel's work (flash_unrolled_copy_kernel below calls it, as in every step: the form the measured machine code of
 * steps 9 and 11 came from). Grid (Tr, B*H), TC_THREADS threads: 4 warps of BR / 4 query rows, MT m16 tiles each
 * (one until step 11). scale_log2 = log2(e) / sqrt(d). */
template <int D, typename T>
static __device__ __forceinline__ void flash_unrolled_copy_forward(const T *__restrict__ Q, const T *__restrict__ K,
                                                               const T *__restrict__ V, T *__restrict__ O,
                                                               float *__restrict__ L, int N, int causal,
                                                               float scale_log2) {
    IO_TALLY;
    constexpr int BR = MMA_BR, BC = TC_BC, THREADS = TC_THREADS, CH = D / 8;
    constexpr int ROWS = BR / TC_WARPS, MT = ROWS / 16; /* query rows per warp, m16 tiles per warp */
    constexpr int NS = BC / 8, NO = D / 8;              /* n8 tiles of S and of O                    */
    static_assert(MT == 1, "a warp owns one m16 tile of query rows (two from step 11 on)");
    extern __shared__ uint4 smem[];
    T *Q_s = reinterpret_cast<T *>(smem); /* [BR][D], swizzled; at the end this warp's rows of O  */
    T *K_s = Q_s + BR * D;                /* [BC][D], swizzled                                    */
    T *V_s = K_s + BC * D;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int frag_row = lane / 4, frag_col = lane % 4; /* the fragment coordinates (ptx_sm80.cuh) */
    const int i = causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x; /* heavy causal blocks first (ch03) */
    const size_t head = (size_t)blockIdx.y * N;
    const int q0 = i * BR, q_rows = min(BR, N - q0);
    const int w0 = warp * ROWS; /* this warp's first row in Q_i */
    const int Tc = (N + BC - 1) / BC;
    const int Tc_i = causal ? min(Tc, (q0 + q_rows - 1) / BC + 1) : Tc;

    /* 16 bytes from global to shared memory through a register (IO_LOAD counts it). */
    auto copy16 = [&](T *to, const T *from, bool real) {
        *reinterpret_cast<uint4 *>(to) =
            real ? IO_LOAD(*reinterpret_cast<const uint4 *>(from)) : make_uint4(0, 0, 0, 0);
    };
    auto load_kv = [&](int j) { /* K_j, V_j */
        const int k0 = j * BC, kv_rows = min(BC, N - k0);
        load_tile<D, BC, THREADS>(copy16, K_s, K + (head + k0) * D, kv_rows);
        load_tile<D, BC, THREADS>(copy16, V_s, V + (head + k0) * D, kv_rows);
    };

    /* Where this lane points ldmatrix, in bytes from the start of a tile: row and chunk of matrix j = lane / 8 of
     * an x4 load, through the swizzle (swz):
     *   K_j (B of S, no .trans):         rows 16 nn + lane % 8 + 8 (j / 2), chunk 2 kk + j % 2
     *   V_j (B of P V, .trans), Q_i (A): rows 16 kk + lane % 8 + 8 (j % 2), chunk 2 dn + j / 2 */
    auto k_at = [&](int nn, int kk) { return 2 * swz<D>(16 * nn + lane % 8 + 8 * (lane / 16), 2 * kk + lane / 8 % 2); };
    auto v_at = [&](int kk, int dn) { return 2 * swz<D>(16 * kk + lane % 8 + 8 * (lane / 8 % 2), 2 * dn + lane / 16); };
    const unsigned Q_a = smem_addr(Q_s) + 2 * w0 * D, K_a = smem_addr(K_s), V_a = smem_addr(V_s);
    /* A fragments of Q_i for m tile mt and features 16 kk .. 16 kk + 15: matrices (rows 0-7 | 8-15) x
     * (features 0-7 | 8-15), the same lane pattern as V's. */
    auto load_q = [&](uint32_t a[4], int mt, int kk) { ldmatrix_x4(a, Q_a + v_at(mt, kk)); };

    load_tile<D, BR, THREADS>(copy16, Q_s, Q + (head + q0) * D, q_rows);
    __syncthreads(); /* Q_i is in shared memory before any warp reads it */
    uint32_t qf[MT][D / 16][4]; /* Q_i's A fragments, in registers for the whole sweep */
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++) load_q(qf[mt][kk], mt, kk);

    float o[MT][NO][4]; /* O_i, unnormalised: rows frag_row, + 8 of each m tile, columns 8n + 2 frag_col, +1 */
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int n = 0; n < NO; n++) o[mt][n][0] = o[mt][n][1] = o[mt][n][2] = o[mt][n][3] = 0.f;
    float m[MT][2], l[MT][2]; /* rows frag_row, + 8 of each m tile: running max (log2 units), running sum */
#pragma unroll
    for (int mt = 0; mt < MT; mt++) m[mt][0] = m[mt][1] = -INFINITY, l[mt][0] = l[mt][1] = 0.f;

    for (int j = 0; j < Tc_i; j++) {
        if (j > 0) __syncthreads(); /* every warp is done with K_{j-1}, V_{j-1} before they are overwritten */
        load_kv(j);
        __syncthreads(); /* K_j, V_j are in shared memory before any warp reads them */
        const unsigned Kb = K_a, Vb = V_a; /* this block's K_j, V_j */
        const int k0 = j * BC;

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
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++) a[mt][e] = qf[mt][kk][e];
#pragma unroll
            for (int nn = 0; nn < NS / 2; nn++) {
                uint32_t b[4];
                ldmatrix_x4(b, Kb + k_at(nn, kk));
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    mma16816<T>(s[mt][2 * nn], a[mt], b[0], b[1]);
                    mma16816<T>(s[mt][2 * nn + 1], a[mt], b[2], b[3]);
                }
            }
        }

        /* Online softmax of rows frag_row and frag_row + 8 of each m tile, on the raw scores: the maximum first
         * (the scale is positive, so it commutes), then p = exp2(s scale_log2 - m): one FFMA and one exp2 per
         * score. Keys past N, and with the causal mask keys after the query, are -inf. */
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
                        if (key >= N || (causal && key > query)) s[mt][n][2 * h + e] = -INFINITY;
                    }
#pragma unroll
                for (int n = 0; n < NS; n++) bmax = fmaxf(bmax, fmaxf(s[mt][n][2 * h], s[mt][n][2 * h + 1]));
                const float m_new = fmaxf(m[mt][h], quad_max(bmax) * scale_log2);
                const float m_ref = m_new == -INFINITY ? 0.f : m_new; /* a row with every key masked: p = 0 */
                const float alpha = fast_exp2(m[mt][h] - m_ref);
                m[mt][h] = m_new;
                l[mt][h] *= alpha;
#pragma unroll
                for (int n = 0; n < NO; n++) o[mt][n][2 * h] *= alpha, o[mt][n][2 * h + 1] *= alpha;
#pragma unroll
                for (int n = 0; n < NS; n++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const float p = fast_exp2(fmaf(s[mt][n][2 * h + e], scale_log2, -m_ref));
                        l[mt][h] += p; /* this lane's columns; quad_sum adds the 4 shares at the end */
                        s[mt][n][2 * h + e] = p;
                    }
            }

        /* O_i += P_ij V_j. P_ij's accumulator layout is the A layout of the next mma (ptx_sm80.cuh): for keys 16 kk ..
         * 16 kk + 15, a0/a1 = rows frag_row/frag_row + 8 of S tile 2 kk, a2/a3 = the same of tile 2 kk + 1, packed
         * to 16 bits. V_j's rows are B's rows (k = key), so ldmatrix.trans: matrices (keys 0-7 | 8-15) x (features
         * 0-7 | 8-15). */
#pragma unroll
        for (int kk = 0; kk < BC / 16; kk++) {
            uint32_t a[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                a[mt][0] = pack2<T>(s[mt][2 * kk][0], s[mt][2 * kk][1]);         /* row frag_row,     keys 2fc, +1 */
                a[mt][1] = pack2<T>(s[mt][2 * kk][2], s[mt][2 * kk][3]);         /* row frag_row + 8, keys 2fc, +1 */
                a[mt][2] = pack2<T>(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]); /* row frag_row, keys 8 + 2fc, +1 */
                a[mt][3] = pack2<T>(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]); /* row frag_row + 8, 8 + 2fc, +1 */
            }
#pragma unroll
            for (int dn = 0; dn < NO / 2; dn++) {
                uint32_t b[4];
                ldmatrix_x4_trans(b, Vb + v_at(kk, dn));
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    mma16816<T>(o[mt][2 * dn], a[mt], b[0], b[1]);
                    mma16816<T>(o[mt][2 * dn + 1], a[mt], b[2], b[3]);
                }
            }
        }
    }

    /* Delayed normalisation; O_i through this warp's rows of Q_s (no longer needed) so that every global store is
     * 16 contiguous bytes; L gathered into lanes 0 .. ROWS-1 (lane x: row x of the warp) for one store. */
    float inv[MT][2], L_row[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const float l_row = quad_sum(l[mt][h]);
            inv[mt][h] = l_row > 0.f ? 1.f / l_row : 0.f;
            L_row[mt][h] = l_row > 0.f ? (m[mt][h] + log2f(l_row)) * LN2 : -INFINITY;
        }
    __syncwarp(); /* every lane of the warp is done with its ldmatrix reads of Q_s before its rows are reused */
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int n = 0; n < NO; n++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int r = w0 + 16 * mt + frag_row + 8 * h;
                *reinterpret_cast<uint32_t *>(&Q_s[swz<D>(r, n) + 2 * frag_col]) =
                    pack2<T>(o[mt][n][2 * h] * inv[mt][h], o[mt][n][2 * h + 1] * inv[mt][h]);
            }
    float L_mine = 0.f; /* lane x < ROWS: row x of the warp = m tile x / 16, half x / 8 % 2, frag_row x % 8 */
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const float v = __shfl_sync(0xffffffffu, L_row[mt][h], (lane % 8) * 4);
            if (lane / 16 == mt && lane / 8 % 2 == h) L_mine = v;
        }
    __syncwarp(); /* this warp's rows of O are in Q_s before its lanes read them back across */
    for (int x = lane; x < ROWS * CH; x += 32) {
        const int r = w0 + x / CH, c = x % CH;
        if (r < q_rows)
            IO_STORE(*reinterpret_cast<uint4 *>(&O[(head + q0 + r) * D + 8 * c]),
                     *reinterpret_cast<const uint4 *>(&Q_s[swz<D>(r, c)]));
    }
    if (lane < ROWS && w0 + lane < q_rows) IO_STORE(L[head + q0 + w0 + lane], L_mine);
    IO_TALLY_FLUSH();
}

template <int D, typename T>
static __global__ void __launch_bounds__(TC_THREADS)
    flash_unrolled_copy_kernel(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V,
                          T *__restrict__ O, float *__restrict__ L, int N, int causal, float scale_log2) {
    flash_unrolled_copy_forward<D, T>(Q, K, V, O, L, N, causal, scale_log2);
}

template <typename T>
using KernelFn = void (*)(const T *, const T *, const T *, T *, float *, int, int, float);

/* The compiled d: 2 instantiations per storage type, Br = 64 only. Validation (chapter.c) rejects other shapes
 * first; reaching the end with one is a programming error. */
template <typename T>
static KernelFn<T> kernel_for(int d, int Br) {
    if (d == 64 && Br == MMA_BR) return flash_unrolled_copy_kernel<64, T>;
    if (d == 128 && Br == MMA_BR) return flash_unrolled_copy_kernel<128, T>;
    fprintf(stderr, "flash_unrolled_copy: no kernel compiled for d=%d Br=%d\n", d, Br);
    exit(2);
}

/* The kernel for (d, Br), its dynamic shared memory allowed past the 48 KB default. */
template <typename T>
static KernelFn<T> prepared_kernel(int d, int Br, size_t smem) {
    KernelFn<T> kernel = kernel_for<T>(d, Br);
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    return kernel;
}

template <typename T>
static void launch(const AttnArgs *a) {
    const size_t smem = mma_smem_bytes(a->Br, a->Bc, a->d);
    KernelFn<T> kernel = prepared_kernel<T>(a->d, a->Br, smem);
    const dim3 grid((unsigned)ceil_div(a->N, a->Br), (unsigned)(a->B * a->H));
    kernel<<<grid, TC_THREADS, smem>>>(static_cast<const T *>(a->Q), static_cast<const T *>(a->K),
                                       static_cast<const T *>(a->V), static_cast<T *>(a->O), a->L, a->N, a->causal,
                                       LOG2E / sqrtf((float)a->d));
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(flash_unrolled_copy_launch)(const AttnArgs *a) {
    if (a->dtype == DTYPE_BF16) launch<__nv_bfloat16>(a);
    else launch<__half>(a);
}

extern "C" void IO_VARIANT(flash_unrolled_copy_resources)(int d, int Br, int dtype, KernelResources *r) {
    const size_t smem = mma_smem_bytes(Br, TC_BC, d);
    const void *kernel = dtype == DTYPE_BF16 ? (const void *)prepared_kernel<__nv_bfloat16>(d, Br, smem)
                                             : (const void *)prepared_kernel<__half>(d, Br, smem);
    kernel_resources(kernel, TC_THREADS, smem, r);
}
