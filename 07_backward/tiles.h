/* tiles.h: the tiles of chapter 07's backward kernels, in one place for the host (validation, the model, the
 * --model lines, the CPU versions) and for the kernels, so that the budget the host checks is the one the
 * kernels use.
 *
 * Step 1 (1_naive.cu): every matrix product C = A B is a GEMM of GEMM_TM x GEMM_TN output tiles, one block
 * each, the inner dimension in chunks of GEMM_TK. A block loads its A panel (its real rows of C, every inner
 * index) and its B panel (its real columns, every inner index) once each, so a GEMM of M x Nc outputs and
 * inner length Kin reads Kin (M ceil(Nc / GEMM_TN) + Nc ceil(M / GEMM_TM)) elements and writes M Nc.
 * naive_ds has one block per NAIVE_DS_ROWS rows of dS.
 *
 * Step 2 (kernels.cu): a block per key block j (Bc rows of K and V); it keeps K_j, V_j, and for the query
 * block i it is on Q_i, dO_i, L_i, D_i, P_ij and dS_ij in shared memory; dK_j and dV_j in registers. With --dq pass
 * (dq_pass.cu) flash_dkdv is that kernel without dQ, and flash_dq the same tiles turned around: a block per query
 * block, dQ_i in registers.
 *
 * Step 3 (3_tensor_cores.cu): the same loop order on mma.sync, 16-bit storage: TC_BWD_WARPS warps of 16 keys each
 * (Bc = 16 TC_BWD_WARPS), query blocks of Br = TC_BWD_BR rows, two buffers of Q_i, dO_i, L_i, D_i. Step 4
 * (4_dq_vectors.cu) keeps those tiles and adds TC_DQ_COLS; step 5 (5_wide_blocks.cu) has its own (TC_WIDE_*), and
 * step 6 (6_wgmma.cu) its own at the same sizes (TC_WG_*); steps 11 and 12 (11_warp_tiles.cu, 12_lean_tiles.cu) go on
 * from step 5 on a tiling of their own (TC_TILE_*), and step 13 (13_kv_registers.cu) on it at its own Br (TC_KV_*). */
#ifndef FA_CH07_TILES_H
#define FA_CH07_TILES_H

#include <stddef.h>

#include "arith.h"
#include "wgmma_layout.h"

/* ---- step 1 ---- */
#define GEMM_TM 64
#define GEMM_TN 64
#define GEMM_TK 16
#define GEMM_THREADS 256 /* 16 x 16 threads, a 4 x 4 patch of C each */
#define NAIVE_DS_ROWS 1  /* rows of dS per block of naive_ds */
#define NAIVE_DS_THREADS 256

/* ---- step 2 ---- */
#define BWD_BR_SIZES "32, 64"
#define BWD_BC_SIZES "32, 64"
#define BWD_DEFAULT_BR 32
#define BWD_DEFAULT_BC 32
static inline int bwd_br_supported(int Br) { return Br == 32 || Br == 64; }
static inline int bwd_bc_supported(int Bc) { return Bc == 32 || Bc == 64; }

/* Rows of a shared-memory tile are padded: Q_i, dO_i, K_j, V_j by BWD_PAD = 4 floats, P_ij and dS_ij by
 * BWD_P_PAD = 8 (kernels.cu says which reads and writes the padding keeps free of bank conflicts; multiples of 4,
 * so that every row starts 16-byte aligned for float4 reads). Shared memory per block in floats: K_j, V_j
 * (Bc x (d+4) each), Q_i, dO_i (Br x (d+4) each), P_ij and dS_ij (Br x (Bc+8) each), L_i and D_i (Br each). */
#define BWD_PAD 4
#define BWD_P_PAD 8
#define BWD_SMEM_FLOATS(Br, Bc, d) \
    (2 * (Bc) * ((d) + BWD_PAD) + 2 * (Br) * ((d) + BWD_PAD) + 2 * (Br) * ((Bc) + BWD_P_PAD) + 2 * (Br))
#define BWD_SMEM_FORMULA "(2 Bc (d + 4) + 2 Br (d + 4) + 2 Br (Bc + 8) + 2 Br) floats"
/* 16 x 16 threads: thread (ty, tx) owns rows ty + 16 a (or, of dK_j and dV_j, the Bc/16 keys from ty Bc/16 on)
 * and columns tx + 16 b (or column groups) of every product (kernels.cu) */
