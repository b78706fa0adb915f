/* problem.c: chapter 07's problem on the host (ch07.h): the inputs Q, K, V and dO, the forward's outputs and the
 * gradients. */
#include <math.h>
#include <stdlib.h>

#include "ch07.h"
#include "host_tensor.h"

void bwd_dO_input(const Options *o, float *dO) {
    const size_t n = (size_t)o->B * o->H * o->N * o->d;
    Rng r = rng_seeded(o->seed ^ 0x9e3779b97f4a7c15ull); /* a stream of its own: Q, K, V stay every chapter's */
    fill_uniform(dO, n, &r, -1.f, 1.f);
    round_to_storage(dO, n, o->dtype);
}

static float *poisoned(size_t n, const char *what) {
    float *x = host_alloc(sizeof(float) * n, what);
    for (size_t i = 0; i < n; i++) x[i] = NAN;
    return x;
}

BwdHost bwd_host_make(const Options *o) {
    BwdHost t;
    t.rows = (size_t)o->B * o->H * o->N;
    t.n = t.rows * o->d;
    t.Q = host_alloc(sizeof(float) * t.n, "Q");
    t.K = host_alloc(sizeof(float) * t.n, "K");
    t.V = host_alloc(sizeof(float) * t.n, "V");
    t.dO = host_alloc(sizeof(float) * t.n, "dO");
    attn_inputs(o, t.Q, t.K, t.V);
    bwd_dO_input(o, t.dO);
    t.O = poisoned(t.n, "O");
    t.L = poisoned(t.rows, "L");
    t.dQ = poisoned(t.n, "dQ");
    t.dK = poisoned(t.n, "dK");
    t.dV = poisoned(t.n, "dV");
    return t;
}

void bwd_host_free(BwdHost *t) {
    free(t->Q), free(t->K), free(t->V), free(t->dO), free(t->O), free(t->L), free(t->dQ), free(t->dK), free(t->dV);
    t->Q = t->K = t->V = t->dO = t->O = t->L = t->dQ = t->dK = t->dV = NULL;
}
