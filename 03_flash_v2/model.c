/* model.c: the closed forms of model.h. */
#include "model.h"

#include "attention.h"
#include "checked_math.h"
#include "tiles.h"

typedef unsigned long long u64;

/* Every count below is in checked_math.h's checked arithmetic: exact, or the flag is raised (the size is rejected).
 * Per-head counts (keys loaded <= Tr N, N^2, N d) fit in 64 bits on their own (N, d < 2^31). */
static u64 heads(const Options *o) { return count_mul((u64)o->B, (u64)o->H); }

IoBytes flash_v2_model_bytes(const Options *o) {
    const u64 f = sizeof(float), N = o->N, d = o->d;
    const u64 keys = attn_keys_loaded(o->N, o->Br, o->Bc, o->causal);
    return io_bytes(count_mul4(heads(o), f, d, count_add(N, count_mul(2, keys))), count_mul3(heads(o), f, N * (d + 1)));
}

IoBytes flash_v2_ideal_bytes(const Options *o) {
    const u64 f = sizeof(float), N = o->N, d = o->d;
    return io_bytes(count_mul3(heads(o), f, 3 * N * d), count_mul3(heads(o), f, N * (d + 1)));
}

/* Causal: exactly half, 2 B H N^2 d (a count that fits although the full one would not is exact). */
u64 flash_v2_flops(const Options *o) {
    return count_mul4(o->causal ? 2 : 4, heads(o), (u64)o->N * o->N, (u64)o->d);
}

u64 flash_v2_softmax_ops(const Options *o) {
    const u64 N = o->N, scores = o->causal ? N * (N + 1) / 2 : N * N;
    return count_mul3(5, heads(o), scores);
}

long long flash_v2_grid_blocks(const Options *o) { return ceil_div(o->N, o->Br) * o->B * o->H; }
long long ch02_grid_blocks(const Options *o) { return (long long)o->B * o->H; }

int flash_v2_models(const Options *o, KernelModel *m) {
    KernelModel k = {"flash_v2", flash_v2_flops(o), flash_v2_softmax_ops(o), flash_v2_model_bytes(o),
                     flash_v2_ideal_bytes(o)};
    m[0] = k;
    return 1;
}