#define BWD_THREADS 256
/* Blocks per SM flash_bwd asks the compiler to fit (__launch_bounds__): 2 up to d = 64, so at most 128 registers a
 * thread (2 x 256 x 128 = the SM's 65,536), which every tile fits without spilling; 1 at d = 128, whose 64-key tiles
 * would spill under 128 (dK_j and dV_j alone are 2 x 4 x 8 registers there). Without the bound the 64 x 64 tile
 * took 166 registers at d = 64, one block per SM, and ran slower (the README, "Tiles"). */
#define BWD_BLOCKS_PER_SM(d) ((d) <= 64 ? 2 : 1)

static inline size_t bwd_smem_bytes(int Br, int Bc, int d) { return sizeof(float) * (size_t)BWD_SMEM_FLOATS(Br, Bc, d); }
/* --dq pass (dq_pass.cu): flash_dkdv keeps step 2's tiles; flash_dq has no P_ij tile, so Br (Bc + 8) floats less. */
#define DQ_SMEM_FLOATS(Br, Bc, d) (BWD_SMEM_FLOATS(Br, Bc, d) - (Br) * ((Bc) + BWD_P_PAD))
static inline size_t dq_smem_bytes(int Br, int Bc, int d) { return sizeof(float) * (size_t)DQ_SMEM_FLOATS(Br, Bc, d); }

/* ---- step 3 ---- */
#define TC_BWD_WARPS 4
#define TC_BWD_THREADS (32 * TC_BWD_WARPS)
#define TC_BWD_BC (16 * TC_BWD_WARPS) /* a warp owns 16 keys of K_j: the m16 of its S_ij^T, dK_j, dV_j */
#define TC_BWD_BR 64
#define TC_BWD_BR_SIZES "64"
#define TC_BWD_BC_SIZES "64"
#define TC_BWD_D_THREADS 256 /* tc_bwd_d: a row is d/8 consecutive lanes, 16 bytes of dO_i and O_i each */
static inline int tc_bwd_br_supported(int Br) { return Br == TC_BWD_BR; }
static inline int tc_bwd_bc_supported(int Bc) { return Bc == TC_BWD_BC; }
static inline int tc_bwd_dim_supported(int d) { return d == 64 || d == 128; }
/* Tiles of 16-bit elements in shared memory are rows of 16-byte chunks (8 elements) whose order is swizzled by the
 * row, chunk c of row r at c XOR (r mod 8) (chapter 05's layout): ldmatrix reads 8 rows of one chunk at a time,
 * and the swizzle puts them in 8 different groups of 4 banks. Rows of d elements (d = 64, 128) or of Br = 64. */
#ifdef __CUDACC__
#define TC_BWD_HOST_DEVICE __host__ __device__
#else
#define TC_BWD_HOST_DEVICE
#endif
static inline TC_BWD_HOST_DEVICE int tc_bwd_swizzled_chunk(int r, int c) { return c ^ (r & 7); }
/* Shared memory per block in bytes, elements of e bytes: K_j, V_j (Bc x d each), two buffers of Q_i and dO_i
 * (Br x d each), dS_ij^T (Bc x Br), two buffers of L_i and D_i (Br floats each). */
#define TC_BWD_SMEM_FORMULA "(2 Bc d + 4 Br d + Bc Br) e + 16 Br bytes, Br = Bc = 64"
static inline size_t tc_bwd_smem_bytes(int Br, int Bc, int d, size_t e) {
    return e * ((size_t)2 * Bc * d + (size_t)4 * Br * d + (size_t)Bc * Br) + sizeof(float) * 4 * (size_t)Br;
}

/* ---- step 4 (4_dq_vectors.cu): step 3's tiles; a warp's strip of dQ_i is 16 rows x TC_DQ_COLS columns (all of them
 * at d = 64), added 16 bytes per atomic ---- */
#define TC_DQ_COLS 64

/* ---- step 5 (5_wide_blocks.cu): step 4 with Bc = 128 keys per block (8 warps of 16 keys), S_ij^T and dP_ij^T in
 * chunks of TC_WIDE_QC queries, and at d = 64 two blocks per SM (__launch_bounds__: at most 128 registers a thread,
 * 2 x 256 x 128 = the SM's 65,536, which the 32-query chunks fit without spilling); at d = 128, where dK_j and dV_j
 * alone are 128 registers a thread, one. Shared memory: the same formula at Bc = 128. ---- */
