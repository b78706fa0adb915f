/* chapter.c: chapter 02 for the shared driver: validation, the --model lines, and the table of parts. */
#include "ch02.h"
#include "kernels.h"
#include "tiles.h"

static int validate(const Options *o, const DeviceInfo *dev, char *msg, size_t len) {
    if (!head_dim_supported(o->d)) {
        snprintf(msg, len, "--dim %d is not supported: chapter 02 has kernels for d = 32, 64 and 128", o->d);
        return 2;
    }
    if (!flash_v1_tile_supported(o->Br) || !flash_v1_tile_supported(o->Bc)) {
        snprintf(msg, len, "--br %d --bc %d is not a supported tile: Br and Bc must each be one of %s", o->Br, o->Bc,
                 FV1_TILE_SIZES);
        return 2;
    }
    if (o->H > 65535) {
        snprintf(msg, len, "--heads %d: the grid is (B, H) and a grid's y dimension is at most 65535", o->H);
        return 2;
    }
    if (dev && dev->present) {
        const size_t need = flash_v1_smem_bytes(o->Br, o->Bc, o->d);
        if (need > (size_t)dev->smem_per_block_optin) {
            char a[32], b[32];
            snprintf(msg, len,
                     "--br %d --bc %d --dim %d needs %s B of shared memory per block ((Br (d + %d) + Bc (d + %d) + "
                     "Bc d + Br (Bc + %d) + %d Br) floats), more than the %s B per block that %s allows; use "
                     "smaller tiles",
                     o->Br, o->Bc, o->d, fmt_bytes(need, a, sizeof(a)), FV1_Q_PAD, FV1_K_PAD, FV1_S_PAD,
                     FV1_ROW_STATS,
                     fmt_bytes((unsigned long long)dev->smem_per_block_optin, b, sizeof(b)), dev->name);
            return 2;
        }
    }
    return 0;
}

static void print_model_extra(FILE *f, const Options *o, const DeviceInfo *dev) {
    char a[32], b[32], c[32], d[32], e[32], g[32];
    const int Br = o->Br, Bc = o->Bc, dim = o->d, warps = FV1_THREADS / 32;
    const long long blocks = flash_v1_grid_blocks(o);
    const size_t smem = flash_v1_smem_bytes(Br, Bc, dim), fl = sizeof(float);
    fprintf(f, "grid (B, H) = (%d, %d): %s blocks of %d threads, one per head; each runs Tc x Tr = %lld x %lld steps\n",
            o->B, o->H, fmt_bytes(blocks, a, 32), FV1_THREADS, ceil_div_ll(o->N, Bc), ceil_div_ll(o->N, Br));
    fprintf(f, "shared memory per block: %s B = Q_i %s (Br x (d+%d)) + K_j %s (Bc x (d+%d)) + V_j %s (Bc x d) + "
               "S_ij %s (Br x (Bc+%d)) + row statistics %s (%d x Br)\n",
            fmt_bytes(smem, a, 32), fmt_bytes(fl * Br * (dim + FV1_Q_PAD), b, 32), FV1_Q_PAD,
            fmt_bytes(fl * Bc * (dim + FV1_K_PAD), c, 32), FV1_K_PAD, fmt_bytes(fl * Bc * dim, d, 32),
            fmt_bytes(fl * Br * (Bc + FV1_S_PAD), e, 32), FV1_S_PAD, fmt_bytes(fl * FV1_ROW_STATS * Br, g, 32),
            FV1_ROW_STATS);

    const int ours = sm75_blocks_per_sm(smem, warps);
    const size_t article = article_v1_smem_bytes(Bc, dim);
    const int theirs = sm75_blocks_per_sm(article, 4);
    fprintf(f, "on the article's sm_75 (64 KB shared memory per SM, %d warps), counting shared memory and warps:\n",
            SM75_WARPS_PER_SM);
    if (ours)
        fprintf(f, "  this kernel: %s B per block -> %d block%s per SM x %d warps = %d warps, %.1f%% occupancy\n",
                fmt_bytes(smem, a, 32), ours, ours == 1 ? "" : "s", warps, ours * warps, 100.0 * ours * warps / SM75_WARPS_PER_SM);
    else
        fprintf(f, "  this kernel: %s B per block does not fit in 64 KB\n", fmt_bytes(smem, a, 32));
    if (theirs)
        fprintf(f, "  the article's Triton v1 (3 Bc d + Bc^2 floats, 4 warps): %s B -> %d blocks per SM, %.1f%% "
                   "occupancy\n",
                fmt_bytes(article, a, 32), theirs, 100.0 * theirs * 4 / SM75_WARPS_PER_SM);
    else
        fprintf(f, "  the article's Triton v1 (3 Bc d + Bc^2 floats): %s B does not fit in 64 KB\n",
                fmt_bytes(article, a, 32));

    if (dev && dev->present) {
        KernelResources r;
        flash_v1_resources(dim, Br, Bc, &r);
        resources_print(f, dev, &r, blocks);
    }
}

static void shrink_for_cpu(Options *o) {
    o->B = 2;
    o->H = 2;
    if (o->N > 512) o->N = 512;
    o->rows = (long long)o->B * o->H * o->N;
}

const Chapter chapter02 = {
    "02",
    "FlashAttention v1: the paper's Algorithm 1, K/V blocks outside, Q blocks inside (fp32)",
    CLI_TILES,
    1,
    validate,
    flash_v1_models,
    print_model_extra,
    flash_v1_device_bytes,
    flash_v1_run_gpu,
    flash_v1_run_cpu,
    shrink_for_cpu,
};
