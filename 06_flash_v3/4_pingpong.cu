/* 4_pingpong.cu: chapter 06, step 4: step 3 with the consumer warpgroups taking turns at the
 * tensor cores, FlashAttention-3's pingpong scheduling.
 *
 *   ./ch06/run --kernel pingpong [--br 128|192] [--bc 64|128]
 *              flash_pingpong_kernel: step 3's warpgroups, the consumers' products of S in a fixed rotation
 *
 * The steps, each a file of this folder and a --kernel: 1_wgmma.cu (wgmma), 2_tma.cu (tma), 3_warp_specialized.cu
 * (warp_specialized), 4_pingpong.cu (pingpong), 5_overlap.cu (overlap), 6_zigzag.cu (zigzag), 7_queue.cu (queue),
 * kernels.cu (tma_store).
 * The PTX is in ptx.cuh, the tiles, their layout and the wgmma descriptors in tiles.h.
 *
 * What changes from step 3 (`diff 06_flash_v3/3_warp_specialized.cu 06_flash_v3/4_pingpong.cu`): one named barrier
 * per consumer warpgroup, its *turn*. In step 3 the consumers run the same loop side by side and reach their
 * products at about the same time: both wait on the tensor cores together, then both run their softmax (ex2 on
 * the multi-function unit) together while the tensor cores idle. Here consumer c issues the product S = Q_i K_j^T
 * only in its turn (bar.sync on barrier FA3_PP_TURN + c) and, once issued, hands the turn to consumer c + 1
 * (bar.arrive on that one's barrier; the last hands it back to consumer 0). The consumers drift half a K/V block
 * apart and stay there: while one runs its softmax, the other's products run on the tensor cores.
 *
 * The turns. Barrier FA3_PP_TURN + c is for 256 threads: consumer c's 128 at bar.sync, which waits, and the 128 of
 * the consumer before it at bar.arrive, which does not. Consumer 0 goes first: the last consumer arrives on its
 * barrier once before the loop. Every consumer takes one turn per K/V block of every item, the same number for
 * all (they share the items), so the arrivals and the syncs pair off one for one; the last consumer's last hand-over
 * is taken by consumer 0 after the loop, and the block ends with every barrier at rest.
 *
 * The mbarrier phases are step 3's. An mbarrier's phase completes when its arrivals are in (and, for `full`, the
 * bytes announced have landed); waits name the phase by its parity, 0, 1, 0, ... Stage s serves K/V blocks k = s,
 * s + S, s + 2 S, ... of the block's whole sequence of items (k counts across items); its n-th use (n = k / S)
 * completes `full`'s phase n, waited on with parity n % 2, and is released by completing `empty`'s phase n, which
 * the producer waits for (parity n % 2) before the use n + 1. Q_i's barriers count items the same way. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cudaTypedefs.h> /* PFN_cuTensorMapEncodeTiled */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "arith.h"
#include "io_tally.cuh"
#include "kernels.h"
#include "ptx.cuh"
#include "storage.cuh"
#include "tiles.h"

