/* wmma_tiles.h: the tiles, threads and shared memory of chapter 05's first step, flash_wmma (1_wmma.cu), for the
 * host (validation, the --model lines) and the kernel; steps 2 to 4 (2_mma_staged.cu .. 4_o_registers.cu) keep them,
 * each with fewer of the tiles below (their functions at the end).
 *
 * One tile only: Br = 64 query rows (4 warps of 16 rows) and Bc = 64 keys. Shared memory holds, in this order:
 *   Q_i  [Br][d + 8]   storage type (2 bytes)
 *   K_j  [Bc][d + 8]   storage type
 *   V_j  [Bc][d + 8]   storage type
 *   S_ij [Br][Bc + 4]  fp32; P_ij is written over it in the storage type (row r of P in the first half of row r
 *                      of S, so P's row length is 2 (Bc + 4) elements of 2 bytes)
 *   O_i  [Br][d + 4]   fp32, the unnormalised output, rescaled in place by alpha
 * Every row is padded by 16 bytes, so that the 8 rows of 16 bytes that a fragment load reads at once fall into
 * different banks; every fragment pointer stays 32-byte aligned (16 rows of any of these tiles are a multiple of
 * 32 bytes, and a fragment starts at a multiple of 16 columns). */
#ifndef FA_CH05_WMMA_TILES_H
#define FA_CH05_WMMA_TILES_H

#include <stddef.h>

#include "arith.h"

#define WMMA_BR 64            /* query rows per block */
#define WMMA_BC 64            /* keys per K/V block   */
#define WMMA_ROWS_PER_WARP 16 /* one 16 x 16 fragment row per warp */
#define WMMA_THREADS (WMMA_BR / WMMA_ROWS_PER_WARP * 32)
#define WMMA_PAD16 8          /* elements of padding per row of a 2-byte tile (16 bytes) */
#define WMMA_PAD32 4          /* elements of padding per row of an fp32 tile (16 bytes)  */

#define WMMA_BR_SIZES "64"
#define WMMA_BC_SIZES "64"
static inline int wmma_br_supported(int Br) { return Br == WMMA_BR; }
static inline int wmma_bc_supported(int Bc) { return Bc == WMMA_BC; }

#define WMMA_SMEM_FORMULA                                                                                   \
    "2 (Br + 2 Bc)(d + 8) + 4 Br (Bc + 4) + 4 Br (d + 4) bytes: Q_i, K_j, V_j in the 2-byte storage type, S_ij " \
    "in fp32 (P_ij written over it), O_i in fp32, rows padded by 16 bytes"
static inline size_t wmma_smem_bytes(int Br, int Bc, int d) {
    return 2 * (size_t)(Br + 2 * Bc) * (d + WMMA_PAD16) + 4 * (size_t)Br * (Bc + WMMA_PAD32) +
           4 * (size_t)Br * (d + WMMA_PAD32);
}

/* Step 2 (mma_staged) has all of these tiles (wmma_smem_bytes); step 3 (repack) keeps S_ij and P_ij in registers,
 * so Q_i, K_j, V_j and O_i; step 4 (o_registers) keeps O_i in registers too, so Q_i, K_j and V_j. */
#define REPACK_SMEM_FORMULA                                                                                  \
    "2 (Br + 2 Bc)(d + 8) + 4 Br (d + 4) bytes: Q_i, K_j, V_j in the 2-byte storage type, O_i in fp32, rows " \
    "padded by 16 bytes"
static inline size_t repack_smem_bytes(int Br, int Bc, int d) {
    return 2 * (size_t)(Br + 2 * Bc) * (d + WMMA_PAD16) + 4 * (size_t)Br * (d + WMMA_PAD32);
}
#define O_REGISTERS_SMEM_FORMULA \
    "2 (Br + 2 Bc)(d + 8) bytes: Q_i, K_j, V_j in the 2-byte storage type, rows padded by 16 bytes"
static inline size_t o_registers_smem_bytes(int Br, int Bc, int d) {
    return 2 * (size_t)(Br + 2 * Bc) * (d + WMMA_PAD16);
}

#endif
