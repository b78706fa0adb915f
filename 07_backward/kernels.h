/* kernels.h: chapter 07's launchers. Each exists twice: the timed build (plain name) and the instrumented build
 * that counts global-memory bytes (_counted; common/io_tally.cuh).
 *
 *   forward.cu   the forward pass that makes O and L: chapter 03's flash_v2 kernel, copied (chapters stand alone)
 *   1_naive.cu   step 1, the backward through HBM: P, dP and dS materialized, six kernels
 *   kernels.cu   step 2, FlashAttention-2's backward: D's preprocessing, then one block per K_j, V_j
 *   dq_pass.cu   step 2 with --dq pass: dQ in a kernel of its own (one block per Q_i), no atomics
 *   3_tensor_cores.cu  step 3, step 2 on mma.sync in fp16 or bf16
 *   4_dq_vectors.cu    step 4, step 3 with dQ in 16 x 64 strips per warp, 16-byte atomic adds
 *   5_wide_blocks.cu   step 5, step 4 on 128-key blocks of 8 warps, 2 blocks per SM at d = 64
 *   6_wgmma.cu         step 6, step 5 on Hopper's wgmma (sm_90a): two warpgroups of 64 keys
 *   7_lean_loop.cu     step 7, step 6 issuing fewer instructions: descriptors built once, the mask in a branch
 *   8_dq_bulk.cu       step 8, step 7 with dQ_i's share added by the copy engine (bulk reductions from shared memory)
 *   9_dq_overlap.cu    step 9, step 8 with dQ_i's product running on while the next visit begins
 *   10_warp_specialized.cu  step 10, step 9 with a producer warpgroup: the copies by TMA, dQ's reductions
 *   11_warp_tiles.cu   step 11, step 5 (mma.sync again) with each product on a warp tiling of its own
 *   12_lean_tiles.cu   step 12, step 11 issuing fewer instructions: the mask in a branch, no zeroing, scale folded
 *   13_kv_registers.cu step 13, step 12 at d = 64 on one block per SM: K_j, V_j's fragments in registers, Br = 128
 *   14_dq_pairs.cu     step 14, step 13 with dQ added by 8-byte atomics straight from the fragments, no shuffles
 *   15_dq_quads.cu     step 15, step 14 with dQ added by 16-byte atomics from an interleaved copy of K_j
 *   16_stat_copies.cu  step 16, step 15 with L_i and D_i copied by cp.async instead of loaded into registers
 *   17_dq_squares.cu   step 17, step 16 with dQ's product tiled in squares of 32 x 32 a warp, not strips of 16 rows
 *   18_matrix_stores.cu step 18, step 17 with P^T and dS^T stored by stmatrix (sm_90), not 4 bytes a lane
 *
 * Layout everywhere: [B, H, N, d] row-major, fp32 (step 3: the storage type, but L, D and dQ); head h of batch b
 * starts at row (b H + h) N. */
#ifndef FA_CH07_KERNELS_H
#define FA_CH07_KERNELS_H

#include "attention.h" /* AttnArgs (the forward's) */
#include "device.h"    /* KernelResources */

