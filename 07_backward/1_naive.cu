/* 1_naive.cu: chapter 07, step 1: the backward pass of attention through HBM, in fp32 (FFMA, no tensor cores).
 *
 *   ./ch07/run --kernel naive [--causal]        six kernels, each reading what the ones before wrote:
 *       naive_p   (naive_p_kernel)    P  = exp(scale Q K^T - L), 0 above the diagonal with the mask
 *       naive_dv  (naive_dv_kernel)   dV = P^T dO
 *       naive_dp  (naive_dp_kernel)   dP = dO V^T
 *       naive_ds  (naive_ds_kernel)   dS = P o (dP - D), D_i = dO_i . O_i computed in the row, not stored
 *       naive_dq  (naive_dq_kernel)   dQ = scale dS K
 *       naive_dk  (naive_dk_kernel)   dK = scale dS^T Q
 *
 * The chain rule written out as the textbook does it: the N x N matrices P, dP and dS are materialized in HBM,
 * B H N^2 floats each, written once and read back by the kernels after. Five of the six are one matrix product
 * C = A B, all with the same tiled GEMM (gemm_tile below, tiles.h's GEMM_TM x GEMM_TN tiles): they differ only
 * in which operand is stored transposed and in what happens to each output (the epilogue). With the causal mask
 * nothing is skipped: every entry is computed, naive_p writes 0 above the diagonal, and the zeros flow through.
 */
#include <stdio.h>
#include <stdlib.h>

#include "io_tally.cuh"
#include "kernels.h"
#include "tiles.h"

static constexpr float LOG2E = 1.4426950408889634f;

#define GEMM_PAD 4 /* floats after each row of a shared chunk: rows stay 16-byte aligned for float4 reads */

/* What gemm_tile does with an output before storing it. */
enum { EPI_STORE, EPI_SCALE, EPI_SOFTMAX };

/* ---- the GEMM: C (M x Nc) = A (M x Kin) B (Kin x Nc) ----------------------------------------------------------
 * A block computes one GEMM_TM x GEMM_TN tile of C from rows m0.. of A and columns n0.. of B, the inner
 * dimension in chunks of GEMM_TK. A_T: A is stored transposed (element (m, k) at A[k lda + m]), else at
 * A[m lda + k]; B_T: B is stored transposed (element (k, n) at B[n ldb + k]), else at B[k ldb + n]. Each chunk
 * goes to shared memory k-major (As[k][m], Bs[k][n]), so that thread (ty, tx) reads its 4 rows 4 ty.. and its
 * 4 columns 4 tx.. as one float4 each and adds their outer product: a 4 x 4 patch of C per thread.
 * Only real elements are loaded, each once per block: rows >= M, columns >= Nc and inner indices >= Kin are
 * zeros in shared memory, and the block's A panel (its real rows x Kin) and B panel (its real columns x Kin)
 * cross HBM once each.
 * The epilogue: EPI_STORE C = acc; EPI_SCALE C = alpha acc; EPI_SOFTMAX (naive_p, alpha = scale log2 e) C =
 * exp2(alpha acc - L_m log2 e) = exp(scale acc - L_m), 0 where the causal mask hides the key n > the query m.
 * The tallies are this function's own (it is the whole body of each GEMM kernel). */
