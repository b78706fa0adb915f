/* ch00_test.h: what chapter 00's test files share: options for a shape, host inputs and outputs, the float64
 * reference of the checked heads (computed once per shape, reused by every backend and build), and running
 * ./ch00/run. */
#ifndef CH00_TEST_H
#define CH00_TEST_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support.h"
#include "../../00_standard_attention/ch00.h"
#include "../../00_standard_attention/kernels.h"
#include "../../00_standard_attention/tiles.h"
#include "host_tensor.h"

static const int TEST_DIMS[] = {32, 64, 128};
static const DType TEST_DTYPES[] = {DTYPE_FP32, DTYPE_FP16};

static inline Options shape(int B, int H, int N, int d, DType t, GemmBackend gemm) {
    Options o = shape_options(B, H, N, d);
    o.dtype = t;
    option_assign(&o, CH00_OPT_GEMM, gemm);
    return o;
}

static inline const char *describe(const Options *o, char *buf, size_t len) {
    snprintf(buf, len, "B=%d H=%d N=%d d=%d %s %s", o->B, o->H, o->N, o->d, dtype_name(o->dtype),
             gemm_of(o) == GEMM_CUBLAS ? "cublas" : "own");
    return buf;
}

/* Inputs of one shape (as std_attn_inputs makes them) and room for S, P, O, all filled with NaN. */
typedef struct {
    float *Q, *K, *V, *S, *P, *O;
    size_t n, nn; /* elements of Q (and K, V, O); of S (and P) */
} Tensors;

static inline Tensors tensors_make(const Options *o) {
    Tensors t;
    t.n = (size_t)o->B * o->H * o->N * o->d;
    t.nn = (size_t)o->B * o->H * o->N * o->N;
    t.Q = malloc(sizeof(float) * t.n);
    t.K = malloc(sizeof(float) * t.n);
    t.V = malloc(sizeof(float) * t.n);
    t.O = malloc(sizeof(float) * t.n);
    t.S = malloc(sizeof(float) * t.nn);
    t.P = malloc(sizeof(float) * t.nn);
    cr_assert(t.Q && t.K && t.V && t.O && t.S && t.P, "out of host memory");
    std_attn_inputs(o, t.Q, t.K, t.V);
    memset(t.O, 0xFF, sizeof(float) * t.n);
    memset(t.S, 0xFF, sizeof(float) * t.nn);
    memset(t.P, 0xFF, sizeof(float) * t.nn);
    return t;
}

static inline void tensors_free(Tensors *t) {
    free(t->Q), free(t->K), free(t->V), free(t->O), free(t->S), free(t->P);
}

/* The float64 reference of the heads std_attn_check_heads picks (or of the first `max_heads` of them). */
typedef struct {
    int count, idx[8];
    double *S[8], *P[8], *O[8];
} Expected;

static inline Expected expected_make(const Options *o, const Tensors *t, int max_heads) {
    Expected e;
    e.count = std_attn_check_heads(o, e.idx);
    if (max_heads < e.count) e.count = sample_heads(o->B * o->H, max_heads, e.idx);
    const size_t N = o->N;
    for (int s = 0; s < e.count; s++) {
        e.S[s] = malloc(sizeof(double) * N * N);
        e.P[s] = malloc(sizeof(double) * N * N);
        e.O[s] = malloc(sizeof(double) * N * o->d);
        cr_assert(e.S[s] && e.P[s] && e.O[s], "out of host memory");
        std_attn_reference_head(o, t->Q, t->K, t->V, e.idx[s], e.S[s], e.P[s], e.O[s]);
    }
    return e;
}

static inline void expected_free(Expected *e) {
    for (int s = 0; s < e->count; s++) free(e->S[s]), free(e->P[s]), free(e->O[s]);
}

/* S, P and O of t (every head) against e: none left NaN anywhere, each stage within tolerance on the
 * reference heads. */
static inline void assert_outputs_match(const Expected *e, const Options *o, const Tensors *t, const char *what) {
    char text[128];
    describe(o, text, sizeof(text));
    cr_assert_eq(count_nonfinite(t->S, t->nn), 0, "%s %s: S has NaN or inf (unwritten?)", what, text);
    cr_assert_eq(count_nonfinite(t->P, t->nn), 0, "%s %s: P has NaN or inf (unwritten?)", what, text);
    cr_assert_eq(count_nonfinite(t->O, t->n), 0, "%s %s: O has NaN or inf (unwritten?)", what, text);
    ErrorStats err[SA_KERNELS] = {error_stats_empty(), error_stats_empty(), error_stats_empty()};
    const size_t N = o->N, d = o->d;
    for (int s = 0; s < e->count; s++) {
        const size_t h = e->idx[s];
        std_attn_compare_head(o, t->S + h * N * N, t->P + h * N * N, t->O + h * N * d, e->S[s], e->P[s], e->O[s], err);
    }
    const char *names[SA_KERNELS] = {"S", "P", "O"};
    const double tol = std_attn_tolerance(o);
    for (int k = 0; k < SA_KERNELS; k++)
        cr_assert(error_ok(&err[k], tol), "%s %s: %s rel err %.3e > %.1e (max abs %.3e)", what, text, names[k],
                  error_stats_rel(&err[k]), tol, err[k].max_abs);
}

static inline int run_cli(const char *args, char *out, size_t len) { return run_chapter("00", args, out, len); }

#endif
