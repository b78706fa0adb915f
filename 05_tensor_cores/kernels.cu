/* kernels.cu: chapter 05, FlashAttention-2 with both matrix products on tensor cores (fp16 or bf16 storage,
 * fp32 accumulation, fp32 softmax statistics).
 *
 *   ./ch05/run [--dtype fp16|bf16] [--causal] [--br 64|128]     one kernel: flash_tc (flash_tc_kernel)
 *
 * What changes from chapter 04 (the algorithm is the same: the loop order, O, m and l on chip, one division at
 * the end, L, the causal mask, a conflict-free shared-memory layout):
 *   1. S_ij = Q_i K_j^T and O_i += P_ij V_j are mma.sync.m16n8k16 instructions: one warp instruction multiplies a
 *      16 x 16 tile of A by a 16 x 8 tile of B (4,096 multiply-adds, 128 FFMA instructions' worth). A warp owns
 *      16 query rows; its operands come from shared memory by ldmatrix (.trans for V), 8 rows of 16 bytes at a
 *      time, into the register layout mma expects.
 *   2. S and P never touch shared memory: the accumulator layout of S (lane = row g and g + 8, columns 2t, 2t+1)
 *      is, after the softmax and a conversion to 16 bits, exactly the A-operand layout of P V. The row maximum
 *      and sum are shuffles among the 4 lanes of a quad.
 *   3. Q_i stays in registers for the whole sweep (its A fragments), K_j and V_j are double-buffered: the next
 *      block's cp.async copies (sm_80 on) run while this block computes.
 *   4. exp2 with the scale folded into the scores, as before; the causal mask is applied only in the blocks that
 *      cross the diagonal or the end of the sequence.
 * On sm_75 (the article's GPU) the same kernel runs on mma.sync.m16n8k8 (two per k16) with plain loads, fp16
 * only; bf16 needs sm_80 and is rejected before launch (chapter.c).
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <type_traits>

#include "io_count.cuh"
#include "kernels.h"
#include "tiles.h"

static constexpr float LOG2E = 1.4426950408889634f;
static constexpr float LN2 = 0.6931471805599453f;

/* Element offset of 16-byte chunk c of row r in a [rows][D] tile: chunks swizzled by the row (tiles.h). */
template <int D>
static __device__ __forceinline__ int swz(int r, int c) {
    return r * D + ((c ^ (r & 7)) << 3);
}

static __device__ __forceinline__ unsigned smem_addr(const void *p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

/* COPY16(dst_s, src, real): 16 bytes from global to shared memory: cp.async from sm_80 on (no registers,
 * waited for by cp_async_wait_all), a plain copy before sm_80 and in the instrumented build (which counts it
 * with IO_LOAD, in the kernel's own tally: hence a macro). Rows past the end of the sequence (real = false)
 * are zeros, and read nothing. */
#if __CUDA_ARCH__ >= 800 && !defined(COUNT_IO)
static __device__ __forceinline__ void cp_async16(void *dst_s, const void *src, bool real) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst_s)), "l"(src),
                 "r"(real ? 16 : 0)
                 : "memory");
}
#define COPY16(dst_s, src, real) cp_async16((dst_s), (src), (real))
#else
#define COPY16(dst_s, src, real)                                                                          \
    (*reinterpret_cast<uint4 *>(dst_s) =                                                                  \
         (real) ? IO_LOAD(*reinterpret_cast<const uint4 *>(src)) : make_uint4(0, 0, 0, 0))
#endif
static __device__ __forceinline__ void cp_async_commit() {
#if __CUDA_ARCH__ >= 800 && !defined(COUNT_IO)
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
static __device__ __forceinline__ void cp_async_wait_all() {
#if __CUDA_ARCH__ >= 800 && !defined(COUNT_IO)
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
}

/* Four 8 x 8 matrices of 16-bit elements: lane l gives the address of row l % 8 of matrix l / 8; register j
 * receives, in every lane, row lane / 4 and columns 2 (lane % 4), +1 of matrix j (or of its transpose). */
static __device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const void *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}
static __device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], const void *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

/* c += A (16 x 16, 4 registers) B (16 x 8, 2 registers), fp32 accumulators, for the storage type T. */
template <typename T>
static __device__ __forceinline__ void mma16816(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
#if __CUDA_ARCH__ >= 800
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#elif __CUDA_ARCH__ >= 750
    /* sm_75: two m16n8k8, the k halves of the same fragments (fp16 only; bf16 is rejected on the host) */
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        __trap();
    } else {
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
                     "{%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(b0));
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
                     "{%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[2]), "r"(a[3]), "r"(b1));
    }
