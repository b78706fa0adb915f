/* 1_wmma.cu: chapter 05, step 1: FlashAttention-2 with both matrix products on tensor cores, through nvcuda::wmma.
 *
 *   ./ch05/run --kernel wmma [--dtype fp16|bf16] [--causal]        flash_wmma (flash_wmma_kernel)
 *
 * What changes from chapter 04's kernel (its loops, statistics, L and causal mask stay): Q, K, V and O in fp16 or
 * bf16, both products as wmma::mma_sync on 16 x 16 x 16 fragments, fp32 accumulators, a warp per 16 rows. WMMA
 * hides which lane holds which element, so the softmax reads S_ij by rows from shared memory and O_i lives there
 * in fp32 (the round trip step 2 removes). bf16 WMMA needs sm_80: rejected before it (chapter.c), a trap here. */
#include <mma.h>
#include <stdio.h>
#include <stdlib.h>

#include "io_tally.cuh"
#include "kernels.h"
#include "storage16.cuh"
#include "wmma_tiles.h"

using namespace nvcuda;

/* Grid (Tr, B*H), 2*Br threads. scale_log2 = log2(e)/sqrt(d): scores are kept in log2 units so that every
 * exponential is one exp2 (e^x = 2^(x log2 e)); m is in those units too. The kernel's work: flash_wmma_kernel
 * below calls it (or, for bf16 before sm_80, a trap). */
template <int D, typename T>
static __device__ __forceinline__ void flash_wmma_forward(const T *__restrict__ Q, const T *__restrict__ K,
                                                          const T *__restrict__ V, T *__restrict__ O,
                                                          float *__restrict__ L, int N, int causal,
                                                          float scale_log2) {
    IO_TALLY;
    constexpr int BR = WMMA_BR, BC = WMMA_BC, THREADS = WMMA_THREADS;
    constexpr int CH = D / 8;                  /* 16-byte chunks per row of Q, K, V, O                  */
    constexpr int LDT = D + WMMA_PAD16;        /* row length of Q_s, K_s, V_s (elements of T)           */
    constexpr int LDS = BC + WMMA_PAD32;       /* row length of S_s (floats)                            */
    constexpr int LDP = 2 * LDS;               /* row length of P_s (elements of T): P_s aliases S_s    */
    constexpr int LDO = D + WMMA_PAD32;        /* row length of O_s (floats)                            */
    constexpr int KEYS_PER_LANE = BC / 2;      /* softmax: two lanes per row, each half of the keys     */
    constexpr int COLS_PER_LANE = D / 2;       /* rescaling: each lane half of its row of O_i           */
    static_assert(LDT % 8 == 0 && LDP % 8 == 0 && LDS % 4 == 0 && LDO % 4 == 0, "wmma: ldm");
    static_assert((16 * LDT * 2) % 32 == 0 && (16 * LDS * 4) % 32 == 0 && (16 * LDO * 4) % 32 == 0 &&
                      (BR * LDT * 2) % 32 == 0 && (BC * LDT * 2) % 32 == 0 && (BR * LDS * 4) % 32 == 0,
                  "wmma: every tile, and 16 rows of it, keep fragment pointers 32-byte aligned");

    extern __shared__ __align__(128) uint4 smem[]; /* wmma's pointers: 32-byte aligned, as every tile below */
    T *Q_s = reinterpret_cast<T *>(smem);                  /* [BR][LDT] */
    T *K_s = Q_s + BR * LDT;                               /* [BC][LDT] */
    T *V_s = K_s + BC * LDT;                               /* [BC][LDT] */
    float *S_s = reinterpret_cast<float *>(V_s + BC * LDT); /* [BR][LDS] */
    T *P_s = reinterpret_cast<T *>(S_s);                   /* [BR][LDP]: row r over the first half of S's row r */
    float *O_s = S_s + BR * LDS;                           /* [BR][LDO] */

    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int w0 = warp * WMMA_ROWS_PER_WARP; /* this warp's first row in Q_i */

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

    /* Q_i: read from HBM once, kept in shared memory for the whole sweep. Rows past N are zeros. */
    for (int x = threadIdx.x; x < BR * CH; x += THREADS) {
        const int row = x / CH, c = x % CH;
        *reinterpret_cast<uint4 *>(&Q_s[row * LDT + 8 * c]) =
            row < q_rows ? IO_LOAD(*reinterpret_cast<const uint4 *>(&Q[(head + q0 + row) * D + 8 * c]))
                         : make_uint4(0, 0, 0, 0);
    }
    for (int x = lane; x < WMMA_ROWS_PER_WARP * D; x += 32) O_s[(w0 + x / D) * LDO + x % D] = 0.f; /* O_i: 0 */

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
        __syncthreads(); /* K_j and V_j (and, at j = 0, Q_i) are complete before any warp reads them */

        /* S_ij = Q_i K_j^T, the warp's 16 rows x BC keys, D / 16 steps of k. A = Q_i (row-major); B = K_j^T: element
         * (k, n) is K_j[n][k] at K_s[n * LDT + k], K_j row-major read as a col_major matrix_b. */
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> s[BC / 16];
#pragma unroll
        for (int n = 0; n < BC / 16; n++) wmma::fill_fragment(s[n], 0.f);
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> qf;
            wmma::load_matrix_sync(qf, &Q_s[w0 * LDT + 16 * kk], LDT);
#pragma unroll
            for (int n = 0; n < BC / 16; n++) {
                wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> kf;
                wmma::load_matrix_sync(kf, &K_s[16 * n * LDT + 16 * kk], LDT);
                wmma::mma_sync(s[n], qf, kf, s[n]);
            }
        }
