/* model.c: the closed forms of model.h. */
#include "model.h"

#include <string.h>

#include "attention.h"
#include "checked_math.h"
#include "tiles.h"

typedef unsigned long long u64;

const char *const tc_kernel_options[TC_KERNEL_COUNT + 1] = {
    "wmma", "mma_staged", "repack", "o_registers", "swizzle", "mma_plain", "unrolled_copy", "edge_masks", "mma",
    "cp_async", "mma_async", NULL};
static const char *const KERNEL_NAME[TC_KERNEL_COUNT] = {
    "flash_wmma",      "flash_mma_staged",    "flash_repack",     "flash_o_registers", "flash_swizzle",
    "flash_mma_plain", "flash_unrolled_copy", "flash_edge_masks", "flash_mma",         "flash_cp_async",
    "flash_mma_async"};

int tc_kernel_of(const Options *o) { return (int)option_value(o, ch05_options, CH05_OPT_KERNEL); }
const char *tc_kernel_option(int k) { return k >= 0 && k < TC_KERNEL_COUNT ? tc_kernel_options[k] : "?"; }
const char *tc_kernel_name(int k) { return k >= 0 && k < TC_KERNEL_COUNT ? KERNEL_NAME[k] : "?"; }

static u64 heads(const Options *o) { return count_mul((u64)o->B, (u64)o->H); }

IoBytes flash_tc_model_bytes(const Options *o) {
    const u64 e = dtype_size(o->dtype), N = o->N, d = o->d;
    const u64 keys = attn_keys_loaded(o->N, o->Br, o->Bc, o->causal);
    return io_bytes(count_mul4(heads(o), e, d, count_add(N, count_mul(2, keys))),
                    count_mul(heads(o), count_add(count_mul3(e, N, d), 4 * N)));
}

IoBytes flash_tc_ideal_bytes(const Options *o) {
    const u64 e = dtype_size(o->dtype), N = o->N, d = o->d;
    return io_bytes(count_mul4(heads(o), e, 3 * N, d), count_mul(heads(o), count_add(count_mul3(e, N, d), 4 * N)));
}

u64 flash_tc_flops(const Options *o) { return count_mul4(o->causal ? 2 : 4, heads(o), (u64)o->N * o->N, (u64)o->d); }

u64 flash_tc_softmax_ops(const Options *o) {
    const u64 N = o->N, scores = o->causal ? N * (N + 1) / 2 : N * N;
    return count_mul3(5, heads(o), scores);
}

long long flash_tc_grid_blocks(const Options *o) { return ceil_div(o->N, o->Br) * o->B * o->H; }

TcSharedLoads flash_tc_shared_loads(const Options *o, int kernel) {
    const u64 d16 = (u64)o->d / 16, bc16 = (u64)o->Bc / 16, mt = (u64)tc_rows_per_warp(o->Br) / 16;
    const int q_regs = kernel != TC_KERNEL_MMA_ASYNC || MMA_ASYNC_Q_REGS(o->d, o->Br);
    const long long Tr = ceil_div(o->N, o->Br);
    u64 visits = 0; /* K/V blocks visited by the query blocks of one head */
    for (long long i = 0; i < Tr; i++) visits += (u64)attn_kv_blocks(o->N, o->Br, o->Bc, o->causal, i);
    const u64 per_visit = 2 * d16 * bc16 + (q_regs ? 0 : mt * d16); /* K, V (and Q) per warp and K/V block */
    const u64 per_block = q_regs ? mt * d16 : 0;                      /* Q once per warp                    */
    TcSharedLoads r;
    r.ldmatrix = count_mul3(heads(o), TC_WARPS, count_add(count_mul(visits, per_visit), count_mul((u64)Tr, per_block)));
    r.other = count_mul3(heads(o), (u64)Tr, (u64)o->Br * o->d / 256); /* 8 elements a lane, 32 lanes */
    r.wavefronts = count_mul(4, count_add(r.ldmatrix, r.other));
    return r;
}

int flash_tc_models(const Options *o, KernelModel *m) {
    const KernelModel k = {tc_kernel_name(tc_kernel_of(o)), flash_tc_flops(o), flash_tc_softmax_ops(o), flash_tc_model_bytes(o),
                           flash_tc_ideal_bytes(o), 0};
    m[0] = k;
    return 1;
}
