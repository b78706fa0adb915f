/* tiles.h: chapter 05's tiles, threads and shared memory, for the host (validation, the model, the --model
 * lines) and the kernel.
 *
 * A block owns Br = 16 x warps query rows and sweeps K/V blocks of Bc = 64 keys. Shared memory holds Q_i
 * (Br x d) and two buffers each of K_j and V_j (Bc x d), all in the storage type (2 bytes), rows of d
 * elements cut into 16-byte chunks whose order is swizzled by the row (chunk c of row r at c XOR (r mod 8)):
 * ldmatrix reads 8 rows of one chunk at a time, and the swizzle puts those 8 chunks in 8 different groups of
 * 4 banks (chapter 04's lesson, here for 16-byte rows of 8 elements). */
#ifndef FA_CH05_TILES_H
#define FA_CH05_TILES_H

#include <stddef.h>

#include "arith.h"

#define TC_BC 64            /* keys per K/V block                         */
#define TC_ROWS_PER_WARP 16 /* query rows per warp: one m16 tile of mma    */
#define TC_KV_BUFFERS 2     /* K_j, V_j double-buffered (the next block loads during this one) */

#define BR_SIZES "64, 128"
#define BC_SIZES "64"
static inline int br_supported(int Br) { return Br == 64 || Br == 128; }
static inline int bc_supported(int Bc) { return Bc == TC_BC; }
static inline int dim_supported(int d) { return d == 64 || d == 128; }

static inline int threads_per_block(int Br) { return Br / TC_ROWS_PER_WARP * 32; }

/* Elements (2 bytes each): Q_i, then K_j and V_j twice. */
#define SMEM_ELEMS(Br, Bc, d) ((Br) * (d) + 2 * TC_KV_BUFFERS * (Bc) * (d))
#define SMEM_FORMULA "2 (Br d + 4 Bc d) bytes: Q_i, and K_j, V_j double-buffered, in the 2-byte storage type"
static inline size_t smem_bytes(int Br, int Bc, int d) { return 2 * (size_t)SMEM_ELEMS(Br, Bc, d); }

#endif
