/* Chapter 01 on the CPU: the IO model against the CPU versions' counted bytes, the three algorithms against
 * the float64 reference, the numerics of max_sum.h, and the algebra of the merge. No GPU needed. */
#include "ch01_test.h"

static const int LENGTHS[] = {1, 2, 3, 4, 5, 7, 8, 17, 33, 255, 256, 257, 1000, 1024, 4097, 8191, 8192, 8193, 20000};
#define N_LENGTHS (sizeof(LENGTHS) / sizeof(LENGTHS[0]))
static const int CHUNKS[] = {1, 3, 64, 100, 999, BLOCKWISE_CHUNK};
#define N_CHUNKS (sizeof(CHUNKS) / sizeof(CHUNKS[0]))
/* Each of the K chunk blocks of softmax_blockwise reads all K pairs: K^2 merges per row. Tests stop at: */
#define MAX_K 1000

static float *scores(long long R, int N, unsigned long long seed) {
    float *x = (float *)malloc(sizeof(float) * (size_t)R * N);
    Rng rng = rng_seeded(seed);
    fill_normal(x, (size_t)R * N, &rng, 1.0f);
    return x;
}

/* Runs one CPU version on a poisoned output; returns its counted bytes. */
static IoBytes run_cpu(int kernel, const float *x, float *y, long long R, int N, int C) {
    float *ml = (float *)malloc(sizeof(float) * 2 * (size_t)R * blockwise_chunks(N, C));
    IoBytes io = {0, 0};
    memset(y, 0xFF, sizeof(float) * (size_t)R * N);
    softmax_cpu(kernel, x, y, ml, R, N, C, &io);
    free(ml);
    return io;
}

// ---- the model ---------------------------------------------------------------------------------------------

Test(model, closed_forms_at_the_article_configuration) {
    const long long R = 10LL * 64 * 1024; /* B*H*N rows of N = 1024: the S of chapter 00 */
    const IoBytes p3 = model_3pass(R, 1024), on = model_online(R, 1024), bw = model_blockwise(R, 1024, 8192);
    cr_assert_eq(p3.read, 8053063680ull);
    cr_assert_eq(p3.write, 2684354560ull);
    cr_assert_eq(on.read, 5368709120ull);
    cr_assert_eq(on.write, 2684354560ull);
    cr_assert_eq(bw.read, 5368709120ull + R * 8, "one chunk per row: 8 bytes of partials read per row");
    cr_assert_eq(bw.write, 2684354560ull + R * 8);
    /* a 2^20-long row in chunks of 8192: K = 128 pairs written, 128 * 128 read */
    const IoBytes long_row = model_blockwise(1, 1 << 20, 8192);
    cr_assert_eq(long_row.read, 2ull * 4 * (1 << 20) + 128 * 128 * 8);
    cr_assert_eq(long_row.write, 4ull * (1 << 20) + 128 * 8);
}

Test(model, equals_the_cpu_versions_counted_bytes_for_every_shape) {
    for (size_t a = 0; a < N_LENGTHS; a++)
        for (long long R = 1; R <= 3; R += 2) {
            const int N = LENGTHS[a];
            float *x = scores(R, N, 7 + N), *y = (float *)malloc(sizeof(float) * (size_t)R * N);
            for (int k = 0; k < CH01_KERNELS; k++)
                for (size_t c = 0; c < (k == SOFTMAX_BLOCKWISE ? N_CHUNKS : 1); c++) {
                    const int C = k == SOFTMAX_BLOCKWISE ? CHUNKS[c] : BLOCKWISE_CHUNK;
                    if (blockwise_chunks(N, C) > MAX_K) continue;
                    const IoBytes counted = run_cpu(k, x, y, R, N, C), model = model_of(k, R, N, C);
                    cr_assert(counted.read == model.read && counted.write == model.write,
                              "%s R=%lld N=%d C=%d: counted %llu/%llu, model %llu/%llu", ch01_kernel_names[k], R, N,
                              C, counted.read, counted.write, model.read, model.write);
                }
            free(x);
            free(y);
        }
}

