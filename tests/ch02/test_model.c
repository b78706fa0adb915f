/* Chapter 02's closed forms against the article's numbers and against the CPU version's counted bytes, the
 * shared-memory and occupancy arithmetic, and the validation of tiles and budgets. None needs a GPU. */
#include "ch02_test.h"

Test(model, article_configuration_reproduces_the_article_bytes) {
    Options o = shape(10, 64, 1024, 64, 32, 32);
    const IoBytes loop = flash_v1_model_bytes(&o), init = flash_v1_init_bytes(&o);
    /* ARTICLE.md A2: writes = Tc (O + l + m) = 32 (167,772,160 + 2 x 2,621,440) */
    cr_assert_eq(loop.write, 5536481280ULL);
    cr_assert_eq(loop.read, 11240734720ULL);
    cr_assert_eq(init.read, 0ULL);
    cr_assert_eq(init.write, 173015040ULL, "O + l + m once");
    cr_assert_eq(flash_v1_grid_blocks(&o), 640);
    cr_assert_eq(flash_v1_flops(&o), 4.0 * 640 * 1024 * 1024 * 64);
    KernelModel m[MAX_KERNELS];
    cr_assert_eq(flash_v1_models(&o, m), FV1_KERNELS);
    cr_assert_str_eq(m[FV1_INIT].kernel, "flash_v1_init");
    cr_assert_str_eq(m[FV1_MAIN].kernel, "flash_v1");
    cr_assert_eq(m[FV1_MAIN].model.read, loop.read);
    cr_assert_eq(m[FV1_MAIN].ideal.read, 3ULL * 167772160, "Q, K, V once");
}

Test(model, traffic_depends_on_Bc_not_Br) {
    Options a = shape(2, 3, 1000, 64, 16, 32), b = shape(2, 3, 1000, 64, 64, 32), c = shape(2, 3, 1000, 64, 16, 64);
    cr_assert_eq(flash_v1_model_bytes(&a).read, flash_v1_model_bytes(&b).read);
    cr_assert_eq(flash_v1_model_bytes(&a).write, flash_v1_model_bytes(&b).write);
    cr_assert_gt(flash_v1_model_bytes(&a).read, flash_v1_model_bytes(&c).read, "larger Bc, fewer round trips");
}

/* The closed form against the CPU loop nest's counted bytes, over ragged and whole tiles. */
Test(model, closed_form_equals_cpu_counted_bytes) {
    const int Ns[] = {1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 129, 190};
    const int tiles[] = {16, 32, 64}, dims[] = {32, 128};
    for (size_t n = 0; n < sizeof(Ns) / sizeof(Ns[0]); n++)
        for (int x = 0; x < 2; x++)
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++) {
                    Options o = shape(1, 2, Ns[n], dims[x], tiles[r], tiles[c]);
                    Inputs in = inputs_make(&o);
                    float *O, *l, *m;
                    poisoned_outputs(&o, &O, &l, &m);
                    IoBytes init = {0, 0}, loop = {0, 0};
                    flash_v1_init_cpu(O, l, m, in.rows, o.d, &init);
                    for (int h = 0; h < o.B * o.H; h++) {
                        const size_t at = (size_t)h * o.N;
                        flash_v1_head_cpu(in.Q + at * o.d, in.K + at * o.d, in.V + at * o.d, O + at * o.d, l + at,
                                          m + at, o.N, o.d, o.Br, o.Bc, &loop);
                    }
                    char text[128];
                    describe(&o, text, sizeof(text));
                    const IoBytes want = flash_v1_model_bytes(&o), want_init = flash_v1_init_bytes(&o);
                    cr_assert_eq(loop.read, want.read, "%s: counted read %llu != model %llu", text, loop.read, want.read);
                    cr_assert_eq(loop.write, want.write, "%s: counted write %llu != model %llu", text, loop.write,
                                 want.write);
                    cr_assert_eq(init.write, want_init.write, "%s: init", text);
                    cr_assert_eq(init.read, 0ULL, "%s: init reads nothing", text);
                    free(O), free(l), free(m);
                    inputs_free(&in);
                }
}

