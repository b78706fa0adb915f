/* Steps 6 and 7's shared tiles and the descriptors that point wgmma at them, on the CPU (chapter 06's test_layout.c
 * does the same for the forward): every element each of the five products reads through a descriptor
 * (tests/wgmma_address.h: the PTX ISA's canonical 128-byte-swizzle layouts, from the field values alone) is the
 * element the kernel's copies, or its stores of dS_ij^T, put there (sw128_offset), for both warpgroups, d = 64 and 128,
 * every k step; the stores of dS_ij^T cover its tile once, 32 banks per store; the tiles fill tc_bwd_smem_bytes, each
 * on the swizzle's period; step 7's descriptors, advanced from a tile's first, equal step 6's. The kernel's addressing
 * of the transposed operands (dQ_i's) is new in the book: a wrong one fails here, without a GPU. */
#include "ch07_test.h"
#include "../wgmma_address.h"

static const int DIMS[2] = {64, 128};
static const unsigned BASES[] = {0, 8192, 0x20000}; /* where a tile may start: multiples of 1024 bytes */
#define NBASES (sizeof(BASES) / sizeof(BASES[0]))

/* S_ij^T = K_j Q_i^T (and dP_ij^T = V_j dO_i^T, the same addressing): warpgroup g's step kk reads A = K_j rows 64 g ..
 * 64 g + 63, features 16 kk .. + 15, and B = Q_i rows 0 .. Br - 1, the same features; both K-major. */
Test(wgmma_layout, scores_read_the_warpgroups_keys_and_every_query) {
    for (int y = 0; y < 2; y++)
        for (size_t b = 0; b < NBASES; b++)
            for (int g = 0; g < 2; g++)
                for (int kk = 0; kk < DIMS[y] / 16; kk++) {
                    const uint64_t a = wgmma_desc_k_major(BASES[b] + tc_wg_key_rows(g), TC_WG_BC, kk);
                    const uint64_t q = wgmma_desc_k_major(BASES[b], TC_WG_BR, kk);
                    for (int r = 0; r < 64; r++)
                        for (int k = 0; k < 16; k++) {
                            cr_assert_eq(k_major_address(a, r, k),
                                         BASES[b] + sw128_offset(TC_WG_BC, 64 * g + r, 16 * kk + k),
                                         "d=%d g=%d kk=%d: K (%d, %d)", DIMS[y], g, kk, r, k);
                            cr_assert_eq(k_major_address(q, r, k), BASES[b] + sw128_offset(TC_WG_BR, r, 16 * kk + k),
                                         "d=%d kk=%d: Q (%d, %d)", DIMS[y], kk, r, k);
                        }
                }
}

/* dV_j += P_ij^T dO_i (and dK_j += dS_ij^T Q_i): step kk reads B = dO_i rows (queries) 16 kk .. + 15, every feature,
 * MN-major (N = d: two panels at d = 128). */
Test(wgmma_layout, gradient_products_read_do_and_q_transposed) {
    for (int y = 0; y < 2; y++)
        for (size_t b = 0; b < NBASES; b++)
            for (int kk = 0; kk < TC_WG_BR / 16; kk++) {
                const uint64_t desc = wgmma_desc_mn_major(BASES[b], TC_WG_BR, kk);
                for (int k = 0; k < 16; k++)
                    for (int n = 0; n < DIMS[y]; n++)
                        cr_assert_eq(mn_major_address(desc, k, n), BASES[b] + sw128_offset(TC_WG_BR, 16 * kk + k, n),
                                     "d=%d kk=%d: dO (%d, %d)", DIMS[y], kk, k, n);
            }
}

/* dQ_i = dS_ij K_j: warpgroup g's step kk reads A = dS_ij (m = query, k = key) from dS_ij^T stored [key][query], and
 * B = K_j (k = key, n = feature) features d/2 g .. d/2 g + d/2 - 1, both MN-major; at d = 64 B starts mid-row (the
 * second half of the one panel). */
Test(wgmma_layout, dq_reads_ds_transposed_and_half_of_k) {
    for (int y = 0; y < 2; y++)
        for (size_t b = 0; b < NBASES; b++)
            for (int g = 0; g < 2; g++)
                for (int kk = 0; kk < TC_WG_BC / 16; kk++) {
                    const int d = DIMS[y];
                    const uint64_t a = wgmma_desc_mn_major(BASES[b], TC_WG_BC, kk);
                    const uint64_t k_cols = wgmma_desc_mn_major(BASES[b] + tc_wg_dq_cols(g, d), TC_WG_BC, kk);
                    for (int k = 0; k < 16; k++) {
                        for (int m = 0; m < TC_WG_BR; m++)
                            cr_assert_eq(mn_major_address(a, k, m), BASES[b] + sw128_offset(TC_WG_BC, 16 * kk + k, m),
                                         "kk=%d: dS^T (%d, %d)", kk, k, m);
                        for (int n = 0; n < d / 2; n++)
                            cr_assert_eq(mn_major_address(k_cols, k, n),
                                         BASES[b] + sw128_offset(TC_WG_BC, 16 * kk + k, d / 2 * g + n),
                                         "d=%d g=%d kk=%d: K (%d, %d)", d, g, kk, k, n);
                    }
                }
}

