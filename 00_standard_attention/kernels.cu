/* kernels.cu: chapter 00, standard attention: three kernels, each reading its inputs from HBM and writing its
 * output back to HBM, as every framework did before FlashAttention.
 *
 *   ./ch00/run [--dtype fp16] [--gemm cublas]     qk_gemm, softmax, pv_gemm, one launch each
 *
 *   qk_gemm   S = scale Q K^T     reads Q, K        writes S (N x N per head)
 *   softmax   P = softmax(S)      reads S           writes P (N x N per head), row by row, max subtracted
 *   pv_gemm   O = P V             reads P, V        writes O
 *
 * Storage is float, or IEEE half with --dtype fp16 (Q, K, V, S, P and O all in half); arithmetic is float
 * in both cases (FFMA, no tensor cores). --gemm cublas replaces the two GEMMs with cuBLAS (cublas.c); the
 * softmax stays.
 *
 * The two GEMMs are the classic shared-memory tiled GEMM with register blocking: 256 threads, each owning an
 * 8 x 8 block of outputs that it accumulates as outer products of 8 values of A and 8 values of B per step,
 * read from shared memory as float4. Their loop order is the one FlashAttention will need:
 *   qk_gemm   a block loads its query panel Q_i (128 rows x d) once and sweeps every key tile K_j, writing
 *             one 128 x 128 tile S_ij per K_j: all of K is read once per query block.
 *   pv_gemm   a block keeps O_i (16384/d rows x d) in registers and streams its rows P_i of P and all of V
 *             through shared memory, 8 or 16 keys at a time: all of V is read once per row block.
 * The softmax keeps each row on chip between its one read and its one write: rows of up to 1024 elements
 * in the registers of one warp (softmax_warp_kernel, several rows per block, no barrier), longer ones in
 * the shared memory of one block (softmax_kernel).
 * Tiles past N (ragged last tiles) are masked: rows and keys past N are zeros in shared memory and are
 * neither loaded nor stored. Rows of S and P are read and written 4 elements at a time when N is a multiple
 * of 4 (every row then starts 16-byte (fp32) or 8-byte (fp16) aligned), one element at a time otherwise;
 * both softmax kernels move 16 bytes at a time (4 floats, 8 halves) when N is a multiple of 4 (fp32) or
 * 8 (fp16).
 * tiles.h holds the sizes; model.h derives the bytes each kernel requests from them. */
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "io_tally.cuh"
#include "kernels.h"
#include "tiles.h"

// ---- storage: 4 consecutive elements as one load or store, widened to float4 ----------------------------
// (the softmax kernels move 16 bytes at a time instead: 4 floats or 8 halves, the widest access there is)

template <typename T> struct Storage;
template <> struct Storage<float> {
    typedef float4 Vec4;  /* 16 bytes */
    typedef float4 Vec16; /* 16 bytes */
    static constexpr int PER_VEC16 = 4;
    static __device__ __forceinline__ float4 widen(float4 v) { return v; }
    static __device__ __forceinline__ float4 narrow(float4 v) { return v; }
    static __device__ __forceinline__ float narrow(float x) { return x; }
    static __device__ __forceinline__ float4 pack(float a, float b, float c, float d) { return make_float4(a, b, c, d); }
    static __device__ __forceinline__ void widen16(float4 v, float (&x)[4]) {
        x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
    }
    static __device__ __forceinline__ float4 narrow16(const float (&x)[4], float s) {
        return make_float4(s * x[0], s * x[1], s * x[2], s * x[3]);
    }
};
template <> struct Storage<__half> {
    typedef uint2 Vec4;  /* 8 bytes: two half2 */
    typedef uint4 Vec16; /* 16 bytes: four half2 */
    static constexpr int PER_VEC16 = 8;
    static __device__ __forceinline__ float4 widen(uint2 v) {
        const float2 a = __half22float2(*reinterpret_cast<const __half2 *>(&v.x));
        const float2 b = __half22float2(*reinterpret_cast<const __half2 *>(&v.y));
        return make_float4(a.x, a.y, b.x, b.y);
    }
    static __device__ __forceinline__ uint2 narrow(float4 v) {
        const __half2 a = __floats2half2_rn(v.x, v.y), b = __floats2half2_rn(v.z, v.w);
        return make_uint2(*reinterpret_cast<const unsigned *>(&a), *reinterpret_cast<const unsigned *>(&b));
    }
    static __device__ __forceinline__ __half narrow(float x) { return __float2half_rn(x); }
    static __device__ __forceinline__ uint2 pack(__half a, __half b, __half c, __half d) {
        return make_uint2(__half_as_ushort(a) | (unsigned)__half_as_ushort(b) << 16,
                          __half_as_ushort(c) | (unsigned)__half_as_ushort(d) << 16);
    }
    static __device__ __forceinline__ void widen16(uint4 v, float (&x)[8]) {
        const __half2 *h = reinterpret_cast<const __half2 *>(&v);
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const float2 f = __half22float2(h[i]);
            x[2 * i] = f.x, x[2 * i + 1] = f.y;
        }
    }
    static __device__ __forceinline__ uint4 narrow16(const float (&x)[8], float s) {
        unsigned w[4];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const __half2 h = __floats2half2_rn(s * x[2 * i], s * x[2 * i + 1]);
            w[i] = *reinterpret_cast<const unsigned *>(&h);
        }
        return make_uint4(w[0], w[1], w[2], w[3]);
    }
};

