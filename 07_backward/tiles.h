/* tiles.h: the tiles of chapter 07's backward kernels, in one place for the host (validation, the model, the
 * --model lines, the CPU versions) and for the kernels, so that the budget the host checks is the one the
 * kernels use.
 *
 * Step 1 (1_naive.cu): every matrix product C = A B is a GEMM of GEMM_TM x GEMM_TN output tiles, one block
 * each, the inner dimension in chunks of GEMM_TK. A block loads its A panel (its real rows of C, every inner
 * index) and its B panel (its real columns, every inner index) once each, so a GEMM of M x Nc outputs and
 * inner length Kin reads Kin (M ceil(Nc / GEMM_TN) + Nc ceil(M / GEMM_TM)) elements and writes M Nc.
 * naive_ds has one block per NAIVE_DS_ROWS rows of dS.
 *
 * Step 2 (kernels.cu): a block per key block j (Bc rows of K and V); it keeps K_j, V_j, and for the query
 * block i it is on Q_i, dO_i, L_i, D_i, P_ij and dS_ij in shared memory; dK_j and dV_j in registers. */
#ifndef FA_CH07_TILES_H
#define FA_CH07_TILES_H

#include <stddef.h>

#include "arith.h"

/* ---- step 1 ---- */
#define GEMM_TM 64
#define GEMM_TN 64
#define GEMM_TK 16
#define GEMM_THREADS 256 /* 16 x 16 threads, a 4 x 4 patch of C each */
#define NAIVE_DS_ROWS 1  /* rows of dS per block of naive_ds */
#define NAIVE_DS_THREADS 256

/* ---- step 2 ---- */
#define BWD_BR_SIZES "32, 64"
#define BWD_BC_SIZES "32, 64"
#define BWD_DEFAULT_BR 32
#define BWD_DEFAULT_BC 32
static inline int bwd_br_supported(int Br) { return Br == 32 || Br == 64; }
static inline int bwd_bc_supported(int Bc) { return Bc == 32 || Bc == 64; }

/* Rows of a shared-memory tile are padded: Q_i, dO_i, K_j, V_j by BWD_PAD = 4 floats, P_ij and dS_ij by
 * BWD_P_PAD = 8 (kernels.cu says which reads and writes the padding keeps free of bank conflicts; multiples of 4,
 * so that every row starts 16-byte aligned for float4 reads). Shared memory per block in floats: K_j, V_j
 * (Bc x (d+4) each), Q_i, dO_i (Br x (d+4) each), P_ij and dS_ij (Br x (Bc+8) each), L_i and D_i (Br each). */
#define BWD_PAD 4
#define BWD_P_PAD 8
#define BWD_SMEM_FLOATS(Br, Bc, d) \
    (2 * (Bc) * ((d) + BWD_PAD) + 2 * (Br) * ((d) + BWD_PAD) + 2 * (Br) * ((Bc) + BWD_P_PAD) + 2 * (Br))
#define BWD_SMEM_FORMULA "(2 Bc (d + 4) + 2 Br (d + 4) + 2 Br (Bc + 8) + 2 Br) floats"
/* 16 x 16 threads: thread (ty, tx) owns rows ty + 16 a (or, of dK_j and dV_j, the Bc/16 keys from ty Bc/16 on)
 * and columns tx + 16 b (or column groups) of every product (kernels.cu) */
#define BWD_THREADS 256

static inline size_t bwd_smem_bytes(int Br, int Bc, int d) { return sizeof(float) * (size_t)BWD_SMEM_FLOATS(Br, Bc, d); }

#endif
