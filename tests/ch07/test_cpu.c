/* Chapter 07's CPU versions of the three steps against the float64 reference (dQ, dK, dV) and their counted bytes
 * against the model, causal and not, over ragged N, N smaller than the tiles, every d, odd B and H, several tiles;
 * step 3 in fp16 and bf16 under its low-precision rule; step 2 with --dq pass, and its agreement with the atomics; a
 * long N against sampled rows; NaN never passing; the chapter's CPU run as the program does it; steps 11-13's warp
 * tilings (each product's every element by one warp); and check_bwd's reference, computed once a problem. */
#include "ch07_test.h"

static const int BWD_TILES[][2] = {{32, 32}, {64, 64}, {32, 64}, {64, 32}};

Test(cpu, small_and_ragged_N_every_d_both_steps) {
    const int Ns[] = {1, 17, 33, 100};
    for (size_t n = 0; n < sizeof(Ns) / sizeof(Ns[0]); n++)
        for (int k = 0; k < 3; k++)
            for (int causal = 0; causal < 2; causal++)
                for (int step = 0; step <= BWD_FLASH; step++) { /* the fp32 steps */
                    const Options o = bwd_shape(3, 3, Ns[n], TEST_DIMS[k], 32, 32, causal, step);
                    check_bwd(&o, 0);
                }
}

Test(cpu, flash_every_tile_ragged_causal) {
    for (size_t x = 0; x < sizeof(BWD_TILES) / sizeof(BWD_TILES[0]); x++)
        for (int causal = 0; causal < 2; causal++) {
            const Options o = bwd_shape(1, 3, 77, 64, BWD_TILES[x][0], BWD_TILES[x][1], causal, BWD_FLASH);
            check_bwd(&o, 0);
        }
}

/* --dq pass: flash_dq and flash_dkdv over the same shapes as step 2, at its two square tiles, and N = 1000. */
Test(cpu, dq_pass_ragged_every_d_every_tile) {
    const int Ns[] = {1, 17, 33, 100};
    for (size_t n = 0; n < sizeof(Ns) / sizeof(Ns[0]); n++)
        for (int k = 0; k < 3; k++)
            for (int causal = 0; causal < 2; causal++) {
                const Options o = dq_pass_shape(3, 3, Ns[n], TEST_DIMS[k], 32, 32, causal);
                check_bwd(&o, 0);
            }
    for (int tile = 32; tile <= 64; tile *= 2) /* its square tiles */
        for (int causal = 0; causal < 2; causal++) {
            const Options o = dq_pass_shape(1, 3, 77, 64, tile, tile, causal);
            check_bwd(&o, 0);
        }
    for (int causal = 0; causal < 2; causal++) {
        const Options o = dq_pass_shape(1, 1, TEST_N_LONG(1000), 32, 64, 64, causal);
        check_bwd(&o, 0);
    }
}

/* The two ways to dQ: dK and dV are the same loop nest (bit for bit), D the same sums; dQ the same terms summed in
 * another order (per key block then added, or all keys in one sum). */
Test(cpu, dq_pass_agrees_with_the_atomics) {
    const Options a = bwd_shape(2, 3, 130, 64, 64, 64, 1, BWD_FLASH), b = dq_pass_shape(2, 3, 130, 64, 64, 64, 1);
    BwdHost ta = bwd_host_make(&a), tb = bwd_host_make(&b);
    IoBytes io[MAX_KERNELS];
    cpu_pass(&a, &ta, io);
    cpu_pass(&b, &tb, io);
    cr_assert(memcmp(ta.dK, tb.dK, sizeof(float) * ta.n) == 0 && memcmp(ta.dV, tb.dV, sizeof(float) * ta.n) == 0,
              "dK and dV: flash_dkdv is flash_bwd without dQ");
    double diff = 0.0, ref = 0.0;
    for (size_t x = 0; x < ta.n; x++) {
        diff += (double)(ta.dQ[x] - tb.dQ[x]) * (ta.dQ[x] - tb.dQ[x]);
        ref += (double)ta.dQ[x] * ta.dQ[x];
    }
    cr_assert(ref > 0 && sqrt(diff / ref) < 1e-6, "dQ by atomics and by the pass differ: rel %.3e", sqrt(diff / ref));
    bwd_host_free(&ta), bwd_host_free(&tb);
}

Test(cpu, N_1000_both_steps) {
    for (int causal = 0; causal < 2; causal++)
        for (int step = 0; step <= BWD_FLASH; step++) {
            const Options o = bwd_shape(1, 1, TEST_N_LONG(1000), 32, 64, 32, causal, step);
            check_bwd(&o, 0);
        }
}

