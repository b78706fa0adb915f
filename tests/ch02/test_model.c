/* Chapter 02's closed forms against the article's numbers and against the CPU version's counted bytes, the
 * shared-memory and occupancy arithmetic, and the validation of tiles and budgets. None needs a GPU. */
#include "ch02_test.h"

Test(model, article_configuration_reproduces_the_article_bytes) {
    Options o = shape(10, 64, 1024, 64, 32, 32, 0);
    const IoBytes loop = flash_v1_model_bytes(&o), init = flash_v1_init_bytes(&o);
    /* V1-bytes: writes = Tc (O + l + m) = 32 (167,772,160 + 2 x 2,621,440) */
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
    Options a = shape(2, 3, 1000, 64, 16, 32, 0), b = shape(2, 3, 1000, 64, 64, 32, 0), c = shape(2, 3, 1000, 64, 16, 64, 0);
    cr_assert_eq(flash_v1_model_bytes(&a).read, flash_v1_model_bytes(&b).read);
    cr_assert_eq(flash_v1_model_bytes(&a).write, flash_v1_model_bytes(&b).write);
    cr_assert_gt(flash_v1_model_bytes(&a).read, flash_v1_model_bytes(&c).read, "larger Bc, fewer round trips");
}

/* The closed form against the CPU loop nest's counted bytes, over ragged and whole tiles. */
Test(model, closed_form_equals_cpu_counted_bytes) {
    const int Ns[] = {1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 129, 190};
    const int Brs[] = {16, 32, 64, 128}, Bcs[] = {16, 32, 64}, dims[] = {32, 128};
    for (size_t n = 0; n < sizeof(Ns) / sizeof(Ns[0]); n++)
        for (int x = 0; x < 2; x++)
            for (int r = 0; r < 4; r++)
                for (int c = 0; c < 3; c++) {
                    Options o = shape(1, 2, Ns[n], dims[x], Brs[r], Bcs[c], 0);
                    AttnHost t = attn_host_make(&flash_v1, &o);
                    IoBytes io[MAX_KERNELS];
                    cpu_forward(&flash_v1, &o, &t, io);
                    assert_counted_equals_model(&chapter02, &o, io, "cpu");
                    attn_host_free(&t);
                }
}

Test(model, shared_memory_and_the_article_occupancy_on_sm75) {
    /* this kernel at the article's tile: Q_i 32 x 68 + K_j, V_j 32 x 64 each + P_ij 32 x 40 floats */
    cr_assert_eq(smem_bytes(32, 32, 64), 30208u);
    cr_assert_eq(smem_bytes(64, 64, 128), 4u * (64 * 132 + 2 * 64 * 128 + 64 * 72));
    /* the article's v1: 3 Bc d + Bc^2 floats = 28,672 B, 2 blocks of 4 warps on a 64 KB, 32-warp SM: 25% */
    cr_assert_eq(article_v1_smem_bytes(32, 64), 28672u);
    cr_assert_eq(sm75_blocks_per_sm(28672, 4), 2);
    cr_assert_eq(sm75_blocks_per_sm(smem_bytes(32, 32, 64), threads_per_block(32) / 32), 2);
    cr_assert_eq(sm75_blocks_per_sm(smem_bytes(64, 64, 128), 4), 0, "does not fit in 64 KB");
    cr_assert_eq(sm75_blocks_per_sm(1024, 4), 8, "then warps limit: 32 / 4");
    cr_assert_eq(sm75_blocks_per_sm(1024, 1), 16, "then the 16-block limit");
}

Test(validate, supported_tiles_and_dims_pass_without_a_device) {
    char msg[512];
    const int Brs[] = {16, 32, 64, 128}, Bcs[] = {16, 32, 64};
    for (int x = 0; x < 3; x++)
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 3; c++) {
                Options o = shape(2, 3, 17, TEST_DIMS[x], Brs[r], Bcs[c], 0);
                cr_assert_eq(chapter02.validate(&o, NULL, msg, sizeof(msg)), 0, "%s", msg);
            }
}

Test(validate, unsupported_tiles_dims_and_heads_are_rejected_with_a_message) {
    char msg[512];
    const struct {
        int Br, Bc;
        const char *names, *lists;
    } bad[] = {{48, 32, "--br 48", BR_SIZES}, {32, 8, "--bc 8", BC_SIZES}, {256, 32, "--br 256", BR_SIZES},
               {32, 128, "--bc 128", BC_SIZES}, {1, 16, "--br 1", BR_SIZES}, {32, 33, "--bc 33", BC_SIZES}};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        Options o = shape(1, 1, 64, 64, bad[k].Br, bad[k].Bc, 0);
        msg[0] = '\0';
        cr_assert_eq(chapter02.validate(&o, NULL, msg, sizeof(msg)), 2, "%s", bad[k].names);
        cr_assert(strstr(msg, bad[k].names) && strstr(msg, bad[k].lists), "names the option and the sizes: %s", msg);
    }
    Options o = shape(1, 1, 64, 96, 32, 32, 0);
    cr_assert_eq(chapter02.validate(&o, NULL, msg, sizeof(msg)), 2);
    cr_assert(strstr(msg, "--dim 96"), "%s", msg);
    o = shape(1, 70000, 64, 64, 32, 32, 0);
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
    Options o = shape(10, 64, 1024, 64, 32, 32, 0);
    cr_assert_eq(chapter02.validate(&o, &sm75, msg, sizeof(msg)), 0, "%s", msg);
    o = shape(1, 1, 64, 128, 128, 64, 0);
    cr_assert_eq(chapter02.validate(&o, &sm75, msg, sizeof(msg)), 2);
    cr_assert(strstr(msg, "169,984 B"), "needed bytes: %s", msg);
    cr_assert(strstr(msg, "65,536 B"), "the device's limit: %s", msg);
    /* A device with 227 KB per block (H200) takes every supported tile. */
    sm75.smem_per_block_optin = 232448;
    cr_assert_eq(chapter02.validate(&o, &sm75, msg, sizeof(msg)), 0, "%s", msg);
}
