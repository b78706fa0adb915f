/* kernels.cu: chapter 02, FlashAttention as the paper's Algorithm 1 writes it, in fp32 (FFMA, no tensor
 * cores), in the loop order of the article's v1.
 *
 *   ./ch02/run [--br 32 --bc 32]    two kernels: flash_v1_init (line 2), then flash_v1 (lines 5-15)
 *
 * What changes from chapter 00 (three kernels, S and P written to and read back from HBM):
 *   1. One kernel computes attention. S_ij = Q_i K_j^T and P~_ij exist only on chip, one Br x Bc tile at a
 *      time; the N x N matrices are never stored anywhere.
 *   2. The softmax is online (chapter 01): per query row a running maximum m and sum l, and O is rescaled
 *      whenever m grows.
 *   3. The price of this loop order: between two K/V blocks, O, l and m live in HBM. Every step (j, i)
 *      reads Q_i, O_i, l_i, m_i and writes O_i, l_i, m_i back, so Q and O make Tc round trips, and O_i is
 *      divided by l on every step (the division in the hot loop).
 *
 * Algorithm 1 (Dao et al., 2022), grid (B, H), one block per head, 2 Br threads (tiles.h):
 *     for j in 0 .. Tc-1:                                          line 5
 *       K_j, V_j -> shared memory                                  line 6
 *       for i in 0 .. Tr-1:                                        line 7
 *         Q_i -> shared memory; O_i, l_i, m_i -> registers         line 8
 *         S_ij = scale * Q_i K_j^T                                 line 9
 *         m~ = rowmax(S_ij), P~ = exp(S_ij - m~), l~ = rowsum(P~)  line 10
 *         m_new = max(m_i, m~), l_new = e^(m_i-m_new) l_i + e^(m~-m_new) l~    line 11
 *         O_i <- (l_i e^(m_i-m_new) O_i + e^(m~-m_new) P~ V_j) / l_new -> HBM line 12
 *         l_i <- l_new, m_i <- m_new -> HBM                        line 13
 * The kernel runs the two loops as one loop over the steps (j, i) in this order. Lines 10-12 are computed in
 * the form chapter 03 keeps: O_i is loaded multiplied back by l_i, rescaled by e^(m_i - m_new) and added
 * P~ V_j, and divided by l_new before it is stored; the same arithmetic, written so that the per-tile code of
 * this kernel is chapter 03's line for line.
 *
 * The device helpers below are copied into chapter 03's kernels.cu on purpose: each chapter's kernel reads on
 * its own.
 */
#include <stdio.h>
#include <stdlib.h>

#include "io_tally.cuh"
#include "kernels.h"
#include "tiles.h"

static constexpr float LOG2E = 1.4426950408889634f;

static __device__ __forceinline__ float4 &f4(float *p) { return *reinterpret_cast<float4 *>(p); }

static __device__ __forceinline__ float component(const float4 &v, int e) {
    return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}

/* acc + a.b, four FMAs */
static __device__ __forceinline__ float dot4_add(const float4 &a, const float4 &b, float acc) {
    acc = fmaf(a.x, b.x, acc);
    acc = fmaf(a.y, b.y, acc);
    acc = fmaf(a.z, b.z, acc);
    return fmaf(a.w, b.w, acc);
}

/* acc + p * v, four FMAs */
static __device__ __forceinline__ void axpy4(float p, const float4 &v, float4 &acc) {
    acc.x = fmaf(p, v.x, acc.x);
    acc.y = fmaf(p, v.y, acc.y);
    acc.z = fmaf(p, v.z, acc.z);
    acc.w = fmaf(p, v.w, acc.w);
}

/* The 8 lanes of a row group are consecutive lanes of one warp: xor 4, 2, 1 stays inside the group. */
static __device__ __forceinline__ float row_max(float x) {
    for (int lanes = ROW_LANES / 2; lanes > 0; lanes /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, lanes));
    return x;
}
static __device__ __forceinline__ float row_sum(float x) {
    for (int lanes = ROW_LANES / 2; lanes > 0; lanes /= 2) x += __shfl_xor_sync(0xffffffffu, x, lanes);
    return x;
}