Test(model, shared_memory_and_the_article_occupancy_on_sm75) {
    /* this kernel at the article's tile: Q_i, K_j 32 x 68 + V_j 32 x 64 + S_ij 32 x 36 + 4 x 32 floats */
    cr_assert_eq(flash_v1_smem_bytes(32, 32, 64), 30720u);
    cr_assert_eq(flash_v1_smem_bytes(64, 64, 128), 4u * (64 * 132 + 64 * 132 + 64 * 128 + 64 * 68 + 4 * 64));
    /* ARTICLE.md A3: 3 Bc d + Bc^2 floats = 28,672 B, 2 blocks of 4 warps on a 64 KB, 32-warp SM: 25% */
    cr_assert_eq(article_v1_smem_bytes(32, 64), 28672u);
    cr_assert_eq(sm75_blocks_per_sm(28672, 4), 2);
    cr_assert_eq(sm75_blocks_per_sm(flash_v1_smem_bytes(32, 32, 64), FV1_THREADS / 32), 2);
    cr_assert_eq(sm75_blocks_per_sm(flash_v1_smem_bytes(64, 64, 128), 4), 0, "does not fit in 64 KB");
    cr_assert_eq(sm75_blocks_per_sm(1024, 4), 8, "then warps limit: 32 / 4");
    cr_assert_eq(sm75_blocks_per_sm(1024, 1), 16, "then the 16-block limit");
}

Test(validate, supported_tiles_and_dims_pass_without_a_device) {
    char msg[512];
    const int tiles[] = {16, 32, 64};
    for (int x = 0; x < 3; x++)
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) {
                Options o = shape(2, 3, 17, TEST_DIMS[x], tiles[r], tiles[c]);
                cr_assert_eq(chapter02.validate(&o, NULL, msg, sizeof(msg)), 0, "%s", msg);
            }
}

Test(validate, unsupported_tiles_dims_and_heads_are_rejected_with_a_message) {
    char msg[512];
    const int bad[][2] = {{48, 32}, {32, 8}, {128, 32}, {32, 128}, {1, 1}, {33, 32}};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        Options o = shape(1, 1, 64, 64, bad[k][0], bad[k][1]);
        msg[0] = '\0';
        cr_assert_eq(chapter02.validate(&o, NULL, msg, sizeof(msg)), 2, "Br=%d Bc=%d", bad[k][0], bad[k][1]);
        cr_assert(strstr(msg, FV1_TILE_SIZES), "the message lists the supported sizes: %s", msg);
    }
    Options o = shape(1, 1, 64, 96, 32, 32);
    cr_assert_eq(chapter02.validate(&o, NULL, msg, sizeof(msg)), 2);
    cr_assert(strstr(msg, "--dim 96"), "%s", msg);
    o = shape(1, 70000, 64, 64, 32, 32);
    cr_assert_eq(chapter02.validate(&o, NULL, msg, sizeof(msg)), 2);
    cr_assert(strstr(msg, "65535"), "%s", msg);
}

/* The budget check with the article's GPU: 64 KB per block. The article's tile fits, the largest does not,
 * and the message gives both numbers. */
Test(validate, shared_memory_budget_is_checked_against_the_device) {
    DeviceInfo sm75;
    memset(&sm75, 0, sizeof(sm75));
    sm75.present = 1;
    snprintf(sm75.name, sizeof(sm75.name), "GeForce RTX 2070");
    sm75.smem_per_block_optin = 65536;
    char msg[512];
    Options o = shape(10, 64, 1024, 64, 32, 32);
    cr_assert_eq(chapter02.validate(&o, &sm75, msg, sizeof(msg)), 0, "%s", msg);
    o = shape(1, 1, 64, 128, 64, 64);
    cr_assert_eq(chapter02.validate(&o, &sm75, msg, sizeof(msg)), 2);
    cr_assert(strstr(msg, "118,784 B"), "needed bytes: %s", msg);
    cr_assert(strstr(msg, "65,536 B"), "the device's limit: %s", msg);
    /* A device with 227 KB per block (H200) takes every supported tile. */
    sm75.smem_per_block_optin = 232448;
    cr_assert_eq(chapter02.validate(&o, &sm75, msg, sizeof(msg)), 0, "%s", msg);
}
