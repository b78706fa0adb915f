/* ch01_test.h: what several of chapter 01's test files share: the special rows that test the
 * softmax's numerical guards, and a check of a softmax output against reference_softmax_rows. */
#ifndef CH01_TEST_H
#define CH01_TEST_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../01_online_softmax/ch01.h"
#include "../../01_online_softmax/kernels.h"
#include "host_tensor.h"

/* Rows whose softmax tests the guards of max_sum.h. Each is N long; row `kind`: */
enum {
    ROW_PLUS_MINUS_1E4, /* uniform in [-1e4, 1e4], with exact +1e4 and -1e4 in it                  */
    ROW_ALL_1E30,       /* every score 1e30: softmax 1/N                                           */
    ROW_ALL_MINUS_1E30, /* every score -1e30: softmax 1/N                                          */
    ROW_SOME_MINUS_INF, /* N(0, 1) scores, every third one masked to -inf                           */
    ROW_LEADING_INF,    /* the first half -inf (whole chunks of -inf for the blockwise kernel)     */
    ROW_EXTREMES,       /* +-FLT_MAX: differences overflow to -inf, and exp(-inf) = 0               */
    ROW_ALL_MINUS_INF,  /* every score -inf: the documented result is all zeros                    */
    SPECIAL_ROWS
};

static inline void special_row(int kind, float *x, int N, Rng *rng) {
    for (int j = 0; j < N; j++) {
        const float u = (float)rng_uniform(rng);
        switch (kind) {
        case ROW_PLUS_MINUS_1E4: x[j] = j == 0 ? 1e4f : j == 1 ? -1e4f : 1e4f * (2.f * u - 1.f); break;
        case ROW_ALL_1E30: x[j] = 1e30f; break;
        case ROW_ALL_MINUS_1E30: x[j] = -1e30f; break;
        case ROW_SOME_MINUS_INF: x[j] = j % 3 == 1 ? -INFINITY : (float)rng_normal(rng); break;
        case ROW_LEADING_INF: x[j] = j < N / 2 ? -INFINITY : (float)rng_normal(rng); break;
        case ROW_EXTREMES: x[j] = j % 2 ? -3.4028235e38f : 3.4028235e38f * u; break;
        default: x[j] = -INFINITY; break;
        }
    }
}

/* The SPECIAL_ROWS rows, one after another (SPECIAL_ROWS x N). */
static inline float *special_rows(int N, unsigned long long seed) {
    float *x = (float *)malloc(sizeof(float) * (size_t)SPECIAL_ROWS * N);
    Rng rng = rng_seeded(seed);
    for (int k = 0; k < SPECIAL_ROWS; k++) special_row(k, x + (size_t)k * N, N, &rng);
    return x;
}

/* y against the float64 softmax of x, row by row; every value finite. Returns the relative L2 error. */
static inline double softmax_error(const float *x, const float *y, long long R, int N) {
    double *s = (double *)malloc(sizeof(double) * (size_t)N), *p = (double *)malloc(sizeof(double) * (size_t)N);
    ErrorStats e = error_stats_empty();
    for (long long r = 0; r < R; r++) {
        for (int j = 0; j < N; j++) s[j] = x[(size_t)r * N + j];
        reference_softmax_rows(s, 1, N, p);
        error_stats_merge(&e, y + (size_t)r * N, p, (size_t)N);
    }
    free(s);
    free(p);
    cr_assert_eq(e.nonfinite, 0, "%zu outputs are NaN or inf", e.nonfinite);
    return error_stats_rel(&e);
}

/* Every element of an all -inf row is exactly 0. */
static inline void assert_zero_row(const float *y, int N, const char *what) {
    for (int j = 0; j < N; j++)
        cr_assert(y[j] == 0.f, "%s: an all -inf row must give zeros; y[%d] = %g (N = %d)", what, j, y[j], N);
}

#endif