#define TC_WIDE_WARPS 8
#define TC_WIDE_THREADS (32 * TC_WIDE_WARPS)
#define TC_WIDE_BC (16 * TC_WIDE_WARPS)
#define TC_WIDE_BR 64
#define TC_WIDE_BR_SIZES "64"
#define TC_WIDE_BC_SIZES "128"
#define TC_WIDE_QC 32
#define TC_WIDE_BLOCKS_PER_SM(d) ((d) <= 64 ? 2 : 1)
#define TC_WIDE_SMEM_FORMULA "(2 Bc d + 4 Br d + Bc Br) e + 16 Br bytes, Br = 64, Bc = 128"
static inline int tc_wide_br_supported(int Br) { return Br == TC_WIDE_BR; }
static inline int tc_wide_bc_supported(int Bc) { return Bc == TC_WIDE_BC; }

/* ---- step 6 (6_wgmma.cu, sm_90a): step 5's tiles, Br = 64 and Bc = 128, as two warpgroups of 64 keys (wgmma's M);
 * one block per SM. Shared memory: the same formula, every tile in wgmma's 128-byte-swizzle layout
 * (common/wgmma_layout.h), each a multiple of its 1024-byte period. ---- */
#define TC_WG_THREADS 256
#define TC_WG_BR 64
#define TC_WG_BC 128
#define TC_WG_BR_SIZES "64"
#define TC_WG_BC_SIZES "128"
#define TC_WG_SMEM_FORMULA "(2 Bc d + 4 Br d + Bc Br) e + 16 Br bytes, Br = 64, Bc = 128"
static inline int tc_wg_br_supported(int Br) { return Br == TC_WG_BR; }
static inline int tc_wg_bc_supported(int Bc) { return Bc == TC_WG_BC; }
/* Where warpgroup g's operands start, in bytes from their tile's start: its 64 rows of K_j and V_j (A of S^T and
 * dP^T: row 64 g of each panel, rows of 128 bytes), and its d/2 features of K_j (B of dQ_i: column d/2 g, a whole
 * panel at d = 128, the second half of the one panel at d = 64). The tests check every element wgmma reads from
 * there (tests/ch07/test_wgmma_layout.c). */
static inline TC_BWD_HOST_DEVICE unsigned tc_wg_key_rows(int g) { return (unsigned)(64 * g * 128); }
static inline TC_BWD_HOST_DEVICE unsigned tc_wg_dq_cols(int g, int d) { return sw128_offset(TC_WG_BC, 0, d / 2 * g); }

/* ---- step 8 (8_dq_bulk.cu, sm_90a): step 6's tiles (step 7's loop), and dQ_i's share of the block in fp32, dQ_s:
 * Br rows of TC_BULK_DQ_STRIDE floats, d and 32 bytes of padding (a warp's 8-byte stores of its accumulator rows
 * then hit 32 banks; every row 16-byte aligned for the bulk reduction). ---- */
#define TC_BULK_DQ_STRIDE(d) ((d) + 8)
#define TC_BULK_SMEM_FORMULA "(2 Bc d + 4 Br d + Bc Br) e + 16 Br + 4 Br (d + 8) bytes, Br = 64, Bc = 128"
static inline size_t tc_bulk_smem_bytes(int Br, int Bc, int d, size_t e) {
    return tc_bwd_smem_bytes(Br, Bc, d, e) + sizeof(float) * (size_t)Br * TC_BULK_DQ_STRIDE(d);
}

/* ---- step 9 (9_dq_overlap.cu, sm_90a): step 8's, with a second dS_ij^T tile (the next visit writes one while the
 * last visit's dQ_i product reads the other). ---- */
#define TC_OVL_SMEM_FORMULA "(2 Bc d + 4 Br d + 2 Bc Br) e + 16 Br + 4 Br (d + 8) bytes, Br = 64, Bc = 128"
static inline size_t tc_ovl_smem_bytes(int Br, int Bc, int d, size_t e) {
    return tc_bulk_smem_bytes(Br, Bc, d, e) + e * (size_t)Bc * Br;
}

/* ---- step 10 (10_warp_specialized.cu, sm_90a): step 9's tiles and shared memory, and five mbarriers (K_j and V_j
 * landed; each of two stages landed, and read); a producer warpgroup beside step 9's two, which gives its registers
 * to them (setmaxnreg: 24 + 2 x 240 a thread x 128 = 64,512 of the SM's 65,536). ---- */
