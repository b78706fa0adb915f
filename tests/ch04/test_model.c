/* Chapter 04's closed forms: chapter 03's bytes for every layout that reads K as stored, the transposed
 * layout's K^T columns (rounded up to 4 in a ragged last block) and its setup row, the model against the CPU
 * version's counted bytes over ragged N, the shared memory of each layout, the layouts' index (kernels.cu's
 * paired index equal to layouts.h's), and validation. No GPU needed. */
#include "ch04_test.h"

Test(model, article_configuration_every_layout) {
    for (int layout = 0; layout < LAYOUT_COUNT; layout++) {
        const Options o = layout_shape(layout, 10, 64, 1024, 64, 32, 32, 0);
        KernelModel m[MAX_KERNELS];
        memset(m, 0, sizeof(m));
        const int n = chapter04.models(&o, m);
        const KernelModel *k = &m[n - 1];
        cr_assert_eq(k->model.read, 10905190400ULL, "%s: chapter 03's reads (N is a multiple of 4)", TEST_LAYOUTS[layout]);
        cr_assert_eq(k->model.write, 170393600ULL, "%s", TEST_LAYOUTS[layout]);
        cr_assert_eq(k->flops, 171798691840ULL);
        if (layout == LAYOUT_TRANSPOSED) {
            cr_assert_eq(n, 2);
            cr_assert_str_eq(m[0].kernel, "k_transpose");
            cr_assert(m[0].setup);
            cr_assert_eq(m[0].model.read, 167772160ULL, "K once");
            cr_assert_eq(m[0].model.write, 167772160ULL, "K^T once");
        } else {
            cr_assert_eq(n, 1);
        }
    }
}

/* A ragged last block of r keys: K^T is read in whole float4, 4 ceil(r / 4) columns per visit. N = 1001, Bc = 32:
 * the last block holds 9 keys, read as 12 columns by each of the 32 query blocks (Br = 32, not causal). */
Test(model, transposed_reads_whole_float4_of_the_last_block) {
    Options t = layout_shape(LAYOUT_TRANSPOSED, 1, 1, 1001, 64, 32, 32, 0), s = t;
    option_assign(&s, CH04_OPT_LAYOUT, LAYOUT_SWIZZLED);
    const unsigned long long extra = 32ULL * (12 - 9) * 64 * 4;
    cr_assert_eq(flash_v4_model_bytes(&t).read, flash_v4_model_bytes(&s).read + extra);
    cr_assert_eq(k_transpose_bytes(&t).write, 4ULL * 64 * 1004, "rows of attn_kt_stride(1001) = 1004 floats");
}

Test(model, equals_the_cpu_versions_counted_bytes_every_layout) {
    const int Ns[] = {1, 2, 15, 17, 31, 33, 65, 100, 129, 203};
    const int tiles[][2] = {{16, 16}, {32, 32}, {64, 16}, {16, 64}, {128, 32}};
    for (int layout = 0; layout < LAYOUT_COUNT; layout++)
        for (size_t n = 0; n < sizeof(Ns) / sizeof(Ns[0]); n++)
            for (size_t k = 0; k < sizeof(tiles) / sizeof(tiles[0]); k++)
                for (int causal = 0; causal < 2; causal++) {
                    Options o = layout_shape(layout, 1, 2, Ns[n], n % 2 ? 32 : 64, tiles[k][0], tiles[k][1], causal);
                    AttnHost t = attn_host_make(chapter_attention(&chapter04, &o), &o);
                    IoBytes io[MAX_KERNELS];
                    cpu_forward(chapter_attention(&chapter04, &o), &o, &t, io);
                    assert_counted_equals_model(&chapter04, &o, io, TEST_LAYOUTS[layout]);
                    attn_host_free(&t);
                }
}

Test(model, shared_memory_per_layout) {
    cr_assert_eq(smem_bytes_layout(32, 32, 64, LAYOUT_NAIVE), 30208, "chapter 03's");
    cr_assert_eq(smem_bytes_layout(32, 32, 64, LAYOUT_PADDED), 30208 + 4 * 32 * 4, "K_j rows + 4 floats");
    cr_assert_eq(smem_bytes_layout(32, 32, 64, LAYOUT_SWIZZLED), 30208, "no extra memory");
    cr_assert_eq(smem_bytes_layout(32, 32, 64, LAYOUT_PAIRED), 30208);
    cr_assert_eq(smem_bytes_layout(32, 32, 64, LAYOUT_TRANSPOSED), 30208, "d x Bc instead of Bc x d");
    /* kernels.cu's kernel is the paired layout's at every tile */
    for (int d = 32; d <= 128; d *= 2)
        for (int Br = 16; Br <= 128; Br *= 2)
            for (int Bc = 16; Bc <= 64; Bc *= 2)
                cr_assert_eq(smem_bytes(Br, Bc, d), smem_bytes_layout(Br, Bc, d, LAYOUT_PAIRED), "d=%d Br=%d Bc=%d", d,
                             Br, Bc);
}

