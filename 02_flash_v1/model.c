/* model.c: the closed forms of model.h. */
#include "model.h"

#include "tiles.h"

static unsigned long long heads(const Options *o) { return (unsigned long long)o->B * o->H; }

IoBytes flash_v1_init_bytes(const Options *o) {
    const unsigned long long f = sizeof(float), N = o->N, d = o->d;
    return io_bytes(0, heads(o) * f * N * (d + 2));
}

IoBytes flash_v1_model_bytes(const Options *o) {
    const unsigned long long f = sizeof(float), N = o->N, d = o->d;
    const unsigned long long Tc = (unsigned long long)ceil_div(o->N, o->Bc);
    return io_bytes(heads(o) * f * N * (Tc * (2 * d + 2) + 2 * d), heads(o) * f * N * Tc * (d + 2));
}

IoBytes flash_v1_ideal_bytes(const Options *o) {
    const unsigned long long f = sizeof(float), N = o->N, d = o->d;
    return io_bytes(heads(o) * f * 3 * N * d, heads(o) * f * N * (d + 2));
}

double flash_v1_flops(const Options *o) { return 4.0 * heads(o) * (double)o->N * o->N * o->d; }

double flash_v1_softmax_ops(const Options *o) { return 5.0 * heads(o) * (double)o->N * o->N; }

long long flash_v1_grid_blocks(const Options *o) { return (long long)o->B * o->H; }

int flash_v1_models(const Options *o, KernelModel *m) {
    /* The init is Algorithm 1's line 2: nothing in it is compulsory for attention (chapter 03 starts the
     * state on chip instead), so its ideal traffic is zero. It is setup, like the article's torch.zeros and
     * torch.full before its kernel: shown in every table, and not part of the article's model of the loop's
     * bytes. */
    KernelModel init = {"flash_v1_init", 0.0, 0.0, flash_v1_init_bytes(o), io_bytes(0, 0), 1};
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
