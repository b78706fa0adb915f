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

const char *const fa3_kernel_options[FA3_KERNEL_COUNT + 1] = {"wgmma",  "tma",       "warp_specialized",
                                                                      "pingpong", "overlap", "zigzag",
                                                                      "queue",  "tma_store", "dispatch", NULL};
static const char *const KERNEL_NAME[FA3_KERNEL_COUNT] = {"flash_wgmma", "flash_tma", "flash_warp_specialized",
                                                              "flash_pingpong", "flash_overlap", "flash_zigzag",
                                                              "flash_queue", "flash_tma_store", "flash_dispatch"};

int fa3_kernel_of(const Options *o) { return (int)option_value(o, ch06_options, CH06_OPT_KERNEL); }
const char *fa3_kernel_option(int k) { return k >= 0 && k < FA3_KERNEL_COUNT ? fa3_kernel_options[k] : "?"; }
const char *fa3_kernel_name(int k) { return k >= 0 && k < FA3_KERNEL_COUNT ? KERNEL_NAME[k] : "?"; }

static u64 heads(const Options *o) { return count_mul((u64)o->B, (u64)o->H); }

IoBytes fa3_model_bytes(const Options *o) {
    const u64 e = dtype_size(o->dtype), N = o->N, d = o->d;
    const u64 keys = attn_keys_loaded(o->N, o->Br, o->Bc, o->causal);
    IoBytes b = io_bytes(count_mul4(heads(o), e, d, count_add(N, count_mul(2, keys))),
                         count_mul(heads(o), count_add(count_mul3(e, N, d), 4 * N)));
    if (fa3_kernel_claims(fa3_kernel_runs(fa3_kernel_of(o), o->Br))) { /* steps 7-8's counter: an increment per item */
        const u64 items = count_mul((u64)ceil_div(o->N, o->Br), heads(o));
        b = io_bytes(count_add(b.read, count_mul(4, items)), count_add(b.write, count_mul(4, items)));
    }
    return b;
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

/* The queue's blocks by (load, index), least first: a binary heap of block indices over load[]. */
static int less_loaded(const unsigned long long *load, long long a, long long b) {
    return load[a] < load[b] || (load[a] == load[b] && a < b);
}
static void sift_down(long long *heap, long long n, long long x, const unsigned long long *load) {
    for (;;) {
        long long least = x;
        for (long long c = 2 * x + 1; c <= 2 * x + 2 && c < n; c++)
            least = less_loaded(load, heap[c], heap[least]) ? c : least;
        if (least == x) return;
        const long long swap = heap[x];
        heap[x] = heap[least], heap[least] = swap, x = least;
    }
}

double fa3_schedule_balance(const Options *o, int blocks, Fa3Order order) {
    const long long Tr = ceil_div(o->N, o->Br), BH = (long long)o->B * o->H, items = Tr * BH;
    const long long G = items < blocks ? items : blocks;
    if (G <= 0) return 1.0;
    unsigned long long *load = host_alloc((size_t)G * sizeof *load, "the schedule's work per block"), total = 0,
                       most = 0;
    long long *heap = host_alloc((size_t)G * sizeof *heap, "the queue's blocks by their work");
    memset(load, 0, (size_t)G * sizeof *load);
    for (long long b = 0; b < G; b++) heap[b] = b;
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
        if (order == FA3_ORDER_QUEUE) {
            b = t < G ? t : heap[0]; /* item t < G to block t, each later one to the block free first */
        } else {
            const long long k = t / G, r = t % G;
            b = order == FA3_ORDER_ZIGZAG && k % 2 ? G - 1 - r : r;
        }
        const unsigned long long v = (unsigned long long)attn_kv_blocks(o->N, o->Br, o->Bc, o->causal, (int)i);
        load[b] += v;
        total += v;
        if (order == FA3_ORDER_QUEUE && t == G - 1) /* every block has its first item: the heap, bottom up */
            for (long long x = G / 2 - 1; x >= 0; x--) sift_down(heap, G, x, load);
        if (order == FA3_ORDER_QUEUE && t >= G) sift_down(heap, G, 0, load); /* heap[0]'s load grew */
    }
    for (long long b = 0; b < G; b++) most = load[b] > most ? load[b] : most;
    free(heap);
    free(load);
    return total ? (double)most * (double)G / (double)total : 1.0;
}

int fa3_models(const Options *o, KernelModel *m) {
    const KernelModel k = {fa3_kernel_name(fa3_kernel_of(o)), fa3_flops(o), fa3_softmax_ops(o), fa3_model_bytes(o),
                           fa3_ideal_bytes(o), 0};
    m[0] = k;
    return 1;
}
