/* model.h: chapter 07's closed forms: the bytes each kernel requests from global memory, the FLOPs, the grids.
 *
 * Per head, with e = 4 bytes (fp32), N rows of d, scale = 1 / sqrt(d). The backward reads Q, K, V, O, dO and L
 * and writes dQ, dK, dV. FLOPs, the convention of FlashAttention-2's paper: five N x N x d products (S = Q K^T
 * again, dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q) against the forward's two, 10 B H N^2 d, 2.5 times
 * the forward's 4 B H N^2 d; halved with the causal mask.
 *
 * Step 1 (naive), its GEMMs counted as tiles.h says: a GEMM of M x Nc outputs and inner length Kin reads
 * e Kin (M ceil(Nc/TN) + Nc ceil(M/TM)) and writes e M Nc (TM = GEMM_TM, TN = GEMM_TN). With tN = ceil(N/TN),
 * td = ceil(d/TN), tm = ceil(N/TM):
 *   naive_p   reads e N d (tN + tm) + 4 N tN (Q, K panels; L of a block's rows)   writes e N^2 (P)
 *   naive_dv  reads e N (N td + d tm)          (P^T, dO panels)                    writes e N d (dV)
 *   naive_dp  reads e N d (tN + tm)            (dO, V panels)                      writes e N^2 (dP)
 *   naive_ds  reads e N (2 d + 2 N)            (dO_i, O_i, P_i, dP_i per row)      writes e N^2 (dS)
 *   naive_dq  reads e N (N td + d tm)          (dS, K panels)                      writes e N d (dQ)
 *   naive_dk  reads e N (N td + d tm)          (dS^T, Q panels)                    writes e N d (dK)
 * The mask changes no byte of step 1: its kernels compute every entry and write 0 above the diagonal.
 *
 * Step 2 (flash), with rows = the query rows the Tc key blocks load in all: N Tc without the mask; with it, key
 * block j starts at query block floor(j Bc / Br), the first that holds a row >= j Bc, so
 * rows = sum_j (N - Br floor(j Bc / Br)):
 *   flash_bwd_d  reads 2 e N d (dO, O)                 writes 4 N + 4 N d (D; dQ set to 0)
 *   flash_bwd    reads 2 e N d + (2 e d + 8) rows       writes 2 e N d + 4 d rows
 *                (K_j, V_j once; Q_i, dO_i, L_i, D_i per visit)   (dK_j, dV_j once; dQ_i's share per visit, each
 *                                                                  an fp32 atomic add of 4 bytes)
 * Step 2 with --dq pass (dq_pass.cu), with keys = the keys the Tr query blocks load in all (the forward's
 * attn_keys_loaded: N Tr without the mask, each query block up to its diagonal with it):
 *   flash_dq     reads 3 e N d + 4 N + 2 e d keys         writes 4 N + 4 N d
 *                (Q_i, dO_i, O_i, L_i once; K_j, V_j per visit)   (D; dQ_i once, plain stores)
 *   flash_dkdv   reads 2 e N d + (2 e d + 8) rows          writes 2 e N d   (flash_bwd without dQ)
 * Step 3 (tensor_cores) moves step 2's elements with e = 2 (fp16 or bf16) for Q, K, V, O, dO, dK and dV; L, D and
 * dQ stay fp32 (4 bytes): the same two formulas, e the storage type's size (tc_bwd_d, tc_bwd; Br = Bc = 64).
 * The forward that feeds them (chapter 03's kernel at FWD_BR x FWD_BC, a setup row outside the backward's
 * total): reads 4 d (N + 2 keys), writes 4 N (d + 1), keys = attn_keys_loaded. A ragged last tile moves only
 * its real rows everywhere, so every sum is exact for every N. */
#ifndef FA_CH07_MODEL_H
#define FA_CH07_MODEL_H

#include "io_bytes.h"
#include "options.h"
#include "report.h"

/* The steps (--kernel): 1 naive, 2 flash (fp32), then the steps on tensor cores in fp16 or bf16, from 3 on: 3-5 and
 * 11-18 on mma.sync, 6-10 on wgmma (sm_90 alone). */
enum {
    BWD_NAIVE = 0, BWD_FLASH = 1, BWD_TC = 2, BWD_VEC = 3, BWD_WIDE = 4, BWD_WGMMA = 5, BWD_LEAN = 6, BWD_BULK = 7,
    BWD_OVL = 8, BWD_WS = 9, BWD_TILE = 10, BWD_TILE_LEAN = 11, BWD_KV_REGS = 12, BWD_DQ_PAIRS = 13,
    BWD_DQ_QUADS = 14, BWD_STAT_COPIES = 15, BWD_DQ_SQUARES = 16,
    BWD_MATRIX_STORES = 17, BWD_STEPS
};
enum { CH07_OPT_KERNEL = 0, CH07_OPT_DQ = 1 };
enum { DQ_ATOMIC = 0, DQ_PASS = 1 }; /* --dq: step 2's dQ by atomic adds (kernels.cu) or in a pass (dq_pass.cu) */
extern const ChapterOption ch07_options[];
int bwd_step(const Options *o); /* the --kernel of o */
int bwd_16bit(const Options *o); /* a step on tensor cores (3 on): 16-bit storage */
int bwd_hopper(const Options *o); /* a step on wgmma (6 to 10): sm_90 alone */
static inline int bwd_step_on_wgmma(int step) { return step >= BWD_WGMMA && step <= BWD_WS; } /* the same rule */
int bwd_dq_pass(const Options *o); /* --dq pass (step 2 only) */

/* Kernels of step 1 (report rows 1..6; row 0 is the forward) and of steps 2 on (rows 1..2: D's preprocessing, then
 * the main kernel). */
enum { NAIVE_P, NAIVE_DV, NAIVE_DP, NAIVE_DS, NAIVE_DQ, NAIVE_DK, NAIVE_KERNELS };
enum { FLASH_D, FLASH_MAIN, FLASH_KERNELS };
/* --dq pass: flash_dq (which computes D too) in the first row, flash_dkdv in the second */
enum { PASS_DQ = FLASH_D, PASS_DKDV = FLASH_MAIN };

IoBytes fwd_model_bytes(const Options *o);
IoBytes naive_model_bytes(const Options *o, int kernel);
IoBytes flash_model_bytes(const Options *o, int kernel); /* steps 2 and 3: elements of dtype_size(o->dtype) */
IoBytes dq_pass_model_bytes(const Options *o, int kernel); /* step 2 with --dq pass: PASS_DQ, PASS_DKDV */
/* Query rows the key blocks of one head load in all (rows above). */
unsigned long long flash_rows_loaded(int N, int Br, int Bc, int causal);
/* Compulsory: the backward reads Q, K, V, O, dO and L once and writes dQ, dK, dV once (step 3: dQ in fp32). */
IoBytes bwd_ideal_bytes(const Options *o);

unsigned long long bwd_flops(const Options *o);       /* 10 B H N^2 d, half with the mask */
unsigned long long fwd_flops(const Options *o);       /* 4 B H N^2 d, half with the mask  */
unsigned long long bwd_softmax_ops(const Options *o); /* 5 per unmasked score: exp(S - L) 3, P (dP - D) 2 */

long long flash_bwd_grid_blocks(const Options *o); /* (Tc, B*H) */

/* Fills m with the forward (a setup row) and the kernels of o's step; returns how many. */
int bwd_models(const Options *o, KernelModel *m);

#endif
