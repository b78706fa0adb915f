/* variants.cu: chapter 04's other layouts of K_j, the ones the chapter measures against its kernel's
 * (kernels.cu, the paired layout):
 *
 *   ./ch04/run --layout naive|transposed|padded|swizzled [--causal] [--br 32 --bc 32]
 *       flash_v4_<layout> (flash_v4_kernel<D, BC, LAYOUT>); with --layout transposed also k_transpose (setup)
 *
 * The kernel is kernels.cu's, with where K_j's elements sit in shared memory and which lane reads which taken
 * from layouts.h, the header the host's bank model (banks.c) uses too, as a template parameter LAYOUT:
 *   naive       chapter 03's K_j, [Bc][d] as stored: the 8 lanes of a row read 8 keys in the same 4 banks
 *   transposed  K^T from HBM (k_transpose_kernel writes it once), K^T_j as [d][Bc]: a lane reads VW
 *               consecutive keys of one feature in one vector load, 8 lanes 32 consecutive floats
 *   padded      [Bc][d + 4]: key r starts 4 r banks further, so 8 consecutive keys cover 32 banks
 *   swizzled    [Bc][d], float4 column c of key r stored at column c ^ (r % 8): no extra memory
 * (layouts.h has the paired layout too, for the bank model; its kernel is kernels.cu's.) The kernel keeps the
 * name flash_v4_kernel so that ncu's filter and the reports find it in every layout. The bank arithmetic of
 * each layout is in the README and in banks.c, which predicts ncu's counts.
 */
#include <stdio.h>
#include <stdlib.h>

#include "float4.cuh"
#include "io_tally.cuh"
#include "kernels.h"
#include "layouts.h"
#include "tiles.h"

static constexpr float LOG2E = 1.4426950408889634f;
static constexpr float LN2 = 0.6931471805599453f;

/* A row's 8 lanes differ in their key bits only: the three xor distances of layouts.h stay inside the row. */
template <int LAYOUT>
static __device__ __forceinline__ float row_max(float x) {
    for (int step = 0; step < 3; step++) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, row_xor(LAYOUT, step)));
    return x;
}
template <int LAYOUT>
static __device__ __forceinline__ float row_sum(float x) {
    for (int step = 0; step < 3; step++) x += __shfl_xor_sync(0xffffffffu, x, row_xor(LAYOUT, step));
    return x;
}

/* VW consecutive floats from shared memory in one load (LDS.64 or LDS.128): the transposed layout's keys. */
template <int VW>
static __device__ __forceinline__ void load_keys(const float *p, float *k) {
    if constexpr (VW == 4) {
        const float4 v = *reinterpret_cast<const float4 *>(p);
        k[0] = v.x, k[1] = v.y, k[2] = v.z, k[3] = v.w;
    } else {
        const float2 v = *reinterpret_cast<const float2 *>(p);
        k[0] = v.x, k[1] = v.y;
    }
}

/* The setup of the transposed layout: K^T = K transposed per head, [d][N] with rows attn_kt_stride(N) long
 * (zeros past N), so that K^T_j's rows are 16-byte aligned. Grid (stride / 32, d / 32, B*H), 32 x 8 threads;
 * a 32 x 32 tile goes through shared memory (one extra column: conflict-free both ways). */
static __global__ void k_transpose_kernel(const float *__restrict__ K, float *__restrict__ Kt, int N, int stride,
                                          int D) {
    IO_TALLY;
    __shared__ float tile[32][33];
    const size_t head = blockIdx.z;
    const int key0 = blockIdx.x * 32, x0 = blockIdx.y * 32;
    for (int y = threadIdx.y; y < 32; y += 8) {
        const int key = key0 + y;
        tile[y][threadIdx.x] = key < N ? IO_LOAD(K[(head * N + key) * D + x0 + threadIdx.x]) : 0.f;
    }
    __syncthreads(); /* the whole tile is in shared memory before it is read across */
    for (int y = threadIdx.y; y < 32; y += 8) {
        const int key = key0 + threadIdx.x;
        if (key < stride) IO_STORE(Kt[(head * D + x0 + y) * stride + key], tile[threadIdx.x][y]);
    }
    IO_TALLY_FLUSH();
}