/* The 4 lanes of a quad (lane / 4 = the row) hold a row's columns: xor 1 and 2 stay in the quad. */
static __device__ __forceinline__ float quad_max(float x) {
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
    return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
static __device__ __forceinline__ float quad_sum(float x) {
    x += __shfl_xor_sync(0xffffffffu, x, 1);
    return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

/* Work item t of Tr * BH (a Q tile i of head bh). Full mask: a head's tiles one after another, so that blocks
 * working at the same time share the head's K and V in L2. Causal: the last tiles (the most K/V blocks) of every
 * head first, so that the blocks' last items are the short ones. */
static __device__ __forceinline__ void work_item(int t, int Tr, int BH, int causal, int &i, int &bh) {
    if (causal) {
        i = Tr - 1 - t / BH;
        bh = t % BH;
    } else {
        i = t % Tr;
        bh = t / Tr;
    }
}

/* Grid: one block per SM (or per item, if fewer). A block: FA3_WS_THREADS(BR) threads, warpgroup 0 the producer,
 * warpgroup 1 + c consumer c (Q_i's rows 64 c .. 64 c + 63). Q through tm_Q (boxes of 64 features x BR rows), K and
 * V through tm_K, tm_V (64 x BC); [BH][N][d] each. scale_log2 = log2(e) / sqrt(d). */
template <int D, int BR, int BC, typename T>
static __global__ void __launch_bounds__(FA3_WS_THREADS(BR), 1)
    flash_pingpong_kernel(const __grid_constant__ CUtensorMap tm_Q, const __grid_constant__ CUtensorMap tm_K,
                          const __grid_constant__ CUtensorMap tm_V, T *__restrict__ O, float *__restrict__ L, int N,
                          int BH, int causal, float scale_log2) {
    IO_TALLY;
    constexpr int STAGES = FA3_WS_STAGES(BR, BC, D), CONSUMER_WARPS = 4 * FA3_WS_CONSUMERS(BR), CH = D / 8;
    constexpr int NS = BC / 8, NO = D / 8; /* n8 column groups of S and of O in the accumulators */
    static_assert(STAGES >= 2, "the ring needs two stages: one being read while the next is copied");
    /* 1024-byte aligned: the swizzle pattern's period (tiles.h); every tile below is a multiple of 1024 bytes */
    extern __shared__ __align__(1024) uint4 smem[];
    T *Q_s = reinterpret_cast<T *>(smem); /* [BR][D] in wgmma's layout                     */
    T *O_s = Q_s + BR * D;                /* [BR][D] O_i on its way out                    */
    T *K_s = O_s + BR * D;                /* [STAGES][BC][D]                               */
    T *V_s = K_s + STAGES * BC * D;       /* [STAGES][BC][D]                               */
    uint64_t *full = reinterpret_cast<uint64_t *>(V_s + STAGES * BC * D); /* [STAGES]: stage s's copies have landed */
    uint64_t *empty = full + STAGES;      /* [STAGES]: every consumer warp is done reading stage s                  */
    uint64_t *Q_full = empty + STAGES;    /* Q_i has landed                                                          */
    uint64_t *Q_empty = Q_full + 1;       /* every consumer warp has issued and completed its last wgmma on Q_i     */

    const int Tr = (N + BR - 1) / BR, Tc = (N + BC - 1) / BC, items = Tr * BH;
    const unsigned Q_a = smem_addr(Q_s), K_a = smem_addr(K_s), V_a = smem_addr(V_s);
    const unsigned full_a = smem_addr(full), empty_a = smem_addr(empty);
    const unsigned Q_full_a = smem_addr(Q_full), Q_empty_a = smem_addr(Q_empty);
    constexpr unsigned STAGE_TILE = BC * D * sizeof(T); /* bytes of K_j (or V_j) in one stage */

    if (threadIdx.x == 0) {
        if (Q_a % 1024) __trap(); /* the swizzle needs it; the launch gives no other alignment guarantee */
        for (int s = 0; s < STAGES; s++) {
            mbar_init(full_a + 8 * s, 1);               /* the producer's arrival, with the bytes to expect */
            mbar_init(empty_a + 8 * s, CONSUMER_WARPS); /* one arrival per consumer warp                    */
        }
        mbar_init(Q_full_a, 1);
        mbar_init(Q_empty_a, CONSUMER_WARPS);
        mbar_init_fence();
    }
    __syncthreads(); /* the barriers are initialised, for the threads and the copy engine, before anyone uses them;
                        the block's last block-wide barrier: from here on the warpgroups meet on mbarriers only */

    if (threadIdx.x < 128) { /* ---- the producer warpgroup ---- */
        setmaxnreg_dec<FA3_WS_PRODUCER_REGS(BR)>();
        if (threadIdx.x != 0) {
            IO_TALLY_FLUSH();
            return; /* one thread issues every copy; the other 127 have nothing to do */
        }
        /* ROWS rows of a tile from row `row` of head bh, one box per 64-feature panel, reported to barrier bar.
         * The instrumented build counts the bytes the engine reads: the rows before N. */
        auto copy = [&](unsigned dst, const CUtensorMap *map, int row, int rows, int bh, unsigned bar) {
#pragma unroll
            for (int p = 0; p < D / SW128_PANEL; p++) tma_load_3d(dst + p * rows * 128, map, p * SW128_PANEL, row, bh, bar);
#ifdef COUNT_IO
            io_read_ += (unsigned long long)min(rows, N - row) * D * sizeof(T);
#endif
        };
        int s = 0, n = 0; /* the stage the next K/V block goes to, and how many times the ring has gone round */
        int it = 0;       /* this block's items so far */
        for (int t = blockIdx.x; t < items; t += gridDim.x, it++) {
            int i, bh;
            work_item(t, Tr, BH, causal, i, bh);
            const int q0 = i * BR, q_rows = min(BR, N - q0);
            const int Tc_i = causal ? min(Tc, (q0 + q_rows - 1) / BC + 1) : Tc;
            if (it > 0) mbar_wait(Q_empty_a, (it - 1) % 2); /* the consumers' last reads of the previous Q_i */
            mbar_arrive_expect_tx(Q_full_a, BR * D * sizeof(T));
            copy(Q_a, &tm_Q, q0, BR, bh, Q_full_a);
            for (int j = 0; j < Tc_i; j++) {
                if (n > 0) mbar_wait(empty_a + 8 * s, (n - 1) % 2); /* stage s's use n - 1 has been read */
                mbar_arrive_expect_tx(full_a + 8 * s, 2 * STAGE_TILE);
                copy(K_a + s * STAGE_TILE, &tm_K, j * BC, BC, bh, full_a + 8 * s);
                copy(V_a + s * STAGE_TILE, &tm_V, j * BC, BC, bh, full_a + 8 * s);
                if (++s == STAGES) s = 0, n++;
            }
        }
        IO_TALLY_FLUSH();
        return;
    }

    /* ---- a consumer warpgroup: the rows r0 .. r0 + 15 of Q_i (warp w of consumer c) ---- */
    setmaxnreg_inc<FA3_WS_CONSUMER_REGS(BR)>();
    const int c = threadIdx.x / 128 - 1, warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;
    constexpr int CONSUMERS = FA3_WS_CONSUMERS(BR);
    /* this consumer's turn at the products of S, and the next consumer's, which it hands the turn to */
    const unsigned my_turn = FA3_PP_TURN + c, next_turn = FA3_PP_TURN + (c + 1) % CONSUMERS;
    if (c == CONSUMERS - 1) named_bar_arrive(FA3_PP_TURN, 2 * 128); /* consumer 0 takes the first turn */
    /* accumulator coordinates (ptx.cuh): rows frag_row and frag_row + 8, columns 2 frag_col and 2 frag_col + 1 */
    const int frag_row = lane / 4, frag_col = lane % 4;
    const int r0 = 64 * c + 16 * warp;    /* this warp's first row in Q_i */
    const unsigned Q_c = Q_a + 64 * c * 128; /* this consumer's 64 rows of every panel of Q_i (tiles.h) */
    char *O_b = reinterpret_cast<char *>(O_s);

    /* S_ij, then P_ij: rows frag_row, frag_row + 8, keys 8n + 2 frag_col, +1. Zeroed once so that its first use as
     * a wgmma operand reads defined values; each block's first wgmma (scale-d = 0) overwrites it. */
    float s_acc[NS][4];
#pragma unroll
    for (int n = 0; n < NS; n++) s_acc[n][0] = s_acc[n][1] = s_acc[n][2] = s_acc[n][3] = 0.f;

    int s = 0, n = 0, it = 0; /* the producer's counters, followed in the same order */
    for (int t = blockIdx.x; t < items; t += gridDim.x, it++) {
        int i, bh;
        work_item(t, Tr, BH, causal, i, bh);
        const size_t head = (size_t)bh * N;
        const int q0 = i * BR, q_rows = min(BR, N - q0);
        const int Tc_i = causal ? min(Tc, (q0 + q_rows - 1) / BC + 1) : Tc;

        float o[NO][4]; /* O_i, unnormalised: rows frag_row, frag_row + 8 of this warp, columns 8n + 2 frag_col, +1 */
#pragma unroll
        for (int x = 0; x < NO; x++) o[x][0] = o[x][1] = o[x][2] = o[x][3] = 0.f;
        /* rows frag_row, frag_row + 8: running max (log2 units), running sum */
        float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};

        mbar_wait(Q_full_a, it % 2); /* this item's Q_i has landed */
        for (int j = 0; j < Tc_i; j++) {
            mbar_wait(full_a + 8 * s, n % 2); /* K_j, V_j have landed in stage s (its use n) */
            const unsigned Kb = K_a + s * STAGE_TILE, Vb = V_a + s * STAGE_TILE;
            const int k0 = j * BC;

            /* S = Q_i K_j^T for this consumer's 64 rows: d/16 steps of 16 features, m64n{BC}k16, issued in this
             * consumer's turn; the next consumer's products queue behind them while this one's softmax runs. */
            named_bar_sync(my_turn, 2 * 128); /* the consumer before has issued its S: this one's turn */
            wgmma_fence_operands(s_acc);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < D / 16; kk++)
                wgmma_m64nNk16_ss<T, BC>(s_acc, wgmma_desc_k_major(Q_c, BR, kk), wgmma_desc_k_major(Kb, BC, kk), kk > 0);
            wgmma_commit();
            named_bar_arrive(next_turn, 2 * 128); /* issued: the next consumer's turn */
            wgmma_wait<0>();
            wgmma_fence_operands(s_acc);
            if (j == Tc_i - 1 && lane == 0) mbar_arrive(Q_empty_a); /* Q_i read for the last time: the next may come */

            /* Online softmax of rows frag_row and frag_row + 8 (step 2's). Keys past N, and with the causal mask
             * keys after the query, are -inf; only the blocks that reach past N or across the diagonal of this
             * warp's rows need the test. */
            const bool masked = k0 + BC > N || (causal && k0 + BC - 1 > q0 + r0);
#pragma unroll
            for (int h = 0; h < 2; h++) { /* h = 0: row frag_row, h = 1: row frag_row + 8 */
                float bmax = -INFINITY;
                if (masked) {
                    const int query = q0 + r0 + frag_row + 8 * h;
#pragma unroll
                    for (int x = 0; x < NS; x++)
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            const int key = k0 + 8 * x + 2 * frag_col + e;
                            if (key >= N || (causal && key > query)) s_acc[x][2 * h + e] = -INFINITY;
                        }
                }
#pragma unroll
                for (int x = 0; x < NS; x++) bmax = fmaxf(bmax, fmaxf(s_acc[x][2 * h], s_acc[x][2 * h + 1]));
                const float m_new = fmaxf(m[h], quad_max(bmax) * scale_log2);
                const float m_ref = m_new == -INFINITY ? 0.f : m_new; /* a row with every key masked: p = 0 */
                const float alpha = fast_exp2(m[h] - m_ref);
                m[h] = m_new;
                l[h] *= alpha;
#pragma unroll
                for (int x = 0; x < NO; x++) o[x][2 * h] *= alpha, o[x][2 * h + 1] *= alpha;
#pragma unroll
                for (int x = 0; x < NS; x++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const float p = fast_exp2(fmaf(s_acc[x][2 * h + e], scale_log2, -m_ref));
                        l[h] += p; /* this lane's columns; quad_sum adds the 4 shares at the end */
                        s_acc[x][2 * h + e] = p;
                    }
            }

            /* O_i += P V_j: P's accumulator layout is wgmma's A-register layout (step 2), BC/16 k16 steps. */
            uint32_t a[BC / 16][4];
#pragma unroll
            for (int kk = 0; kk < BC / 16; kk++) {
                a[kk][0] = pack2<T>(s_acc[2 * kk][0], s_acc[2 * kk][1]);         /* row frag_row,     keys 2 frag_col, +1 */
                a[kk][1] = pack2<T>(s_acc[2 * kk][2], s_acc[2 * kk][3]);         /* row frag_row + 8, keys 2 frag_col, +1 */
                a[kk][2] = pack2<T>(s_acc[2 * kk + 1][0], s_acc[2 * kk + 1][1]); /* row frag_row,     keys 8 + ...     */
                a[kk][3] = pack2<T>(s_acc[2 * kk + 1][2], s_acc[2 * kk + 1][3]); /* row frag_row + 8, keys 8 + ...     */
            }
            wgmma_fence_operands(o);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < BC / 16; kk++) wgmma_m64nNk16_rs<T, D>(o, a[kk], wgmma_desc_mn_major(Vb, BC, kk));
            wgmma_commit();
            wgmma_wait<0>();
            wgmma_fence_operands(o);
            if (lane == 0) mbar_arrive(empty_a + 8 * s); /* this warp's wgmma on stage s are complete */
            if (++s == STAGES) s = 0, n++;
        }

        /* Delayed normalisation; O_i through O_s so that every global store is 16 contiguous bytes; L gathered into
         * lanes 0-15 (lane x: row r0 + x) for one store. A warp touches its own 16 rows of O_s only. */
        float inv[2], L_row[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const float l_row = quad_sum(l[h]);
            inv[h] = l_row > 0.f ? 1.f / l_row : 0.f;
            L_row[h] = l_row > 0.f ? (m[h] + log2f(l_row)) * LN2 : -INFINITY;
        }
        __syncwarp(); /* every lane has read back this warp's rows of the previous item's O_i */
