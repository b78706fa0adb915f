/* tiles.h: the tiles, threads and shared memory of chapter 05's mma kernels (steps 5 to 11: 5_swizzle.cu ..
 * kernels.cu), for the host (validation, the model, the --model lines) and the kernels; those of steps 1 to 4
 * (1_wmma.cu .. 4_o_registers.cu), rows padded by 16 bytes, are in wmma_tiles.h.
 *
 * A block owns Br query rows in 4 warps (16 or 32 rows each: one or two m16 tiles of mma) and sweeps K/V blocks
 * of Bc = 64 keys. Shared memory holds Q_i (Br x d) and K_j, V_j (Bc x d) once (steps 5-9) or twice (steps 10 and
 * 11: the next block loads during this one), all in the storage type (2 bytes), rows of d elements cut into 16-byte
 * chunks whose order is swizzled by the row (chunk c of row r at c XOR (r mod 8)): ldmatrix reads 8 rows of one
 * chunk at a time, and the swizzle puts those 8 chunks in 8 different groups of 4 banks (chapter 04's lesson,
 * here for 16-byte rows of 8 elements).
 *
 * The tiles are the measured choice (README, "mma_async"). */
#ifndef FA_CH05_TILES_H
#define FA_CH05_TILES_H

#include <stddef.h>

#include "arith.h"
#include "wmma_tiles.h"

/* The chapter's kernels, one per step (--kernel NAME), in the order of the steps: each is the one before plus one
 * idea (README, "The steps"). */
typedef enum {
    TC_KERNEL_WMMA = 0,          /* 1_wmma.cu          */
    TC_KERNEL_MMA_STAGED = 1,    /* 2_mma_staged.cu    */
    TC_KERNEL_REPACK = 2,        /* 3_repack.cu        */
    TC_KERNEL_O_REGISTERS = 3,   /* 4_o_registers.cu   */
    TC_KERNEL_SWIZZLE = 4,       /* 5_swizzle.cu       */
    TC_KERNEL_MMA_PLAIN = 5,     /* 6_mma_plain.cu     */
    TC_KERNEL_UNROLLED_COPY = 6, /* 7_unrolled_copy.cu */
    TC_KERNEL_EDGE_MASKS = 7,    /* 8_edge_masks.cu    */
    TC_KERNEL_MMA = 8,           /* 9_mma.cu           */
    TC_KERNEL_CP_ASYNC = 9,      /* 10_cp_async.cu     */
    TC_KERNEL_MMA_ASYNC = 10,    /* kernels.cu         */
    TC_KERNEL_COUNT = 11
} TcKernel;

#define TC_BC 64                    /* keys per K/V block, every kernel */
#define TC_WARPS 4                  /* warps per block, every kernel     */
#define TC_THREADS (32 * TC_WARPS)

/* Steps 2-10: 4 warps of 16 rows; one K/V buffer and plain loads (2-9) or two buffers filled by cp.async (10).
 * Steps 2-4 keep step 1's tiles (wmma_tiles.h: WMMA_BR = MMA_BR, rows padded by 16 bytes). */
#define MMA_BR 64
/* mma_async (step 11): 4 warps of 32 rows (Br = 128, the default) or of 16 (Br = 64: what the larger warp tile brings,
 * measured apart from the copies), two K/V buffers filled by cp.async; Q_i's fragments in registers where they
 * fit beside S and O (all but d = 128 with 32 rows per warp), else re-read by ldmatrix for every K/V block. */
#define MMA_ASYNC_BR 128
#define MMA_ASYNC_Q_REGS(d, Br) ((d) * (Br) <= 64 * 128)

#define MMA_BR_SIZES "64"
#define MMA_ASYNC_BR_SIZES "64, 128"
#define TC_BC_SIZES "64"
#ifdef __CUDACC__
#define TC_HOST_DEVICE __host__ __device__
#else
#define TC_HOST_DEVICE
#endif
/* Where 16-byte chunk c of row r of a tile is stored: chunk c XOR (r mod 8) of the same row (the kernels' swz, the
 * bank model of model.c and its tests). */
static inline TC_HOST_DEVICE int tc_swizzled_chunk(int r, int c) { return c ^ (r & 7); }

static inline int dim_supported(int d) { return d == 64 || d == 128; }
static inline int mma_br_supported(int Br) { return Br == MMA_BR; }
static inline int mma_async_br_supported(int Br) { return Br == 64 || Br == 128; }
static inline int tc_bc_supported(int Bc) { return Bc == TC_BC; }

static inline int tc_threads(void) { return TC_THREADS; }
static inline int tc_rows_per_warp(int Br) { return Br / TC_WARPS; }
/* K/V buffers: two where the next block's copies overlap this block's math (cp.async: steps 10 and 11). */
static inline int tc_kv_buffers(int kernel) { return kernel >= TC_KERNEL_CP_ASYNC ? 2 : 1; }

/* Bytes (2-byte elements): Q_i, then K_j and V_j once (steps 5-9) or twice (steps 10, 11); steps 1-4: wmma_tiles.h. */
#define MMA_SMEM_FORMULA "2 (Br d + 2 Bc d) bytes: Q_i, K_j, V_j in the 2-byte storage type"
#define MMA_ASYNC_SMEM_FORMULA "2 (Br d + 4 Bc d) bytes: Q_i, and K_j, V_j double-buffered, in the 2-byte storage type"
static inline size_t tc_smem_bytes(int kernel, int Br, int Bc, int d) {
    switch (kernel) {
    case TC_KERNEL_WMMA:
    case TC_KERNEL_MMA_STAGED: return wmma_smem_bytes(Br, Bc, d);
    case TC_KERNEL_REPACK: return repack_smem_bytes(Br, Bc, d);
    case TC_KERNEL_O_REGISTERS: return o_registers_smem_bytes(Br, Bc, d);
    default: return 2 * ((size_t)Br * d + 2 * (size_t)tc_kv_buffers(kernel) * Bc * d);
    }
}
static inline size_t mma_smem_bytes(int Br, int Bc, int d) { return tc_smem_bytes(TC_KERNEL_MMA, Br, Bc, d); }
static inline size_t cp_async_smem_bytes(int Br, int Bc, int d) { return tc_smem_bytes(TC_KERNEL_CP_ASYNC, Br, Bc, d); }
static inline size_t mma_async_smem_bytes(int Br, int Bc, int d) {
    return tc_smem_bytes(TC_KERNEL_MMA_ASYNC, Br, Bc, d);
}

#endif