/* Grid (Tr, B*H), 2*Br threads. scale_log2 = log2(e)/sqrt(d): scores are kept in log2 units so that every
 * exponential is one exp2 (e^x = 2^(x log2 e)); m is in those units too. K is K^T ([d][kt_stride] per head)
 * in the transposed layout, K as stored otherwise. */
template <int D, int BC, int LAYOUT>
static __global__ void __launch_bounds__(MAX_BR / ROWS_PER_WARP * 32, 1)
    flash_v4_kernel(const float *__restrict__ Q, const float *__restrict__ K, const float *__restrict__ V,
                    float *__restrict__ O, float *__restrict__ L, int N, int Br, int causal, float scale_log2,
                    int kt_stride) {
    IO_TALLY;
    constexpr int TN = BC / ROW_LANES;            /* S columns per thread (TM rows) */
    constexpr int TD = D / (4 * ROW_LANES);       /* O float4 columns per thread    */
    constexpr int QS = D + Q_PAD;                 /* row strides in shared memory   */
    constexpr int PS = BC + P_PAD;
    const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);

    extern __shared__ float4 smem[];
    float *Q_s = reinterpret_cast<float *>(smem); /* [Br][QS]                              */
    float *K_s = Q_s + Br * QS;                   /* K_j as LAYOUT stores it (layouts.h)    */
    float *V_s = K_s + k_tile_floats(LAYOUT, BC, D); /* [BC][D]                             */
    float *P_s = V_s + BC * D;                    /* [Br][PS]                              */

    const int lane = threadIdx.x % 32;
    const int g = key_lane(LAYOUT, lane);                                  /* keys, O columns (layouts.h) */
    const int r0 = threadIdx.x / 32 * ROWS_PER_WARP + row_lane(LAYOUT, lane); /* rows r0 + 4t           */
    /* A row statistic in HBM (one float per row) moves as one 64-byte request per warp: lane x < 16 holds the
     * warp's row stat_row, which is row group x % 4's row t = x / 4, and shuffles carry it between the two. */
    const int stat_row = threadIdx.x / 32 * ROWS_PER_WARP + lane;

    /* With the causal mask the query blocks near the end of the sequence visit the most K/V blocks; the
     * hardware starts blocks roughly in index order, so those get the low indices and the cheap ones fill
     * the tail. */
    const int i = causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    const size_t head = (size_t)blockIdx.y * N; /* first row of this (batch, head) */
    const int q0 = i * Br;                      /* first query row of Q_i          */
    const int q_rows = min(Br, N - q0);

    /* Q_i: read from HBM once, kept in shared memory for the whole sweep. Rows past N are zeros. */
    const float4 *Q4 = reinterpret_cast<const float4 *>(Q + (head + q0) * D);
    for (int x = threadIdx.x; x < Br * D / 4; x += blockDim.x) {
        const int r = x / (D / 4), c = x % (D / 4);
        f4(&Q_s[r * QS + 4 * c]) = r < q_rows ? IO_LOAD(Q4[x]) : zero;
    }

    float m[TM], l[TM]; /* running row maximum (log2 units); this lane's share of the running row sum */
    float4 acc[TM][TD]; /* O_i, unnormalised, in registers for the whole sweep                      */