Test(model, one_read_and_one_write_per_element_is_the_floor) {
    for (size_t a = 0; a < N_LENGTHS; a++) {
        const int N = LENGTHS[a];
        const IoBytes ideal = model_compulsory(5, N);
        cr_assert_eq(ideal.read, 5ull * N * 4);
        cr_assert_eq(ideal.write, 5ull * N * 4);
        cr_assert_eq(model_3pass(5, N).read, 3 * ideal.read);
        cr_assert_eq(model_online(5, N).read, 2 * ideal.read);
        cr_assert(model_blockwise(5, N, 64).read > model_online(5, N).read, "the partials cost bytes");
    }
}

Test(model, launch_shapes) {
    cr_assert_eq(blockwise_chunks(1, 8192), 1);
    cr_assert_eq(blockwise_chunks(8192, 8192), 1);
    cr_assert_eq(blockwise_chunks(8193, 8192), 2);
    cr_assert_eq(blockwise_chunks(1 << 20, 8192), 128);
    cr_assert_eq(threads_per_block(1), 32);
    cr_assert_eq(threads_per_block(1024), 64);
    cr_assert_eq(threads_per_block(4096), 256);
    cr_assert_eq(threads_per_block(1 << 20), MAX_THREADS);
}

// ---- the algorithms against float64 -----------------------------------------------------------------------

Test(cpu, every_kernel_matches_the_float64_reference) {
    for (size_t a = 0; a < N_LENGTHS; a++) {
        const int N = LENGTHS[a];
        const long long R = 3;
        float *x = scores(R, N, 100 + N), *y = (float *)malloc(sizeof(float) * (size_t)R * N);
        for (int k = 0; k < CH01_KERNELS; k++)
            for (size_t c = 0; c < (k == SOFTMAX_BLOCKWISE ? N_CHUNKS : 1); c++) {
                const int C = k == SOFTMAX_BLOCKWISE ? CHUNKS[c] : BLOCKWISE_CHUNK;
                if (blockwise_chunks(N, C) > MAX_K) continue;
                run_cpu(k, x, y, R, N, C);
                const double rel = softmax_error(x, y, R, N);
                cr_assert(rel <= CH01_TOL, "%s N=%d C=%d: rel err %.3e", ch01_kernel_names[k], N, C, rel);
            }
        free(x);
        free(y);
    }
}

Test(cpu, rows_of_a_million_elements) {
    const int N = 1 << 20;
    float *x = scores(2, N, 5), *y = (float *)malloc(sizeof(float) * 2 * (size_t)N);
    for (int k = 0; k < CH01_KERNELS; k++) {
        run_cpu(k, x, y, 2, N, BLOCKWISE_CHUNK);
        const double rel = softmax_error(x, y, 2, N);
        cr_assert(rel <= CH01_TOL, "%s: rel err %.3e", ch01_kernel_names[k], rel);
    }
    free(x);
    free(y);
}

/* The chunk count does not change the result beyond rounding: blockwise == 3-pass within 2e-6 (relative L2). */
Test(cpu, blockwise_equals_three_pass_for_random_chunkings) {
    Rng rng = rng_seeded(42);
    for (int trial = 0; trial < 40; trial++) {
        const int N = 1 + (int)(rng_uniform(&rng) * 30000);
        const int C = (N + MAX_K - 1) / MAX_K + (int)(rng_uniform(&rng) * N);
        float *x = scores(2, N, 1000 + trial), *y3 = (float *)malloc(sizeof(float) * 2 * (size_t)N),
              *yb = (float *)malloc(sizeof(float) * 2 * (size_t)N);
        run_cpu(SOFTMAX_3PASS, x, y3, 2, N, C);
        run_cpu(SOFTMAX_BLOCKWISE, x, yb, 2, N, C);
        double d2 = 0, r2 = 0;
        for (size_t i = 0; i < 2 * (size_t)N; i++) {
            d2 += ((double)yb[i] - y3[i]) * ((double)yb[i] - y3[i]);
            r2 += (double)y3[i] * y3[i];
        }
        cr_assert(sqrt(d2 / r2) <= 2e-6, "N=%d C=%d (K=%d): blockwise vs 3-pass %.3e", N, C, blockwise_chunks(N, C),
                  sqrt(d2 / r2));
        free(x);
        free(y3);
        free(yb);
    }
}

// ---- numerics ---------------------------------------------------------------------------------------------

