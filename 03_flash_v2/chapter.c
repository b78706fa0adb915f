/* chapter.c: chapter 03 for the shared driver: validation, the --model lines, and the table of parts.
 *
 *   ./ch03/run [--causal] [--br 32 --bc 32]      the article's configuration by default
 *   ./ch03/run --model [...]                     the IO/FLOP model, both grids, shared memory per block */
#include "ch03.h"
#include "kernels.h"
#include "tiles.h"

static int validate(const Options *o, const DeviceInfo *dev, char *msg, size_t len) {
    if (attn_validate(&flash_v2, o, dev, msg, len, "03")) return 2;
    if (attn_validate_heads_grid(o, msg, len)) return 2;
    return 0;
}

static void print_model_extra(FILE *f, const Options *o, const DeviceInfo *dev) {
    char a[32], b[32], c[32], d[32], e[32];
    const int Br = o->Br, Bc = o->Bc, dim = o->d, threads = threads_per_block(Br);
    const long long blocks = flash_v2_grid_blocks(o), v1_blocks = ch02_grid_blocks(o);
    const long long Tr = ceil_div(o->N, Br), Tc = ceil_div(o->N, Bc);
    const size_t smem = smem_bytes(Br, Bc, dim), fl = sizeof(float);
    fprintf(f, "grid (Tr, B*H) = (%lld, %d): %s blocks of %d threads, one per query block; chapter 02's grid (B, H) "
               "= (%d, %d) at this configuration: %s blocks (%.0fx fewer)\n",
            Tr, o->B * o->H, fmt_bytes(blocks, a, 32), threads, o->B, o->H, fmt_bytes(v1_blocks, b, 32),
            (double)blocks / v1_blocks);
    long long visits = 0;
    for (long long i = 0; i < Tr; i++) visits += attn_kv_blocks(o->N, Br, Bc, o->causal, i);
    fprintf(f, "K/V blocks visited per head: %s of Tr x Tc = %s%s\n", fmt_bytes(visits, a, 32),
            fmt_bytes(Tr * Tc, b, 32), o->causal ? " (causal: the blocks above the diagonal are skipped)" : "");
    fprintf(f, "shared memory per block: %s B = Q_i %s (Br x (d+%d)) + K_j %s + V_j %s (Bc x d each, as stored) + "
               "P_ij %s (Br x (Bc+%d))\n",
            fmt_bytes(smem, a, 32), fmt_bytes(fl * Br * (dim + Q_PAD), b, 32), Q_PAD,
            fmt_bytes(fl * Bc * dim, c, 32), fmt_bytes(fl * Bc * dim, d, 32),
            fmt_bytes(fl * Br * (Bc + P_PAD), e, 32), P_PAD);

    if (dev && dev->present) {
        KernelResources r;
        flash_v2_resources(dim, Br, Bc, &r);
        resources_print(f, dev, &r, blocks);
    }
}

static void shrink_for_cpu(Options *o) { attn_shrink_for_cpu(o, flash_v2_flops); }

const AttnChapter flash_v2 = {
    .tiles = {.br_supported = br_supported, .bc_supported = bc_supported, .br_sizes = BR_SIZES,
              .bc_sizes = BC_SIZES, .smem_bytes = smem_bytes, .smem_formula = SMEM_FORMULA},
    .nkernels = 1,
    .timed = {flash_v2_launch},
    .counted = {flash_v2_launch_counted},
    .forward_cpu = flash_v2_forward_cpu,
};

const Chapter chapter03 = {
    .id = "03",
    .title = "FlashAttention v2: Q_i kept on chip, O in registers, one division at the end (fp32)",
    .features = CLI_TILES | CLI_CAUSAL,
    .validate = validate,
    .models = flash_v2_models,
    .print_model_extra = print_model_extra,
    .attention = &flash_v2,
    .shrink_for_cpu = shrink_for_cpu,
};