#pragma unroll
        for (int x = 0; x < NO; x++)
#pragma unroll
            for (int h = 0; h < 2; h++)
                *reinterpret_cast<uint32_t *>(O_b + sw128_offset(BR, r0 + frag_row + 8 * h, 8 * x + 2 * frag_col)) =
                    pack2<T>(o[x][2 * h] * inv[h], o[x][2 * h + 1] * inv[h]);
        const float L_upper = __shfl_sync(0xffffffffu, L_row[0], (lane % 8) * 4); /* row lane % 8 ...          */
        const float L_lower = __shfl_sync(0xffffffffu, L_row[1], (lane % 8) * 4); /* ... and row lane % 8 + 8 */
        const float L_mine = lane < 8 ? L_upper : L_lower;                        /* lane x < 16: row r0 + x   */
        __syncwarp(); /* this warp's rows of O are in O_s before its lanes read them back across */
        for (int x = lane; x < 16 * CH; x += 32) {
            const int r = r0 + x / CH, ch = x % CH;
            if (r < q_rows)
                IO_STORE(*reinterpret_cast<uint4 *>(&O[(head + q0 + r) * D + 8 * ch]),
                         *reinterpret_cast<const uint4 *>(O_b + sw128_offset(BR, r, 8 * ch)));
        }
        if (lane < 16 && r0 + lane < q_rows) IO_STORE(L[head + q0 + r0 + lane], L_mine);
    }
    if (c == 0) named_bar_sync(my_turn, 2 * 128); /* the last consumer's last hand-over: every barrier at rest */
    IO_TALLY_FLUSH();
}