/* kernels.cu writes the paired layout's index out, where `diff` against chapter 03 shows it; variants.cu and the
 * bank model take it from layouts.h. One index: every lane's row, key and L lane, and every element of K_j at
 * every d, in both builds of kernels.cu (run on the host). */
Test(model, the_kernels_paired_index_is_layouts_h_paired_layout) {
    void (*const index_of[2])(int, int, int, int, int[4]) = {flash_v4_index, flash_v4_index_counted};
    for (int b = 0; b < 2; b++)
        for (int d = 32; d <= 128; d *= 2)
            for (int lane = 0; lane < 32; lane++)
                for (int key = 0; key < 64; key++)
                    for (int x = 0; x < d; x++) {
                        int at[4];
                        index_of[b](lane, d, key, x, at);
                        const int want[4] = {row_lane(LAYOUT_PAIRED, lane), key_lane(LAYOUT_PAIRED, lane),
                                             first_lane_of_row(LAYOUT_PAIRED, lane % 4),
                                             k_offset(LAYOUT_PAIRED, 64, d, key, x)};
                        for (int i = 0; i < 4; i++)
                            cr_assert_eq(at[i], want[i], "build %d: index[%d] of lane %d, d=%d, K_j[%d][%d]: %d, "
                                         "layouts.h: %d", b, i, lane, d, key, x, at[i], want[i]);
                    }
}

/* The swizzle is a permutation of each row's float4 columns: every element has one place, in the row. */
Test(model, swizzle_is_a_permutation_within_each_key_row) {
    for (int d = 32; d <= 128; d *= 2)
        for (int key = 0; key < 64; key++) {
            int seen[128] = {0};
            for (int x = 0; x < d; x++) {
                const int at = k_offset(LAYOUT_SWIZZLED, 64, d, key, x);
                cr_assert(at >= key * d && at < (key + 1) * d, "d=%d key=%d x=%d -> %d", d, key, x, at);
                cr_assert_eq(seen[at - key * d]++, 0, "d=%d key=%d x=%d: two elements at %d", d, key, x, at);
            }
        }
}

/* Every lane's row and key: the 32 lanes cover 4 rows x 8 keys once, in every layout. */
Test(model, lanes_cover_4_rows_and_8_keys_once) {
    for (int layout = 0; layout < LAYOUT_COUNT; layout++) {
        int seen[4][8] = {{0}};
        for (int lane = 0; lane < 32; lane++) seen[row_lane(layout, lane)][key_lane(layout, lane)]++;
        for (int r = 0; r < 4; r++) {
            cr_assert_eq(row_lane(layout, first_lane_of_row(layout, r)), r);
            cr_assert_eq(key_lane(layout, first_lane_of_row(layout, r)), 0);
            for (int g = 0; g < 8; g++) cr_assert_eq(seen[r][g], 1, "%s row %d key %d", TEST_LAYOUTS[layout], r, g);
        }
        for (int step = 0; step < 3; step++)
            for (int lane = 0; lane < 32; lane++)
                cr_assert_eq(row_lane(layout, lane ^ row_xor(layout, step)), row_lane(layout, lane),
                             "%s: a row's shuffles stay in the row", TEST_LAYOUTS[layout]);
    }
}

Test(model, validation_names_every_layout) {
    Options o = layout_shape(LAYOUT_NAIVE, 1, 1, 64, 64, 32, 32, 0);
    char msg[512] = "";
    cr_assert_eq(option_set(&o, chapter04.options, "layout", "diagonal", msg, sizeof(msg)), 2);
    cr_assert(strstr(msg, "--layout diagonal") && strstr(msg, LAYOUT_NAMES), "%s", msg);
    for (int layout = 0; layout < LAYOUT_COUNT; layout++) {
        cr_assert_eq(option_set(&o, chapter04.options, "layout", TEST_LAYOUTS[layout], msg, sizeof(msg)), 0, "%s", msg);
        cr_assert_eq(layout_of(&o), layout, "%s", TEST_LAYOUTS[layout]);
        cr_assert_eq(chapter04.validate(&o, NULL, msg, sizeof(msg)), 0, "%s", msg);
    }
}