#define TC_WS_THREADS (128 + TC_WG_THREADS)
#define TC_WS_PRODUCER_REGS 24
#define TC_WS_CONSUMER_REGS 240
/* Its pipeline, here so that its CPU model (tests/ch07/test_ws_pipeline.c) runs the kernel's own rules. Visit
 * v = i - i_first (0, 1, ..) of a block uses stage tc_ws_stage(v) for the (v / TC_WS_STAGES)-th time: the consumers
 * wait on the stage's `full` mbarrier with parity tc_ws_full_parity(v), and the copying warp waits on its `empty`
 * with tc_ws_empty_parity(v) before it copies visit v there (from v = TC_WS_STAGES on: the use before, v - STAGES,
 * completed `empty`'s phase (v - STAGES) / STAGES). A phase completes when its arrivals are in (and, for `full`, the
 * announced bytes have landed): TC_WS_FULL_ARRIVALS, the copying lane's arrive.expect_tx and each of its warp's 32
 * lanes' cp.async arrival; TC_WS_EMPTY_ARRIVALS, one per consumer thread (an arrival releases the arriving thread's
 * own earlier accesses only, and every lane has read the stage's L_i and D_i). The named barriers (0 is
 * __syncthreads's): the consumers' TC_WG_THREADS threads meet on TC_WS_DS_READY once a visit; they and the producer's
 * warp 1
 * (TC_WS_DQ_THREADS) hand dQ_s over on TC_WS_DQ_READY (the consumers arrive, the warp waits) and back on
 * TC_WS_DQ_FREE, at the start of each visit, where both sides wait: the warp until the consumers are ready to store,
 * they until it has done with the visit before's. Two sides that wait on one barrier at different instructions need
 * barrier.sync without .aligned (compute-sanitizer's synccheck reports bar.sync there); the warp arriving instead
 * is as right by PTX's rules, but racecheck does not follow that order (tests/ch07/handover.cu; in step 10 it still
 * reports one hazard on dQ_s, the same with the consumers waiting on DQ_READY too: the chapter's README says what was
 * tried and how the bench treats it). */
#define TC_WS_STAGES 2
#define TC_WS_FULL_ARRIVALS (1 + 32)
#define TC_WS_EMPTY_ARRIVALS TC_WG_THREADS
#define TC_WS_DS_READY 1
#define TC_WS_DQ_READY 2
#define TC_WS_DQ_FREE 3
#define TC_WS_DQ_THREADS (TC_WG_THREADS + 32)
static inline TC_BWD_HOST_DEVICE int tc_ws_stage(int v) { return v % TC_WS_STAGES; }
static inline TC_BWD_HOST_DEVICE unsigned tc_ws_full_parity(int v) { return (unsigned)(v / TC_WS_STAGES % 2); }
static inline TC_BWD_HOST_DEVICE unsigned tc_ws_empty_parity(int v) { return (unsigned)((v / TC_WS_STAGES - 1) % 2); }
#define TC_WS_SMEM_FORMULA "(2 Bc d + 4 Br d + 2 Bc Br) e + 16 Br + 4 Br (d + 8) + 40 bytes, Br = 64, Bc = 128"
static inline size_t tc_ws_smem_bytes(int Br, int Bc, int d, size_t e) {
    return tc_ovl_smem_bytes(Br, Bc, d, e) + 5 * sizeof(uint64_t);
}

/* ---- step 11 (11_warp_tiles.cu): step 5's block, Br = 64, Bc = 128, 8 warps, as 4 x 2: warp w owns keys
 * 32 (w % 4) .. + 31 of K_j in every product, the queries 32 (w / 4) .. + 31 of S_ij^T and dP_ij^T (in chunks of
 * TC_TILE_QC(d) queries: 16 at d = 64, where two blocks per SM allow 128 registers a thread), and the features
 * d/2 (w / 4) .. + d/2 - 1 of dK_j and dV_j. Shared memory: step 5's formula and a second Bc x Br tile, P_ij^T. Step 12
 * (12_lean_tiles.cu) keeps them. ---- */
