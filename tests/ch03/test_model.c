/* Chapter 03's closed forms: the article's numbers, the causal halving, the Br = k Bc closed form, the model
 * against the CPU version's counted bytes, the shared-memory budget, and validation. No GPU needed. */
#include "ch03_test.h"

static const unsigned long long ARTICLE_TENSOR = 10ULL * 64 * 1024 * 64 * 4; /* Q, K, V or O: 167,772,160 B */

Test(model, article_configuration_reads_Q_once_and_K_V_once_per_query_block) {
    const Options o = shape(10, 64, 1024, 64, 32, 32, 0);
    const IoBytes m = flash_v2_model_bytes(&o), ideal = flash_v2_ideal_bytes(&o);
    cr_assert_eq(m.read, ARTICLE_TENSOR + 32 * 2 * ARTICLE_TENSOR, "reads = Q + Tr (K + V)");
    cr_assert_eq(m.read, 10905190400ULL);
    cr_assert_eq(m.write, ARTICLE_TENSOR + 10ULL * 64 * 1024 * 4, "writes = O + L");
    cr_assert_eq(m.write, 170393600ULL);
    cr_assert_eq(ideal.read, 3 * ARTICLE_TENSOR);
    cr_assert_eq(ideal.write, m.write);
    cr_assert_eq(flash_v2_grid_blocks(&o), 20480, "the article's 20,480 blocks");
    cr_assert_eq(ch02_grid_blocks(&o), 640, "chapter 02's 640 blocks");
    cr_assert_eq(flash_v2_flops(&o), 171798691840.0);
    cr_assert_eq(flash_v2_softmax_ops(&o), 5.0 * 640 * 1024 * 1024);
}

Test(model, causal_halves_the_flops_exactly_and_loads_only_blocks_on_or_below_the_diagonal) {
    const int Ns[] = {1, 2, 17, 1000, 1024, 4097, 65536};
    for (size_t k = 0; k < sizeof(Ns) / sizeof(Ns[0]); k++) {
        const Options full = shape(3, 5, Ns[k], 64, 32, 32, 0), half = shape(3, 5, Ns[k], 64, 32, 32, 1);
        cr_assert_eq(2 * flash_v2_flops(&half), flash_v2_flops(&full), "N=%d", Ns[k]);
        cr_assert_eq(flash_v2_softmax_ops(&half), 5.0 * 15 * ((double)Ns[k] * (Ns[k] + 1) / 2), "N=%d", Ns[k]);
        cr_assert(flash_v2_model_bytes(&half).read <= flash_v2_model_bytes(&full).read, "N=%d", Ns[k]);
        cr_assert_eq(flash_v2_model_bytes(&half).write, flash_v2_model_bytes(&full).write, "N=%d", Ns[k]);
    }
    /* Br = Bc = 32: per head 4 d (3N + Br Tr (Tr - 1)) bytes read = 256 x 34,816 */
    const Options o = shape(10, 64, 1024, 64, 32, 32, 1);
    cr_assert_eq(flash_v2_model_bytes(&o).read, 640ULL * 256 * 34816);
    cr_assert_eq(flash_v2_model_bytes(&o).read, 5704253440ULL);
}

Test(model, causal_closed_form_when_Br_is_a_multiple_of_Bc) {
    /* Block i < Tr-1 loads (i+1) Br keys, the last one N: keys = Br Tr (Tr-1)/2 + N. */
    const int tiles[][2] = {{16, 16}, {32, 16}, {32, 32}, {64, 16}, {64, 32}, {64, 64}, {128, 32}, {128, 64}};
    for (size_t t = 0; t < sizeof(tiles) / sizeof(tiles[0]); t++)
        for (int N = 1; N <= 700; N += 3) {
            const int Br = tiles[t][0], Bc = tiles[t][1];
            const unsigned long long Tr = ceil_div(N, Br);
            cr_assert_eq(attn_keys_loaded(N, Br, Bc, 1), Br * Tr * (Tr - 1) / 2 + N, "N=%d Br=%d Bc=%d", N, Br, Bc);
            cr_assert_eq(attn_keys_loaded(N, Br, Bc, 0), Tr * N, "N=%d Br=%d Bc=%d", N, Br, Bc);
        }
}

Test(model, causal_blocks_visited_form_a_triangle) {
    for (int N = 1; N <= 500; N++) {
        const long long Tr = ceil_div(N, 32);
        long long visits = 0;
        for (long long i = 0; i < Tr; i++) visits += attn_kv_blocks(N, 32, 32, 1, i);
        cr_assert_eq(visits, Tr * (Tr + 1) / 2, "N=%d", N);
        cr_assert_eq(attn_kv_blocks(N, 32, 32, 0, 0), Tr, "N=%d", N);
    }
}

