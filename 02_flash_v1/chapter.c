/* chapter.c: chapter 02 for the shared driver: validation, the --model lines, and the table of parts. */
#include "ch02.h"
#include "checked_math.h"
#include "kernels.h"
#include "tiles.h"

static int validate(const Options *o, const DeviceInfo *dev, char *msg, size_t len) {
    if (attn_validate(&flash_v1, o, dev, msg, len, "02")) return 2;
    if (o->H > 65535) {
        snprintf(msg, len, "--heads %d: the grid is (B, H) and a grid's y dimension is at most 65535", o->H);
        return 2;
    }
    return 0;
}

static void print_model_extra(FILE *f, const Options *o, const DeviceInfo *dev) {
    char a[32], b[32], c[32], d[32], e[32];
    const int Br = o->Br, Bc = o->Bc, dim = o->d, threads = threads_per_block(Br), warps = threads / 32;
    const long long blocks = flash_v1_grid_blocks(o);
    const size_t smem = smem_bytes(Br, Bc, dim), fl = sizeof(float);
    fprintf(f, "grid (B, H) = (%d, %d): %s blocks of %d threads, one per head; each runs Tc x Tr = %lld x %lld steps\n",
            o->B, o->H, fmt_bytes(blocks, a, 32), threads, ceil_div(o->N, Bc), ceil_div(o->N, Br));
    fprintf(f, "shared memory per block: %s B = Q_i %s (Br x (d+%d)) + K_j %s + V_j %s (Bc x d each, as stored) + "
               "P_ij %s (Br x (Bc+%d))\n",
            fmt_bytes(smem, a, 32), fmt_bytes(fl * Br * (dim + Q_PAD), b, 32), Q_PAD, fmt_bytes(fl * Bc * dim, c, 32),
            fmt_bytes(fl * Bc * dim, d, 32), fmt_bytes(fl * Br * (Bc + P_PAD), e, 32), P_PAD);

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

/* A second or so of CPU time: 2 batches of 2 heads, N at most 512 or so, keeping N's remainder modulo the tiles
 * (a ragged N stays ragged). */
static void shrink_for_cpu(Options *o) {
    if (o->B > 2) o->B = 2;
    if (o->H > 2) o->H = 2;
    o->N = shrink_seq_keeping_tiles(o->N, 512, o->Br > o->Bc ? o->Br : o->Bc); /* powers of two: their lcm */
}

/* l and m: one float per row of every head. */
static unsigned long long per_row(int B, int H, int N, int d) {
    return count_mul3((unsigned long long)B, (unsigned long long)H, (unsigned long long)N);
}

const AttnChapter flash_v1 = {
    .tiles = {.br_supported = br_supported, .bc_supported = bc_supported, .br_sizes = BR_SIZES,
              .bc_sizes = BC_SIZES, .smem_bytes = smem_bytes, .smem_formula = SMEM_FORMULA},
    .nkernels = FV1_KERNELS,
    .timed = {[FV1_INIT] = flash_v1_init_launch, [FV1_MAIN] = flash_v1_launch},
    .counted = {[FV1_INIT] = flash_v1_init_launch_counted, [FV1_MAIN] = flash_v1_launch_counted},
    .extra = {[FV1_BUF_L] = {"l", per_row, DTYPE_FP32, 1}, [FV1_BUF_M] = {"m", per_row, DTYPE_FP32, 1}},
    .nextra = FV1_BUFFERS,
    .L_from_outputs = flash_v1_L_from_l_m,
    .forward_cpu = flash_v1_forward_cpu,
};

const Chapter chapter02 = {
    .id = "02",
    .title = "FlashAttention v1: the paper's Algorithm 1, K/V blocks outside, Q blocks inside (fp32)",
    .features = CLI_TILES,
    .validate = validate,
    .models = flash_v1_models,
    .print_model_extra = print_model_extra,
    .attention = &flash_v1,
    .shrink_for_cpu = shrink_for_cpu,
};
