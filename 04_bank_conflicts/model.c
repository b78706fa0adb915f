/* model.c: the closed forms of model.h. */
#include "model.h"

#include <string.h>

#include "attention.h"
#include "checked_math.h"
#include "layouts.h"
#include "tiles.h"

typedef unsigned long long u64;

const char *const layout_names[LAYOUT_COUNT + 1] = {"naive", "transposed", "padded", "swizzled", "paired", NULL};

int layout_of(const Options *o) { return (int)option_value(o, ch04_options, CH04_OPT_LAYOUT); }

const char *layout_name(int layout) { return layout >= 0 && layout < LAYOUT_COUNT ? layout_names[layout] : "?"; }

static u64 heads(const Options *o) { return count_mul((u64)o->B, (u64)o->H); }

IoBytes k_transpose_bytes(const Options *o) {
    const u64 f = sizeof(float), d = o->d;
    return io_bytes(count_mul4(heads(o), f, (u64)o->N, d), count_mul4(heads(o), f, d, (u64)attn_kt_stride(o->N)));
}

/* K^T columns one head reads: every visit of a block reads its keys, the last block's rounded up to 4. */
static u64 kt_columns_loaded(const Options *o) {
    const long long Tr = ceil_div(o->N, o->Br), Tc = ceil_div(o->N, o->Bc);
    const long long r = o->N - (Tc - 1) * o->Bc, extra = (r + 3) / 4 * 4 - r;
    long long last_visits = 0;
    for (long long i = 0; i < Tr; i++) last_visits += attn_kv_blocks(o->N, o->Br, o->Bc, o->causal, i) == Tc;
    return attn_keys_loaded(o->N, o->Br, o->Bc, o->causal) + (u64)(last_visits * extra);
}

IoBytes flash_v4_model_bytes(const Options *o) {
    const u64 f = sizeof(float), N = o->N, d = o->d;
    const u64 keys = attn_keys_loaded(o->N, o->Br, o->Bc, o->causal);
    const u64 k_cols = layout_of(o) == LAYOUT_TRANSPOSED ? kt_columns_loaded(o) : keys;
    return io_bytes(count_mul4(heads(o), f, d, count_add(N, count_add(keys, k_cols))),
                    count_mul3(heads(o), f, N * (d + 1)));
}

IoBytes flash_v4_ideal_bytes(const Options *o) {
    const u64 f = sizeof(float), N = o->N, d = o->d;
    return io_bytes(count_mul3(heads(o), f, 3 * N * d), count_mul3(heads(o), f, N * (d + 1)));
}

/* Causal: exactly half, 2 B H N^2 d. */
u64 flash_v4_flops(const Options *o) { return count_mul4(o->causal ? 2 : 4, heads(o), (u64)o->N * o->N, (u64)o->d); }

u64 flash_v4_softmax_ops(const Options *o) {
    const u64 N = o->N, scores = o->causal ? N * (N + 1) / 2 : N * N;
    return count_mul3(5, heads(o), scores);
}

long long flash_v4_grid_blocks(const Options *o) { return ceil_div(o->N, o->Br) * o->B * o->H; }

int flash_v4_models(const Options *o, KernelModel *m) {
    int n = 0;
    if (layout_of(o) == LAYOUT_TRANSPOSED) {
        /* The setup, like chapter 02's init: shown in every table, not part of attention's bytes. */
        const KernelModel t = {"k_transpose", 0, 0, k_transpose_bytes(o), io_bytes(0, 0), 1};
        m[n++] = t;
    }
    static const char *const ROW[LAYOUT_COUNT] = {"flash_v4_naive", "flash_v4_transposed", "flash_v4_padded",
                                                  "flash_v4_swizzled", "flash_v4_paired"};
    const KernelModel k = {ROW[layout_of(o)], flash_v4_flops(o), flash_v4_softmax_ops(o), flash_v4_model_bytes(o),
                           flash_v4_ideal_bytes(o), 0};
    m[n++] = k;
    return n;
}