#endif
}

/* Two floats as two 16-bit elements of T in one register (the lower address in the low half). */
template <typename T>
static __device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<const uint32_t *>(&v);
    } else {
        const __half2 v = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<const uint32_t *>(&v);
    }
}

/* The 4 lanes of a quad (lane / 4 = the row) hold a row's columns: xor 1 and 2 stay in the quad. */
static __device__ __forceinline__ float quad_max(float x) {
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
    return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
static __device__ __forceinline__ float quad_sum(float x) {
    x += __shfl_xor_sync(0xffffffffu, x, 1);
    return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

/* Grid (Tr, B*H), 2 Br threads (Br / 16 warps). scale_log2 = log2(e) / sqrt(d). */
template <int D, int BR, typename T>
static __global__ void __launch_bounds__(BR / TC_ROWS_PER_WARP * 32)
    flash_tc_kernel(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V, T *__restrict__ O,
                    float *__restrict__ L, int N, int causal, float scale_log2) {
    IO_TALLY;
    constexpr int BC = TC_BC, THREADS = BR / TC_ROWS_PER_WARP * 32, CH = D / 8; /* 16-byte chunks per row */
    constexpr int NS = BC / 8, NO = D / 8;                                     /* n8 tiles of S and of O  */
    extern __shared__ uint4 smem[];
    T *Q_s = reinterpret_cast<T *>(smem); /* [BR][D], swizzled; later this warp's rows of O            */
    T *K_s = Q_s + BR * D;                /* [2][BC][D], swizzled                                       */
    T *V_s = K_s + TC_KV_BUFFERS * BC * D;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4; /* mma's fragment coordinates: row g (and g + 8), columns 2t, 2t+1 */
    const int i = causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x; /* heavy causal blocks first (ch03) */
    const size_t head = (size_t)blockIdx.y * N;
    const int q0 = i * BR, q_rows = min(BR, N - q0);
    const int w0 = warp * TC_ROWS_PER_WARP; /* this warp's first row in Q_i */
    const int Tc = (N + BC - 1) / BC;
    const int Tc_i = causal ? min(Tc, (q0 + q_rows - 1) / BC + 1) : Tc;

    auto load_kv = [&](int j, int buf) { /* K_j, V_j into buffer buf: whole rows, zeros past N */
        const int k0 = j * BC, kv_rows = min(BC, N - k0);
        for (int x = threadIdx.x; x < BC * CH; x += THREADS) {
            const int r = x / CH, c = x % CH;
            const size_t at = (head + k0 + (r < kv_rows ? r : 0)) * D + 8 * c;
            COPY16(&K_s[buf * BC * D + swz<D>(r, c)], &K[at], r < kv_rows);
            COPY16(&V_s[buf * BC * D + swz<D>(r, c)], &V[at], r < kv_rows);
        }
    };

    /* Q_i and the first K/V block, then Q_i's A fragments into registers for the whole sweep. */
    for (int x = threadIdx.x; x < BR * CH; x += THREADS) {
        const int r = x / CH, c = x % CH;
        COPY16(&Q_s[swz<D>(r, c)], &Q[(head + q0 + (r < q_rows ? r : 0)) * D + 8 * c], r < q_rows);
    }
    load_kv(0, 0);
    cp_async_commit();
    cp_async_wait_all();
    __syncthreads(); /* Q_i, K_0, V_0 are in shared memory before any warp reads them */
    uint32_t qf[D / 16][4];
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) /* 16 rows x 16 columns: matrices (rows 0-7 | 8-15) x (cols 0-7 | 8-15) */
        ldmatrix_x4(qf[kk], &Q_s[swz<D>(w0 + lane % 8 + (lane / 8 % 2) * 8, 2 * kk + lane / 16)]);

    float o[NO][4]; /* O_i, unnormalised: rows g, g + 8 of this warp, columns 8n + 2t, +1 */
#pragma unroll
    for (int n = 0; n < NO; n++) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f}; /* rows g and g + 8: running max (log2), sum */

    for (int j = 0; j < Tc_i; j++) {
        if (j > 0) {
            cp_async_wait_all();
            __syncthreads(); /* K_j, V_j have landed, and every warp is done with block j-1's buffer, which
                                the next block's copies overwrite */
        }
        if (j + 1 < Tc_i) load_kv(j + 1, (j + 1) % TC_KV_BUFFERS); /* runs during this block's math */
        cp_async_commit();
        const T *Kb = K_s + (j % TC_KV_BUFFERS) * BC * D, *Vb = V_s + (j % TC_KV_BUFFERS) * BC * D;
        const int k0 = j * BC;

        /* S = Q_i K_j^T: K_j's rows are B's columns, so ldmatrix without .trans gives B fragments: matrices
         * (keys 0-7 | 8-15 of 16) x (features 0-7 | 8-15). */
        float s[NS][4];
#pragma unroll
        for (int n = 0; n < NS; n++) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++)
#pragma unroll
            for (int nn = 0; nn < NS / 2; nn++) {
                uint32_t b[4];
                ldmatrix_x4(b, &Kb[swz<D>(16 * nn + lane % 8 + (lane / 16) * 8, 2 * kk + lane / 8 % 2)]);
                mma16816<T>(s[2 * nn], qf[kk], b[0], b[1]);
                mma16816<T>(s[2 * nn + 1], qf[kk], b[2], b[3]);
            }

        /* Online softmax of rows g and g + 8. Keys past N, and with the causal mask keys after the query, are
         * -inf; only the blocks that reach past N or across the diagonal need the test. */
        const bool masked = k0 + BC > N || (causal && k0 + BC - 1 > q0 + w0);
#pragma unroll
        for (int h = 0; h < 2; h++) { /* h = 0: row g, h = 1: row g + 8 */
            const int query = q0 + w0 + g + 8 * h;
            float bmax = -INFINITY;
#pragma unroll
            for (int n = 0; n < NS; n++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    float x = s[n][2 * h + e] * scale_log2;
                    const int key = k0 + 8 * n + 2 * t + e;
                    if (masked && (key >= N || (causal && key > query))) x = -INFINITY;
                    s[n][2 * h + e] = x;
                    bmax = fmaxf(bmax, x);
                }
            const float m_new = fmaxf(m[h], quad_max(bmax));
            const float m_ref = m_new == -INFINITY ? 0.f : m_new; /* a row with every key masked: p = 0 */
            const float alpha = exp2f(m[h] - m_ref);
            m[h] = m_new;
            l[h] *= alpha;
#pragma unroll
            for (int n = 0; n < NO; n++) o[n][2 * h] *= alpha, o[n][2 * h + 1] *= alpha;
#pragma unroll
            for (int n = 0; n < NS; n++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const float p = exp2f(s[n][2 * h + e] - m_ref);
                    l[h] += p; /* this lane's columns; quad_sum adds the 4 shares at the end */
                    s[n][2 * h + e] = p;
                }
        }

        /* O_i += P V_j. P's accumulator layout is the A layout of the next mma: for keys 16 kk .. 16 kk + 15,
         * a0/a1 = rows g/g+8 of S tile 2 kk, a2/a3 = the same of tile 2 kk + 1, packed to 16 bits. V_j's rows
         * are B's rows (k = key), so ldmatrix.trans: matrices (keys 0-7 | 8-15) x (features 0-7 | 8-15). */
#pragma unroll
        for (int kk = 0; kk < BC / 16; kk++) {
            const uint32_t a[4] = {pack2<T>(s[2 * kk][0], s[2 * kk][1]), pack2<T>(s[2 * kk][2], s[2 * kk][3]),
                                   pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                   pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
            for (int dn = 0; dn < NO / 2; dn++) {
                uint32_t b[4];
                ldmatrix_x4_trans(b, &Vb[swz<D>(16 * kk + lane % 8 + (lane / 8 % 2) * 8, 2 * dn + lane / 16)]);
                mma16816<T>(o[2 * dn], a, b[0], b[1]);
                mma16816<T>(o[2 * dn + 1], a, b[2], b[3]);
            }
        }
    }

    /* Delayed normalisation; O_i through this warp's rows of Q_s (no longer needed) so that every global store is
     * 16 contiguous bytes; L gathered into lanes 0-15 (lane x: row x of the warp) for one 64-byte store. */
    float inv[2], L_row[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const float l_row = quad_sum(l[h]);
        inv[h] = l_row > 0.f ? 1.f / l_row : 0.f;
        L_row[h] = l_row > 0.f ? (m[h] + log2f(l_row)) * LN2 : -INFINITY;
    }
    __syncwarp(); /* every lane of the warp is done with its ldmatrix reads of Q_s before its rows are reused */
#pragma unroll
    for (int n = 0; n < NO; n++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int r = w0 + g + 8 * h;
            *reinterpret_cast<uint32_t *>(&Q_s[swz<D>(r, n) + 2 * t]) =
                pack2<T>(o[n][2 * h] * inv[h], o[n][2 * h + 1] * inv[h]);
        }
    const float L_lo = __shfl_sync(0xffffffffu, L_row[0], (lane % 8) * 4);
    const float L_hi = __shfl_sync(0xffffffffu, L_row[1], (lane % 8) * 4);
    __syncwarp(); /* this warp's rows of O are in Q_s before its lanes read them back across */
    for (int x = lane; x < TC_ROWS_PER_WARP * CH; x += 32) {
        const int r = w0 + x / CH, c = x % CH;
        if (r < q_rows)
            IO_STORE(*reinterpret_cast<uint4 *>(&O[(head + q0 + r) * D + 8 * c]),
                     *reinterpret_cast<const uint4 *>(&Q_s[swz<D>(r, c)]));
    }
    if (lane < TC_ROWS_PER_WARP && w0 + lane < q_rows) IO_STORE(L[head + q0 + w0 + lane], lane < 8 ? L_lo : L_hi);
    IO_TALLY_FLUSH();
}

