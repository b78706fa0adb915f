/* tiles.h: chapter 04's tiles, thread count and shared-memory budget, for the host (validation, the model, the
 * --model lines) and for the kernels. Chapter 03's tiles and threads; what changes is K_j's tile in the variants
 * (variants.cu), whose size depends on the layout (layouts.h: smem_bytes_layout): Bc x (d + 4) floats padded,
 * Bc x d otherwise (d x Bc transposed). The kernel of kernels.cu keeps chapter 03's Bc x d (smem_bytes).
 *
 * Threads: 16 query rows per warp, so Br = 16 x warps and a block has 2 Br threads; a lane owns TM = 4 rows,
 * Bc/8 keys and d/32 float4 columns of O (which ones: kernels.cu, and layouts.h for every layout). */
#ifndef FA_CH04_TILES_H
#define FA_CH04_TILES_H

#include <stddef.h>

#include "arith.h"

#define TM 4                   /* query rows per thread                       */
#define ROW_LANES 8            /* lanes that share a row (split its keys)     */
#define ROWS_PER_WARP (4 * TM) /* 4 row groups x TM rows                      */
#define Q_PAD 4                /* floats of padding after each row of Q_i     */
#define P_PAD 8                /* floats of padding after each row of P_ij    */

/* Shared memory per block in floats: Q_i, K_j (k_floats: Bc d, or as the layout stores it), V_j, P_ij. */
#define SMEM_FLOATS(Br, Bc, d, k_floats) ((Br) * ((d) + Q_PAD) + (k_floats) + (Bc) * (d) + (Br) * ((Bc) + P_PAD))
#define SMEM_FORMULA "(Br (d + 4) + K_j + Bc d + Br (Bc + 8)) floats, K_j = Bc (d + 4) padded, Bc d otherwise"

#define BR_SIZES "16, 32, 64, 128"
#define BC_SIZES "16, 32, 64"
#define MAX_BR 128
static inline int br_supported(int Br) { return Br == 16 || Br == 32 || Br == 64 || Br == 128; }
static inline int bc_supported(int Bc) { return Bc == 16 || Bc == 32 || Bc == 64; }

static inline int threads_per_block(int Br) { return Br / ROWS_PER_WARP * 32; }

/* kernels.cu's: K_j as Bc x d. */
static inline size_t smem_bytes(int Br, int Bc, int d) {
    return sizeof(float) * (size_t)SMEM_FLOATS(Br, Bc, d, Bc * d);
}

#endif