static __device__ __forceinline__ float to_float(float x) { return x; }
static __device__ __forceinline__ float to_float(__half x) { return __half2float(x); }

/* The 4 elements at p as one vector (p 4-element aligned). */
template <typename T>
static __device__ __forceinline__ const typename Storage<T>::Vec4 &vec4_at(const T *p) {
    return *reinterpret_cast<const typename Storage<T>::Vec4 *>(p);
}
template <typename T>
static __device__ __forceinline__ typename Storage<T>::Vec4 &vec4_at(T *p) {
    return *reinterpret_cast<typename Storage<T>::Vec4 *>(p);
}
/* The Storage<T>::PER_VEC16 elements at p as one 16-byte vector (p 16-byte aligned). */
template <typename T>
static __device__ __forceinline__ const typename Storage<T>::Vec16 &vec16_at(const T *p) {
    return *reinterpret_cast<const typename Storage<T>::Vec16 *>(p);
}
template <typename T>
static __device__ __forceinline__ typename Storage<T>::Vec16 &vec16_at(T *p) {
    return *reinterpret_cast<typename Storage<T>::Vec16 *>(p);
}

static __device__ __forceinline__ float4 &f4(float *p) { return *reinterpret_cast<float4 *>(p); }
static __device__ __forceinline__ const float4 &f4(const float *p) { return *reinterpret_cast<const float4 *>(p); }

/* s x[0..3] as a float4 (x in registers or shared memory) */
static __device__ __forceinline__ float4 scaled(const float *x, float s) {
    return make_float4(s * x[0], s * x[1], s * x[2], s * x[3]);
}