Test(cpu, N_4097_against_sampled_rows, .timeout = 600) {
    const Options o = bwd_shape(1, 1, TEST_N_LONG(4097), 32, 64, 64, 1, BWD_FLASH);
    BwdHost t = bwd_host_make(&o);
    BwdExpected e = bwd_expected(&o, &t);
    cr_assert_eq(e.nrows, o.N > ATTN_FULL_CHECK_N ? ATTN_CHECK_ROWS : o.N, "N > ATTN_FULL_CHECK_N: a sample of rows");
    bwd_expected_free(&e);
    bwd_host_free(&t);
    check_bwd(&o, 0);
}

/* An output the kernels left unwritten (still NaN from the poison) fails the check, sampled or not; so does a
 * wrong value in a sampled row. */
Test(cpu, nan_never_passes_and_a_wrong_row_fails) {
    const Options o = bwd_shape(1, 1, 1100, 32, 32, 32, 0, BWD_FLASH);
    BwdHost t = bwd_host_make(&o);
    IoBytes io[MAX_KERNELS];
    cpu_pass(&o, &t, io);
    KernelRun run;
    memset(&run, 0, sizeof(run));
    bwd_check_into(&o, &t, &run);
    cr_assert(error_ok(&run.err, run.tol), "the CPU version passes: rel %.3e", run.err.rel);
    BwdExpected e = bwd_expected(&o, &t);
    cr_assert_lt(e.nrows, o.N, "N > ATTN_FULL_CHECK_N: a sample of rows");
    int unsampled = 1; /* a row the sample leaves out */
    for (int r = 0; r < e.nrows; r++) unsampled += e.rows[r] == unsampled;
    float *grads[3] = {t.dQ, t.dK, t.dV};
    for (int g = 0; g < 3; g++) {
        ErrorStats err[3];
        const float keep = grads[g][(size_t)unsampled * o.d + 5];
        grads[g][(size_t)unsampled * o.d + 5] = NAN;
        bwd_compare(&e, &o, &t, &err[0], &err[1], &err[2]);
        cr_assert(!error_ok(&err[g], run.tol) && err[g].nonfinite == 1, "gradient %d: a NaN outside the sample", g);
        grads[g][(size_t)unsampled * o.d + 5] = keep;
        const size_t at = (size_t)e.rows[e.nrows - 1] * o.d + 3;
        grads[g][at] += 0.5f;
        bwd_compare(&e, &o, &t, &err[0], &err[1], &err[2]);
        cr_assert(!error_ok(&err[g], run.tol), "gradient %d: a wrong sampled value passes (rel %.3e)", g,
                  error_stats_rel(&err[g]));
        grads[g][at] -= 0.5f;
        bwd_compare(&e, &o, &t, &err[0], &err[1], &err[2]);
        cr_assert(error_ok(&err[g], run.tol), "gradient %d: restored, it passes again", g);
    }
    bwd_expected_free(&e);
    bwd_host_free(&t);
}

/* Both steps compute the same gradients: the naive and the flash CPU versions agree closely. */
Test(cpu, both_steps_agree) {
    const Options a = bwd_shape(2, 3, 130, 64, 32, 16, 1, BWD_NAIVE), b = bwd_shape(2, 3, 130, 64, 32, 16, 1, BWD_FLASH);
    BwdHost ta = bwd_host_make(&a), tb = bwd_host_make(&b);
    IoBytes io[MAX_KERNELS];
    cpu_pass(&a, &ta, io);
    cpu_pass(&b, &tb, io);
    double diff = 0.0, ref = 0.0;
    for (size_t x = 0; x < ta.n; x++) {
        diff += (double)(ta.dK[x] - tb.dK[x]) * (ta.dK[x] - tb.dK[x]);
        ref += (double)tb.dK[x] * tb.dK[x];
    }
    cr_assert(ref > 0 && sqrt(diff / ref) < 1e-5, "naive and flash dK differ: rel %.3e", sqrt(diff / ref));
    bwd_host_free(&ta), bwd_host_free(&tb);
}