/* The kernel for (d, Br, Bc, dtype), its dynamic shared memory allowed past the 48 KB default, handed to f (a launch
 * or a resource query) with its threads, its shared memory and its storage type (Storage<T>). Validation
 * (chapter.c, fa3_ws_tile_compiled) rejects other tiles first; reaching the end with one is a programming error. */
template <typename T>
struct Storage {
    using type = T;
};
template <typename F>
static void with_kernel(int d, int Br, int Bc, int dtype, F f) {
#define CASE(D_, BR_, BC_, T_)                                                                                    \
    if (d == D_ && Br == BR_ && Bc == BC_ && dtype == storage_dtype<T_>) {                                        \
        const size_t smem = fa3_ws_smem_bytes(BR_, BC_, D_);                                                      \
        CUDA_CHECK(cudaFuncSetAttribute(flash_pingpong_kernel<D_, BR_, BC_, T_>,                                  \
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));                 \
        f(flash_pingpong_kernel<D_, BR_, BC_, T_>, FA3_WS_THREADS(BR_), smem, Storage<T_>{});                     \
        return;                                                                                                   \
    }
    CASE(64, 128, 64, __half)
    CASE(64, 128, 128, __half)
    CASE(64, 192, 128, __half)
    CASE(128, 128, 64, __half)
    CASE(128, 128, 128, __half)
    CASE(64, 128, 64, __nv_bfloat16)
    CASE(64, 128, 128, __nv_bfloat16)
    CASE(64, 192, 128, __nv_bfloat16)
    CASE(128, 128, 64, __nv_bfloat16)
    CASE(128, 128, 128, __nv_bfloat16)
#undef CASE
    fprintf(stderr, "chapter 06: no pingpong kernel compiled for d=%d Br=%d Bc=%d dtype %d\n", d, Br, Bc,
            dtype);
    exit(2);
}