#pragma unroll
    for (int t = 0; t < TM; t++) {
        m[t] = -INFINITY;
        l[t] = 0.f;
#pragma unroll
        for (int u = 0; u < TD; u++) acc[t][u] = zero;
    }

    /* K/V blocks to visit: all Tc of them, or with the causal mask only those holding a key at or before
     * the last real query row of Q_i. The blocks above the diagonal are never loaded nor computed. */
    const int Tc = (N + BC - 1) / BC;
    const int Tc_i = causal ? min(Tc, (q0 + q_rows - 1) / BC + 1) : Tc;

    for (int j = 0; j < Tc_i; j++) {
        const int k0 = j * BC, kv_rows = min(BC, N - k0);
        const float4 *K4 = reinterpret_cast<const float4 *>(K + (head + k0) * D);
        const float4 *V4 = reinterpret_cast<const float4 *>(V + (head + k0) * D);
        __syncthreads(); /* every warp is done with K_j-1, V_j-1 before they are overwritten */
        for (int x = threadIdx.x; x < BC * D / 4; x += blockDim.x) {
            const int r = x / (D / 4), c = x % (D / 4);
            const bool real = r < kv_rows; /* rows past N: zeros, never NaN into P V */
            f4(&V_s[4 * x]) = real ? IO_LOAD(V4[x]) : zero;
            if constexpr (LAYOUT == LAYOUT_TRANSPOSED) {
                /* K^T_j: row x of d features, BC keys; whole float4 up to the last real key (zeros past N) */
                const int e = x / (BC / 4), c4 = x % (BC / 4);
                const float4 *Kt4 = reinterpret_cast<const float4 *>(K + (blockIdx.y * (size_t)D + e) * kt_stride + k0);
                f4(&K_s[e * BC + 4 * c4]) = 4 * c4 < kv_rows ? IO_LOAD(Kt4[c4]) : zero;
            } else {
                f4(&K_s[k_offset(LAYOUT, BC, D, r, 4 * c)]) = real ? IO_LOAD(K4[x]) : zero;
            }
        }
        __syncthreads(); /* K_j and V_j (and, at j = 0, Q_i) are complete before any warp reads them */

        /* S_ij = Q_i K_j^T. Slot c of a lane is key key_of_slot(c) (layouts.h): g + 8c, read as one float4
         * along d per 4 features from wherever LAYOUT puts it; in the transposed layout VW consecutive keys
         * of one feature per vector load. */
        float s[TM][TN];
#pragma unroll
        for (int t = 0; t < TM; t++)
#pragma unroll
            for (int c = 0; c < TN; c++) s[t][c] = 0.f;
#pragma unroll(D * BC >= 64 * 64 ? 2 : 4)
        for (int k = 0; k < D; k += 4) {
            float4 q[TM];
#pragma unroll
            for (int t = 0; t < TM; t++) q[t] = f4(&Q_s[(r0 + 4 * t) * QS + k]);
            if constexpr (LAYOUT == LAYOUT_TRANSPOSED) {
                constexpr int VW = BC / 8 < 4 ? BC / 8 : 4;
#pragma unroll
                for (int cq = 0; cq < TN / VW; cq++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        float kv[VW];
                        load_keys<VW>(&K_s[(k + e) * BC + VW * g + 8 * VW * cq], kv);
#pragma unroll
                        for (int j = 0; j < VW; j++)
#pragma unroll
                            for (int t = 0; t < TM; t++)
                                s[t][cq * VW + j] = fmaf(component(q[t], e), kv[j], s[t][cq * VW + j]);
                    }
            } else {
#pragma unroll
                for (int c = 0; c < TN; c++) {
                    const float4 kc = f4(&K_s[k_offset(LAYOUT, BC, D, g + ROW_LANES * c, k)]);
#pragma unroll
                    for (int t = 0; t < TM; t++) s[t][c] = dot4_add(q[t], kc, s[t][c]);
                }
            }
        }

        /* Online softmax. Masked: keys past N (a ragged last block) and, with the causal mask, keys after
         * the query. They become -inf, so exp2 gives exactly 0 and nothing of them reaches l or O. */
#pragma unroll
        for (int t = 0; t < TM; t++) {
            const int query = q0 + r0 + 4 * t;
            float block_max = -INFINITY;
#pragma unroll
            for (int c = 0; c < TN; c++) {
                const int key = k0 + key_of_slot(LAYOUT, BC, lane, c);
                s[t][c] = key >= N || (causal && key > query) ? -INFINITY : s[t][c] * scale_log2;
                block_max = fmaxf(block_max, s[t][c]);
            }
            const float m_new = fmaxf(m[t], row_max<LAYOUT>(block_max));
            /* A row whose keys are all masked so far has m_new = -inf; subtracting 0 instead keeps every
             * exponent at -inf (p = 0) rather than -inf - (-inf) = NaN. */
            const float m_ref = m_new == -INFINITY ? 0.f : m_new;
            const float alpha = exp2f(m[t] - m_ref); /* rescales what was summed against the old maximum */
            m[t] = m_new;
            l[t] *= alpha;
#pragma unroll
            for (int u = 0; u < TD; u++) {
                acc[t][u].x *= alpha;
                acc[t][u].y *= alpha;
                acc[t][u].z *= alpha;
                acc[t][u].w *= alpha;
            }
#pragma unroll
            for (int c = 0; c < TN; c++) {
                const float p = exp2f(s[t][c] - m_ref);
                l[t] += p; /* this lane's columns only; row_sum adds the 8 shares */
                P_s[(r0 + 4 * t) * PS + key_of_slot(LAYOUT, BC, lane, c)] = p;
            }
        }
        __syncwarp(); /* a row of P_ij is written by its 8 lanes, all in this warp, and read whole by each */

        /* O_i += P_ij V_j: lane g reads V_j's float4 columns g, g+8, ...: the 8 lanes of a row group read
         * 8 consecutive float4 of one row, 32 different banks, no conflict. */
#pragma unroll 2
        for (int c = 0; c < BC; c += 4) {
            float4 p[TM];
#pragma unroll
            for (int t = 0; t < TM; t++) p[t] = f4(&P_s[(r0 + 4 * t) * PS + c]);
#pragma unroll
            for (int e = 0; e < 4; e++)
#pragma unroll
                for (int u = 0; u < TD; u++) {
                    const float4 v = f4(&V_s[(c + e) * D + 4 * (g + ROW_LANES * u)]);
#pragma unroll
                    for (int t = 0; t < TM; t++) axpy4(component(p[t], e), v, acc[t][u]);
                }
        }
    }

    /* Delayed normalisation: one reciprocal per row, after the sweep. Then O_i and L_i go to HBM once. */
    float4 *O4 = reinterpret_cast<float4 *>(O + (head + q0) * D);
    float L_stat = 0.f; /* lane x < 16: the warp's row stat_row */
