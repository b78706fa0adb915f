/* Chapter 00's CPU version against the float64 reference (every stage, ragged N, both storage types), and
 * the softmax's invariants: rows sum to 1, a constant added to a row changes nothing (not even a bit, and
 * not even when the constant would overflow exp), the largest score gets the largest probability. */
#include "ch00_test.h"

Test(cpu, every_stage_matches_the_float64_reference) {
    const int Ns[] = {1, 17, 33, 100, 257};
    for (size_t i = 0; i < sizeof(Ns) / sizeof(Ns[0]); i++)
        for (int j = 0; j < 3; j++)
            for (int t = 0; t < 2; t++) {
                const Options o = shape(2, 2, Ns[i], TEST_DIMS[j], TEST_DTYPES[t], GEMM_OWN);
                Tensors x = tensors_make(&o);
                IoBytes io[SA_KERNELS];
                std_attn_forward_cpu(&o, x.Q, x.K, x.V, x.S, x.P, x.O, io, NULL);
                Expected e = expected_make(&o, &x, 8);
                cr_assert_eq(e.count, 4, "every head is checked at this size");
                assert_outputs_match(&e, &o, &x, "cpu");
                expected_free(&e);
                tensors_free(&x);
            }
}

Test(cpu, fp16_storage_rounds_like_the_device) {
    cr_assert_eq(std_attn_stored(1.0f + 1.0f / 4096, DTYPE_FP16), 1.0f, "half has 10 mantissa bits");
    cr_assert_eq(std_attn_stored(1.0f + 1.0f / 4096, DTYPE_FP32), 1.0f + 1.0f / 4096);
    cr_assert_eq(std_attn_stored(65504.f, DTYPE_FP16), 65504.f, "largest half");
    /* inputs are already what half stores */
    const Options o = shape(1, 2, 17, 32, DTYPE_FP16, GEMM_OWN);
    Tensors x = tensors_make(&o);
    for (size_t i = 0; i < x.n; i++) cr_assert_eq(std_attn_stored(x.Q[i], DTYPE_FP16), x.Q[i]);
    tensors_free(&x);
}

/* Scores that are multiples of 2^-10 in [-8, 8): adding 64 or 1024 to them is exact in float. */
static void dyadic_scores(float *s, size_t n, unsigned long long seed) {
    Rng r = rng_seeded(seed);
    for (size_t i = 0; i < n; i++) s[i] = (float)((long)(rng_uniform(&r) * 16384) - 8192) / 1024.f;
}

Test(cpu, softmax_rows_sum_to_one_and_match_the_reference) {
    const int Ns[] = {1, 2, 5, 1000, 4099};
    for (size_t i = 0; i < sizeof(Ns) / sizeof(Ns[0]); i++)
        for (int t = 0; t < 2; t++) {
            const int N = Ns[i], rows = 3;
            float *S = malloc(sizeof(float) * rows * N), *P = malloc(sizeof(float) * rows * N);
            double *Sd = malloc(sizeof(double) * rows * N), *Pd = malloc(sizeof(double) * rows * N);
            dyadic_scores(S, (size_t)rows * N, 7 + N);
            IoBytes io = {0, 0};
            softmax_cpu(S, P, rows, N, TEST_DTYPES[t], &io);
            cr_assert_eq(io.read, dtype_size(TEST_DTYPES[t]) * rows * N, "one read of S");
            cr_assert_eq(io.write, io.read, "one write of P");
            for (int r = 0; r < rows; r++) {
                double sum = 0;
                int arg = 0;
                for (int c = 0; c < N; c++) {
                    cr_assert(P[r * N + c] >= 0.f && P[r * N + c] <= 1.f, "N=%d: P = %g", N, P[r * N + c]);
                    sum += P[r * N + c];
                    if (S[r * N + c] > S[r * N + arg]) arg = c;
                }
                for (int c = 0; c < N; c++) cr_assert(P[r * N + c] <= P[r * N + arg], "N=%d: the largest score wins", N);
                /* each of N probabilities is rounded once: at most N half-ulps of 1 (fp16) or float's */
                const double slack = TEST_DTYPES[t] == DTYPE_FP16 ? 1e-3 : 1e-5;
                cr_assert(fabs(sum - 1.0) <= slack, "N=%d %s: row sums to %.9f", N, dtype_name(TEST_DTYPES[t]), sum);
            }
            for (size_t k = 0; k < (size_t)rows * N; k++) Sd[k] = S[k];
            reference_softmax_rows(Sd, rows, N, Pd);
            ErrorStats err = error_stats(P, Pd, (size_t)rows * N);
            cr_assert(error_ok(&err, TEST_DTYPES[t] == DTYPE_FP16 ? SA_TOL_FP16 : SA_TOL_FP32), "N=%d: rel err %.3e",
                      N, err.rel);
            free(S), free(P), free(Sd), free(Pd);
        }
}

Test(cpu, softmax_is_shift_invariant_bit_for_bit_even_past_exps_range) {
    const int N = 777;
    float *S = malloc(sizeof(float) * N), *T = malloc(sizeof(float) * N), *P = malloc(sizeof(float) * N),
          *Q = malloc(sizeof(float) * N);
    dyadic_scores(S, N, 99);
    const float shifts[] = {64.f, -64.f, 1024.f}; /* exp(1024) overflows float: a naive softmax gives inf/inf */
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 3; k++) {
            for (int c = 0; c < N; c++) T[c] = S[c] + shifts[k];
            IoBytes io = {0, 0};
            softmax_cpu(S, P, 1, N, TEST_DTYPES[t], &io);
            softmax_cpu(T, Q, 1, N, TEST_DTYPES[t], &io);
            cr_assert_eq(count_nonfinite(Q, N), 0, "shift %g: not finite", shifts[k]);
            cr_assert(memcmp(P, Q, sizeof(float) * N) == 0, "shift %g %s: P changed", shifts[k],
                      dtype_name(TEST_DTYPES[t]));
        }
    free(S), free(T), free(P), free(Q);
}
