/* model.c: the closed forms of model.h. */
#include "model.h"

#include "tiles.h"

static unsigned long long heads(const Options *o) { return (unsigned long long)o->B * o->H; }

long long flash_v2_kv_blocks(int N, int Br, int Bc, int causal, long long i) {
    const long long Tc = ceil_div(N, Bc);
    if (!causal) return Tc;
    const long long last_row = (i + 1) * Br < N ? (i + 1) * Br - 1 : N - 1;
    return last_row / Bc + 1; /* <= Tc, since last_row <= N - 1 */
}

unsigned long long flash_v2_keys_loaded(int N, int Br, int Bc, int causal) {
    const long long Tr = ceil_div(N, Br);
    if (!causal) return (unsigned long long)Tr * N;
    unsigned long long keys = 0;
    for (long long i = 0; i < Tr; i++) {
        const long long rows = Bc * flash_v2_kv_blocks(N, Br, Bc, 1, i); /* whole blocks ...        */
        keys += (unsigned long long)(rows < N ? rows : N);             /* ... but the last is ragged */
    }
    return keys;
}

IoBytes flash_v2_model_bytes(const Options *o) {
    const unsigned long long f = sizeof(float), N = o->N, d = o->d;
    const unsigned long long keys = flash_v2_keys_loaded(o->N, o->Br, o->Bc, o->causal);
    return io_bytes(heads(o) * f * d * (N + 2 * keys), heads(o) * f * N * (d + 1));
}

IoBytes flash_v2_ideal_bytes(const Options *o) {
    const unsigned long long f = sizeof(float), N = o->N, d = o->d;
    return io_bytes(heads(o) * f * 3 * N * d, heads(o) * f * N * (d + 1));
}

double flash_v2_flops(const Options *o) {
    const double full = 4.0 * heads(o) * (double)o->N * o->N * o->d;
    return o->causal ? full / 2 : full;
}

double flash_v2_softmax_ops(const Options *o) {
    const double N = o->N, scores = o->causal ? N * (N + 1) / 2 : N * N;
    return 5.0 * heads(o) * scores;
}

long long flash_v2_grid_blocks(const Options *o) { return ceil_div(o->N, o->Br) * o->B * o->H; }
long long ch02_grid_blocks(const Options *o) { return (long long)o->B * o->H; }

int flash_v2_models(const Options *o, KernelModel *m) {
    KernelModel k = {"flash_v2", flash_v2_flops(o), flash_v2_softmax_ops(o), flash_v2_model_bytes(o),
                     flash_v2_ideal_bytes(o)};
    m[0] = k;
    return 1;
}