/* The storage type T of a flash_tc_kernel<D, BR, T> pointer. */
template <typename F>
struct storage_of;
template <typename T, typename... Rest>
struct storage_of<void (*)(const T *, Rest...)> {
    using type = T;
};

/* The kernel for (d, Br, dtype), its dynamic shared memory allowed past the 48 KB default, handed to f (a
 * launch or a resource query). 2 x 2 x 2 instantiations per build. Validation (chapter.c) rejects other shapes
 * first; reaching the end with one is a programming error. */
template <typename F>
static void with_kernel(int d, int Br, int Bc, int dtype, F f) {
    const size_t smem = smem_bytes(Br, Bc, d);
#define CASE(D_, BR_, T_)                                                                                    \
    if (d == D_ && Br == BR_ && dtype == (std::is_same_v<T_, __half> ? DTYPE_FP16 : DTYPE_BF16) && Bc == TC_BC) { \
        CUDA_CHECK(cudaFuncSetAttribute(flash_tc_kernel<D_, BR_, T_>, cudaFuncAttributeMaxDynamicSharedMemorySize, \
                                        (int)smem));                                                         \
        f(flash_tc_kernel<D_, BR_, T_>, smem);                                                               \
        return;                                                                                              \
    }
    CASE(64, 64, __half) CASE(64, 128, __half) CASE(128, 64, __half) CASE(128, 128, __half)
    CASE(64, 64, __nv_bfloat16) CASE(64, 128, __nv_bfloat16) CASE(128, 64, __nv_bfloat16) CASE(128, 128, __nv_bfloat16)
#undef CASE
    fprintf(stderr, "flash_tc: no kernel compiled for d=%d Br=%d Bc=%d dtype %d\n", d, Br, Bc, dtype);
    exit(2);
}

extern "C" void IO_VARIANT(flash_tc_launch)(const AttnArgs *a) {
    const dim3 grid((unsigned)ceil_div(a->N, a->Br), (unsigned)(a->B * a->H));
    const float scale_log2 = LOG2E / sqrtf((float)a->d);
    with_kernel(a->d, a->Br, a->Bc, a->dtype, [&](auto kernel, size_t smem) {
        using T = typename storage_of<decltype(kernel)>::type;
        kernel<<<grid, threads_per_block(a->Br), smem>>>(static_cast<const T *>(a->Q), static_cast<const T *>(a->K),
                                                         static_cast<const T *>(a->V), static_cast<T *>(a->O), a->L,
                                                         a->N, a->causal, scale_log2);
    });
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(flash_tc_resources)(int d, int Br, int Bc, int dtype, KernelResources *r) {
    with_kernel(d, Br, Bc, dtype, [&](auto kernel, size_t smem) {
        kernel_resources((const void *)kernel, threads_per_block(Br), smem, r);
    });
}