Test(cpu, chapter_run_cpu_counts_and_checks) {
    for (int step = 0; step <= BWD_STEPS; step++) { /* BWD_STEPS: step 2 with --dq pass */
        Options o = step == BWD_STEPS ? dq_pass_shape(3, 5, 300, 32, 64, 64, 1)
                    : step >= BWD_TC  ? tc_step_shape(step, 3, 5, 300, 64, 1, DTYPE_BF16)
                                      : bwd_shape(3, 5, 300, 32, 64, 32, 1, step);
        o.reps = 3;
        KernelRun runs[MAX_KERNELS + 1];
        memset(runs, 0, sizeof(runs));
        chapter_run_cpu(&chapter07, &o, runs);
        KernelModel m[MAX_KERNELS];
        memset(m, 0, sizeof(m));
        const int n = bwd_models(&o, m);
        for (int k = 0; k < n; k++) {
            cr_assert(runs[k].have_time && runs[k].have_counted, "%s", m[k].kernel);
            cr_assert_eq(runs[k].counted.read, m[k].model.read, "%s", m[k].kernel);
            cr_assert_eq(runs[k].counted.write, m[k].model.write, "%s", m[k].kernel);
        }
        cr_assert(m[0].setup, "the forward is a setup row, outside the backward's total");
        cr_assert(runs[n - 1].have_check && error_ok(&runs[n - 1].err, runs[n - 1].tol), "rel %.3e", runs[n - 1].err.rel);
    }
}

/* ---- step 3, tensor_cores: the kernel's arithmetic in fp16 and bf16 --------------------------------------------- */

static const DType TC_TYPES[2] = {DTYPE_FP16, DTYPE_BF16};

Test(cpu, tc_small_and_ragged_N_both_types) {
    const int Ns[] = {1, 17, 33, 100};
    for (size_t n = 0; n < sizeof(Ns) / sizeof(Ns[0]); n++)
        for (int d = 64; d <= 128; d *= 2)
            for (int causal = 0; causal < 2; causal++)
                for (int t = 0; t < 2; t++) {
                    const Options o = tc_shape(3, 3, Ns[n], d, causal, TC_TYPES[t]);
                    check_bwd(&o, 0);
                }
}

/* check_bwd's reference and tolerance (ch07_test.h) are computed once for the steps of one problem and again for any
 * other: one bit of the forward's O or of dO, the mask, the storage type; kept, they are what a new computation
 * gives. */
Test(cpu, one_reference_per_problem) {
    Options o = tc_shape(1, 2, 40, 64, 0, DTYPE_FP16);
    BwdHost t = bwd_host_make(&o);
    IoBytes io[MAX_KERNELS];
    cpu_pass(&o, &t, io);
    const int runs = check_reference_of(&o, &t)->runs;
    cr_assert_eq(check_reference_of(&o, &t)->runs, runs, "the same problem again: the same reference");
    const Options last = tc_step_shape(BWD_MATRIX_STORES, 1, 2, 40, 64, 0, DTYPE_FP16);
    const CheckReference *r = check_reference_of(&last, &t);
    cr_assert_eq(r->runs, runs, "another step of the same problem: the same reference");
    BwdExpected e = bwd_expected(&o, &t);
    const size_t n = (size_t)e.nheads * e.nrows * o.d;
    cr_assert(memcmp(e.dQ, r->e.dQ, sizeof(double) * n) == 0 && memcmp(e.dK, r->e.dK, sizeof(double) * n) == 0 &&
                  memcmp(e.dV, r->e.dV, sizeof(double) * n) == 0 && bwd_tolerance(&o, &t, &e) == r->tol,
              "the kept reference is a new one's, bit for bit");
    bwd_expected_free(&e);
    t.O[7] = nextafterf(t.O[7], INFINITY);
    cr_assert_eq(check_reference_of(&o, &t)->runs, runs + 1, "one ulp of O: another reference");
    t.dO[3] = -t.dO[3];
    cr_assert_eq(check_reference_of(&o, &t)->runs, runs + 2, "a sign of dO: another reference");
    o.causal = 1;
    cr_assert_eq(check_reference_of(&o, &t)->runs, runs + 3, "the causal mask: another reference");
    o.dtype = DTYPE_BF16;
    cr_assert_eq(check_reference_of(&o, &t)->runs, runs + 4, "bf16: another reference");
    cr_assert_eq(check_reference_of(&o, &t)->runs, runs + 4, "and that one kept");
    bwd_host_free(&t);
}

Test(cpu, tc_N_1000_both_types, .timeout = 600) {
    for (int causal = 0; causal < 2; causal++)
        for (int t = 0; t < 2; t++) {
            const Options o = tc_shape(1, 1, TEST_N_LONG(1000), 64, causal, TC_TYPES[t]);
            check_bwd(&o, 0);
        }
}