#define TC_TILE_WARPS 8
#define TC_TILE_THREADS (32 * TC_TILE_WARPS)
#define TC_TILE_BR 64
#define TC_TILE_BC 128
#define TC_TILE_BR_SIZES "64"
#define TC_TILE_BC_SIZES "128"
#define TC_TILE_QC(d) ((d) <= 64 ? 16 : 32)
#define TC_TILE_BLOCKS_PER_SM(d) ((d) <= 64 ? 2 : 1)
#define TC_TILE_SMEM_FORMULA "(2 Bc d + 4 Br d + 2 Bc Br) e + 16 Br bytes, Br = 64, Bc = 128"
static inline int tc_tile_br_supported(int Br) { return Br == TC_TILE_BR; }
static inline int tc_tile_bc_supported(int Bc) { return Bc == TC_TILE_BC; }
static inline size_t tc_tile_smem_bytes(int Br, int Bc, int d, size_t e) {
    return tc_bwd_smem_bytes(Br, Bc, d, e) + e * (size_t)Bc * Br;
}
/* Which part of each product warp w (0 .. TC_TILE_WARPS - 1) of a block of Br queries computes, here so that the tests
 * check the kernels' own rules (tests/ch07/test_cpu.c: every element of each product computed by one warp): its keys
 * of K_j, 32 from tc_tile_key0 (all products); its queries of S_ij^T and dP_ij^T, Br/2 from tc_tile_query0; its
 * features of dK_j and dV_j, d/2 from tc_tile_feature0; its strip of dQ_i, rows 16 tc_tile_dq_mt .. + 15 and the
 * d Br / 128 columns from tc_tile_dq_col0 (half the columns at Br = 64, all of them at Br = 128: 8 strips). */
static inline TC_BWD_HOST_DEVICE int tc_tile_key0(int w) { return 32 * (w % 4); }
static inline TC_BWD_HOST_DEVICE int tc_tile_query0(int w, int br) { return br / 2 * (w / 4); }
static inline TC_BWD_HOST_DEVICE int tc_tile_feature0(int w, int d) { return d / 2 * (w / 4); }
static inline TC_BWD_HOST_DEVICE int tc_tile_dq_mt(int w, int br) { return w / (128 / br); }
static inline TC_BWD_HOST_DEVICE int tc_tile_dq_col0(int w, int d, int br) { return d * br / 128 * (w % (128 / br)); }

/* ---- step 13 (13_kv_registers.cu): step 12's tiling at d = 64 on one block per SM, whose 255 registers a thread hold
 * each warp's A fragments of K_j and V_j (its 32 keys, all d features) for the whole sweep, over query blocks of
 * Br = 128 (chunks of 32). At d = 128, dK_j's and dV_j's accumulators already take 128 registers: Br = 64 and
 * fragments from shared memory, step 12's kernel. Shared memory: step 11's formula. Step 14 (14_dq_pairs.cu) keeps
 * them. ---- */
#define TC_KV_BR(d) ((d) <= 64 ? 128 : 64)
#define TC_KV_HELD(d) ((d) <= 64)
#define TC_KV_QC 32
#define TC_KV_BR_SIZES "128 at d = 64, 64 at d = 128"
#define TC_KV_SMEM_FORMULA "(2 Bc d + 4 Br d + 2 Bc Br) e + 16 Br bytes, Br = 128 at d = 64 (64 at d = 128), Bc = 128"
static inline int tc_kv_br_supported(int Br, int d) { return Br == TC_KV_BR(d); }

/* ---- step 15 (15_dq_quads.cu): step 14's tiles, and a copy of K_j (Bc d elements) for dQ's product ---- */
#define TC_QUADS_SMEM_FORMULA "(3 Bc d + 4 Br d + 2 Bc Br) e + 16 Br bytes, Br = 128 at d = 64 (64 at d = 128), Bc = 128"
static inline size_t tc_quads_smem_bytes(int Br, int Bc, int d, size_t e) {
    return tc_tile_smem_bytes(Br, Bc, d, e) + e * (size_t)Bc * d;
}

/* ---- step 17 (17_dq_squares.cu): step 16's tiles and shared memory (step 15's), but dQ_i's share (Br x d, 8,192
 * elements at both d: Br = TC_KV_BR(d)) in 8 squares of 32 rows x 32 columns, one a warp, as FlashAttention-2 tiles
 * it: warp w's rows from tc_sq_dq_row0, its columns from tc_sq_dq_col0 (2 x 4 squares at d = 128, 4 x 2 at d = 64;
 * tests/ch07/test_cpu.c checks that each element is one warp's). ---- */
static inline TC_BWD_HOST_DEVICE int tc_sq_dq_row0(int w, int d) { return 32 * (w / (d / 32)); }
static inline TC_BWD_HOST_DEVICE int tc_sq_dq_col0(int w, int d) { return 32 * (w % (d / 32)); }

#endif
