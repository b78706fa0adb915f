/* wmma.cu: chapter 05, step 1: FlashAttention-2 with both matrix products on tensor cores through the C++ WMMA
 * API (nvcuda::wmma): 16 x 16 x 16 fragments, fp16 or bf16 inputs, fp32 accumulators.
 *
 *   ./ch05/run --kernel wmma [--dtype fp16|bf16] [--causal]        one kernel: flash_wmma (flash_wmma_kernel)
 *
 * The simplest correct tensor-core version of chapter 03's loop nest (Algorithm 2 of the FlashAttention-2
 * paper), and the baseline of the next two steps (kernels.cu). A block owns the query block Q_i of Br = 64 rows,
 * one warp per 16 rows, and sweeps the K/V blocks K_j, V_j of Bc = 64 keys (all Tc, or with the causal mask
 * those on or below the diagonal). Per K/V block:
 *   1. K_j and V_j into shared memory with plain 16-byte loads (Q_i once, before the sweep).
 *   2. S_ij = Q_i K_j^T: each warp multiplies its 16 rows of Q_i by K_j^T with wmma::mma_sync, fp32
 *      accumulator fragments, and stores them to shared memory (store_matrix_sync). A fragment's elements are
 *      spread over the lanes in a layout WMMA does not specify, so the softmax, which needs whole rows, cannot
 *      read them where they are: the scores go through shared memory. That round trip (16 Bc 4 bytes written
 *      and read back per warp and block) is the cost this step pays and the next one (mma.sync, whose fragment
 *      layout is documented) removes by keeping S and P in registers.
 *   3. The online softmax on the warp's rows of S_ij in fp32, two lanes per row (32 keys each): scores scaled
 *      into log2 units (scale_log2 = log2 e / sqrt d, so each exponential is one exp2), the running maximum m and
 *      sum l of each row, alpha = exp2(m_old - m_new), P_ij = exp2(S - m_new), written over S_ij in the storage
 *      type (the A operand of the next product).
 *   4. O_i += P_ij V_j by wmma. O_i lives in shared memory in fp32 for the whole sweep. The rescaling
 *      O_i <- alpha O_i is per row, and an accumulator fragment does not say which of its elements belong to which
 *      row; in shared memory the two lanes of a row rescale it in plain code, then each warp loads its rows of
 *      O_i as accumulator fragments, adds P_ij V_j with mma_sync and stores them back. (Keeping O_i in fragments
 *      would save that load and store per block but needs the fragment layout: the next step's point.)
 * At the end the delayed normalisation O_i / l, O_i written in the storage type with 16-byte stores, and
 * L = (m + log2 l) ln 2 (natural log, fp32). Keys past N are -inf (K_j and V_j rows past N are zeros, never
 * read from global memory); query rows past N are computed on zeros and not written.
 *
 * Every global load and store goes through IO_LOAD / IO_STORE (common/io_tally.cuh): the instrumented build
 * counts Q_i once, K_j and V_j per visited block, O_i and L_i once: the chapter's model (model.c) to the byte.
 * WMMA on 16-bit inputs needs sm_70 for fp16 and sm_80 for bf16; the book builds sm_75 on, where bf16 is
 * rejected before launch (chapter.c) and its kernel body is a trap. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <type_traits>

#include "io_tally.cuh"
#include "kernels.h"
#include "storage.cuh"
#include "wmma_tiles.h"

using namespace nvcuda;

template <typename T>
static __device__ __forceinline__ T to_storage(float x) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(x);
    else return __float2half_rn(x);
}

/* The kernel's work (flash_wmma_kernel below only picks it or, for bf16 before sm_80, a trap). Grid (Tr, B*H),
 * WMMA_THREADS = 128 threads (4 warps). */
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
    static_assert((16 * LDT * 2) % 32 == 0 && (16 * LDS * 4) % 32 == 0 && (16 * LDO * 4) % 32 == 0,
                  "wmma: 16 rows of every tile keep fragment pointers 32-byte aligned");
    static_assert((BR * LDT * 2) % 32 == 0 && (BC * LDT * 2) % 32 == 0 && (BR * LDS * 4) % 32 == 0,
                  "wmma: every tile starts 32-byte aligned");

    extern __shared__ __align__(128) uint4 smem[]; /* wmma's pointers must be 32-byte aligned: every tile below
                                                      starts at a multiple of 32 bytes from here */
    T *Q_s = reinterpret_cast<T *>(smem);                  /* [BR][LDT] */
    T *K_s = Q_s + BR * LDT;                               /* [BC][LDT] */
    T *V_s = K_s + BC * LDT;                               /* [BC][LDT] */
    float *S_s = reinterpret_cast<float *>(V_s + BC * LDT); /* [BR][LDS] */
    T *P_s = reinterpret_cast<T *>(S_s);                   /* [BR][LDP]: row r over the first half of S's row r */
    float *O_s = S_s + BR * LDS;                           /* [BR][LDO] */

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int w0 = warp * WMMA_ROWS_PER_WARP; /* this warp's first row in Q_i */
    const int i = causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x; /* heavy causal blocks first (ch03) */
    const size_t head = (size_t)blockIdx.y * N;
    const int q0 = i * BR, q_rows = min(BR, N - q0);
    const int Tc = (N + BC - 1) / BC;
    const int Tc_i = causal ? min(Tc, (q0 + q_rows - 1) / BC + 1) : Tc;

    /* The softmax's lanes: lane owns keys h * 32 .. h * 32 + 31 of row r of the warp's rows of S_ij, and
     * columns h * D/2 .. of the same row of O_i. */
    const int r = w0 + lane / 2, h = lane % 2;
    const int query = q0 + r;

    /* Q_i: whole rows, zeros past N (not read). O_i = 0: each warp its own rows (only that warp ever touches
     * them). */
    for (int x = threadIdx.x; x < BR * CH; x += THREADS) {
        const int row = x / CH, c = x % CH;
        *reinterpret_cast<uint4 *>(&Q_s[row * LDT + 8 * c]) =
            row < q_rows ? IO_LOAD(*reinterpret_cast<const uint4 *>(&Q[(head + q0 + row) * D + 8 * c]))
                         : make_uint4(0, 0, 0, 0);
    }
    for (int x = lane; x < WMMA_ROWS_PER_WARP * D; x += 32) O_s[(w0 + x / D) * LDO + x % D] = 0.f;

    float m = -INFINITY, l = 0.f; /* row r: running maximum (log2 units; both lanes hold it), this lane's share
                                     of the running sum (the two shares are added at the end) */

    for (int j = 0; j < Tc_i; j++) {
        const int k0 = j * BC, kv_rows = min(BC, N - k0);
        if (j > 0)
            __syncthreads(); /* every warp is done reading K_{j-1} and V_{j-1} (its S and P V products) before
                                they are overwritten by K_j and V_j */
        for (int x = threadIdx.x; x < BC * CH; x += THREADS) {
            const int row = x / CH, c = x % CH;
            const size_t at = (head + k0 + row) * D + 8 * c;
            const bool real = row < kv_rows;
            *reinterpret_cast<uint4 *>(&K_s[row * LDT + 8 * c]) =
                real ? IO_LOAD(*reinterpret_cast<const uint4 *>(&K[at])) : make_uint4(0, 0, 0, 0);
            *reinterpret_cast<uint4 *>(&V_s[row * LDT + 8 * c]) =
                real ? IO_LOAD(*reinterpret_cast<const uint4 *>(&V[at])) : make_uint4(0, 0, 0, 0);
        }
        __syncthreads(); /* K_j and V_j (and, for j = 0, Q_i) are in shared memory before any warp reads them:
                            each warp reads rows of them that other warps wrote */

        /* S_ij = Q_i K_j^T, the warp's 16 rows x BC keys: BC / 16 accumulator fragments, D / 16 steps of k.
         * A = Q_i's rows (row-major, ldm LDT). B = K_j^T (16 features x 16 keys): element (k, n) is K_j[n][k],
         * at K_s[n * LDT + k]: K_j row-major read as a col_major matrix_b, ldm LDT. */
        {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> s[BC / 16];
#pragma unroll
            for (int n = 0; n < BC / 16; n++) wmma::fill_fragment(s[n], 0.f);
#pragma unroll
            for (int kk = 0; kk < D / 16; kk++) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
                wmma::load_matrix_sync(a, &Q_s[w0 * LDT + 16 * kk], LDT);
#pragma unroll
                for (int n = 0; n < BC / 16; n++) {
                    wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> b;
                    wmma::load_matrix_sync(b, &K_s[16 * n * LDT + 16 * kk], LDT);
                    wmma::mma_sync(s[n], a, b, s[n]);
                }
            }
#pragma unroll
            for (int n = 0; n < BC / 16; n++)
                wmma::store_matrix_sync(&S_s[w0 * LDS + 16 * n], s[n], LDS, wmma::mem_row_major);
        }
        __syncwarp(); /* the warp's rows of S_ij are in shared memory (each lane stored parts of many rows)
                         before its lanes read whole rows */

        /* Online softmax of row r, keys k0 + 32 h .. + 31. Keys past N, and with the causal mask keys after the
         * query, are -inf; only the blocks that reach past N or across the diagonal need the test. */
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
        const float m_ref = m_new == -INFINITY ? 0.f : m_new; /* a row with every key masked so far: p = 0 */
        const float alpha = exp2f(m - m_ref);
        m = m_new;
        l *= alpha;