/* A [B*H][N][d] tensor of 2-byte elements as the copy engine sees it: 3 dimensions, innermost first, boxes of
 * 64 features x `rows` rows x 1 head, written into shared memory in the 128-byte swizzle (the box is 128 bytes
 * wide), elements past N filled with zeros. The driver's encoder is reached through the runtime, so that the
 * program needs no -lcuda. */
static CUtensorMap tensor_map(const void *base, const AttnArgs *a, int rows) {
    static PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    if (!encode) {
        void *fn = NULL;
        cudaDriverEntryPointQueryResult found;
        CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
        if (found != cudaDriverEntryPointSuccess || !fn) {
            fprintf(stderr, "error: the CUDA driver has no cuTensorMapEncodeTiled (the kernel needs CUDA 12 on)\n");
            exit(3);
        }
        encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    }
    const cuuint64_t dims[3] = {(cuuint64_t)a->d, (cuuint64_t)a->N, (cuuint64_t)a->B * a->H};
    const cuuint64_t strides[2] = {(cuuint64_t)a->d * 2, (cuuint64_t)a->N * a->d * 2}; /* bytes, dimensions 1 and 2 */
    const cuuint32_t box[3] = {SW128_PANEL, (cuuint32_t)rows, 1}, steps[3] = {1, 1, 1};
    CUtensorMap map;
    const CUtensorMapDataType type =
        a->dtype == DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    const CUresult r = encode(&map, type, 3, const_cast<void *>(base), dims, strides, box, steps,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "error: cuTensorMapEncodeTiled failed (CUresult %d) for B*H=%d N=%d d=%d\n", (int)r,
                a->B * a->H, a->N, a->d);
        exit(3);
    }
    return map;
}

