/* wgmma_layout.h: the layout of 16-bit tiles in shared memory that Hopper's warpgroup MMA (wgmma) reads through
 * its 128-byte swizzle mode, and the matrix descriptors that point it at them. For the kernels that copy into the
 * tiles and issue wgmma, and for the host (the tests of the layout, which check every element a descriptor reads
 * against where the copies put it).
 *
 * A tile of `rows` rows of x 2-byte elements a row is cut along x into panels of 64 (128 bytes: a row of 64 is one
 * panel, of 128 two); a panel holds every row, 128 bytes each, and the panels follow one another. Inside a row the
 * eight 16-byte chunks are swizzled by the row: chunk c of row r sits at c XOR (r mod 8). Every tile starts at a
 * multiple of 1024 bytes (8 rows of 128), the period of the pattern, so that the XOR is address bits 4-6 XOR bits
 * 7-9: what wgmma's 128-byte swizzle mode applies to every address it computes. */
#ifndef FA_WGMMA_LAYOUT_H
#define FA_WGMMA_LAYOUT_H

#include <stdint.h>

#ifdef __CUDACC__
#define SW128_HOST_DEVICE __host__ __device__
#else
#define SW128_HOST_DEVICE
#endif

#define SW128_PANEL 64 /* elements per panel row: 128 bytes, the swizzle's row (and a copy engine box's width) */
static inline SW128_HOST_DEVICE unsigned sw128_offset(int rows, int r, int x) {
    const int panel = x / 64, chunk = x % 64 / 8;
    return (unsigned)(panel * rows * 128 + r * 128 + ((chunk ^ (r % 8)) << 4) + (x % 8) * 2);
}

/* ---- the matrix descriptor -----------------------------------------------------------------------------------
 * 64 bits that tell wgmma where an operand sits in shared memory and how it is laid out:
 *   bits  0-13  start address >> 4        (an 18-bit shared address, 16-byte aligned)
 *   bits 16-29  leading byte offset >> 4  (LBO)
 *   bits 32-45  stride byte offset >> 4   (SBO)
 *   bits 49-51  base offset               (0: every tile starts on the pattern's 1024-byte period)
 *   bits 62-63  swizzle mode              (1: 128-byte swizzle) */
static inline SW128_HOST_DEVICE uint64_t wgmma_desc(unsigned start, unsigned lbo, unsigned sbo) {
    return (uint64_t)((start & 0x3FFFF) >> 4) | (uint64_t)((lbo & 0x3FFFF) >> 4) << 16 |
           (uint64_t)((sbo & 0x3FFFF) >> 4) << 32 | (uint64_t)1 << 62;
}

/* K-major operand (the reduction dimension k runs along a row; a row is one of M, or of N): Q_i as A and K_j as B
 * of S = Q_i K_j^T, the features being k. Step kk of the product takes k = 16 kk .. 16 kk + 15: panel kk / 4, bytes
 * 32 (kk % 4) of every row. The 8-row groups of M (or N) are SBO = 1024 bytes apart; LBO, the distance between k
 * groups, is unused: a step's 16 k never leave one 128-byte row. `tile` is the shared address of the operand's first
 * row, `rows` the rows of the tile it is in (a panel's length). */
static inline SW128_HOST_DEVICE unsigned wgmma_k_major_step(int rows, int kk) {
    return (unsigned)(kk / 4 * rows * 128 + kk % 4 * 32);
}
static inline SW128_HOST_DEVICE uint64_t wgmma_desc_k_major(unsigned tile, int rows, int kk) {
    return wgmma_desc(tile + wgmma_k_major_step(rows, kk), 0, 1024);
}

/* MN-major operand (M or N runs along a row, k down the rows): V_j as B of O_i += P_ij V_j, the keys being k. Step
 * kk takes k = 16 kk .. 16 kk + 15: rows 16 kk on, 2048 bytes per step. SBO = 1024: the next 8 rows; LBO = 128 rows
 * bytes: the next panel of 64 (N = 128 reads two). */
static inline SW128_HOST_DEVICE unsigned wgmma_mn_major_step(int kk) { return (unsigned)(kk * 16 * 128); }
static inline SW128_HOST_DEVICE uint64_t wgmma_desc_mn_major(unsigned tile, int rows, int kk) {
    return wgmma_desc(tile + wgmma_mn_major_step(kk), (unsigned)rows * 128, 1024);
}

/* The descriptor of an operand `bytes` further on in shared memory (a step's offset above): only the start address
 * field moves, by bytes >> 4, and it never carries out of its 14 bits (a shared address stays below 2^18). So a
 * kernel can build a tile's descriptor once and reach each step by one add to its low word, where wgmma_desc_*
 * masks and shifts the address again for every step. */
static inline SW128_HOST_DEVICE uint64_t wgmma_desc_advance(uint64_t desc, unsigned bytes) {
    return (desc & 0xFFFFFFFF00000000ull) | (uint32_t)((uint32_t)desc + (bytes >> 4));
}

#endif