/* Algorithm 1, line 2: O = 0, l = 0, m = -inf in HBM, so that step (0, i) can read them like any other. */
static __global__ void flash_v1_init_kernel(float4 *__restrict__ O4, float *__restrict__ l,
                                            float *__restrict__ m, size_t n4, size_t rows) {
    IO_TALLY;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t x = (size_t)blockIdx.x * blockDim.x + threadIdx.x; x < n4; x += stride)
        IO_STORE(O4[x], make_float4(0.f, 0.f, 0.f, 0.f));
    for (size_t x = (size_t)blockIdx.x * blockDim.x + threadIdx.x; x < rows; x += stride) {
        IO_STORE(l[x], 0.f);
        IO_STORE(m[x], -INFINITY);
    }
    IO_TALLY_FLUSH();
}

/* Algorithm 1, lines 5-15. Grid (B, H), 2*Br threads. scale_log2 = log2(e)/sqrt(d): scores are kept in log2
 * units so that every exponential is one exp2 (e^x = 2^(x log2 e)); m is in those units too. */
template <int D, int BC>
static __global__ void __launch_bounds__(MAX_BR / ROWS_PER_WARP * 32, 1)
    flash_v1_kernel(const float *__restrict__ Q, const float *__restrict__ K, const float *__restrict__ V,
                    float *__restrict__ O, float *__restrict__ l_hbm, float *__restrict__ m_hbm, int N, int Br,
                    float scale_log2) {
    IO_TALLY;
    constexpr int TN = BC / ROW_LANES;            /* S columns per thread (TM rows) */
    constexpr int TD = D / (4 * ROW_LANES);       /* O float4 columns per thread    */
    constexpr int QS = D + Q_PAD;                 /* row strides in shared memory   */
    constexpr int PS = BC + P_PAD;
    const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);

    extern __shared__ float4 smem[];
    float *Q_s = reinterpret_cast<float *>(smem); /* [Br][QS]                              */
    float *K_s = Q_s + Br * QS;                   /* [BC][D], as stored: not transposed    */
    float *V_s = K_s + BC * D;                    /* [BC][D]                               */
    float *P_s = V_s + BC * D;                    /* [Br][PS]                              */

    const int lane = threadIdx.x % 32;
    const int g = lane % ROW_LANES;                                     /* column group                */
    const int r0 = threadIdx.x / 32 * ROWS_PER_WARP + lane / ROW_LANES; /* rows r0 + 4t                */
    /* A row statistic in HBM (one float per row) moves as one 64-byte request per warp: lane x < 16 holds the
     * warp's row stat_row, which is row group x % 4's row t = x / 4, and shuffles carry it between the two. */
    const int stat_row = threadIdx.x / 32 * ROWS_PER_WARP + lane;

    const size_t head = ((size_t)blockIdx.x * gridDim.y + blockIdx.y) * N; /* grid (B, H): one head */
    const int Tr = (N + Br - 1) / Br, Tc = (N + BC - 1) / BC;

    /* Lines 5 and 7 as one loop over the steps (j, i), j outside. Between steps nothing stays in registers:
     * a step's O_i, l_i and m_i go to HBM at its end and come back at step (j + 1, i), loaded by the same
     * threads that stored them (each thread's rows and columns do not depend on the step), so no barrier is
     * needed between the store and the load. */
    for (int step = 0; step < Tc * Tr; step++) {
        const int j = step / Tr, i = step % Tr;
        const int k0 = j * BC, kv_rows = min(BC, N - k0);
        const int q0 = i * Br, q_rows = min(Br, N - q0);
        const float4 *K4 = reinterpret_cast<const float4 *>(K + (head + k0) * D);
        const float4 *V4 = reinterpret_cast<const float4 *>(V + (head + k0) * D);
        __syncthreads(); /* every warp is done with the last step's Q_i (and K_j-1, V_j-1) before they are
                            overwritten */
        if (i == 0) /* line 6: K_j and V_j, once per j */
            for (int x = threadIdx.x; x < BC * D / 4; x += blockDim.x) {
                const bool real = x / (D / 4) < kv_rows; /* rows past N: zeros, never NaN into P V */
                f4(&K_s[4 * x]) = real ? IO_LOAD(K4[x]) : zero;
                f4(&V_s[4 * x]) = real ? IO_LOAD(V4[x]) : zero;
            }

        /* line 8: Q_i into shared memory (rows past N are zeros), and O_i, l_i, m_i into registers: lanes 0-15
         * load the warp's rows of l_i and m_i, and each row group takes its rows by shuffle; l_i becomes lane
         * g = 0's share of the row sum (the other 7 start at 0). O_i is stored divided by l_i and is multiplied
         * back, so acc holds it unnormalised, as chapter 03's registers do. Rows past N: m = -inf, l = 0, O = 0. */
        const float4 *Q4 = reinterpret_cast<const float4 *>(Q + (head + q0) * D);
        for (int x = threadIdx.x; x < Br * D / 4; x += blockDim.x) {
            const int r = x / (D / 4), c = x % (D / 4);
            f4(&Q_s[r * QS + 4 * c]) = r < q_rows ? IO_LOAD(Q4[x]) : zero;
        }
        float m_stat = -INFINITY, l_stat = 0.f;
        if (lane < ROWS_PER_WARP && stat_row < q_rows) {
            m_stat = IO_LOAD(m_hbm[head + q0 + stat_row]);
            l_stat = IO_LOAD(l_hbm[head + q0 + stat_row]);
        }
        float4 *O4 = reinterpret_cast<float4 *>(O + (head + q0) * D);
        float m[TM], l[TM]; /* running row maximum (log2 units); this lane's share of the running row sum */
        float4 acc[TM][TD]; /* O_i, unnormalised, in registers for one step                             */
#pragma unroll
        for (int t = 0; t < TM; t++) {
            const int r = r0 + 4 * t;
            m[t] = __shfl_sync(0xffffffffu, m_stat, r % ROWS_PER_WARP);
            const float l_row = __shfl_sync(0xffffffffu, l_stat, r % ROWS_PER_WARP);
            l[t] = g == 0 ? l_row : 0.f;
#pragma unroll
            for (int u = 0; u < TD; u++) {
                const float4 o = r < q_rows ? IO_LOAD(O4[r * (D / 4) + g + ROW_LANES * u]) : zero;
                acc[t][u] = make_float4(l_row * o.x, l_row * o.y, l_row * o.z, l_row * o.w);
            }
        }
        __syncthreads(); /* Q_i (and, at i = 0, K_j and V_j) is complete before any warp reads it */

        /* S_ij = Q_i K_j^T. Lane g takes keys g, g+8, ...: per float4 read, the 8 lanes of a row group
         * read 8 rows of K_s that are D floats apart, and D*4 bytes is a multiple of 128, so all 8 land
         * in the same 4 banks and come out one after another (the other 3 row groups read the same
         * addresses, a broadcast). This is the article's tl.trans(kj) access, kept for chapter 04. */
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
#pragma unroll
            for (int c = 0; c < TN; c++) {
                const float4 kc = f4(&K_s[(g + ROW_LANES * c) * D + k]);
#pragma unroll
                for (int t = 0; t < TM; t++) s[t][c] = dot4_add(q[t], kc, s[t][c]);
            }
        }

        /* Online softmax (lines 10 and 11). Masked: keys past N (a ragged last block). They become -inf, so
         * exp2 gives exactly 0 and nothing of them reaches l or O. */