/* acc[i][j] += a[i] b[j]: one 8 x 8 outer product, 64 FFMA. a = (a0, a1), b = (b0, b1). */
static __device__ __forceinline__ void outer_product(float (&acc)[SA_TM][SA_TN], const float4 &a0,
                                                     const float4 &a1, const float4 &b0, const float4 &b1) {
    const float a[SA_TM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
    const float b[SA_TN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
    for (int i = 0; i < SA_TM; i++)
#pragma unroll
        for (int j = 0; j < SA_TN; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
}

/* A thread's 8 rows (or columns) of a tile of `extent`: 4 consecutive ones in each half, so that the float4
 * reads of a warp from shared memory touch consecutive addresses. */
static __device__ __forceinline__ int owned(int i, int lane_group, int extent) {
    return (i < 4 ? 0 : extent / 2) + 4 * lane_group + (i & 3);
}

// ---- qk_gemm: S = scale Q K^T ----------------------------------------------------------------------------

/* Grid (ceil(N / QK_BR), B*H), SA_THREADS threads, QK_SMEM_FLOATS(D) floats of dynamic shared memory. */
template <typename T, int D>
static __global__ void __launch_bounds__(SA_THREADS, 2)
    qk_gemm_kernel(const T *__restrict__ Q, const T *__restrict__ K, T *__restrict__ S, int N, float scale) {
    IO_TALLY;
    constexpr int QS = QK_BR + SMEM_PAD, KS = QK_BC + SMEM_PAD; /* row strides of Q_s and K_s (floats)   */
    constexpr int CHUNKS = D / QK_BK;                           /* K_j chunks per key tile               */
    constexpr int C4 = QK_BK / 4;                               /* 4-element vectors per key in a chunk  */
    constexpr int FETCH = QK_BC * C4 / SA_THREADS;              /* vectors of a chunk per thread         */
    static_assert(16 * SA_TM == QK_BR && 16 * SA_TN == QK_BC && SA_THREADS == 256, "16 x 16 threads, 8 x 8 each");
    static_assert(FETCH * SA_THREADS == QK_BC * C4 && D % QK_BK == 0, "a chunk divides among the threads");

    extern __shared__ float4 smem[];
    float *Q_s = reinterpret_cast<float *>(smem); /* [D][QS]        Q_s[x][r] = Q[q0 + r][x]           */
    float *K_s = Q_s + D * QS;                    /* [2][QK_BK][KS] K_s[b][x][c] = K[k0 + c][x0 + x]   */

    const int t = threadIdx.x, tx = t % 16, ty = t / 16;
    const size_t head = blockIdx.y;
    const int q0 = blockIdx.x * QK_BR;
    Q += head * N * D;
    K += head * N * D;
    S += head * N * N;
    const bool vec_rows = N % 4 == 0;
    const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);

    /* Q_i, once for the whole sweep, transposed so that a thread's 8 rows at feature x are two float4. */
    for (int x = t; x < QK_BR * D / 4; x += SA_THREADS) {
        const int r = x / (D / 4), f = 4 * (x % (D / 4));
        const float4 v = q0 + r < N ? Storage<T>::widen(IO_LOAD(vec4_at(Q + (size_t)(q0 + r) * D + f))) : zero;
        Q_s[(f + 0) * QS + r] = v.x;
        Q_s[(f + 1) * QS + r] = v.y;
        Q_s[(f + 2) * QS + r] = v.z;
        Q_s[(f + 3) * QS + r] = v.w;
    }

    /* Chunk s of the sweep (key tile s / CHUNKS, features QK_BK (s % CHUNKS) onwards): fetch loads it into
     * registers as stored, stash widens it to float and stores it transposed into K_s[b]. A thread's vectors
     * are FETCH_ROWS keys apart, at the same features. */
    typedef typename Storage<T>::Vec4 Vec4;
    constexpr int FETCH_ROWS = SA_THREADS / C4;
    const int fetch_c = t / C4, fetch_f = 4 * (t % C4);
    Vec4 pre[FETCH];
    auto fetch = [&](int s) {
        const int k0 = s / CHUNKS * QK_BC, x0 = s % CHUNKS * QK_BK;
        const T *src = K + (size_t)(k0 + fetch_c) * D + x0 + fetch_f;
#pragma unroll
        for (int u = 0; u < FETCH; u++)
            pre[u] = k0 + fetch_c + u * FETCH_ROWS < N ? IO_LOAD(vec4_at(src + u * FETCH_ROWS * D)) : Vec4{};
    };
    auto stash = [&](int b) {
        float *dst = K_s + b * QK_BK * KS + fetch_f * KS + fetch_c;
#pragma unroll
        for (int u = 0; u < FETCH; u++) {
            const float4 v = Storage<T>::widen(pre[u]);
            dst[0 * KS + u * FETCH_ROWS] = v.x;
            dst[1 * KS + u * FETCH_ROWS] = v.y;
            dst[2 * KS + u * FETCH_ROWS] = v.z;
            dst[3 * KS + u * FETCH_ROWS] = v.w;
        }
    };

    const int Tc = (N + QK_BC - 1) / QK_BC, steps = Tc * CHUNKS;
    fetch(0);
    stash(0);
    __syncthreads(); /* Q_i and the first K chunk are in shared memory before anyone multiplies */

    int s = 0;
    for (int j = 0; j < Tc; j++) {
        float acc[SA_TM][SA_TN] = {};
        for (int chunk = 0; chunk < CHUNKS; chunk++, s++) {
            if (s + 1 < steps) fetch(s + 1); /* the next chunk's loads are in flight during the products */
            const float *Q_c = Q_s + chunk * QK_BK * QS, *K_c = K_s + (s & 1) * QK_BK * KS;
#pragma unroll 8
            for (int k = 0; k < QK_BK; k++)
                outer_product(acc, f4(Q_c + k * QS + 4 * ty), f4(Q_c + k * QS + QK_BR / 2 + 4 * ty),
                              f4(K_c + k * KS + 4 * tx), f4(K_c + k * KS + QK_BC / 2 + 4 * tx));
            if (s + 1 < steps) stash((s + 1) & 1);
            __syncthreads(); /* the chunk just stashed is complete before it is read, and every thread is done
                                with chunk s before the next stash overwrites its buffer */
        }

        /* S_ij = scale Q_i K_j^T, straight from registers to HBM; a warp writes two rows of 256 contiguous
         * bytes (fp32) per store. */
        const int k0 = j * QK_BC;
#pragma unroll
        for (int i = 0; i < SA_TM; i++) {
            const int q = q0 + owned(i, ty, QK_BR);
            if (q < N) {
                T *S_row = S + (size_t)q * N;
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int c = k0 + h * (QK_BC / 2) + 4 * tx;
                    const float4 v = scaled(&acc[i][4 * h], scale);
                    if (vec_rows) {
                        if (c < N) IO_STORE(vec4_at(S_row + c), Storage<T>::narrow(v));
                    } else {
                        if (c + 0 < N) IO_STORE(S_row[c + 0], Storage<T>::narrow(v.x));
                        if (c + 1 < N) IO_STORE(S_row[c + 1], Storage<T>::narrow(v.y));
                        if (c + 2 < N) IO_STORE(S_row[c + 2], Storage<T>::narrow(v.z));
                        if (c + 3 < N) IO_STORE(S_row[c + 3], Storage<T>::narrow(v.w));
                    }
                }
            }
        }
    }
    IO_TALLY_FLUSH();
}

// ---- softmax: P = softmax(S), row by row, each row on chip between its one read and its one write -----------

/* The maximum (or the sum) over the 32 lanes of a warp: a butterfly of shuffles, after which every lane holds
 * the result. No shared memory and no barrier: the lanes of a warp exchange registers directly. */
static __device__ __forceinline__ float warp_max(float x) {
    for (int lanes = 16; lanes > 0; lanes /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, lanes));
    return x;
}
static __device__ __forceinline__ float warp_sum(float x) {
    for (int lanes = 16; lanes > 0; lanes /= 2) x += __shfl_xor_sync(0xffffffffu, x, lanes);
    return x;
}