template <bool A_T, bool B_T, int EPI>
static __device__ __forceinline__ void gemm_tile(const float *__restrict__ A, const float *__restrict__ B,
                                                 float *__restrict__ C, int M, int Nc, int Kin, int lda, int ldb,
                                                 int ldc, const float *__restrict__ L, float alpha, int causal) {
    IO_TALLY;
    __shared__ __align__(16) float As[GEMM_TK][GEMM_TM + GEMM_PAD];
    __shared__ __align__(16) float Bs[GEMM_TK][GEMM_TN + GEMM_PAD];
    __shared__ float L_s[GEMM_TM]; /* EPI_SOFTMAX: L of the block's rows, in log2 units */

    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16; /* C rows m0 + 4 ty + i, columns n0 + 4 tx + j */
    const int m0 = blockIdx.y * GEMM_TM, n0 = blockIdx.x * GEMM_TN;

    if (EPI == EPI_SOFTMAX)
        for (int x = threadIdx.x; x < GEMM_TM; x += GEMM_THREADS)
            L_s[x] = m0 + x < M ? IO_LOAD(L[m0 + x]) * LOG2E : 0.f;

    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) acc[i][j] = 0.f;

    for (int k0 = 0; k0 < Kin; k0 += GEMM_TK) {
        /* The chunk: consecutive threads take consecutive addresses of whichever index is contiguous in HBM. */
        for (int e = threadIdx.x; e < GEMM_TM * GEMM_TK; e += GEMM_THREADS) {
            const int m = A_T ? e % GEMM_TM : e / GEMM_TK, k = A_T ? e / GEMM_TM : e % GEMM_TK;
            const int gm = m0 + m, gk = k0 + k;
            const size_t at = A_T ? (size_t)gk * lda + gm : (size_t)gm * lda + gk;
            As[k][m] = gm < M && gk < Kin ? IO_LOAD(A[at]) : 0.f;
        }
        for (int e = threadIdx.x; e < GEMM_TK * GEMM_TN; e += GEMM_THREADS) {
            const int n = B_T ? e / GEMM_TK : e % GEMM_TN, k = B_T ? e % GEMM_TK : e / GEMM_TN;
            const int gn = n0 + n, gk = k0 + k;
            const size_t at = B_T ? (size_t)gn * ldb + gk : (size_t)gk * ldb + gn;
            Bs[k][n] = gn < Nc && gk < Kin ? IO_LOAD(B[at]) : 0.f;
        }
        __syncthreads(); /* the chunk (and, before the first, L_s) is complete before any thread multiplies */
#pragma unroll
        for (int k = 0; k < GEMM_TK; k++) {
            const float4 a = *reinterpret_cast<const float4 *>(&As[k][4 * ty]);
            const float4 b = *reinterpret_cast<const float4 *>(&Bs[k][4 * tx]);
            const float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        __syncthreads(); /* every thread is done with the chunk before the next one overwrites it */
    }

#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int m = m0 + 4 * ty + i;
        if (m >= M) continue;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int n = n0 + 4 * tx + j;
            if (n >= Nc) continue;
            float c = acc[i][j];
            if (EPI == EPI_SCALE) c *= alpha;
            if (EPI == EPI_SOFTMAX) c = causal && n > m ? 0.f : exp2f(c * alpha - L_s[4 * ty + i]);
            IO_STORE(C[(size_t)m * ldc + n], c);
        }
    }
    IO_TALLY_FLUSH();
}

/* ---- the five GEMM kernels: grid (ceil(Nc / GEMM_TN), ceil(M / GEMM_TM), B*H), GEMM_THREADS threads -----------
 * Head h = blockIdx.z: its [N, d] matrices start at element h N d, its [N, N] ones at h N^2, its L at h N. */

/* P = exp(scale Q K^T - L): A = Q (N x d), B = K^T (K stored N x d: transposed). */
static __global__ void __launch_bounds__(GEMM_THREADS)
    naive_p_kernel(const float *Q, const float *K, const float *L, float *P, int N, int d, int causal,
                   float scale_log2) {
    const size_t h = blockIdx.z;
    gemm_tile<false, true, EPI_SOFTMAX>(Q + h * N * d, K + h * N * d, P + h * N * N, N, N, d, d, d, N, L + h * N,
                                        scale_log2, causal);
}

/* dV = P^T dO: A = P^T (P stored N x N: transposed), B = dO (N x d). */
static __global__ void __launch_bounds__(GEMM_THREADS)
    naive_dv_kernel(const float *P, const float *dO, float *dV, int N, int d) {
    const size_t h = blockIdx.z;
    gemm_tile<true, false, EPI_STORE>(P + h * N * N, dO + h * N * d, dV + h * N * d, N, d, N, N, d, d, nullptr,
                                      1.f, 0);
}

/* dP = dO V^T: A = dO (N x d), B = V^T (V stored N x d: transposed). */
static __global__ void __launch_bounds__(GEMM_THREADS)
    naive_dp_kernel(const float *dO, const float *V, float *dP, int N, int d) {
    const size_t h = blockIdx.z;
    gemm_tile<false, true, EPI_STORE>(dO + h * N * d, V + h * N * d, dP + h * N * N, N, N, d, d, d, N, nullptr,
                                      1.f, 0);
}

/* dQ = scale dS K: A = dS (N x N), B = K (N x d). */
static __global__ void __launch_bounds__(GEMM_THREADS)
    naive_dq_kernel(const float *dS, const float *K, float *dQ, int N, int d, float scale) {
    const size_t h = blockIdx.z;
    gemm_tile<false, false, EPI_SCALE>(dS + h * N * N, K + h * N * d, dQ + h * N * d, N, d, N, N, d, d, nullptr,
                                       scale, 0);
}

/* dK = scale dS^T Q: A = dS^T (dS stored N x N: transposed), B = Q (N x d). */
static __global__ void __launch_bounds__(GEMM_THREADS)
    naive_dk_kernel(const float *dS, const float *Q, float *dK, int N, int d, float scale) {
    const size_t h = blockIdx.z;
    gemm_tile<true, false, EPI_SCALE>(dS + h * N * N, Q + h * N * d, dK + h * N * d, N, d, N, N, d, d, nullptr,
                                      scale, 0);
}

/* ---- naive_ds: dS = P o (dP - D), NAIVE_DS_ROWS rows per block ------------------------------------------------
 * Grid (ceil(N / NAIVE_DS_ROWS), B*H), NAIVE_DS_THREADS threads. Per row i: D_i = dO_i . O_i by the whole block
 * (each thread a strided share of the d products, then the warps' shuffles, then shared memory across warps),
 * then dS_i = P_i o (dP_i - D_i), consecutive threads on consecutive columns. D_i is never stored. */
