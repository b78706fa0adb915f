/* tiles.h: chapter 02's tiles, thread count and shared-memory layout, in one place for the host (validation,
 * the model, the --model lines) and for the kernel, so that the budget the host checks is the one the
 * kernel uses.
 *
 * A thread block owns one head and keeps four things in shared memory: the query block Q_i (Br x d), the
 * key and value blocks K_j and V_j (Bc x d each, exactly as stored in HBM), the scores S_ij (Br x Bc, which
 * become P~_ij in place), and four numbers per query row (m_i and l_i as loaded from HBM, and the two
 * weights of the output update). Q_i and S_ij rows are padded by 4 floats: their rows are read by 32
 * different lanes at once (kernels.cu says where), and a row length that is a multiple of 32 floats would
 * put every lane in the same 4 banks. */
#ifndef FA_CH02_TILES_H
#define FA_CH02_TILES_H

#include <stddef.h>

#define FV1_THREADS 128 /* per block: 4 warps, whatever the tile                */
#define FV1_Q_PAD 4     /* floats of padding after each row of Q_i              */
#define FV1_K_PAD 4     /* floats of padding after each row of K_j              */
#define FV1_S_PAD 4     /* floats of padding after each row of S_ij (and P~_ij) */
#define FV1_ROW_STATS 4 /* per query row: m_i, l_i, and the two output weights  */

/* Shared memory per block in floats. A macro, so that the kernel can static_assert its own layout on it. */
#define FV1_SMEM_FLOATS(Br, Bc, d) \
    ((Br) * ((d) + FV1_Q_PAD) + (Bc) * ((d) + FV1_K_PAD) + (Bc) * (d) + (Br) * ((Bc) + FV1_S_PAD) + FV1_ROW_STATS * (Br))

/* Br and Bc are each one of these (all 9 pairs are compiled for each d). */
#define FV1_TILE_SIZES "16, 32, 64"
static inline int flash_v1_tile_supported(int B) { return B == 16 || B == 32 || B == 64; }

static inline size_t flash_v1_smem_bytes(int Br, int Bc, int d) {
    return sizeof(float) * (size_t)FV1_SMEM_FLOATS(Br, Bc, d);
}

static inline long long ceil_div_ll(long long a, long long b) { return (a + b - 1) / b; }

#endif