#pragma unroll
    for (int t = 0; t < TM; t++) {
        const int r = r0 + 4 * t;
        const float l_row = row_sum<LAYOUT>(l[t]);
        const float inv_l = l_row > 0.f ? 1.f / l_row : 0.f; /* no visible key: O = 0, L = -inf */
        if (r < q_rows) {
#pragma unroll
            for (int u = 0; u < TD; u++) {
                const float4 a = acc[t][u];
                IO_STORE(O4[r * (D / 4) + g + ROW_LANES * u],
                         make_float4(a.x * inv_l, a.y * inv_l, a.z * inv_l, a.w * inv_l));
            }
        }
        const float L_row = l_row > 0.f ? (m[t] + log2f(l_row)) * LN2 : -INFINITY;
        const float L_t = __shfl_sync(0xffffffffu, L_row, first_lane_of_row(LAYOUT, lane % 4));
        if (lane / 4 == t) L_stat = L_t;
    }
    if (lane < ROWS_PER_WARP && stat_row < q_rows) IO_STORE(L[head + q0 + stat_row], L_stat);
    IO_TALLY_FLUSH();
}

typedef void (*KernelFn)(const float *, const float *, const float *, float *, float *, int, int, int, float, int);

/* The compiled (d, Bc, layout) triples: 3 x 3 x 4 instantiations per build. Br is a run-time value. */
template <int LAYOUT>
static KernelFn kernel_for_layout(int d, int Bc) {
#define CASE(D_, BC_) \
    if (d == D_ && Bc == BC_) return flash_v4_kernel<D_, BC_, LAYOUT>;
    CASE(32, 16) CASE(32, 32) CASE(32, 64)
    CASE(64, 16) CASE(64, 32) CASE(64, 64)
    CASE(128, 16) CASE(128, 32) CASE(128, 64)
#undef CASE
    return nullptr;
}