/* Short rows, N <= SOFTMAX_WARP_MAX_N: one warp per row, the row in the warp's registers.
 *
 * Grid (ceil(N / SOFTMAX_WARP_ROWS), B*H), SOFTMAX_WARP_ROWS warps per block, no shared memory: warp w of block
 * (i, head) turns row SOFTMAX_WARP_ROWS i + w of S into the same row of P. Both reductions are warp shuffles,
 * so the warps never wait for each other and there is no barrier at all: each warp goes from its loads to its
 * stores on its own, and an SM holds dozens of rows in flight. (The block-per-row kernel below would give a
 * row of 1024 one warp too, but pass every element through shared memory twice and reduce behind two
 * barriers.)
 *
 * Where the elements live: a row is cut into chunks of 32 V elements, V = 16 bytes of storage (4 floats or 8
 * halves), and lane `lane` holds V elements of each chunk in registers, at most SOFTMAX_WARP_MAX_N / 32 = 32
 * floats. When N is a multiple of V every row starts 16-byte aligned, and the lane's V elements are consecutive:
 * one 16-byte load or store per chunk, 512 contiguous bytes per warp. Otherwise they are 32 apart: one element
 * per access, 32 consecutive elements per warp. Elements past N hold -inf, which changes neither m nor l
 * (exp(-inf - m) = 0); the maximum and the exponentials skip chunks wholly past N, a test that is the same
 * for the whole warp. */