#pragma unroll
        for (int n = 0; n < BC / 16; n++)
            wmma::store_matrix_sync(&S_s[w0 * LDS + 16 * n], s[n], LDS, wmma::mem_row_major);
        __syncwarp(); /* the warp's rows of S_ij (each lane stored parts of many) are in shared memory */

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

        /* O_i += P_ij V_j, the warp's 16 rows x D: accumulator fragments loaded from O_s, BC / 16 steps of k,
         * stored back. A = P_ij (row-major, ldm LDP); B = V_j (row-major, ldm LDT). */
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> pf[BC / 16];
#pragma unroll
        for (int kk = 0; kk < BC / 16; kk++) wmma::load_matrix_sync(pf[kk], &P_s[w0 * LDP + 16 * kk], LDP);
#pragma unroll
        for (int dn = 0; dn < D / 16; dn++) {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> of;
            wmma::load_matrix_sync(of, &O_s[w0 * LDO + 16 * dn], LDO, wmma::mem_row_major);
#pragma unroll
            for (int kk = 0; kk < BC / 16; kk++) {
                wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> vf;
                wmma::load_matrix_sync(vf, &V_s[16 * kk * LDT + 16 * dn], LDT);
                wmma::mma_sync(of, pf[kk], vf, of);
            }
            wmma::store_matrix_sync(&O_s[w0 * LDO + 16 * dn], of, LDO, wmma::mem_row_major);
        }
        __syncwarp(); /* O_i's fragment stores (many lanes per row) are visible before the lanes read rows */
    }

    /* Delayed normalisation: one reciprocal per row, after the sweep. Then O_i and L_i go to HBM once. */
    const float l_row = l + __shfl_xor_sync(0xffffffffu, l, 1); /* the two lanes' shares */
    const float inv = l_row > 0.f ? 1.f / l_row : 0.f;
    const float L_row = l_row > 0.f ? (m + log2f(l_row)) * LN2 : -INFINITY;

    /* O_i: the warp's 16 rows, 16 bytes per store; row x / CH's 1/l from lane 2 (x / CH), shuffled in every lane */
    for (int x = lane; x < WMMA_ROWS_PER_WARP * CH; x += 32) {
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
static __global__ void __launch_bounds__(WMMA_THREADS)
    flash_wmma_kernel(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V, T *__restrict__ O,
                      float *__restrict__ L, int N, int causal, float scale_log2) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    if constexpr (std::is_same_v<T, __nv_bfloat16>) __trap(); /* no bf16 WMMA before sm_80: rejected on the host */
    else
#endif
        flash_wmma_forward<D, T>(Q, K, V, O, L, N, causal, scale_log2);
}

template <typename T>
using KernelFn = void (*)(const T *, const T *, const T *, T *, float *, int, int, float);

/* The kernel for (d, Br, Bc), with its dynamic shared memory allowed past the 48 KB default. Validation
 * (chapter.c) rejects unsupported tiles first; reaching here with one is a programming error. */
template <typename T>
static KernelFn<T> prepared_kernel(int d, int Br, int Bc, size_t smem) {
    KernelFn<T> kernel = d == 64 ? flash_wmma_kernel<64, T> : d == 128 ? flash_wmma_kernel<128, T> : nullptr;
    if (!kernel || !wmma_br_supported(Br) || !wmma_bc_supported(Bc)) {
        fprintf(stderr, "flash_wmma: no kernel compiled for d=%d Br=%d Bc=%d\n", d, Br, Bc);
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

extern "C" void IO_VARIANT(flash_wmma_launch)(const AttnArgs *a) {
    if (a->dtype == DTYPE_BF16) launch<__nv_bfloat16>(a);
    else launch<__half>(a);
}

extern "C" void IO_VARIANT(flash_wmma_resources)(int d, int Br, int Bc, int dtype, KernelResources *r) {
    const size_t smem = wmma_smem_bytes(Br, Bc, d);
    const void *kernel = dtype == DTYPE_BF16 ? (const void *)prepared_kernel<__nv_bfloat16>(d, Br, Bc, smem)
                                             : (const void *)prepared_kernel<__half>(d, Br, Bc, smem);
    kernel_resources(kernel, WMMA_THREADS, smem, r);
}