Test(cpu, tc_N_4097_sampled_rows, .timeout = 600) {
    const Options o = tc_shape(1, 1, TEST_N_LONG(4097), 128, 1, DTYPE_BF16);
    check_bwd(&o, 0);
}

/* The rule: the tolerance is twice the plain computation's error plus 1e-4, under the type's bound; the plain
 * computation itself is far from the float64 gradients in bf16 (it is the storage type's error, not a bug's), and
 * an fp32-sized tolerance would fail it; a NaN anywhere, or a wrong sampled value, fails. */
Test(cpu, tc_rule_is_the_plain_error_and_nan_never_passes) {
    for (int t = 0; t < 2; t++) {
        const Options o = tc_shape(1, 2, 150, 64, 1, TC_TYPES[t]);
        BwdHost h = bwd_host_make(&o);
        IoBytes io[MAX_KERNELS];
        cpu_pass(&o, &h, io);
        BwdExpected e = bwd_expected(&o, &h);
        ErrorStats plain[3];
        tc_plain_grads(&o, &h, &e, &plain[0], &plain[1], &plain[2]);
        double worst = 0.0;
        for (int x = 0; x < 3; x++) worst = fmax(worst, error_stats_rel(&plain[x]));
        const double tol = bwd_tolerance(&o, &h, &e);
        cr_assert(fabs(tol - fmin(TC_TYPES[t] == DTYPE_BF16 ? 5e-2 : 1e-2, 2 * worst + 1e-4)) < 1e-12, "tol %.3e", tol);
        cr_assert(worst > (TC_TYPES[t] == DTYPE_BF16 ? 1e-3 : 1e-4) && worst < tol,
                  "the plain %s error %.3e: the type's, below the tolerance %.3e", dtype_name(TC_TYPES[t]), worst, tol);
        ErrorStats g[3];
        bwd_compare(&e, &o, &h, &g[0], &g[1], &g[2]);
        for (int x = 0; x < 3; x++) cr_assert(error_ok(&g[x], tol), "gradient %d: rel %.3e", x, error_stats_rel(&g[x]));
        const float keep = h.dK[7];
        h.dK[7] = NAN;
        bwd_compare(&e, &o, &h, &g[0], &g[1], &g[2]);
        cr_assert(!error_ok(&g[1], tol) && g[1].nonfinite == 1, "a NaN in dK passes");
        h.dK[7] = keep;
        h.dQ[(size_t)e.rows[e.nrows - 1] * o.d + 3] += 0.5f;
        bwd_compare(&e, &o, &h, &g[0], &g[1], &g[2]);
        cr_assert(!error_ok(&g[0], tol), "a wrong sampled dQ passes: rel %.3e", error_stats_rel(&g[0]));
        bwd_expected_free(&e);
        bwd_host_free(&h);
    }
}

/* Step 3 computes step 2's gradients: on the same fp16-representable inputs, tensor_cores' CPU version is within the
 * type's error of flash's fp32 one. */
Test(cpu, tc_agrees_with_flash) {
    Options a = bwd_shape(1, 2, 130, 64, 64, 64, 1, BWD_FLASH);
    a.dtype = DTYPE_FP16; /* the inputs rounded to fp16, as step 3's */
    const Options b = tc_shape(1, 2, 130, 64, 1, DTYPE_FP16);
    BwdHost ta = bwd_host_make(&a), tb = bwd_host_make(&b);
    a.dtype = DTYPE_FP32; /* flash computes in fp32 on them */
    IoBytes io[MAX_KERNELS];
    cpu_pass(&a, &ta, io);
    cpu_pass(&b, &tb, io);
    const float *ga[3] = {ta.dQ, ta.dK, ta.dV}, *gb[3] = {tb.dQ, tb.dK, tb.dV};
    for (int g = 0; g < 3; g++) {
        double diff = 0.0, ref = 0.0;
        for (size_t x = 0; x < ta.n; x++) {
            diff += (double)(ga[g][x] - gb[g][x]) * (ga[g][x] - gb[g][x]);
            ref += (double)ga[g][x] * ga[g][x];
        }
        cr_assert(ref > 0 && sqrt(diff / ref) < 2e-3, "gradient %d: flash and tensor_cores differ by rel %.3e", g,
                  sqrt(diff / ref));
    }
    bwd_host_free(&ta), bwd_host_free(&tb);
}