#pragma unroll
        for (int t = 0; t < TM; t++) {
            float block_max = -INFINITY;
#pragma unroll
            for (int c = 0; c < TN; c++) {
                const int key = k0 + g + ROW_LANES * c;
                s[t][c] = key >= N ? -INFINITY : s[t][c] * scale_log2;
                block_max = fmaxf(block_max, s[t][c]);
            }
            /* ASSIGNMENT BEGIN v1-kernel-rescale [gpu]: what `make assignment CH=02` replaces with the stub below */
            /* ASSIGNMENT STUB v1-kernel-rescale
            // TODO: lines 10 and 11 for row t: m_new from m[t] and the row's maximum (row_max), the m_ref to
            // subtract (0 while every key is masked), alpha = exp2(m[t] - m_ref), then m[t], l[t] and acc[t][*]
            // rescaled by alpha. Needs a GPU to grade. README: "Reading the code against Algorithm 1".
            const float m_ref = row_max(block_max);
            */
            const float m_new = fmaxf(m[t], row_max(block_max));
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
            /* ASSIGNMENT END v1-kernel-rescale */
#pragma unroll
            for (int c = 0; c < TN; c++) {
                const float p = exp2f(s[t][c] - m_ref);
                l[t] += p; /* this lane's columns only; row_sum adds the 8 shares */
                P_s[(r0 + 4 * t) * PS + g + ROW_LANES * c] = p;
            }
        }
        __syncwarp(); /* a row of P_ij is written by its 8 lanes, all in this warp, and read whole by each */

        /* O_i += P_ij V_j (line 12): lane g reads V_j's float4 columns g, g+8, ...: the 8 lanes of a row
         * group read 8 consecutive float4 of one row, 32 different banks, no conflict. */
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

        /* lines 12 (the division) and 13: O_i divided by l_new on every step, and O_i, l_i, m_i back to HBM. */
        float l_stat_new = 0.f, m_stat_new = 0.f; /* lane x < 16: the warp's row stat_row */
