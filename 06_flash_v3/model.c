/* model.c: the closed forms of model.h. */
#include "model.h"

#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "attention.h"
#include "checked_math.h"
#include "host_tensor.h"
#include "tiles.h"

typedef unsigned long long u64;

const char *const fa3_kernel_options[FA3_KERNEL_COUNT + 1] = {"wgmma", "tma", "warp_specialized", "pingpong",
                                                                      "overlap", "zigzag", "queue", NULL};
static const char *const KERNEL_NAME[FA3_KERNEL_COUNT] = {"flash_wgmma", "flash_tma", "flash_warp_specialized",
                                                              "flash_pingpong", "flash_overlap", "flash_zigzag",
                                                              "flash_queue"};

int fa3_kernel_of(const Options *o) { return (int)option_value(o, ch06_options, CH06_OPT_KERNEL); }
const char *fa3_kernel_option(int k) { return k >= 0 && k < FA3_KERNEL_COUNT ? fa3_kernel_options[k] : "?"; }
const char *fa3_kernel_name(int k) { return k >= 0 && k < FA3_KERNEL_COUNT ? KERNEL_NAME[k] : "?"; }

static u64 heads(const Options *o) { return count_mul((u64)o->B, (u64)o->H); }

IoBytes fa3_model_bytes(const Options *o) {
    const u64 e = dtype_size(o->dtype), N = o->N, d = o->d;
    const u64 keys = attn_keys_loaded(o->N, o->Br, o->Bc, o->causal);
    return io_bytes(count_mul4(heads(o), e, d, count_add(N, count_mul(2, keys))),
                    count_mul(heads(o), count_add(count_mul3(e, N, d), 4 * N)));
}

IoBytes fa3_ideal_bytes(const Options *o) {
    const u64 e = dtype_size(o->dtype), N = o->N, d = o->d;
    return io_bytes(count_mul4(heads(o), e, 3 * N, d), count_mul(heads(o), count_add(count_mul3(e, N, d), 4 * N)));
}

u64 fa3_flops(const Options *o) { return count_mul4(o->causal ? 2 : 4, heads(o), (u64)o->N * o->N, (u64)o->d); }

u64 fa3_softmax_ops(const Options *o) {
    const u64 N = o->N, scores = o->causal ? N * (N + 1) / 2 : N * N;
    return count_mul3(5, heads(o), scores);
}

long long fa3_grid_blocks(const Options *o) { return ceil_div(o->N, o->Br) * o->B * o->H; }

Fa3Wgmma fa3_wgmma_count(const Options *o) {
    const long long Tr = ceil_div(o->N, o->Br);
    u64 visits = 0; /* K/V blocks visited by the query blocks of one head */
    for (long long i = 0; i < Tr; i++) visits += (u64)attn_kv_blocks(o->N, o->Br, o->Bc, o->causal, i);
    Fa3Wgmma w;
    w.per_kv_block = (u64)(o->Br / 64) * (u64)(o->d / 16 + o->Bc / 16);
    w.total = count_mul3(heads(o), visits, w.per_kv_block);
    return w;
}

double fa3_schedule_balance(const Options *o, int blocks, Fa3Order order) {
    const long long Tr = ceil_div(o->N, o->Br), BH = (long long)o->B * o->H, items = Tr * BH;
    const long long G = items < blocks ? items : blocks;
    if (G <= 0) return 1.0;
    unsigned long long *load = host_alloc((size_t)G * sizeof *load, "the schedule's work per block"), total = 0,
                       most = 0;
    memset(load, 0, (size_t)G * sizeof *load);
    const long long Hs = fa3_section_heads(o->N, o->d, (int)BH);
    for (long long t = 0; t < items; t++) {
        long long i, b;
        if (!o->causal) {
            i = t % Tr; /* work_item (every step): a head's tiles in turn */
        } else if (order != FA3_ORDER_QUEUE) {
            i = Tr - 1 - t / BH; /* work_item (steps 3-6): the last tiles of every head first */
        } else {             /* work_item (step 7): the same inside each section of Hs heads */
            const long long section = t / (Hs * Tr), hs = Hs < BH - section * Hs ? Hs : BH - section * Hs;
            i = Tr - 1 - (t - section * Hs * Tr) / hs;
        }
        if (order == FA3_ORDER_QUEUE && t >= G) { /* the block free first (the lowest index of a tie) */
            b = 0;
            for (long long x = 1; x < G; x++) b = load[x] < load[b] ? x : b;
        } else {
            const long long k = t / G, r = t % G;
            b = order == FA3_ORDER_ZIGZAG && k % 2 ? G - 1 - r : r;
        }
        const unsigned long long v = (unsigned long long)attn_kv_blocks(o->N, o->Br, o->Bc, o->causal, (int)i);
        load[b] += v;
        total += v;
    }
    for (long long b = 0; b < G; b++) most = load[b] > most ? load[b] : most;
    free(load);
    return total ? (double)most * (double)G / (double)total : 1.0;
}

int fa3_models(const Options *o, KernelModel *m) {
    const KernelModel k = {fa3_kernel_name(fa3_kernel_of(o)), fa3_flops(o), fa3_softmax_ops(o), fa3_model_bytes(o),
                           fa3_ideal_bytes(o), 0};
    m[0] = k;
    return 1;
}
