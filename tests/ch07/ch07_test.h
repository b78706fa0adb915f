/* ch07_test.h: chapter 07's tests: the shared test helpers, the chapter's headers, and one backward pass (the
 * forward, then a step) on the CPU or the GPU checked against the float64 reference and the model. */
#ifndef CH07_TEST_H
#define CH07_TEST_H

#include "../attention_test.h"
#include "../../07_backward/ch07.h"
#include "../../07_backward/kernels.h"
#include "../../07_backward/tiles.h"

/* Options for a shape and a step (--kernel). */
static inline Options bwd_shape(int B, int H, int N, int d, int Br, int Bc, int causal, int step) {
    Options o = shape(B, H, N, d, Br, Bc, causal);
    option_assign(&o, CH07_OPT_KERNEL, step);
    return o;
}

/* Options for step 2 with --dq pass (dq_pass.cu: flash_dq, then flash_dkdv). */
static inline Options dq_pass_shape(int B, int H, int N, int d, int Br, int Bc, int causal) {
    Options o = bwd_shape(B, H, N, d, Br, Bc, causal, BWD_FLASH);
    option_assign(&o, CH07_OPT_DQ, DQ_PASS);
    return o;
}

/* The --kernel word of o's step (chapter.c's table), with --dq pass where given. */
static inline const char *step_name(const Options *o) {
    return bwd_dq_pass(o) ? "flash --dq pass" : ch07_options[CH07_OPT_KERNEL].values[bwd_step(o)];
}

/* Options for a step on tensor cores (3 on) in storage type t, at its only tiles: the step's own, from chapter.c's
 * rule (steps 3 and 4: Br = Bc = 64; steps 5 to 12: Br = 64, Bc = 128; step 13: Br = 128 at d = 64). */
static inline Options tc_step_shape(int step, int B, int H, int N, int d, int causal, DType t) {
    Options given = {.d = d};
    int Br, Bc;
    ch07_options[CH07_OPT_KERNEL].tiles_for(step, &given, &Br, &Bc);
    Options o = bwd_shape(B, H, N, d, Br, Bc, causal, step);
    o.dtype = t;
    return o;
}

/* Whether this machine's GPU runs the step: steps 6 to 10 (wgmma) on sm_90 alone, the others everywhere. */
static inline int step_runs_here(int step) {
    if (!bwd_step_on_wgmma(step)) return 1;
    DeviceInfo dev;
    return device_query(&dev) && dev.cc_major == 9 && dev.cc_minor == 0;
}

/* Options for step 3 in storage type t. */
static inline Options tc_shape(int B, int H, int N, int d, int causal, DType t) {
    return tc_step_shape(BWD_TC, B, H, N, d, causal, t);
}

/* The forward and o's step on the CPU, every head; io[0] the forward's bytes, io[1 + k] kernel k's. */
static inline void cpu_pass(const Options *o, BwdHost *t, IoBytes *io) {
    double ms[MAX_KERNELS];
    memset(ms, 0, sizeof(ms));
    for (int k = 0; k < MAX_KERNELS; k++) io[k] = io_bytes(0, 0);
    fwd_forward_cpu(o, t, &io[0], &ms[0]);
    if (bwd_step(o) == BWD_NAIVE) naive_backward_cpu(o, t, io + 1, ms + 1);
    else if (bwd_16bit(o)) tc_backward_cpu(o, t, io + 1, ms + 1);
    else flash_backward_cpu(o, t, io + 1, ms + 1);
}

/* Every row's counted bytes (the forward's and the step's kernels') equal the model's, to the byte. */
static inline void assert_bwd_counted_equals_model(const Options *o, const IoBytes *io, const char *what) {
    KernelModel m[MAX_KERNELS];
    memset(m, 0, sizeof(m));
    const int n = bwd_models(o, m);
    char text[128];
    describe(o, text, sizeof(text));
    for (int k = 0; k < n; k++) {
        cr_assert_eq(io[k].read, m[k].model.read, "%s %s %s %s: counted read %llu != model %llu", what, step_name(o),
                     text, m[k].kernel, io[k].read, m[k].model.read);
        cr_assert_eq(io[k].write, m[k].model.write, "%s %s %s %s: counted write %llu != model %llu", what,
                     step_name(o), text, m[k].kernel, io[k].write, m[k].model.write);
    }
}

