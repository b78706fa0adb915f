/* ch02_test.h: what chapter 02's test files share: options for a shape, the tiles tried on every shape, the
 * inputs, and the float64 reference of a shape computed once and compared with any number of runs. */
#ifndef CH02_TEST_H
#define CH02_TEST_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support.h"
#include "../../02_flash_v1/ch02.h"
#include "../../02_flash_v1/model.h"
#include "../../02_flash_v1/tiles.h"

/* (Br, Bc) pairs every correctness test runs: the article's, both extremes, and unequal ones both ways. */
static const int TEST_TILES[][2] = {{32, 32}, {16, 16}, {64, 64}, {16, 64}, {64, 16}, {32, 64}};
#define N_TEST_TILES ((int)(sizeof(TEST_TILES) / sizeof(TEST_TILES[0])))
static const int TEST_DIMS[] = {32, 64, 128};

static inline Options shape(int B, int H, int N, int d, int Br, int Bc) {
    Options o = shape_options(B, H, N, d);
    o.Br = Br;
    o.Bc = Bc;
    return o;
}

static inline const char *describe(const Options *o, char *buf, size_t len) {
    snprintf(buf, len, "B=%d H=%d N=%d d=%d Br=%d Bc=%d", o->B, o->H, o->N, o->d, o->Br, o->Bc);
    return buf;
}

typedef struct {
    float *Q, *K, *V;
    size_t elems, rows;
} Inputs;

static inline Inputs inputs_make(const Options *o) {
    Inputs in;
    in.rows = (size_t)o->B * o->H * o->N;
    in.elems = in.rows * o->d;
    in.Q = malloc(sizeof(float) * in.elems);
    in.K = malloc(sizeof(float) * in.elems);
    in.V = malloc(sizeof(float) * in.elems);
    cr_assert(in.Q && in.K && in.V, "out of host memory");
    flash_v1_inputs(o, in.Q, in.K, in.V);
    return in;
}

static inline void inputs_free(Inputs *in) { free(in->Q), free(in->K), free(in->V); }

/* The reference O and log-sum-exp of up to max_heads heads (first, last, between), from
 * reference_attention_head. */
typedef struct {
    int count, heads[FV1_CHECK_HEADS];
    double *O, *lse; /* count heads, one after the other */
} Expected;

static inline Expected expected_make(const Options *o, const Inputs *in, int max_heads) {
    Expected e;
    cr_assert(max_heads <= FV1_CHECK_HEADS);
    e.count = sample_heads(o->B * o->H, max_heads, e.heads);
    const size_t head = (size_t)o->N * o->d;
    e.O = malloc(sizeof(double) * head * e.count);
    e.lse = malloc(sizeof(double) * (size_t)o->N * e.count);
    cr_assert(e.O && e.lse, "out of host memory");
    for (int s = 0; s < e.count; s++) {
        const size_t at = (size_t)e.heads[s] * head;
        reference_attention_head(in->Q + at, in->K + at, in->V + at, o->N, o->d, 0, e.O + s * head,
                                 e.lse + (size_t)s * o->N);
    }
    return e;
}

static inline void expected_free(Expected *e) { free(e->O), free(e->lse); }

/* O (every head, N x d each) and m + log(l) (every head, N each) of one run against e: every compared value
 * finite (none left as poison), both within FV1_TOL. */
static inline void assert_outputs_match(const Expected *e, const Options *o, const float *O, const float *l,
                                        const float *m, const char *what) {
    char text[128];
    describe(o, text, sizeof(text));
    const size_t head = (size_t)o->N * o->d;
    ErrorStats err_O = error_stats_empty(), err_lse = error_stats_empty();
    float *lse = malloc(sizeof(float) * o->N);
    for (int s = 0; s < e->count; s++) {
        const size_t row = (size_t)e->heads[s] * o->N;
        error_stats_merge(&err_O, O + row * o->d, e->O + s * head, head);
        for (int r = 0; r < o->N; r++) lse[r] = m[row + r] + logf(l[row + r]);
        error_stats_merge(&err_lse, lse, e->lse + (size_t)s * o->N, o->N);
    }
    free(lse);
    cr_assert_eq(err_O.nonfinite, 0, "%s %s: %zu elements of O are NaN or inf (unwritten?)", what, text,
                 err_O.nonfinite);
    cr_assert_eq(err_lse.nonfinite, 0, "%s %s: %zu rows of l, m are NaN or inf (unwritten?)", what, text,
                 err_lse.nonfinite);
    cr_assert(error_ok(&err_O, FV1_TOL), "%s %s: O rel err %.3e > %.1e (max abs %.3e)", what, text,
              error_stats_rel(&err_O), FV1_TOL, err_O.max_abs);
    cr_assert(error_ok(&err_lse, FV1_TOL), "%s %s: m + log l rel err %.3e > %.1e (max abs %.3e)", what, text,
              error_stats_rel(&err_lse), FV1_TOL, err_lse.max_abs);
}

/* Host buffers for O, l and m filled with NaN (0xFF bytes), as the device ones are poisoned. */
static inline void poisoned_outputs(const Options *o, float **O, float **l, float **m) {
    const size_t rows = (size_t)o->B * o->H * o->N;
    *O = malloc(sizeof(float) * rows * o->d);
    *l = malloc(sizeof(float) * rows);
    *m = malloc(sizeof(float) * rows);
    cr_assert(*O && *l && *m, "out of host memory");
    memset(*O, 0xFF, sizeof(float) * rows * o->d);
    memset(*l, 0xFF, sizeof(float) * rows);
    memset(*m, 0xFF, sizeof(float) * rows);
}

#endif