#ifdef __cplusplus
extern "C" {
#endif

/* The backward's problem: the forward's inputs and outputs, the upstream gradient dO, and the gradients.
 * scale = 1 / sqrt(d) everywhere; L is the forward's natural-log log-sum-exp of each row's scaled scores, so
 * P_ij = exp(scale q_i . k_j - L_i). */
typedef struct {
    const float *Q, *K, *V, *O, *dO; /* [B, H, N, d]                                                  */
    const float *L;                  /* [B, H, N]                                                     */
    float *D;                        /* [B, H, N]: D_i = dO_i . O_i (step 2's preprocessing writes it) */
    float *dQ, *dK, *dV;             /* [B, H, N, d]                                                  */
    float *P, *dP, *dS;              /* [B, H, N, N]: step 1's matrices in HBM (NULL in step 2)       */
    int B, H, N, d;
    int Br, Bc;                      /* step 2's tiles (step 1's GEMM tiles are fixed: tiles.h)       */
    int causal;
    /* Step 3's arrays in the storage type dtype (fp16 or bf16): its inputs Q, K, V, O, dO and its outputs dK, dV.
     * L, D and dQ are the fp32 arrays above (dQ: the sum of fp32 atomic adds). NULL in steps 1 and 2. */
    const void *Qt, *Kt, *Vt, *Ot, *dOt;
    void *dKt, *dVt;
    DType dtype;
} BwdArgs;

typedef void (*BwdLaunch)(const BwdArgs *a);

/* ---- forward.cu: chapter 03's kernel, at FWD_BR x FWD_BC (forward_tiles.h) whatever a->Br, a->Bc say ---- */
void fwd_flash_v2_launch(const AttnArgs *a);
void fwd_flash_v2_launch_counted(const AttnArgs *a);
void fwd_flash_v2_resources(int d, KernelResources *r);
void fwd_flash_v2_resources_counted(int d, KernelResources *r);

/* ---- 1_naive.cu: step 1, six kernels in this order (each reads what the ones before wrote) ---------------
 *   naive_p    P  = exp(scale Q K^T - L)   (0 above the diagonal with the mask)   GEMM, grid over P's tiles
 *   naive_dv   dV = P^T dO                                                        GEMM
 *   naive_dp   dP = dO V^T                                                        GEMM
 *   naive_ds   dS = P o (dP - D), D_i = dO_i . O_i (computed in the row, not stored)   one row of dS at a time
 *   naive_dq   dQ = scale dS K                                                    GEMM
 *   naive_dk   dK = scale dS^T Q                                                  GEMM */
void naive_p_launch(const BwdArgs *a);
void naive_p_launch_counted(const BwdArgs *a);
void naive_dv_launch(const BwdArgs *a);
void naive_dv_launch_counted(const BwdArgs *a);
void naive_dp_launch(const BwdArgs *a);
void naive_dp_launch_counted(const BwdArgs *a);
void naive_ds_launch(const BwdArgs *a);
void naive_ds_launch_counted(const BwdArgs *a);
void naive_dq_launch(const BwdArgs *a);
void naive_dq_launch_counted(const BwdArgs *a);
void naive_dk_launch(const BwdArgs *a);
void naive_dk_launch_counted(const BwdArgs *a);
/* kernel: 0..5 in the order above */
void naive_resources(int kernel, int d, KernelResources *r);
void naive_resources_counted(int kernel, int d, KernelResources *r);

/* ---- kernels.cu: step 2 ------------------------------------------------------------------------------------
 *   flash_bwd_d   D_i = dO_i . O_i for every row, and dQ set to 0 (the main kernel adds into it)
 *   flash_bwd     grid (Tc, B*H): one block per K_j, V_j; loops over the query blocks i it sees, recomputes
 *                 P_ij from L_i, keeps dK_j and dV_j on chip, adds its share of dQ_i with fp32 atomics */
void flash_bwd_d_launch(const BwdArgs *a);
void flash_bwd_d_launch_counted(const BwdArgs *a);
void flash_bwd_launch(const BwdArgs *a);
void flash_bwd_launch_counted(const BwdArgs *a);
void flash_bwd_resources(int d, int Br, int Bc, KernelResources *r);
void flash_bwd_resources_counted(int d, int Br, int Bc, KernelResources *r);

/* ---- dq_pass.cu: step 2 with --dq pass, dQ in a kernel of its own -----------------------------------------------
 *   flash_dq     grid (Tr, B*H): one block per Q_i; computes D_i (and stores it), loops over the key blocks j it
 *                sees, recomputes P_ij and dS_ij, keeps dQ_i in registers and stores it once
 *   flash_dkdv   flash_bwd without dQ (reads the D flash_dq stored) */
void flash_dq_launch(const BwdArgs *a);
void flash_dq_launch_counted(const BwdArgs *a);
void flash_dkdv_launch(const BwdArgs *a);
void flash_dkdv_launch_counted(const BwdArgs *a);
void flash_dq_resources(int d, int Br, int Bc, KernelResources *r);
void flash_dq_resources_counted(int d, int Br, int Bc, KernelResources *r);
void flash_dkdv_resources(int d, int Br, int Bc, KernelResources *r);
void flash_dkdv_resources_counted(int d, int Br, int Bc, KernelResources *r);

/* ---- 3_tensor_cores.cu: step 3, fp16 or bf16 (a->dtype) -----------------------------------------------------
 *   tc_bwd_d   D_i = dO_i . O_i (16-bit dO and O, fp32 sum) for every row, and dQ (fp32) set to 0
 *   tc_bwd     grid (Tc, B*H), Br = Bc = 64: step 2's loop order with the five products on mma.sync.m16n8k16
 *              (fp32 accumulators); dK_j, dV_j in registers, stored once in the storage type; dQ_i's share added
 *              with fp32 atomics */
void tc_bwd_d_launch(const BwdArgs *a);
void tc_bwd_d_launch_counted(const BwdArgs *a);
void tc_bwd_launch(const BwdArgs *a);
void tc_bwd_launch_counted(const BwdArgs *a);
void tc_bwd_resources(int d, int dtype, KernelResources *r);
void tc_bwd_resources_counted(int d, int dtype, KernelResources *r);

/* ---- 4_dq_vectors.cu: step 4, after step 3's tc_bwd_d ----------------------------------------------------------
 *   tc_vec_bwd  tc_bwd with a warp's share of dQ_i in 16 x TC_DQ_COLS strips, added by 16-byte atomics (sm_90) */
void tc_vec_bwd_launch(const BwdArgs *a);
void tc_vec_bwd_launch_counted(const BwdArgs *a);
void tc_vec_bwd_resources(int d, int dtype, KernelResources *r);
void tc_vec_bwd_resources_counted(int d, int dtype, KernelResources *r);

/* ---- 5_wide_blocks.cu: step 5, after step 3's tc_bwd_d ---------------------------------------------------------
 *   tc_wide_bwd  grid (Tc, B*H), Br = 64, Bc = 128: tc_vec_bwd with 8 warps, 2 blocks per SM at d = 64 */
void tc_wide_bwd_launch(const BwdArgs *a);
void tc_wide_bwd_launch_counted(const BwdArgs *a);
void tc_wide_bwd_resources(int d, int dtype, KernelResources *r);
void tc_wide_bwd_resources_counted(int d, int dtype, KernelResources *r);

/* ---- 6_wgmma.cu: step 6, after step 3's tc_bwd_d; compiled for sm_90a alone --------------------------------------
 *   tc_wgmma_bwd  grid (Tc, B*H), Br = 64, Bc = 128: tc_wide_bwd's loop, its five products on wgmma */
void tc_wgmma_bwd_launch(const BwdArgs *a);
void tc_wgmma_bwd_launch_counted(const BwdArgs *a);
void tc_wgmma_bwd_resources(int d, int dtype, KernelResources *r);
void tc_wgmma_bwd_resources_counted(int d, int dtype, KernelResources *r);

/* ---- 7_lean_loop.cu: step 7, after step 3's tc_bwd_d; compiled for sm_90a alone -----------------------------------
 *   tc_lean_bwd  grid (Tc, B*H), Br = 64, Bc = 128: tc_wgmma_bwd's products and loop in fewer instructions */
void tc_lean_bwd_launch(const BwdArgs *a);
void tc_lean_bwd_launch_counted(const BwdArgs *a);
void tc_lean_bwd_resources(int d, int dtype, KernelResources *r);
void tc_lean_bwd_resources_counted(int d, int dtype, KernelResources *r);

/* ---- 8_dq_bulk.cu: step 8, after step 3's tc_bwd_d; compiled for sm_90a alone -------------------------------------
 *   tc_bulk_bwd  grid (Tc, B*H), Br = 64, Bc = 128: tc_lean_bwd with dQ_i's share through shared memory and the copy
 *                engine's bulk reductions */
void tc_bulk_bwd_launch(const BwdArgs *a);
void tc_bulk_bwd_launch_counted(const BwdArgs *a);
void tc_bulk_bwd_resources(int d, int dtype, KernelResources *r);
void tc_bulk_bwd_resources_counted(int d, int dtype, KernelResources *r);

/* ---- 9_dq_overlap.cu: step 9, after step 3's tc_bwd_d; compiled for sm_90a alone ----------------------------------
 *   tc_ovl_bwd   grid (Tc, B*H), Br = 64, Bc = 128: tc_bulk_bwd with dQ_i's product waited on after the next visit's
 *                first barrier and S^T (two dS_ij^T buffers) */
void tc_ovl_bwd_launch(const BwdArgs *a);
void tc_ovl_bwd_launch_counted(const BwdArgs *a);
void tc_ovl_bwd_resources(int d, int dtype, KernelResources *r);
void tc_ovl_bwd_resources_counted(int d, int dtype, KernelResources *r);

/* ---- 10_warp_specialized.cu: step 10, after step 3's tc_bwd_d; compiled for sm_90a alone -----------------------
 *   tc_ws_bwd    grid (Tc, B*H), Br = 64, Bc = 128, 384 threads: tc_ovl_bwd's two warpgroups as consumers, beside a
 *                producer warpgroup that copies K_j, V_j, Q_i, dO_i (tensor maps), L_i, D_i and adds dQ_s into dQ */
void tc_ws_bwd_launch(const BwdArgs *a);
void tc_ws_bwd_launch_counted(const BwdArgs *a);
void tc_ws_bwd_resources(int d, int dtype, KernelResources *r);
void tc_ws_bwd_resources_counted(int d, int dtype, KernelResources *r);

/* ---- 11_warp_tiles.cu: step 11, after step 3's tc_bwd_d ---------------------------------------------------------
 *   tc_tile_bwd  grid (Tc, B*H), Br = 64, Bc = 128: tc_wide_bwd with each product on a warp tiling of its own (4 x 2
 *                warps of 32 keys; P_ij^T in shared memory beside dS_ij^T), 2 blocks per SM at d = 64 */
void tc_tile_bwd_launch(const BwdArgs *a);
void tc_tile_bwd_launch_counted(const BwdArgs *a);
void tc_tile_bwd_resources(int d, int dtype, KernelResources *r);
void tc_tile_bwd_resources_counted(int d, int dtype, KernelResources *r);

/* ---- 12_lean_tiles.cu: step 12, after step 3's tc_bwd_d ---------------------------------------------------------
 *   tc_tile_lean_bwd  grid (Tc, B*H), Br = 64, Bc = 128: tc_tile_bwd's products and loop in fewer instructions */
void tc_tile_lean_bwd_launch(const BwdArgs *a);
void tc_tile_lean_bwd_launch_counted(const BwdArgs *a);
void tc_tile_lean_bwd_resources(int d, int dtype, KernelResources *r);
void tc_tile_lean_bwd_resources_counted(int d, int dtype, KernelResources *r);

/* ---- 13_kv_registers.cu: step 13, after step 3's tc_bwd_d -------------------------------------------------------
 *   tc_kvreg_bwd  grid (Tc, B*H), Bc = 128, 1 block per SM: tc_tile_lean_bwd with, at d = 64, Br = 128 and each
 *                 warp's fragments of K_j and V_j held in registers for the whole sweep (d = 128: its kernel) */
void tc_kvreg_bwd_launch(const BwdArgs *a);
void tc_kvreg_bwd_launch_counted(const BwdArgs *a);
void tc_kvreg_bwd_resources(int d, int dtype, KernelResources *r);
void tc_kvreg_bwd_resources_counted(int d, int dtype, KernelResources *r);

/* ---- 14_dq_pairs.cu: step 14, after step 3's tc_bwd_d -----------------------------------------------------------
 *   tc_pairs_bwd  grid (Tc, B*H), Bc = 128, 1 block per SM: tc_kvreg_bwd with dQ_i's share added by 8-byte atomics
 *                 straight from the fragments (no shuffles) */
void tc_pairs_bwd_launch(const BwdArgs *a);
void tc_pairs_bwd_launch_counted(const BwdArgs *a);
void tc_pairs_bwd_resources(int d, int dtype, KernelResources *r);
void tc_pairs_bwd_resources_counted(int d, int dtype, KernelResources *r);

/* ---- 15_dq_quads.cu: step 15, after step 3's tc_bwd_d -----------------------------------------------------------
 *   tc_quads_bwd  grid (Tc, B*H), Bc = 128, 1 block per SM: tc_pairs_bwd with dQ's product reading a copy of K_j whose
 *                 features are interleaved in pairs, so that dQ_i's share goes by 16-byte atomics from the fragments */
void tc_quads_bwd_launch(const BwdArgs *a);
void tc_quads_bwd_launch_counted(const BwdArgs *a);
void tc_quads_bwd_resources(int d, int dtype, KernelResources *r);
void tc_quads_bwd_resources_counted(int d, int dtype, KernelResources *r);

/* ---- 16_stat_copies.cu: step 16, after step 3's tc_bwd_d -------------------------------------------------------
 *   tc_stats_bwd  grid (Tc, B*H), Bc = 128, 1 block per SM: tc_quads_bwd with the next query block's L_i and D_i
 *                 copied by 4-byte cp.async, scaled where the products read them */
void tc_stats_bwd_launch(const BwdArgs *a);
void tc_stats_bwd_launch_counted(const BwdArgs *a);
void tc_stats_bwd_resources(int d, int dtype, KernelResources *r);
void tc_stats_bwd_resources_counted(int d, int dtype, KernelResources *r);

/* ---- 17_dq_squares.cu: step 17, after step 3's tc_bwd_d -------------------------------------------------------
 *   tc_squares_bwd  grid (Tc, B*H), Bc = 128, 1 block per SM: tc_stats_bwd with dQ_i's product tiled in squares of
 *                   32 rows x 32 columns, one a warp, instead of strips of 16 rows */
void tc_squares_bwd_launch(const BwdArgs *a);
void tc_squares_bwd_launch_counted(const BwdArgs *a);
void tc_squares_bwd_resources(int d, int dtype, KernelResources *r);
void tc_squares_bwd_resources_counted(int d, int dtype, KernelResources *r);

/* ---- 18_matrix_stores.cu: step 18, after step 3's tc_bwd_d ----------------------------------------------------
 *   tc_stores_bwd  grid (Tc, B*H), Bc = 128, 1 block per SM: tc_squares_bwd with P_ij^T and dS_ij^T stored to shared
 *                  memory by stmatrix.x4 on sm_90 (4-byte stores before) */
void tc_stores_bwd_launch(const BwdArgs *a);
void tc_stores_bwd_launch_counted(const BwdArgs *a);
void tc_stores_bwd_resources(int d, int dtype, KernelResources *r);
void tc_stores_bwd_resources_counted(int d, int dtype, KernelResources *r);

#ifdef __cplusplus
}
#endif
#endif
