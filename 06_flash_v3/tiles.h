/* tiles.h: the tiles, threads and shared memory of chapter 06's kernels (1_wgmma.cu .. 7_queue.cu, kernels.cu; step
 * 9, 9_dispatch.c, picks among them). Their shared tiles have one layout, the one wgmma's matrix descriptors read
 * (common/wgmma_layout.h). For the host (validation, the model, the tests of the layout) and the kernel.
 *
 * Steps 1 and 2: a block is one warpgroup (4 warps, 128 threads) and owns Br = 64 query rows, wgmma's M: warp w holds rows
 * 16 w .. 16 w + 15 of every accumulator. It sweeps K/V blocks of Bc = 64 keys. Shared memory holds Q_i
 * (Br x d) once and K_j, V_j (Bc x d) twice (the next block's copies land while this one computes), all in the
 * 2-byte storage type, in 128-byte-swizzle layout (sw128_offset). */
#ifndef FA_CH06_TILES_H
#define FA_CH06_TILES_H

#include <stddef.h>
#include <stdint.h>

#include "wgmma_layout.h"

#define FA3_BR 64     /* query rows per block: wgmma's M, one warpgroup */
#define FA3_BC 64     /* keys per K/V block: the N of S = Q_i K_j^T, the K of O_i += P_ij V_j */
#define FA3_THREADS 128
#define FA3_BR_SIZES "64"
#define FA3_BC_SIZES "64"

static inline int fa3_dim_supported(int d) { return d == 64 || d == 128; }
static inline int fa3_br_supported(int Br) { return Br == FA3_BR; }
static inline int fa3_bc_supported(int Bc) { return Bc == FA3_BC; }

/* Bytes: Q_i once, K_j and V_j twice, 2-byte elements. */
#define FA3_SMEM_FORMULA "2 (Br d + 4 Bc d) bytes: Q_i, and K_j, V_j double-buffered, in the 2-byte storage type"
static inline size_t fa3_smem_bytes(int Br, int Bc, int d) { return 2 * ((size_t)Br * d + 4 * (size_t)Bc * d); }
/* tma: the same tiles and, after them, one 8-byte mbarrier per K/V buffer. */
#define FA3_TMA_SMEM_FORMULA "2 (Br d + 4 Bc d) + 16 bytes: Q_i, K_j, V_j double-buffered, two mbarriers"
static inline size_t fa3_tma_smem_bytes(int Br, int Bc, int d) { return fa3_smem_bytes(Br, Bc, d) + 2 * 8; }

/* ---- step 3, warp_specialized: a producer warpgroup and Br / 64 consumer warpgroups -------------------------
 * A block is 1 + Br/64 warpgroups: warpgroup 0 copies (one thread issues every TMA), warpgroup 1 + c computes
 * query rows 64 c .. 64 c + 63 of the block's Q tile. Q_i (Br x d) and a staging tile for O_i (Br x d), then a
 * ring of FA3_WS_STAGES stages, each K_j and V_j (Bc x d), as many as sm_90's 227 KB of shared memory per block
 * hold, then the mbarriers: a full and an empty one per stage, and Q's own pair. One block per SM (persistent). */
/* The default tiles, the fastest measured (README, "Choosing the tiles"): 128 x 128 (two consumers) at d = 128,
 * 192 x 128 (three) at d = 64, but for causal sequences of up to FA3_WS_SHORT_CAUSAL tokens (128 x 128 there). */
