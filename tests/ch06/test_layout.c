/* The layout of chapter 06's shared tiles and the descriptors that point wgmma at them, on the CPU: every element
 * wgmma reads through a descriptor (as the PTX ISA's canonical layouts for 128-byte swizzle place it, written out in
 * tests/wgmma_address.h from the field values alone) is the element the kernel's copies put there (sw128_offset). A
 * wrong field, shift, offset per k step or swizzle fails here, without a GPU. */
#include "ch06_test.h"
#include "../wgmma_address.h"

Test(layout, descriptor_fields) {
    const uint64_t d = wgmma_desc(0x12340, 8192, 1024);
    cr_assert_eq(desc_start(d), 0x12340);
    cr_assert_eq(desc_lbo(d), 8192);
    cr_assert_eq(desc_sbo(d), 1024);
    cr_assert_eq(desc_base_offset(d), 0);
    cr_assert_eq(desc_swizzle(d), 1, "1 is the 128-byte swizzle");
    cr_assert_eq(d & (3ull << 14 | 3ull << 30 | 7ull << 46 | 0x3FFull << 52), 0, "reserved bits are zero");
}

/* The layout is one-to-one: a tile's rows x d elements fill its 2 rows d bytes exactly; each 16-byte chunk of a
 * row is 8 consecutive elements, 16-byte aligned (what one cp.async moves). */
Test(layout, tile_is_a_permutation_of_whole_chunks) {
    for (int y = 0; y < 2; y++) {
        const int d = FA3_DIMS[y], rows = 64;
        const size_t bytes = (size_t)rows * d * 2;
        unsigned char *seen = calloc(bytes / 2, 1);
        for (int r = 0; r < rows; r++)
            for (int x = 0; x < d; x++) {
                const unsigned at = sw128_offset(rows, r, x);
                cr_assert(at < bytes && at % 2 == 0, "d=%d (%d, %d) at %u", d, r, x, at);
                cr_assert_eq(seen[at / 2]++, 0, "d=%d (%d, %d): byte %u taken twice", d, r, x, at);
                cr_assert_eq(at, sw128_offset(rows, r, x / 8 * 8) + (unsigned)(x % 8) * 2);
                cr_assert_eq(sw128_offset(rows, r, x / 8 * 8) % 16, 0);
            }
        free(seen);
    }
}

/* S = Q_i K_j^T: step kk reads A = Q_i[0..63][16 kk .. 16 kk + 15] and B = K_j[0..63][16 kk ...], both K-major,
 * wherever the tiles start (multiples of 1024 bytes, as in the kernel). */
Test(layout, k_major_descriptors_read_q_and_k) {
    const unsigned bases[] = {0, 8192, 7 * 1024, 0x30000};
    for (int y = 0; y < 2; y++)
        for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
            for (int kk = 0; kk < FA3_DIMS[y] / 16; kk++) {
                const uint64_t desc = wgmma_desc_k_major(bases[b], 64, kk);
                for (int r = 0; r < 64; r++)
                    for (int k = 0; k < 16; k++)
                        cr_assert_eq(k_major_address(desc, r, k), bases[b] + sw128_offset(64, r, 16 * kk + k),
                                     "d=%d base %u step %d: element (%d, %d)", FA3_DIMS[y], bases[b], kk, r, k);
            }
}

/* O_i += P_ij V_j: step kk reads B = V_j[16 kk .. 16 kk + 15][0 .. d-1], MN-major (features along a row). */
Test(layout, mn_major_descriptor_reads_v) {
    const unsigned bases[] = {0, 8192, 7 * 1024, 0x30000};
    for (int y = 0; y < 2; y++)
        for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
            for (int kk = 0; kk < FA3_BC / 16; kk++) {
                const uint64_t desc = wgmma_desc_mn_major(bases[b], FA3_BC, kk);
                for (int k = 0; k < 16; k++)
                    for (int n = 0; n < FA3_DIMS[y]; n++)
                        cr_assert_eq(mn_major_address(desc, k, n), bases[b] + sw128_offset(FA3_BC, 16 * kk + k, n),
                                     "d=%d base %u step %d: element (%d, %d)", FA3_DIMS[y], bases[b], kk, k, n);
            }
}

/* The tma and warp_specialized steps: the copy engine writes element (y, x) of a 64-feature x rows box (row y,
 * feature x < 64) at y x 128 + 2 x bytes from the destination, then applies the same 128-byte swizzle
 * (CU_TENSOR_MAP_SWIZZLE_128B: bits 4-6 XOR bits 7-9 of the shared address); the kernels point box p of a tile of
 * `rows` rows at panel p. Every element lands where the descriptors read it, for boxes of 64 rows (steps 2, 3),
 * 128 and 192 (step 3's Q_i, K_j, V_j). A model of the engine's mode, not the engine. */
Test(layout, tma_boxes_land_in_the_tile_layout) {
    const unsigned bases[] = {0, 8192, 7 * 1024};
    const int box_rows[] = {64, 128, 192};
    for (int y = 0; y < 2; y++)
        for (int z = 0; z < 3; z++)
            for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
                for (int p = 0; p < FA3_DIMS[y] / SW128_PANEL; p++) {
                    const int rows = box_rows[z];
                    const unsigned dst = bases[b] + (unsigned)(p * rows * 128); /* the kernels' dst + p rows 128 */
                    for (int r = 0; r < rows; r++)
                        for (int x = 0; x < SW128_PANEL; x++)
                            cr_assert_eq(swizzle128(dst + (unsigned)r * 128 + (unsigned)x * 2),
                                         bases[b] + sw128_offset(rows, r, p * SW128_PANEL + x),
                                         "d=%d rows %d box %d (%d, %d)", FA3_DIMS[y], rows, p, r, x);
                }
}

