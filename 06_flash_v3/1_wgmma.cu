/* 1_wgmma.cu: chapter 06, step 1: FlashAttention on Hopper's warpgroup MMA (sm_90a).
 *
 *   ./ch06/run --kernel wgmma    flash_wgmma_kernel: both products as wgmma.mma_async by one warpgroup per 64 query
 *                                rows, K_j and V_j copied by cp.async
 *
 * What changes from chapter 05's last step, mma_async, at its Br = 64 tile (`./ch05/run --br 64`, kernels.cu there;
 * the algorithm is the same: Br = Bc = 64, 4 warps of 16 query rows, the loop order, O, m and l in registers, one
 * division at the end, L, the causal mask, K_j and V_j copied by cp.async into two buffers, the next block's copies
 * running during this block's math):
 *   1. S_ij = Q_i K_j^T is d/16 wgmma.mma_async.m64n64k16 instructions, issued by the 4 warps together (one
 *      warpgroup), each multiplying all 64 query rows by a 16-feature slice of all 64 keys, with both operands
 *      read by the tensor cores from shared memory through descriptors (ptx.cuh, tiles.h): no ldmatrix, no
 *      operand registers. Each of chapter 05's warps issued d mma.sync per K/V block, each 16 x 8 x 16.
 *   2. O_i += P_ij V_j is Bc/16 wgmma m64n{d}k16 with A = P from registers (S's accumulator layout packed to 16
 *      bits, as in chapter 05) and B = V_j from shared memory, read transposed by the descriptor (MN-major).
 *   3. Q_i, K_j and V_j sit in shared memory in the layout the descriptors read: panels of 64 features, 128-byte
 *      rows whose 16-byte chunks are swizzled by the row (tiles.h). Chapter 05's swizzle served ldmatrix; this one
 *      is the tensor cores' own, and the XOR is done by the hardware on every address it reads.
 *   4. After every cp.async wave a proxy fence: what the threads copied (generic proxy) is read by wgmma (async
 *      proxy).
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "arith.h"
#include "io_tally.cuh"
#include "kernels.h"
#include "ptx.cuh"
#include "storage.cuh"
#include "tiles.h"

/* COPY16(dst_s, src, real): 16 bytes from global to shared memory by cp.async (ptx.cuh), zeros where real is
 * false (rows past the end of the sequence: nothing is read). In the instrumented build a plain copy through a
 * register, counted by IO_LOAD (the tally is the kernel's local variable: hence a macro). */
#ifdef COUNT_IO
#define COPY16(dst_s, src, real)                                                                          \
    (*reinterpret_cast<uint4 *>(dst_s) =                                                                  \
         (real) ? IO_LOAD(*reinterpret_cast<const uint4 *>(src)) : make_uint4(0, 0, 0, 0))
#else
#define COPY16(dst_s, src, real) cp_async16((dst_s), (src), (real))
#endif