Test(numerics, large_masked_and_empty_rows_give_no_nan_on_the_cpu) {
    const int lengths[] = {1, 2, 17, 1000, 8193};
    for (size_t a = 0; a < sizeof(lengths) / sizeof(lengths[0]); a++) {
        const int N = lengths[a];
        float *x = special_rows(N, 3), *y = (float *)malloc(sizeof(float) * SPECIAL_ROWS * (size_t)N);
        for (int k = 0; k < CH01_KERNELS; k++)
            for (size_t c = 0; c < (k == SOFTMAX_BLOCKWISE ? N_CHUNKS : 1); c++) {
                const int C = k == SOFTMAX_BLOCKWISE ? CHUNKS[c] : BLOCKWISE_CHUNK;
                if (blockwise_chunks(N, C) > MAX_K) continue;
                run_cpu(k, x, y, SPECIAL_ROWS, N, C);
                const double rel = softmax_error(x, y, SPECIAL_ROWS, N);
                cr_assert(rel <= CH01_TOL, "%s N=%d C=%d: rel err %.3e", ch01_kernel_names[k], N, C, rel);
                assert_zero_row(y + (size_t)ROW_ALL_MINUS_INF * N, N, ch01_kernel_names[k]);
                for (int j = 0; j < N; j++)
                    cr_assert(fabsf(y[(size_t)ROW_ALL_1E30 * N + j] - 1.f / N) <= 1e-6f / N,
                              "%s: all-1e30 row, y[%d] = %g, not 1/N", ch01_kernel_names[k], j,
                              y[(size_t)ROW_ALL_1E30 * N + j]);
            }
        free(x);
        free(y);
    }
}

Test(numerics, the_statistics_of_masked_scores) {
    const MaxSum empty = max_sum_empty();
    cr_assert(empty.m == -INFINITY && empty.l == 0.f);
    const MaxSum masked = max_sum_add(max_sum_add(empty, -INFINITY), -INFINITY);
    cr_assert(masked.m == -INFINITY && masked.l == 0.f, "all -inf: (-inf, 0), got (%g, %g)", masked.m, masked.l);
    const MaxSum s = max_sum_add(masked, 2.f);
    cr_assert(s.m == 2.f && s.l == 1.f, "a score after masked ones: (2, 1), got (%g, %g)", s.m, s.l);
    const MaxSum t = max_sum_add(s, -INFINITY);
    cr_assert(t.m == 2.f && t.l == 1.f, "a masked score adds nothing, got (%g, %g)", t.m, t.l);
    const Normaliser z = normaliser(masked);
    cr_assert(normalise(z, -INFINITY) == 0.f, "an all -inf row normalises to 0");
}

// ---- the merge --------------------------------------------------------------------------------------------

/* The worked example of the README: x = (1, 3 | 2, 5) in two chunks. */
Test(merge, the_readme_worked_example) {
    const MaxSum A = max_sum_add(max_sum_add(max_sum_empty(), 1.f), 3.f);
    const MaxSum B = max_sum_add(max_sum_add(max_sum_empty(), 2.f), 5.f);
    cr_assert(A.m == 3.f && fabsf(A.l - 1.135335f) < 1e-6f, "A = (%g, %.6f)", A.m, A.l);
    cr_assert(B.m == 5.f && fabsf(B.l - 1.049787f) < 1e-6f, "B = (%g, %.6f)", B.m, B.l);
    const MaxSum AB = max_sum_merge(A, B);
    cr_assert(AB.m == 5.f && fabsf(AB.l - 1.203438f) < 1e-6f, "A+B = (%g, %.6f)", AB.m, AB.l);
    /* the online order, one score at a time: (1, 1) (3, 1.135335) (3, 1.503214) (5, 1.203438) */
    MaxSum s = max_sum_empty();
    const float x[4] = {1, 3, 2, 5}, m_after[4] = {1, 3, 3, 5}, l_after[4] = {1.f, 1.135335f, 1.503214f, 1.203438f};
    for (int j = 0; j < 4; j++) {
        s = max_sum_add(s, x[j]);
        cr_assert(s.m == m_after[j] && fabsf(s.l - l_after[j]) < 1e-6f, "after x[%d]: (%g, %.6f)", j, s.m, s.l);
    }
    const double direct = exp(1 - 5.0) + exp(3 - 5.0) + exp(2 - 5.0) + exp(0.0);
    cr_assert(fabs(AB.l - direct) < 1e-6, "merge %.7f vs direct sum %.7f", AB.l, direct);
}

