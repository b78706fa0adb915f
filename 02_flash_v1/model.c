/* model.c: the closed forms of model.h. */
#include "model.h"

#include "checked_math.h"
#include "tiles.h"

typedef unsigned long long u64;

/* Every count below is in checked_math.h's checked arithmetic: exact, or the flag is raised (the size is rejected).
 * Products of N, d and Tc alone fit in 64 bits (N, d < 2^31, Tc <= N). */
static u64 heads(const Options *o) { return count_mul((u64)o->B, (u64)o->H); }
/* Bytes of `per_row` floats in each row of every head. */
static u64 row_floats(const Options *o, u64 per_row) { return count_mul4(heads(o), sizeof(float), (u64)o->N, per_row); }

IoBytes flash_v1_init_bytes(const Options *o) { return io_bytes(0, row_floats(o, (u64)o->d + 2)); }

IoBytes flash_v1_model_bytes(const Options *o) {
    const u64 d = o->d, Tc = (u64)ceil_div(o->N, o->Bc);
    return io_bytes(row_floats(o, Tc * (2 * d + 2) + 2 * d), row_floats(o, Tc * (d + 2)));
}

IoBytes flash_v1_ideal_bytes(const Options *o) {
    const u64 d = o->d;
    return io_bytes(row_floats(o, 3 * d), row_floats(o, d + 2));
}

u64 flash_v1_flops(const Options *o) { return count_mul4(4, heads(o), (u64)o->N * o->N, (u64)o->d); }

u64 flash_v1_softmax_ops(const Options *o) { return count_mul3(5, heads(o), (u64)o->N * o->N); }

long long flash_v1_grid_blocks(const Options *o) { return (long long)o->B * o->H; }

int flash_v1_models(const Options *o, KernelModel *m) {
    /* The init is Algorithm 1's line 2: nothing in it is compulsory for attention (chapter 03 starts the
     * state on chip instead), so its ideal traffic is zero. It is setup, like the article's torch.zeros and
     * torch.full before its kernel: shown in every table, and not part of the article's model of the loop's
     * bytes. */
    KernelModel init = {"flash_v1_init", 0, 0, flash_v1_init_bytes(o), io_bytes(0, 0), 1};
    KernelModel loop = {"flash_v1", flash_v1_flops(o), flash_v1_softmax_ops(o), flash_v1_model_bytes(o),
                        flash_v1_ideal_bytes(o)};
    m[FV1_INIT] = init;
    m[FV1_MAIN] = loop;
    return FV1_KERNELS;
}

int sm75_blocks_per_sm(size_t smem_bytes, int warps_per_block) {
    if (smem_bytes > SM75_SMEM_PER_SM) return 0;
    int blocks = SM75_BLOCKS_PER_SM;
    if (smem_bytes > 0 && (int)(SM75_SMEM_PER_SM / smem_bytes) < blocks) blocks = (int)(SM75_SMEM_PER_SM / smem_bytes);
    if (SM75_WARPS_PER_SM / warps_per_block < blocks) blocks = SM75_WARPS_PER_SM / warps_per_block;
    return blocks;
}

size_t article_v1_smem_bytes(int Bc, int d) { return sizeof(float) * (3 * (size_t)Bc * d + (size_t)Bc * Bc); }