/* The epilogue's stores of O into Q_s: for one column group n and half h, the 32 lanes (row g + 8h of the warp's 16,
 * columns 8n + 2t) write 4 bytes each into 32 different banks. */
Test(layout, epilogue_stores_hit_32_banks) {
    for (int y = 0; y < 2; y++)
        for (int w = 0; w < 4; w++)
            for (int n = 0; n < FA3_DIMS[y] / 8; n++)
                for (int h = 0; h < 2; h++) {
                    unsigned banks = 0;
                    for (int lane = 0; lane < 32; lane++) {
                        const int r = 16 * w + lane / 4 + 8 * h, x = 8 * n + 2 * (lane % 4);
                        banks |= 1u << (sw128_offset(FA3_BR, r, x) / 4 % 32);
                    }
                    cr_assert_eq(banks, 0xFFFFFFFFu, "d=%d warp %d group %d half %d: banks %08x", FA3_DIMS[y], w, n, h,
                                 banks);
                }
}

/* The tiles of the kernel, one after another from a 1024-byte aligned start, each start on the pattern's period. */
Test(layout, tiles_start_on_the_swizzle_period) {
    for (int y = 0; y < 2; y++) {
        const size_t q = (size_t)FA3_BR * FA3_DIMS[y] * 2, kv = (size_t)FA3_BC * FA3_DIMS[y] * 2;
        cr_assert_eq(q % 1024, 0);
        cr_assert_eq(kv % 1024, 0);
        cr_assert_eq(q + 4 * kv, fa3_smem_bytes(FA3_BR, FA3_BC, FA3_DIMS[y]));
        cr_assert_eq(fa3_tma_smem_bytes(FA3_BR, FA3_BC, FA3_DIMS[y]), q + 4 * kv + 16, "the mbarriers after the tiles");
    }
}

/* Steps 3-7's shared memory at every tile they are compiled for: within the 227 KB a block may ask for, every
 * tile a multiple of the swizzle's 1024-byte period (so that each starts on it), at least two stages in each
 * ring; step 5's K and V rings split the tiles that fit, V's the larger (read one block later than K's), with
 * the stage counts its README and --model give at the default tiles; step 7's item number (16 bytes more) fits
 * beside step 5's rings (steps 6 and 7 keep step 5's stages). */
Test(layout, persistent_steps_fit_their_rings) {
    const int tiles[][3] = {{128, 64, 64}, {128, 128, 64}, {192, 128, 64}, {128, 64, 128}, {128, 128, 128}};
    for (size_t t = 0; t < sizeof(tiles) / sizeof(tiles[0]); t++) {
        const int Br = tiles[t][0], Bc = tiles[t][1], d = tiles[t][2];
        cr_assert(fa3_ws_tile_compiled(Br, Bc, d), "%dx%d d=%d", Br, Bc, d);
        const size_t q = (size_t)Br * d * 2, kv = (size_t)Bc * d * 2;
        cr_assert_eq(q % 1024, 0);
        cr_assert_eq(kv % 1024, 0);
        const int S = fa3_ws_stages(Br, Bc, d), KS = fa3_ov_k_stages(Br, Bc, d), VS = fa3_ov_v_stages(Br, Bc, d);
        cr_assert_geq(S, 2, "%dx%d d=%d: %d stages", Br, Bc, d, S);
        cr_assert_geq(KS, 2, "%dx%d d=%d: %d stages of K", Br, Bc, d, KS);
        cr_assert(VS == KS || VS == KS + 1, "%dx%d d=%d: %d of K, %d of V", Br, Bc, d, KS, VS);
        cr_assert_leq(fa3_ws_smem_bytes(Br, Bc, d), FA3_SMEM_MAX);
        cr_assert_leq(fa3_ov_smem_bytes(Br, Bc, d), FA3_SMEM_MAX);
        /* one more stage of either ring would not fit */
        cr_assert_gt(fa3_ws_smem_bytes(Br, Bc, d) + 2 * kv + 16, FA3_SMEM_MAX);
        cr_assert_gt(fa3_ov_smem_bytes(Br, Bc, d) + kv + 16, FA3_SMEM_MAX);
        cr_assert_eq(fa3_ov_smem_bytes(Br, Bc, d), 2 * q + (size_t)(KS + VS) * (kv + 16) + 16);
        cr_assert_leq(fa3_queue_smem_bytes(Br, Bc, d), FA3_SMEM_MAX, "%dx%d d=%d", Br, Bc, d);
        cr_assert_eq(fa3_queue_smem_bytes(Br, Bc, d), fa3_ov_smem_bytes(Br, Bc, d) + 16);
        cr_assert_leq(fa3_tma_store_smem_bytes(Br, Bc, d), FA3_SMEM_MAX, "%dx%d d=%d", Br, Bc, d);
        cr_assert_eq(fa3_tma_store_smem_bytes(Br, Bc, d), fa3_queue_smem_bytes(Br, Bc, d));
    }
    cr_assert_eq(fa3_ov_k_stages(128, 128, 128), 2);
    cr_assert_eq(fa3_ov_v_stages(128, 128, 128), 3);
    cr_assert_eq(fa3_ov_k_stages(192, 128, 64), 5);
    cr_assert_eq(fa3_ov_v_stages(192, 128, 64), 6);
}
