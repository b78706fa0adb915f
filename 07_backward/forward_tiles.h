/* tiles.h: the tiles, thread count and shared-memory layout of chapter 03's kernel, in one place for the
 * host (validation, the model, the --model lines) and for the kernel, so that the budget the host checks is
 * the one the kernel uses. They are chapter 02's, unchanged (chapter 03 changes the loop order around them):
 * `diff ../02_flash_v1/tiles.h tiles.h` shows this comment and nothing else.
 *
 * A thread block keeps four things in shared memory: the query block Q_i (Br x d), the key and value blocks
 * K_j and V_j (Bc x d each, exactly as stored in HBM: K_j is neither transposed nor padded, so S_ij = Q_i K_j^T
 * reads K_j across its rows, the article's tl.trans(kj), whose bank conflicts chapter 04 measures and
 * removes), and P_ij (Br x Bc). Q_i and P_ij rows are padded (by 4 and 8 floats) so that every shared access
 * other than the K_j^T reads is free of bank conflicts, and ncu's conflict counter sees those alone
 * (kernels.cu says which lanes read what).
 *
 * Threads: the block's warps split Q_i's rows, ROWS_PER_WARP = 16 each, so Br = 16 x warps and a block has
 * 2 Br threads. A warp is 4 row groups of ROW_LANES = 8 lanes; lane g of a row group owns TM = 4 rows, the S
 * columns g, g+8, g+16, ... and the O float4 columns g, g+8, ... of those rows. */
#ifndef FA_FLASH_TILES_H
#define FA_FLASH_TILES_H

#include <stddef.h>

#include "arith.h"

#define TM 4                          /* query rows per thread                       */
#define ROW_LANES 8                   /* lanes that share a row group (split a row)  */
#define ROWS_PER_WARP (4 * TM)        /* 4 row groups x TM rows                      */
#define Q_PAD 4                       /* floats of padding after each row of Q_i     */
#define P_PAD 8                       /* floats of padding after each row of P_ij    */

/* Shared memory per block in floats: Q_i, K_j, V_j, P_ij. */
#define SMEM_FLOATS(Br, Bc, d) ((Br) * ((d) + Q_PAD) + 2 * (Bc) * (d) + (Br) * ((Bc) + P_PAD))

#define SMEM_FORMULA "(Br (d + 4) + 2 Bc d + Br (Bc + 8)) floats"

/* Br sets the warps per block (a run-time value: 16 query rows per warp, 1 to 8 warps); Bc is compiled in (3
 * sizes for each d). */
#define BR_SIZES "16, 32, 64, 128"
#define BC_SIZES "16, 32, 64"
#define MAX_BR 128
static inline int br_supported(int Br) { return Br == 16 || Br == 32 || Br == 64 || Br == 128; }
static inline int bc_supported(int Bc) { return Bc == 16 || Bc == 32 || Bc == 64; }

static inline int threads_per_block(int Br) { return Br / ROWS_PER_WARP * 32; }

static inline size_t smem_bytes(int Br, int Bc, int d) { return sizeof(float) * (size_t)SMEM_FLOATS(Br, Bc, d); }

#endif
