/* tiles.h: chapter 00's tiles, thread counts and shared-memory budgets, in one place for the host (validation,
 * the closed forms, the --model lines, the CPU version's blocking) and for the kernels, so that what the host
 * checks and counts is what the kernels do.
 *
 * qk_gemm  grid (Tr, B*H), Tr = ceil(N / QK_BR). A block owns the query panel Q_i (QK_BR rows x d), loads it
 *          once, and sweeps every key tile K_j (QK_BC keys), QK_BK features at a time, writing S_ij.
 * softmax  short rows (N <= SOFTMAX_WARP_MAX_N): grid (ceil(N / SOFTMAX_WARP_ROWS), B*H), one warp per row of
 *          S, the whole row in the warp's registers. Long rows: grid (N, B*H), one block per row, the whole
 *          row in shared memory (N floats).
 * pv_gemm  grid (Tr, B*H), Tr = ceil(N / PV_BR(d)). A block owns the rows P_i (PV_BR(d) x N) and O_i
 *          (PV_BR(d) x d, in registers), and streams P_i and V in chunks of PV_BC(d) keys.
 * Both GEMMs run SA_THREADS threads, each owning an 8 x 8 block of outputs. */
#ifndef FA_CH00_TILES_H
#define FA_CH00_TILES_H

#include <stddef.h>
#include "arith.h"

#define SA_THREADS 256 /* threads per block of both GEMMs                                     */
#define SA_TM 8        /* outputs per thread: SA_TM rows x SA_TN columns                       */
#define SA_TN 8
#define SMEM_PAD 4     /* floats after each row of a transposed tile (fewer bank conflicts)    */

/* qk_gemm: 16 x 16 threads x (8 x 8) outputs = a 128 x 128 tile of S. */
#define QK_BR 128 /* query rows per block (the Q_i panel)            */
#define QK_BC 128 /* keys per S_ij tile                              */
#define QK_BK 16  /* features per K_j chunk in shared memory         */
/* Q_i transposed (d x (QK_BR + pad)), and two K_j chunks (double buffer), transposed (QK_BK x (QK_BC + pad)) */
#define QK_SMEM_FLOATS(d) ((d) * (QK_BR + SMEM_PAD) + 2 * QK_BK * (QK_BC + SMEM_PAD))

/* pv_gemm: (d / 8) threads across O's columns, 256 / (d / 8) down its rows, 8 x 8 outputs each: a block owns
 * 16384 / d rows (512, 256, 128 for d = 32, 64, 128) and takes 8, 16, 16 keys per chunk (P chunks of 4096,
 * 4096, 2048 elements; V chunks of 256, 1024, 2048), few enough that the next chunk fits in registers. */
#define PV_BR(d) (16384 / (d))
#define PV_BC(d) ((d) == 32 ? 8 : 16)
/* two P_i chunks, transposed (PV_BC x (PV_BR + pad)), and two V_j chunks (PV_BC x d) */
#define PV_SMEM_FLOATS(d) (2 * PV_BC(d) * (PV_BR(d) + SMEM_PAD) + 2 * PV_BC(d) * (d))

/* softmax, short rows: a warp holds a row of up to SOFTMAX_WARP_MAX_N elements in registers, at most 32
 * floats per lane, and a block holds SOFTMAX_WARP_ROWS such rows (warps). No shared memory, no barrier. */
#define SOFTMAX_WARP_MAX_N 1024
#define SOFTMAX_WARP_ROWS 4
/* softmax, long rows: the row (N floats, rounded up to a float4) and two reduction arrays of 32 floats (max,
 * sum) in shared memory. */
#define SOFTMAX_SCRATCH_FLOATS 64
#define SOFTMAX_MAX_THREADS 1024


static inline size_t qk_smem_bytes(int d) { return sizeof(float) * (size_t)QK_SMEM_FLOATS(d); }
static inline size_t pv_smem_bytes(int d) { return sizeof(float) * (size_t)PV_SMEM_FLOATS(d); }

/* Which softmax kernel runs rows of N elements: one warp per row in registers, or one block per row in
 * shared memory. */
static inline int softmax_row_per_warp(int N) { return N <= SOFTMAX_WARP_MAX_N; }
/* Rows of S per block, and blocks per head (the grid's x dimension). */
static inline int softmax_rows_per_block(int N) { return softmax_row_per_warp(N) ? SOFTMAX_WARP_ROWS : 1; }
static inline long long softmax_blocks_per_head(int N) { return ceil_div(N, softmax_rows_per_block(N)); }
/* Dynamic shared memory per block: none for short rows (registers), the row and the scratch for long ones. */
static inline size_t softmax_smem_bytes(int N) {
    if (softmax_row_per_warp(N)) return 0;
    return sizeof(float) * ((size_t)ceil_div(N, 4) * 4 + SOFTMAX_SCRATCH_FLOATS);
}
/* Short rows: one warp per row. Long rows: one warp per SOFTMAX_WARP_MAX_N elements of the row (32 per
 * thread, as in a short row), up to 32 warps. */
static inline int softmax_threads(int N) {
    if (softmax_row_per_warp(N)) return 32 * SOFTMAX_WARP_ROWS;
    long long warps = ceil_div(N, SOFTMAX_WARP_MAX_N);
    if (warps > SOFTMAX_MAX_THREADS / 32) warps = SOFTMAX_MAX_THREADS / 32;
    return 32 * (int)warps;
}

#endif