#pragma unroll
        for (int t = 0; t < TM; t++) {
            const int r = r0 + 4 * t;
            const float l_row = row_sum(l[t]);
            const float inv_l = 1.f / l_row; /* the division in the hot loop (MUFU.RCP), once per row and step */
            if (r < q_rows) {
#pragma unroll
                for (int u = 0; u < TD; u++) {
                    const float4 a = acc[t][u];
                    IO_STORE(O4[r * (D / 4) + g + ROW_LANES * u],
                             make_float4(a.x * inv_l, a.y * inv_l, a.z * inv_l, a.w * inv_l));
                }
            }
            const float l_t = __shfl_sync(0xffffffffu, l_row, lane % 4 * ROW_LANES);
            const float m_t = __shfl_sync(0xffffffffu, m[t], lane % 4 * ROW_LANES);
            if (lane / 4 == t) l_stat_new = l_t, m_stat_new = m_t;
        }
        if (lane < ROWS_PER_WARP && stat_row < q_rows) {
            IO_STORE(l_hbm[head + q0 + stat_row], l_stat_new);
            IO_STORE(m_hbm[head + q0 + stat_row], m_stat_new);
        }
    }
    IO_TALLY_FLUSH();
}

typedef void (*KernelFn)(const float *, const float *, const float *, float *, float *, float *, int, int, float);

/* The compiled (d, Bc) pairs: 3 x 3 instantiations per build. Br is a run-time value (warps per block). */
static KernelFn kernel_for(int d, int Bc) {
#define CASE(D_, BC_) \
    if (d == D_ && Bc == BC_) return flash_v1_kernel<D_, BC_>;
    CASE(32, 16) CASE(32, 32) CASE(32, 64)
    CASE(64, 16) CASE(64, 32) CASE(64, 64)
    CASE(128, 16) CASE(128, 32) CASE(128, 64)
#undef CASE
    return nullptr;
}

/* The kernel for (d, Br, Bc), with its dynamic shared memory allowed past the 48 KB default. Validation
 * (chapter.c) rejects unsupported tiles first; reaching here with one is a programming error. */
static KernelFn prepared_kernel(int d, int Br, int Bc, size_t smem) {
    KernelFn kernel = kernel_for(d, Bc);
    if (!kernel || !br_supported(Br)) {
        fprintf(stderr, "flash_v1: no kernel compiled for d=%d Br=%d Bc=%d\n", d, Br, Bc);
        exit(2);
    }
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    return kernel;
}

extern "C" void IO_VARIANT(flash_v1_init_launch)(const AttnArgs *a) {
    const size_t rows = (size_t)a->B * a->H * a->N, n4 = rows * a->d / 4;
    const long long threads = 256, blocks = ceil_div((long long)n4, threads);
    flash_v1_init_kernel<<<(unsigned)(blocks < 8192 ? blocks : 8192), (unsigned)threads>>>(
        static_cast<float4 *>(a->O), static_cast<float *>(a->extra[FV1_BUF_L]), static_cast<float *>(a->extra[FV1_BUF_M]),
        n4, rows);
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(flash_v1_launch)(const AttnArgs *a) {
    const size_t smem = smem_bytes(a->Br, a->Bc, a->d);
    KernelFn kernel = prepared_kernel(a->d, a->Br, a->Bc, smem);
    const dim3 grid((unsigned)a->B, (unsigned)a->H);
    kernel<<<grid, threads_per_block(a->Br), smem>>>(static_cast<const float *>(a->Q), static_cast<const float *>(a->K),
                                                     static_cast<const float *>(a->V), static_cast<float *>(a->O),
                                                     static_cast<float *>(a->extra[FV1_BUF_L]),
                                                     static_cast<float *>(a->extra[FV1_BUF_M]), a->N, a->Br,
                                                     LOG2E / sqrtf((float)a->d));
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(flash_v1_resources)(int d, int Br, int Bc, KernelResources *r) {
    const size_t smem = smem_bytes(Br, Bc, d);
    kernel_resources((const void *)prepared_kernel(d, Br, Bc, smem), threads_per_block(Br), smem, r);
}