static MaxSum random_stats(Rng *rng) {
    const double u = rng_uniform(rng);
    if (u < 0.1) return max_sum_empty();
    const float m = u < 0.2 ? 1.5f : (float)(10 * rng_normal(rng)); /* u in [0.1, 0.2): equal maxima */
    return max_sum(m, (float)(1 + 1000 * rng_uniform(rng)));
}

Test(merge, is_commutative_bit_for_bit) {
    Rng rng = rng_seeded(11);
    for (int i = 0; i < 100000; i++) {
        const MaxSum a = random_stats(&rng), b = random_stats(&rng);
        const MaxSum ab = max_sum_merge(a, b), ba = max_sum_merge(b, a);
        cr_assert(memcmp(&ab, &ba, sizeof(ab)) == 0, "merge((%g,%g), (%g,%g)) = (%g,%g) but reversed (%g,%g)", a.m,
                  a.l, b.m, b.l, ab.m, ab.l, ba.m, ba.l);
    }
}

/* Statistics of a row from random chunkings, merged in random orders and tree shapes: m is exact, l agrees with
 * the float64 sum within 1e-5 relative, whatever the order. */
Test(merge, is_associative_up_to_rounding) {
    Rng rng = rng_seeded(12);
    enum { MAX_CHUNKS = 64 };
    for (int trial = 0; trial < 300; trial++) {
        const int N = 1 + (int)(rng_uniform(&rng) * 5000);
        float *x = scores(1, N, 5000 + trial);
        if (trial % 3 == 0) /* masked stretches: some chunks are all -inf */
            for (int j = 0; j < N; j++)
                if ((j / 7) % 2 == 0) x[j] = -INFINITY;
        double m_ref = -INFINITY, l_ref = 0;
        for (int j = 0; j < N; j++) m_ref = x[j] > m_ref ? x[j] : m_ref;
        for (int j = 0; j < N; j++) l_ref += m_ref == -INFINITY ? 0 : exp(x[j] - m_ref);

        /* random cut points: K chunks of random lengths */
        const int K = 1 + (int)(rng_uniform(&rng) * (N < MAX_CHUNKS ? N : MAX_CHUNKS));
        int cut[MAX_CHUNKS + 1];
        cut[0] = 0;
        for (int k = 1; k < K; k++) cut[k] = 1 + (int)(rng_uniform(&rng) * (N - 1));
        cut[K] = N;
        for (int i = 1; i < K; i++) /* sort the inner cuts */
            for (int j = i; j > 1 && cut[j - 1] > cut[j]; j--) {
                const int t = cut[j];
                cut[j] = cut[j - 1];
                cut[j - 1] = t;
            }
        MaxSum part[MAX_CHUNKS];
        for (int k = 0; k < K; k++) part[k] = row_statistics_cpu(x + cut[k], cut[k + 1] - cut[k], NULL);

        /* order 1: left fold in a random permutation */
        int perm[MAX_CHUNKS];
        for (int k = 0; k < K; k++) perm[k] = k;
        for (int k = K - 1; k > 0; k--) {
            const int j = (int)(rng_uniform(&rng) * (k + 1)), t = perm[k];
            perm[k] = perm[j];
            perm[j] = t;
        }
        MaxSum fold = max_sum_empty();
        for (int k = 0; k < K; k++) fold = max_sum_merge(fold, part[perm[k]]);

        /* order 2: a random tree: merge two random survivors until one is left */
        MaxSum pool[MAX_CHUNKS];
        int alive = K;
        memcpy(pool, part, sizeof(MaxSum) * K);
        while (alive > 1) {
            const int i = (int)(rng_uniform(&rng) * alive);
            int j = (int)(rng_uniform(&rng) * (alive - 1));
            if (j >= i) j++;
            pool[i] = max_sum_merge(pool[i], pool[j]);
            pool[j] = pool[--alive];
        }
        const MaxSum tree = pool[0];

        for (int o = 0; o < 2; o++) {
            const MaxSum s = o ? tree : fold;
            cr_assert(s.m == (float)m_ref, "trial %d (N=%d, K=%d): m = %g, expected %g exactly", trial, N, K, s.m,
                      m_ref);
            const double rel = l_ref > 0 ? fabs(s.l - l_ref) / l_ref : fabs(s.l);
            cr_assert(rel <= 1e-5, "trial %d (N=%d, K=%d, %s): l = %.8g vs float64 %.8g (rel %.2e)", trial, N, K,
                      o ? "tree" : "fold", s.l, l_ref, rel);
        }
        free(x);
    }
}