#pragma unroll
        for (int c = 0; c < KEYS_PER_LANE; c++) {
            p[c] = exp2f(p[c] - m_ref);
            l += p[c];
        }
        for (int c = 0; c < COLS_PER_LANE; c++) O_s[r * LDO + h * COLS_PER_LANE + c] *= alpha;
        __syncwarp(); /* both lanes of row r have read their scores before P_ij overwrites them: row r of P lies
                         over scores 0-31 of row r, and the keys 32-63 of P (written by lane h = 1) over scores
                         16-31, read by lane h = 0 */
#pragma unroll
        for (int c = 0; c < KEYS_PER_LANE; c += 2)
            *reinterpret_cast<uint32_t *>(&P_s[r * LDP + h * KEYS_PER_LANE + c]) = pack2<T>(p[c], p[c + 1]);
        __syncwarp(); /* the warp's rows of P_ij and of the rescaled O_i are in shared memory before its fragment
                         loads read them (each lane loads parts of many rows) */

        /* O_i += P_ij V_j, the warp's 16 rows x D: D / 16 accumulator fragments loaded from O_s, BC / 16 steps
         * of k, stored back. A = P_ij (row-major, ldm LDP); B = V_j (16 keys x 16 features, row-major, ldm
         * LDT). */
        {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a[BC / 16];
#pragma unroll
            for (int kk = 0; kk < BC / 16; kk++) wmma::load_matrix_sync(a[kk], &P_s[w0 * LDP + 16 * kk], LDP);
#pragma unroll
            for (int dn = 0; dn < D / 16; dn++) {
                wmma::fragment<wmma::accumulator, 16, 16, 16, float> o;
                wmma::load_matrix_sync(o, &O_s[w0 * LDO + 16 * dn], LDO, wmma::mem_row_major);
#pragma unroll
                for (int kk = 0; kk < BC / 16; kk++) {
                    wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b;
                    wmma::load_matrix_sync(b, &V_s[16 * kk * LDT + 16 * dn], LDT);
                    wmma::mma_sync(o, a[kk], b, o);
                }
                wmma::store_matrix_sync(&O_s[w0 * LDO + 16 * dn], o, LDO, wmma::mem_row_major);
            }
        }
        __syncwarp(); /* the warp's fragment stores of O_i are visible to all its lanes before they read the rows
                         (the next block's rescaling, or the normalisation at the end): a row was stored by many
                         lanes */
    }

    /* Delayed normalisation: row r's sum is the two lanes' shares. */
    const float l_row = l + __shfl_xor_sync(0xffffffffu, l, 1);
    const float inv = l_row > 0.f ? 1.f / l_row : 0.f;
    const float L_row = l_row > 0.f ? (m + log2f(l_row)) * LN2 : -INFINITY;

    /* O_i: the warp's 16 rows, 16 contiguous bytes per store (8 elements of T); row x / CH's 1/l from its lane
     * 2 (x / CH) (the loop runs CH / 2 times in every lane, so every lane reaches the shuffle). */
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
    if constexpr (std::is_same_v<T, __nv_bfloat16>) { /* no bf16 WMMA before sm_80: rejected on the host */
        __trap();
    } else