static __global__ void __launch_bounds__(NAIVE_DS_THREADS)
    naive_ds_kernel(const float *dO, const float *O, const float *P, const float *dP, float *dS, int N, int d) {
    IO_TALLY;
    __shared__ float warp_sum[NAIVE_DS_THREADS / 32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const size_t head = blockIdx.y;

    for (int t = 0; t < NAIVE_DS_ROWS; t++) {
        const int i = blockIdx.x * NAIVE_DS_ROWS + t;
        if (i >= N) break; /* the same for every thread of the block: no thread misses a barrier */
        const size_t row = head * N + i;

        float part = 0.f;
        for (int x = threadIdx.x; x < d; x += NAIVE_DS_THREADS)
            part = fmaf(IO_LOAD(dO[row * d + x]), IO_LOAD(O[row * d + x]), part);
        for (int lanes = 16; lanes > 0; lanes /= 2) part += __shfl_xor_sync(0xffffffffu, part, lanes);
        if (lane == 0) warp_sum[warp] = part;
        __syncthreads(); /* every warp's share is in warp_sum before any thread adds them */
        float D_i = 0.f;
#pragma unroll
        for (int w = 0; w < NAIVE_DS_THREADS / 32; w++) D_i += warp_sum[w];
        __syncthreads(); /* every thread has read warp_sum before the next row's shares overwrite it */

        const float *P_i = P + row * N, *dP_i = dP + row * N;
        float *dS_i = dS + row * N;
        for (int c = threadIdx.x; c < N; c += NAIVE_DS_THREADS)
            IO_STORE(dS_i[c], IO_LOAD(P_i[c]) * (IO_LOAD(dP_i[c]) - D_i));
    }
    IO_TALLY_FLUSH();
}

/* ---- launchers ----------------------------------------------------------------------------------------------- */

static dim3 gemm_grid(int M, int Nc, const BwdArgs *a) {
    return dim3((unsigned)ceil_div(Nc, GEMM_TN), (unsigned)ceil_div(M, GEMM_TM), (unsigned)(a->B * a->H));
}

extern "C" void IO_VARIANT(naive_p_launch)(const BwdArgs *a) {
    naive_p_kernel<<<gemm_grid(a->N, a->N, a), GEMM_THREADS>>>(a->Q, a->K, a->L, a->P, a->N, a->d, a->causal,
                                                               LOG2E / sqrtf((float)a->d));
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(naive_dv_launch)(const BwdArgs *a) {
    naive_dv_kernel<<<gemm_grid(a->N, a->d, a), GEMM_THREADS>>>(a->P, a->dO, a->dV, a->N, a->d);
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(naive_dp_launch)(const BwdArgs *a) {
    naive_dp_kernel<<<gemm_grid(a->N, a->N, a), GEMM_THREADS>>>(a->dO, a->V, a->dP, a->N, a->d);
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(naive_ds_launch)(const BwdArgs *a) {
    const dim3 grid((unsigned)ceil_div(a->N, NAIVE_DS_ROWS), (unsigned)(a->B * a->H));
    naive_ds_kernel<<<grid, NAIVE_DS_THREADS>>>(a->dO, a->O, a->P, a->dP, a->dS, a->N, a->d);
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(naive_dq_launch)(const BwdArgs *a) {
    naive_dq_kernel<<<gemm_grid(a->N, a->d, a), GEMM_THREADS>>>(a->dS, a->K, a->dQ, a->N, a->d,
                                                                1.f / sqrtf((float)a->d));
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(naive_dk_launch)(const BwdArgs *a) {
    naive_dk_kernel<<<gemm_grid(a->N, a->d, a), GEMM_THREADS>>>(a->dS, a->Q, a->dK, a->N, a->d,
                                                                1.f / sqrtf((float)a->d));
    KERNEL_CHECK();
}

/* kernel: 0..5 in kernels.h's order (p, dv, dp, ds, dq, dk). Shared memory is static: no dynamic bytes. */
extern "C" void IO_VARIANT(naive_resources)(int kernel, int d, KernelResources *r) {
    const void *const fn[] = {(const void *)naive_p_kernel,  (const void *)naive_dv_kernel,
                              (const void *)naive_dp_kernel, (const void *)naive_ds_kernel,
                              (const void *)naive_dq_kernel, (const void *)naive_dk_kernel};
    if (kernel < 0 || kernel >= (int)(sizeof(fn) / sizeof(fn[0]))) {
        fprintf(stderr, "naive_resources: no kernel %d\n", kernel);
        exit(2);
    }
    kernel_resources(fn[kernel], kernel == 3 ? NAIVE_DS_THREADS : GEMM_THREADS, 0, r);
}
