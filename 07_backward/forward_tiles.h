/* forward_tiles.h: the tiles, thread count and shared-memory layout of the forward that chapter 07 runs to make O
 * and L (forward.cu): chapter 03's tiles.h, copied (chapters stand alone), its names prefixed with FWD_ / fwd_ so
 * that it and chapter 07's own tiles.h can meet in one translation unit, and its tiles fixed at FWD_BR x FWD_BC
 * (the backward's --br and --bc are its own tiles', not the forward's).
 *
 * A thread block keeps four things in shared memory: the query block Q_i (Br x d), the key and value blocks
 * K_j and V_j (Bc x d each, exactly as stored in HBM: K_j is neither transposed nor padded, so S_ij = Q_i K_j^T
 * reads it across its rows, the article's tl.trans(kj)), and P_ij (Br x Bc). Q_i and P_ij rows are padded (by 4
 * and 8 floats) so that every shared access other than the K_j^T reads is free of bank conflicts.
 *
 * Threads: the block's warps split Q_i's rows, FWD_ROWS_PER_WARP = 16 each, so a block has 2 Br threads. A warp
 * is 4 row groups of FWD_ROW_LANES = 8 lanes; lane g of a row group owns FWD_TM = 4 rows, the S columns g, g+8,
 * g+16, ... and the O float4 columns g, g+8, ... of those rows. */
#ifndef FA_CH07_FORWARD_TILES_H
#define FA_CH07_FORWARD_TILES_H

#include <stddef.h>

#include "arith.h"

#define FWD_BR 32                             /* query rows per block (chapter 03: --br)     */
#define FWD_BC 32                             /* keys per K/V block (chapter 03: --bc)       */

#define FWD_TM 4                              /* query rows per thread                       */
#define FWD_ROW_LANES 8                       /* lanes that share a row group (split a row)  */
#define FWD_ROWS_PER_WARP (4 * FWD_TM)        /* 4 row groups x TM rows                      */
#define FWD_Q_PAD 4                           /* floats of padding after each row of Q_i     */
#define FWD_P_PAD 8                           /* floats of padding after each row of P_ij    */
#define FWD_THREADS (FWD_BR / FWD_ROWS_PER_WARP * 32)
#define FWD_MAX_BR 128                        /* chapter 03's largest Br: the kernel's launch bound, kept */

/* Shared memory per block in floats: Q_i, K_j, V_j, P_ij. */
#define FWD_SMEM_FLOATS(Br, Bc, d) ((Br) * ((d) + FWD_Q_PAD) + 2 * (Bc) * (d) + (Br) * ((Bc) + FWD_P_PAD))

#define FWD_SMEM_FORMULA "(Br (d + 4) + 2 Bc d + Br (Bc + 8)) floats, Br = Bc = 32"

static inline size_t fwd_smem_bytes(int d) { return sizeof(float) * (size_t)FWD_SMEM_FLOATS(FWD_BR, FWD_BC, d); }

#endif
