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
 *      reads Q_i, O_i, l_i, m_i and writes O_i, l_i, m_i back, so Q and O make Tc round trips.
 *
 * Algorithm 1 (Dao et al., 2022), grid (B, H), one block of FV1_THREADS threads per head:
 *     for j in 0 .. Tc-1:                                          line 5
 *       K_j, V_j -> shared memory                                  line 6
 *       for i in 0 .. Tr-1:                                        line 7
 *         Q_i -> shared memory, O_i -> registers, l_i, m_i         line 8
 *         S_ij = scale * Q_i K_j^T                                 line 9
 *         m~ = rowmax(S_ij), P~ = exp(S_ij - m~), l~ = rowsum(P~)  line 10
 *         m_new = max(m_i, m~), l_new = e^(m_i-m_new) l_i + e^(m~-m_new) l~    line 11
 *         O_i <- (l_i e^(m_i-m_new) O_i + e^(m~-m_new) P~ V_j) / l_new -> HBM line 12
 *         l_i <- l_new, m_i <- m_new -> HBM                        line 13
 * O_i is normalised on every step (the division by l_new sits in the hot loop), as in the paper and the
 * article's v1.
 *
 * One thing is added to the paper's text, and it changes when bytes move, not which or how many: line 8 is
 * done one step ahead. One block per head gives 640 blocks at the article's size, under 5 per SM, all doing
 * the same steps at about the same time; if every step loaded Q_i and then waited for it, HBM would idle
 * while the SMs compute and the SMs would idle while HBM delivers: the time would approach the sum of the
 * two. So each step, once it is done with its own Q_i (after the scores) and its own m_i, l_i (after the
 * statistics), starts the loads of the next step's, and O_i's loads are issued at the top of its own step,
 * which reads them only at its end. Q_i, K_j and V_j go to shared memory with cp.async on sm_80 and later (no
 * registers; the thread waits only at cp_async_wait_all()), with plain loads before sm_80.
 *
 * A step runs in three phases, each with the thread layout that suits it, between __syncthreads(), and
 * starts the next step's loads where its own data are no longer needed:
 *               top: O_i loads issued; wait for Q_i (started by the previous step); barrier
 *   scores      S_ij from Q_i and K_j; barrier; start Q_i+1 into Q_s
 *   statistics  m~, l~, P~, m_new, l_new -> HBM; barrier; start m_i+1, l_i+1 into registers
 *   output      O_i -> HBM (its loads have landed by now)
 * and the thread layouts, chosen for shared memory, which is what limits this kernel (ncu: L1/shared-memory
 * throughput near 80% of peak, waits on shared loads the largest stall reason). A warp's shared load costs
 * at least one "wavefront" (one cycle of the SM's shared-memory pipe) per 128 bytes it returns to the warp,
 * so a float4 load (LDS.128) costs 4 wavefronts, however few distinct addresses it reads, with one exception:
 * when lanes n and n^1 (or n and n^2) always read the same address, the two halves of the warp are served
 * in one wavefront each, 2 in all, provided the addresses of each half-warp fall in different banks. Every
 * layout below is built so that each of its float4 loads is such a "paired" load:
 *   scores      thread = a TR x TC tile of S_ij (TR = Br/16 rows, TC = Bc/8 key columns: 2 x 4 at 32 x 32):
 *               rows r + 16u, columns c + 8v. A warp holds all 16 row groups and 2 column groups, lane bit
 *               0 choosing the column group: lanes n and n^1 read the same Q_i float4 (16 rows per warp;
 *               Q_i's rows padded by 4 floats, so 8 consecutive rows cover the 32 banks), lanes n and n^2 the
 *               same K_j float4 (2 rows per warp; K_j's rows padded too, or both would sit in the same
 *               banks). Per 4 values of k a thread makes TR + TC loads for TR x TC x 4 FMAs.
 *   statistics  thread = (row r, every (128/Br)-th column); the 128/Br lanes of a row meet in shuffles.
 *   output      thread = (rows r, r + 512/d, ..., one float4 column of O), lane bit 0 choosing the column
 *               and bit 1 the row: lanes n and n^1 read the same P~_ij float4, n and n^2 the same V_j
 *               float4. A warp's loads and stores of O_i still cover whole, aligned 128- or 256-byte runs.
 * The layouts of the first version of this chapter (one query row per thread for the scores; 16 consecutive
 * float4 columns per half-warp for the output) needed 1.58 times the wavefronts and ran 7.22 ms instead of
 * 6.32 (README, "Shared memory, measured").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "io_count.cuh"
#include "kernels.h"
#include "tiles.h"

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

/* ASYNC_COPY(dst_s, src): one float4 from HBM into shared memory, started now and complete (for this thread)
 * after cp_async_wait_all(); a barrier after that shows it to the whole block. From sm_80 on it is cp.async:
 * the copy needs no register and the thread goes on with other work meanwhile. Before sm_80, and in the
 * instrumented build (which counts the request with IO_LOAD), it is a plain load and store: the same bytes,
 * complete at once, and cp_async_wait_all() has nothing to wait for. */
#if __CUDA_ARCH__ >= 800 && !defined(COUNT_IO)
static __device__ __forceinline__ void cp_async16(float4 *dst_s, const float4 *src) {
    const unsigned dst = (unsigned)__cvta_generic_to_shared(dst_s);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
static __device__ __forceinline__ void cp_async_wait_all() {
    asm volatile("cp.async.wait_all;\n" ::: "memory");
}
#define ASYNC_COPY(dst_s, src) cp_async16(&(dst_s), &(src))
#else
static __device__ __forceinline__ void cp_async_wait_all() {}
#define ASYNC_COPY(dst_s, src) ((dst_s) = IO_LOAD(src))
#endif

/* The LANES lanes of a row are consecutive lanes of one warp: xor LANES/2, ..., 1 stays inside the row. */
template <int LANES>
static __device__ __forceinline__ float row_max(float x) {
    for (int lanes = LANES / 2; lanes > 0; lanes /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, lanes));
    return x;
}
template <int LANES>
static __device__ __forceinline__ float row_sum(float x) {
    for (int lanes = LANES / 2; lanes > 0; lanes /= 2) x += __shfl_xor_sync(0xffffffffu, x, lanes);
    return x;
}

/* Algorithm 1, line 2: O = 0, l = 0, m = -inf in HBM, so that step j = 0 can read them like any other. */
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

/* Algorithm 1, lines 5-15. Grid (B, H), FV1_THREADS threads, FV1_SMEM_FLOATS(BR, BC, D) floats of dynamic
 * shared memory. scale = 1/sqrt(d). */
template <int D, int BR, int BC>
static __global__ void __launch_bounds__(FV1_THREADS)
    flash_v1_kernel(const float *__restrict__ Q, const float *__restrict__ K, const float *__restrict__ V,
                    float *__restrict__ O, float *__restrict__ l, float *__restrict__ m, int N, float scale) {
    IO_TALLY;
    constexpr int QS = D + FV1_Q_PAD, KS = D + FV1_K_PAD; /* row strides of Q_i, K_j and S_ij          */
    constexpr int SS = BC + FV1_S_PAD;                     /* in shared memory                          */
    constexpr int C4 = D / 4;                              /* float4 per row of Q, K, V, O              */
    constexpr int TR = BR / 16, TC = BC / 8;               /* scores: a TR x TC tile of S_ij per thread */
    constexpr int ROW_LANES = FV1_THREADS / BR;            /* statistics: threads per query row         */
    constexpr int CN = BC / ROW_LANES;                     /* statistics: key columns per thread        */
    constexpr int RP = FV1_THREADS / C4;                   /* output: rows covered by one pass          */
    constexpr int RM = BR / RP;                            /* output: rows per thread                   */
    /* How far the k loop of the scores and the c loop of the output are unrolled: more where the tile is
     * narrow; at Bc = 64 (TC = 8) the deeper unrolling makes ptxas spill registers to local memory. */
    constexpr int UNROLL_K = TC <= 4 ? 4 : 2, UNROLL_C = TC <= 4 ? 2 : 1;
    static_assert(FV1_THREADS == 128 && TR * 16 == BR && TC * 8 == BC && ROW_LANES * BR == FV1_THREADS &&
                      CN * ROW_LANES == BC && RP * C4 == FV1_THREADS && RM * RP == BR && ROW_LANES <= 32 &&
                      BR * C4 % FV1_THREADS == 0 && BC * C4 % FV1_THREADS == 0,
                  "tile does not divide among the threads");
    const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);

    extern __shared__ float4 smem[];
    constexpr int K_AT = BR * QS, V_AT = K_AT + BC * KS, S_AT = V_AT + BC * D, STATS_AT = S_AT + BR * SS;
    static_assert(STATS_AT + FV1_ROW_STATS * BR == FV1_SMEM_FLOATS(BR, BC, D), "tiles.h budget != layout");
    float *Q_s = reinterpret_cast<float *>(smem); /* [BR][QS] Q_i                                    */
    float *K_s = Q_s + K_AT;                      /* [BC][KS] K_j, rows as in HBM (not transposed)   */
    float *V_s = Q_s + V_AT;                      /* [BC][D]  V_j                                    */
    float *S_s = Q_s + S_AT;                      /* [BR][SS] S_ij, then P~_ij in place              */
    float *m_s = Q_s + STATS_AT;                  /* [BR] m_i as loaded from HBM                     */
    float *l_s = m_s + BR;                        /* [BR] l_i as loaded from HBM                     */
    float *w_old = l_s + BR;                      /* [BR] l_i e^(m_i - m_new) / l_new                */
    float *w_new = w_old + BR;                    /* [BR] e^(m~ - m_new) / l_new                     */

    const int t = threadIdx.x;
    /* scores: rows sc_r + 16u (u < TR) and key columns sc_c + 8v (v < TC). A warp holds the 16 row groups
     * and 2 column groups, and lane bit 0 picks the column group: lanes n and n^1 read the same Q_i
     * float4, lanes n and n^2 the same K_j float4 (why that matters: the comment at the top). */
    const int sc_r = (t >> 1) % 16, sc_c = (t & 1) | (t >> 5) << 1;
    const int st_r = t / ROW_LANES, st_c0 = t % ROW_LANES; /* statistics: row, first of its columns */
    /* output: rows out_r0 + RP u (u < RM), float4 column out_c4, the same pattern: lanes n and n^1 read the
     * same P~_ij float4, lanes n and n^2 the same V_j float4, and the 8 columns of a half-warp cover all 32
     * banks. */
    const int out_c4 = (t & 1) | (t >> 2) % (C4 / 2) << 1, out_r0 = (t >> 1 & 1) | (t >> 2) / (C4 / 2) << 1;

    const size_t head_row = ((size_t)blockIdx.x * gridDim.y + blockIdx.y) * N; /* grid (B, H) */
    const float4 *Q4 = reinterpret_cast<const float4 *>(Q + head_row * D);
    const float4 *K4 = reinterpret_cast<const float4 *>(K + head_row * D);
    const float4 *V4 = reinterpret_cast<const float4 *>(V + head_row * D);
    float4 *O4 = reinterpret_cast<float4 *>(O + head_row * D);
    l += head_row;
    m += head_row;
    const int Tr = (N + BR - 1) / BR, Tc = (N + BC - 1) / BC;

    /* Line 8 one step ahead. Q_i, m_i and l_i are needed at the start of a step (the scores) and in its
     * middle (the statistics), so each step starts loading the next step's as soon as it is done with its
     * own: their HBM latency then passes while this step computes, instead of between two steps. The next
     * step after (j, i) is (j, i + 1), or (j + 1, 0) after the last i; every step still loads exactly one
     * Q_i, m_i and l_i, so the bytes are Algorithm 1's. O_i needs no such help: it is used only at the end
     * of its own step, so its loads are issued at the top of the step and land during the scores.
     *   start_Q_i(q0):  Q_i into Q_s with ASYNC_COPY (rows past N: zeros), landed after cp_async_wait_all().
     *   load_m_l_i(q0): m_i and l_i of query row q0 + t into m_next, l_next, registers of the first Br
     *                   threads (rows past N: -inf and 0), which the next step stores into m_s and l_s. */
    float m_next, l_next;
    auto start_Q_i = [&](int q0) {
        const int q_rows = min(BR, N - q0);
#pragma unroll
        for (int y = 0; y < BR * C4 / FV1_THREADS; y++) {
            const int x = t + y * FV1_THREADS, r = x / C4, c4 = x % C4;
            float4 &Q_s_x = f4(&Q_s[r * QS + 4 * c4]);
            if (r < q_rows)
                ASYNC_COPY(Q_s_x, Q4[(size_t)q0 * C4 + x]);
            else
                Q_s_x = zero;
        }
    };
    auto load_m_l_i = [&](int q0) {
        const bool real = t < BR && q0 + t < N;
        m_next = real ? IO_LOAD(m[q0 + t]) : -INFINITY;
        l_next = real ? IO_LOAD(l[q0 + t]) : 0.f;
    };
    start_Q_i(0); /* the first step's, which has no step before it */
    load_m_l_i(0);

    for (int j = 0; j < Tc; j++) {
        const int k0 = j * BC, kv_rows = min(BC, N - k0);
        __syncthreads(); /* every thread is done with K_j-1 and V_j-1 before they are overwritten */
        /* line 6: K_j, V_j into shared memory, once per j, with ASYNC_COPY (waited for at the top of step
         * (j, 0), with Q_0). Rows past N become zeros: a NaN there would reach O through P~ V_j even where
         * P~ = 0. */
#pragma unroll
        for (int y = 0; y < BC * C4 / FV1_THREADS; y++) {
            const int x = t + y * FV1_THREADS, r = x / C4, c4 = x % C4;
            float4 &K_s_x = f4(&K_s[r * KS + 4 * c4]), &V_s_x = f4(&V_s[4 * x]);
            if (r < kv_rows) {
                ASYNC_COPY(K_s_x, K4[(size_t)k0 * C4 + x]);
                ASYNC_COPY(V_s_x, V4[(size_t)k0 * C4 + x]);
            } else {
                K_s_x = zero;
                V_s_x = zero;
            }
        }

        for (int i = 0; i < Tr; i++) {
            const int q0 = i * BR, q_rows = min(BR, N - q0);
            const bool has_next = i + 1 < Tr || j + 1 < Tc;     /* the next step, if any:           */
            const int q0_next = (i + 1 < Tr ? i + 1 : 0) * BR; /* (j, i + 1), or (j + 1, 0)        */
            /* line 8: O_i into the registers of the threads that will update it (nothing waits for these
             * loads before the output phase). Q_i, m_i and l_i were started by the previous step: m_i and
             * l_i go from registers into shared memory, and this thread waits for its copies of Q_i. */
            float4 o[RM];
#pragma unroll
            for (int u = 0; u < RM; u++) {
                const int r = out_r0 + u * RP;
                o[u] = r < q_rows ? IO_LOAD(O4[(size_t)(q0 + r) * C4 + out_c4]) : zero;
            }
            if (t < BR) {
                m_s[t] = m_next;
                l_s[t] = l_next;
            }
            cp_async_wait_all();
            __syncthreads(); /* every thread's copies of Q_i (and K_j, V_j) have landed, m_i and l_i are in
                                shared memory, and every thread is done with the previous step's P~ and
                                weights, which this step overwrites */

            /* line 9: S_ij = scale * Q_i K_j^T, a TR x TC register tile per thread: every float4 read from
             * shared memory feeds TC (of Q_i) or TR (of K_j) dot products. Keys past N get -inf: exp(-inf) = 0
             * exactly, so they add nothing to l~ or to O. */
            {
                float acc[TR][TC];
#pragma unroll
                for (int u = 0; u < TR; u++)
#pragma unroll
                    for (int v = 0; v < TC; v++) acc[u][v] = 0.f;
#pragma unroll(UNROLL_K)
                for (int k = 0; k < D; k += 4) {
                    float4 q[TR];
#pragma unroll
                    for (int u = 0; u < TR; u++) q[u] = f4(&Q_s[(sc_r + 16 * u) * QS + k]);
#pragma unroll
                    for (int v = 0; v < TC; v++) {
                        const float4 key = f4(&K_s[(sc_c + 8 * v) * KS + k]);
#pragma unroll
                        for (int u = 0; u < TR; u++) acc[u][v] = dot4_add(q[u], key, acc[u][v]);
                    }
                }
#pragma unroll
                for (int u = 0; u < TR; u++)
#pragma unroll
                    for (int v = 0; v < TC; v++) {
                        const int c = sc_c + 8 * v;
                        S_s[(sc_r + 16 * u) * SS + c] = c < kv_rows ? scale * acc[u][v] : -INFINITY;
                    }
            }
            __syncthreads(); /* all of S_ij is written before its rows are reduced, and every thread is done
                                with Q_i, which the next step's Q_i overwrites from here on */
            if (has_next) start_Q_i(q0_next); /* lands during the statistics and the output phase */

            /* lines 10, 11 and 13: the block's row statistics, the new running ones (to HBM), and the two
             * weights of the output update. Rows past N start from m = -inf, l = 0 and are never stored. */
            {
                float *S_row = &S_s[st_r * SS];
                float s[CN], m_tilde = -INFINITY;
#pragma unroll
                for (int q = 0; q < CN; q++) {
                    s[q] = S_row[st_c0 + q * ROW_LANES];
                    m_tilde = fmaxf(m_tilde, s[q]);
                }
                m_tilde = row_max<ROW_LANES>(m_tilde);
                float l_tilde = 0.f;
#pragma unroll
                for (int q = 0; q < CN; q++) {
                    const float p = expf(s[q] - m_tilde);
                    S_row[st_c0 + q * ROW_LANES] = p;
                    l_tilde += p;
                }
                l_tilde = row_sum<ROW_LANES>(l_tilde);
                const float m_i = m_s[st_r], l_i = l_s[st_r];
                const float m_new = fmaxf(m_i, m_tilde);
                const float old_scale = expf(m_i - m_new), new_scale = expf(m_tilde - m_new);
                const float l_new = old_scale * l_i + new_scale * l_tilde;
                if (st_c0 == 0) {
                    const float inv_l = 1.f / l_new; /* the division in the hot loop (MUFU.RCP and friends) */
                    w_old[st_r] = l_i * old_scale * inv_l;
                    w_new[st_r] = new_scale * inv_l;
                    if (st_r < q_rows) {
                        IO_STORE(l[q0 + st_r], l_new);
                        IO_STORE(m[q0 + st_r], m_new);
                    }
                }
            }
            __syncthreads(); /* P~_ij and the weights are complete before the output phase reads them, and
                                the m_i and l_i just stored are in HBM before the next step's are read
                                (with Tr = 1 they are the same rows) */
            if (has_next) load_m_l_i(q0_next); /* lands during the output phase */

            /* line 12: O_i <- w_old O_i + w_new P~_ij V_j, written back to HBM. */
            {
                float4 pv[RM];
#pragma unroll
                for (int u = 0; u < RM; u++) pv[u] = zero;
#pragma unroll(UNROLL_C)
                for (int c = 0; c < BC; c += 4) {
                    float4 p[RM];
#pragma unroll
                    for (int u = 0; u < RM; u++) p[u] = f4(&S_s[(out_r0 + u * RP) * SS + c]);
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const float4 v = f4(&V_s[(c + e) * D + 4 * out_c4]);
#pragma unroll
                        for (int u = 0; u < RM; u++) axpy4(component(p[u], e), v, pv[u]);
                    }
                }
#pragma unroll
                for (int u = 0; u < RM; u++) {
                    const int r = out_r0 + u * RP;
                    if (r < q_rows) {
                        const float a = w_old[r], b = w_new[r];
                        IO_STORE(O4[(size_t)(q0 + r) * C4 + out_c4],
                                 make_float4(a * o[u].x + b * pv[u].x, a * o[u].y + b * pv[u].y,
                                             a * o[u].z + b * pv[u].z, a * o[u].w + b * pv[u].w));
                    }
                }
            }
        }
    }
    IO_TALLY_FLUSH();
}