/* The three maps of the last launch, kept: a benchmark launches the same problem many times, and encoding
 * (host work, a few microseconds) would otherwise sit between its timed launches. */
typedef struct {
    AttnArgs args;
    CUtensorMap Q, K, V;
    int valid;
} MapCache;

static int same_maps(const AttnArgs *x, const AttnArgs *y) {
    return x->Q == y->Q && x->K == y->K && x->V == y->V && x->B == y->B && x->H == y->H && x->N == y->N &&
           x->d == y->d && x->Br == y->Br && x->Bc == y->Bc && x->dtype == y->dtype;
}

static const MapCache *maps_for(const AttnArgs *a) {
    static MapCache cache;
    if (!cache.valid || !same_maps(&cache.args, a)) {
        cache.Q = tensor_map(a->Q, a, a->Br);
        cache.K = tensor_map(a->K, a, a->Bc);
        cache.V = tensor_map(a->V, a, a->Bc);
        cache.args = *a;
        cache.valid = 1;
    }
    return &cache;
}

/* The SMs of the current device: the persistent grid's size. */
static int sm_count(void) {
    static int sms = 0, device = -1;
    int now;
    CUDA_CHECK(cudaGetDevice(&now));
    if (now != device) {
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, now));
        device = now;
    }
    return sms;
}

extern "C" void IO_VARIANT(flash_pingpong_launch)(const AttnArgs *a) {
    const long long items = ceil_div(a->N, a->Br) * a->B * a->H;
    const unsigned grid = (unsigned)(items < sm_count() ? items : sm_count());
    const float scale_log2 = LOG2E / sqrtf((float)a->d);
    const MapCache *m = maps_for(a);
    with_kernel(a->d, a->Br, a->Bc, a->dtype, [&](auto kernel, int threads, size_t smem, auto storage) {
        using T = typename decltype(storage)::type;
        kernel<<<grid, threads, smem>>>(m->Q, m->K, m->V, static_cast<T *>(a->O), a->L, a->N, a->B * a->H,
                                        a->causal, scale_log2);
    });
    KERNEL_CHECK();
}

extern "C" void IO_VARIANT(flash_pingpong_resources)(int d, int Br, int Bc, int dtype, KernelResources *r) {
    with_kernel(d, Br, Bc, dtype, [&](auto kernel, int threads, size_t smem, auto) {
        kernel_resources((const void *)kernel, threads, smem, r);
    });
}
