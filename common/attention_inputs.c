/* attention_inputs.c: the inputs of attention_inputs.h. */
#include "attention_inputs.h"

#include "host_tensor.h"

void attn_inputs(const Options *o, float *Q, float *K, float *V) {
    const size_t n = (size_t)o->B * o->H * o->N * o->d;
    Rng r = rng_seeded(o->seed);
    fill_uniform(Q, n, &r, -2.f, 2.f);
    fill_uniform(K, n, &r, -2.f, 2.f);
    fill_uniform(V, n, &r, -1.f, 1.f);
    round_to_storage(Q, n, o->dtype);
    round_to_storage(K, n, o->dtype);
    round_to_storage(V, n, o->dtype);
}