#define FA3_WS_BR 128
#define FA3_WS_BR_D64 192
#define FA3_WS_SHORT_CAUSAL 1024
#define FA3_WS_BC 128
#define FA3_WS_BR_SIZES "128, 192 (d = 64 only)"
#define FA3_WS_BC_SIZES "64, 128"
#define FA3_BC_MAX 128 /* the widest K/V block of any step */
#define FA3_SMEM_MAX 232448 /* bytes: the most dynamic shared memory an sm_90 block may ask for (227 KB) */
/* 2-byte tiles: Q_i and O_i 2 Br d each, a stage 4 Bc d; 16 bytes of mbarriers per stage, 16 for Q's pair. */
#define FA3_WS_STAGES(BR, BC, D) ((FA3_SMEM_MAX - 4 * (BR) * (D) - 16) / (4 * (BC) * (D) + 16))
#define FA3_WS_CONSUMERS(BR) ((BR) / 64)
#define FA3_MODEL_SMS 132 /* the persistent grid's blocks in --model without a GPU: an H200's SMs */
#define FA3_WS_THREADS(BR) (128 * (1 + (BR) / 64))
/* Registers per thread after setmaxnreg (a multiple of 8; what the block was launched with, 65536 / threads
 * rounded down to 8, redistributed): two consumers 240 and a producer 24 (24 x 128 + 240 x 256 = 168 x 384),
 * three consumers 160 and a producer 32 (32 x 128 + 160 x 384 = 128 x 512). */
#define FA3_WS_PRODUCER_REGS(BR) ((BR) == 128 ? 24 : 32)
#define FA3_WS_CONSUMER_REGS(BR) ((BR) == 128 ? 240 : 160)
static inline int fa3_ws_br_supported(int Br) { return Br == 128 || Br == 192; }
static inline int fa3_ws_bc_supported(int Bc) { return Bc == 64 || Bc == 128; }
/* The tiles compiled (3_warp_specialized.cu and the steps after it): Br = 128 with Bc = 64 or 128 at both d; Br = 192 (three consumers, 160
 * registers each) with Bc = 128 at d = 64 only (at d = 128, O_i alone is 64 of a thread's 160 registers). */
static inline int fa3_ws_tile_compiled(int Br, int Bc, int d) {
    return fa3_dim_supported(d) && fa3_ws_bc_supported(Bc) && (Br == 128 || (Br == 192 && Bc == 128 && d == 64));
}
static inline int fa3_ws_stages(int Br, int Bc, int d) { return FA3_WS_STAGES(Br, Bc, d); }
#define FA3_WS_SMEM_FORMULA "4 Br d + S (4 Bc d + 16) + 16 bytes: Q_i, O_i, S stages of K_j, V_j, their mbarriers"
static inline size_t fa3_ws_smem_bytes(int Br, int Bc, int d) {
    const size_t S = (size_t)fa3_ws_stages(Br, Bc, d);
    return 4 * (size_t)Br * d + S * (4 * (size_t)Bc * d + 16) + 16;
}

/* ---- step 5, overlap: step 3's tiles, K and V in rings of their own -----------------------------------------
 * A consumer of step 5 holds V_j-1 (its product P V_j-1 still running) while it computes S_ij from K_j: with one
 * ring of K/V pairs it would hold two stages at once, and at d = 128 (two stages) the copies of block j + 1 could
 * not start before block j - 1's product ended. So K_j and V_j each have a ring, with a full and an empty
 * mbarrier per stage, K_j's released as soon as S_ij is done: the tiles that fit (each Bc x d) split between them,
 * V's ring the larger (it is read one block later). */
#define FA3_OV_RING_TILES(BR, BC, D) ((FA3_SMEM_MAX - 4 * (BR) * (D) - 16) / (2 * (BC) * (D) + 16))
#define FA3_OV_K_STAGES(BR, BC, D) (FA3_OV_RING_TILES(BR, BC, D) / 2)
#define FA3_OV_V_STAGES(BR, BC, D) (FA3_OV_RING_TILES(BR, BC, D) - FA3_OV_K_STAGES(BR, BC, D))
static inline int fa3_ov_k_stages(int Br, int Bc, int d) { return FA3_OV_K_STAGES(Br, Bc, d); }
static inline int fa3_ov_v_stages(int Br, int Bc, int d) { return FA3_OV_V_STAGES(Br, Bc, d); }
#define FA3_OV_SMEM_FORMULA                                                                                       \
    "4 Br d + (S_K + S_V) (2 Bc d + 16) + 16 bytes: Q_i, O_i, S_K stages of K_j and S_V of V_j, their mbarriers"
