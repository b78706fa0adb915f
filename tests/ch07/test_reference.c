/* The float64 reference of chapter 07 checked by itself: its gradients against central finite differences of the
 * loss sum(O o dO) on tiny problems, causal and not, and the identity D_i = dO_i . O_i = sum_j P_ij dP_ij that the
 * preprocessing relies on. */
#include "ch07_test.h"

/* Inputs that are multiples of 2^-6 in [-2, 2): x +- h, h = 2^-12, is then exact in fp32, so the differences see the
 * loss at exactly the points they name. */
static void dyadic_inputs(float *x, int n, Rng *r) {
    for (int i = 0; i < n; i++) x[i] = (float)((int)(rng_uniform(r) * 256.0) - 128) / 64.f;
}

static void check_finite_differences(int N, int d, int causal) {
    const int n = N * d;
    float *q = malloc(sizeof(float) * n), *k = malloc(sizeof(float) * n), *v = malloc(sizeof(float) * n),
          *dO = malloc(sizeof(float) * n);
    Rng r = rng_seeded(2026 + N + 7 * causal);
    dyadic_inputs(q, n, &r), dyadic_inputs(k, n, &r), dyadic_inputs(v, n, &r), dyadic_inputs(dO, n, &r);
    double *L = malloc(sizeof(double) * N), *D = malloc(sizeof(double) * N);
    double *dq = malloc(sizeof(double) * n), *dk = malloc(sizeof(double) * n), *dv = malloc(sizeof(double) * n);
    bwd_reference_stats(q, k, v, dO, N, d, causal, L, D, 2);
    bwd_reference_dq(q, k, v, dO, L, D, N, d, causal, NULL, N, dq);
    bwd_reference_dkv(q, k, v, dO, L, D, N, d, causal, NULL, N, dk, dv);
    const float h = 1.f / 4096.f;
    float *inputs[3] = {q, k, v};
    const double *grads[3] = {dq, dk, dv};
    const char *names[3] = {"dQ", "dK", "dV"};
    for (int a = 0; a < 3; a++) {
        double worst = 0.0, scale = 0.0;
        for (int x = 0; x < n; x++) {
            const float keep = inputs[a][x];
            inputs[a][x] = keep + h;
            const double up = bwd_reference_loss(q, k, v, dO, N, d, causal);
            inputs[a][x] = keep - h;
            const double down = bwd_reference_loss(q, k, v, dO, N, d, causal);
            inputs[a][x] = keep;
            const double fd = (up - down) / (2.0 * h), diff = fabs(fd - grads[a][x]);
            worst = diff > worst ? diff : worst;
            scale = fabs(grads[a][x]) > scale ? fabs(grads[a][x]) : scale;
        }
        cr_assert(scale > 0.1, "N=%d d=%d causal=%d: %s is all but zero (%.3e): the test would prove nothing", N, d,
                  causal, names[a], scale);
        /* central differences: error O(h^2) times the third derivative, about 1e-7 of the gradient's scale here */
        cr_assert(worst <= 1e-5 * scale, "N=%d d=%d causal=%d: %s differs from the finite differences by %.3e (scale "
                  "%.3e)", N, d, causal, names[a], worst, scale);
    }
    free(q), free(k), free(v), free(dO), free(L), free(D), free(dq), free(dk), free(dv);
}

Test(reference, gradients_match_finite_differences) {
    check_finite_differences(6, 4, 0);
    check_finite_differences(6, 4, 1);
    check_finite_differences(9, 8, 1);
}

/* A wrong gradient is caught: the same comparison with dQ's scale forgotten fails. */
Test(reference, finite_differences_catch_a_missing_scale) {
    const int N = 5, d = 4, n = N * d;
    float q[20], k[20], v[20], dO[20];
    Rng r = rng_seeded(99);
    dyadic_inputs(q, n, &r), dyadic_inputs(k, n, &r), dyadic_inputs(v, n, &r), dyadic_inputs(dO, n, &r);
    double L[5], D[5], dq[20];
    bwd_reference_stats(q, k, v, dO, N, d, 0, L, D, 1);
    bwd_reference_dq(q, k, v, dO, L, D, N, d, 0, NULL, N, dq);
    int x = 0; /* the largest element of dQ, where a factor of sqrt(d) = 2 shows most */
    for (int y = 1; y < n; y++) x = fabs(dq[y]) > fabs(dq[x]) ? y : x;
    const float h = 1.f / 4096.f, keep = q[x];
    q[x] = keep + h;
    const double up = bwd_reference_loss(q, k, v, dO, N, d, 0);
    q[x] = keep - h;
    const double down = bwd_reference_loss(q, k, v, dO, N, d, 0);
    q[x] = keep;
    const double fd = (up - down) / (2.0 * h);
    cr_assert(fabs(dq[x]) > 0.05, "dQ's largest element %.3e: too small to tell", dq[x]);
    cr_assert(fabs(fd - dq[x]) <= 1e-6 * (1.0 + fabs(fd)), "the reference itself: %.9f vs %.9f", fd, dq[x]);
    cr_assert(fabs(fd - dq[x] * sqrt((double)d)) > 1e-2, "without the scale 1/sqrt(d) the difference shows");
}

Test(reference, D_is_the_row_sum_of_P_times_dP) {
    const int N = 40, d = 16, n = N * d;
    float *q = malloc(sizeof(float) * n), *k = malloc(sizeof(float) * n), *v = malloc(sizeof(float) * n),
          *dO = malloc(sizeof(float) * n);
    Rng r = rng_seeded(7);
    fill_uniform(q, n, &r, -2.f, 2.f), fill_uniform(k, n, &r, -2.f, 2.f), fill_uniform(v, n, &r, -1.f, 1.f);
    fill_uniform(dO, n, &r, -1.f, 1.f);
    for (int causal = 0; causal < 2; causal++) {
        double L[40], D[40];
        bwd_reference_stats(q, k, v, dO, N, d, causal, L, D, 3);
        for (int i = 0; i < N; i++) {
            double sum = 0.0;
            for (int j = 0; j < (causal ? i + 1 : N); j++) {
                double s = 0.0, dp = 0.0;
                for (int c = 0; c < d; c++) s += (double)q[i * d + c] * k[j * d + c], dp += (double)dO[i * d + c] * v[j * d + c];
                sum += exp(s / sqrt((double)d) - L[i]) * dp;
            }
            cr_assert(fabs(sum - D[i]) <= 1e-12 * (1.0 + fabs(D[i])), "row %d causal=%d: %.15f vs %.15f", i, causal,
                      sum, D[i]);
        }
    }
    free(q), free(k), free(v), free(dO);
}