template <typename T>
static __global__ void __launch_bounds__(32 * SOFTMAX_WARP_ROWS)
    softmax_warp_kernel(const T *__restrict__ S, T *__restrict__ P, int N) {
    IO_TALLY;
    typedef Storage<T> St;
    constexpr int V = St::PER_VEC16;                      /* elements per 16-byte vector: 4 (fp32) or 8 (fp16) */
    constexpr int CHUNKS = SOFTMAX_WARP_MAX_N / (32 * V); /* chunks of the longest row: 8 (fp32) or 4 (fp16)  */
    const int lane = threadIdx.x % 32, r = blockIdx.x * SOFTMAX_WARP_ROWS + threadIdx.x / 32;
    if (r < N) { /* the last block of a head may have warps past its last row */
        const size_t at = ((size_t)blockIdx.y * N + r) * N;
        const T *S_row = S + at;
        T *P_row = P + at;
        const bool vec_rows = N % V == 0;
        const int chunks = (N + 32 * V - 1) / (32 * V);
        /* the column of the lane's element j in chunk k */
        auto column = [&](int k, int j) { return 32 * V * k + (vec_rows ? V * lane + j : 32 * j + lane); };
        float x[CHUNKS][V];

        /* pass 1: the row from HBM into registers, then its maximum m. Every load is issued before the first
         * one is used, so the warp has its whole row in flight at once. (Only the lane's own test guards a
         * load: a branch on `chunks` between them would let the compiler widen each chunk, and so wait for
         * it, before it loads the next one.) */
#pragma unroll
        for (int k = 0; k < CHUNKS; k++) {
            if (vec_rows) {
                if (column(k, 0) < N) St::widen16(IO_LOAD(vec16_at(S_row + column(k, 0))), x[k]);
                else
#pragma unroll
                    for (int j = 0; j < V; j++) x[k][j] = -INFINITY;
            } else {
#pragma unroll
                for (int j = 0; j < V; j++)
                    x[k][j] = column(k, j) < N ? to_float(IO_LOAD(S_row[column(k, j)])) : -INFINITY;
            }
        }
        float m = -INFINITY;
#pragma unroll
        for (int k = 0; k < CHUNKS; k++)
            if (k < chunks)
#pragma unroll
                for (int j = 0; j < V; j++) m = fmaxf(m, x[k][j]);
        m = warp_max(m);

        /* pass 2: exp(s - m) in place, and the row sum l */
        float l = 0.f;
#pragma unroll
        for (int k = 0; k < CHUNKS; k++)
            if (k < chunks)
#pragma unroll
                for (int j = 0; j < V; j++) l += (x[k][j] = expf(x[k][j] - m));
        l = warp_sum(l);

        /* pass 3: P = exp(s - m) / l, to HBM */
        const float inv_l = 1.f / l;
#pragma unroll
        for (int k = 0; k < CHUNKS; k++) {
            if (vec_rows) {
                if (column(k, 0) < N) IO_STORE(vec16_at(P_row + column(k, 0)), St::narrow16(x[k], inv_l));
            } else {
#pragma unroll
                for (int j = 0; j < V; j++)
                    if (column(k, j) < N) IO_STORE(P_row[column(k, j)], St::narrow(x[k][j] * inv_l));
            }
        }
    }
    IO_TALLY_FLUSH();
}

/* Long rows, N > SOFTMAX_WARP_MAX_N: one block per row, the row in shared memory.
 *
 * The maximum (or the sum) over the block: each warp reduces with shuffles and leaves its result in
 * partial[warp]; then every thread reduces those itself (each reduction has its own partial array, so no
 * second barrier is needed before the next one). */
static __device__ float block_max(float x, float *partial) {
    x = warp_max(x);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = x;
    __syncthreads(); /* every warp's maximum is in shared memory before any thread reads them */
    float m = partial[0];
    for (int w = 1; w < (int)blockDim.x / 32; w++) m = fmaxf(m, partial[w]);
    return m;
}
static __device__ float block_sum(float x, float *partial) {
    x = warp_sum(x);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = x;
    __syncthreads(); /* every warp's sum is in shared memory before any thread reads them */
    float l = 0.f;
    for (int w = 0; w < (int)blockDim.x / 32; w++) l += partial[w];
    return l;
}

/* Grid (N, B*H): block (r, head) turns row r of S into row r of P. softmax_threads(N) threads (one warp per
 * SOFTMAX_WARP_MAX_N elements, up to 32 warps), softmax_smem_bytes(N) bytes of dynamic shared memory: the
 * row stays on chip between its one read from HBM and its one write, which is why N is limited by the shared
 * memory of one block. Each thread works on the same elements in all three passes, so only the two
 * reductions need barriers.
 *
 * Bytes in flight are what keep HBM busy, so the loads copy the short-row kernel: when N is a multiple of V
 * (16 bytes of storage: 4 floats or 8 halves) every access is one 16-byte vector, and a thread issues
 * LOADS of them before it uses the first, 32 elements, as a lane of softmax_warp_kernel does. At
 * N = 4096 that is the whole row of a 4-warp block in one round of loads, and the SM holds a dozen such
 * blocks. */