/* The closed form against the CPU version, which counts every row it copies: many ragged N, every tile. */
Test(model, equals_the_cpu_versions_counted_bytes) {
    const int Ns[] = {1, 2, 15, 16, 17, 31, 33, 64, 65, 100, 127, 129, 200, 255, 257};
    const int Brs[] = {16, 32, 64, 128}, Bcs[] = {16, 32, 64};
    for (size_t n = 0; n < sizeof(Ns) / sizeof(Ns[0]); n++)
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 3; c++)
                for (int causal = 0; causal < 2; causal++) {
                    const int d = n % 3 == 0 ? 64 : n % 3 == 1 ? 32 : 128;
                    Options o = shape(1, 2, Ns[n], d, Brs[r], Bcs[c], causal);
                    AttnHost t = attn_host_make(&flash_v2, &o);
                    IoBytes io[MAX_KERNELS];
                    cpu_forward(&flash_v2, &o, &t, io);
                    assert_counted_equals_model(&chapter03, &o, io, "cpu");
                    attn_host_free(&t);
                }
}

Test(model, shared_memory_budget_is_checked_against_the_device) {
    cr_assert_eq(smem_bytes(32, 32, 64), 30208, "Q_i 8,704 + K_j 8,192 + V_j 8,192 + P_ij 5,120");
    cr_assert_eq(smem_bytes(128, 64, 128), 169984);
    DeviceInfo sm75, h200;
    memset(&sm75, 0, sizeof(sm75));
    sm75.present = 1;
    snprintf(sm75.name, sizeof(sm75.name), "a 64 KB-per-block GPU");
    sm75.smem_per_block_optin = 64 * 1024;
    h200 = sm75;
    h200.smem_per_block_optin = 227 * 1024;
    char msg[512] = "";
    Options o = shape(10, 64, 1024, 128, 128, 64, 0);
    cr_assert_eq(chapter03.validate(&o, &sm75, msg, sizeof(msg)), 2, "169,984 B does not fit in 64 KB");
    cr_assert(strstr(msg, "169,984 B") && strstr(msg, "65,536 B"), "the message names both numbers: %s", msg);
    cr_assert_eq(chapter03.validate(&o, &h200, msg, sizeof(msg)), 0, "%s", msg);
    cr_assert_eq(chapter03.validate(&o, NULL, msg, sizeof(msg)), 0, "no device: nothing device-specific checked");
    o = shape(10, 64, 1024, 64, 32, 32, 0);
    cr_assert_eq(chapter03.validate(&o, &sm75, msg, sizeof(msg)), 0, "the article's tile fits the article's GPU");
}

Test(model, validation_rejects_what_the_kernels_cannot_run) {
    const struct {
        int B, H, d, Br, Bc;
        const char *names;
    } bad[] = {{1, 1, 48, 32, 32, "--dim 48"},  {1, 1, 64, 24, 32, "--br 24"},  {1, 1, 64, 256, 32, "--br 256"},
               {1, 1, 64, 8, 32, "--br 8"},     {1, 1, 64, 32, 8, "--bc 8"},    {1, 1, 64, 32, 128, "--bc 128"},
               {256, 256, 64, 32, 32, "65535"}};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        Options o = shape(bad[k].B, bad[k].H, 100, bad[k].d, bad[k].Br, bad[k].Bc, 0);
        char msg[512] = "";
        cr_assert_eq(chapter03.validate(&o, NULL, msg, sizeof(msg)), 2, "case %zu (%s)", k, bad[k].names);
        cr_assert(strstr(msg, bad[k].names), "case %zu: message '%s' should name %s", k, msg, bad[k].names);
    }
    const int Brs[] = {16, 32, 64, 128}, Bcs[] = {16, 32, 64};
    for (int d = 32; d <= 128; d *= 2)
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 3; c++) {
                Options o = shape(255, 257, 1, d, Brs[r], Bcs[c], 1);
                char msg[512] = "";
                cr_assert_eq(chapter03.validate(&o, NULL, msg, sizeof(msg)), 0, "d=%d Br=%d Bc=%d: %s", d, Brs[r],
                             Bcs[c], msg);
            }
}

Test(model, device_memory_grows_with_N_not_N_squared) {
    const Options o = shape(1, 16, 65536, 64, 32, 32, 0);
    const size_t rows = 16ULL * 65536;
    cr_assert_eq(attn_device_bytes(&flash_v2, &o), 4 * (4 * rows * 64 + rows), "Q, K, V, O and L");
    cr_assert(attn_device_bytes(&flash_v2, &o) < (1ULL << 31), "about 1 GB where chapter 00's S alone needs 275 GB");
}
