/* attention_host.c: the host copies of attention_host.h. */
#include "attention_host.h"

#include <stdlib.h>
#include <string.h>

#include "attention_inputs.h"
#include "host_tensor.h"

AttnHost attn_host_make(const AttnChapter *c, const Options *o) {
    AttnHost t;
    memset(&t, 0, sizeof(t));
    t.rows = (size_t)o->B * o->H * o->N;
    t.n = t.rows * o->d;
    t.Q = host_alloc(sizeof(float) * t.n, "Q");
    t.K = host_alloc(sizeof(float) * t.n, "K");
    t.V = host_alloc(sizeof(float) * t.n, "V");
    t.O = host_alloc(sizeof(float) * t.n, "O");
    t.L = host_alloc(sizeof(float) * t.rows, "L");
    for (int x = 0; x < c->nextra; x++) {
        if (!c->extra[x].output) continue;
        t.extra_n[x] = (size_t)c->extra[x].elements(o->B, o->H, o->N, o->d);
        t.extra[x] = host_alloc(sizeof(float) * t.extra_n[x], c->extra[x].name);
    }
    attn_inputs(o, t.Q, t.K, t.V);
    attn_host_poison(&t);
    return t;
}

void attn_host_poison(AttnHost *t) {
    memset(t->O, 0xFF, sizeof(float) * t->n);
    memset(t->L, 0xFF, sizeof(float) * t->rows);
    for (int x = 0; x < ATTN_EXTRA_MAX; x++)
        if (t->extra[x]) memset(t->extra[x], 0xFF, sizeof(float) * t->extra_n[x]);
}

void attn_host_free(AttnHost *t) {
    free(t->Q), free(t->K), free(t->V), free(t->O), free(t->L);
    for (int x = 0; x < ATTN_EXTRA_MAX; x++) free(t->extra[x]);
    memset(t, 0, sizeof(*t));
}

void attn_host_finish(const AttnChapter *c, AttnHost *t) {
    if (c->L_from_outputs) c->L_from_outputs(t);
}