typedef void (*KernelFn)(const float *, const float *, const float *, float *, float *, float *, int, float);

/* The compiled tiles: 3 x 3 (Br, Bc) pairs for each of the 3 head dimensions, per build. */
static KernelFn kernel_for(int d, int Br, int Bc) {
#define FV1_CASE(D_, BR_, BC_) \
    if (d == D_ && Br == BR_ && Bc == BC_) return flash_v1_kernel<D_, BR_, BC_>;
#define FV1_CASES(D_)                                                                                      \
    FV1_CASE(D_, 16, 16) FV1_CASE(D_, 16, 32) FV1_CASE(D_, 16, 64) FV1_CASE(D_, 32, 16) FV1_CASE(D_, 32, 32) \
    FV1_CASE(D_, 32, 64) FV1_CASE(D_, 64, 16) FV1_CASE(D_, 64, 32) FV1_CASE(D_, 64, 64)
    FV1_CASES(32) FV1_CASES(64) FV1_CASES(128)
#undef FV1_CASES
#undef FV1_CASE
    return nullptr;
}

/* The kernel for (d, Br, Bc), with its dynamic shared memory allowed past the 48 KB default. Validation
 * (chapter.c) rejects unsupported tiles first; reaching here with one is a programming error. */
static KernelFn prepared_kernel(int d, int Br, int Bc, size_t smem) {
    KernelFn kernel = kernel_for(d, Br, Bc);
    if (!kernel) {
        fprintf(stderr, "flash_v1: no kernel compiled for d=%d Br=%d Bc=%d\n", d, Br, Bc);
        exit(2);
    }
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    return kernel;
}