/* The stores of dS_ij^T (6_wgmma.cu): thread (warpgroup g, warp w, lane) writes its packed pair da[kk][h], the
 * accumulator's keys 64 g + 16 w + lane / 4 + 8 (h % 2) and queries 16 kk + 8 (h / 2) + 2 (lane % 4), +1, at
 * sw128_offset of that key and query. Every pair of the Bc x Br tile is written exactly once, and each store
 * instruction (one kk, h, warp) hits the 32 banks once each. */
Test(wgmma_layout, ds_stores_cover_the_tile_without_bank_conflicts) {
    unsigned char seen[TC_WG_BC * TC_WG_BR / 2] = {0};
    for (int warp = 0; warp < 8; warp++)
        for (int kk = 0; kk < TC_WG_BR / 16; kk++)
            for (int h = 0; h < 4; h++) {
                unsigned banks = 0;
                for (int lane = 0; lane < 32; lane++) {
                    const int key = 64 * (warp / 4) + 16 * (warp % 4) + lane / 4 + 8 * (h % 2);
                    const int query = 16 * kk + 8 * (h / 2) + 2 * (lane % 4);
                    const unsigned at = sw128_offset(TC_WG_BC, key, query);
                    cr_assert_eq(at % 4, 0);
                    cr_assert_eq(at + 2, sw128_offset(TC_WG_BC, key, query + 1), "a pair is 4 contiguous bytes");
                    cr_assert_lt(at, sizeof(seen) * 4);
                    cr_assert_eq(seen[at / 4]++, 0, "(%d, %d) written twice", key, query);
                    banks |= 1u << (at / 4 % 32);
                }
                cr_assert_eq(banks, 0xFFFFFFFFu, "warp %d kk %d h %d: banks %08x", warp, kk, h, banks);
            }
    for (size_t x = 0; x < sizeof(seen); x++) cr_assert_eq(seen[x], 1, "pair %zu never written", x);
}

/* The kernel's shared memory, carved in order K_j, V_j, Q_i x 2, dO_i x 2, dS_ij^T, then L_i and D_i x 2: every
 * tile a multiple of 1024 bytes (so each starts on the swizzle's period after the 1024-aligned first), the whole
 * tc_bwd_smem_bytes, within sm_90's 227 KB. */
Test(wgmma_layout, tiles_fill_the_shared_memory_on_the_period) {
    for (int y = 0; y < 2; y++) {
        const size_t kv = (size_t)TC_WG_BC * DIMS[y] * 2, q = (size_t)TC_WG_BR * DIMS[y] * 2,
                     ds = (size_t)TC_WG_BC * TC_WG_BR * 2;
        cr_assert_eq(kv % 1024, 0);
        cr_assert_eq(q % 1024, 0);
        cr_assert_eq(ds % 1024, 0);
        const size_t total = 2 * kv + 4 * q + ds + 4 * TC_WG_BR * sizeof(float);
        cr_assert_eq(total, tc_bwd_smem_bytes(TC_WG_BR, TC_WG_BC, DIMS[y], 2));
        cr_assert_leq(total, 232448);
    }
}

/* Step 7 builds each tile's descriptor once and reaches step kk by wgmma_desc_advance: the descriptor it gets is,
 * bit for bit, the one step 6 builds for that step (wgmma_desc_k_major, wgmma_desc_mn_major), for every tile the
 * kernel points at (both warpgroups' rows of K_j and V_j, its columns of K_j, Q_i, dO_i, dS_ij^T), wherever in shared
 * memory the tile starts, up to the last 10 KB of the 228 KB an SM has. */
static void assert_advanced(uint64_t first, unsigned step, uint64_t step_6s, const char *what, int d, int kk) {
    cr_assert_eq(wgmma_desc_advance(first, step), step_6s, "d=%d kk=%d: %s: %#llx != %#llx", d, kk, what,
                 (unsigned long long)wgmma_desc_advance(first, step), (unsigned long long)step_6s);
}