template <typename T>
static __global__ void softmax_kernel(const T *__restrict__ S, T *__restrict__ P, int N) {
    IO_TALLY;
    typedef Storage<T> St;
    constexpr int V = St::PER_VEC16;  /* elements per 16-byte vector: 4 (fp32) or 8 (fp16) */
    constexpr int LOADS = 32 / V;     /* 16-byte loads in flight per thread: 8 or 4        */
    extern __shared__ float4 smem[];
    float *row = reinterpret_cast<float *>(smem); /* [N rounded up to 4]: S's row, then exp(S - m) */
    float *partial_max = row + 4 * ((N + 3) / 4), *partial_sum = partial_max + 32;

    const size_t at = ((size_t)blockIdx.y * N + blockIdx.x) * N;
    const T *S_row = S + at;
    T *P_row = P + at;
    const int t = threadIdx.x, stride = blockDim.x;
    const bool vec_rows = N % V == 0; /* then every row starts 16-byte aligned */

    /* pass 1: the row from HBM into shared memory, and its maximum m */
    float m = -INFINITY;
    if (vec_rows) {
        for (int c0 = V * t; c0 < N; c0 += LOADS * V * stride) {
            typename St::Vec16 v[LOADS];
#pragma unroll
            for (int u = 0; u < LOADS; u++)
                if (c0 + u * V * stride < N) v[u] = IO_LOAD(vec16_at(S_row + c0 + u * V * stride));
#pragma unroll
            for (int u = 0; u < LOADS; u++) {
                const int c = c0 + u * V * stride;
                if (c >= N) break;
                float x[V];
                St::widen16(v[u], x);
#pragma unroll
                for (int j = 0; j < V; j += 4) {
                    f4(row + c + j) = make_float4(x[j], x[j + 1], x[j + 2], x[j + 3]);
                    m = fmaxf(m, fmaxf(fmaxf(x[j], x[j + 1]), fmaxf(x[j + 2], x[j + 3])));
                }
            }
        }
    } else {
        for (int c = t; c < N; c += stride) {
            row[c] = to_float(IO_LOAD(S_row[c]));
            m = fmaxf(m, row[c]);
        }
    }
    m = block_max(m, partial_max);

    /* pass 2: exp(s - m) in place, and the row sum l */
    float l = 0.f;
    if (vec_rows) {
        for (int c = V * t; c < N; c += V * stride)
#pragma unroll
            for (int j = 0; j < V; j += 4) {
                float4 &e = f4(row + c + j);
                e = make_float4(expf(e.x - m), expf(e.y - m), expf(e.z - m), expf(e.w - m));
                l += (e.x + e.y) + (e.z + e.w);
            }
    } else {
        for (int c = t; c < N; c += stride) l += (row[c] = expf(row[c] - m));
    }
    l = block_sum(l, partial_sum);

    /* pass 3: P = exp(s - m) / l, to HBM */
    const float inv_l = 1.f / l;
    if (vec_rows) {
        for (int c = V * t; c < N; c += V * stride) {
            float x[V];
#pragma unroll
            for (int j = 0; j < V; j++) x[j] = row[c + j];
            IO_STORE(vec16_at(P_row + c), St::narrow16(x, inv_l));
        }
    } else {
        for (int c = t; c < N; c += stride) IO_STORE(P_row[c], Storage<T>::narrow(row[c] * inv_l));
    }
    IO_TALLY_FLUSH();
}

// ---- pv_gemm: O = P V --------------------------------------------------------------------------------------

