/* tiles.h: chapter 03's tiles, thread count and shared-memory layout, in one place for the host (validation,
 * the model, the --model lines) and for the kernel, so that the budget the host checks is the one the
 * kernel uses.
 *
 * A thread block owns one query block Q_i and keeps four things in shared memory: Q_i (Br x d) for the whole
 * sweep, the key and value blocks K_j and V_j (Bc x d each, exactly as stored in HBM: K_j is neither
 * transposed nor padded, which is this chapter's bank-conflict problem), and P_ij (Br x Bc). Q_i and P_ij
 * rows are padded (by 4 and 8 floats) so that every shared access other than the K_j^T reads is free of bank
 * conflicts, and ncu's conflict counter sees those alone (kernels.cu says which lanes read what).
 *
 * Threads: the block's warps split Q_i's rows, FV2_ROWS_PER_WARP = 16 each, so Br = 16 x warps and a block
 * has 2 Br threads. A warp is 4 row groups of FV2_ROW_LANES = 8 lanes; lane g of a row group owns FV2_TM = 4
 * rows, the S columns g, g+8, g+16, ... and the O float4 columns g, g+8, ... of those rows. */
#ifndef FA_CH03_TILES_H
#define FA_CH03_TILES_H

#include <stddef.h>

#ifndef FV2_TM
#define FV2_TM 4                          /* query rows per thread                      */
#endif
#define FV2_ROW_LANES 8                   /* lanes that share a row group (split a row)  */
#define FV2_ROWS_PER_WARP (4 * FV2_TM)    /* 4 row groups x FV2_TM rows                  */
#define FV2_Q_PAD 4          /* floats of padding after each row of Q_i                 */
#define FV2_P_PAD 8          /* floats of padding after each row of P_ij                */

/* Shared memory per block in floats: Q_i, K_j, V_j, P_ij. */
#define FV2_SMEM_FLOATS(Br, Bc, d) ((Br) * ((d) + FV2_Q_PAD) + 2 * (Bc) * (d) + (Br) * ((Bc) + FV2_P_PAD))

/* Br sets the warps per block (a run-time value); Bc is compiled in (3 sizes for each d). */
#define FV2_BR_SIZES "16, 32, 64, 128"
#define FV2_BC_SIZES "16, 32, 64"
#define FV2_MAX_BR 128
static inline int flash_v2_br_supported(int Br) { return Br == 16 || Br == 32 || Br == 64 || Br == 128; }
static inline int flash_v2_bc_supported(int Bc) { return Bc == 16 || Bc == 32 || Bc == 64; }

static inline int flash_v2_threads(int Br) { return Br / FV2_ROWS_PER_WARP * 32; }

static inline size_t flash_v2_smem_bytes(int Br, int Bc, int d) {
    return sizeof(float) * (size_t)FV2_SMEM_FLOATS(Br, Bc, d);
}

static inline long long ceil_div_ll(long long a, long long b) { return (a + b - 1) / b; }

#endif
