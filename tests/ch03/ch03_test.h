/* ch03_test.h: what chapter 03's test files share: options for a shape, the tiles tried on every shape, and
 * the check of a run's O and L against the float64 reference. */
#ifndef CH03_TEST_H
#define CH03_TEST_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support.h"
#include "../../03_flash_v2/ch03.h"
#include "../../03_flash_v2/kernels.h"
#include "../../03_flash_v2/tiles.h"
#include "host_tensor.h"

/* (Br, Bc) pairs every correctness test runs: the article's, both extremes, and unequal ones both ways. */
static const int TEST_TILES[][2] = {{32, 32}, {16, 16}, {64, 64}, {128, 64}, {16, 64}, {64, 16}, {128, 32}};
#define N_TEST_TILES ((int)(sizeof(TEST_TILES) / sizeof(TEST_TILES[0])))
static const int TEST_DIMS[] = {32, 64, 128};

static inline Options shape(int B, int H, int N, int d, int Br, int Bc, int causal) {
    Options o = shape_options(B, H, N, d);
    o.Br = Br;
    o.Bc = Bc;
    o.causal = causal;
    return o;
}

static inline const char *describe(const Options *o, char *buf, size_t len) {
    snprintf(buf, len, "B=%d H=%d N=%d d=%d Br=%d Bc=%d%s", o->B, o->H, o->N, o->d, o->Br, o->Bc,
             o->causal ? " causal" : "");
    return buf;
}

/* O and L of one run against e: every element of both finite (none left as poison), both within tolerance. */
static inline void assert_outputs_match(const Expected *e, const Options *o, const float *O, const float *L,
                                        const char *what) {
    char shape_text[128];
    describe(o, shape_text, sizeof(shape_text));
    ErrorStats err_O, err_L;
    expected_compare(e, o, O, L, &err_O, &err_L);
    const double tol = flash_v2_tolerance(o);
    cr_assert_eq(err_O.nonfinite, 0, "%s %s: %zu elements of O are NaN or inf (unwritten?)", what, shape_text,
                 err_O.nonfinite);
    cr_assert_eq(err_L.nonfinite, 0, "%s %s: %zu elements of L are NaN or inf (unwritten?)", what, shape_text,
                 err_L.nonfinite);
    cr_assert(error_ok(&err_O, tol), "%s %s: O rel err %.3e > %.1e (max abs %.3e)", what, shape_text,
              error_stats_rel(&err_O), tol, err_O.max_abs);
    cr_assert(error_ok(&err_L, tol), "%s %s: L rel err %.3e > %.1e (max abs %.3e)", what, shape_text,
              error_stats_rel(&err_L), tol, err_L.max_abs);
}

/* Host copies of one problem's tensors: the inputs, and O and L filled with NaN (0xFF bytes), as the device
 * outputs are poisoned. */
typedef struct {
    float *Q, *K, *V, *O, *L;
} HostTensors;

static inline HostTensors host_tensors(const Options *o) {
    const size_t rows = (size_t)o->B * o->H * o->N, n = rows * o->d;
    HostTensors t = {malloc(sizeof(float) * n), malloc(sizeof(float) * n), malloc(sizeof(float) * n),
                     malloc(sizeof(float) * n), malloc(sizeof(float) * rows)};
    cr_assert(t.Q && t.K && t.V && t.O && t.L, "out of host memory");
    flash_v2_inputs(o, t.Q, t.K, t.V);
    memset(t.O, 0xFF, sizeof(float) * n);
    memset(t.L, 0xFF, sizeof(float) * rows);
    return t;
}

static inline void poison_host(const Options *o, HostTensors *t) {
    const size_t rows = (size_t)o->B * o->H * o->N;
    memset(t->O, 0xFF, sizeof(float) * rows * o->d);
    memset(t->L, 0xFF, sizeof(float) * rows);
}

static inline void host_free(HostTensors *t) { free(t->Q), free(t->K), free(t->V), free(t->O), free(t->L); }

/* The CPU version over every head of t, counting into *io. */
static inline void cpu_forward(const Options *o, HostTensors *t, IoBytes *io) {
    for (size_t h = 0; h < (size_t)o->B * o->H; h++) {
        const size_t at = h * o->N * o->d;
        flash_v2_head_cpu(t->Q + at, t->K + at, t->V + at, t->O + at, t->L + h * o->N, o->N, o->d, o->Br, o->Bc,
                          o->causal, io);
    }
}

#endif