/* Grid (ceil(N / PV_BR(D)), B*H), SA_THREADS threads, PV_SMEM_FLOATS(D) floats of dynamic shared memory. */
template <typename T, int D>
static __global__ void __launch_bounds__(SA_THREADS, 2)
    pv_gemm_kernel(const T *__restrict__ P, const T *__restrict__ V, T *__restrict__ O, int N) {
    IO_TALLY;
    constexpr int BR = PV_BR(D), BC = PV_BC(D), PS = BR + SMEM_PAD; /* P_s's row stride (floats)        */
    constexpr int TC = D / SA_TN;                                   /* threads across O's columns       */
    constexpr int PC4 = BC / 4;                                     /* vectors per row of a P chunk     */
    constexpr int P_FETCH = BR * PC4 / SA_THREADS;                  /* vectors of a P chunk per thread  */
    constexpr int V4 = BC * D / 4;                                  /* vectors in a V chunk             */
    constexpr int V_FETCH = (V4 + SA_THREADS - 1) / SA_THREADS;     /* (the last pass may be partial)   */
    static_assert(SA_THREADS / TC * SA_TM == BR && P_FETCH * SA_THREADS == BR * PC4, "tile != threads");

    extern __shared__ float4 smem[];
    float *P_s = reinterpret_cast<float *>(smem); /* [2][BC][PS] P_s[b][c][r] = P[q0 + r][k0 + c] */
    float *V_s = P_s + 2 * BC * PS;               /* [2][BC][D]  V_s[b][c][x] = V[k0 + c][x]      */

    const int t = threadIdx.x, tx = t % TC, ty = t / TC;
    const size_t head = blockIdx.y;
    const int q0 = blockIdx.x * BR;
    P += head * N * N;
    V += head * N * D;
    O += head * N * D;
    const bool vec_rows = N % 4 == 0;

    /* Chunk j: keys BC j onwards of P_i's rows and of V. fetch loads it into registers as stored; stash widens
     * it to float and stores P_i's part transposed (so that a thread's 8 rows at key c are two float4) and
     * V's part as it is. A thread's P vectors are FETCH_ROWS rows apart, at the same keys. */
    typedef typename Storage<T>::Vec4 Vec4;
    constexpr int FETCH_ROWS = SA_THREADS / PC4;
    const int fetch_r = t / PC4, fetch_c = 4 * (t % PC4);
    Vec4 p_pre[P_FETCH], v_pre[V_FETCH];
    auto fetch = [&](int j) {
        const int k0 = j * BC, key = k0 + fetch_c;
        const T *src = P + (size_t)(q0 + fetch_r) * N + key;
#pragma unroll
        for (int u = 0; u < P_FETCH; u++) {
            const T *p = src + (size_t)u * FETCH_ROWS * N;
            Vec4 v = {};
            if (q0 + fetch_r + u * FETCH_ROWS < N) {
                if (vec_rows) {
                    if (key < N) v = IO_LOAD(vec4_at(p));
                } else { /* rows not 4-element aligned: element by element */
                    const T none = Storage<T>::narrow(0.f);
                    v = Storage<T>::pack(key + 0 < N ? IO_LOAD(p[0]) : none, key + 1 < N ? IO_LOAD(p[1]) : none,
                                         key + 2 < N ? IO_LOAD(p[2]) : none, key + 3 < N ? IO_LOAD(p[3]) : none);
                }
            }
            p_pre[u] = v;
        }
#pragma unroll
        for (int u = 0; u < V_FETCH; u++) {
            const int x = t + u * SA_THREADS; /* V's chunk is contiguous: vector x is key x / (D / 4) */
            if (x < V4) v_pre[u] = k0 + x / (D / 4) < N ? IO_LOAD(vec4_at(V + (size_t)k0 * D + 4 * x)) : Vec4{};
        }
    };
    auto stash = [&](int b) {
        float *P_dst = P_s + b * BC * PS + fetch_c * PS + fetch_r;
        float4 *V_dst = reinterpret_cast<float4 *>(V_s + b * BC * D);
#pragma unroll
        for (int u = 0; u < P_FETCH; u++) {
            const float4 v = Storage<T>::widen(p_pre[u]);
            P_dst[0 * PS + u * FETCH_ROWS] = v.x;
            P_dst[1 * PS + u * FETCH_ROWS] = v.y;
            P_dst[2 * PS + u * FETCH_ROWS] = v.z;
            P_dst[3 * PS + u * FETCH_ROWS] = v.w;
        }
#pragma unroll
        for (int u = 0; u < V_FETCH; u++) {
            const int x = t + u * SA_THREADS;
            if (x < V4) V_dst[x] = Storage<T>::widen(v_pre[u]);
        }
    };

    const int Tc = (N + BC - 1) / BC;
    fetch(0);
    stash(0);
    __syncthreads(); /* the first chunk is in shared memory before anyone multiplies */

    float acc[SA_TM][SA_TN] = {}; /* O_i: this thread's 8 x 8 outputs, for the whole sweep */
    for (int j = 0; j < Tc; j++) {
        if (j + 1 < Tc) fetch(j + 1); /* the next chunk's loads are in flight during the products */
        const float *P_c = P_s + (j & 1) * BC * PS, *V_c = V_s + (j & 1) * BC * D;
#pragma unroll
        for (int k = 0; k < BC; k++)
            outer_product(acc, f4(P_c + k * PS + 4 * ty), f4(P_c + k * PS + BR / 2 + 4 * ty), f4(V_c + k * D + 4 * tx),
                          f4(V_c + k * D + D / 2 + 4 * tx));
        if (j + 1 < Tc) stash((j + 1) & 1);
        __syncthreads(); /* the chunk just stashed is complete before it is read, and every thread is done with
                            chunk j before the next stash overwrites its buffer */
    }

    /* O_i to HBM: rows of d elements always start 4-element aligned (d is a multiple of 4). */
#pragma unroll
    for (int i = 0; i < SA_TM; i++) {
        const int q = q0 + owned(i, ty, BR);
        if (q < N) {
#pragma unroll
            for (int h = 0; h < 2; h++)
                IO_STORE(vec4_at(O + (size_t)q * D + h * (D / 2) + 4 * tx), Storage<T>::narrow(scaled(&acc[i][4 * h], 1.f)));
        }
    }
    IO_TALLY_FLUSH();
}