/* The 4 lanes of a quad (lane / 4 = the row) hold a row's columns: xor 1 and 2 stay in the quad. */
static __device__ __forceinline__ float quad_max(float x) {
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
    return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
static __device__ __forceinline__ float quad_sum(float x) {
    x += __shfl_xor_sync(0xffffffffu, x, 1);
    return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

/* ROWS x D elements from global (row 0 at src, row stride D) into a shared tile in wgmma's layout
 * (sw128_offset); rows >= real are zeros and read nothing. The instrumented build's tally (io_read_) is passed
 * in. */
#ifdef COUNT_IO
#define IO_TALLY_ARG , unsigned long long &io_read_
#define IO_TALLY_PASS , io_read_
#else
#define IO_TALLY_ARG
#define IO_TALLY_PASS
#endif
template <int D, int ROWS, typename T>
static __device__ __forceinline__ void load_tile(T *dst_s, const T *src, int real IO_TALLY_ARG) {
    /* Thread x copies chunk x % CH of rows x / CH, + STEP, + 2 STEP, ...: consecutive threads read consecutive 16
     * bytes of a row. STEP is a multiple of 8, so the swizzle's row term (r mod 8) is the same in every pass and
     * each pass lands STEP rows of 128 bytes further. */
    constexpr int CH = D / 8, STEP = FA3_THREADS / CH; /* 16-byte chunks per row; rows per pass */
    static_assert(FA3_THREADS % CH == 0 && STEP % 8 == 0 && ROWS % STEP == 0, "whole passes of whole rows");
    const int r0 = threadIdx.x / CH, c = threadIdx.x % CH;
    char *to = reinterpret_cast<char *>(dst_s) + sw128_offset(ROWS, r0, 8 * c);
    const T *from = src + (size_t)r0 * D + 8 * c;
    if (real >= ROWS) { /* every block but the last: no test per row */
#pragma unroll
        for (int pass = 0; pass < ROWS / STEP; pass++) COPY16(to + pass * STEP * 128, from + pass * STEP * D, true);
    } else {
#pragma unroll
        for (int pass = 0; pass < ROWS / STEP; pass++) {
            const bool real_row = r0 + pass * STEP < real; /* rows past the end read nothing: zeros */
            COPY16(to + pass * STEP * 128, real_row ? from + pass * STEP * D : src, real_row);
        }
    }
}

/* Grid (Tr, B*H), one warpgroup (FA3_THREADS) per block. scale_log2 = log2(e) / sqrt(d). */
template <int D, typename T>
static __global__ void __launch_bounds__(FA3_THREADS)
    flash_wgmma_kernel(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V, T *__restrict__ O,
                       float *__restrict__ L, int N, int causal, float scale_log2) {
    IO_TALLY;
    constexpr int BR = FA3_BR, BC = FA3_BC, CH = D / 8;
    constexpr int NS = BC / 8, NO = D / 8; /* n8 column groups of S and of O in the accumulators */
    /* 1024-byte aligned: the swizzle pattern's period (tiles.h); every tile below is a multiple of 1024 bytes */
    extern __shared__ __align__(1024) uint4 smem[];
    T *Q_s = reinterpret_cast<T *>(smem); /* [BR][D] in wgmma's layout; at the end O_i */
    T *K_s = Q_s + BR * D;                /* [2][BC][D]                                */
    T *V_s = K_s + 2 * BC * D;            /* [2][BC][D]                                */

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    /* accumulator coordinates (ptx.cuh): rows frag_row and frag_row + 8, columns 2 frag_col and 2 frag_col + 1 */
    const int frag_row = lane / 4, frag_col = lane % 4;
    const int i = causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x; /* heavy causal blocks first (ch03) */
    const size_t head = (size_t)blockIdx.y * N;
    const int q0 = i * BR, q_rows = min(BR, N - q0);
    const int w0 = warp * 16; /* this warp's first row in Q_i */
    const int Tc = (N + BC - 1) / BC;
    const int Tc_i = causal ? min(Tc, (q0 + q_rows - 1) / BC + 1) : Tc;

    auto load_kv = [&](int j, int buf) { /* K_j, V_j into buffer buf */
        const int k0 = j * BC, kv_rows = min(BC, N - k0);
        load_tile<D, BC>(K_s + buf * BC * D, K + (head + k0) * D, kv_rows IO_TALLY_PASS);
        load_tile<D, BC>(V_s + buf * BC * D, V + (head + k0) * D, kv_rows IO_TALLY_PASS);
    };
    const unsigned Q_a = smem_addr(Q_s), K_a = smem_addr(K_s), V_a = smem_addr(V_s);

    load_tile<D, BR>(Q_s, Q + (head + q0) * D, q_rows IO_TALLY_PASS);
    load_kv(0, 0);
    cp_async_commit();
    cp_async_wait_all();
    fence_proxy_async();
    __syncthreads(); /* Q_i, K_0, V_0 are in shared memory, visible to wgmma, before the warpgroup reads them */

    float o[NO][4]; /* O_i, unnormalised: rows frag_row, frag_row + 8 of this warp, columns 8n + 2 frag_col, +1 */
#pragma unroll
    for (int n = 0; n < NO; n++) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
    /* S_ij, then P_ij: rows frag_row, frag_row + 8, keys 8n + 2 frag_col, +1. Zeroed once so that its first use as
     * a wgmma operand reads defined values; each block's first wgmma (scale-d = 0) overwrites it. */
    float s[NS][4];
#pragma unroll
    for (int n = 0; n < NS; n++) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
    /* rows frag_row, frag_row + 8: running max (log2 units), running sum */
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};

    for (int j = 0; j < Tc_i; j++) {
        if (j > 0) {
            cp_async_wait_all();
            fence_proxy_async();
            __syncthreads(); /* K_j, V_j have landed and are visible to wgmma, and every warp is done with block
                                j-1's buffer (its wgmma waited on), which the next block's copies overwrite */
        }
        if (j + 1 < Tc_i) load_kv(j + 1, (j + 1) % 2); /* runs during this block's math */
        cp_async_commit();
        const unsigned Kb = K_a + (j % 2) * 2 * BC * D, Vb = V_a + (j % 2) * 2 * BC * D;
        const int k0 = j * BC;

        /* S = Q_i K_j^T: d/16 steps of 16 features, the first overwriting s (scale-d = 0), the others adding. */
        wgmma_fence_operands(s);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++)
            wgmma_m64nNk16_ss<T, BC>(s, wgmma_desc_k_major(Q_a, BR, kk), wgmma_desc_k_major(Kb, BC, kk), kk > 0);
        wgmma_commit();
        wgmma_wait<0>();
        wgmma_fence_operands(s);

        /* Online softmax of rows frag_row and frag_row + 8 (chapter 05's, one m16 tile per warp). Keys past N, and
         * with the causal mask keys after the query, are -inf; only the blocks that reach past N or across the
         * diagonal of this warp's rows need the test. */
        const bool masked = k0 + BC > N || (causal && k0 + BC - 1 > q0 + w0);
#pragma unroll
        for (int h = 0; h < 2; h++) { /* h = 0: row frag_row, h = 1: row frag_row + 8 */
            float bmax = -INFINITY;
            if (masked) {
                const int query = q0 + w0 + frag_row + 8 * h;
#pragma unroll
                for (int n = 0; n < NS; n++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const int key = k0 + 8 * n + 2 * frag_col + e;
                        if (key >= N || (causal && key > query)) s[n][2 * h + e] = -INFINITY;
                    }
            }
#pragma unroll
            for (int n = 0; n < NS; n++) bmax = fmaxf(bmax, fmaxf(s[n][2 * h], s[n][2 * h + 1]));
            const float m_new = fmaxf(m[h], quad_max(bmax) * scale_log2);
            const float m_ref = m_new == -INFINITY ? 0.f : m_new; /* a row with every key masked: p = 0 */
            const float alpha = fast_exp2(m[h] - m_ref);
            m[h] = m_new;
            l[h] *= alpha;
#pragma unroll
            for (int n = 0; n < NO; n++) o[n][2 * h] *= alpha, o[n][2 * h + 1] *= alpha;
#pragma unroll
            for (int n = 0; n < NS; n++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const float p = fast_exp2(fmaf(s[n][2 * h + e], scale_log2, -m_ref));
                    l[h] += p; /* this lane's columns; quad_sum adds the 4 shares at the end */
                    s[n][2 * h + e] = p;
                }
        }

        /* O_i += P V_j. P's accumulator layout is wgmma's A-register layout: for keys 16 kk .. 16 kk + 15,
         * a0/a1 = rows frag_row/frag_row + 8 of S's column group 2 kk, a2/a3 = the same of group 2 kk + 1, packed
         * to 16 bits. */
        uint32_t a[BC / 16][4];
#pragma unroll
        for (int kk = 0; kk < BC / 16; kk++) {
            a[kk][0] = pack2<T>(s[2 * kk][0], s[2 * kk][1]);         /* row frag_row,     keys 2 frag_col, +1     */
            a[kk][1] = pack2<T>(s[2 * kk][2], s[2 * kk][3]);         /* row frag_row + 8, keys 2 frag_col, +1     */
            a[kk][2] = pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]); /* row frag_row,     keys 8 + 2 frag_col, +1 */
            a[kk][3] = pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3]); /* row frag_row + 8, keys 8 + 2 frag_col, +1 */
        }
        wgmma_fence_operands(o);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BC / 16; kk++) wgmma_m64nNk16_rs<T, D>(o, a[kk], wgmma_desc_mn_major(Vb, BC, kk));
        wgmma_commit();
        wgmma_wait<0>();
        wgmma_fence_operands(o);
    }

    /* Delayed normalisation; O_i through Q_s (no longer needed) so that every global store is 16 contiguous
     * bytes; L gathered into lanes 0-15 (lane x: row x of the warp) for one store. */
    float inv[2], L_row[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const float l_row = quad_sum(l[h]);
        inv[h] = l_row > 0.f ? 1.f / l_row : 0.f;
        L_row[h] = l_row > 0.f ? (m[h] + log2f(l_row)) * LN2 : -INFINITY;
    }
    __syncthreads(); /* the warpgroup's last wgmma, which read all 64 rows of Q_s, is complete in every warp before
                        any warp overwrites its rows */
    char *Q_b = reinterpret_cast<char *>(Q_s);