#endif
    {
        flash_wmma_forward<D, T>(Q, K, V, O, L, N, causal, scale_log2);
    }
}

/* The kernel for (d, Br, Bc, dtype), its dynamic shared memory allowed past the 48 KB default, handed to f (a
 * launch or a resource query). 2 x 2 instantiations per build. Validation (chapter.c) rejects other shapes
 * first; reaching the end with one is a programming error. */
template <typename F>
static void with_wmma_kernel(int d, int Br, int Bc, int dtype, F f) {
    const size_t smem = wmma_smem_bytes(Br, Bc, d);
#define CASE(D_, T_)                                                                                          \
    if (d == D_ && dtype == storage_dtype<T_> && Br == WMMA_BR && Bc == WMMA_BC) {                            \
        CUDA_CHECK(cudaFuncSetAttribute(flash_wmma_kernel<D_, T_>, cudaFuncAttributeMaxDynamicSharedMemorySize, \
                                        (int)smem));                                                          \
        f(flash_wmma_kernel<D_, T_>, smem);                                                                   \
        return;                                                                                               \
    }
    CASE(64, __half) CASE(128, __half) CASE(64, __nv_bfloat16) CASE(128, __nv_bfloat16)
#undef CASE
    fprintf(stderr, "flash_wmma: no kernel compiled for d=%d Br=%d Bc=%d dtype %d\n", d, Br, Bc, dtype);
    exit(2);
}

extern "C" void IO_VARIANT(flash_wmma_launch)(const AttnArgs *a) {
    const dim3 grid((unsigned)((a->N + WMMA_BR - 1) / WMMA_BR), (unsigned)(a->B * a->H));
    const float scale_log2 = LOG2E / sqrtf((float)a->d);
    with_wmma_kernel(a->d, a->Br, a->Bc, a->dtype, [&](auto kernel, size_t smem) {
        using T = typename storage_of<decltype(kernel)>::type;
        kernel<<<grid, WMMA_THREADS, smem>>>(static_cast<const T *>(a->Q), static_cast<const T *>(a->K),
                                             static_cast<const T *>(a->V), static_cast<T *>(a->O), a->L, a->N,
                                             a->causal, scale_log2);
    });
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(flash_wmma_resources)(int d, int Br, int Bc, int dtype, KernelResources *r) {
    with_wmma_kernel(d, Br, Bc, dtype, [&](auto kernel, size_t smem) {
        kernel_resources((const void *)kernel, WMMA_THREADS, smem, r);
    });
}
