/* wgmma_address.h: where wgmma reads each element of an operand through a matrix descriptor, written out from the
 * descriptor's fields alone as the PTX ISA's canonical layouts for 128-byte swizzle place it (16-bit elements), for
 * the tests of the tiles the kernels copy into (common/wgmma_layout.h): chapters 06 and 07. */
#ifndef TESTS_WGMMA_ADDRESS_H
#define TESTS_WGMMA_ADDRESS_H

#include <stdint.h>

/* The descriptor's fields, decoded (common/wgmma_layout.h draws them). */
static inline unsigned desc_start(uint64_t d) { return (unsigned)(d & 0x3FFF) << 4; }
static inline unsigned desc_lbo(uint64_t d) { return (unsigned)(d >> 16 & 0x3FFF) << 4; }
static inline unsigned desc_sbo(uint64_t d) { return (unsigned)(d >> 32 & 0x3FFF) << 4; }
static inline unsigned desc_base_offset(uint64_t d) { return (unsigned)(d >> 49 & 7); }
static inline unsigned desc_swizzle(uint64_t d) { return (unsigned)(d >> 62); }

/* 128-byte swizzle, as the hardware applies it to an address: the 16-byte chunk (bits 4-6) XOR the row of 128 bytes
 * within 1024 (bits 7-9). */
static inline unsigned swizzle128(unsigned a) { return a ^ (a >> 7 & 7) << 4; }

/* Where wgmma reads element (r, k) of a K-major 16-bit operand (r: row of M or N, k < 16): rows in groups of 8,
 * SBO bytes apart, 128 bytes from row to row in a group, k contiguous from the start address. */
static inline unsigned k_major_address(uint64_t d, int r, int k) {
    return swizzle128(desc_start(d) + (unsigned)(r / 8) * desc_sbo(d) + (unsigned)(r % 8) * 128 + (unsigned)k * 2);
}
/* Where wgmma reads element (k, n) of an MN-major 16-bit operand (k < 16 down the rows, n along them; of A, n is m): 64 n per
 * 128-byte row, panels of 64 n LBO bytes apart; rows in groups of 8, SBO bytes apart. */
static inline unsigned mn_major_address(uint64_t d, int k, int n) {
    return swizzle128(desc_start(d) + (unsigned)(n / 64) * desc_lbo(d) + (unsigned)(k / 8) * desc_sbo(d) +
                      (unsigned)(k % 8) * 128 + (unsigned)(n % 64) * 2);
}

#endif