static KernelFn kernel_for(int d, int Bc, int layout) {
    switch (layout) {
    case LAYOUT_NAIVE: return kernel_for_layout<LAYOUT_NAIVE>(d, Bc);
    case LAYOUT_TRANSPOSED: return kernel_for_layout<LAYOUT_TRANSPOSED>(d, Bc);
    case LAYOUT_PADDED: return kernel_for_layout<LAYOUT_PADDED>(d, Bc);
    case LAYOUT_SWIZZLED: return kernel_for_layout<LAYOUT_SWIZZLED>(d, Bc);
    default: return nullptr;
    }
}

/* The kernel for (d, Br, Bc, layout), with its dynamic shared memory allowed past the 48 KB default.
 * Validation (chapter.c) rejects unsupported tiles first; reaching here with one is a programming error. */
static KernelFn prepared_kernel(int d, int Br, int Bc, int layout, size_t smem) {
    KernelFn kernel = kernel_for(d, Bc, layout);
    if (!kernel || !br_supported(Br)) {
        fprintf(stderr, "flash_v4: no kernel compiled for d=%d Br=%d Bc=%d layout %d\n", d, Br, Bc, layout);
        exit(2);
    }
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    return kernel;
}

extern "C" void IO_VARIANT(k_transpose_launch)(const AttnArgs *a) {
    const int stride = attn_kt_stride(a->N);
    const dim3 grid((unsigned)ceil_div(stride, 32), (unsigned)(a->d / 32), (unsigned)(a->B * a->H));
    k_transpose_kernel<<<grid, dim3(32, 8)>>>(static_cast<const float *>(a->K), static_cast<float *>(a->extra[FV4_BUF_KT]),
                                              a->N, stride, a->d);
    KERNEL_CHECK();
}

static void launch_layout(const AttnArgs *a, int layout) {
    const size_t smem = smem_bytes_layout(a->Br, a->Bc, a->d, layout);
    KernelFn kernel = prepared_kernel(a->d, a->Br, a->Bc, layout, smem);
    const dim3 grid((unsigned)ceil_div(a->N, a->Br), (unsigned)(a->B * a->H));
    const float *K = static_cast<const float *>(layout == LAYOUT_TRANSPOSED ? a->extra[FV4_BUF_KT] : a->K);
    kernel<<<grid, threads_per_block(a->Br), smem>>>(static_cast<const float *>(a->Q), K, static_cast<const float *>(a->V),
                                                     static_cast<float *>(a->O), a->L, a->N, a->Br, a->causal,
                                                     LOG2E / sqrtf((float)a->d), attn_kt_stride(a->N));
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(flash_v4_naive_launch)(const AttnArgs *a) { launch_layout(a, LAYOUT_NAIVE); }
extern "C" void IO_VARIANT(flash_v4_transposed_launch)(const AttnArgs *a) { launch_layout(a, LAYOUT_TRANSPOSED); }
extern "C" void IO_VARIANT(flash_v4_padded_launch)(const AttnArgs *a) { launch_layout(a, LAYOUT_PADDED); }
extern "C" void IO_VARIANT(flash_v4_swizzled_launch)(const AttnArgs *a) { launch_layout(a, LAYOUT_SWIZZLED); }

extern "C" void IO_VARIANT(flash_v4_variant_resources)(int d, int Br, int Bc, int layout, KernelResources *r) {
    const size_t smem = smem_bytes_layout(Br, Bc, d, layout);
    kernel_resources((const void *)prepared_kernel(d, Br, Bc, layout, smem), threads_per_block(Br), smem, r);
}