#pragma unroll
    for (int n = 0; n < NO; n++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            *reinterpret_cast<uint32_t *>(Q_b + sw128_offset(BR, w0 + frag_row + 8 * h, 8 * n + 2 * frag_col)) =
                pack2<T>(o[n][2 * h] * inv[h], o[n][2 * h + 1] * inv[h]);
    const float L_upper = __shfl_sync(0xffffffffu, L_row[0], (lane % 8) * 4); /* row lane % 8 ...          */
    const float L_lower = __shfl_sync(0xffffffffu, L_row[1], (lane % 8) * 4); /* ... and row lane % 8 + 8 */
    const float L_mine = lane < 8 ? L_upper : L_lower;                        /* lane x < 16: row x        */
    __syncwarp(); /* this warp's rows of O are in Q_s before its lanes read them back across */
    for (int x = lane; x < 16 * CH; x += 32) {
        const int r = w0 + x / CH, c = x % CH;
        if (r < q_rows)
            IO_STORE(*reinterpret_cast<uint4 *>(&O[(head + q0 + r) * D + 8 * c]),
                     *reinterpret_cast<const uint4 *>(Q_b + sw128_offset(BR, r, 8 * c)));
    }
    if (lane < 16 && w0 + lane < q_rows) IO_STORE(L[head + q0 + w0 + lane], L_mine);
    IO_TALLY_FLUSH();
}