extern "C" void IO_VARIANT(flash_v1_init_launch)(const FlashV1Args *a) {
    const size_t rows = (size_t)a->B * a->H * a->N, n4 = rows * a->d / 4;
    const size_t threads = 256, blocks = ceil_div_ll((long long)n4, threads);
    flash_v1_init_kernel<<<(unsigned)(blocks < 8192 ? blocks : 8192), (unsigned)threads>>>(
        reinterpret_cast<float4 *>(a->O), a->l, a->m, n4, rows);
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(flash_v1_launch)(const FlashV1Args *a) {
    const size_t smem = flash_v1_smem_bytes(a->Br, a->Bc, a->d);
    KernelFn kernel = prepared_kernel(a->d, a->Br, a->Bc, smem);
    const dim3 grid((unsigned)a->B, (unsigned)a->H);
    kernel<<<grid, FV1_THREADS, smem>>>(a->Q, a->K, a->V, a->O, a->l, a->m, a->N, 1.f / sqrtf((float)a->d));
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(flash_v1_resources)(int d, int Br, int Bc, KernelResources *r) {
    const size_t smem = flash_v1_smem_bytes(Br, Bc, d);
    kernel_resources((const void *)prepared_kernel(d, Br, Bc, smem), FV1_THREADS, smem, r);
}