static inline size_t fa3_ov_smem_bytes(int Br, int Bc, int d) {
    const size_t S = (size_t)fa3_ov_k_stages(Br, Bc, d) + (size_t)fa3_ov_v_stages(Br, Bc, d);
    return 4 * (size_t)Br * d + S * (2 * (size_t)Bc * d + 16) + 16;
}

/* ---- step 7, queue: step 5's tiles, the next work item from a queue -----------------------------------------
 * The producer passes each item's number to the consumers in shared memory, in 16 bytes after the mbarriers (an
 * int, the rest padding): the rings of step 5 keep their stages beside it at every compiled tile (the slack is
 * 2.6-3.0 KB; tests/ch06/test_layout.c). Under the causal mask the heads are taken in sections of as many heads as
 * have their K and V (4 N d bytes a head, 2-byte elements) in FA3_SECTION_BYTES, about half of the L2 of an H100
 * (50 MB) or an H200 (60 MB): the rest is left to Q, O and the other sections' heads still being finished. */
#define FA3_SECTION_BYTES (32LL << 20)
#define FA3_MAX_DEVICES 64 /* devices with a queue counter of their own (kernels.cu) */
static inline int fa3_section_heads(int N, int d, int BH) {
    const long long hs = FA3_SECTION_BYTES / (4LL * N * d);
    return hs < 1 ? 1 : hs > BH ? BH : (int)hs;
}
#define FA3_QUEUE_SMEM_FORMULA                                                                                    \
    "4 Br d + (S_K + S_V) (2 Bc d + 16) + 32 bytes: Q_i, O_i, S_K stages of K_j and S_V of V_j, their mbarriers, "  \
    "the item's number"
static inline size_t fa3_queue_smem_bytes(int Br, int Bc, int d) { return fa3_ov_smem_bytes(Br, Bc, d) + 16; }

/* ---- step 8, tma_store: step 7 with O_i stored by the copy engine ------------------------------------------
 * Step 7's shared memory: O_s, where the consumers write O_i, is now read by the engine, one box of 64 rows x 64
 * features (a consumer's rows of a panel, 8 KB, on the swizzle's period) per copy. */
static inline size_t fa3_tma_store_smem_bytes(int Br, int Bc, int d) { return fa3_queue_smem_bytes(Br, Bc, d); }

/* ---- step 9, dispatch: the tile by the problem, step 2's small blocks among them -------------------------------
 * No kernel of its own: Br = 64 (with Bc = 64) runs step 2's kernel, one warpgroup a block and as many blocks an SM
 * as fit, Br = 128 or 192 step 8's persistent one. Its default is Br = 64 at d = 64 up to FA3_DISPATCH_SHORT tokens,
 * where step 2 measured faster than step 8 (README, "Step 9"), step 8's tiles everywhere else. */
#define FA3_DISPATCH_SHORT 1024
#define FA3_DISPATCH_BR_SIZES "64 (step 2's kernel, with Bc = 64), 128, 192 (d = 64 only)"
static inline int fa3_dispatch_small(int Br) { return Br == FA3_BR; }
static inline int fa3_dispatch_br_supported(int Br) { return fa3_br_supported(Br) || fa3_ws_br_supported(Br); }
#define FA3_DISPATCH_SMEM_FORMULA                                                                                 \
    "Br = 64: step 2's " FA3_TMA_SMEM_FORMULA "; Br = 128, 192: step 8's " FA3_QUEUE_SMEM_FORMULA
static inline size_t fa3_dispatch_smem_bytes(int Br, int Bc, int d) {
    return fa3_dispatch_small(Br) ? fa3_tma_smem_bytes(Br, Bc, d) : fa3_tma_store_smem_bytes(Br, Bc, d);
}

#endif