/* dQ, dK, dV of t against e: every element finite, each within tol. */
static inline void assert_grads_within(const BwdExpected *e, double tol, const Options *o, const BwdHost *t,
                                       const char *what) {
    char text[128];
    describe(o, text, sizeof(text));
    ErrorStats g[3];
    bwd_compare(e, o, t, &g[0], &g[1], &g[2]);
    const char *names[3] = {"dQ", "dK", "dV"};
    for (int x = 0; x < 3; x++) {
        cr_assert_eq(g[x].nonfinite, 0, "%s %s %s: %zu elements of %s are NaN or inf (unwritten?)", what, step_name(o),
                     text, g[x].nonfinite, names[x]);
        cr_assert(error_ok(&g[x], tol), "%s %s %s: %s rel err %.3e > %.2e (max abs %.3e)", what, step_name(o), text,
                  names[x], error_stats_rel(&g[x]), tol, g[x].max_abs);
    }
}

/* The same with the tolerance of t's problem (bwd_tolerance: fp32's, or step 3's rule from t's inputs). */
static inline void assert_grads_match(const BwdExpected *e, const Options *o, const BwdHost *t, const char *what) {
    assert_grads_within(e, bwd_tolerance(o, t, e), o, t, what);
}

/* The float64 reference and the tolerance of the last problem checked in this test process, kept for the next check
 * of the same problem: the same B, H, N, d, mask and storage type, and Q, K, V, dO and the forward's O and L (which
 * the rule of steps 3 on reads) equal to the last bit. The tests check step after step of one problem, and neither
 * depends on the step, while computing them takes a second or more a check at N = 1000 (the CPUs' float64 work).
 * runs: the references computed, for the test of this. */
typedef struct {
    int B, H, N, d, causal;
    DType dtype;
    float *in;  /* Q, K, V, dO, O, L one after another; NULL: none yet */
    BwdExpected e;
    double tol; /* bwd_tolerance */
    int runs;
} CheckReference;

static inline CheckReference *check_reference(void) {
    static CheckReference r;
    return &r;
}

/* The last problem's reference and tolerance if t is that problem, else t's own (replacing them). */
static inline const CheckReference *check_reference_of(const Options *o, const BwdHost *t) {
    CheckReference *r = check_reference();
    const float *parts[6] = {t->Q, t->K, t->V, t->dO, t->O, t->L};
    const size_t sizes[6] = {t->n, t->n, t->n, t->n, t->n, t->rows};
    int same = r->in && r->B == o->B && r->H == o->H && r->N == o->N && r->d == o->d && r->causal == o->causal &&
               r->dtype == o->dtype;
    for (size_t x = 0, at = 0; x < 6 && same; at += sizes[x], x++)
        same = memcmp(r->in + at, parts[x], sizeof(float) * sizes[x]) == 0;
    if (same) return r;
    if (r->in) bwd_expected_free(&r->e), free(r->in);
    r->in = malloc(sizeof(float) * (5 * t->n + t->rows));
    cr_assert(r->in != NULL, "no memory for the reference's inputs");
    for (size_t x = 0, at = 0; x < 6; at += sizes[x], x++) memcpy(r->in + at, parts[x], sizeof(float) * sizes[x]);
    r->B = o->B, r->H = o->H, r->N = o->N, r->d = o->d, r->causal = o->causal, r->dtype = o->dtype;
    r->e = bwd_expected(o, t);
    r->tol = bwd_tolerance(o, t, &r->e);
    r->runs++;
    return r;
}

/* One problem: the pass on the CPU (or the GPU), checked and counted. */
static inline void check_bwd(const Options *o, int gpu) {
    BwdHost t = bwd_host_make(o);
    IoBytes io[MAX_KERNELS];
    if (gpu) bwd_pass_gpu(o, &t, 1, io);
    else cpu_pass(o, &t, io);
    assert_bwd_counted_equals_model(o, io, gpu ? "gpu counted" : "cpu");
    if (gpu) bwd_pass_gpu(o, &t, 0, NULL); /* the timed build's gradients, from poisoned outputs again */
    const CheckReference *r = check_reference_of(o, &t);
    assert_grads_within(&r->e, r->tol, o, &t, gpu ? "gpu" : "cpu");
    bwd_host_free(&t);
}

#endif