/* The kernel for (d, dtype), its dynamic shared memory allowed past the 48 KB default, handed to f (a launch or a
 * resource query) with its shared memory. Validation (chapter.c) rejects other shapes first; reaching the end
 * with one is a programming error. */
template <typename F>
static void with_kernel(int d, int dtype, F f) {
    const size_t smem = fa3_smem_bytes(FA3_BR, FA3_BC, d);
#define CASE(D_, T_)                                                                                       \
    if (d == D_ && dtype == storage_dtype<T_>) {                                                           \
        CUDA_CHECK(cudaFuncSetAttribute(flash_wgmma_kernel<D_, T_>, cudaFuncAttributeMaxDynamicSharedMemorySize, \
                                        (int)smem));                                                       \
        f(flash_wgmma_kernel<D_, T_>, smem);                                                               \
        return;                                                                                            \
    }
    CASE(64, __half)
    CASE(128, __half)
    CASE(64, __nv_bfloat16)
    CASE(128, __nv_bfloat16)
#undef CASE
    fprintf(stderr, "chapter 06: no kernel compiled for d=%d dtype %d\n", d, dtype);
    exit(2);
}

extern "C" void IO_VARIANT(flash_wgmma_launch)(const AttnArgs *a) {
    const dim3 grid((unsigned)ceil_div(a->N, FA3_BR), (unsigned)(a->B * a->H));
    const float scale_log2 = LOG2E / sqrtf((float)a->d);
    with_kernel(a->d, a->dtype, [&](auto kernel, size_t smem) {
        using T = typename storage_of<decltype(kernel)>::type;
        kernel<<<grid, FA3_THREADS, smem>>>(static_cast<const T *>(a->Q), static_cast<const T *>(a->K),
                                            static_cast<const T *>(a->V), static_cast<T *>(a->O), a->L, a->N,
                                            a->causal, scale_log2);
    });
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(flash_wgmma_resources)(int d, int dtype, KernelResources *r) {
    with_kernel(d, dtype, [&](auto kernel, size_t smem) {
        kernel_resources((const void *)kernel, FA3_THREADS, smem, r);
    });
}