Test(wgmma_layout, step_7_descriptors_advanced_equal_step_6s) {
    const unsigned starts[] = {0, 1024, 0x8000, 0x20000, 218 * 1024};
    for (int y = 0; y < 2; y++)
        for (size_t b = 0; b < sizeof(starts) / sizeof(starts[0]); b++)
            for (int g = 0; g < 2; g++) {
                const int d = DIMS[y];
                const unsigned q = starts[b], rows = q + tc_wg_key_rows(g), cols = q + tc_wg_dq_cols(g, d);
                for (int kk = 0; kk < d / 16; kk++) {
                    assert_advanced(wgmma_desc_k_major(rows, TC_WG_BC, 0), wgmma_k_major_step(TC_WG_BC, kk),
                                    wgmma_desc_k_major(rows, TC_WG_BC, kk), "K_j's rows", d, kk);
                    assert_advanced(wgmma_desc_k_major(q, TC_WG_BR, 0), wgmma_k_major_step(TC_WG_BR, kk),
                                    wgmma_desc_k_major(q, TC_WG_BR, kk), "Q_i", d, kk);
                }
                for (int kk = 0; kk < TC_WG_BR / 16; kk++)
                    assert_advanced(wgmma_desc_mn_major(q, TC_WG_BR, 0), wgmma_mn_major_step(kk),
                                    wgmma_desc_mn_major(q, TC_WG_BR, kk), "Q_i transposed", d, kk);
                for (int kk = 0; kk < TC_WG_BC / 16; kk++) {
                    assert_advanced(wgmma_desc_mn_major(cols, TC_WG_BC, 0), wgmma_mn_major_step(kk),
                                    wgmma_desc_mn_major(cols, TC_WG_BC, kk), "K_j's columns", d, kk);
                    assert_advanced(wgmma_desc_mn_major(q, TC_WG_BC, 0), wgmma_mn_major_step(kk),
                                    wgmma_desc_mn_major(q, TC_WG_BC, kk), "dS_ij^T", d, kk);
                }
            }
}

/* Step 8's dQ_s, after the other tiles (at tc_bwd_smem_bytes, 16-byte aligned): Br rows of TC_BULK_DQ_STRIDE(d)
 * floats, every row 16-byte aligned (a bulk reduction's source), the whole tc_bulk_smem_bytes within sm_90's 227 KB;
 * thread (warpgroup g, warp w, lane)'s 8-byte stores of its accumulator pairs (8_dq_bulk.cu: rows 16 w + frag_row and
 * + 8, columns d/2 g + 8 u + 2 frag_col) cover the d columns of the Br rows once, and each half-warp's store (the 16
 * lanes of one 8-byte wavefront) hits 32 distinct banks: no conflict. */
Test(wgmma_layout, step_8_dq_tile_rows_aligned_and_stores_conflict_free) {
    for (int y = 0; y < 2; y++) {
        const int d = DIMS[y], stride = TC_BULK_DQ_STRIDE(d), dqn = d / 2;
        const size_t base = tc_bwd_smem_bytes(TC_WG_BR, TC_WG_BC, d, 2);
        cr_assert_eq(base % 16, 0);
        cr_assert_eq((stride * 4) % 16, 0, "d=%d: rows of %d bytes", d, stride * 4);
        cr_assert_eq(tc_bulk_smem_bytes(TC_WG_BR, TC_WG_BC, d, 2), base + (size_t)4 * TC_WG_BR * stride);
        cr_assert_leq(tc_bulk_smem_bytes(TC_WG_BR, TC_WG_BC, d, 2), 232448);
        static unsigned char seen[TC_WG_BR * 128];
        memset(seen, 0, sizeof(seen));
        for (int g = 0; g < 2; g++)
            for (int w = 0; w < 4; w++)
                for (int u = 0; u < dqn / 8; u++)
                    for (int h = 0; h < 2; h++)
                        for (int half = 0; half < 2; half++) {
                            int banks[32] = {0};
                            for (int lane = 16 * half; lane < 16 * half + 16; lane++) {
                                const int row = 16 * w + lane / 4 + 8 * h, col = dqn * g + 8 * u + 2 * (lane % 4);
                                const size_t at = base + 4 * ((size_t)row * stride + col);
                                cr_assert_eq(at % 8, 0);
                                for (int e = 0; e < 2; e++) {
                                    cr_assert_eq(seen[row * d + col + e]++, 0, "d=%d: (%d, %d) twice", d, row,
                                                 col + e);
                                    banks[(at / 4 + e) % 32]++;
                                }
                            }
                            for (int b = 0; b < 32; b++)
                                cr_assert_eq(banks[b], 1, "d=%d g=%d w=%d u=%d: bank %d taken %d times", d, g, w, u,
                                             b, banks[b]);
                        }
        for (int k = 0; k < TC_WG_BR * d; k++) cr_assert_eq(seen[k], 1, "d=%d: element %d not stored", d, k);
    }
}
