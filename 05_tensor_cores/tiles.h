/* tiles.h: chapter 05's tiles, threads and shared memory, for the host (validation, the model, the --model
 * lines) and the kernels.
 *
 * A block owns Br query rows (warps of 16 or 32 rows: one or two m16 tiles of mma) and sweeps K/V blocks of Bc
 * keys. Shared memory holds Q_i (Br x d) and K_j, V_j (Bc x d) once (mma) or twice (mma_async: the next block
 * loads during this one), all in the storage type (2 bytes), rows of d elements cut into 16-byte chunks whose
 * order is swizzled by the row (chunk c of row r at c XOR (r mod 8)): ldmatrix reads 8 rows of one chunk at a
 * time, and the swizzle puts those 8 chunks in 8 different groups of 4 banks (chapter 04's lesson, here for
 * 16-byte rows of 8 elements).
 *
 * The tiles are fixed per kernel: the measured choice (README, "Choosing the tiles"). */
#ifndef FA_CH05_TILES_H
#define FA_CH05_TILES_H

#include <stddef.h>

#include "arith.h"

enum { TC_MMA, TC_MMA_ASYNC };

/* mma: the first tensor-core kernel: 4 warps of 16 rows, Bc = 64, one K/V buffer, Q_i's fragments in registers. */
#define TC_BC 64 /* keys per K/V block, every kernel */
#define MMA_BR 64
#define MMA_BC TC_BC
#define MMA_WARPS 4
/* mma_async: 4 warps of 32 rows (Br = 128, the default) or of 16 (Br = 64, to measure what the larger warp tile
 * brings), K/V blocks of 64 keys; Q_i's fragments in registers where they fit beside S and O (all but d = 128
 * with 32 rows per warp), else re-read by ldmatrix for every K/V block. */
#define MMA_ASYNC_BR 128
#define MMA_ASYNC_BC TC_BC
#define MMA_ASYNC_WARPS 4
#define MMA_ASYNC_Q_REGS(d, Br) ((d) * (Br) <= 64 * 128)

static inline int dim_supported(int d) { return d == 64 || d == 128; }
static inline int tc_br(int which) { return which == TC_MMA ? MMA_BR : MMA_ASYNC_BR; } /* the default */
static inline int tc_br_supported(int which, int Br) { return Br == MMA_BR || (which == TC_MMA_ASYNC && Br == 128); }
static inline int tc_warps(int which) { return which == TC_MMA ? MMA_WARPS : MMA_ASYNC_WARPS; }
static inline int tc_threads(int which) { return 32 * tc_warps(which); }
static inline int tc_kv_buffers(int which) { return which == TC_MMA ? 1 : 2; }

/* Bytes (2-byte elements): Q_i, then K_j and V_j once or twice. */
static inline size_t tc_smem_bytes(int which, int Br, int Bc, int d) {
    return 2 * ((size_t)Br * d + 2 * (size_t)tc_kv_buffers(which) * Bc * d);
}

#endif