/* Steps 11 to 13's warp tilings (tiles.h, the kernels' own rules), at each (Br, d) a step runs (steps 11 and 12:
 * Br = 64, d = 64 and 128; step 13: Br = 128 at d = 64): every element of S_ij^T and dP_ij^T (Bc keys x Br queries),
 * of dK_j and dV_j (Bc keys x d features) and of dQ_i's share (Br rows x d columns) is computed by exactly one of the
 * TC_TILE_WARPS warps. (So a key's row of P^T and dS^T, which dK_j's and dV_j's products read whole, is written half
 * by each of two warps: hence P_s, dS_s and the barrier between the products.) */
Test(cpu, tile_steps_warp_tilings_cover_each_product_once) {
    const int shapes[][2] = {{TC_TILE_BR, 64}, {TC_TILE_BR, 128}, {TC_KV_BR(64), 64}, {TC_KV_BR(128), 128}};
    for (size_t x = 0; x < sizeof(shapes) / sizeof(shapes[0]); x++) {
        const int br = shapes[x][0], d = shapes[x][1];
        static int s[TC_TILE_BC][128], kv[TC_TILE_BC][128], dq[128][128];
        memset(s, 0, sizeof(s)), memset(kv, 0, sizeof(kv)), memset(dq, 0, sizeof(dq));
        for (int w = 0; w < TC_TILE_WARPS; w++) {
            const int k0 = tc_tile_key0(w), q0 = tc_tile_query0(w, br), f0 = tc_tile_feature0(w, d);
            cr_assert(k0 >= 0 && k0 + 32 <= TC_TILE_BC && q0 >= 0 && q0 + br / 2 <= br && f0 >= 0 && f0 + d / 2 <= d,
                      "Br = %d, d = %d, warp %d: keys %d, queries %d, features %d out of the block", br, d, w, k0, q0,
                      f0);
            for (int k = k0; k < k0 + 32; k++) {
                for (int q = q0; q < q0 + br / 2; q++) s[k][q]++;
                for (int f = f0; f < f0 + d / 2; f++) kv[k][f]++;
            }
            const int r0 = 16 * tc_tile_dq_mt(w, br), c0 = tc_tile_dq_col0(w, d, br), cols = d * br / 128;
            cr_assert(r0 >= 0 && r0 + 16 <= br && c0 >= 0 && c0 + cols <= d, "Br = %d, d = %d, warp %d: dQ strip %d, %d",
                      br, d, w, r0, c0);
            for (int r = r0; r < r0 + 16; r++)
                for (int c = c0; c < c0 + cols; c++) dq[r][c]++;
        }
        for (int k = 0; k < TC_TILE_BC; k++) {
            for (int q = 0; q < br; q++)
                cr_assert_eq(s[k][q], 1, "Br = %d, d = %d: S^T (%d, %d) by %d warps", br, d, k, q, s[k][q]);
            for (int f = 0; f < d; f++)
                cr_assert_eq(kv[k][f], 1, "Br = %d, d = %d: dK_j (%d, %d) by %d warps", br, d, k, f, kv[k][f]);
        }
        for (int r = 0; r < br; r++)
            for (int c = 0; c < d; c++)
                cr_assert_eq(dq[r][c], 1, "Br = %d, d = %d: dQ_i (%d, %d) by %d warps", br, d, r, c, dq[r][c]);
    }
}

/* Step 17's tiling of dQ_i's share (tiles.h), at each d with its Br (TC_KV_BR: 128 at d = 64, 64 at d = 128): every
 * element of the Br x d share is computed by exactly one of the TC_TILE_WARPS warps, each a square of 32 x 32 whose
 * rows and columns are whole m16 tiles and 16-feature groups (the atomics add four features of a group at once). */
Test(cpu, step_17_dq_squares_cover_dq_once) {
    for (int d = 64; d <= 128; d *= 2) {
        const int br = TC_KV_BR(d);
        static int dq[128][128];
        memset(dq, 0, sizeof(dq));
        for (int w = 0; w < TC_TILE_WARPS; w++) {
            const int r0 = tc_sq_dq_row0(w, d), c0 = tc_sq_dq_col0(w, d);
            cr_assert(r0 >= 0 && r0 + 32 <= br && r0 % 16 == 0 && c0 >= 0 && c0 + 32 <= d && c0 % 16 == 0,
                      "Br = %d, d = %d, warp %d: dQ square at %d, %d", br, d, w, r0, c0);
            for (int r = r0; r < r0 + 32; r++)
                for (int c = c0; c < c0 + 32; c++) dq[r][c]++;
        }
        for (int r = 0; r < br; r++)
            for (int c = 0; c < d; c++)
                cr_assert_eq(dq[r][c], 1, "Br = %d, d = %d: dQ_i (%d, %d) by %d warps", br, d, r, c, dq[r][c]);
    }
}