// ---- launchers ---------------------------------------------------------------------------------------------

/* The compiled kernels: for each storage type, the two GEMMs for d = 32, 64, 128 and the two softmax kernels
 * (short rows: one warp per row; long rows: one block per row). */
template <typename T>
static const void *kernel_of_type(int which, int d, int N) {
    if (which == SA_SOFTMAX)
        return softmax_row_per_warp(N) ? (const void *)softmax_warp_kernel<T> : (const void *)softmax_kernel<T>;
    switch (d) {
    case 32: return which == SA_QK ? (const void *)qk_gemm_kernel<T, 32> : (const void *)pv_gemm_kernel<T, 32>;
    case 64: return which == SA_QK ? (const void *)qk_gemm_kernel<T, 64> : (const void *)pv_gemm_kernel<T, 64>;
    case 128: return which == SA_QK ? (const void *)qk_gemm_kernel<T, 128> : (const void *)pv_gemm_kernel<T, 128>;
    default: return nullptr;
    }
}

typedef struct {
    const void *kernel;
    dim3 grid;
    int threads;
    size_t smem;
} LaunchConfig;

/* Validation (chapter.c) rejects an unsupported d first; reaching here with one is a programming error. */
static LaunchConfig launch_config(int which, int d, int fp16, int N, int heads) {
    LaunchConfig c;
    c.kernel = fp16 ? kernel_of_type<__half>(which, d, N) : kernel_of_type<float>(which, d, N);
    if (!c.kernel) {
        fprintf(stderr, "chapter 00: no kernel compiled for d=%d\n", d);
        exit(2);
    }
    if (which == SA_QK) {
        c.grid = dim3((unsigned)ceil_div(N, QK_BR), (unsigned)heads);
        c.threads = SA_THREADS;
        c.smem = qk_smem_bytes(d);
    } else if (which == SA_PV) {
        c.grid = dim3((unsigned)ceil_div(N, PV_BR(d)), (unsigned)heads);
        c.threads = SA_THREADS;
        c.smem = pv_smem_bytes(d);
    } else {
        c.grid = dim3((unsigned)softmax_blocks_per_head(N), (unsigned)heads);
        c.threads = softmax_threads(N);
        c.smem = softmax_smem_bytes(N);
    }
    /* past the 48 KB default, a kernel must ask for its dynamic shared memory */
    CUDA_CHECK(cudaFuncSetAttribute(c.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)c.smem));
    return c;
}

static void launch(int which, const StdAttnArgs *a) {
    const LaunchConfig c = launch_config(which, a->d, a->fp16, a->N, a->B * a->H);
    int N = a->N;
    float scale = 1.f / sqrtf((float)a->d);
    const void *Q = a->Q, *K = a->K, *V = a->V;
    void *S = a->S, *P = a->P, *O = a->O;
    void *qk_args[] = {&Q, &K, &S, &N, &scale};
    void *softmax_args[] = {&S, &P, &N};
    void *pv_args[] = {&P, &V, &O, &N};
    void **args = which == SA_QK ? qk_args : which == SA_SOFTMAX ? softmax_args : pv_args;
    CUDA_CHECK(cudaLaunchKernel(c.kernel, c.grid, dim3((unsigned)c.threads), args, c.smem, 0));
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(qk_gemm_launch)(const StdAttnArgs *a) { launch(SA_QK, a); }
extern "C" void IO_VARIANT(softmax_launch)(const StdAttnArgs *a) { launch(SA_SOFTMAX, a); }
extern "C" void IO_VARIANT(pv_gemm_launch)(const StdAttnArgs *a) { launch(SA_PV, a); }

extern "C" void IO_VARIANT(std_attn_resources)(int which, int d, int fp16, int N, KernelResources *r) {
    const LaunchConfig c = launch_config(which, d, fp16, N, 1);
    kernel_resources(c.kernel, c.threads, c.smem, r);
}
